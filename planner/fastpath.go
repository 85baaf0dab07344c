package planner

import (
	"strings"
	"unicode/utf8"

	"github.com/pgaccel/pgaccel/catalog"
)

// A fast path for reads that cannot touch a dataset, and for plain writes. Planning a statement
// means parsing it (pg_query) and classifying it, tens of microseconds;
// the analysis is cached by statement text, but simple-protocol statements
// with literals (SELECT ... WHERE id = 42) differ every time and never hit
// the cache. When a statement
//
//   - starts with SELECT and is one statement,
//   - names no dataset (no identifier equal to a dataset's name or table),
//   - and has no INTO, FOR (UPDATE/SHARE), or call of a function that
//     writes, locks or changes the session (nextval, set_config, ...),
//
// it reads no dataset and changes nothing the proxy tracks, so it goes to
// the origin without being parsed. A single INSERT, UPDATE or DELETE goes
// to the origin as a write without being parsed either. The scan is conservative: anything it
// does not understand (U& identifiers, unterminated quotes) takes the full
// path. It can only send to the origin what the full path might have
// accelerated never the other way, so answers stay exact. The plain
// transaction statements (BEGIN, COMMIT, ROLLBACK and their synonyms) go
// to the origin without being parsed too, with the full path's decision.

// txDetails are the full path's details of the transaction statements the
// fast path decides, made once.
var txDetails = map[Kind]string{
	KindBegin:    "a statement of kind " + KindBegin.String(),
	KindCommit:   "a statement of kind " + KindCommit.String(),
	KindRollback: "a statement of kind " + KindRollback.String(),
}

// ReasonNoDataset: the statement names no dataset (fast path).
const ReasonNoDataset = "no_dataset"

// Quick returns the fast path's decision for sql, when it has one: the
// origin, whatever the session (the caller may skip reading the session).
func (p *Planner) Quick(sql string) (Decision, bool) {
	if p.noFastPath {
		return Decision{}, false
	}
	if d, ok := p.quickDecision(sql); ok {
		return d, true
	}
	return p.sessionless(sql)
}

// sessionless is the decision for a statement that is no read, of a kind
// that goes to the origin whatever the session (SET, SET TRANSACTION,
// DDL, COPY, LOCK, several statements, ...). The proxy reads the session
// info for it neither: inside a transaction block that read would be a
// query of the client's transaction, and SET TRANSACTION ISOLATION LEVEL
// (pg_dump's second statement), SET TRANSACTION SNAPSHOT and the like
// must come before any query of it. A text that may be a read (SELECT,
// WITH, VALUES, TABLE, a parenthesis, EXPLAIN, SHOW, cursors, PREPARE and
// EXECUTE) is not parsed here: it takes the full path.
func (p *Planner) sessionless(sql string) (Decision, bool) {
	first := ""
	scanTokens(sql, func(tok string, quoted bool) bool {
		if !quoted {
			first = strings.ToLower(tok)
		}
		return false
	})
	switch first {
	case "", "select", "with", "values", "table", "explain", "show", "declare", "fetch", "move",
		"close", "prepare", "execute":
		return Decision{}, false
	}
	a, ok := p.cachedAnalysis(sql)
	if !ok {
		a, _ = p.analyzeAndCache(sql)
	}
	if a.reason == "" {
		return Decision{}, false
	}
	switch a.kind {
	case KindSelect, KindExplain, KindShow, KindDeclare, KindFetch, KindMove, KindClose, KindPrepare,
		KindExecute, KindEmpty,
		// Transaction statements with options (BEGIN ISOLATION LEVEL
		// ..., COMMIT AND CHAIN) keep the full path, as before.
		KindBegin, KindCommit, KindRollback:
		return Decision{}, false
	}
	return Decision{
		Route:          RouteOrigin,
		Fingerprint:    a.fingerprint,
		ParamCount:     a.paramCount,
		Kind:           a.kind,
		SetsSearchPath: a.setsSession,
		HoldCursor:     a.holdCursor,
		writes:         a.writes,
		Reason:         a.reason,
		Detail:         a.detail,
	}, true
}

// QuickTxWrote is Quick for a session whose transaction has written: every
// read then goes to the origin, whatever it names, so a single SELECT that
// writes and changes nothing the proxy tracks needs no parse either
// (reason tx_wrote, as the full plan would say).
func (p *Planner) QuickTxWrote(sql string) (Decision, bool) {
	if p.noFastPath {
		return Decision{}, false
	}
	d, ok := p.quickScan(sql, nil)
	if ok && d.Kind == KindSelect {
		d.Reason = ReasonTxWrote
	}
	return d, ok
}

// quickDecision is the fast path: a read that names no dataset (see
// above), or one INSERT, UPDATE or DELETE statement — a write, which goes
// to the origin whatever it names. ok is false when the statement needs
// the full plan.
func (p *Planner) quickDecision(sql string) (d Decision, ok bool) {
	names := p.datasetNames()
	if len(names) == 0 {
		return d, false
	}
	return p.quickScan(sql, names)
}

// quickScan is the fast path's token scan; a read that names one of names
// needs the full plan (names nil: any read may take the fast path).
func (p *Planner) quickScan(sql string, names map[string]bool) (d Decision, ok bool) {
	var kind Kind
	started, startWord, txWord := false, false, false
	ended := false
	var lowBuf [64]byte // tokens in lower case, without allocating
	scanned := scanTokens(sql, func(tok string, quoted bool) bool {
		if ended {
			return false // a second statement
		}
		if tok == ";" {
			ended = true
			return true
		}
		if !started {
			started = true
			if quoted {
				return false
			}
			switch string(lowerASCII(lowBuf[:0], tok)) {
			case "begin", "start":
				kind, startWord = KindBegin, strings.EqualFold(tok, "start")
			case "commit", "end":
				kind = KindCommit
			case "rollback", "abort":
				kind = KindRollback
			case "select":
				kind = KindSelect
			case "insert":
				kind = KindInsert
			case "update":
				kind = KindUpdate
			case "delete":
				kind = KindDelete
			default:
				return false
			}
			return true
		}
		switch kind {
		case KindBegin, KindCommit, KindRollback:
			// Only the plain forms (BEGIN, START TRANSACTION, COMMIT, END,
			// ROLLBACK, ABORT, with WORK or TRANSACTION): options, AND
			// CHAIN, TO SAVEPOINT and PREPARED take the full path.
			if quoted {
				return false
			}
			low := string(lowerASCII(lowBuf[:0], tok))
			if txWord || low != "transaction" && (low != "work" || startWord) {
				return false
			}
			txWord = true
			return true
		}
		if kind != KindSelect || tok == "" { // writes: only one statement matters
			return true
		}
		low := lowerASCII(lowBuf[:0], tok)
		if names[string(low)] || names[tok] {
			return false
		}
		if quoted {
			return true
		}
		switch string(low) {
		case "into", "for", "set_config":
			return false
		}
		for _, pre := range writingPrefixes {
			if len(low) >= len(pre) && string(low[:len(pre)]) == pre {
				return false
			}
		}
		return true
	})
	if !scanned || !started || startWord && !txWord {
		return d, false
	}
	switch kind {
	case KindBegin, KindCommit, KindRollback:
		return Decision{Route: RouteOrigin, Reason: ReasonTransaction, Detail: txDetails[kind], Kind: kind}, true
	}
	if kind == KindSelect {
		return Decision{Route: RouteOrigin, Reason: ReasonNoDataset, Kind: KindSelect}, true
	}
	return Decision{Route: RouteOrigin, Reason: ReasonWrite, Kind: kind, writes: true}, true
}

// datasetNames are the names and table names of every dataset, lower case
// and as written.
// They are made again when the registry's epoch changes (a reload).
func (p *Planner) datasetNames() map[string]bool {
	epoch := p.reg.Epoch()
	if n := p.names.Load(); n != nil && n.epoch == epoch {
		return n.names
	}
	n := &datasetNames{epoch: epoch, names: map[string]bool{}}
	for _, name := range p.reg.Names() {
		d, ok := p.reg.Dataset(name)
		if !ok {
			continue
		}
		for _, s := range []string{d.Name, d.Table} {
			n.names[s] = true
			n.names[strings.ToLower(s)] = true
		}
		if d.Acceleration.Enabled && d.Acceleration.RefreshMode == catalog.RefreshCaching {
			n.caching = true
		}
	}
	p.names.Store(n)
	return n.names
}

// datasetNames is what the planner keeps of the datasets' configuration,
// for an epoch of the registry.
type datasetNames struct {
	epoch   uint64
	names   map[string]bool
	caching bool // a dataset has refresh_mode: caching (caching.go)
}

// hasCaching reports whether a dataset has refresh_mode: caching.
func (p *Planner) hasCaching() bool {
	p.datasetNames()
	return p.names.Load().caching
}

// scanTokens calls fn for each token of sql: identifiers and keywords (tok
// as written, quoted when it was a "quoted identifier"), ";" for a
// statement end, and "" for anything else (literals, operators). It stops
// and returns false when fn does, or when the text is beyond the scanner
// (unterminated quotes or comments, U& escapes).
func scanTokens(sql string, fn func(tok string, quoted bool) bool) bool {
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			depth := 0
			for {
				if i+1 >= n {
					return false
				}
				if sql[i] == '/' && sql[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if sql[i] == '*' && sql[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				i++
			}
		case c == '\'':
			end, ok := skipString(sql, i, false)
			if !ok || !fn("", false) {
				return false
			}
			i = end
		case c == '"':
			end, ok := skipQuotedIdent(sql, i)
			if !ok || !fn(strings.ReplaceAll(sql[i+1:end-1], `""`, `"`), true) {
				return false
			}
			i = end
		case c == '$':
			j := i + 1
			for j < n && (isIdentChar(sql[j]) && !(sql[j] >= '0' && sql[j] <= '9' && j == i+1)) {
				j++
			}
			if j < n && sql[j] == '$' { // $tag$ ... $tag$
				tag := sql[i : j+1]
				end := strings.Index(sql[j+1:], tag)
				if end < 0 {
					return false
				}
				if !fn("", false) {
					return false
				}
				i = j + 1 + end + len(tag)
				continue
			}
			for j < n && sql[j] >= '0' && sql[j] <= '9' { // $1
				j++
			}
			if !fn("", false) {
				return false
			}
			i = max(j, i+1)
		case c == ';':
			if !fn(";", false) {
				return false
			}
			i++
		case isIdentStart(sql, i):
			j := i
			for j < n && (isIdentChar(sql[j]) || sql[j] >= 0x80) {
				j++
			}
			word := sql[i:j]
			if j < n && sql[j] == '\'' && len(word) == 1 {
				switch word[0] {
				case 'e', 'E':
					end, ok := skipString(sql, j, true)
					if !ok || !fn("", false) {
						return false
					}
					i = end
					continue
				case 'b', 'B', 'x', 'X', 'n', 'N':
					end, ok := skipString(sql, j, false)
					if !ok || !fn("", false) {
						return false
					}
					i = end
					continue
				}
			}
			if (word == "u" || word == "U") && j < n && sql[j] == '&' {
				return false // U&'...' and U&"...": escapes the scanner does not read
			}
			if !fn(word, false) {
				return false
			}
			i = j
		case c >= '0' && c <= '9':
			// A number's digits are one token (its exponent, 1e5, an
			// identifier after it, as before).
			j := i + 1
			for j < n && (sql[j] >= '0' && sql[j] <= '9' || sql[j] == '.') {
				j++
			}
			if !fn("", false) {
				return false
			}
			i = j
		default:
			// Operators, punctuation.
			_, size := utf8.DecodeRuneInString(sql[i:])
			if !fn("", false) {
				return false
			}
			i += max(size, 1)
		}
	}
	return true
}

// lowerASCII appends tok to dst with its ASCII letters in lower case, as
// strings.ToLower does for ASCII; other bytes are kept as they are (the
// scanner's identifiers are ASCII but for bytes >= 0x80, which ToLower
// would fold and no dataset name of the fast path's matches).
func lowerASCII(dst []byte, tok string) []byte {
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// skipString returns the index after the string literal starting at the
// quote at i; backslash escapes count when escapes is set (E'...').
func skipString(sql string, i int, escapes bool) (int, bool) {
	j := i + 1
	for j < len(sql) {
		switch sql[j] {
		case '\\':
			if escapes {
				j += 2
				continue
			}
		case '\'':
			if j+1 < len(sql) && sql[j+1] == '\'' {
				j += 2
				continue
			}
			return j + 1, true
		}
		j++
	}
	return 0, false
}

// skipQuotedIdent returns the index just past the "quoted identifier"
// starting at sql[i] ("" inside it is a quote), false when it is not closed.
func skipQuotedIdent(sql string, i int) (int, bool) {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] == '"' {
			if j+1 < len(sql) && sql[j+1] == '"' {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return 0, false
}

func isIdentStart(sql string, i int) bool {
	c := sql[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return identChars[c] }

// identChars are the bytes of an identifier after its first (ASCII).
var identChars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return t
}()

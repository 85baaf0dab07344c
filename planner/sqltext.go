package planner

import (
	"regexp"
	"strconv"
	"strings"
)

// The reading of SQL text the proxy needs besides a plan: a token-level
// look at a statement, no parse. The proxy asks here (and for plans and
// descriptions) and never reads a text itself; inside the planner, SQL is
// read by pg_query, by the token scanner of the fast path (scanTokens)
// and by this file.
//
//   - Local: the statements a session may answer without the origin
//     (pings, SELECT 1, BEGIN/COMMIT/ROLLBACK, SET, DISCARD ALL,
//     DEALLOCATE, a pool's reset);
//   - SessionStateCall and TransactionScoped: what a statement leaves in
//     the origin session, for the replay of a new origin connection;
//   - ShowsPgaccel, ShowsLastRoute: SHOW pgaccel.last_route, statements,
//     stats, datasets, advice;
//   - ExplainPgaccel: EXPLAIN (pgaccel) of a statement, the dry run;
//   - SubstituteParams and PlaceParams: a statement's $n parameters
//     replaced by text;
//   - NoParams: a text without $n parameters;
//   - MentionsName: whether a text names a table (the caching datasets a
//     write may change).

// LocalKind is a statement a session answers without the origin.
type LocalKind uint8

const (
	LocalTx LocalKind = iota + 1 // BEGIN, COMMIT or ROLLBACK (LocalCommand.Tx)
	LocalEmpty
	LocalSelectOne
	LocalSet
	LocalDiscardAll
	LocalDeallocate    // DEALLOCATE name (LocalCommand.Name)
	LocalDeallocateAll // DEALLOCATE ALL
	LocalReset         // a pool's connection reset (LocalCommand.Value: SessionReset's steps)
)

// LocalCommand is a statement a session with no live origin connection may
// answer itself; for LocalTx, which (TransactionControl's kind);
// for LocalSet, the setting (in lower case) and the value the SET gives;
// for LocalDeallocate, the prepared statement's name; for LocalReset, the
// reset's steps.
type LocalCommand struct {
	Kind        LocalKind
	Tx          Kind
	Name, Value string
}

// Local classifies sql as one of the statements a session may answer
// without the origin: a SET of any setting (the proxy answers those of
// the settings it keeps itself).
func Local(sql string) (LocalCommand, bool) {
	switch {
	case EmptyQuery(sql):
		return LocalCommand{Kind: LocalEmpty}, true
	case IsSelectOne(sql):
		return LocalCommand{Kind: LocalSelectOne}, true
	}
	if k := TransactionControl(sql); k != KindOther {
		return LocalCommand{Kind: LocalTx, Tx: k}, true
	}
	if DiscardAll(sql) {
		return LocalCommand{Kind: LocalDiscardAll}, true
	}
	if steps, ok := SessionReset(sql); ok {
		return LocalCommand{Kind: LocalReset, Value: steps}, true
	}
	if name, all, ok := Deallocate(sql); ok {
		if all {
			return LocalCommand{Kind: LocalDeallocateAll}, true
		}
		return LocalCommand{Kind: LocalDeallocate, Name: name}, true
	}
	if name, value, ok := SessionSetting(sql); ok {
		return LocalCommand{Kind: LocalSet, Name: name, Value: value}, true
	}
	return LocalCommand{}, false
}

// OneStatement reports whether c is one statement, as a Parse takes (a
// pool's reset may be several).
func (c *LocalCommand) OneStatement() bool {
	return c.Kind != LocalReset || len(c.Value) == 1
}

// ReturnsRow reports whether c, one statement, returns a row (whose
// portal a row limit of 1 suspends).
func (c *LocalCommand) ReturnsRow() bool {
	return c.Kind == LocalSelectOne || c.Kind == LocalReset && c.Value == string(ResetUnlockAll)
}

// Pings without the origin. Pools check a connection before lending it:
// pgx's Ping and pgjdbc's isValid send an empty query ("-- ping", ""),
// SQLAlchemy's pool_pre_ping and most validation queries SELECT 1. A
// session with no origin connection answers those itself, as Postgres
// would (answerCommand), so a pool's check neither opens a backend nor
// fails while the origin is down.

// EmptyQuery reports whether sql holds no statement: only blanks,
// comments (-- to the line's end, nested /* */) and semicolons.
func EmptyQuery(sql string) bool {
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == ';':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexAny(sql[i:], "\n\r")
			if j < 0 {
				return true
			}
			i += j
		case strings.HasPrefix(sql[i:], "/*"):
			depth := 0
			for i < len(sql) {
				if strings.HasPrefix(sql[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(sql[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return false // unterminated: Postgres's syntax error
			}
		default:
			return false
		}
	}
	return true
}

// IsSelectOne reports whether sql is SELECT 1, in any case, with blanks
// around its words and at most one semicolon after it.
func IsSelectOne(sql string) bool {
	s := strings.TrimSpace(sql)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	if len(s) < 8 || !strings.EqualFold(s[:6], "select") {
		return false
	}
	rest := s[6:]
	if rest == "" || !strings.ContainsRune(" \t\n\r\f", rune(rest[0])) {
		return false
	}
	return strings.TrimSpace(rest) == "1"
}

// SessionStateCall names a function sql calls whose effect outlives the
// statement and the transaction (a session-level advisory lock, a
// set_config that is not local, a sequence's currval), "" when it calls
// none. It reads the text,
// so it also finds them in comments and strings: it errs towards ending a
// session whose link breaks, as before, rather than losing a lock silently.
func SessionStateCall(sql string) string {
	// One pass over the text (it runs for every statement of a new text
	// a session with an acceleration sends): at each byte that may start
	// a name, the names that start with it. The first name of the list
	// found anywhere is the one reported.
	found := len(sessionStateFns)
	for i := 0; i+1 < len(sql); i++ {
		// Each name's first two letters: pg, se, db, ne.
		c, c2 := sql[i]|0x20, sql[i+1]|0x20
		if !(c == 'p' && c2 == 'g' || c == 's' && c2 == 'e' || c == 'd' && c2 == 'b' || c == 'n' && c2 == 'e') {
			continue
		}
		for k, fn := range sessionStateFns[:found] {
			if fn[0] == c && len(sql)-i >= len(fn) && foldPrefix(sql[i:], fn) {
				found = k
				break
			}
		}
		if found == 0 {
			break
		}
	}
	if found == len(sessionStateFns) {
		return ""
	}
	return sessionStateFns[found]
}

// foldPrefix reports whether s starts with lower (lower-case ASCII) in
// any case: strings.EqualFold of that many bytes, without its Unicode
// folding, which cannot match an ASCII name in as many bytes.
func foldPrefix(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// sessionStateFns are the functions SessionStateCall looks for. nextval
// and setval: currval and lastval read what they left in the session.
var sessionStateFns = []string{"pg_advisory_lock", "pg_try_advisory_lock", "set_config", "dblink_connect", "nextval", "setval"}

// TransactionScoped reports whether a SET statement's effect ends with its
// transaction (SET LOCAL, SET TRANSACTION).
func TransactionScoped(sql string) bool {
	f := strings.Fields(strings.ToLower(sql))
	return len(f) >= 2 && f[0] == "set" && (f[1] == "local" || strings.HasPrefix(f[1], "transaction"))
}

var showPgaccel = regexp.MustCompile(`(?is)^\s*show\s+("?)pgaccel\.(last_route|statements|stats|datasets|advice)("?)\s*;?\s*$`)

// PgaccelShow is one of the SHOW pgaccel.* statements the proxy answers
// about itself.
type PgaccelShow uint8

const (
	ShowNone       PgaccelShow = iota
	ShowLastRoute              // SHOW pgaccel.last_route
	ShowStatements             // SHOW pgaccel.statements
	ShowStats                  // SHOW pgaccel.stats
	ShowDatasets               // SHOW pgaccel.datasets
	ShowAdvice                 // SHOW pgaccel.advice
)

var showNames = map[string]PgaccelShow{"last_route": ShowLastRoute, "statements": ShowStatements, "stats": ShowStats,
	"datasets": ShowDatasets, "advice": ShowAdvice}

// ShowsPgaccel reports which SHOW pgaccel.* sql is (ShowNone for any
// other text).
func ShowsPgaccel(sql string) PgaccelShow {
	if len(sql) >= 64 || !startsShow(sql) {
		return ShowNone
	}
	m := showPgaccel.FindStringSubmatch(sql)
	if m == nil || m[1] != m[3] {
		return ShowNone
	}
	return showNames[strings.ToLower(m[2])]
}

// ShowsLastRoute reports whether sql is SHOW pgaccel.last_route (the
// proxy answers it).
func ShowsLastRoute(sql string) bool { return ShowsPgaccel(sql) == ShowLastRoute }

// startsShow reports whether sql starts with SHOW in any case, after the
// white space showLastRoute's \s takes (every Query and Parse is checked,
// so most texts should be refused at their first letters).
func startsShow(sql string) bool {
	return strings.EqualFold(LeadingWord(sql), "show")
}

// SubstituteParams replaces each $n parameter of sql (outside string
// literals, quoted identifiers and comments) with repl(n). It reports false
// when a parameter number has no replacement.
func SubstituteParams(sql string, repl func(n int) (string, bool)) (string, bool) {
	var b strings.Builder
	b.Grow(len(sql) + 32)
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			// A quoted literal or identifier; a doubled quote escapes.
			j := i + 1
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(sql))
			b.WriteString(sql[i:end])
			i = end
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			b.WriteString(sql[i : i+j])
			i += j
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' && (i == 0 || !isIdentChar(sql[i-1])):
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(sql[i+1 : j])
			if err != nil {
				return "", false
			}
			r, ok := repl(n)
			if !ok {
				return "", false
			}
			b.WriteString(r)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

// PlaceParams replaces each $n of sql with placeholders[n-1]; false when a
// number has none.
func PlaceParams(sql string, placeholders []string) (string, bool) {
	return SubstituteParams(sql, func(n int) (string, bool) {
		if n < 1 || n > len(placeholders) {
			return "", false
		}
		return placeholders[n-1], true
	})
}

// MentionsName reports whether sql names name anywhere, in any case (in
// comments and strings too: it errs towards a name that is not there).
func MentionsName(sql, name string) bool {
	return strings.Contains(strings.ToLower(sql), strings.ToLower(name))
}

// NoParams reports whether sql has no $n parameter: no '$' anywhere.
func NoParams(sql string) bool { return strings.IndexByte(sql, '$') < 0 }

var explainPgaccel = regexp.MustCompile(`(?is)^\s*explain\s*\(\s*pgaccel\s*\)\s*(.*?)\s*;?\s*$`)

// ExplainPgaccel reports whether sql is EXPLAIN (pgaccel) of a statement,
// the dry run the proxy answers (how it would route the statement, and
// why), and returns the statement's text.
func ExplainPgaccel(sql string) (inner string, ok bool) {
	if !strings.EqualFold(LeadingWord(sql), "explain") {
		return "", false
	}
	m := explainPgaccel.FindStringSubmatch(sql)
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return "", false
	}
	return m[1], true
}

package proxy

import (
	"context"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pgaccel/pgaccel/planner"
)

// Seeing and choosing the route (README, "Seeing the route"):
//
//   - SHOW pgaccel.last_route answers how the session's previous statement
//     was routed. The proxy takes it as lastRouteSQL, a SELECT the origin
//     can parse and describe (one text column named pgaccel.last_route),
//     and answers it itself with the route it noted, through the same
//     local path as accelerated reads (so pipelines, portals and formats
//     behave). Where the proxy cannot answer (an aborted transaction), the
//     origin runs it: 25P02 in an aborted transaction, as for SHOW.
//   - SET pgaccel.route = origin | auto is a Postgres placeholder setting
//     of the origin session (SET LOCAL, RESET, rollback and -c at startup
//     behave as Postgres's own); the session info reads it, and reads go
//     to the origin while it is origin.

// lastRouteSQL is the statement SHOW pgaccel.last_route becomes.
const lastRouteSQL = `SELECT pg_catalog.current_setting('pgaccel.last_route', true) AS "pgaccel.last_route"`

var showLastRoute = regexp.MustCompile(`(?is)^\s*show\s+(pgaccel\.last_route|"pgaccel\.last_route")\s*;?\s*$`)

// asShowLastRoute returns lastRouteSQL for SHOW pgaccel.last_route, and
// sql itself otherwise.
func asShowLastRoute(sql string) string {
	if len(sql) < 64 && containsFold(sql, "last_route") && showLastRoute.MatchString(sql) {
		return lastRouteSQL
	}
	return sql
}

// containsFold reports whether s contains sub (lower case ASCII) in any
// case, without allocating (every Parse is checked, and every statement
// sent to the origin: sessionStateCall).
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0]|0x20 && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// routeNote is how a statement was routed, kept as it was decided and
// written out only when SHOW pgaccel.last_route asks (the notes of most
// statements are never read).
type routeNote struct {
	route, reason, detail string
}

// maxRouteDetail bounds the rule shown, in bytes.
const maxRouteDetail = 300

// String is the note as SHOW pgaccel.last_route shows it.
func (n routeNote) String() string {
	if n.route == "" {
		return "none"
	}
	text := n.route
	if n.reason != "" {
		text += ": " + n.reason
	}
	if d := n.detail; d != "" {
		if len(d) > maxRouteDetail {
			cut := maxRouteDetail
			for cut > 0 && !utf8.RuneStart(d[cut]) {
				cut--
			}
			d = d[:cut] + "…"
		}
		text += ": " + d
	}
	return text
}

// noteRoute records the route of the statement just decided, unless it is
// one of the proxy's own (SHOW pgaccel.last_route).
func (ss *session) noteRoute(d planner.Decision, route, reason, detail string) {
	if !internal(d) {
		ss.lastRoute = routeNote{route: route, reason: reason, detail: detail}
	}
}

// internal reports whether d is the proxy's answer about itself (SHOW
// pgaccel.last_route, the only SHOW the acceleration answers): it is
// neither counted nor shown as a route.
func internal(d planner.Decision) bool {
	return d.Route == planner.RouteAccelerate && d.Kind == planner.KindShow
}

// lastRouteDecision answers SHOW pgaccel.last_route from DuckDB.
func (ss *session) lastRouteDecision() planner.Decision {
	return planner.Decision{Route: planner.RouteAccelerate, Kind: planner.KindShow,
		SQL: "SELECT " + quoteLiteral(ss.lastRoute.String()) + "::VARCHAR AS \"pgaccel.last_route\""}
}

// routeSettingDetail is, for a value of pgaccel.route, why reads go to the
// origin ("" for auto, the default, or unset).
func routeSettingDetail(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto", "default":
		return ""
	case "origin":
		return "pgaccel.route = origin"
	default:
		return "pgaccel.route = " + quoteLiteral(v) + " is neither auto nor origin"
	}
}

// routeOverride sends d, a read the acceleration would answer, to the
// origin while pgaccel.route says so.
func (ss *session) routeOverride(d planner.Decision) planner.Decision {
	if d.Route == planner.RouteAccelerate && ss.info.routeDetail != "" {
		return planner.Decision{Route: planner.RouteOrigin, Datasets: d.Datasets, Kind: d.Kind, Reason: "route_setting", Detail: ss.info.routeDetail}
	}
	return d
}

// quick is the planner's fast path, which the proxy's own statement skips
// (it names no dataset). EXPLAINs do not take the fast path either (it
// reads only SELECT, INSERT, UPDATE and DELETE).
//
// Its answer depends on the text alone (and the datasets, fixed for the
// planner's life), and not on the values of the text's numbers, so the
// session keeps its last few by the text's number shape (quickMemo): a
// statement is looked at by loopSafe and again when handled, clients
// prepare the same text again and again (handoff.go), and pgbench's
// statements differ only in their numbers.
func (ss *session) quick(sql string) (planner.Decision, bool) {
	e := ss.quickEntry(sql)
	if e == nil {
		return planner.Decision{}, false
	}
	return e.d, e.ok
}

// quickEntry is quick's answer for sql, with what the lane asks of it
// too; nil for the proxy's own statement.
func (ss *session) quickEntry(sql string) *quickEntry {
	if sql == lastRouteSQL {
		return nil
	}
	m := &ss.quickMemo
	h := shapeHash(sql)
	for i := range m.entries {
		e := &m.entries[i]
		if !e.set {
			break
		}
		if e.hash == h && e.matches(sql) {
			return e
		}
	}
	d, ok := ss.accel.Planner.Quick(sql)
	e := &m.entries[m.next]
	m.next = (m.next + 1) % len(m.entries)
	*e = quickEntry{d: d, ok: ok, stateCall: sessionStateCall(sql)}
	e.keep(sql)
	return e
}

// keep makes e the entry of sql's shape. A quoted identifier's digits are
// its name: such a text is kept as it is, and matches only itself.
func (e *quickEntry) keep(sql string) {
	if e.shape, e.quoted = sql, strings.Contains(sql, `"`); !e.quoted {
		e.shape = numberShape(sql)
	}
	e.hash, e.set = shapeHash(sql), true
}

// matches reports whether sql has e's shape.
func (e *quickEntry) matches(sql string) bool {
	if e.quoted {
		return sql == e.shape
	}
	return sameNumberShape(sql, e.shape)
}

// quickMemo is a session's last few fast-path decisions (quick), by number
// shape: enough for the statements of a pgbench TPC-B transaction, whose
// deltas' signs make two shapes of each of four statements (11 in all).
type quickMemo struct {
	entries [16]quickEntry
	next    int
}

// quickEntry is one text shape's fast-path decision, and the
// sessionStateCall of the text, which numbers do not change either (no
// name it looks for has a digit).
type quickEntry struct {
	set       bool
	quoted    bool // shape is the text itself (it has a quoted identifier)
	hash      uint64
	shape     string
	d         planner.Decision
	ok        bool
	stateCall string
}

// numberShape is sql with each number in it (a run of digits that does
// not continue an identifier or a parameter's $) as one 0. Texts of one
// shape differ only in their numbers' digits, wherever they are (in
// strings and comments too), which changes no token the planner's fast
// path sees: each run stays one number, or stays inside its literal or
// comment. Quoted identifiers, whose digits are names, are the caller's
// to leave out.
func numberShape(sql string) string {
	b := make([]byte, 0, len(sql))
	for i := 0; i < len(sql); {
		if isDigit(sql[i]) && (i == 0 || !continuesIdent(sql[i-1])) {
			for i < len(sql) && isDigit(sql[i]) {
				i++
			}
			b = append(b, '0')
			continue
		}
		b = append(b, sql[i])
		i++
	}
	return string(b)
}

// sameNumberShape reports whether numberShape(sql) is shape (which has no
// quote), without making it. A text with a quote matches none.
func sameNumberShape(sql, shape string) bool {
	j := 0
	for i := 0; i < len(sql); {
		if j >= len(shape) {
			return false
		}
		if isDigit(sql[i]) && (i == 0 || !continuesIdent(sql[i-1])) {
			if shape[j] != '0' {
				return false
			}
			for i < len(sql) && isDigit(sql[i]) {
				i++
			}
			j++
			continue
		}
		if sql[i] != shape[j] || sql[i] == '"' {
			return false
		}
		i++
		j++
	}
	return j == len(shape)
}

// shapeHash is an FNV-1a hash of numberShape(sql), without making it:
// texts of one shape have one hash (a text with a quote hashes as its
// shape too, and is told apart by matches).
func shapeHash(sql string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	for i := 0; i < len(sql); {
		c := sql[i]
		if isDigit(c) && (i == 0 || !continuesIdent(sql[i-1])) {
			for i < len(sql) && isDigit(sql[i]) {
				i++
			}
			c = '0'
		} else {
			i++
		}
		h = (h ^ uint64(c)) * prime
	}
	return h
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// continuesIdent reports whether a digit after c is part of an
// identifier, a parameter ($1) or a dollar-quote tag: what the planner's
// scanner reads as an identifier's bytes (non-ASCII ones included).
func continuesIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c >= 0x80
}

// explainLocal turns d, a read the acceleration answers, into the answer
// of EXPLAIN [ANALYZE] of it: DuckDB's plan (or, with analyze, the profile
// of running it, under the session's cancel and statement_timeout), under
// a first line naming the route and the datasets. ok is false when DuckDB
// cannot explain it; the origin then explains the client's statement.
func (ss *session) explainLocal(d planner.Decision, analyze bool) (planner.Decision, bool) {
	ctx, cancel := context.WithCancel(ss.srv.baseCtx)
	defer cancel()
	ss.runLocal(cancel, ss.localDeadline())
	lines, err := ss.accel.Engine.Explain(ctx, ss.state.Param("TimeZone"), d.SQL, analyze)
	ss.endRun()
	if err != nil {
		return d, false
	}
	head := "pgaccel: accelerated, from DuckDB: datasets " + strings.Join(d.Datasets, ", ")
	if analyze {
		head += " (EXPLAIN ANALYZE ran the statement on DuckDB)"
	}
	lits := make([]string, 0, len(lines)+1)
	lits = append(lits, quoteLiteral(head))
	for _, l := range lines {
		lits = append(lits, quoteLiteral(l))
	}
	d.SQL = "SELECT unnest([" + strings.Join(lits, ", ") + "]::VARCHAR[]) AS \"QUERY PLAN\""
	d.Kind, d.FallbackSQL, d.OriginSQL, d.NumericText = planner.KindExplain, "", "", nil
	return d, true
}

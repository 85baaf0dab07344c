package proxy

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/stmtstats"
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

// lastRouteSQL is the statement SHOW pgaccel.last_route becomes (see
// ownshow.go for the others).
const lastRouteSQL = `SELECT pg_catalog.current_setting('pgaccel.last_route', true) AS "pgaccel.last_route"`

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
func (ss *session) noteRoute(d *planner.Decision, route, reason, detail string) {
	if !internal(d) {
		ss.acc.lastRoute = routeNote{route: route, reason: reason, detail: detail}
		ss.statWhy(route, reason, detail, d.Datasets)
	}
}

// explainNotice tells the client, ahead of the origin's plan, that an
// EXPLAIN of a read of datasets went to the origin and why (the route
// SHOW pgaccel.last_route shows): a NOTICE, which psql prints above the
// plan and drivers pass to their notice handlers, so the plan itself
// (whatever its FORMAT) stays the origin's.
func (ss *session) explainNotice() {
	n := &pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: pgdef.SuccessfulCompletion,
		Message: "pgaccel: the origin explains this read: " + ss.acc.lastRoute.String()}
	buf, err := n.Encode(nil)
	if err != nil {
		return
	}
	_ = ss.writeOrdered(buf) // a failed write ends the session at the next read
}

// internal reports whether d is the proxy's answer about itself (SHOW
// pgaccel.last_route, the only SHOW the acceleration answers): it is
// neither counted nor shown as a route.
func internal(d *planner.Decision) bool {
	return d.Route == planner.RouteAccelerate && d.Kind == planner.KindShow
}

// lastRouteDecision answers SHOW pgaccel.last_route from DuckDB.
func (ss *session) lastRouteDecision() planner.Decision {
	return planner.Decision{Route: planner.RouteAccelerate, Kind: planner.KindShow,
		SQL: "SELECT " + quoteLiteral(ss.acc.lastRoute.String()) + "::VARCHAR AS \"pgaccel.last_route\""}
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
	if d.Route == planner.RouteAccelerate && ss.acc.info.RouteDetail != "" {
		return planner.Decision{Route: planner.RouteOrigin, Datasets: d.Datasets, Kind: d.Kind, Reason: "route_setting", Detail: ss.acc.info.RouteDetail}
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
	if ownKind(sql) != planner.ShowNone {
		return nil
	}
	m := &ss.acc.quickMemo
	if reg := ss.accel.Registry; reg != nil {
		if ep := reg.Epoch(); ep != m.epoch {
			*m = quickMemo{epoch: ep}
		}
	}
	if len(sql) > maxQuickText {
		m.long.decide(ss.accel.Planner, sql) // keeps no text: never looked up
		return &m.long
	}
	// First the entry that came after the last one the last time (a
	// client's statements come in the same order again and again): one
	// pass over the text, no hash.
	if l := m.last; l > 0 {
		if f := m.entries[l-1].follow; f > 0 && planner.SameShape(sql, m.entries[f-1].text) {
			m.last = f
			return ss.current(&m.entries[f-1])
		}
	}
	h := planner.ShapeHash(sql)
	if i, e := m.find(sql, h); e != nil {
		m.followedBy(int8(i + 1))
		return ss.current(e)
	}
	i := m.next
	m.next = (m.next + 1) % len(m.entries)
	e := &m.entries[i]
	// A copy, kept for later lookups: the lane looks texts up where they
	// are in the client's buffer (laneScan).
	*e = quickEntry{set: true, text: strings.Clone(sql), hash: h}
	e.decide(ss.accel.Planner, sql)
	m.followedBy(int8(i + 1))
	return e
}

// current returns e, decided again when it holds a decision kept from a
// full plan (keepOrigin) that no longer holds (keeps).
func (ss *session) current(e *quickEntry) *quickEntry {
	if e.kept && !ss.keeps(&e.keptAt, e.d) {
		e.decide(ss.accel.Planner, e.text)
	}
	return e
}

// keptTTL is how long a kept decision goes before it is renewed (keeps):
// the privileges the acceleration needs to answer it once the origin is
// down are looked up again then (warmPrivileges), as a full plan of it
// would.
const keptTTL = time.Second

// keepStamp is when a decision was kept: the planner's version and the
// time.
type keepStamp struct {
	at   planner.Version
	made time.Time
}

// keepsOrigin reports whether a decision kept at k (keepOrigin) holds
// now: the datasets did not change, it is younger than keptTTL, the link
// is live (with the origin down the acceleration answers point reads),
// and the session info the plan read is current and sets no
// pgaccel.route (whose reason the route would then give).
func (ss *session) keepsOrigin(k keepStamp) bool {
	return ss.keepsOriginAged(k) && time.Since(k.made) < keptTTL
}

// keepsOriginAged is keepsOrigin but for the decision's age.
func (ss *session) keepsOriginAged(k keepStamp) bool {
	return ss.origin.state == linkLive && !ss.origin.broken.Load() && ss.acc.info.Valid && !ss.acc.infoDirty && ss.acc.info.RouteDetail == "" &&
		ss.accel.Planner.Version() == k.at
}

// keeps reports whether d, a decision kept at *k, holds now. One that
// holds but for its age (keptTTL) is renewed in place instead of planned
// again: its route cannot have changed (the datasets, the link and the
// session info are as they were, and the origin answers any text
// exactly), and what a plan would refresh for it, the privileges the
// acceleration needs once the origin is down, is warmed in the
// background (warmPrivileges). Planning it again would take the session
// off its event loop for the plan, and off the lane for the statements
// after it (about 15 % of pgbench -S's at 8 clients went so with a
// one-second TTL).
func (ss *session) keeps(k *keepStamp, d planner.Decision) bool {
	if !ss.keepsOriginAged(*k) {
		return false
	}
	if now := time.Now(); now.Sub(k.made) >= keptTTL {
		ss.warmPrivileges(d)
		k.made = now
	}
	return true
}

// keepable reports whether d, the full plan of sql made at k, may be kept
// for sql's number shape (keepOrigin, keepStmtOrigin): a point read that
// runtime.point_reads: origin sends to the origin as it is, which changes
// nothing the session tracks; and sql's sessionStateCall.
func (ss *session) keepable(sql string, d planner.Decision, k keepStamp) (stateCall string, ok bool) {
	if d.Route != planner.RouteOrigin || d.Reason != planner.ReasonPointRead || d.OriginSQL != "" || d.FallbackSQL != "" ||
		!ss.keepsOrigin(k) {
		return "", false
	}
	stateCall = planner.SessionStateCall(sql)
	return stateCall, pureOrigin(d, stateCall)
}

// keepOrigin makes d, the full plan's decision for the simple Query or
// Parse sql made at k, the decision of sql's number shape for this
// session when it is keepable: a point read that runtime.point_reads:
// origin sends to the origin (pgbench -S). The lane then takes texts of
// that shape, and the session stays on its event loop, as for a read of
// no dataset. The origin answers any text exactly; what could make a text
// of the shape be answered here instead is a change of the datasets (the
// planner's version) or an origin that cannot be reached (no live link),
// and the entry is decided again then (current, keeps); past keptTTL it
// is renewed.
func (ss *session) keepOrigin(sql string, d planner.Decision, k keepStamp) {
	_, e := ss.acc.quickMemo.find(sql, planner.ShapeHash(sql)) // quick's entry for sql, made just before
	if e == nil || e.ok {
		return
	}
	if stateCall, ok := ss.keepable(sql, d, k); ok {
		e.d, e.ok, e.stateCall, e.counters = d, true, stateCall, nil
		e.kept, e.keptAt = true, k
	}
}

// warmPrivileges has the privileges of a point read the origin answers
// (d) looked up apart from the statement when they are not fresh: once the
// origin is down the acceleration answers the read, and must then check
// them without the origin (planner.Privileges.Warm). A kept shape is
// warmed again at least every keptTTL (keeps), which keeps the answers
// fresh.
func (ss *session) warmPrivileges(d planner.Decision) {
	if pr := ss.accel.Privileges; pr != nil && d.Route == planner.RouteOrigin && d.Reason == planner.ReasonPointRead &&
		ss.acc.info.User != "" && len(d.Tables) > 0 {
		pr.Warm(ss.acc.info.User, d.Tables)
	}
}

// keepStmtOrigin makes st, a named statement whose Execute was just
// planned as a point read for the origin (d, at k), an origin-only one for
// its next Binds, as a Parse of its shape after the decision was kept
// would have made it (newStmt): a statement prepared once and executed
// many times (pgbench -M prepared, pgx's statement cache, pgjdbc after
// five executions) is then relayed by the lane instead of being planned
// at every Execute. Only a statement the origin holds (its Parse went
// there, none kept here) that the session does not answer itself; portals
// bound before keep their statement's state. A Bind that finds the
// decision no longer holding gives the statement a fresh copy planned at
// each Execute again (relay.go).
func (ss *session) keepStmtOrigin(st *stmtInfo, d planner.Decision, k keepStamp) {
	if st == nil || st.name == "" || st.local || !st.atOrigin || st.cmd != nil || st.originOnly() || ss.ext.stmts[st.name] != st {
		return
	}
	if stateCall, ok := ss.keepable(st.sql, d, k); ok {
		origin := d
		st.origin, st.stateCall, st.pureOrigin = &origin, stateCall, true
		st.kept, st.keptAt = true, k
	}
}

// find returns the entry (and its index) of sql's number shape, h its
// ShapeHash; nil when there is none.
func (m *quickMemo) find(sql string, h uint64) (int, *quickEntry) {
	for i := range m.entries {
		e := &m.entries[i]
		if !e.set {
			break // the rest are not used yet either
		}
		if e.hash == h && planner.SameShape(sql, e.text) {
			return i, e
		}
	}
	return -1, nil
}

// followedBy records that entry f (index+1) was looked up after the last
// one.
func (m *quickMemo) followedBy(f int8) {
	if m.last > 0 {
		m.entries[m.last-1].follow = f
	}
	m.last = f
}

// decide makes e the fast path's decision for sql (the decision holds no
// part of the text); what e keeps of the text (text, hash) and its follow
// hint stay.
func (e *quickEntry) decide(p Planner, sql string) {
	d, ok := p.Quick(sql)
	e.set, e.d, e.ok, e.stateCall, e.counters, e.kept, e.keptAt = true, d, ok, "", nil, false, keepStamp{}
	if ok {
		// A SELECT's purity asks (pureOrigin), and what any statement
		// sent to the origin leaves there (noteReplay).
		e.stateCall = planner.SessionStateCall(sql)
	}
}

// quickMemo is a session's last few fast-path decisions (quick), by number
// shape (planner.SameShape): enough for the statements of a pgbench TPC-B
// transaction, whose deltas' signs make two shapes of each of four
// statements (11 in all).
type quickMemo struct {
	entries [16]quickEntry
	next    int
	// last is the entry the last lookup returned (index+1; 0: none).
	last int8
	// long is the answer for a text too long to keep, which no lookup
	// finds.
	long quickEntry
	// epoch is the registry's Epoch the entries were decided at: a reload
	// that changes the datasets empties the memo.
	epoch uint64
}

// maxQuickText bounds the texts a session keeps (quickMemo).
const maxQuickText = 8 << 10

// quickEntry is the fast-path decision of text's number shape and, for a
// statement it decides, the text's sessionStateCall, which numbers do not
// change either (no name it looks for has a digit).
type quickEntry struct {
	set       bool
	text      string // a copy of the text (none in quickMemo.long)
	hash      uint64 // planner.ShapeHash(text)
	d         planner.Decision
	ok        bool
	stateCall string
	// counters are d's route counters once counted (countOriginEntry).
	counters *routeCounters
	// stat is the statistics entry of the text's statement once the lane
	// looked it up (texts of one number shape have one: stats.go).
	stat *stmtstats.Entry
	// follow is the entry looked up after this one the last time
	// (index+1; 0: none; an entry once set stays set): a hint, checked
	// with SameShape.
	follow int8
	// kept: d is a full plan's origin decision (keepOrigin), made at
	// keptAt (keepsOrigin).
	kept   bool
	keptAt keepStamp
}

// explainLocal turns d, a read the acceleration answers, into the answer
// of EXPLAIN [ANALYZE] of it: DuckDB's plan (or, with analyze, the profile
// of running it, under the session's cancel and statement_timeout), under
// a first line naming the route and the datasets. ok is false when DuckDB
// cannot explain it; the origin then explains the client's statement.
func (ss *session) explainLocal(d planner.Decision, analyze bool) (planner.Decision, bool) {
	ctx, cancel := context.WithCancel(ss.srv.baseCtx)
	defer cancel()
	if s := ss.settings(); s == nil || !ss.clockLiterals(&d, s) {
		return d, false
	}
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

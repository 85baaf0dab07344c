package proxy

import (
	"bytes"
	"time"

	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// Statement statistics (stmtstats; Accel.Stats). A session with an
// acceleration notes, when a client's Query or Execute arrives, the entry
// of its statement (statArrive: by planner.StatementHash, from the
// session's last few entries or its prepared statement's, so that a
// statement seen before costs one pass over its text); the route it takes
// then records its time and rows there:
//
//   - answered locally (query.go, execute.go, resultcache.go): at once,
//     as accelerated, point index or cache hit;
//   - sent to the origin (relay.go, lane.go): the pending item carries
//     the entry, and the origin relay records it when the origin's answer
//     completes (statObserve), with the rows of its CommandComplete tags
//     (noteCompletion), as origin or fallback;
//   - noteRoute keeps the reason and rule of a call sent to the origin.
//
// The proxy's own statements (SHOW pgaccel.*) are not counted.

// statCacheSize is how many statements a session keeps the entries of.
const statCacheSize = 8

// statCache is a session's last few statement entries, by hash.
type statCache struct {
	scope   *stmtstats.Scope
	hashes  [statCacheSize]uint64
	entries [statCacheSize]*stmtstats.Entry
	next    uint8
}

// stats is the store statements count in; nil when there is none.
func (ss *session) stats() *stmtstats.Store {
	if ss.accel == nil {
		return nil
	}
	return ss.accel.Stats
}

// statOf is the entry of sql for the session's role and database.
func (ss *session) statOf(sql string) *stmtstats.Entry {
	st := ss.stats()
	if st == nil || ownText(sql) {
		return nil
	}
	c := &ss.acc.stats
	if c.scope == nil {
		c.scope = &stmtstats.Scope{Role: ss.state.User, Database: ss.state.Database}
	}
	h := planner.StatementHash(sql)
	for i, e := range c.entries {
		if e != nil && c.hashes[i] == h && !e.Gone() {
			return e
		}
	}
	e := st.Lookup(h, c.scope, sql)
	c.hashes[c.next], c.entries[c.next] = h, e
	c.next = (c.next + 1) % statCacheSize
	return e
}

// stmtStat is statOf for a prepared statement, kept on it.
func (ss *session) stmtStat(st *stmtInfo) *stmtstats.Entry {
	if st == nil {
		return nil
	}
	if st.stat == nil || st.stat.Gone() {
		st.stat = ss.statOf(st.sql)
	}
	return st.stat
}

// statArrive notes the statement a client's Query (sql) or Execute (of
// the statement st) that just arrived runs.
func (ss *session) statArrive(sql string, st *stmtInfo) {
	if ss.stats() == nil {
		return
	}
	if st != nil {
		ss.local.stat = ss.stmtStat(st)
		return
	}
	ss.local.stat = ss.statOf(sql)
}

// timeLocal times a statement the session answered itself (or asked
// the origin for on its own: a caching miss, a fallback), started at
// start: one clock read for the route's duration metric (metricRoute)
// and the statement's statistics (route), with rows rows.
func (ss *session) timeLocal(metricRoute string, route stmtstats.Route, start time.Time, rows int64, datasets []string) {
	d := time.Since(start)
	ss.srv.metrics.observeDuration(ss.stripe, metricRoute, d)
	if e := ss.local.stat; e != nil {
		e.NoteDatasets(datasets)
		e.RecordDuration(ss.stripe, route, d, rows)
	}
}

// localStatRoute is the statistics' route of r, an accelerated answer.
func localStatRoute(r *localResult) stmtstats.Route {
	if r.point {
		return stmtstats.PointIndex
	}
	return stmtstats.Accelerated
}

// statRouteOf is the statistics' route of a statement the origin
// answered under the metrics' route.
func statRouteOf(route string) stmtstats.Route {
	if route == routeFallback {
		return stmtstats.Fallback
	}
	return stmtstats.Origin
}

// statWhy keeps why the current statement goes to the origin.
func (ss *session) statWhy(route, reason, detail string, datasets []string) {
	if e := ss.local.stat; e != nil {
		e.NoteWhy(statRouteOf(route), reason, detail)
		e.NoteDatasets(datasets)
	}
}

// statObserve records a completed origin item that took d (the origin
// relay's goroutine): the rows of the CommandComplete tags since the last
// one.
func (ss *session) statObserve(it *originlink.Item, d time.Duration) {
	rows := ss.origin.tagRows
	ss.origin.tagRows = 0
	e, _ := it.Stat.(*stmtstats.Entry)
	if e == nil || it.Started.IsZero() {
		return
	}
	e.RecordDuration(ss.stripe, statRouteOf(it.Route), d, rows)
}

// tagRows is the row count a CommandComplete tag ends in (SELECT 3,
// INSERT 0 3, UPDATE 3, COPY 3); 0 for tags without one.
func tagRows(tag []byte) int64 {
	i := bytes.LastIndexByte(tag, ' ')
	if i < 0 {
		return 0
	}
	var n int64
	for _, c := range tag[i+1:] {
		if c < '0' || c > '9' || n > (1<<62)/10 {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// statItem is the entry a pending item of the current statement carries
// (nil interface when there is none: no allocation either way).
func (ss *session) statItem() any {
	if e := ss.local.stat; e != nil {
		return e
	}
	return nil
}

// ownText reports whether sql is one of the proxy's own statements, as
// the client wrote it or as asOwnStatement made it: never counted.
func ownText(sql string) bool {
	if ownKind(sql) != planner.ShowNone || planner.ShowsPgaccel(sql) != planner.ShowNone {
		return true
	}
	_, ok := planner.ExplainPgaccel(sql)
	return ok
}

// statArriveQuick is statArrive for a Query the lane relays, whose memo
// entry q keeps its statement's entry: texts of one number shape are one
// statement to the statistics (planner.StatementHash), so the text is not
// hashed again.
func (ss *session) statArriveQuick(sql string, q *quickEntry) {
	if ss.stats() == nil {
		return
	}
	if q.stat == nil || q.stat.Gone() || q == &ss.acc.quickMemo.long {
		q.stat = ss.statOf(sql)
	}
	ss.local.stat = q.stat
}

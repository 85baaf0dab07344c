package proxy

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
)

// handleQuery answers a simple-protocol Query locally when the planner
// routes it to the acceleration; it reports false when the Query must be
// forwarded to the origin.
func (ss *session) handleQuery(m *pgproto3.Query) bool {
	if ss.segmentOpen {
		// Answering it locally would need a Sync of ours inside the
		// client's open stretch.
		ss.toOriginUninformed(ss.srv.baseCtx, m.String)
		return false
	}
	m.String = asShowLastRoute(m.String)
	if ss.answerWithoutOrigin(m.String) {
		return true
	}
	if qd, quick := ss.quick(m.String); quick {
		// Bound for the origin whatever the session: no session info
		// (which may cost an origin round trip) is read for it.
		ss.countOrigin(qd)
		ss.noteOrigin(m.String, qd)
		return false
	}
	start := time.Now()
	d, s, ok := ss.decideLocal(m.String, true, true)
	if !ok {
		if d.OriginSQL != "" {
			// A point read: the origin reads the table through the
			// subset the acceleration holds.
			m.String = d.OriginSQL
		} else if d.Reason == planner.ReasonPointRead {
			// A point read the origin answers: its RowDescription is kept
			// by text, so that the acceleration can answer it while the
			// origin is down (link.go).
			if key := ss.describeKey(m.String, d); ss.srv.describes.get(key) == nil {
				ss.queryCapture = describeCapturer(&ss.srv.describes, key)
			}
		}
		return false
	}
	if d.Caching {
		if ss.queryCaching(m, d, start) {
			return true
		}
		d.Route, d.Reason, d.Detail = planner.RouteOrigin, "transaction_failed", "an earlier message of the stretch failed at the origin"
		ss.countOrigin(d)
		return false
	}
	// A point read the point index answers (before the results cache:
	// it is as quick, and its answers are not kept).
	pre := ss.pointRows(d, nil, nil, nil)
	if pre == nil && d.SQL == "" {
		// Planned as a point lookup from its shape, which the index
		// cannot answer now: planned in full for DuckDB.
		if d = ss.accel.Planner.PlanFull(ss.srv.baseCtx, m.String, ss.planSession()); d.Route != planner.RouteAccelerate || d.Caching || d.SQL == "" {
			ss.countOrigin(d)
			ss.noteOrigin(m.String, d)
			return false
		}
	}
	// The results cache: an answer kept for this statement, settings and
	// data is sent as it was (privileges were checked by decideLocal).
	rc, rkey, gens := ss.resultCache(), "", []uint64(nil)
	if rc != nil && pre == nil && cacheable(d) {
		rkey = ss.resultKey('Q', m.String, d)
		var hit bool
		if hit, gens = ss.fromCache(rc, rkey, d, start, true, nil); hit {
			return true
		}
	}
	key := ss.describeKey(describedText(m.String, d), d)
	rd := ss.srv.describes.get(key)
	if rd == nil && d.Point != nil {
		// Kept by its text (a point read the origin answered).
		rd = ss.srv.describes.get(ss.describeKey(m.String, d))
	}
	describe := described(rd)
	fromOrigin := false // a description new to the cache, from the origin: checked against the planner's (checkDerived)
	if rd == nil {
		if r, leader := ss.describeFlight(key); r != nil {
			rd, describe = r, described(r)
		} else if leader {
			defer ss.srv.describing.finish(key)
		}
	}
	if rd == nil && ss.originDown() && ss.link == linkStandIn {
		// The origin cannot describe it: a text of the same description
		// shape may have been described (describeCache.shaped), or the
		// planner works it out (derived). Nothing is asked of the
		// stand-in, whose error would fail a transaction the session is
		// in (localtx.go).
		if rd = ss.srv.describes.shapedRows(key); rd == nil {
			if params, rows := ss.derived(m.String); params != nil && len(params.ParameterOIDs) == 0 {
				rd = rows
				ss.srv.metrics.derivedDescription("used")
			}
		}
		if rd == nil {
			ss.countOrigin(d)
			return false
		}
		describe = described(rd)
	}
	if rd == nil {
		// The origin describes the statement while DuckDB runs it.
		wait, err := ss.startDescribeSQL(m.String)
		if err != nil {
			ss.countOrigin(d)
			return false
		}
		describe = func() (*pgproto3.RowDescription, error) {
			var err error
			rd, err = wait() // rd heads the answer below
			if err == nil && rd != nil {
				fromOrigin = ss.srv.describes.put(key, rd)
				ss.srv.describing.finish(key)
			}
			return rd, err
		}
		defer func() {
			if fromOrigin {
				ss.checkDerived(m.String, nil, rd)
			}
		}()
	}
	var deadline time.Time
	if ss.info.statementTimeout > 0 {
		deadline = start.Add(ss.info.statementTimeout)
	}
	args, ok := ss.withClocks(&d, s)
	if !ok {
		d.Route, d.Reason, d.Detail = planner.RouteOrigin, "session_setting", "the relative-time values (now(), CURRENT_DATE) cannot be given for the session"
		ss.countOrigin(d)
		return false
	}
	defer ss.endRun()
	r, err := ss.startLocal(d, deadline, describe, nil, args, s, pre)
	if errors.Is(err, errOriginDescribe) {
		ss.countOrigin(d)
		return false
	}
	if err != nil {
		if e := ss.localInterrupted(); e != nil {
			ss.outBuf = ss.outBuf[:0]
			ss.failQuery(e)
			return true
		}
		ss.fallback(d, err)
		return false
	}
	if d.FallbackSQL != "" && r.emptyResult() {
		// on_zero_results: use_source. The origin answers, through the
		// inverse of the retention policies.
		r.close()
		ss.zeroResults(d)
		m.String = d.FallbackSQL
		return false
	}
	defer r.close()
	if pre == nil {
		r.verify = ss.verifySample(d, m.String, true)
	}
	_, n, err := ss.sendRows(r, []pgproto3.BackendMessage{rd}, 0)
	if e := ss.localInterrupted(); err != nil && e != nil {
		// Postgres sends the rows it had sent, then the error.
		var late *errAfterOutput
		if !errors.As(err, &late) {
			ss.outBuf = ss.outBuf[:0]
		}
		ss.failQuery(e)
		return true
	}
	if err != nil {
		var late *errAfterOutput
		if !errors.As(err, &late) {
			ss.outBuf = ss.outBuf[:0]
			ss.fallback(d, err)
			return false
		}
		ss.failQuery(ss.localFailedLate(err))
		return true
	}
	if rkey != "" && !r.flushed {
		rc.Keep(rkey, d.Datasets, gens, ss.outBuf, n)
	}
	// Count before the client can see the answer (and ask the metrics).
	if !r.internal {
		ss.srv.metrics.count(ss.stripe, routeAccelerated, r.datasets, "")
		ss.srv.metrics.observe(ss.stripe, routeAccelerated, start)
		ss.lastRoute = routeNote{route: localRoute(r)}
	}
	if err := ss.finish(selectTag(n), &pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()}); err != nil {
		ss.close()
	}
	ss.submitVerify(r.verify)
	return true
}

// describeFlight is, for a session with no origin connection that needs
// the origin's description kept under key, the description another
// session is asking the origin for at the same time (waited for, at most
// flightMax); leader is true when no other session is asking, and
// this one finishes the flight once it has asked (keyFlights.finish). A
// burst of new sessions reading the same new text so opens one origin
// connection, not one each.
func (ss *session) describeFlight(key string) (rd *pgproto3.RowDescription, leader bool) {
	if ss.link != linkNone {
		return nil, false
	}
	wait, first := ss.srv.describing.join(key)
	if first {
		return nil, true
	}
	await(wait, ss.closedCh())
	return ss.srv.describes.get(key), false
}

// publish keeps st's descriptions in the describe cache by text, once per
// statement (not per execution), for the next statement of that text: its
// rows, and its parameters, so that a session can prepare the same text
// without the origin (deferParse).
func (ss *session) publish(st *stmtInfo, d planner.Decision) {
	if st.published || st.derived {
		return
	}
	pd, rd := ss.stmtDesc(st)
	if rd == nil {
		return
	}
	key := ss.describeKey(st.sql, d)
	rkey := stmtKey('R', key, st.paramOIDs)
	defer ss.srv.describing.finish(rkey)
	if ss.srv.describes.put(rkey, rd) {
		inferred := pd
		if len(st.paramOIDs) > 0 {
			inferred = nil // the client's parameter types, not Postgres's inference
		}
		ss.checkDerived(st.sql, inferred, rd)
	}
	if pd != nil {
		ss.srv.describes.put(stmtKey('P', key, st.paramOIDs), pd)
	}
	st.published = true
}

// describeCapturer keeps the first RowDescription of a Query's answer in
// the describe cache under key (it runs on the origin relay).
func describeCapturer(c *describeCache, key string) func(pgproto3.BackendMessage) {
	done := false
	return func(msg pgproto3.BackendMessage) {
		if done {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			done = true
			c.put(key, copyBackendMessage(m))
		case *pgproto3.ErrorResponse, *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse:
			done = true
		}
	}
}

// fallback records that the acceleration could not run d (DuckDB could not
// bind or run it, or its result cannot be encoded exactly): it goes to the
// origin now and straight there next time.
func (ss *session) fallback(d planner.Decision, err error) {
	ss.log.Debug().Err(err).Strs("datasets", d.Datasets).Msg("acceleration cannot answer; falling back to the origin")
	ss.accel.Planner.RememberFallback(d.Fingerprint, d.Datasets)
	ss.srv.metrics.count(ss.stripe, routeFallback, d.Datasets, "engine")
	ss.timeRoute = routeFallback
	detail := ""
	if err != nil {
		detail = err.Error()
	}
	ss.noteRoute(&d, "fallback", "engine", detail)
}

// localFailedLate is the error of a failure after rows were sent: too late
// to move the statement to the origin. The rows not yet written are
// dropped.
func (ss *session) localFailedLate(err error) *pgproto3.ErrorResponse {
	ss.log.Warn().Err(err).Msg("accelerated query failed after sending rows")
	ss.outBuf = ss.outBuf[:0]
	return pgError(severityError, pgdef.InternalError, "accelerated query failed: "+err.Error(), "")
}

// countOrigin counts and notes d, a statement that goes to the origin.
func (ss *session) countOrigin(d planner.Decision) {
	ss.logOrigin(&d)
	ss.srv.metrics.countWith(ss.stripe, &ss.lastCount, routeOrigin, d.Datasets, d.Reason)
	ss.noteRoute(&d, "origin", d.Reason, d.Detail)
}

// countOriginEntry is countOrigin for a decision of the session's memo
// (the lane's), whose counters the entry keeps: no lookup by labels per
// statement.
func (ss *session) countOriginEntry(q *quickEntry) { ss.countOriginKept(&q.d, &q.counters) }

// countOriginStmt is countOrigin for an Execute of st, an origin-only
// statement (the lane's), whose counters st keeps.
func (ss *session) countOriginStmt(st *stmtInfo) { ss.countOriginKept(st.origin, &st.counters) }

// countOriginKept is countOrigin for d, whose counters *kept holds once
// looked up.
func (ss *session) countOriginKept(d *planner.Decision, kept **routeCounters) {
	ss.logOrigin(d)
	if m := ss.srv.metrics; m != nil {
		if *kept == nil {
			*kept = m.countersOf(routeOrigin, d.Datasets, d.Reason)
		}
		m.countIn(ss.stripe, *kept, routeOrigin, d.Datasets, d.Reason)
	}
	ss.noteRoute(d, "origin", d.Reason, d.Detail)
}

// logOrigin logs, at debug level, that d goes to the origin.
func (ss *session) logOrigin(d *planner.Decision) {
	if e := ss.log.Debug(); e.Enabled() {
		e.Str("reason", d.Reason).Str("rule", d.Detail).Strs("datasets", d.Datasets).Str("kind", d.Kind.String()).
			Msg("statement goes to the origin")
	}
}

// onParse records a statement the client prepares; it always goes to the
// origin too, so the statement stays executable there.
func (ss *session) onParse(st *stmtInfo) {
	ss.segmentOpen = true
	if st.name != "" && ss.stmts[st.name] != nil && !st.originOnly() {
		// The origin refuses it if the statement still exists there,
		// and accepts it if SQL (DEALLOCATE, DISCARD) dropped it: which
		// one it holds is unknown, so it runs there.
		st = &stmtInfo{name: st.name, sql: st.sql, origin: &planner.Decision{Route: planner.RouteOrigin, Reason: "statement_name_reused"}}
	}
	ss.setStmt(st.name, st)
}

// newStmt is what the session keeps of a Parse: with the planner's
// fast-path decision, asked once per Parse.
func (ss *session) newStmt(m *pgproto3.Parse) *stmtInfo {
	m.Query = asShowLastRoute(m.Query)
	var d planner.Decision
	ok, stateCall := false, ""
	if e := ss.quickEntry(m.Query); e != nil {
		d, ok, stateCall = e.d, e.ok, e.stateCall
	}
	if prev := ss.stmts[m.Name]; ok && m.Name == "" && prev.originOnly() && prev.sql == m.Query && prev.origin.Reason == d.Reason {
		// The same text again (pgbench, many drivers' unnamed
		// statements): an origin-only statement keeps nothing that could
		// differ, so the one there serves, and nothing is allocated.
		return prev
	}
	st := &stmtInfo{name: m.Name, sql: m.Query}
	if ok {
		origin := d // d itself stays on the stack for the reuse above
		st.origin, st.stateCall = &origin, stateCall
		st.pureOrigin = pureOrigin(d, stateCall)
	} else {
		st.paramOIDs = slices.Clone(m.ParameterOIDs)
	}
	return st
}

// originOnly reports whether msg (Parse, with parsed its statement, Bind,
// Describe, Execute or Close) concerns a statement that goes to the origin
// whatever the session.
func (ss *session) originOnly(msg pgproto3.FrontendMessage, parsed *stmtInfo) bool {
	switch m := msg.(type) {
	case *pgproto3.Parse:
		return parsed.originOnly()
	case *pgproto3.Bind:
		return ss.stmts[m.PreparedStatement].originOnly()
	case *pgproto3.Describe:
		if m.ObjectType == 'S' {
			return ss.stmts[m.Name].originOnly()
		}
		return ss.portalOriginOnly(m.Name)
	case *pgproto3.Execute:
		return ss.portalOriginOnly(m.Portal)
	}
	return false
}

func (ss *session) portalOriginOnly(name string) bool {
	p := ss.portals[name]
	return p != nil && p.stmt.originOnly()
}

// onBind records a portal: its statement, parameters and result formats.
func (ss *session) onBind(m *pgproto3.Bind) {
	ss.segmentOpen = true
	if old := ss.portals[m.DestinationPortal]; old != nil {
		old.release()
	}
	if st := ss.stmts[m.PreparedStatement]; st.originOnly() {
		// Never run here: its parameters need no keeping, and nothing
		// changes such a portal, so each Bind of the statement (pgbench,
		// drivers' unnamed portals) can have the same one.
		p := st.originPortal
		if p == nil || !p.onlyOf(st) {
			p = &portalInfo{stmt: st}
			st.originPortal = p
		}
		ss.setPortal(m.DestinationPortal, p)
		return
	}
	p := &portalInfo{
		stmt:          ss.stmts[m.PreparedStatement],
		paramFormats:  slices.Clone(m.ParameterFormatCodes),
		resultFormats: slices.Clone(m.ResultFormatCodes),
		params:        make([][]byte, len(m.Parameters)),
	}
	for i, v := range m.Parameters {
		if v != nil {
			p.params[i] = slices.Clone(v)
		}
	}
	ss.setPortal(m.DestinationPortal, p)
}

// onlyOf reports whether p is a portal of st and holds nothing else.
func (p *portalInfo) onlyOf(st *stmtInfo) bool {
	return p.stmt == st && p.params == nil && p.paramFormats == nil && p.resultFormats == nil &&
		p.rows == nil && p.active == nil && !p.local && !p.exhausted && !p.describeSent
}

// describeCapture returns a function that keeps the descriptions the origin
// sends for a client's Describe, for later local execution.
func (ss *session) describeCapture(m *pgproto3.Describe) func(pgproto3.BackendMessage) {
	ss.segmentOpen = true
	if m.ObjectType == 'S' {
		st := ss.stmts[m.Name]
		if st == nil || st.originOnly() {
			return nil
		}
		return func(msg pgproto3.BackendMessage) {
			switch r := msg.(type) {
			case *pgproto3.ParameterDescription:
				ss.setStmtDesc(st, copyBackendMessage(r).(*pgproto3.ParameterDescription), nil)
			case *pgproto3.RowDescription:
				ss.setStmtDesc(st, nil, copyBackendMessage(r).(*pgproto3.RowDescription))
			case *pgproto3.NoData:
				ss.descMu.Lock()
				st.noData = true
				ss.descMu.Unlock()
			}
		}
	}
	p := ss.portals[m.Name]
	if p == nil || p.stmt.originOnly() {
		return nil
	}
	p.describeSent = true
	return func(msg pgproto3.BackendMessage) {
		if r, ok := msg.(*pgproto3.RowDescription); ok {
			rd := copyBackendMessage(r).(*pgproto3.RowDescription)
			ss.descMu.Lock()
			p.rows = rd
			if p.stmt.rows == nil {
				// The statement's is the portal's in text format.
				p.stmt.rows = inFormats(rd, nil)
			}
			ss.descMu.Unlock()
		}
	}
}

// onClose forgets a closed statement or portal.
func (ss *session) onClose(m *pgproto3.Close) {
	ss.segmentOpen = true
	if m.ObjectType == 'S' {
		if _, ok := ss.stmts[m.Name]; ok {
			ss.setStmt(m.Name, nil)
		}
		return
	}
	ss.forgetPortal(m.Name)
}

// forgetPortal records that portal name is gone, its local result closed.
func (ss *session) forgetPortal(name string) {
	if p := ss.portals[name]; p != nil {
		p.release()
		ss.setPortal(name, nil)
	}
}

// onSync ends an extended-protocol stretch. Outside a transaction block it
// ends the implicit transaction, and every portal with it (in a block,
// portals, the unnamed one too, live on until the block ends): the next
// stretch drops them, once the transaction status is known (beginStretch).
func (ss *session) onSync() {
	ss.segmentOpen = false
	ss.planMemo.set = false
}

// handleExecute answers an Execute locally when its statement is routed to
// the acceleration; it reports false when the Execute must be forwarded.
func (ss *session) handleExecute(m *pgproto3.Execute) bool {
	ss.answerCheck = false
	defer func() { ss.answerCheck = false }()
	p := ss.portals[m.Portal]
	if p == nil || p.stmt == nil {
		return false
	}
	if p.active != nil {
		return ss.continueLocal(p, m, false)
	}
	if p.exhausted {
		// Run to completion here before: Postgres answers an Execute of
		// an exhausted portal with no rows.
		ss.answerLocal(selectTag(0))
		return true
	}
	if p.stmt.cmd != nil {
		return p.local && ss.runCommand(p, m)
	}
	if d := p.stmt.origin; d != nil { // Quick's decision at Parse
		ss.countOrigin(*d)
		ss.noteOriginKnown(p.stmt.sql, *d, &p.stmt.stateCall)
		return false
	}
	start := time.Now()
	d, s, ok := ss.decideLocal(p.stmt.sql, false, false)
	if !ok && d.OriginSQL == "" {
		if d.Reason == planner.ReasonPointRead {
			// Kept by text, as for an accelerated one, so that a session
			// can prepare it while the origin is down.
			ss.publish(p.stmt, d)
		}
		return false
	}
	// ok is false for a point read that the origin answers through the
	// subset the acceleration holds (d.OriginSQL): run under the proxy's
	// own names with the portal's parameters, once their types are known.
	// Parameter types: from Parse when all were given, else the origin's.
	oids := p.stmt.paramOIDs
	if len(p.params) > 0 && (len(oids) != len(p.params) || slices.Contains(oids, 0)) {
		params, _ := ss.stmtDesc(p.stmt)
		if params == nil {
			// The types Postgres inferred: kept by text, since clients
			// that leave them out (libpq, node-postgres) usually prepare
			// the unnamed statement again for every execution.
			key := stmtKey('P', ss.describeKey(p.stmt.sql, d), p.stmt.paramOIDs)
			params = ss.srv.describes.params(key)
			if params == nil && ss.stmts[p.stmt.name] != p.stmt {
				// The statement was closed (or replaced) since the Bind:
				// the origin cannot describe it; its portal runs there.
				return false
			}
			if params == nil {
				pd, rd, err := ss.describeInline('S', p.stmt.name)
				if err != nil || pd == nil {
					return false
				}
				params = pd
				ss.setStmtDesc(p.stmt, nil, rd)
				ss.srv.describes.put(key, pd)
			}
			ss.setStmtDesc(p.stmt, params, nil)
		}
		oids = params.ParameterOIDs
	}
	if len(oids) < len(p.params) {
		return false
	}
	if !ok {
		if !ss.drain() {
			return false // the origin skips the client's Execute
		}
		return ss.executeFallback(p, oids, d.OriginSQL, requestPointRead, routeOrigin, start)
	}
	rows := ss.portalRows(p)
	if rows == nil {
		// Described for an earlier statement of the same text, or by the
		// client's Describe of the portal, whose answer is on its way.
		ss.setStmtDesc(p.stmt, nil, ss.srv.describes.get(stmtKey('R', ss.describeKey(p.stmt.sql, d), p.stmt.paramOIDs)))
		if rows = ss.portalRows(p); rows == nil && p.describeSent && ss.drain() {
			rows = ss.portalRows(p)
		}
	}
	if rows == nil {
		_, rd, err := ss.describeInline('P', m.Portal)
		if err != nil || rd == nil {
			return false
		}
		rows = rd
	}
	ss.publish(p.stmt, d)
	if d.BinaryArraysInexact && binaryArrays(rows, p.resultFormats) {
		// array_send writes the NULL flag of the array a slice came
		// from, which the acceleration does not know.
		d.Route, d.Reason, d.Detail = planner.RouteOrigin, "binary_array", "an array slice in binary results: Postgres sends the NULL flag of the array it came from"
		ss.countOrigin(d)
		return false
	}
	if d.Caching {
		if ss.executeCaching(p, m, oids, rows, d, start) {
			return true
		}
		d.Route, d.Reason, d.Detail = planner.RouteOrigin, "caching_partial", "an Execute with a row limit: the origin's portal answers it, not kept"
		ss.countOrigin(d)
		return false
	}
	if ss.originTimer && ss.info.statementTimeout > 0 {
		// The origin's statement timer runs for this statement (its Parse,
		// Bind or a Describe went there): it would fire while DuckDB runs
		// it. The origin times it and answers it.
		d.Route, d.Reason = planner.RouteOrigin, "statement_timeout"
		ss.countOrigin(d)
		return false
	}
	// The results cache, for an Execute of the whole answer (keyed by
	// the parameters as they came, before they are decoded for DuckDB).
	var pre *accelerator.Rows
	if m.MaxRows == 0 {
		pre = ss.pointRows(d, p.params, p.paramFormats, oids)
	}
	rc, rkey, gens := ss.resultCache(), "", []uint64(nil)
	if rc != nil && pre == nil && m.MaxRows == 0 && cacheable(d) {
		rkey = ss.resultKey('E', p.stmt.sql, d, executeKeyParts(p, oids, rows)...)
		var hit bool
		if hit, gens = ss.fromCache(rc, rkey, d, start, false, func() {
			ss.change(func() { p.exhausted = true }, func(bool) { p.exhausted = false })
		}); hit {
			return true
		}
	}
	var args []any
	if pre == nil { // the point index does not answer: DuckDB does
		if args, ok = ss.duckArgs(&d, p, oids, s); !ok {
			return false
		}
	}
	if d.FallbackSQL != "" {
		// on_zero_results may ask the origin on the proxy's behalf, after
		// everything earlier.
		if !ss.drain() {
			return false
		}
		ss.answerCheck = false
	}
	// The origin gets the Parse and Bind before it would otherwise (at
	// the client's Sync), to work on them while DuckDB runs.
	_ = ss.fe.Flush()
	r, err := ss.startLocal(d, ss.localDeadline(), described(rows), p.resultFormats, args, s, pre)
	defer ss.endRun()
	if err != nil {
		if e := ss.localInterrupted(); e != nil {
			ss.outBuf = ss.outBuf[:0]
			ss.failExecute(e)
			return true
		}
		ss.fallback(d, err)
		return false
	}
	r.started = start
	r.fingerprint = d.Fingerprint
	r.cacheKey, r.cacheGens = rkey, gens
	if pre == nil && m.MaxRows == 0 {
		r.verify = ss.verifySample(d, p.stmt.sql, false).withParams(p.params, p.paramFormats, oids, p.resultFormats)
	}
	if d.FallbackSQL != "" && r.emptyResult() {
		r.close()
		ss.zeroResults(d)
		if d.FallbackSQL == p.stmt.sql {
			return false // the client's own statement, at the origin
		}
		return ss.executeFallback(p, oids, d.FallbackSQL, requestZeroResults, routeFallback, start)
	}
	p.active = r
	return ss.continueLocal(p, m, true) // startLocal armed the run
}

// binaryArrays reports whether a result of description rd in formats has
// an array column in binary.
func binaryArrays(rd *pgproto3.RowDescription, formats []int16) bool {
	for i, f := range rd.Fields {
		if formatAt(formats, i) == 1 && encode.IsArray(f.DataTypeOID) {
			return true
		}
	}
	return false
}

// duckArgs decodes p's parameters (of types oids) for DuckDB and puts
// their placeholders, typed as BindArg says, into d.SQL. ok is false
// when the statement must go to the origin (counted here when a
// parameter cannot be decoded).
func (ss *session) duckArgs(d *planner.Decision, p *portalInfo, oids []uint32, s *encode.Settings) (args []any, ok bool) {
	args = make([]any, len(p.params))
	placeholders := make([]string, len(p.params))
	for i, v := range p.params {
		if v == nil {
			// NULL: DuckDB infers the type from the context, as Postgres did.
			placeholders[i] = "$" + strconv.Itoa(i+1)
			continue
		}
		oid := oids[i]
		if slices.Contains(d.EnumTypes, oid) {
			oid = pgdef.OIDText // an enum's label (enum_recv takes its text)
		}
		val, err := encode.DecodeParam(oid, formatAt(p.paramFormats, i), v, s)
		if err != nil {
			ss.countOrigin(planner.Decision{Datasets: d.Datasets, Reason: "parameter_type", Detail: "parameter $" + strconv.Itoa(i+1) + ": " + err.Error(), Kind: d.Kind})
			return nil, false
		}
		arg, ph, err := encode.BindArg(oid, val)
		if err != nil {
			ss.countOrigin(planner.Decision{Datasets: d.Datasets, Reason: "parameter_type", Detail: "parameter $" + strconv.Itoa(i+1) + ": " + err.Error(), Kind: d.Kind})
			return nil, false
		}
		args[i] = arg
		placeholders[i] = strings.Replace(ph, "?", "$"+strconv.Itoa(i+1), 1)
	}
	if len(d.Clocks) > 0 {
		var err error
		if len(p.params) != d.ParamCount {
			err = errors.New("the Bind has parameters the statement does not use")
		} else {
			args, placeholders, err = ss.bindClocks(d, args, placeholders, s)
		}
		if err != nil {
			ss.countOrigin(planner.Decision{Datasets: d.Datasets, Reason: "session_setting", Detail: "relative time (now(), CURRENT_DATE): " + err.Error(), Kind: d.Kind})
			return nil, false
		}
	}
	if len(args) > 0 {
		sql, ok := placeParams(d.SQL, placeholders)
		if !ok {
			return nil, false
		}
		d.SQL = sql
	}
	return args, true
}

// zeroResults counts a use_source fallback.
func (ss *session) zeroResults(d planner.Decision) {
	ss.log.Debug().Strs("datasets", d.Datasets).Msg("accelerated answer is empty; on_zero_results: use_source asks the origin")
	ss.srv.metrics.count(ss.stripe, routeFallback, d.Datasets, "zero_results")
	ss.timeRoute = routeFallback
	ss.noteRoute(&d, "fallback", "zero_results", "")
}

// portalMsgs are the messages of a private request that runs sql under
// name (statement and portal of the proxy's own) with the given
// parameters and formats, ending with no Sync or Flush. A failed earlier
// request may have left the name behind (the origin skipped its Closes):
// closing what does not exist is no error, so they are closed first.
func portalMsgs(name, sql string, oids []uint32, params [][]byte, paramFormats, resultFormats []int16) []privateMsg {
	return []privateMsg{
		{msg: &pgproto3.Close{ObjectType: 'P', Name: name}, kind: pkClose, hasKind: true},
		{msg: &pgproto3.Close{ObjectType: 'S', Name: name}, kind: pkClose, hasKind: true},
		{msg: &pgproto3.Parse{Name: name, Query: sql, ParameterOIDs: oids}, kind: pkParse, hasKind: true},
		{msg: &pgproto3.Bind{DestinationPortal: name, PreparedStatement: name,
			ParameterFormatCodes: paramFormats, Parameters: params, ResultFormatCodes: resultFormats}, kind: pkBind, hasKind: true},
		{msg: &pgproto3.Execute{Portal: name}, kind: pkExecute, hasKind: true},
		{msg: &pgproto3.Close{ObjectType: 'P', Name: name}, kind: pkClose, hasKind: true},
		{msg: &pgproto3.Close{ObjectType: 'S', Name: name}, kind: pkClose, hasKind: true},
	}
}

// fallbackName names the statement and portal of a use_source fallback in
// the extended protocol.
const fallbackName = "_pgaccel_zero_results"

// executeFallback answers an Execute of portal p by running sql (the
// statement with the inverse retention filters, or a point read through
// the acceleration's subset) at the origin with p's parameters and formats,
// under names of the proxy's own so that the client's statements and
// portals stay as they are; kind labels the request in the metrics, and
// its time from start counts under route. The
// rows are held in memory until the origin is done (fallback results are
// usually point lookups). An origin error is relayed, and the rest of the
// client's stretch up to Sync is skipped, as the origin skips it.
func (ss *session) executeFallback(p *portalInfo, oids []uint32, sql, kind, route string, start time.Time) bool {
	msgs, err := ss.privateRequest(kind, append(portalMsgs(fallbackName, sql, oids[:len(p.params)], p.params, p.paramFormats, p.resultFormats),
		privateMsg{msg: &pgproto3.Flush{}})...)
	if err != nil {
		ss.close()
		return true
	}
	ss.outBuf = ss.outBuf[:0]
	for _, msg := range msgs {
		switch msg.(type) {
		case *pgproto3.DataRow, *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse, *pgproto3.ErrorResponse,
			*pgproto3.NoticeResponse:
			if ss.outBuf, err = msg.Encode(ss.outBuf); err != nil {
				ss.close()
				return true
			}
			if _, ok := msg.(*pgproto3.ErrorResponse); ok {
				ss.localSkip = true
			}
		}
	}
	ss.srv.metrics.observe(ss.stripe, route, start)
	if err := ss.finish(); err != nil {
		ss.close()
	}
	return true
}

// continueLocal sends the next rows of a local result for an Execute;
// armed: the local run (cancel, statement_timeout) is armed already, by
// the startLocal of this Execute.
func (ss *session) continueLocal(p *portalInfo, m *pgproto3.Execute, armed bool) bool {
	r := p.active
	firstCall := r.sent == 0
	if !armed {
		ss.runLocal(r.cancel, ss.localDeadline())
	}
	done, n, err := ss.sendRows(r, nil, int64(m.MaxRows))
	ss.endRun()
	if err == nil && !done && firstCall && !ss.pending.idle() && !ss.drain() {
		// A suspended portal lives on: only once the origin has accepted
		// everything before it (its Bind above all).
		err = errOriginSkipping
	}
	if errors.Is(err, errOriginSkipping) {
		ss.outBuf = ss.outBuf[:0]
		r.close()
		p.active = nil
		ss.countOrigin(planner.Decision{Datasets: r.datasets, Reason: "transaction_failed", Detail: "an earlier message of the stretch failed at the origin"})
		return false
	}
	if e := ss.localInterrupted(); err != nil && e != nil {
		// Postgres sends the rows it had sent, then the error.
		var late *errAfterOutput
		if !errors.As(err, &late) {
			ss.outBuf = ss.outBuf[:0]
		}
		r.close()
		p.active = nil
		ss.failExecute(e)
		return true
	}
	if err != nil {
		var late *errAfterOutput
		if !errors.As(err, &late) && firstCall {
			ss.outBuf = ss.outBuf[:0]
			r.close()
			p.active = nil
			ss.fallback(planner.Decision{Datasets: r.datasets, Fingerprint: r.fingerprint}, err)
			return false
		}
		r.close()
		p.active = nil
		// Postgres skips to the next Sync after an error (failExecute
		// makes the origin, when it has part of the stretch, do so too).
		ss.failExecute(ss.localFailedLate(err))
		return true
	}
	var tail pgproto3.BackendMessage = &pgproto3.PortalSuspended{}
	if done {
		ss.change(func() { p.exhausted = true }, func(bool) { p.exhausted = false })
		tail = selectTag(n)
		if rc := ss.resultCache(); rc != nil && r.cacheKey != "" && !r.flushed {
			rc.Keep(r.cacheKey, r.datasets, r.cacheGens, ss.outBuf, n)
		}
		if !r.internal {
			ss.srv.metrics.count(ss.stripe, routeAccelerated, r.datasets, "")
			ss.srv.metrics.observe(ss.stripe, routeAccelerated, r.started)
			ss.lastRoute = routeNote{route: localRoute(r)}
		}
		r.close()
		p.active = nil
	}
	if err := ss.finish(tail); err != nil {
		ss.close()
	}
	if done {
		ss.submitVerify(r.verify)
	}
	return true
}

// fixedZone reports whether a TimeZone setting has no daylight-saving or
// offset changes (UTC and its spellings).
func fixedZone(tz string) bool {
	switch strings.ToUpper(tz) {
	case "UTC", "ETC/UTC", "GMT", "ETC/GMT", "Z", "ZULU", "UCT", "ETC/UCT", "UNIVERSAL", "ETC/UNIVERSAL", "GMT0", "ETC/GMT0", "GREENWICH":
		return true
	}
	return false
}

// planFresh plans sql; when only a write earlier in a pipeline stands in
// the way, it waits for the origin's answers (the transaction may have
// ended since) and plans again.
//
// pointOnly allows a point lookup planned without its SQL
// (planner.Session.PointOnly).
func (ss *session) planFresh(ctx context.Context, sql string, pointOnly bool) planner.Decision {
	plan := func() planner.Decision {
		s := ss.planSession()
		s.PointOnly = pointOnly
		return ss.accel.Planner.PlanFull(ctx, sql, s)
	}
	d, ok := ss.planMemo.take(sql, ss.planKey())
	if !ok {
		d = plan()
	}
	if d.Reason == planner.ReasonTxWrote && !ss.segmentWrote && !ss.pending.idle() && ss.drain() {
		d = plan()
	}
	return d
}

// planMemo is the plan a deferred Bind made of its statement
// (localDescriptions), taken by the Execute that follows it in the same
// stretch instead of planning the same text for the same session again.
type planMemo struct {
	set bool
	sql string
	key planKey
	d   planner.Decision
}

// planKey is what of the session a plan depends on: the session info read
// (user, search path, temporary tables), whether the transaction wrote,
// and whether the origin is down.
type planKey struct {
	infoGen             uint64
	txWrote, originDown bool
}

func (ss *session) planKey() planKey {
	return planKey{infoGen: ss.infoGen, txWrote: ss.txWrote.Load() || ss.segmentWrote, originDown: ss.link == linkStandIn}
}

// take returns the memo's plan of sql for key, once.
func (m *planMemo) take(sql string, key planKey) (planner.Decision, bool) {
	if !m.set || m.sql != sql || m.key != key {
		m.set = false
		return planner.Decision{}, false
	}
	m.set = false
	return m.d, true
}

// toOriginUninformed sends sql to the origin when the session info could
// not be read first, still noting what the statement may change.
func (ss *session) toOriginUninformed(ctx context.Context, sql string) {
	ss.mustNotBlock("plan")
	d := ss.accel.Planner.Plan(ctx, sql, ss.planSession())
	if d.Route == planner.RouteAccelerate {
		d.Route, d.Reason = planner.RouteOrigin, "session_info"
	}
	ss.countOrigin(d)
	ss.noteOrigin(sql, d)
}

// decideLocal takes a statement that the planner's fast path (Quick) has
// declined through everything that must hold before it is answered
// locally: fresh session info, the planner's route, every earlier origin
// response delivered (with settle false, only the current stretch's
// statement setup may still be pending: see prepareLocal), privileges, and
// session settings the encoder can honour. When one fails, the statement is counted and noted for the origin
// and ok is false.
func (ss *session) decideLocal(sql string, settle, pointOnly bool) (d planner.Decision, s *encode.Settings, ok bool) {
	ss.mustNotBlock("plan")
	ctx := ss.srv.baseCtx
	if sql == lastRouteSQL {
		if !ss.ensureInfo() {
			return planner.Decision{Route: planner.RouteOrigin, Kind: planner.KindShow}, nil, false
		}
		d, ok = ss.settleLocal(ss.lastRouteDecision(), settle)
		if !ok {
			return d, nil, false
		}
		if s = ss.settings(); s == nil {
			return d, nil, false
		}
		return d, s, true
	}
	if (ss.txWrote.Load() || ss.segmentWrote) && ss.pending.idle() {
		// The transaction has written (and no answer still on its way
		// could have ended it): no read is accelerated now.
		if qd, quick := ss.accel.Planner.QuickTxWrote(sql); quick {
			ss.countOrigin(qd)
			ss.noteOrigin(sql, qd)
			return qd, nil, false
		}
	}
	if !ss.ensureInfo() {
		ss.toOriginUninformed(ctx, sql)
		return d, nil, false
	}
	// EXPLAIN [ANALYZE] of a read: the read decides (see explainLocal).
	target := sql
	inner, analyze, explain := planner.ExplainTarget(sql)
	if explain {
		target = inner
		pointOnly = false // EXPLAIN needs the SQL
	}
	d = ss.routeOverride(ss.planFresh(ctx, target, pointOnly))
	if d.Reason == planner.ReasonPointRead && ss.originDown() {
		// runtime.point_reads: origin, and the origin cannot answer.
		d = ss.routeOverride(ss.planFresh(ctx, target, pointOnly))
	}
	if d.Route == planner.RouteAccelerate {
		d, ok = ss.prepareLocal(ctx, d, settle)
	}
	if ok && d.Caching {
		// The origin answers it (through the results cache): its own
		// settings apply, and EXPLAIN is its own.
		switch {
		case explain:
			detail := "the read is of a refresh_mode: caching dataset, which the origin answers"
			if d.Detail != "" {
				detail = d.Detail // a join with accelerated datasets says so
			}
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "explain", detail, false
		case ss.state.TxStatus() != 'I':
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "caching_transaction", "inside a transaction block, reads of refresh_mode: caching datasets go to the origin (its snapshot decides)", false
		case ss.cachingCache() == nil:
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "caching_off", "pgaccel.cache is off for the session", false
		default:
			return d, nil, true
		}
	}
	if ok {
		if s = ss.settings(); s == nil {
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "session_setting", "a session setting the encoder cannot honour exactly (DateStyle, IntervalStyle, client_encoding, ...)", false
		} else if d.ZoneSensitive && !fixedZone(ss.state.Param("TimeZone")) {
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "session_setting", "a timestamptz plus or minus an interval of days and time, which DuckDB computes otherwise across a daylight-saving change of the session's TimeZone", false
		} else if d.SignedIntervals && strings.EqualFold(ss.state.Param("IntervalStyle"), "sql_standard") {
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "session_setting", "an interval literal with a minus sign under IntervalStyle sql_standard, which reads it otherwise", false
		} else if d.PrintsText && !s.PrintsAsDefaults() {
			d.Route, d.Reason, d.Detail, ok = planner.RouteOrigin, "session_setting", "values printed as text under a DateStyle, IntervalStyle, extra_float_digits or bytea_output other than the defaults, which the acceleration's text function does not follow", false
		}
	}
	if ok && explain {
		if d, ok = ss.explainLocal(d, analyze); !ok {
			d.Route, d.Reason, d.Detail = planner.RouteOrigin, "explain", "DuckDB cannot explain it"
		}
	}
	if !ok {
		if explain {
			// The origin runs the client's EXPLAIN: what it may change
			// (EXPLAIN ANALYZE of a data-modifying CTE writes) is the
			// EXPLAIN's; why it went there is the read's.
			e := ss.planFresh(ctx, sql, false)
			e.Route, e.Reason, e.Detail = planner.RouteOrigin, d.Reason, d.Detail
			reads := len(d.Datasets) > 0
			d = e
			ss.countOrigin(d)
			ss.noteOrigin(sql, d)
			if reads {
				ss.explainNotice()
			}
			return d, nil, false
		}
		ss.countOrigin(d)
		ss.noteOrigin(sql, d)
		return d, nil, false
	}
	return d, s, true
}

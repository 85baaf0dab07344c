package proxy

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
)

// handleQuery answers a simple-protocol Query locally when the planner
// routes it to the acceleration; it reports false when the Query must be
// forwarded to the origin.
func (ss *session) handleQuery(m *pgproto3.Query) bool {
	if ss.ext.segmentOpen {
		// Answering it locally would need a Sync of ours inside the
		// client's open stretch.
		ss.toOriginUninformed(ss.srv.baseCtx, m.String)
		return false
	}
	m.String = asOwnStatement(m.String)
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
	version := keepStamp{ss.accel.Planner.Version(), start}
	d, s, ok := ss.decideLocal(m.String, true, true)
	if !ok {
		ss.keepOrigin(m.String, d, version)
		ss.warmPrivileges(d)
		if d.OriginSQL != "" {
			// A point read: the origin reads the table through the
			// subset the acceleration holds.
			m.String = d.OriginSQL
		} else if d.Reason == planner.ReasonPointRead {
			// A point read the origin answers: its RowDescription is kept
			// by text, so that the acceleration can answer it while the
			// origin is down (link.go).
			if key := ss.describeKey(m.String, d); ss.srv.describes.get(key) == nil {
				ss.origin.queryCapture = describeCapturer(&ss.srv.describes, key)
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
	if rd == nil && ss.originDown() && ss.origin.state == linkStandIn {
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
	if ss.acc.info.StatementTimeout > 0 {
		deadline = start.Add(ss.acc.info.StatementTimeout)
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
			ss.client.outBuf = ss.client.outBuf[:0]
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
			ss.client.outBuf = ss.client.outBuf[:0]
		}
		ss.failQuery(e)
		return true
	}
	if err != nil {
		var late *errAfterOutput
		if !errors.As(err, &late) {
			ss.client.outBuf = ss.client.outBuf[:0]
			ss.fallback(d, err)
			return false
		}
		ss.failQuery(ss.localFailedLate(err))
		return true
	}
	if rkey != "" && !r.flushed {
		rc.Keep(rkey, d.Datasets, gens, ss.client.outBuf, n)
	}
	// Count before the client can see the answer (and ask the metrics).
	if !r.internal {
		ss.srv.metrics.count(ss.stripe, routeAccelerated, r.datasets, "")
		ss.timeLocal(routeAccelerated, localStatRoute(r), start, n, r.datasets)
		ss.acc.lastRoute = routeNote{route: localRoute(r)}
	}
	if err := ss.finish(selectTag(n), &pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()}); err != nil {
		ss.close()
	}
	ss.submitVerify(r.verify)
	return true
}

// fallback records that the acceleration could not run d (DuckDB could not
// bind or run it, or its result cannot be encoded exactly): it goes to the
// origin now and straight there next time.
func (ss *session) fallback(d planner.Decision, err error) {
	ss.log.Debug().Err(err).Strs("datasets", d.Datasets).Msg("acceleration cannot answer; falling back to the origin")
	ss.accel.Planner.RememberFallback(d.Fingerprint, d.Datasets)
	ss.srv.metrics.count(ss.stripe, routeFallback, d.Datasets, "engine")
	ss.local.timeRoute = routeFallback
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
	ss.client.outBuf = ss.client.outBuf[:0]
	return pgdef.Error(pgdef.SeverityError, pgdef.InternalError, "accelerated query failed: "+err.Error(), "")
}

// countOrigin counts and notes d, a statement that goes to the origin.
func (ss *session) countOrigin(d planner.Decision) {
	ss.logOrigin(&d)
	ss.srv.metrics.countWith(ss.stripe, &ss.acc.lastCount, routeOrigin, d.Datasets, d.Reason)
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

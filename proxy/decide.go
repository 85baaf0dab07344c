package proxy

import (
	"context"
	"strings"

	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
)

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
	d, ok := ss.ext.planMemo.take(sql, ss.planKey())
	if !ok {
		d = plan()
	}
	if d.Reason == planner.ReasonTxWrote && !ss.ext.segmentWrote && !ss.origin.pending.Idle() && ss.drain() {
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
	return planKey{infoGen: ss.acc.infoGen, txWrote: ss.txWrote.Load() || ss.ext.segmentWrote, originDown: ss.origin.state == linkStandIn}
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

// pointReadReplan reports whether d, a plan of a point read, must be made
// again because the origin is not where the plan assumed: a read
// runtime.point_reads: origin sends to the origin while it cannot answer,
// or one accelerated while the stand-in held the link (planned with the
// origin down) once the origin is back (originDown tries it when its
// retry is due).
func (ss *session) pointReadReplan(d planner.Decision) bool {
	switch {
	case d.Reason == planner.ReasonPointRead:
		return ss.originDown()
	case d.OriginDownPointRead:
		return ss.origin.pending.Idle() && !ss.originDown()
	}
	return false
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
	if k := ownKind(sql); k != planner.ShowNone {
		if !ss.ensureInfo() {
			return planner.Decision{Route: planner.RouteOrigin, Kind: planner.KindShow}, nil, false
		}
		d, ok = ss.settleLocal(planner.Decision{Route: planner.RouteAccelerate, Kind: planner.KindShow}, settle)
		if ok {
			d = ss.ownDecision(ctx, sql, k)
		}
		if !ok {
			return d, nil, false
		}
		if s = ss.settings(); s == nil {
			return d, nil, false
		}
		return d, s, true
	}
	if (ss.txWrote.Load() || ss.ext.segmentWrote) && ss.origin.pending.Idle() {
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
	if ss.pointReadReplan(d) {
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

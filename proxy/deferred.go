package proxy

import (
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// Deferred Binds. A client that prepared and described a statement once
// (pgx's statement cache, pgjdbc's server-prepared statements) then runs
// it as Bind, Execute, Sync. When the statement is accelerated, none of
// that needs the origin: the proxy answers BindComplete itself, keeps the
// portal to itself (portalInfo.local), answers its Describe, Execute and
// Close, and, when nothing of the stretch went to the origin, its Sync.
// The origin is spared the Bind (for an unnamed statement: planning the
// query each time) and the client a round trip to it; such sessions keep
// getting accelerated answers while the origin is slow.
//
// The Bind is deferred only when the proxy can tell it would succeed at
// the origin: the statement's parameter and row descriptions are known
// (from the client's Describe of it), the parameter count and format codes
// are right, and every value decodes (encode.DecodeParam accepts a subset
// of what Postgres accepts), in a session not failed nor writing, with
// nothing but statement setup pending at the origin. When the Execute goes
// to the origin after all (a fallback, the dataset no longer ready, ...),
// the Bind is sent first (materialize); the client has its BindComplete
// already, so only an error of the late Bind reaches it.

// localDescriptions returns st's parameter and row descriptions when st,
// as the session stands, would be accelerated and may be set up without
// the origin: descriptions known (from the client's Describe, or kept by
// text from an earlier statement), a session neither failed nor writing,
// and nothing but statement setup pending at the origin.
func (ss *session) localDescriptions(st *stmtInfo) (*pgproto3.ParameterDescription, *pgproto3.RowDescription, bool) {
	if st == nil || st.originOnly() {
		return nil, nil, false
	}
	ss.mustNotBlock("plan")
	if !ss.acc.info.Valid || ss.acc.infoDirty || ss.txWrote.Load() || ss.ext.segmentWrote {
		return nil, nil, false
	}
	if ok, _ := ss.origin.pending.OnlyStatementSetup(); !ok || ss.state.TxStatus() == 'E' {
		return nil, nil, false
	}
	params, rows := ss.stmtDesc(st)
	if st.local && params != nil && rows != nil {
		// Its Parse was kept from the origin after the same checks and
		// a plan that routed it here; the Execute plans again anyway
		// (and sends the kept Parse and Bind when it goes to the origin
		// after all).
		return params, rows, true
	}
	d := ss.accel.Planner.PlanFull(ss.srv.baseCtx, st.sql, ss.planSession())
	if ss.origin.pending.Idle() && ss.pointReadReplan(d) {
		d = ss.accel.Planner.PlanFull(ss.srv.baseCtx, st.sql, ss.planSession())
	}
	if d.Route != planner.RouteAccelerate {
		return nil, nil, false
	}
	// The Execute that follows plans with this one (planFresh).
	ss.ext.planMemo = planMemo{set: true, sql: st.sql, key: ss.planKey(), d: d}
	if params == nil && len(st.paramOIDs) == 0 && planner.NoParams(st.sql) {
		// No $n anywhere in the text: no parameters.
		params = &pgproto3.ParameterDescription{}
	}
	if params == nil && declaredParams(st.paramOIDs, d.ParamCount) {
		// Every parameter's type was given at Parse (pgjdbc, npgsql):
		// Postgres describes them as given. A type the encoder does not
		// know fails the Bind's check (deferBind).
		params = &pgproto3.ParameterDescription{ParameterOIDs: st.paramOIDs}
	}
	if params == nil || rows == nil {
		// Described for an earlier statement of the same text (the
		// unnamed one, prepared again each time; see handleExecute).
		key := ss.describeKey(st.sql, d)
		if params == nil {
			params = ss.srv.describes.params(stmtKey('P', key, st.paramOIDs))
		}
		if rows == nil {
			rows = ss.srv.describes.get(stmtKey('R', key, st.paramOIDs))
			st.published = rows != nil
		}
		if rows == nil && ss.origin.state == linkNone {
			// Another session without a connection may be asking the
			// origin for it now (describeFlight): this one waits rather
			// than open a connection of its own; the first one asks.
			rkey := stmtKey('R', key, st.paramOIDs)
			if wait, first := ss.srv.describing.join(rkey); !first {
				await(wait, ss.closedCh())
				if params == nil {
					params = ss.srv.describes.params(stmtKey('P', key, st.paramOIDs))
				}
				rows = ss.srv.describes.get(rkey)
				st.published = rows != nil
			}
		}
	}
	if (params == nil || rows == nil) && ss.origin.pending.Idle() && ss.originDown() {
		// The origin cannot describe it: the descriptions of a text of
		// the same description shape serve (describeCache.shaped), or
		// what the planner works out (derived): the parameters' types
		// when the Parse gave none.
		key := ss.describeKey(st.sql, d)
		if params == nil {
			params, _ = ss.srv.describes.shaped(stmtKey('P', key, st.paramOIDs)).(*pgproto3.ParameterDescription)
		}
		if rows == nil {
			rows, _ = ss.srv.describes.shaped(stmtKey('R', key, st.paramOIDs)).(*pgproto3.RowDescription)
		}
		if params == nil && len(st.paramOIDs) == 0 || rows == nil {
			if dp, dr := ss.derived(st.sql); dr != nil {
				if params == nil && len(st.paramOIDs) == 0 {
					params = dp
				}
				if rows == nil {
					rows = dr
				}
				st.derived = true
				ss.srv.metrics.derivedDescription("used")
			}
		}
	}
	if params == nil || rows == nil {
		return nil, nil, false
	}
	ss.setStmtDesc(st, params, rows)
	return params, rows, true
}

// deferParse reports whether st, just parsed (onParse), is kept from the
// origin, in which case ParseComplete has been answered. Only the unnamed
// statement is: a named one may exist already, which is an error.
//
// A named one is kept too when the session has no origin connection, or
// only the stand-in of an origin that is down (link.go): nothing of it is
// at the origin then, so the session's own statements are all there is
// (onParse has sent a reused name there).
func (ss *session) deferParse(st *stmtInfo) bool {
	if ss.ext.stmts[st.name] != st || st.name != "" && ss.settleLink() == linkLive {
		return false
	}
	if _, _, ok := ss.localDescriptions(st); !ok {
		return false
	}
	st.local = true
	ss.answerLocal(&pgproto3.ParseComplete{})
	return true
}

// deferBind reports whether the Bind just recorded for m's portal (onBind)
// is kept from the origin, in which case BindComplete has been answered.
func (ss *session) deferBind(m *pgproto3.Bind) bool {
	if m.DestinationPortal != "" {
		return false // a named portal that exists already is an error
	}
	p := ss.ext.portals[""]
	if p == nil {
		return false
	}
	if p.stmt != nil && p.stmt.cmd != nil {
		return ss.deferCommandBind(p, m)
	}
	params, rows, ok := ss.localDescriptions(p.stmt)
	if !ok {
		return false
	}
	oids := params.ParameterOIDs
	if len(m.Parameters) != len(oids) || !formatsFit(m.ParameterFormatCodes, len(oids)) ||
		!formatsFit(m.ResultFormatCodes, len(rows.Fields)) {
		return false
	}
	s := ss.settings()
	if s == nil {
		return false
	}
	for i, v := range m.Parameters {
		if _, err := encode.DecodeParam(oids[i], formatAt(m.ParameterFormatCodes, i), v, s); err != nil {
			return false
		}
	}
	p.local = true
	ss.answerLocal(&pgproto3.BindComplete{})
	return true
}

// formatAt is the format code of value i under a Bind's codes: none means
// text for all, one applies to all.
func formatAt(codes []int16, i int) int16 {
	switch len(codes) {
	case 0:
		return 0
	case 1:
		return codes[0]
	}
	return codes[i]
}

// formatsFit reports whether Bind format codes suit n values: none (all
// text), one for all, or one each, every code text or binary.
func formatsFit(codes []int16, n int) bool {
	if len(codes) > 1 && len(codes) != n {
		return false
	}
	for _, c := range codes {
		if c != 0 && c != 1 {
			return false
		}
	}
	return true
}

// materialize sends the deferred Bind of portal name to the origin, ahead
// of a message that needs the portal there.
func (ss *session) materialize(name string) {
	p := ss.ext.portals[name]
	if p == nil || !p.local || !ss.needOrigin() {
		return
	}
	ss.change(func() { p.local = false }, func(bool) { p.local = true })
	ss.materializeStmt(p.stmt)
	ss.ext.stretchOrigin = true
	if !ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemBind, Swallow: true}) {
		return // the origin skips it, and what follows, to the Sync
	}
	ss.local.originTimer = true
	ss.origin.fe.Send(&pgproto3.Bind{
		DestinationPortal:    name,
		PreparedStatement:    p.stmt.name,
		ParameterFormatCodes: p.paramFormats,
		Parameters:           p.params,
		ResultFormatCodes:    p.resultFormats,
	})
}

// materializeStmt sends the deferred Parse of st to the origin, ahead of a
// message that needs the statement there.
func (ss *session) materializeStmt(st *stmtInfo) {
	if st == nil || !st.local || !ss.needOrigin() {
		return
	}
	ss.change(func() { st.local = false }, func(bool) { st.local = true })
	ss.ext.stretchOrigin = true
	if !ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemParse, Swallow: true}) {
		return
	}
	ss.local.originTimer = true
	st.atOrigin = true
	ss.origin.fe.Send(&pgproto3.Parse{Name: st.name, Query: st.sql, ParameterOIDs: st.paramOIDs})
}

// materializeUses sends the deferred Binds made from statement name before
// the statement is closed at the origin (the portal outlives it there).
func (ss *session) materializeUses(name string) {
	if p := ss.ext.portals[""]; p != nil && p.local && p.stmt != nil && p.stmt.name == name {
		ss.materialize("")
	}
}

// answerLocal answers a client message in the proxy's stead, in order with
// the origin's pending responses; nothing is sent if the origin is skipping
// to the next Sync, as Postgres would skip the message.
func (ss *session) answerLocal(msgs ...pgproto3.BackendMessage) {
	buf := ss.client.answerBuf[:0]
	for _, m := range msgs {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			return
		}
	}
	ss.client.answerBuf = buf[:0]
	_ = ss.writeLocal(buf, true, false, 0) // a failed write ends the session at the next read
}

// localSync answers a Sync that ends a stretch the origin saw nothing of,
// when nothing is pending there either (the transaction status is then
// the last one the origin reported, which the stretch did not change).
func (ss *session) localSync() bool {
	if ss.ext.stretchOrigin || !ss.origin.pending.Idle() {
		return false
	}
	ss.onSync()
	ss.answerLocal(&pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()})
	if ss.life.shuttingDown.Load() {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		ss.close()
	}
	return true
}

// closeStaleUnnamed closes the origin's unnamed statement or portal before
// msg, bound for the origin, uses one the client no longer has: Postgres
// dropped it at a simple Query the proxy answered, or at a Close of a
// portal the proxy kept. The origin would otherwise run what it still
// holds instead of reporting that nothing is there. Messages that replace
// or drop the origin's own clear the doubt.
func (ss *session) closeStaleUnnamed(msg pgproto3.FrontendMessage) {
	if !ss.ext.staleStmt && !ss.ext.stalePortal {
		return // the usual case: nothing to doubt, nothing to check
	}
	// Whether msg uses (closing: false) or replaces (true) the origin's
	// unnamed statement and portal.
	var usesStmt, usesPortal, replacesStmt, replacesPortal bool
	switch m := msg.(type) {
	case *pgproto3.Query:
		replacesStmt, replacesPortal = true, true // the origin drops its own
	case *pgproto3.Parse:
		replacesStmt = m.Name == ""
	case *pgproto3.Bind:
		usesStmt = m.PreparedStatement == ""
		replacesPortal = m.DestinationPortal == ""
	case *pgproto3.Describe:
		usesStmt = m.Name == "" && m.ObjectType == 'S'
		usesPortal = m.Name == "" && m.ObjectType == 'P'
	case *pgproto3.Execute:
		usesPortal = m.Portal == ""
	case *pgproto3.Close:
		replacesStmt = m.Name == "" && m.ObjectType == 'S'
		replacesPortal = m.Name == "" && m.ObjectType == 'P'
	}
	closeStmt := usesStmt && ss.ext.staleStmt && ss.ext.stmts[""] == nil
	closePortal := usesPortal && ss.ext.stalePortal && ss.ext.portals[""] == nil
	stmt := ss.ext.staleStmt && !closeStmt && !replacesStmt
	portal := ss.ext.stalePortal && !closePortal && !replacesPortal
	if stmt == ss.ext.staleStmt && portal == ss.ext.stalePortal || ss.origin.pending.Skipping() {
		return // nothing changes, or the origin skips msg
	}
	if closeStmt {
		ss.closeAtOrigin('S')
	}
	if closePortal {
		ss.closeAtOrigin('P')
	}
	ss.setStale(stmt, portal)
}

// setStale records whether the origin may hold an unnamed statement or
// portal the client no longer has, journaled: the messages that cleared
// the doubt may yet be skipped.
func (ss *session) setStale(stmt, portal bool) {
	if stmt == ss.ext.staleStmt && portal == ss.ext.stalePortal {
		return
	}
	var prevStmt, prevPortal bool
	ss.change(func() {
		prevStmt, prevPortal = ss.ext.staleStmt, ss.ext.stalePortal
		ss.ext.staleStmt, ss.ext.stalePortal = stmt, portal
	}, func(bool) {
		ss.ext.staleStmt, ss.ext.stalePortal = prevStmt, prevPortal
	})
}

// closeAtOrigin closes the origin's unnamed statement or portal; the client
// does not hear of it.
func (ss *session) closeAtOrigin(objectType byte) {
	if !ss.needOrigin() {
		return
	}
	ss.ext.stretchOrigin = true
	if ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemClose, Swallow: true}) {
		ss.origin.fe.Send(&pgproto3.Close{ObjectType: objectType})
	}
}

// declaredParams reports whether a Parse's parameter types, oids, are the
// statement's ParameterDescription, for a text whose highest $n is used:
// all given (none 0, nor unknown, which Postgres infers) and at least as
// many as the text uses.
func declaredParams(oids []uint32, used int) bool {
	if len(oids) == 0 || len(oids) < used {
		return false
	}
	for _, o := range oids {
		if o == 0 || o == 705 { // 705: unknown
			return false
		}
	}
	return true
}

package proxy

import (
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
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// handleExecute answers an Execute locally when its statement is routed to
// the acceleration; it reports false when the Execute must be forwarded.
func (ss *session) handleExecute(m *pgproto3.Execute) bool {
	ss.ext.answerCheck = false
	defer func() { ss.ext.answerCheck = false }()
	p := ss.ext.portals[m.Portal]
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
	version := keepStamp{ss.accel.Planner.Version(), start}
	d, s, ok := ss.decideLocal(p.stmt.sql, false, false)
	if !ok && d.OriginSQL == "" {
		if d.Reason == planner.ReasonPointRead {
			// Kept by text, as for an accelerated one, so that a session
			// can prepare it while the origin is down.
			ss.publish(p.stmt, d)
			// And by shape: the next Parse of a text of the shape makes
			// an origin-only statement (newStmt); a named statement at the
			// origin becomes one for its next Binds (keepStmtOrigin).
			ss.keepOrigin(p.stmt.sql, d, version)
			ss.keepStmtOrigin(p.stmt, d, version)
			ss.warmPrivileges(d)
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
			if params == nil && ss.ext.stmts[p.stmt.name] != p.stmt {
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
	if ss.local.originTimer && ss.acc.info.StatementTimeout > 0 {
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
		ss.ext.answerCheck = false
	}
	// The origin gets the Parse and Bind before it would otherwise (at
	// the client's Sync), to work on them while DuckDB runs.
	_ = ss.origin.fe.Flush()
	r, err := ss.startLocal(d, ss.localDeadline(), described(rows), p.resultFormats, args, s, pre)
	defer ss.endRun()
	if err != nil {
		if e := ss.localInterrupted(); e != nil {
			ss.client.outBuf = ss.client.outBuf[:0]
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
		sql, ok := planner.PlaceParams(d.SQL, placeholders)
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
	ss.local.timeRoute = routeFallback
	ss.noteRoute(&d, "fallback", "zero_results", "")
}

// portalMsgs are the messages of a private request that runs sql under
// name (statement and portal of the proxy's own) with the given
// parameters and formats, ending with no Sync or Flush. A failed earlier
// request may have left the name behind (the origin skipped its Closes):
// closing what does not exist is no error, so they are closed first.
func portalMsgs(name, sql string, oids []uint32, params [][]byte, paramFormats, resultFormats []int16) []privateMsg {
	return []privateMsg{
		{msg: &pgproto3.Close{ObjectType: 'P', Name: name}, kind: originlink.ItemClose, hasKind: true},
		{msg: &pgproto3.Close{ObjectType: 'S', Name: name}, kind: originlink.ItemClose, hasKind: true},
		{msg: &pgproto3.Parse{Name: name, Query: sql, ParameterOIDs: oids}, kind: originlink.ItemParse, hasKind: true},
		{msg: &pgproto3.Bind{DestinationPortal: name, PreparedStatement: name,
			ParameterFormatCodes: paramFormats, Parameters: params, ResultFormatCodes: resultFormats}, kind: originlink.ItemBind, hasKind: true},
		{msg: &pgproto3.Execute{Portal: name}, kind: originlink.ItemExecute, hasKind: true},
		{msg: &pgproto3.Close{ObjectType: 'P', Name: name}, kind: originlink.ItemClose, hasKind: true},
		{msg: &pgproto3.Close{ObjectType: 'S', Name: name}, kind: originlink.ItemClose, hasKind: true},
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
	ss.client.outBuf = ss.client.outBuf[:0]
	var rows int64
	for _, msg := range msgs {
		if _, ok := msg.(*pgproto3.DataRow); ok {
			rows++
		}
		switch msg.(type) {
		case *pgproto3.DataRow, *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse, *pgproto3.ErrorResponse,
			*pgproto3.NoticeResponse:
			if ss.client.outBuf, err = msg.Encode(ss.client.outBuf); err != nil {
				ss.close()
				return true
			}
			if _, ok := msg.(*pgproto3.ErrorResponse); ok {
				ss.ext.localSkip = true
			}
		}
	}
	ss.timeLocal(route, statRouteOf(route), start, rows, nil)
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
	if err == nil && !done && firstCall && !ss.origin.pending.Idle() && !ss.drain() {
		// A suspended portal lives on: only once the origin has accepted
		// everything before it (its Bind above all).
		err = errOriginSkipping
	}
	if errors.Is(err, errOriginSkipping) {
		ss.client.outBuf = ss.client.outBuf[:0]
		r.close()
		p.active = nil
		ss.countOrigin(planner.Decision{Datasets: r.datasets, Reason: "transaction_failed", Detail: "an earlier message of the stretch failed at the origin"})
		return false
	}
	if e := ss.localInterrupted(); err != nil && e != nil {
		// Postgres sends the rows it had sent, then the error.
		var late *errAfterOutput
		if !errors.As(err, &late) {
			ss.client.outBuf = ss.client.outBuf[:0]
		}
		r.close()
		p.active = nil
		ss.failExecute(e)
		return true
	}
	if err != nil {
		var late *errAfterOutput
		if !errors.As(err, &late) && firstCall {
			ss.client.outBuf = ss.client.outBuf[:0]
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
			rc.Keep(r.cacheKey, r.datasets, r.cacheGens, ss.client.outBuf, n)
		}
		if !r.internal {
			ss.srv.metrics.count(ss.stripe, routeAccelerated, r.datasets, "")
			ss.timeLocal(routeAccelerated, localStatRoute(r), r.started, n, r.datasets)
			ss.acc.lastRoute = routeNote{route: localRoute(r)}
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

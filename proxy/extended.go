package proxy

import (
	"slices"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
)

// onParse records a statement the client prepares; it always goes to the
// origin too, so the statement stays executable there.
func (ss *session) onParse(st *stmtInfo) {
	ss.ext.segmentOpen = true
	if st.name != "" && ss.ext.stmts[st.name] != nil && !st.originOnly() {
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
	m.Query = asOwnStatement(m.Query)
	var d planner.Decision
	ok, stateCall, kept := false, "", false
	var keptAt keepStamp
	if e := ss.quickEntry(m.Query); e != nil {
		d, ok, stateCall, kept, keptAt = e.d, e.ok, e.stateCall, e.kept, e.keptAt
	}
	if prev := ss.ext.stmts[m.Name]; ok && m.Name == "" && prev.originOnly() && prev.sql == m.Query && prev.origin.Reason == d.Reason &&
		prev.kept == kept {
		// The same text again (pgbench, many drivers' unnamed
		// statements): an origin-only statement keeps nothing that could
		// differ, so the one there serves, and nothing is allocated.
		prev.keptAt = keptAt
		return prev
	}
	st := &stmtInfo{name: m.Name, sql: m.Query, epoch: ss.acc.quickMemo.epoch}
	if ok {
		origin := d // d itself stays on the stack for the reuse above
		st.origin, st.stateCall = &origin, stateCall
		st.pureOrigin = pureOrigin(d, stateCall)
		st.kept, st.keptAt = kept, keptAt
	}
	if !ok || kept {
		// A kept decision may not hold at a Bind (keeps): the
		// statement is then planned as any other.
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
		return ss.ext.stmts[m.PreparedStatement].originOnly()
	case *pgproto3.Describe:
		if m.ObjectType == 'S' {
			return ss.ext.stmts[m.Name].originOnly()
		}
		return ss.portalOriginOnly(m.Name)
	case *pgproto3.Execute:
		return ss.portalOriginOnly(m.Portal)
	}
	return false
}

func (ss *session) portalOriginOnly(name string) bool {
	p := ss.ext.portals[name]
	return p != nil && p.stmt.originOnly()
}

// onBind records a portal: its statement, parameters and result formats.
func (ss *session) onBind(m *pgproto3.Bind) {
	ss.ext.segmentOpen = true
	if old := ss.ext.portals[m.DestinationPortal]; old != nil {
		old.release()
	}
	if st := ss.ext.stmts[m.PreparedStatement]; st.originOnly() {
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
		stmt:          ss.ext.stmts[m.PreparedStatement],
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

// onClose forgets a closed statement or portal.
func (ss *session) onClose(m *pgproto3.Close) {
	ss.ext.segmentOpen = true
	if m.ObjectType == 'S' {
		if _, ok := ss.ext.stmts[m.Name]; ok {
			ss.setStmt(m.Name, nil)
		}
		return
	}
	ss.forgetPortal(m.Name)
}

// forgetPortal records that portal name is gone, its local result closed.
func (ss *session) forgetPortal(name string) {
	if p := ss.ext.portals[name]; p != nil {
		p.release()
		ss.setPortal(name, nil)
	}
}

// onSync ends an extended-protocol stretch. Outside a transaction block it
// ends the implicit transaction, and every portal with it (in a block,
// portals, the unnamed one too, live on until the block ends): the next
// stretch drops them, once the transaction status is known (beginStretch).
func (ss *session) onSync() {
	ss.ext.segmentOpen = false
	ss.ext.planMemo.set = false
}

// epoch is the registry's Epoch: it changes when a reload changes the
// datasets.
func (ss *session) epoch() uint64 {
	if ss.accel != nil && ss.accel.Registry != nil {
		return ss.accel.Registry.Epoch()
	}
	return 0
}

// recheckStmt decides again, at a Bind, an origin-only statement whose
// decision may no longer hold: a point read's kept from a full plan
// (keepOrigin) that keeps no longer vouches for, or a fast-path decision
// made before a reload changed the datasets (its epoch). A fast-path
// decision still made stays, renewed; otherwise, from this Bind on, a copy
// of the statement is planned at each Execute (with the origin down, the
// acceleration answers it). Portals bound before keep the origin-only
// statement: their Binds went to the origin without their parameters
// kept.
func (ss *session) recheckStmt(st *stmtInfo) {
	switch {
	case !st.originOnly():
		return
	case st.kept:
		if ss.keeps(&st.keptAt, *st.origin) {
			return
		}
	case st.epoch == ss.epoch():
		return
	default:
		if e := ss.quickEntry(st.sql); e != nil && e.ok && !e.kept {
			origin := e.d
			st.origin, st.stateCall = &origin, e.stateCall
			st.pureOrigin = pureOrigin(e.d, e.stateCall)
			st.counters = nil
			st.epoch = ss.acc.quickMemo.epoch
			return
		}
	}
	ss.setStmt(st.name, &stmtInfo{name: st.name, sql: st.sql, paramOIDs: st.paramOIDs, atOrigin: st.atOrigin, epoch: ss.epoch()})
}

package proxy

import "github.com/pgaccel/pgaccel/planner"

// The session's statements and portals mirror the client's view of the
// origin session, and the proxy records each Parse, Bind and Close as it
// passes. Postgres skips every message after an error up to the next
// Sync, and the origin's error arrives after the proxy has moved on: the
// changes those skipped messages made are undone when the error is seen
// (reconcile). Each change is journaled with the position (in the pending
// queue's order) of the message that made it: the message's own item when
// it went to the origin, its local answer otherwise; an error at position
// f undoes every change at f or later. A new stretch begins only once the
// origin has answered everything before it (beginStretch), so the journal
// holds one stretch, and an undo never reaches past a later change.

// journalEntry is one change: apply makes it (and notes what it replaces),
// undo restores what it replaced; seq is its position, unsealed until the
// message that made it is queued or answered. undo is told whether the
// message failed itself (own) or was skipped after an earlier failure.
// The statement and portal changes every Parse and Bind make are kept as
// values (set) rather than closures, which would allocate for each.
type journalEntry struct {
	seq    uint64
	sealed bool
	apply  func()
	undo   func(own bool)
	// set, when apply is nil, is the change.
	set journalSet
}

// journalSet is a change of the session's statements or portals: name
// set to stmt or portal (both nil: deleted), with what it replaced.
type journalSet struct {
	portals bool
	name    string
	stmt    *stmtInfo
	portal  *portalInfo
	had     bool
	prevSt  *stmtInfo
	prevPo  *portalInfo
}

func (e *journalEntry) redo(ss *session) {
	if e.apply != nil {
		e.apply()
		return
	}
	j := &e.set
	if j.portals {
		j.prevPo, j.had = ss.ext.portals[j.name]
		if j.portal == nil {
			delete(ss.ext.portals, j.name)
		} else {
			ss.ext.portals[j.name] = j.portal
		}
		return
	}
	j.prevSt, j.had = ss.ext.stmts[j.name]
	if j.stmt == nil {
		delete(ss.ext.stmts, j.name)
	} else {
		ss.ext.stmts[j.name] = j.stmt
	}
}

// revert undoes the change. A failed Parse of the unnamed statement has
// dropped the one before it (Postgres drops it first); a Bind that failed
// at the origin may leave an empty portal there (Postgres creates it
// before it reads the parameters): the origin's to answer for. A Bind
// undone releases its portal's local result.
func (e *journalEntry) revert(ss *session, own bool) {
	if e.apply != nil {
		e.undo(own)
		return
	}
	j := &e.set
	if j.portals {
		if j.portal != nil {
			j.portal.release()
		}
		switch {
		case own && j.portal != nil:
			ss.ext.portals[j.name] = &portalInfo{stmt: originState("")}
		case j.had:
			ss.ext.portals[j.name] = j.prevPo
		default:
			delete(ss.ext.portals, j.name)
		}
		return
	}
	switch {
	case own && j.stmt != nil && j.name == "":
		ss.ext.stmts[j.name] = originState(j.name)
	case j.had:
		ss.ext.stmts[j.name] = j.prevSt
	default:
		delete(ss.ext.stmts, j.name)
	}
}

// change makes a change of the message being handled, journaled.
func (ss *session) change(apply func(), undo func(own bool)) {
	apply()
	ss.ext.journal = append(ss.ext.journal, journalEntry{apply: apply, undo: undo})
}

// changeSet makes a change of the session's statements or portals,
// journaled; unlike change, it allocates nothing.
func (ss *session) changeSet(portals bool, name string, st *stmtInfo, p *portalInfo) {
	ss.ext.journal = append(ss.ext.journal, journalEntry{set: journalSet{portals: portals, name: name, stmt: st, portal: p}})
	ss.ext.journal[len(ss.ext.journal)-1].redo(ss)
}

// originState stands for a statement or portal whose state only the
// origin knows (a Parse or Bind that failed there): everything about it
// goes to the origin. Each is a value of its own, shared with nothing.
func originState(name string) *stmtInfo {
	return &stmtInfo{name: name, origin: &planner.Decision{Route: planner.RouteOrigin, Reason: "failed_at_origin"}}
}

// unsealed reports whether the message just handled made changes.
func (ss *session) unsealed() bool {
	return len(ss.ext.journal) > 0 && !ss.ext.journal[len(ss.ext.journal)-1].sealed
}

// seal gives the changes of the message just handled its position.
func (ss *session) seal(seq uint64) {
	for i := len(ss.ext.journal) - 1; i >= 0 && !ss.ext.journal[i].sealed; i-- {
		ss.ext.journal[i].seq, ss.ext.journal[i].sealed = seq, true
	}
}

// reconcile undoes the changes of messages the origin skipped: every
// change from the failed one on is undone, and those after the skipped
// range (after its Sync: a simple Query, say) are made again.
func (ss *session) reconcile() {
	if ss.origin.pending.Failures() == ss.ext.failuresSeen {
		return
	}
	ss.ext.failuresSeen = ss.origin.pending.Failures()
	for _, f := range ss.origin.pending.TakeFailed() {
		i := len(ss.ext.journal)
		for i > 0 && ss.ext.journal[i-1].sealed && ss.ext.journal[i-1].seq >= f.From {
			i--
		}
		tail := ss.ext.journal[i:]
		for j := len(tail) - 1; j >= 0; j-- {
			tail[j].revert(ss, tail[j].seq == f.From)
		}
		k := i
		for j := i; j < len(ss.ext.journal); j++ {
			if ss.ext.journal[j].seq >= f.To {
				ss.ext.journal[j].redo(ss)
				ss.ext.journal[k] = ss.ext.journal[j]
				k++
			}
		}
		ss.clearJournal(k)
	}
}

// beginStretch starts an extended-protocol stretch with everything before
// it answered, and so known: the changes of the last stretch are final,
// and if it ended outside a transaction block, so did its portals.
func (ss *session) beginStretch() {
	if !ss.origin.pending.Idle() {
		ss.drain()
	}
	ss.reconcile()
	ss.clearJournal(0)
	if s := ss.state.TxStatus(); s == 'I' || s == 0 {
		ss.closePortals()
	}
}

// clearJournal drops the entries from n on (clearing them: they hold
// statements and portals).
func (ss *session) clearJournal(n int) {
	clear(ss.ext.journal[n:])
	ss.ext.journal = ss.ext.journal[:n]
}

// setStmt records statement name (nil: gone), journaled.
func (ss *session) setStmt(name string, st *stmtInfo) {
	ss.changeSet(false, name, st, nil)
}

// setPortal records portal name (nil: gone), journaled.
func (ss *session) setPortal(name string, p *portalInfo) {
	ss.changeSet(true, name, nil, p)
}

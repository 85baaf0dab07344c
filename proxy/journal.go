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
type journalEntry struct {
	seq    uint64
	sealed bool
	apply  func()
	undo   func(own bool)
}

// change makes a change of the message being handled, journaled.
func (ss *session) change(apply func(), undo func(own bool)) {
	apply()
	ss.journal = append(ss.journal, journalEntry{apply: apply, undo: undo})
}

// originState stands for a statement or portal whose state only the
// origin knows (a Parse or Bind that failed there): everything about it
// goes to the origin. Each is a value of its own, shared with nothing.
func originState(name string) *stmtInfo {
	return &stmtInfo{name: name, origin: &planner.Decision{Route: planner.RouteOrigin, Reason: "failed_at_origin"}}
}

// unsealed reports whether the message just handled made changes.
func (ss *session) unsealed() bool {
	return len(ss.journal) > 0 && !ss.journal[len(ss.journal)-1].sealed
}

// seal gives the changes of the message just handled its position.
func (ss *session) seal(seq uint64) {
	for i := len(ss.journal) - 1; i >= 0 && !ss.journal[i].sealed; i-- {
		ss.journal[i].seq, ss.journal[i].sealed = seq, true
	}
}

// reconcile undoes the changes of messages the origin skipped: every
// change from the failed one on is undone, and those after the skipped
// range (after its Sync: a simple Query, say) are made again.
func (ss *session) reconcile() {
	if ss.pending.failCount.Load() == ss.failuresSeen {
		return
	}
	ss.failuresSeen = ss.pending.failCount.Load()
	for _, f := range ss.pending.takeFailed() {
		i := len(ss.journal)
		for i > 0 && ss.journal[i-1].sealed && ss.journal[i-1].seq >= f.from {
			i--
		}
		tail := ss.journal[i:]
		for j := len(tail) - 1; j >= 0; j-- {
			tail[j].undo(tail[j].seq == f.from)
		}
		kept := ss.journal[:i]
		for _, e := range tail {
			if e.seq >= f.to {
				e.apply()
				kept = append(kept, e)
			}
		}
		ss.journal = kept
	}
}

// beginStretch starts an extended-protocol stretch with everything before
// it answered, and so known: the changes of the last stretch are final,
// and if it ended outside a transaction block, so did its portals.
func (ss *session) beginStretch() {
	if !ss.pending.idle() {
		ss.drain()
	}
	ss.reconcile()
	ss.journal = ss.journal[:0]
	if s := ss.state.TxStatus(); s == 'I' || s == 0 {
		ss.closePortals()
	}
}

// setJournaled sets m[name] to v (nil: deletes it), journaled. Undone, it
// calls undone (if any), then restores what was there or, when the message
// itself failed at the origin and failed gives one, what the failure left
// (see setStmt and setPortal).
func setJournaled[T any](ss *session, m map[string]*T, name string, v *T, failed func() *T, undone func()) {
	var prev *T
	var had bool
	ss.change(func() {
		prev, had = m[name]
		if v == nil {
			delete(m, name)
		} else {
			m[name] = v
		}
	}, func(own bool) {
		if undone != nil {
			undone()
		}
		switch {
		case own && failed != nil:
			m[name] = failed()
		case had:
			m[name] = prev
		default:
			delete(m, name)
		}
	})
}

// setStmt records statement name (nil: gone), journaled. A failed Parse
// of the unnamed statement has dropped the one before it (Postgres drops
// it first).
func (ss *session) setStmt(name string, st *stmtInfo) {
	var failed func() *stmtInfo
	if st != nil && name == "" {
		failed = func() *stmtInfo { return originState(name) }
	}
	setJournaled(ss, ss.stmts, name, st, failed, nil)
}

// setPortal records portal name (nil: gone), journaled. A Bind that failed
// at the origin may leave an empty portal there (Postgres creates it
// before it reads the parameters): the origin's to answer for. A Bind
// undone releases its portal's local result.
func (ss *session) setPortal(name string, p *portalInfo) {
	if p == nil {
		setJournaled(ss, ss.portals, name, nil, nil, nil)
		return
	}
	failed := func() *portalInfo { return &portalInfo{stmt: originState("")} }
	setJournaled(ss, ss.portals, name, p, failed, p.release)
}

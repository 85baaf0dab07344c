package proxy

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

func journalSession() *session {
	return &session{
		ext:    extState{stmts: map[string]*stmtInfo{}, portals: map[string]*portalInfo{}},
		origin: originSide{pending: originlink.NewPending()},
	}
}

// A stretch's Parse and Bind, once the session is warmed up, journal their
// changes without allocating.
func TestJournal_StatementsAndPortalsWithoutAllocations(t *testing.T) {
	ss := journalSession()
	st := &stmtInfo{sql: "SELECT 1"}
	p := &portalInfo{stmt: st}
	stretch := func() {
		ss.setStmt("", st)
		ss.seal(ss.origin.pending.NextSeq())
		ss.setPortal("", p)
		ss.seal(ss.origin.pending.NextSeq())
		ss.clearJournal(0)
	}
	stretch()
	if allocs := testing.AllocsPerRun(100, stretch); allocs != 0 {
		t.Errorf("a Parse and a Bind journal with %.1f allocations, want 0", allocs)
	}
}

// When the origin fails a Parse, reconcile undoes it and what followed: a
// failed unnamed Parse leaves a statement only the origin knows of, a
// failed Bind's portal is the origin's, and a skipped named Parse never
// happened.
func TestJournal_ReconcileUndoesWhatTheOriginSkipped(t *testing.T) {
	ss := journalSession()
	before := &stmtInfo{name: "s1", sql: "SELECT 0"}
	ss.ext.stmts["s1"] = before

	// Parse s1 (replacing it), Bind "" of s1, Parse "" ; Sync.
	newS1 := &stmtInfo{name: "s1", sql: "SELECT 1"}
	ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemParse})
	ss.setStmt("s1", newS1)
	ss.seal(0)
	ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemBind})
	ss.setPortal("", &portalInfo{stmt: newS1})
	ss.seal(1)
	ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemParse})
	ss.setStmt("", &stmtInfo{sql: "SELECT 2"})
	ss.seal(2)
	ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemSync})

	// The Bind fails: the Parse before it stands, the Bind leaves a portal
	// only the origin knows, the unnamed Parse was skipped.
	ss.origin.pending.Settle(true, false)
	ss.origin.pending.Settle(false, true)
	ss.reconcile()
	if ss.ext.stmts["s1"] != newS1 {
		t.Errorf("s1 = %+v, want the Parse that succeeded", ss.ext.stmts["s1"])
	}
	if p := ss.ext.portals[""]; p == nil || !p.stmt.originOnly() {
		t.Errorf("unnamed portal = %+v, want one only the origin knows", p)
	}
	if st, ok := ss.ext.stmts[""]; ok {
		t.Errorf("unnamed statement = %+v, want none: its Parse was skipped", st)
	}
	if len(ss.ext.journal) != 1 {
		t.Errorf("journal holds %d entries, want the one change that stood", len(ss.ext.journal))
	}
}

// pgbench -M extended, and drivers' unnamed statements, parse the same text
// for every execution: an origin-only statement is kept once.
func TestNewStmt_SameOriginOnlyTextReused(t *testing.T) {
	ss := journalSession()
	ss.accel = &Accel{Planner: planner.New(catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{{Name: "orders", Schema: "public", Table: "orders"}}}), nil, planner.Options{})}
	parse := &pgproto3.Parse{Query: "UPDATE accounts SET balance = balance + $1 WHERE id = $2"}
	st := ss.newStmt(parse)
	if !st.originOnly() {
		t.Fatalf("statement %+v is not origin-only", st)
	}
	ss.setStmt("", st)
	if again := ss.newStmt(parse); again != st {
		t.Error("the same text parsed again made a new statement")
	}
	if other := ss.newStmt(&pgproto3.Parse{Query: "DELETE FROM accounts"}); other == st || other.sql != "DELETE FROM accounts" {
		t.Errorf("another text gave %+v", other)
	}
	if named := ss.newStmt(&pgproto3.Parse{Name: "s1", Query: parse.Query}); named == st || named.name != "s1" {
		t.Errorf("a named statement gave %+v", named)
	}
	// The fast path's answer for the text just looked at is kept (quick).
	if allocs := testing.AllocsPerRun(100, func() { ss.setStmt("", ss.newStmt(parse)); ss.clearJournal(0) }); allocs != 0 {
		t.Errorf("parsing the same text again allocates %.1f times, want none", allocs)
	}
}

// Binding an origin-only statement's portal again keeps the portal there.
func TestOnBind_OriginOnlyPortalReused(t *testing.T) {
	ss := journalSession()
	ss.accel = &Accel{Planner: planner.New(catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{{Name: "orders", Schema: "public", Table: "orders"}}}), nil, planner.Options{})}
	ss.setStmt("", ss.newStmt(&pgproto3.Parse{Query: "DELETE FROM accounts WHERE id = $1"}))
	bind := &pgproto3.Bind{Parameters: [][]byte{[]byte("7")}}
	ss.onBind(bind)
	p := ss.ext.portals[""]
	if p == nil || !p.stmt.originOnly() || p.params != nil {
		t.Fatalf("portal %+v, want an origin-only one that keeps no parameters", p)
	}
	ss.onBind(bind)
	if ss.ext.portals[""] != p {
		t.Error("binding the same statement again made a new portal")
	}
	ss.closePortals()
	ss.onBind(bind)
	if ss.ext.portals[""] != p {
		t.Error("binding the statement after its portal was closed made a new portal")
	}
	p.describeSent = true
	ss.onBind(bind)
	if ss.ext.portals[""] == p {
		t.Error("a portal holding more than its statement was reused")
	}
	ss.clearJournal(0)
	if allocs := testing.AllocsPerRun(100, func() { ss.onBind(bind); ss.clearJournal(0) }); allocs != 0 {
		t.Errorf("binding again allocates %.1f times, want 0", allocs)
	}
}

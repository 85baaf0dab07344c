package proxy

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestPendingQueue_SkipToSyncAfterError(t *testing.T) {
	q := newPendingQueue()
	for _, k := range []pendingKind{pkParse, pkBind, pkExecute, pkParse, pkSync, pkQuery} {
		q.push(pendingItem{kind: k})
	}
	q.pop() // ParseComplete
	q.failed()
	// Bind failed: Execute and Parse are skipped by the origin; Sync waits.
	if h, _ := q.head(); h.kind != pkSync {
		t.Fatalf("head after error = %v, want Sync", h.kind)
	}
	if q.skipping() {
		t.Fatal("skipping with a Sync already queued")
	}
	q.pop() // ReadyForQuery
	if h, _ := q.head(); h.kind != pkQuery {
		t.Fatalf("head = %v, want Query", h.kind)
	}
}

func TestPendingQueue_ErrorBeforeSyncArrives(t *testing.T) {
	q := newPendingQueue()
	q.push(pendingItem{kind: pkBind})
	q.failed()
	if !q.skipping() {
		t.Fatal("want skipping until the client's Sync")
	}
	if q.push(pendingItem{kind: pkExecute}) {
		t.Fatal("Execute after an error must not be queued: the origin skips it")
	}
	if !q.push(pendingItem{kind: pkSync}) || q.skipping() {
		t.Fatal("Sync must be queued and end the skipping")
	}
}

func TestCompletes(t *testing.T) {
	cases := []struct {
		msg                  pgproto3.BackendMessage
		head                 pendingKind
		done, failed, async_ bool
	}{
		{&pgproto3.ParseComplete{}, pkParse, true, false, false},
		{&pgproto3.ParameterDescription{}, pkDescribeStatement, false, false, false},
		{&pgproto3.RowDescription{}, pkDescribeStatement, true, false, false},
		{&pgproto3.RowDescription{}, pkQuery, false, false, false},
		{&pgproto3.CommandComplete{}, pkQuery, false, false, false},
		{&pgproto3.CommandComplete{}, pkExecute, true, false, false},
		{&pgproto3.PortalSuspended{}, pkExecute, true, false, false},
		{&pgproto3.ReadyForQuery{}, pkQuery, true, false, false},
		{&pgproto3.ErrorResponse{}, pkQuery, false, false, false},
		{&pgproto3.ErrorResponse{}, pkBind, false, true, false},
		{&pgproto3.NoticeResponse{}, pkBind, false, false, true},
		{&pgproto3.NotificationResponse{}, pkSync, false, false, true},
	}
	for _, c := range cases {
		done, failed, async := completes(c.msg, c.head, true)
		if done != c.done || failed != c.failed || async != c.async_ {
			t.Errorf("%T with head %v: got %v %v %v", c.msg, c.head, done, failed, async)
		}
	}
}

func TestPendingQueue_LocalAnswersInOrder(t *testing.T) {
	q := newPendingQueue()
	if got, _ := q.pushLocal([]byte("now"), false, false, 0); got != localWriteNow {
		t.Fatalf("nothing pending: %v, want localWriteNow", got)
	}
	q.push(pendingItem{kind: pkParse})
	q.push(pendingItem{kind: pkBind})
	if ok, _ := q.onlyStatementSetup(); !ok {
		t.Fatal("Parse and Bind pending: want statement setup only")
	}
	out := []byte("rows 1")
	if got, _ := q.pushLocal(out, false, true, 0); got != localQueued {
		t.Fatalf("behind a Bind: %v, want localQueued", got)
	}
	out[0] = 'X' // the caller reuses its buffer
	if outs := q.takeLocal(); outs != nil {
		t.Fatalf("handed over before the Bind's answer: %q", outs)
	}
	q.push(pendingItem{kind: pkSync})
	if ok, _ := q.onlyStatementSetup(); ok {
		t.Fatal("a Sync pending is more than statement setup")
	}
	q.pop() // ParseComplete
	q.pop() // BindComplete
	if outs := q.takeLocal(); len(outs) != 1 || string(outs[0]) != "rows 1" {
		t.Fatalf("after the Bind's answer: %q, want the rows, copied", outs)
	}
	if h, _ := q.head(); h.kind != pkSync {
		t.Fatalf("head = %v, want Sync", h.kind)
	}
}

func TestPendingQueue_FailureDropsLocalAnswers(t *testing.T) {
	q := newPendingQueue()
	q.push(pendingItem{kind: pkParse})
	q.push(pendingItem{kind: pkBind})
	_, failures := q.onlyStatementSetup()
	q.pushLocal([]byte("rows"), false, true, failures)
	q.failed() // the Parse: the origin skips the Bind and the Execute answered locally
	if outs := q.takeLocal(); outs != nil || !q.skipping() {
		t.Fatalf("after the failure: %q (skipping %v), want nothing and skipping", outs, q.skipping())
	}
	// An answer decided before a failure that emptied the queue is dropped
	// too, and one decided after it is not the proxy's to check.
	if got, _ := q.pushLocal([]byte("late"), false, true, failures); got != localDropped {
		t.Fatalf("answer decided before the failure: %v, want localDropped", got)
	}
	if ok, _ := q.onlyStatementSetup(); ok {
		t.Fatal("while the origin skips, nothing may be answered ahead of it")
	}
	if got, _ := q.pushLocal([]byte("BindComplete"), true, false, 0); got != localDropped {
		t.Fatalf("answer to a message Postgres skips: %v, want localDropped", got)
	}
	if got, _ := q.pushLocal([]byte("error"), false, false, 0); got != localWriteNow {
		t.Fatalf("the proxy's own error: %v, want localWriteNow", got)
	}
}

// A pipelined stretch pops answered items while the client queues more;
// the queue keeps its order and, once warmed up, allocates nothing.
func TestPendingQueue_ReusesItsArray(t *testing.T) {
	q := newPendingQueue()
	stretch := func() {
		kinds := []pendingKind{pkParse, pkBind, pkDescribePortal, pkExecute, pkSync}
		for _, k := range kinds[:3] {
			q.push(pendingItem{kind: k})
		}
		// The origin answers the first two while the rest arrive.
		for _, want := range kinds[:2] {
			if it, _ := q.head(); it.kind != want {
				t.Fatalf("head %v, want %v", it.kind, want)
			}
			q.settle(true, false)
		}
		for _, k := range kinds[3:] {
			q.push(pendingItem{kind: k})
		}
		for _, want := range kinds[2:] {
			if it, _ := q.head(); it.kind != want {
				t.Fatalf("head %v, want %v", it.kind, want)
			}
			q.settle(true, false)
		}
		if !q.idle() {
			t.Fatal("queue not empty after the stretch")
		}
	}
	for range 3 {
		stretch()
	}
	if allocs := testing.AllocsPerRun(100, stretch); allocs != 0 {
		t.Errorf("a stretch allocates %.1f times, want 0", allocs)
	}
}

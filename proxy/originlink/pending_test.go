package originlink

import (
	"testing"
)

func TestPendingQueue_SkipToSyncAfterError(t *testing.T) {
	q := NewPending()
	for _, k := range []ItemKind{ItemParse, ItemBind, ItemExecute, ItemParse, ItemSync, ItemQuery} {
		q.Push(Item{Kind: k})
	}
	q.Pop() // ParseComplete
	q.Failed()
	// Bind failed: Execute and Parse are skipped by the origin; Sync waits.
	if h, _ := q.Head(); h.Kind != ItemSync {
		t.Fatalf("head after error = %v, want Sync", h.Kind)
	}
	if q.Skipping() {
		t.Fatal("skipping with a Sync already queued")
	}
	q.Pop() // ReadyForQuery
	if h, _ := q.Head(); h.Kind != ItemQuery {
		t.Fatalf("head = %v, want Query", h.Kind)
	}
}

func TestPendingQueue_ErrorBeforeSyncArrives(t *testing.T) {
	q := NewPending()
	q.Push(Item{Kind: ItemBind})
	q.Failed()
	if !q.Skipping() {
		t.Fatal("want skipping until the client's Sync")
	}
	if q.Push(Item{Kind: ItemExecute}) {
		t.Fatal("Execute after an error must not be queued: the origin skips it")
	}
	if !q.Push(Item{Kind: ItemSync}) || q.Skipping() {
		t.Fatal("Sync must be queued and end the skipping")
	}
}

func TestPendingQueue_LocalAnswersInOrder(t *testing.T) {
	q := NewPending()
	if got, _ := q.PushLocal([]byte("now"), false, false, 0); got != LocalWriteNow {
		t.Fatalf("nothing pending: %v, want LocalWriteNow", got)
	}
	q.Push(Item{Kind: ItemParse})
	q.Push(Item{Kind: ItemBind})
	if ok, _ := q.OnlyStatementSetup(); !ok {
		t.Fatal("Parse and Bind pending: want statement setup only")
	}
	out := []byte("rows 1")
	if got, _ := q.PushLocal(out, false, true, 0); got != LocalQueued {
		t.Fatalf("behind a Bind: %v, want LocalQueued", got)
	}
	out[0] = 'X' // the caller reuses its buffer
	if outs := q.TakeLocal(); outs != nil {
		t.Fatalf("handed over before the Bind's answer: %q", outs)
	}
	q.Push(Item{Kind: ItemSync})
	if ok, _ := q.OnlyStatementSetup(); ok {
		t.Fatal("a Sync pending is more than statement setup")
	}
	q.Pop() // ParseComplete
	q.Pop() // BindComplete
	if outs := q.TakeLocal(); len(outs) != 1 || string(outs[0]) != "rows 1" {
		t.Fatalf("after the Bind's answer: %q, want the rows, copied", outs)
	}
	if h, _ := q.Head(); h.Kind != ItemSync {
		t.Fatalf("head = %v, want Sync", h.Kind)
	}
}

func TestPendingQueue_FailureDropsLocalAnswers(t *testing.T) {
	q := NewPending()
	q.Push(Item{Kind: ItemParse})
	q.Push(Item{Kind: ItemBind})
	_, failures := q.OnlyStatementSetup()
	q.PushLocal([]byte("rows"), false, true, failures)
	q.Failed() // the Parse: the origin skips the Bind and the Execute answered locally
	if outs := q.TakeLocal(); outs != nil || !q.Skipping() {
		t.Fatalf("after the failure: %q (skipping %v), want nothing and skipping", outs, q.Skipping())
	}
	// An answer decided before a failure that emptied the queue is dropped
	// too, and one decided after it is not the proxy's to check.
	if got, _ := q.PushLocal([]byte("late"), false, true, failures); got != LocalDropped {
		t.Fatalf("answer decided before the failure: %v, want LocalDropped", got)
	}
	if ok, _ := q.OnlyStatementSetup(); ok {
		t.Fatal("while the origin skips, nothing may be answered ahead of it")
	}
	if got, _ := q.PushLocal([]byte("BindComplete"), true, false, 0); got != LocalDropped {
		t.Fatalf("answer to a message Postgres skips: %v, want LocalDropped", got)
	}
	if got, _ := q.PushLocal([]byte("error"), false, false, 0); got != LocalWriteNow {
		t.Fatalf("the proxy's own error: %v, want LocalWriteNow", got)
	}
}

// A pipelined stretch pops answered items while the client queues more;
// the queue keeps its order and, once warmed up, allocates nothing.
func TestPendingQueue_ReusesItsArray(t *testing.T) {
	q := NewPending()
	stretch := func() {
		kinds := []ItemKind{ItemParse, ItemBind, ItemDescribePortal, ItemExecute, ItemSync}
		for _, k := range kinds[:3] {
			q.Push(Item{Kind: k})
		}
		// The origin answers the first two while the rest arrive.
		for _, want := range kinds[:2] {
			if it, _ := q.Head(); it.Kind != want {
				t.Fatalf("head %v, want %v", it.Kind, want)
			}
			q.Settle(true, false)
		}
		for _, k := range kinds[3:] {
			q.Push(Item{Kind: k})
		}
		for _, want := range kinds[2:] {
			if it, _ := q.Head(); it.Kind != want {
				t.Fatalf("head %v, want %v", it.Kind, want)
			}
			q.Settle(true, false)
		}
		if !q.Idle() {
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

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

package proxy

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
)

// A point read that runtime.point_reads: origin sends to the origin is
// kept by number shape once the full plan decided it (keepOrigin): the
// next texts of the shape take the fast path and the lane, as a read of
// no dataset does, until the datasets change or the link is not live.
func TestKeepOrigin_PointReadsByShape(t *testing.T) {
	reg := catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{{Name: "pgbench_accounts", Schema: "public", Table: "pgbench_accounts"}}})
	p := planner.New(reg, nil, planner.Options{})
	ss, _ := laneSession(t)
	ss.accel = &Accel{Planner: p}
	ss.acc.info.Valid = true
	text := func(n string) string { return "SELECT abalance FROM pgbench_accounts WHERE aid = " + n }
	pointRead := planner.Decision{Route: planner.RouteOrigin, Reason: planner.ReasonPointRead, Kind: planner.KindSelect, Datasets: []string{"pgbench_accounts"}}

	if _, ok := ss.quick(text("5")); ok {
		t.Fatal("a read of a dataset took the fast path before any plan")
	}
	// Not kept: another reason, or a text the origin gets rewritten.
	ss.keepOrigin(text("5"), planner.Decision{Route: planner.RouteOrigin, Reason: "not_ready", Kind: planner.KindSelect}, keepStamp{p.Version(), time.Now()})
	rewritten := pointRead
	rewritten.OriginSQL = "SELECT 1"
	ss.keepOrigin(text("5"), rewritten, keepStamp{p.Version(), time.Now()})
	if _, ok := ss.quick(text("6")); ok {
		t.Fatal("a decision that is not a plain point read was kept")
	}

	ss.keepOrigin(text("5"), pointRead, keepStamp{p.Version(), time.Now()})
	d, ok := ss.quick(text("123456"))
	if !ok || d.Reason != planner.ReasonPointRead || d.Route != planner.RouteOrigin {
		t.Fatalf("another text of the shape: %+v %v, want the kept point read", d, ok)
	}
	if _, ok := ss.quick(text("1.5")); ok {
		t.Fatal("a text of another number shape took the kept decision")
	}
	var ops [laneMaxFrames]laneOp
	if n, _ := ss.laneScan(encodeAll(t, &pgproto3.Query{String: text("99")}), &ops); n != 1 {
		t.Fatalf("the lane took %d messages of a kept point read, want 1", n)
	}

	// The link is not live (the origin is down: the acceleration answers
	// point reads then): the fast path declines again.
	ss.origin.state = linkStandIn
	if _, ok := ss.quick(text("7")); ok {
		t.Fatal("a kept decision was taken with the origin's stand-in as the link")
	}
	ss.origin.state = linkLive
	if _, ok := ss.quick(text("7")); ok {
		t.Fatal("a kept decision came back by itself")
	}

	// A SET the session sent may have changed what the plan read.
	ss.keepOrigin(text("5"), pointRead, keepStamp{p.Version(), time.Now()})
	ss.acc.infoDirty = true
	if _, ok := ss.quick(text("7")); ok {
		t.Fatal("a kept decision was taken with the session info to read again")
	}
	ss.acc.infoDirty = false

	// A plan older than keptTTL is not kept.
	ss.keepOrigin(text("5"), pointRead, keepStamp{p.Version(), time.Now().Add(-2 * keptTTL)})
	if _, ok := ss.quick(text("7")); ok {
		t.Fatal("a decision older than keptTTL was kept")
	}
	// A kept decision that grows older than keptTTL, all else holding, is
	// renewed in place (keeps), not planned again.
	ss.keepOrigin(text("5"), pointRead, keepStamp{p.Version(), time.Now()})
	_, e := ss.acc.quickMemo.find(text("5"), planner.ShapeHash(text("5")))
	if e == nil || !e.kept {
		t.Fatal("not kept")
	}
	e.keptAt.made = time.Now().Add(-2 * keptTTL)
	if _, ok := ss.quick(text("9")); !ok {
		t.Fatal("a kept decision that only aged was planned again")
	}
	if age := time.Since(e.keptAt.made); age > keptTTL/2 {
		t.Fatalf("the aged decision was not renewed: %v old", age)
	}

	// The datasets change: a kept decision no longer holds.
	ss.keepOrigin(text("5"), pointRead, keepStamp{p.Version(), time.Now()})
	if _, ok := ss.quick(text("8")); !ok {
		t.Fatal("not kept again")
	}
	reg.Update("pgbench_accounts", func(st *catalog.DatasetState) { st.Rows++ })
	if _, ok := ss.quick(text("8")); ok {
		t.Fatal("a kept decision outlived a change of the datasets")
	}
}

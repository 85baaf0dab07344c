package planner

import (
	"context"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestPlan_MemoFollowsChanges: a remembered accelerated decision is not
// reused once a fallback is remembered, a dataset's state changes, or the
// privilege check refuses the role; another session key plans anew.
func TestPlan_MemoFollowsChanges(t *testing.T) {
	reg := testRegistry(t)
	priv := &fakePrivileges{}
	p := New(reg, newFakeResolver(), Options{Privileges: priv})
	ctx := context.Background()
	const q = "SELECT count(*) FROM orders"
	d := p.Plan(ctx, q, defaultSession())
	if d.Route != RouteAccelerate {
		t.Fatalf("first plan: %+v", d)
	}
	if d2 := p.Plan(ctx, q, defaultSession()); d2.Route != RouteAccelerate || d2.SQL != d.SQL {
		t.Fatalf("memoised plan: %+v", d2)
	}
	priv.deny = map[TableID]string{{Schema: "public", Name: "orders"}: "privilege"}
	if d2 := p.Plan(ctx, q, defaultSession()); d2.Route != RouteOrigin {
		t.Fatalf("refused role: %+v", d2)
	}
	priv.deny = nil
	reg.Update("orders", func(s *catalog.DatasetState) { s.Status = catalog.StatusError; s.Loaded = false })
	if d2 := p.Plan(ctx, q, defaultSession()); d2.Route != RouteOrigin {
		t.Fatalf("after the dataset stopped serving: %+v", d2)
	}
	reg.Update("orders", func(s *catalog.DatasetState) { s.Status = catalog.StatusReady; s.Loaded = true })
	if d2 := p.Plan(ctx, q, defaultSession()); d2.Route != RouteAccelerate {
		t.Fatalf("serving again: %+v", d2)
	}
	p.RememberFallback(d.Fingerprint, d.Datasets)
	if d2 := p.Plan(ctx, q, defaultSession()); d2.Route != RouteOrigin || d2.Reason != ReasonKnownFallback {
		t.Fatalf("after a fallback: %+v", d2)
	}
}

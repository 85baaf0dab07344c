package planner

import (
	"testing"
	"time"
)

// TestLookups_ExportImport: the origin's answers survive a restart with
// their expiry, so they serve no longer than they would have; answers past
// max_stale are not carried over.
func TestLookups_ExportImport(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	mk := func() (*OriginResolver, *Privileges) {
		o := NewOriginResolver(nil, nil, ResolverOptions{TTL: time.Minute, MaxStale: time.Hour})
		p := NewPrivileges(nil, PrivilegesOptions{TTL: time.Minute, MaxStale: time.Hour})
		o.cache.now, p.cache.now = clock, clock
		return o, p
	}
	o, p := mk()
	v0, k0 := LookupsVersion(o, p)
	o.cache.put(relationKey([]string{"app", "public"}, "orders"), relationAnswer{schema: "public", found: true})
	p.cache.put(privKey("alice", TableID{"public", "orders"}), privAnswer{exists: true, canSelect: true})
	now = now.Add(30 * time.Minute)
	p.cache.put(privKey("bob", TableID{"public", "orders"}), privAnswer{exists: true})
	if v, k := LookupsVersion(o, p); v == v0 || k != k0+3 {
		t.Fatalf("versions %d %d, from %d %d", v, k, v0, k0)
	}
	p.cache.put(privKey("bob", TableID{"public", "orders"}), privAnswer{exists: true}) // refreshed
	if v, k := LookupsVersion(o, p); v != v0+4 || k != k0+3 {
		t.Fatalf("after a refresh: versions %d %d, from %d %d", v, k, v0, k0)
	}
	now = now.Add(45 * time.Minute) // alice's and the relation's answers: past max_stale
	data, err := ExportLookups(o, p)
	if err != nil {
		t.Fatal(err)
	}
	o2, p2 := mk()
	if err := ImportLookups(data, o2, p2); err != nil {
		t.Fatal(err)
	}
	if _, ok := o2.cache.lookupStale(relationKey([]string{"app", "public"}, "orders")); ok {
		t.Error("a relation answer past max_stale was carried over")
	}
	if _, ok := p2.cache.lookupStale(privKey("alice", TableID{"public", "orders"})); ok {
		t.Error("alice's answer past max_stale was carried over")
	}
	a, ok := p2.cache.lookupStale(privKey("bob", TableID{"public", "orders"}))
	if !ok || !a.exists || a.canSelect {
		t.Errorf("bob's answer: %+v %v", a, ok)
	}
	if _, ok := p2.cache.lookup(privKey("bob", TableID{"public", "orders"})); ok {
		t.Error("an expired answer came back fresh")
	}
	now = now.Add(16 * time.Minute) // bob's: 61 minutes past its expiry
	if _, ok := p2.cache.lookupStale(privKey("bob", TableID{"public", "orders"})); ok {
		t.Error("bob's answer serves past max_stale after the restart")
	}
	if err := ImportLookups([]byte("{"), o2, p2); err == nil {
		t.Error("a damaged file was read")
	}
}

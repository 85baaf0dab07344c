package planner

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

const benchPointQuery = `SELECT id, status, amount FROM orders WHERE id = $1`

// BenchmarkPlan_Cached plans the same point query again and again: the
// analysis, the resolution (resolver's own cache) and the rewrite are all
// cached; what remains is the per-session check.
func BenchmarkPlan_Cached(b *testing.B) {
	p := New(testRegistry(b), newFakeResolver(), Options{})
	ctx := context.Background()
	s := defaultSession()
	if d := p.Plan(ctx, benchPointQuery, s); d.Route != RouteAccelerate {
		b.Fatalf("route %v %q", d.Route, d.Reason)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p.Plan(ctx, benchPointQuery, s)
	}
}

// BenchmarkPlan_CachedJoin is BenchmarkPlan_Cached for a two-table join.
func BenchmarkPlan_CachedJoin(b *testing.B) {
	p := New(testRegistry(b), newFakeResolver(), Options{})
	ctx := context.Background()
	s := defaultSession()
	q := `SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = $1 ORDER BY o.created_at DESC LIMIT 50`
	if d := p.Plan(ctx, q, s); d.Route != RouteAccelerate {
		b.Fatalf("route %v %q", d.Route, d.Reason)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p.Plan(ctx, q, s)
	}
}

// BenchmarkPlan_Uncached plans texts never seen before (a cache of one
// entry and distinct texts): parse, fingerprint, analysis, rewrite and
// deparse each time.
func BenchmarkPlan_Uncached(b *testing.B) {
	p := New(testRegistry(b), newFakeResolver(), Options{CacheSize: 1})
	ctx := context.Background()
	s := defaultSession()
	texts := make([]string, 1024)
	for i := range texts {
		texts[i] = benchPointQuery + " AND customer_id <> " + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		p.Plan(ctx, texts[i%len(texts)], s)
		i++
	}
}

// quickTexts are pgbench's statements (select-only and TPC-B, simple
// protocol), which the fast path decides.
var quickTexts = []string{
	"SELECT abalance FROM pgbench_accounts WHERE aid = 48213;",
	"BEGIN;",
	"UPDATE pgbench_accounts SET abalance = abalance + -4132 WHERE aid = 48213;",
	"SELECT abalance FROM pgbench_accounts WHERE aid = 48213;",
	"UPDATE pgbench_tellers SET tbalance = tbalance + -4132 WHERE tid = 37;",
	"UPDATE pgbench_branches SET bbalance = bbalance + -4132 WHERE bid = 4;",
	"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (37, 4, 48213, -4132, CURRENT_TIMESTAMP);",
	"END;",
}

// BenchmarkQuick decides pgbench's statements on the fast path, as a
// session with a dataset does for every statement of new text.
func BenchmarkQuick(b *testing.B) {
	p := New(testRegistry(b), newFakeResolver(), Options{})
	for _, q := range quickTexts {
		if _, ok := p.Quick(q); !ok {
			b.Fatalf("not quick: %s", q)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, q := range quickTexts {
			p.Quick(q)
		}
	}
}

// BenchmarkShape hashes pgbench's statements by number shape and compares
// each with its next execution's text, as a session's fast-path memo does
// for every statement it has decided before (proxy.quickEntry).
func BenchmarkShape(b *testing.B) {
	next := make([]string, len(quickTexts))
	for i, q := range quickTexts {
		next[i] = strings.NewReplacer("48213", "7", "4132", "91", "37", "100").Replace(q)
		if !SameShape(q, next[i]) || ShapeHash(q) != ShapeHash(next[i]) {
			b.Fatalf("not one shape: %q and %q", q, next[i])
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i, q := range quickTexts {
			_ = ShapeHash(next[i])
			_ = SameShape(next[i], q)
		}
	}
}

package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/catalog"
)

func TestPlan_CachesAnalysisPerText(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{CacheSize: 2, NoFastPath: true})
	ctx := context.Background()
	q := `SELECT * FROM orders WHERE id = $1`
	p.Plan(ctx, q, defaultSession())
	a1, ok := p.cache.get(q)
	if !ok {
		t.Fatal("statement not cached")
	}
	p.Plan(ctx, q, defaultSession())
	if a2, _ := p.cache.get(q); a2 != a1 {
		t.Fatal("second Plan analysed the text again")
	}
	p.Plan(ctx, `SELECT 1`, defaultSession())
	p.Plan(ctx, `SELECT 2`, defaultSession())
	if _, ok := p.cache.get(q); ok {
		t.Fatal("least recently used text not evicted")
	}
	if n := p.cache.len(); n != 2 {
		t.Fatalf("cache holds %d texts, want 2", n)
	}
}

func TestPlan_LongTextsNotCached(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{MaxCachedSQL: 20})
	q := `SELECT id FROM orders WHERE id = 1`
	d := p.Plan(context.Background(), q, defaultSession())
	if d.Route != RouteAccelerate {
		t.Fatalf("route %v %q", d.Route, d.Reason)
	}
	if p.cache.len() != 0 {
		t.Fatal("text longer than MaxCachedSQL was cached")
	}
}

func TestPlan_SessionPartRecomputed(t *testing.T) {
	reg := testRegistry(t)
	p := New(reg, newFakeResolver(), Options{})
	ctx := context.Background()
	q := `SELECT id FROM orders`
	if d := p.Plan(ctx, q, defaultSession()); d.Route != RouteAccelerate {
		t.Fatalf("route %v %q", d.Route, d.Reason)
	}
	// Same text, another search path: another dataset.
	d := p.Plan(ctx, q, &Session{SearchPath: []string{"sales", "public"}})
	if d.Route != RouteAccelerate || d.Datasets[0] != "sales_orders" {
		t.Fatalf("got %v %q %v", d.Route, d.Reason, d.Datasets)
	}
	if d.SQL != `SELECT id FROM ds_sales_orders.main.sales_orders orders` {
		t.Fatalf("SQL %s", d.SQL)
	}
	// The dataset stops being servable: the cached text follows.
	reg.Update("orders", func(s *catalog.DatasetState) { s.Loaded = false })
	if d := p.Plan(ctx, q, defaultSession()); d.Reason != ReasonNotReady {
		t.Fatalf("reason %q, want not_ready", d.Reason)
	}
}

func TestPlan_SelfJoinResolvesOnce(t *testing.T) {
	res := newFakeResolver()
	p := New(testRegistry(t), res, Options{})
	d := p.Plan(context.Background(), `SELECT a.id FROM orders a JOIN orders b ON a.id = b.id JOIN orders c ON c.id = a.id`, defaultSession())
	if d.Route != RouteAccelerate {
		t.Fatalf("route %v %q", d.Route, d.Reason)
	}
	if n := res.calls.Load(); n != 1 {
		t.Fatalf("resolver called %d times, want 1", n)
	}
	if len(d.Tables) != 1 || d.Tables[0] != (TableID{"public", "orders"}) {
		t.Fatalf("tables %v", d.Tables)
	}
}

func TestPlan_NilSession(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	if d := p.Plan(context.Background(), `SELECT id FROM public.orders`, nil); d.Route != RouteAccelerate {
		t.Fatalf("route %v %q", d.Route, d.Reason)
	}
}

// changingRefs is a resolver whose DuckDB table names change.
type changingRefs struct {
	*fakeResolver
	gen atomic.Int64
}

func (c *changingRefs) TableRef(dataset string) string {
	return fmt.Sprintf(`"ds_%s_g%d"."main"."%s"`, dataset, c.gen.Load(), dataset)
}

func TestPlan_RewriteFollowsTableRef(t *testing.T) {
	res := &changingRefs{fakeResolver: newFakeResolver()}
	p := New(testRegistry(t), res, Options{})
	ctx := context.Background()
	q := `SELECT id FROM orders`
	if d := p.Plan(ctx, q, defaultSession()); d.SQL != `SELECT id FROM ds_orders_g0.main.orders orders` {
		t.Fatalf("SQL %s", d.SQL)
	}
	res.gen.Store(1)
	if d := p.Plan(ctx, q, defaultSession()); d.SQL != `SELECT id FROM ds_orders_g1.main.orders orders` {
		t.Fatalf("SQL %s", d.SQL)
	}
}

// badRefs names DuckDB tables with something that is not a table name.
type badRefs struct{ *fakeResolver }

func (badRefs) TableRef(string) string { return `(SELECT 1)` }

func TestPlan_BadTableRef(t *testing.T) {
	p := New(testRegistry(t), badRefs{newFakeResolver()}, Options{})
	if d := p.Plan(context.Background(), `SELECT id FROM orders`, defaultSession()); d.Reason != ReasonUnsupported {
		t.Fatalf("route %v %q", d.Route, d.Reason)
	}
}

func TestPlan_RememberFallback(t *testing.T) {
	reg := testRegistry(t)
	p := New(reg, newFakeResolver(), Options{})
	ctx := context.Background()
	d := p.Plan(ctx, `SELECT id FROM orders WHERE id = 1`, defaultSession())
	if d.Route != RouteAccelerate {
		t.Fatalf("route %v %q", d.Route, d.Reason)
	}
	p.RememberFallback(d.Fingerprint, d.Datasets)
	// The fingerprint ignores constants: the same query with another value
	// falls back too.
	d2 := p.Plan(ctx, `SELECT id FROM orders WHERE id = 2`, defaultSession())
	if d2.Route != RouteOrigin || d2.Reason != ReasonKnownFallback {
		t.Fatalf("route %v %q", d2.Route, d2.Reason)
	}
	if d3 := p.Plan(ctx, `SELECT status FROM orders`, defaultSession()); d3.Route != RouteAccelerate {
		t.Fatalf("unrelated statement: %v %q", d3.Route, d3.Reason)
	}
	// A change of another dataset's acceleration changes nothing.
	reg.Update("customers", func(s *catalog.DatasetState) { s.Generation++ })
	if d4 := p.Plan(ctx, `SELECT id FROM orders WHERE id = 4`, defaultSession()); d4.Reason != ReasonKnownFallback {
		t.Fatalf("after another dataset's load: %v %q", d4.Route, d4.Reason)
	}
	// A new load of orders (new columns, new data) may have removed the
	// cause: the statement is tried on DuckDB again.
	reg.Update("orders", func(s *catalog.DatasetState) { s.Generation++ })
	if d5 := p.Plan(ctx, `SELECT id FROM orders WHERE id = 5`, defaultSession()); d5.Route != RouteAccelerate {
		t.Fatalf("after a load of orders: %v %q", d5.Route, d5.Reason)
	}
	// And remembered again if it fails again.
	p.RememberFallback(d.Fingerprint, d.Datasets)
	if d6 := p.Plan(ctx, `SELECT id FROM orders WHERE id = 6`, defaultSession()); d6.Reason != ReasonKnownFallback {
		t.Fatalf("remembered again: %v %q", d6.Route, d6.Reason)
	}
}

func TestFallbackSet_BoundedAndForgottenOnChange(t *testing.T) {
	gens := map[string]uint64{"a": 1}
	gen := func(ds []string) uint64 {
		var g uint64
		for _, d := range ds {
			g += gens[d]
		}
		return g
	}
	f := newFallbackSet(3)
	for i := uint64(1); i <= 5; i++ {
		f.add(i, []string{"a"}, 1)
	}
	f.add(5, []string{"a"}, 1) // already there: no eviction
	for i, want := range []bool{false, false, true, true, true} {
		if got := f.has(uint64(i+1), gen); got != want {
			t.Errorf("has(%d) = %v, want %v", i+1, got, want)
		}
	}
	gens["a"] = 2
	if f.has(4, gen) {
		t.Error("has(4) after its dataset changed")
	}
	gens["a"] = 1 // forgotten for good, not merely hidden
	if f.has(4, gen) || !f.has(5, gen) {
		t.Errorf("has(4) = %v, has(5) = %v after 4 was forgotten", f.has(4, gen), f.has(5, gen))
	}
}

// fakePrivileges denies per table.
type fakePrivileges struct {
	deny map[TableID]string
	err  error
	role string
}

func (f *fakePrivileges) CanSelect(_ context.Context, role string, tables []TableID) (bool, string, error) {
	f.role = role
	if f.err != nil {
		return false, "", f.err
	}
	for _, t := range tables {
		if r, ok := f.deny[t]; ok {
			return false, r, nil
		}
	}
	return true, "", nil
}

func TestPlan_PrivilegesOption(t *testing.T) {
	priv := &fakePrivileges{deny: map[TableID]string{
		{"public", "customers"}: ReasonPrivilege,
		{"sales", "orders"}:     ReasonRowSecurity,
	}}
	p := New(testRegistry(t), newFakeResolver(), Options{Privileges: priv})
	ctx := context.Background()
	cases := []struct {
		sql, reason string
	}{
		{`SELECT id FROM orders`, ""},
		{`SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id`, ReasonPrivilege},
		{`SELECT id FROM sales.orders`, ReasonRowSecurity},
	}
	for _, c := range cases {
		d := p.Plan(ctx, c.sql, defaultSession())
		if d.Reason != c.reason {
			t.Errorf("%s: reason %q, want %q", c.sql, d.Reason, c.reason)
		}
	}
	if priv.role != "app" {
		t.Errorf("checked role %q, want app", priv.role)
	}
	priv.err = errors.New("origin down")
	if d := p.Plan(ctx, `SELECT id FROM orders`, defaultSession()); d.Reason != ReasonPrivilege {
		t.Errorf("checker error: reason %q", d.Reason)
	}
}

func TestPlan_Concurrent(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{CacheSize: 8, NoFastPath: true})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				c := planCases[(g*31+i)%len(planCases)]
				s := defaultSession()
				if c.session != nil {
					c.session(s)
				}
				if s.User == "fail-resolver" {
					continue
				}
				d := p.Plan(context.Background(), c.sql, s)
				if d.Route != c.route || d.Reason != c.reason {
					t.Errorf("%s: %v %q", c.name, d.Route, d.Reason)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestKind_String(t *testing.T) {
	for k := range kindCount {
		if k.String() == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Kind(200).String() != "unknown" {
		t.Error("out of range kind")
	}
	if !KindCommit.EndsTransaction() || KindSavepoint.EndsTransaction() {
		t.Error("EndsTransaction")
	}
}

func TestTTLCache(t *testing.T) {
	now := time.Unix(0, 0)
	c := newTTLCache[int](time.Second, 3, 0)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	loads := 0
	load := func(v int) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { loads++; return v, nil }
	}
	if v, _ := c.get(ctx, "a", load(1)); v != 1 {
		t.Fatal(v)
	}
	if v, _ := c.get(ctx, "a", load(2)); v != 1 || loads != 1 {
		t.Fatalf("cached value %d after %d loads", v, loads)
	}
	now = now.Add(time.Second)
	if v, _ := c.get(ctx, "a", load(3)); v != 3 {
		t.Fatalf("expired entry not reloaded: %d", v)
	}
	if _, err := c.get(ctx, "b", func(context.Context) (int, error) { return 0, errOriginDown }); err == nil {
		t.Fatal("error lost")
	}
	if _, ok := c.lookup("b"); ok {
		t.Fatal("error cached")
	}
	for i := range 10 {
		c.put(fmt.Sprint(i), i)
	}
	if n := len(c.entries); n > 3 {
		t.Fatalf("cache holds %d entries, max 3", n)
	}
}

func TestTTLCache_OneLoadForConcurrentMisses(t *testing.T) {
	c := newTTLCache[int](time.Minute, 10, 0)
	release := make(chan struct{})
	var loads atomic.Int64
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.get(context.Background(), "k", func(context.Context) (int, error) {
				loads.Add(1)
				<-release
				return 7, nil
			})
			if v != 7 || err != nil {
				t.Errorf("got %d %v", v, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
}

// TestPlan_RewriteFollowsColumnTypes: a cached rewrite that depends on a
// column's type (a double cast to text goes through the text function) is
// not reused once the dataset's column has another type (after the origin
// changed it and a refresh reloaded it).
func TestPlan_RewriteFollowsColumnTypes(t *testing.T) {
	reg := testRegistry(t)
	p := New(reg, newFakeResolver(), Options{})
	ctx := context.Background()
	q := `SELECT weight::text FROM orders`
	if d := p.Plan(ctx, q, defaultSession()); !strings.Contains(d.SQL, "pgaccel_text") {
		t.Fatalf("a double cast to text: %s", d.SQL)
	}
	reg.Update("orders", func(s *catalog.DatasetState) {
		cols := append([]catalog.ColumnInfo(nil), s.Columns...)
		for i := range cols {
			if cols[i].Name == "weight" {
				cols[i].TypeOID, cols[i].TypeName = 23, "integer"
			}
		}
		s.Columns = cols
	})
	if d := p.Plan(ctx, q, defaultSession()); strings.Contains(d.SQL, "pgaccel_text") {
		t.Fatalf("the double's rewrite was reused for an integer: %s", d.SQL)
	}
}

// TestTTLCache_StaleWhileUnreachable: an expired answer serves while the
// origin cannot be reached, within MaxStale; an answer that is an error
// (the origin spoke) never makes a stale one serve.
func TestTTLCache_StaleWhileUnreachable(t *testing.T) {
	now := time.Unix(0, 0)
	c := newTTLCache[int](time.Second, 10, time.Minute)
	c.now = func() time.Time { return now }
	ctx := context.Background()
	if v, _ := c.get(ctx, "a", func(context.Context) (int, error) { return 1, nil }); v != 1 {
		t.Fatal(v)
	}
	now = now.Add(30 * time.Second)
	if v, err := c.get(ctx, "a", func(context.Context) (int, error) { return 0, errOriginDown }); err != nil || v != 1 {
		t.Fatalf("within max stale, unreachable: %d %v, want the last answer", v, err)
	}
	if v, ok := c.lookupStale("a"); !ok || v != 1 {
		t.Fatalf("lookupStale: %d %v", v, ok)
	}
	if _, err := c.get(ctx, "a", func(context.Context) (int, error) { return 0, &pgconn.PgError{Code: "42704"} }); err == nil {
		t.Fatal("an origin's error answer was replaced by a stale value")
	}
	now = now.Add(time.Minute)
	if _, err := c.get(ctx, "a", func(context.Context) (int, error) { return 0, errOriginDown }); err == nil {
		t.Fatal("served past max stale")
	}
	if _, ok := c.lookupStale("a"); ok {
		t.Fatal("lookupStale past max stale")
	}
}

package resultcache

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A caching answer is fresh for its TTL, then stale (one caller
// revalidates it) for the stale-while-revalidate window, then usable only
// while the origin cannot answer, then gone; a new data generation drops
// it; the strictest policy of the datasets read applies.
func TestResultCache_CachingLifetimes(t *testing.T) {
	g := &gens{m: map[string]uint64{}}
	c := New(1<<20, 1<<16, g.get, prometheus.NewRegistry())
	c.EnableCaching(map[string]CachingPolicy{
		"a": {TTL: 10 * time.Second, StaleWhileRevalidate: 5 * time.Second, StaleIfError: time.Minute, Table: "orders"},
		"b": {TTL: 2 * time.Second, StaleWhileRevalidate: 20 * time.Second, StaleIfError: time.Hour, Table: "Items"},
	}, g.bump, false, prometheus.NewRegistry())
	t0 := time.Now()
	ds := []string{"a"}
	c.KeepCaching("k", ds, c.Generations(ds), []byte("answer"), 3, t0)
	check := func(at time.Duration, state CachingState, revalidate, errorOK bool) {
		t.Helper()
		h := c.LookupCaching("k", t0.Add(at))
		if h.State != state || h.Revalidate != revalidate || h.ErrorOK != errorOK {
			t.Fatalf("at %v: %+v, want state %d revalidate %v errorOK %v", at, h, state, revalidate, errorOK)
		}
		if state != CachingMiss && (string(h.Body) != "answer" || h.Rows != 3) {
			t.Fatalf("at %v: body %q rows %d", at, h.Body, h.Rows)
		}
	}
	check(time.Second, CachingFresh, false, true)
	check(11*time.Second, CachingStale, true, true)
	check(12*time.Second, CachingStale, false, true) // one revalidation at a time
	c.Revalidated("k")
	check(13*time.Second, CachingStale, true, true)
	check(30*time.Second, CachingExpired, false, true)
	check(71*time.Second, CachingMiss, false, false)

	// A new generation of a dataset read drops the answer.
	c.KeepCaching("k", ds, c.Generations(ds), []byte("answer"), 3, t0)
	g.bump("a")
	check(time.Second, CachingMiss, false, false)
	// An answer computed before the dataset changed is not kept.
	old := c.Generations(ds)
	g.bump("a")
	c.KeepCaching("k", ds, old, []byte("answer"), 3, t0)
	check(time.Second, CachingMiss, false, false)

	// Two caching datasets: the strictest of each bound.
	both := []string{"a", "b"}
	c.KeepCaching("k", both, c.Generations(both), []byte("answer"), 3, t0)
	check(3*time.Second, CachingStale, true, true)
	check(8*time.Second, CachingExpired, false, true)
	check(63*time.Second, CachingMiss, false, false)

	// Writes naming a caching dataset's table concern it;
	// writes of unknown effect concern every one.
	mentions := func(sql string) func(string) bool {
		return func(table string) bool { return strings.Contains(strings.ToLower(sql), strings.ToLower(table)) }
	}
	if got := c.WritesCaching(mentions("UPDATE public.orders SET x = 1")); !slices.Equal(got, []string{"a"}) {
		t.Errorf("writes to orders: %v", got)
	}
	if got := c.WritesCaching(mentions("insert into ITEMS values (1)")); !slices.Equal(got, []string{"b"}) {
		t.Errorf("writes to items: %v", got)
	}
	if got := c.WritesCaching(mentions("UPDATE other SET x = 1")); len(got) != 0 {
		t.Errorf("writes to other: %v", got)
	}
	if got := c.WritesCaching(nil); len(got) != 2 {
		t.Errorf("a DO block: %v", got)
	}

	// Status: entries, hits and misses, the oldest age.
	c.KeepCaching("k", both, c.Generations(both), []byte("answer"), 3, time.Now().Add(-time.Second))
	c.CountCaching(both, true)
	c.CountCaching(ds, false)
	if st, ok := c.CachingStatus("a"); !ok || st.Entries != 1 || st.Hits != 1 || st.Misses != 1 || st.OldestAge <= 0 {
		t.Errorf("status of a: %+v %v", st, ok)
	}
	if _, ok := c.CachingStatus("nope"); ok {
		t.Error("status of a dataset that is not caching")
	}
	// Accelerated answers are not kept when the cache is on only for
	// caching datasets.
	if c.Accelerated() {
		t.Error("accelerated answers kept with runtime.results_cache off")
	}
}

// Concurrent misses of a key: one leads, the others wait for it and get
// its answer.
func TestResultCache_CachingFlights(t *testing.T) {
	g := &gens{m: map[string]uint64{}}
	c := New(1<<20, 1<<16, g.get, nil)
	c.EnableCaching(map[string]CachingPolicy{"a": {TTL: time.Second}}, g.bump, true, nil)
	f, leader := c.Join("k")
	if !leader {
		t.Fatal("the first miss does not lead")
	}
	f2, leader2 := c.Join("k")
	if leader2 || f2 != f {
		t.Fatal("a second miss leads too")
	}
	select {
	case <-f.Done:
		t.Fatal("done before it landed")
	default:
	}
	f.OK, f.Body, f.Rows = true, []byte("x"), 1
	c.Land("k", f)
	select {
	case <-f2.Done:
	default:
		t.Fatal("the waiter is not woken")
	}
	if !f2.OK || string(f2.Body) != "x" {
		t.Fatal("the waiter does not see the answer")
	}
	if _, leader := c.Join("k"); !leader {
		t.Fatal("after landing, the next miss does not lead")
	}
}

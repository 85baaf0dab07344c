package resultcache

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// value reads a counter or gauge.
func value(m prometheus.Metric) float64 {
	var out dto.Metric
	_ = m.Write(&out)
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

// gens is a stand-in for the registry's data generations.
type gens struct {
	mu sync.Mutex
	m  map[string]uint64
}

func (g *gens) get(d string) uint64 { g.mu.Lock(); defer g.mu.Unlock(); return g.m[d] }
func (g *gens) bump(d string)       { g.mu.Lock(); defer g.mu.Unlock(); g.m[d]++ }

// An entry is served until a dataset it reads changes, then dropped and
// counted as an invalidation of that dataset; an answer over the entry
// limit is not kept; the least recently used entries go first.
func TestResultCache(t *testing.T) {
	g := &gens{m: map[string]uint64{}}
	reg := prometheus.NewRegistry()
	c := New(4000, 1000, g.get, reg)
	put := func(key string, ds ...string) {
		c.Put(key, ds, c.Generations(ds), bytes.Repeat([]byte(key[:1]), 500), 7)
	}
	put("a", "orders")
	put("b", "orders", "customers")
	put("c", "customers")
	if body, n, ok := c.Get("a"); !ok || n != 7 || len(body) != 500 || body[0] != 'a' {
		t.Fatalf("get a: %v %d %d", ok, n, len(body))
	}
	g.bump("customers")
	if _, _, ok := c.Get("b"); ok {
		t.Fatal("b read customers, which changed, and was served")
	}
	if _, _, ok := c.Get("a"); !ok {
		t.Fatal("a reads only orders and was dropped")
	}
	// put sweeps: c (customers) goes without being looked up.
	put("d", "orders")
	if _, ok := c.m["c"]; ok {
		t.Fatal("c was not swept after customers changed")
	}
	if got := value(c.invalidations.WithLabelValues("customers")); got != 2 {
		t.Errorf("invalidations of customers: %v", got)
	}
	// Too large for an entry.
	c.Put("big", []string{"orders"}, c.Generations([]string{"orders"}), make([]byte, 1001), 1)
	if _, _, ok := c.Get("big"); ok {
		t.Fatal("an answer over max_entry_bytes was kept")
	}
	// The budget: each entry costs about 700 bytes; a is used most
	// recently, so it outlives the others.
	for i := range 10 {
		c.Get("a")
		put(fmt.Sprintf("e%d", i), "orders")
	}
	if c.used > 4000 {
		t.Fatalf("%d bytes held, over the budget", c.used)
	}
	if _, _, ok := c.Get("a"); !ok {
		t.Fatal("the most recently used entry was evicted")
	}
	if _, _, ok := c.Get("e0"); ok {
		t.Fatal("the least recently used entry is still there")
	}
	if value(c.evictions) == 0 || value(c.hits) == 0 || value(c.misses) == 0 {
		t.Error("hits, misses or evictions not counted")
	}
	if got := value(c.bytes); got != float64(c.used) {
		t.Errorf("bytes gauge %v, held %d", got, c.used)
	}
}

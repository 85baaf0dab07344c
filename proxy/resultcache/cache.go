package resultcache

import (
	"container/list"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Cache keeps accelerated answers (runtime.results_cache) as the
// bytes the client received: the RowDescription (simple protocol) and the
// DataRows, with the row count of the completion tag. An entry is keyed
// by everything that decides those bytes (the proxy's resultKey) and remembers the
// data generation of each dataset it read: once any of them changed (a
// load, an append, a change batch, a retention pass, a snapshot swap), the
// entry is never served again and is dropped. Answers larger than the
// entry limit are not kept; the least recently used entries go when the
// budget is full.
//
// What is cached is only what the planner accelerates, which excludes
// volatile and session-dependent functions (random, now, current_user,
// current_setting, ...): an accelerated statement's answer depends only on
// the datasets' rows, its text and parameters, and the settings in the
// key. Privileges are checked for every execution before the cache is
// looked at.
type Cache struct {
	maxBytes, maxEntry int64
	dataGen            func(dataset string) uint64

	mu   sync.Mutex
	used int64
	lru  list.List // of *cacheEntry, most recently used first
	m    map[string]*list.Element
	// byDataset indexes the entries by the datasets they read, for the
	// sweep in put; swept is each dataset's data generation at its last
	// sweep (a dataset is swept again only once it changed).
	byDataset map[string]map[*list.Element]struct{}
	swept     map[string]uint64

	hits, misses, evictions prometheus.Counter
	invalidations           *prometheus.CounterVec
	bytes, entries          prometheus.Gauge

	// refresh_mode: caching (caching.go); set by EnableCaching before use.
	policies                   map[string]CachingPolicy
	bump                       func(dataset string)
	noAccelerated              bool
	flights                    map[string]*Flight // guarded by mu
	cstats                     map[string]*cachingStats
	staleServed, originFetches *prometheus.CounterVec
}

type cacheEntry struct {
	key      string
	datasets []string
	gens     []uint64
	body     []byte
	rows     int64
	// caching: an origin answer of a caching dataset, fetched then, with
	// its datasets' strictest policy; revalidating: a request asks the
	// origin again (guarded by mu).
	caching      bool
	fetched      time.Time
	policy       CachingPolicy
	revalidating bool
}

// entryOverhead is what an entry costs besides its body and key.
const entryOverhead = 160

func (e *cacheEntry) size() int64 {
	return int64(len(e.body)+len(e.key)) + entryOverhead + int64(len(e.datasets))*24
}

// New returns a cache of maxBytes in all, of answers up to
// maxEntry bytes; dataGen returns a dataset's data generation
// (catalog.Registry.DataGeneration). Its metrics go to reg (nil: none).
func New(maxBytes, maxEntry int64, dataGen func(string) uint64, reg prometheus.Registerer) *Cache {
	c := &Cache{
		maxBytes: maxBytes, maxEntry: min(maxEntry, maxBytes), dataGen: dataGen,
		m: map[string]*list.Element{}, byDataset: map[string]map[*list.Element]struct{}{}, swept: map[string]uint64{},
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgaccel_results_cache_hits_total",
			Help: "Accelerated statements answered from the results cache (runtime.results_cache)."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgaccel_results_cache_misses_total",
			Help: "Accelerated statements the results cache did not hold (or held for data that has changed since): DuckDB answered them."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "pgaccel_results_cache_evictions_total",
			Help: "Entries of the results cache dropped, least recently used first, to keep within runtime.results_cache.max_bytes."}),
		invalidations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pgaccel_results_cache_invalidations_total",
			Help: "Entries of the results cache dropped because a dataset they read changed (load, append, change batch, retention pass, snapshot swap), by that dataset."},
			[]string{"dataset"}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pgaccel_results_cache_bytes",
			Help: "Bytes the results cache holds (answers, keys and bookkeeping)."}),
		entries: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pgaccel_results_cache_entries",
			Help: "Answers the results cache holds."}),
	}
	if reg != nil {
		reg.MustRegister(c.hits, c.misses, c.evictions, c.invalidations, c.bytes, c.entries)
	}
	return c
}

// generations are the datasets' data generations now.
// Bytes is the memory the cache's answers take now.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

func (c *Cache) Generations(datasets []string) []uint64 {
	gens := make([]uint64, len(datasets))
	for i, d := range datasets {
		gens[i] = c.dataGen(d)
	}
	return gens
}

// get returns the answer kept for key, if its datasets have not changed
// since it was kept.
func (c *Cache) Get(key string) (body []byte, rows int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.live(key)
	if el == nil {
		c.misses.Inc()
		return nil, 0, false
	}
	e := el.Value.(*cacheEntry)
	c.lru.MoveToFront(el)
	c.hits.Inc()
	return e.body, e.rows, true
}

// live returns the entry of key unless there is none or a dataset it read
// has changed since (it is then dropped, as an invalidation of that
// dataset). The caller holds mu.
func (c *Cache) live(key string) *list.Element {
	el := c.m[key]
	if el == nil {
		return nil
	}
	if changed := c.changed(el.Value.(*cacheEntry)); changed != "" {
		c.invalidations.WithLabelValues(changed).Inc()
		c.remove(el)
		return nil
	}
	return el
}

// changed is the first dataset e read whose data changed since, or "".
func (c *Cache) changed(e *cacheEntry) string {
	for i, d := range e.datasets {
		if c.dataGen(d) != e.gens[i] {
			return d
		}
	}
	return ""
}

// keep puts a copy of body, the answer of datasets computed after each
// was at gens, unless one of them changed since (the answer may then hold
// either data).
func (c *Cache) Keep(key string, datasets []string, gens []uint64, body []byte, rows int64) {
	c.keepEntry(&cacheEntry{key: key, datasets: datasets, gens: gens, body: body, rows: rows})
}

// keepEntry puts e with a copy of its body, unless the body is over the
// entry limit or a dataset changed since e.gens.
func (c *Cache) keepEntry(e *cacheEntry) {
	if int64(len(e.body)) <= c.maxEntry && slices.Equal(e.gens, c.Generations(e.datasets)) {
		e.body = slices.Clone(e.body)
		c.putEntry(e)
	}
}

// put keeps an answer of datasets computed while each was at gens, and
// drops every entry whose data changed since.
func (c *Cache) Put(key string, datasets []string, gens []uint64, body []byte, rows int64) {
	if int64(len(body)) > c.maxEntry {
		return
	}
	c.putEntry(&cacheEntry{key: key, datasets: datasets, gens: gens, body: body, rows: rows})
}

// putEntry keeps e, dropping what changed or can serve no more, then the
// least recently used, to stay within the budget.
func (c *Cache) putEntry(e *cacheEntry) {
	key, datasets := e.key, e.datasets
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweep()
	if el := c.m[key]; el != nil {
		c.remove(el)
	}
	el := c.lru.PushFront(e)
	c.m[key] = el
	for _, d := range datasets {
		set := c.byDataset[d]
		if set == nil {
			set = map[*list.Element]struct{}{}
			c.byDataset[d] = set
		}
		set[el] = struct{}{}
	}
	c.used += e.size()
	if len(c.policies) > 0 {
		now := time.Now()
		for el := c.lru.Back(); el != nil && c.used > c.maxBytes; {
			prev := el.Prev()
			if el.Value.(*cacheEntry).dead(now) {
				c.remove(el)
			}
			el = prev
		}
	}
	for c.used > c.maxBytes && c.lru.Len() > 0 {
		c.remove(c.lru.Back())
		c.evictions.Inc()
	}
	c.bytes.Set(float64(c.used))
	c.entries.Set(float64(c.lru.Len()))
}

// sweep drops the entries of every dataset whose data changed since its
// last sweep: one generation read per dataset held, and a walk of a
// dataset's entries only after it changed.
func (c *Cache) sweep() {
	for d, set := range c.byDataset {
		gen := c.dataGen(d)
		if last, ok := c.swept[d]; ok && last == gen {
			continue
		}
		c.swept[d] = gen
		for el := range set {
			e := el.Value.(*cacheEntry)
			for i, ed := range e.datasets {
				if ed == d && e.gens[i] != gen {
					c.invalidations.WithLabelValues(d).Inc()
					c.remove(el)
					break
				}
			}
		}
	}
}

func (c *Cache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	if c.m[e.key] != el {
		return
	}
	delete(c.m, e.key)
	c.lru.Remove(el)
	for _, d := range e.datasets {
		if set := c.byDataset[d]; set != nil {
			delete(set, el)
			if len(set) == 0 {
				delete(c.byDataset, d)
			}
		}
	}
	c.used -= e.size()
	c.bytes.Set(float64(c.used))
	c.entries.Set(float64(c.lru.Len()))
}

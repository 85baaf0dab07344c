package resultcache

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgaccel/pgaccel/catalog"
)

// refresh_mode: caching. The origin answers reads of a caching dataset
// (as the session's role, with its settings, on the session's own origin
// connection) and the results cache keeps the answer, under the same key
// as an accelerated one plus the locale settings the origin formats
// with, for the datasets' refresh_check_interval (fresh), then:
//
//   - for caching_stale_while_revalidate more, a hit is served stale and
//     one request (the first session to meet it stale, once it is idle
//     at the origin) asks the origin again;
//   - for caching_stale_if_error past the fresh time, the answer is
//     served when the origin cannot answer (connection refused or lost,
//     shutting down);
//   - after that it is a miss.
//
// Concurrent misses of one key make one origin request: the other
// sessions wait for its answer (at most CachingWaitFor) and serve it. An
// on-demand refresh of the dataset, and a write to its table committed
// through pgaccel, drop its answers (a new data generation); writes made
// elsewhere are seen when the answers expire. Answers are kept only
// outside explicit transactions, and reads inside one go to the origin.

// CachingPolicy is a caching dataset's freshness: its
// refresh_check_interval, caching_stale_while_revalidate and
// caching_stale_if_error; Table is its origin table's name (writes that
// name it drop its answers).
type CachingPolicy struct {
	TTL, StaleWhileRevalidate, StaleIfError time.Duration
	Table                                   string
}

// CachingWaitFor bounds how long a miss waits for another session's
// origin request of the same key before it asks the origin itself.
const CachingWaitFor = 30 * time.Second

// CachingState is what a lookup of a caching answer found.
type CachingState uint8

const (
	CachingMiss    CachingState = iota // nothing usable
	CachingFresh                       // within refresh_check_interval
	CachingStale                       // within stale-while-revalidate: served, revalidated
	CachingExpired                     // past both; usable only when the origin cannot answer
)

// CachingHit is a caching answer found by lookupCaching.
type CachingHit struct {
	State CachingState
	Body  []byte
	Rows  int64
	// Revalidate: this caller revalidates the stale answer (no other
	// does); ErrorOK: the answer may serve while the origin cannot answer.
	Revalidate, ErrorOK bool
}

// Flight is one origin request of a key that other misses wait for; once
// done is closed, ok says whether it got an answer that may be kept (body,
// rows), which the waiters serve whatever its age.
type Flight struct {
	Done chan struct{}
	OK   bool
	Body []byte
	Rows int64
}

// cachingStats are a caching dataset's counters for its status.
type cachingStats struct{ hits, misses uint64 }

// EnableCaching makes c keep origin answers of the caching datasets of
// policies (refresh_mode: caching); bump drops a dataset's answers (a new
// data generation: catalog.Registry.BumpDataGeneration). With
// accelerated false, answers of the acceleration are not kept
// (runtime.results_cache.enabled: false).
func (c *Cache) EnableCaching(policies map[string]CachingPolicy, bump func(dataset string), accelerated bool, reg prometheus.Registerer) {
	c.policies, c.bump, c.noAccelerated = policies, bump, !accelerated
	c.flights = map[string]*Flight{}
	c.cstats = map[string]*cachingStats{}
	c.staleServed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pgaccel_results_cache_stale_served_total",
		Help: "Answers of refresh_mode: caching datasets served past their refresh_check_interval: while one request revalidates them (reason revalidate), or because the origin could not answer (origin_unavailable)."},
		[]string{"reason"})
	c.originFetches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pgaccel_results_cache_origin_requests_total",
		Help: "Requests the results cache made to the origin for refresh_mode: caching datasets, by kind (miss, revalidate)."},
		[]string{"kind"})
	if reg != nil {
		reg.MustRegister(c.staleServed, c.originFetches)
	}
}

// cachingPolicy is the strictest policy of the caching datasets among
// datasets, and whether there is one.
func (c *Cache) cachingPolicy(datasets []string) (CachingPolicy, bool) {
	var p CachingPolicy
	found := false
	for _, d := range datasets {
		q, ok := c.policies[d]
		if !ok {
			continue
		}
		if !found {
			p, found = q, true
			continue
		}
		p.TTL = min(p.TTL, q.TTL)
		p.StaleWhileRevalidate = min(p.StaleWhileRevalidate, q.StaleWhileRevalidate)
		p.StaleIfError = min(p.StaleIfError, q.StaleIfError)
	}
	return p, found
}

// lookupCaching finds the caching answer of key at now.
func (c *Cache) LookupCaching(key string, now time.Time) CachingHit {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.live(key)
	if el == nil {
		return CachingHit{}
	}
	e := el.Value.(*cacheEntry)
	age := now.Sub(e.fetched)
	h := CachingHit{Body: e.body, Rows: e.rows, ErrorOK: age < e.policy.TTL+e.policy.StaleIfError}
	switch {
	case age < e.policy.TTL:
		h.State = CachingFresh
	case age < e.policy.TTL+e.policy.StaleWhileRevalidate:
		h.State = CachingStale
		if !e.revalidating {
			e.revalidating, h.Revalidate = true, true
		}
	case h.ErrorOK:
		h.State = CachingExpired
		return h
	default:
		c.remove(el)
		return CachingHit{}
	}
	c.lru.MoveToFront(el)
	return h
}

// countCaching counts a hit or a miss of the caching datasets among
// datasets, for their status.
func (c *Cache) CountCaching(datasets []string, hit bool) {
	if hit {
		c.hits.Inc()
	} else {
		c.misses.Inc()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range datasets {
		if _, ok := c.policies[d]; !ok {
			continue
		}
		s := c.cstats[d]
		if s == nil {
			s = &cachingStats{}
			c.cstats[d] = s
		}
		if hit {
			s.hits++
		} else {
			s.misses++
		}
	}
}

// revalidated ends a revalidation that kept nothing: the next stale hit
// tries again.
func (c *Cache) Revalidated(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[key]; el != nil {
		el.Value.(*cacheEntry).revalidating = false
	}
}

// keepCaching keeps an origin answer of datasets, asked for when each was
// at gens, fetched at fetched, unless one of them changed since.
func (c *Cache) KeepCaching(key string, datasets []string, gens []uint64, body []byte, rows int64, fetched time.Time) {
	if p, ok := c.cachingPolicy(datasets); ok {
		c.keepEntry(&cacheEntry{key: key, datasets: datasets, gens: gens, body: body, rows: rows, fetched: fetched, policy: p, caching: true})
	}
}

// join makes the caller the one origin request of key (leader), or
// returns the request to wait for.
func (c *Cache) Join(key string) (*Flight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[key]; f != nil {
		return f, false
	}
	f := &Flight{Done: make(chan struct{})}
	c.flights[key] = f
	return f, true
}

// land ends the origin request f of key: its waiters serve its answer,
// or look again.
func (c *Cache) Land(key string, f *Flight) {
	c.mu.Lock()
	if c.flights[key] == f {
		delete(c.flights, key)
	}
	c.mu.Unlock()
	close(f.Done)
}

// dead reports whether e can serve no more (past its fresh time, its
// stale windows): dropped before anything else when room is needed.
func (e *cacheEntry) dead(now time.Time) bool {
	if !e.caching {
		return false
	}
	return now.Sub(e.fetched) >= e.policy.TTL+max(e.policy.StaleWhileRevalidate, e.policy.StaleIfError)
}

// CachingStatus returns the status of the caching dataset; false for a
// dataset that is not one.
func (c *Cache) CachingStatus(dataset string) (catalog.CachingStatus, bool) {
	if _, ok := c.policies[dataset]; !ok {
		return catalog.CachingStatus{}, false
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var st catalog.CachingStatus
	if s := c.cstats[dataset]; s != nil {
		st.Hits, st.Misses = s.hits, s.misses
	}
	for el := range c.byDataset[dataset] {
		e := el.Value.(*cacheEntry)
		if e.dead(now) {
			continue
		}
		st.Entries++
		st.OldestAge = max(st.OldestAge, now.Sub(e.fetched))
	}
	return st, true
}

// WritesCaching returns the caching datasets a statement that may write
// may change: those whose table mentions reports the statement names
// (the planner reads the text: planner.MentionsName), every one when
// mentions is nil (a statement whose effects are not known: a function
// call, DO, several statements).
func (c *Cache) WritesCaching(mentions func(table string) bool) []string {
	if len(c.policies) == 0 {
		return nil
	}
	var out []string
	for d, p := range c.policies {
		if mentions != nil && !mentions(p.Table) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// Caching reports whether the cache keeps origin answers of caching
// datasets (EnableCaching with policies).
func (c *Cache) Caching() bool { return len(c.policies) > 0 }

// Accelerated reports whether the cache keeps accelerated answers
// (runtime.results_cache.enabled).
func (c *Cache) Accelerated() bool { return !c.noAccelerated }

// Bump drops a dataset's answers (a new data generation), when
// EnableCaching gave the means; false otherwise.
func (c *Cache) Bump(dataset string) bool {
	if c.bump == nil {
		return false
	}
	c.bump(dataset)
	return true
}

// StaleServed counts a caching answer served past its fresh time, for
// reason (revalidate, origin_unavailable).
func (c *Cache) StaleServed(reason string) { c.staleServed.WithLabelValues(reason).Inc() }

// OriginRequest counts a request made to the origin for a caching
// dataset's answer, by kind (miss, revalidate).
func (c *Cache) OriginRequest(kind string) { c.originFetches.WithLabelValues(kind).Inc() }

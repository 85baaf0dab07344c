package stmtstats

import (
	"math"
	"math/bits"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Route is how a statement was answered.
type Route uint8

const (
	Accelerated Route = iota // DuckDB ran it
	CacheHit                 // the results cache answered it
	PointIndex               // a point index answered it
	Fallback                 // the acceleration could not, the origin did
	Origin                   // routed to the origin
	NumRoutes
)

var routeNames = [NumRoutes]string{"accelerated", "cache_hit", "point_index", "fallback", "origin"}

// String is the route's name in every output.
func (r Route) String() string {
	if r < NumRoutes {
		return routeNames[r]
	}
	return "unknown"
}

// CostsOrigin reports whether a statement answered by r cost the origin
// its time.
func (r Route) CostsOrigin() bool { return r == Fallback || r == Origin }

// Scope is who ran a statement: its session's login role and database.
// A session makes its Scope once and passes the same pointer.
type Scope struct {
	Role, Database string
}

// Description is what the background describer makes of a statement's
// first text (Options.Describe): never a literal value.
type Description struct {
	// Text is the statement normalised: every constant replaced by $n.
	Text string
	// Tables are the tables and views it names, as written (schema.name
	// when qualified).
	Tables []string
	// Read: the statement only reads (a SELECT without FOR UPDATE/SHARE,
	// or a VALUES, TABLE or WITH of them).
	Read bool
}

// Options configure a Store.
type Options struct {
	// Max bounds the entries kept (default 5000): when full, the tenth
	// with the fewest calls is dropped (its counts stay in the totals).
	Max int
	// Describe normalises a statement's text and names its tables, off
	// the statement's path (a background goroutine). Nil: the text is
	// kept as "" and no tables are known.
	Describe func(sql string) Description
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Store holds the statement statistics of one pgaccel process: per
// statement fingerprint (a hash of the text with its constants, case and
// spacing normalised), role and database, the calls, rows and time of each
// route. Recording costs a few atomic adds; entries are made under a lock
// once, and described in the background.
type Store struct {
	opts Options
	mu   sync.RWMutex
	// entries by key, and the totals of entries dropped since the reset.
	entries map[key]*Entry
	folded  map[Scope]*routeTotals
	since   time.Time
	evicted atomic.Uint64

	work chan *Entry
	stop chan struct{}
	wg   sync.WaitGroup

	timeline timeline
}

type key struct {
	hash  uint64
	scope Scope
}

// New starts a store (and its describer); Close stops it.
func New(opts Options) *Store {
	if opts.Max <= 0 {
		opts.Max = 5000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Store{opts: opts, entries: make(map[key]*Entry), folded: make(map[Scope]*routeTotals),
		since: opts.Now(), work: make(chan *Entry, 1024), stop: make(chan struct{})}
	s.wg.Add(1)
	go s.describer()
	return s
}

// Close stops the describer.
func (s *Store) Close() {
	if s == nil {
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}

// describer describes new entries, and samples the timeline every
// sampleEvery.
func (s *Store) describer() {
	defer s.wg.Done()
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case e := <-s.work:
			s.describe(e)
		case <-tick.C:
			s.sample(s.opts.Now())
		}
	}
}

// describe makes e's description from the text it was made with, and
// forgets that text (it may hold values).
func (s *Store) describe(e *Entry) {
	e.mu.Lock()
	raw := e.raw
	e.raw = ""
	e.mu.Unlock()
	d := Description{}
	if s.opts.Describe != nil && raw != "" {
		d = s.opts.Describe(raw)
	}
	e.desc.Store(&d)
}

// Entry is one statement's statistics for one role and database.
type Entry struct {
	hash  uint64
	scope *Scope
	first time.Time
	// routes' statistics in stripes (Stripes), each made on first use.
	routes [NumRoutes][Stripes]atomic.Pointer[routeStats]
	// why: the last reason a call went to the origin (or fell back).
	why  atomic.Pointer[Why]
	desc atomic.Pointer[Description]
	// gone: dropped from the store (a holder looks it up again).
	gone atomic.Bool
	mu   sync.Mutex
	raw  string // the first text, until described
	// datasets is the datasets the statement read, as last noted.
	datasets atomic.Pointer[[]string]
	store    *Store
}

// Why is why a statement's call went to the origin: the planner's reason
// label and the rule (the node or column that raised it).
type Why struct {
	Route          Route
	Reason, Detail string
}

// Gone reports whether e was dropped from its store: its holder should
// look the statement up again.
func (e *Entry) Gone() bool { return e == nil || e.gone.Load() }

// Lookup returns the entry of the statement of hash (from the caller's
// fingerprint of sql) for scope, making it when new; sql is read only
// then, and kept only until described.
func (s *Store) Lookup(hash uint64, scope *Scope, sql string) *Entry {
	if s == nil {
		return nil
	}
	k := key{hash: hash, scope: *scope}
	s.mu.RLock()
	e := s.entries[k]
	s.mu.RUnlock()
	if e != nil {
		return e
	}
	s.mu.Lock()
	if e = s.entries[k]; e == nil {
		if len(s.entries) >= s.opts.Max {
			s.evictLocked()
		}
		e = &Entry{hash: hash, scope: scope, first: s.opts.Now(), raw: cloneBounded(sql), store: s}
		s.entries[k] = e
	}
	s.mu.Unlock()
	if e.desc.Load() == nil {
		select {
		case s.work <- e:
		default:
			// The describer is behind: describe it here rather than keep
			// a text that may hold values.
			s.describe(e)
		}
	}
	return e
}

// maxText bounds the text described, in bytes.
const maxText = 64 << 10

func cloneBounded(sql string) string {
	if len(sql) > maxText {
		sql = sql[:maxText]
	}
	return string([]byte(sql)) // never the caller's buffer
}

// evictLocked drops the tenth of the entries with the fewest calls,
// folding their counts into their scope's totals.
func (s *Store) evictLocked() {
	type ranked struct {
		k     key
		calls uint64
	}
	all := make([]ranked, 0, len(s.entries))
	for k, e := range s.entries {
		all = append(all, ranked{k, e.calls()})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].calls < all[j].calls })
	n := max(1, len(all)/10)
	for _, r := range all[:n] {
		e := s.entries[r.k]
		e.gone.Store(true)
		delete(s.entries, r.k)
		t := s.folded[r.k.scope]
		if t == nil {
			t = &routeTotals{}
			s.folded[r.k.scope] = t
		}
		t.add(e)
	}
	s.evicted.Add(uint64(n))
}

// Reset forgets every entry and total (holders of entries look them up
// again).
func (s *Store) Reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	for _, e := range s.entries {
		e.gone.Store(true)
	}
	s.entries = make(map[key]*Entry)
	s.folded = make(map[Scope]*routeTotals)
	s.since = s.opts.Now()
	s.evicted.Store(0)
	s.mu.Unlock()
	s.timeline.reset()
}

// Record counts one call of e answered by r, started at started, that
// returned rows rows.
func (e *Entry) Record(r Route, started time.Time, rows int64) {
	if e == nil {
		return
	}
	e.RecordDuration(0, r, e.store.opts.Now().Sub(started), rows)
}

// Stripes is how many stripes each route of an entry is kept in: a
// session counts in its own (stripe modulo Stripes), so that sessions
// running one statement on different cores do not move the same cache
// lines at every call (about 0.3 µs a call with 8 sessions on 2 cores);
// a read sums them.
const Stripes = 8

// RecordDuration counts one call of e answered by r that took d and
// returned rows rows, in stripe: three or four atomic operations on the
// stripe's counts (the timeline is sampled from the entries, not counted
// here: every call of every session would share its cache line).
func (e *Entry) RecordDuration(stripe uint8, r Route, d time.Duration, rows int64) {
	if e == nil || r >= NumRoutes {
		return
	}
	if d < 0 {
		d = 0
	}
	p := &e.routes[r][stripe%Stripes]
	rs := p.Load()
	if rs == nil {
		rs = new(routeStats)
		if !p.CompareAndSwap(nil, rs) {
			rs = p.Load()
		}
	}
	rs.record(d, rows)
}

// routeSum is a route of an entry, its stripes summed.
type routeSum struct {
	calls, rows, nanos, max uint64
	buckets                 [numBuckets]uint64
}

// read sums route r's stripes; false when no call took it.
func (e *Entry) read(r Route) (routeSum, bool) {
	var s routeSum
	for i := range e.routes[r] {
		rs := e.routes[r][i].Load()
		if rs == nil {
			continue
		}
		for j := range rs.buckets {
			n := rs.buckets[j].Load()
			s.buckets[j] += n
			s.calls += n
		}
		s.rows += rs.rows.Load()
		s.nanos += rs.nanos.Load()
		s.max = max(s.max, rs.maxNano.Load())
	}
	return s, s.calls > 0
}

// NoteWhy keeps why as the reason e's last call went to the origin; it
// allocates only when the reason changed.
func (e *Entry) NoteWhy(r Route, reason, detail string) {
	if e == nil {
		return
	}
	if w := e.why.Load(); w != nil && w.Route == r && w.Reason == reason && w.Detail == detail {
		return
	}
	e.why.Store(&Why{Route: r, Reason: reason, Detail: detail})
}

// NoteDatasets keeps the datasets e's statement reads (allocates only
// when they changed).
func (e *Entry) NoteDatasets(ds []string) {
	if e == nil || len(ds) == 0 {
		return
	}
	if p := e.datasets.Load(); p != nil && equal(*p, ds) {
		return
	}
	c := append([]string(nil), ds...)
	e.datasets.Store(&c)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (e *Entry) calls() uint64 {
	var n uint64
	for r := range NumRoutes {
		if s, ok := e.read(r); ok {
			n += s.calls
		}
	}
	return n
}

// Latency buckets: bucket i holds durations below bucketBound(i), two per
// power of two from 1µs (so a quantile is within about 20% of the true
// value), the last unbounded.
const numBuckets = 56

func bucketOf(d time.Duration) int {
	us := uint64(d / time.Microsecond)
	if us < 1 {
		return 0
	}
	// 2*log2(us) rounded up to the half power.
	l := bits.Len64(us) - 1 // us in [2^l, 2^(l+1))
	i := 2*l + 1
	if l >= 1 && us >= uint64(math.Round(math.Sqrt2*float64(uint64(1)<<l))) {
		i++
	}
	if i >= numBuckets {
		i = numBuckets - 1
	}
	return i
}

// bucketBound is the upper bound of bucket i.
func bucketBound(i int) time.Duration {
	if i == 0 {
		return time.Microsecond
	}
	return time.Duration(math.Pow(math.Sqrt2, float64(i)) * float64(time.Microsecond))
}

// routeStats are one stripe of one route's counts of an entry; its calls
// are the sum of its buckets.
type routeStats struct {
	rows    atomic.Uint64
	nanos   atomic.Uint64
	maxNano atomic.Uint64
	buckets [numBuckets]atomic.Uint64
}

func (rs *routeStats) record(d time.Duration, rows int64) {
	if rows > 0 {
		rs.rows.Add(uint64(rows))
	}
	rs.nanos.Add(uint64(d))
	for {
		m := rs.maxNano.Load()
		if uint64(d) <= m || rs.maxNano.CompareAndSwap(m, uint64(d)) {
			break
		}
	}
	rs.buckets[bucketOf(d)].Add(1)
}

// quantile estimates the q-quantile from the buckets: the geometric
// middle of the bucket the q-th call fell in (capped at the maximum).
func quantile(b *[numBuckets]uint64, n uint64, q float64, maxd time.Duration) time.Duration {
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	var c uint64
	for i := range b {
		c += b[i]
		if c >= rank {
			lo := time.Duration(0)
			if i > 0 {
				lo = bucketBound(i - 1)
			}
			mid := time.Duration(math.Sqrt(float64(max(lo, time.Microsecond/2)) * float64(bucketBound(i))))
			return min(mid, maxd)
		}
	}
	return maxd
}

// routeTotals are the sums of entries dropped from a scope.
type routeTotals struct {
	calls, rows, nanos [NumRoutes]uint64
}

func (t *routeTotals) add(e *Entry) {
	for r := range NumRoutes {
		if s, ok := e.read(r); ok {
			t.calls[r] += s.calls
			t.rows[r] += s.rows
			t.nanos[r] += s.nanos
		}
	}
}

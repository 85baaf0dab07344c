package stmtstats

import (
	"sort"
	"sync"
	"time"
)

// Stat is one entry as read at one moment: what every output shows.
type Stat struct {
	// Fingerprint is the statement's hash, as 16 hex digits.
	Fingerprint string `json:"fingerprint"`
	Role        string `json:"role"`
	Database    string `json:"database"`
	// Text is the normalised statement ("" until described).
	Text     string   `json:"query"`
	Tables   []string `json:"tables,omitempty"`
	Read     bool     `json:"read"`
	Datasets []string `json:"datasets,omitempty"`
	// Calls, Rows and TotalMS over every route; OriginMS the time of the
	// calls the origin answered (routes origin and fallback).
	Calls    uint64  `json:"calls"`
	Rows     uint64  `json:"rows"`
	TotalMS  float64 `json:"total_ms"`
	OriginMS float64 `json:"origin_ms"`
	// Routes: each route a call took.
	Routes []RouteStat `json:"routes"`
	// Reason and Rule: why the last call sent to the origin went there.
	Reason string `json:"reason,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Route is the route of most calls.
	Route string    `json:"route"`
	First time.Time `json:"first_seen"`
}

// RouteStat is one route's share of a statement's calls.
type RouteStat struct {
	Route   string  `json:"route"`
	Calls   uint64  `json:"calls"`
	Rows    uint64  `json:"rows"`
	TotalMS float64 `json:"total_ms"`
	MeanMS  float64 `json:"mean_ms"`
	P50MS   float64 `json:"p50_ms"`
	P95MS   float64 `json:"p95_ms"`
	P99MS   float64 `json:"p99_ms"`
	MaxMS   float64 `json:"max_ms"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

const hexDigits = "0123456789abcdef"

func hex16(h uint64) string {
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = hexDigits[h&15]
		h >>= 4
	}
	return string(b[:])
}

// stat reads e.
func (e *Entry) stat() Stat {
	st := Stat{Fingerprint: hex16(e.hash), Role: e.scope.Role, Database: e.scope.Database, First: e.first}
	if d := e.desc.Load(); d != nil {
		st.Text, st.Tables, st.Read = d.Text, d.Tables, d.Read
	}
	if p := e.datasets.Load(); p != nil {
		st.Datasets = *p
	}
	var most uint64
	for r := Route(0); r < NumRoutes; r++ {
		sum, ok := e.read(r)
		if !ok {
			continue
		}
		b, n := &sum.buckets, sum.calls
		calls, rows, nanos := n, sum.rows, time.Duration(sum.nanos)
		maxd := time.Duration(sum.max)
		rt := RouteStat{Route: r.String(), Calls: calls, Rows: rows, TotalMS: ms(nanos), MeanMS: ms(nanos) / float64(calls),
			P50MS: ms(quantile(b, n, 0.50, maxd)), P95MS: ms(quantile(b, n, 0.95, maxd)), P99MS: ms(quantile(b, n, 0.99, maxd)),
			MaxMS: ms(maxd)}
		st.Routes = append(st.Routes, rt)
		st.Calls += calls
		st.Rows += rows
		st.TotalMS += rt.TotalMS
		if r.CostsOrigin() {
			st.OriginMS += rt.TotalMS
		}
		if calls > most {
			most, st.Route = calls, rt.Route
		}
	}
	if w := e.why.Load(); w != nil {
		st.Reason, st.Rule = w.Reason, w.Detail
	}
	return st
}

// Filter selects what Snapshot returns.
type Filter struct {
	// Role, when set, keeps only that role's statements.
	Role string
	// Sort: "origin_time" (default), "total_time", "calls".
	Sort string
	// Limit, when above 0, keeps the first Limit.
	Limit int
}

// Snapshot reads every entry that had a call, sorted by f.Sort.
func (s *Store) Snapshot(f Filter) []Stat {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	es := make([]*Entry, 0, len(s.entries))
	for _, e := range s.entries {
		if f.Role == "" || e.scope.Role == f.Role {
			es = append(es, e)
		}
	}
	s.mu.RUnlock()
	out := make([]Stat, 0, len(es))
	for _, e := range es {
		if st := e.stat(); st.Calls > 0 {
			out = append(out, st)
		}
	}
	less := func(a, b *Stat) bool {
		switch f.Sort {
		case "calls":
			if a.Calls != b.Calls {
				return a.Calls > b.Calls
			}
		case "total_time":
			if a.TotalMS != b.TotalMS {
				return a.TotalMS > b.TotalMS
			}
		default:
			if a.OriginMS != b.OriginMS {
				return a.OriginMS > b.OriginMS
			}
			if a.TotalMS != b.TotalMS {
				return a.TotalMS > b.TotalMS
			}
		}
		if a.Fingerprint != b.Fingerprint {
			return a.Fingerprint < b.Fingerprint
		}
		return a.Role+"\x00"+a.Database < b.Role+"\x00"+b.Database
	}
	sort.Slice(out, func(i, j int) bool { return less(&out[i], &out[j]) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out
}

// Total is the sum of a database's (and role's) statements on one route
// since the reset, entries dropped included: SHOW pgaccel.stats.
type Total struct {
	Database string  `json:"database"`
	Role     string  `json:"role"`
	Route    string  `json:"route"`
	Calls    uint64  `json:"calls"`
	Rows     uint64  `json:"rows"`
	TotalMS  float64 `json:"total_ms"`
	MeanMS   float64 `json:"mean_ms"`
	Entries  int     `json:"statements"`
	Reset    string  `json:"since"`
	sortKey  string
	routeIdx Route
}

// Totals sums the entries by database, role and route (role "" for every
// role when f.Role is ""; else only f.Role's).
func (s *Store) Totals(f Filter) []Total {
	if s == nil {
		return nil
	}
	type tk struct {
		scope Scope
		r     Route
	}
	sums := map[tk]*Total{}
	get := func(sc Scope, r Route) *Total {
		k := tk{sc, r}
		t := sums[k]
		if t == nil {
			t = &Total{Database: sc.Database, Role: sc.Role, Route: r.String(), routeIdx: r}
			sums[k] = t
		}
		return t
	}
	s.mu.RLock()
	since := s.since
	for k, e := range s.entries {
		if f.Role != "" && k.scope.Role != f.Role {
			continue
		}
		for r := Route(0); r < NumRoutes; r++ {
			if sum, ok := e.read(r); ok {
				t := get(k.scope, r)
				t.Calls += sum.calls
				t.Rows += sum.rows
				t.TotalMS += ms(time.Duration(sum.nanos))
				t.Entries++
			}
		}
	}
	for sc, ft := range s.folded {
		if f.Role != "" && sc.Role != f.Role {
			continue
		}
		for r := Route(0); r < NumRoutes; r++ {
			if ft.calls[r] > 0 {
				t := get(sc, r)
				t.Calls += ft.calls[r]
				t.Rows += ft.rows[r]
				t.TotalMS += ms(time.Duration(ft.nanos[r]))
			}
		}
	}
	s.mu.RUnlock()
	out := make([]Total, 0, len(sums))
	for _, t := range sums {
		if t.Calls > 0 {
			t.MeanMS = t.TotalMS / float64(t.Calls)
		}
		t.Reset = since.UTC().Format(time.RFC3339)
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Database != b.Database {
			return a.Database < b.Database
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		return a.routeIdx < b.routeIdx
	})
	return out
}

// Info is the store's own state.
type Info struct {
	Entries int       `json:"entries"`
	Max     int       `json:"max"`
	Evicted uint64    `json:"evicted"`
	Since   time.Time `json:"since"`
}

// Info reports the store's size and reset time.
func (s *Store) Info() Info {
	if s == nil {
		return Info{}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Info{Entries: len(s.entries), Max: s.opts.Max, Evicted: s.evicted.Load(), Since: s.since}
}

// timelineMinutes is how far back the timeline goes.
const timelineMinutes = 60

// timeline holds the calls and their time per route per minute over the
// last hour, for the status page's charts. It is sampled (sample): every
// sampleEvery, and when read, the totals of every entry since the last
// sample are added to the current minute.
type timeline struct {
	mu    sync.Mutex
	slots [timelineMinutes]minuteSlot
	// last are the totals at the last sample.
	last [NumRoutes]routeSums
}

type minuteSlot struct {
	minute int64 // unix minute the slot holds (+1: 0 is empty)
	calls  [NumRoutes]uint64
	nanos  [NumRoutes]uint64
}

type routeSums struct{ calls, nanos uint64 }

// sampleEvery is how often the timeline is sampled in the background.
const sampleEvery = 10 * time.Second

// sample adds what every entry counted since the last sample to the
// minute of now.
func (s *Store) sample(now time.Time) {
	var sums [NumRoutes]routeSums
	s.mu.RLock()
	for _, e := range s.entries {
		for r := range NumRoutes {
			if sum, ok := e.read(r); ok {
				sums[r].calls += sum.calls
				sums[r].nanos += sum.nanos
			}
		}
	}
	for _, f := range s.folded {
		for r := range sums {
			sums[r].calls += f.calls[r]
			sums[r].nanos += f.nanos[r]
		}
	}
	s.mu.RUnlock()
	t := &s.timeline
	t.mu.Lock()
	defer t.mu.Unlock()
	m := now.Unix()/60 + 1
	sl := &t.slots[m%timelineMinutes]
	if sl.minute != m {
		*sl = minuteSlot{minute: m}
	}
	for r := range sums {
		dc, dn := sums[r].calls-t.last[r].calls, sums[r].nanos-t.last[r].nanos
		if sums[r].calls < t.last[r].calls || sums[r].nanos < t.last[r].nanos {
			dc, dn = sums[r].calls, sums[r].nanos // a reset since
		}
		sl.calls[r] += dc
		sl.nanos[r] += dn
	}
	t.last = sums
}

// reset empties the timeline (Reset).
func (t *timeline) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.slots, t.last = [timelineMinutes]minuteSlot{}, [NumRoutes]routeSums{}
}

// Minute is one minute of the timeline.
type Minute struct {
	Start time.Time `json:"start"`
	// Calls and Mean (milliseconds) by Route.
	Calls [NumRoutes]uint64  `json:"calls"`
	Mean  [NumRoutes]float64 `json:"mean_ms"`
}

// Timeline returns the last hour, a minute a point, oldest first (minutes
// without calls included, as zeros).
func (s *Store) Timeline() []Minute {
	if s == nil {
		return nil
	}
	nowT := s.opts.Now()
	s.sample(nowT)
	now := nowT.Unix()/60 + 1
	out := make([]Minute, 0, timelineMinutes)
	s.timeline.mu.Lock()
	defer s.timeline.mu.Unlock()
	for m := now - timelineMinutes + 1; m <= now; m++ {
		p := Minute{Start: time.Unix((m-1)*60, 0).UTC()}
		sl := &s.timeline.slots[m%timelineMinutes]
		if sl.minute == m {
			for r := range p.Calls {
				c := sl.calls[r]
				p.Calls[r] = c
				if c > 0 {
					p.Mean[r] = ms(time.Duration(sl.nanos[r])) / float64(c)
				}
			}
		}
		out = append(out, p)
	}
	return out
}

package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// Read-your-writes (runtime.read_your_writes). A transaction that may have
// written a dataset's table, committed through pgaccel, leaves a fence on
// the dataset for the sessions of the configured scope (the session, its
// role, or all): a time before which the commit completed. Their later
// reads of the dataset are answered here only from data that holds the
// commit, and by the origin until then:
//
//   - changes: the dataset's applied WAL position (catalog.Applied) has
//     passed a WAL position read after the commit (WALPosition); a read
//     waits up to max_wait for it, a point read does not wait;
//   - full, append, snapshot: the data served was loaded by a refresh that
//     started after the commit (catalog.DatasetState.DataAsOf);
//   - caching: nothing to wait for: the answers kept for it are dropped
//     at the commit for every session (commitCaching), and an answer asked
//     before the commit is not kept (resultcache), so every answer served
//     after the commit was asked after it.
//
// A fence is dropped once the data has passed it. Where a write's tables
// cannot be told (several statements, DO, CALL, EXECUTE, a function that
// writes), it fences every dataset.

// ReasonReadYourWrites is the route reason of a read the origin answers
// because the data here does not hold the session's own commit yet.
const ReasonReadYourWrites = "read_your_writes"

// Consistency holds what read-your-writes needs across sessions: the
// datasets' state, the fence sets of role and global scope, the origin's
// WAL position reader, and the metrics.
type Consistency struct {
	reg     *catalog.Registry
	scope   string
	maxWait time.Duration
	wal     walClock
	metrics *Metrics

	mu     sync.Mutex
	shared map[string]*fenceSet // by role (scope role) or "" (global)
	// names are the datasets, tables their tables' names in lower case
	// (what a write's text is searched for).
	names, tables []string
}

// NewConsistency returns the read-your-writes state of cfg
// (runtime.read_your_writes); nil when it is off. walPosition reads the
// origin's current WAL insert position (pg_current_wal_insert_lsn()).
func NewConsistency(reg *catalog.Registry, cfg catalog.ReadYourWrites, walPosition func(context.Context) (uint64, error), m *Metrics) *Consistency {
	switch cfg.Scope {
	case catalog.RYWOff:
		return nil
	case "":
		cfg.Scope = catalog.RYWSession
	}
	c := &Consistency{reg: reg, scope: cfg.Scope, maxWait: cfg.MaxWait, wal: walClock{read: walPosition}, metrics: m,
		shared: map[string]*fenceSet{}}
	for _, name := range reg.Names() {
		if ds, ok := reg.Dataset(name); ok && ds.Acceleration.Enabled {
			c.names = append(c.names, name)
			c.tables = append(c.tables, strings.ToLower(ds.Table))
		}
	}
	return c
}

// allDatasets stands for every dataset in a session's written set.
const allDatasets = "\x00all"

// written returns the datasets a statement sent to the origin may have
// written (d its plan): those whose table its text names, in any case and
// anywhere (a string passed to dblink_exec too), or all of them for a
// statement whose effects its text does not show (CALL, EXECUTE, DO,
// several statements). A read that only locks (FOR UPDATE) or writes a
// sequence writes none. A function of the application's that a SELECT
// calls is not seen into (docs/configuration.md says so).
func (c *Consistency) written(sql string, d planner.Decision) []string {
	if !d.Writes() {
		return nil
	}
	low := strings.ToLower(sql)
	switch d.Kind {
	case planner.KindLock, planner.KindDeclare:
		return nil // locks change no row
	case planner.KindSelect:
		// FOR UPDATE or SHARE locks, nextval and setval write a sequence,
		// pg_notify and advisory locks no table: only dblink_exec may
		// change a table's rows, one its text names.
		if !strings.Contains(low, "dblink") {
			return nil
		}
	case planner.KindCall, planner.KindExecute, planner.KindDo, planner.KindMulti, planner.KindOther:
		return []string{allDatasets}
	}
	var out []string
	for i, t := range c.tables {
		if strings.Contains(low, t) {
			out = append(out, c.names[i])
		}
	}
	return out
}

// fenceRef is a session's fence set, made at its first commit that wrote.
type fenceRef struct{ p atomic.Pointer[fenceSet] }

// get returns the set; nil when the session has none.
func (r *fenceRef) get() *fenceSet { return r.p.Load() }

// make returns the set, made for user's sessions in c's scope if need be.
func (r *fenceRef) make(c *Consistency, user string) *fenceSet {
	if fs := r.p.Load(); fs != nil {
		return fs
	}
	r.p.CompareAndSwap(nil, c.fencesFor(user))
	return r.p.Load()
}

// noteWrite records the datasets a statement sent to the origin may write;
// they are fenced once its transaction ends (commitWrites).
func (ss *session) noteWrite(sql string, d planner.Decision) {
	if ss.accel == nil || ss.accel.Consistency == nil {
		return
	}
	ss.acc.written.add(ss.accel.Consistency.written(sql, d))
}

// commitWrites fences the datasets the session's ended transaction may
// have written (the origin relay calls it at the ReadyForQuery that ends
// it, before the client sees it): the sessions of its scope read them
// from data that holds the commit from now on.
func (ss *session) commitWrites() {
	if ss.accel == nil || ss.accel.Consistency == nil {
		return
	}
	c := ss.accel.Consistency
	names := ss.acc.written.take()
	if len(names) == 0 {
		return
	}
	if slices.Contains(names, allDatasets) {
		names = c.names
	}
	ss.acc.fences.make(c, ss.state.User).add(names, time.Now())
}

// fencesFor returns the fence set a session of user keeps its commits in
// and reads by.
func (c *Consistency) fencesFor(user string) *fenceSet {
	key := ""
	switch c.scope {
	case catalog.RYWSession:
		return &fenceSet{}
	case catalog.RYWRole:
		key = user
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fs := c.shared[key]
	if fs == nil {
		fs = &fenceSet{}
		c.shared[key] = fs
	}
	return fs
}

// fence is a dataset's: at is a time before which the writing commit
// completed; lsn, once known, a WAL position at or past it.
type fence struct {
	at  time.Time
	lsn uint64
}

// fenceSet is the fences of one scope. Safe for concurrent use: the
// origin relay adds at a commit, the client loop reads.
type fenceSet struct {
	n  atomic.Int32 // fences held; a read of a set without any is free
	mu sync.Mutex
	m  map[string]fence
}

// add fences datasets at at (a newer fence replaces an older one).
func (fs *fenceSet) add(datasets []string, at time.Time) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = map[string]fence{}
	}
	for _, ds := range datasets {
		if f, ok := fs.m[ds]; !ok || at.After(f.at) {
			fs.m[ds] = fence{at: at}
		}
	}
	fs.n.Store(int32(len(fs.m)))
}

// get returns ds's fence.
func (fs *fenceSet) get(ds string) (fence, bool) {
	if fs.n.Load() == 0 {
		return fence{}, false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.m[ds]
	return f, ok
}

// resolved records the WAL position found for ds's fence f, unless a newer
// fence replaced it.
func (fs *fenceSet) resolved(ds string, f fence) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if cur, ok := fs.m[ds]; ok && cur.at.Equal(f.at) {
		fs.m[ds] = f
	}
}

// passed drops ds's fence f: the data holds it (a newer one stays).
func (fs *fenceSet) passed(ds string, f fence) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if cur, ok := fs.m[ds]; ok && cur.at.Equal(f.at) {
		delete(fs.m, ds)
		fs.n.Store(int32(len(fs.m)))
	}
}

// check reports whether d, a read of datasets the acceleration would
// answer, may be answered here for a session reading by fs; when not, d
// goes to the origin with ReasonReadYourWrites.
func (c *Consistency) check(ctx context.Context, fs *fenceSet, d planner.Decision) (planner.Decision, bool) {
	if fs == nil || fs.n.Load() == 0 {
		return d, true
	}
	for _, name := range d.Datasets {
		f, ok := fs.get(name)
		if !ok {
			continue
		}
		if why := c.holds(ctx, fs, name, f, d); why != "" {
			d.Route, d.Reason, d.Detail = planner.RouteOrigin, ReasonReadYourWrites, why
			return d, false
		}
	}
	return d, true
}

// holds reports "" when the data of dataset name holds fence f (and drops
// it), else why not.
func (c *Consistency) holds(ctx context.Context, fs *fenceSet, name string, f fence, d planner.Decision) string {
	ds, ok := c.reg.Dataset(name)
	if !ok {
		return ""
	}
	switch ds.Acceleration.RefreshMode {
	case catalog.RefreshChanges:
		applied := c.reg.Applied(name)
		if applied == nil {
			return "dataset " + name + " has no applied position"
		}
		if f.lsn == 0 {
			lsn, err := c.wal.after(ctx, f.at)
			if err != nil {
				return "the origin's WAL position after the session's write could not be read: " + err.Error()
			}
			f.lsn = lsn
			fs.resolved(name, f)
		}
		if applied.Position() >= f.lsn {
			fs.passed(name, f)
			return ""
		}
		if d.Point != nil || c.maxWait <= 0 {
			// A point read costs the origin less than a wait.
			c.metrics.rywWait("origin", 0)
			return fmt.Sprintf("dataset %s has not applied the session's write yet", name)
		}
		start := time.Now()
		reached := applied.Wait(ctx, f.lsn, c.maxWait)
		if reached {
			c.metrics.rywWait("reached", time.Since(start))
			fs.passed(name, f)
			return ""
		}
		c.metrics.rywWait("timeout", time.Since(start))
		return fmt.Sprintf("dataset %s did not apply the session's write within read_your_writes.max_wait (%s)", name, c.maxWait)
	case catalog.RefreshCaching:
		// Its answers were dropped at the commit (commitCaching), and one
		// asked before the commit is not kept after it (resultcache.Cache
		// keeps an answer only while the generations it was asked at
		// hold): every answer served now was asked after the commit.
		fs.passed(name, f)
		return ""
	default:
		if c.reg.DataAsOf(name).After(f.at) {
			fs.passed(name, f)
			return ""
		}
		return "dataset " + name + " has not been refreshed since the session's write"
	}
}

// walClock reads the origin's WAL position for fences, one read for all
// the sessions that can share it: a read that started after a commit
// completed returns a position at or past the commit's.
type walClock struct {
	read func(context.Context) (uint64, error)

	mu        sync.Mutex
	last      uint64
	lastStart time.Time
	cur       *walRead
}

type walRead struct {
	start time.Time
	done  chan struct{}
	lsn   uint64
	err   error
}

// walReadTimeout bounds one read of the WAL position.
const walReadTimeout = 2 * time.Second

// after returns a WAL position read after t.
func (c *walClock) after(ctx context.Context, t time.Time) (uint64, error) {
	if c.read == nil {
		return 0, fmt.Errorf("no origin connection to read it on")
	}
	c.mu.Lock()
	if c.last != 0 && c.lastStart.After(t) {
		lsn := c.last
		c.mu.Unlock()
		return lsn, nil
	}
	r := c.cur
	if r == nil || !r.start.After(t) {
		r = &walRead{start: time.Now(), done: make(chan struct{})}
		c.cur = r
		go c.run(r)
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.lsn, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (c *walClock) run(r *walRead) {
	ctx, cancel := context.WithTimeout(context.Background(), walReadTimeout)
	defer cancel()
	r.lsn, r.err = c.read(ctx)
	c.mu.Lock()
	if r.err == nil && r.start.After(c.lastStart) {
		c.last, c.lastStart = r.lsn, r.start
	}
	if c.cur == r {
		c.cur = nil
	}
	c.mu.Unlock()
	close(r.done)
}

// ReasonMaxStaleness is the route reason of a read the origin answers
// because the data here is older than the dataset's or the session's
// max_staleness.
const ReasonMaxStaleness = "max_staleness"

// maxStalenessSetting reads pgaccel.max_staleness: a duration (5s, 1m,
// 500ms, or Postgres' 5 s), or off, 0 or "" for none; detail says why
// reads go to the origin when the value is none of these.
func maxStalenessSetting(v string) (bound time.Duration, detail string) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "", "0", "off", "none", "-1":
		return 0, ""
	}
	d, err := catalog.ParseDuration(strings.ReplaceAll(v, " ", ""))
	if err != nil || d <= 0 {
		return 0, "pgaccel.max_staleness = " + quoteLiteral(v) + " is not a duration such as 5s"
	}
	return d, ""
}

// checkStaleness reports whether d, a read the acceleration would answer,
// reads data within the bounds of the datasets' max_staleness and the
// session's (the tighter applies); when not, d goes to the origin with
// ReasonMaxStaleness. Caching datasets are bounded by their TTL instead.
func checkStaleness(reg *catalog.Registry, info *originlink.SessionInfo, d planner.Decision) (planner.Decision, bool) {
	if info.MaxStalenessDetail != "" {
		d.Route, d.Reason, d.Detail = planner.RouteOrigin, ReasonMaxStaleness, info.MaxStalenessDetail
		return d, false
	}
	if d.Caching || info.MaxStaleness == 0 && !reg.Bounded() {
		return d, true
	}
	var now time.Time
	for _, name := range d.Datasets {
		ds, ok := reg.Dataset(name)
		if !ok {
			continue
		}
		bound := ds.Acceleration.MaxStaleness
		if s := info.MaxStaleness; s > 0 && (bound == 0 || s < bound) {
			bound = s
		}
		if bound <= 0 {
			continue
		}
		if now.IsZero() {
			now = time.Now()
		}
		if asOf := reg.DataAsOf(name); catalog.Stale(asOf, now, bound) {
			age := "unknown"
			if !asOf.IsZero() {
				age = now.Sub(asOf).Round(time.Millisecond).String()
			}
			d.Route, d.Reason, d.Detail = planner.RouteOrigin, ReasonMaxStaleness,
				fmt.Sprintf("the data of dataset %s is %s old, past max_staleness %s", name, age, bound)
			return d, false
		}
	}
	return d, true
}

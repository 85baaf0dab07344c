package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of ResolverOptions.
const (
	DefaultResolverTTL        = 5 * time.Second
	DefaultResolverMaxEntries = 10000
)

// ResolverOptions tune an OriginResolver. Zero values mean the defaults.
type ResolverOptions struct {
	// TTL is how long an answer is reused (DefaultResolverTTL). A relation
	// created or dropped at the origin is seen at most this late.
	TTL time.Duration
	// MaxEntries bounds the cache (DefaultResolverMaxEntries).
	MaxEntries int
	// MaxStale is how long past its expiry an answer keeps serving while
	// the origin cannot be reached (0: never), so that an outage does
	// not stop the acceleration from answering (auth.max_stale).
	MaxStale time.Duration
	// Names, when set, lists the datasets' table names: each lookup asks
	// the origin about them too, on the same search path, so that a
	// session may read a dataset it never read before while the origin
	// is down.
	Names func() []string
}

// OriginResolver resolves relation names by asking the origin's catalogs
// (as the refresh account, through pool) and caches the answers briefly.
// TableRef is the accelerator's.
type OriginResolver struct {
	pool     *pgxpool.Pool
	tableRef func(dataset string) string
	cache    *ttlCache[relationAnswer]
	volatile *ttlCache[bool] // AnyVolatile's answers (caching.go)
	names    func() []string
}

var _ Resolver = (*OriginResolver)(nil)

type relationAnswer struct {
	schema           string
	inCatalog, found bool
}

// NewOriginResolver returns a Resolver over the origin behind pool;
// tableRef names a dataset's DuckDB table.
func NewOriginResolver(pool *pgxpool.Pool, tableRef func(dataset string) string, opts ResolverOptions) *OriginResolver {
	if opts.TTL <= 0 {
		opts.TTL = DefaultResolverTTL
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultResolverMaxEntries
	}
	return &OriginResolver{pool: pool, tableRef: tableRef, cache: newTTLCache[relationAnswer](opts.TTL, opts.MaxEntries, opts.MaxStale),
		volatile: newTTLCache[bool](opts.TTL, opts.MaxEntries, opts.MaxStale), names: opts.Names}
}

// TableRef returns the DuckDB reference of a dataset's table.
func (o *OriginResolver) TableRef(dataset string) string { return o.tableRef(dataset) }

// relationSQL lists the schemas among $2 that hold a relation named one
// of $1, with its name. Every kind of pg_class entry counts: Postgres
// stops at the first schema holding the name even when it is an index or
// a sequence.
const relationSQL = `SELECT c.relname, n.nspname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = ANY($1::text[]) AND n.nspname = ANY($2::text[])`

// Relation returns the first schema of searchPath holding a relation
// named name, and whether pg_catalog holds one too.
func (o *OriginResolver) Relation(ctx context.Context, searchPath []string, name string) (string, bool, bool, error) {
	key := relationKey(searchPath, name)
	ans, err := o.cache.get(ctx, key, func(ctx context.Context) (relationAnswer, error) {
		return o.query(ctx, searchPath, name)
	})
	return ans.schema, ans.inCatalog, ans.found, err
}

func (o *OriginResolver) query(ctx context.Context, searchPath []string, name string) (relationAnswer, error) {
	schemas := append([]string{"pg_catalog"}, searchPath...)
	names := []string{name}
	if o.names != nil {
		names = append(names, o.names()...) // a repeated name is harmless
	}
	rows, err := o.pool.Query(ctx, relationSQL, names, schemas)
	if err != nil {
		return relationAnswer{}, fmt.Errorf("resolve relation %s: %w", name, err)
	}
	defer rows.Close()
	holds := map[[2]string]bool{} // {name, schema}
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			return relationAnswer{}, fmt.Errorf("resolve relation %s: %w", name, err)
		}
		holds[[2]string{n, s}] = true
	}
	if err := rows.Err(); err != nil {
		return relationAnswer{}, fmt.Errorf("resolve relation %s: %w", name, err)
	}
	answer := func(n string) relationAnswer {
		ans := relationAnswer{inCatalog: holds[[2]string{n, "pg_catalog"}]}
		for _, s := range searchPath {
			if holds[[2]string{n, s}] {
				ans.schema, ans.found = s, true
				break
			}
		}
		return ans
	}
	// The datasets' names on this path, for later lookups (get stores
	// name's own).
	for _, n := range names[1:] {
		if n != name {
			o.cache.put(relationKey(searchPath, n), answer(n))
		}
	}
	return answer(name), nil
}

func relationKey(searchPath []string, name string) string {
	n := len(name)
	for _, s := range searchPath {
		n += len(s) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range searchPath {
		b.WriteString(s)
		b.WriteByte(0)
	}
	b.WriteString(name)
	return b.String()
}

// ttlCache caches values for a while, bounded in size, and lets one caller
// load a missing key while the others wait for its answer. Errors are not
// cached.
type ttlCache[V any] struct {
	ttl      time.Duration
	max      int
	maxStale time.Duration
	now      func() time.Time

	mu       sync.Mutex
	entries  map[string]ttlEntry[V]
	inflight map[string]*loadCall[V]
	version  atomic.Uint64 // counts the values stored (LookupsVersion)
	keys     atomic.Uint64 // counts the keys added (LookupsVersion)
}

type ttlEntry[V any] struct {
	val     V
	expires time.Time
}

type loadCall[V any] struct {
	done    chan struct{}
	started time.Time
	val     V
	err     error
}

func newTTLCache[V any](ttl time.Duration, max int, maxStale time.Duration) *ttlCache[V] {
	return &ttlCache[V]{
		ttl:      ttl,
		max:      max,
		maxStale: maxStale,
		now:      time.Now,
		entries:  make(map[string]ttlEntry[V]),
		inflight: make(map[string]*loadCall[V]),
	}
}

// lookup returns a fresh cached value.
func (c *ttlCache[V]) lookup(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if ok && c.now().Before(e.expires) {
		return e.val, true
	}
	var zero V
	return zero, false
}

// lookupStale returns an expired value still within maxStale of its
// expiry, for when the origin cannot be reached (unreachable).
func (c *ttlCache[V]) lookupStale(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if ok && c.maxStale > 0 && c.now().Before(e.expires.Add(c.maxStale)) {
		return e.val, true
	}
	var zero V
	return zero, false
}

// Unreachable reports whether err means the origin did not answer (no
// connection, a broken one, a timeout, a server shutting down: SQLSTATE
// classes 08 and 57P), as opposed to an answer that is an error: only
// then may a stale value serve.
func Unreachable(err error) bool {
	var pe *pgconn.PgError
	if err == nil {
		return false
	}
	if !errors.As(err, &pe) {
		return true
	}
	return UnreachableCode(pe.Code)
}

// UnreachableCode reports whether an error of SQLSTATE code says the
// origin is not there to answer (classes 08 and 57P: connection failures,
// shutting down, starting up).
func UnreachableCode(code string) bool {
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P")
}

// get returns the cached value of key or loads it. One load runs for all
// the callers that miss key at the same time, apart from them (bounded by
// loadTimeout, not by a caller's ctx), so that a caller that stops waiting
// leaves it to answer the next. When an expired value may still serve
// (maxStale), a caller waits for the load at most staleWait from its
// start: an origin that does not answer (a partition, a frozen host)
// holds the connection rather than refusing it, and the statement being
// planned is then planned with the stale value, as when the origin is
// down.
func (c *ttlCache[V]) get(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	e, cached := c.entries[key]
	if cached && c.now().Before(e.expires) {
		c.mu.Unlock()
		return e.val, nil
	}
	staleOK := cached && c.maxStale > 0 && c.now().Before(e.expires.Add(c.maxStale))
	call, ok := c.inflight[key]
	if !ok {
		call = &loadCall[V]{done: make(chan struct{}), started: time.Now()}
		c.inflight[key] = call
		go c.load(key, call, load)
	}
	c.mu.Unlock()
	var wait <-chan time.Time
	if staleOK {
		t := time.NewTimer(max(0, time.Until(call.started.Add(staleWait))))
		defer t.Stop()
		wait = t.C
	}
	select {
	case <-call.done:
		if call.err == nil || !staleOK || !Unreachable(call.err) {
			return call.val, call.err
		}
	case <-wait:
	case <-ctx.Done():
		if !staleOK {
			var zero V
			return zero, ctx.Err()
		}
	}
	return e.val, nil
}

// staleWait and loadTimeout bound the waits of get.
const (
	staleWait   = time.Second
	loadTimeout = 10 * time.Second
)

// load runs call's load of key and stores its answer.
func (c *ttlCache[V]) load(key string, call *loadCall[V], load func(context.Context) (V, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	call.val, call.err = load(ctx)
	c.mu.Lock()
	delete(c.inflight, key)
	if call.err == nil {
		c.store(key, call.val)
	} else if e, ok := c.entries[key]; ok && Unreachable(call.err) && c.maxStale > 0 && c.now().Before(e.expires.Add(c.maxStale)) {
		call.val, call.err = e.val, nil
	}
	c.mu.Unlock()
	close(call.done)
}

// put stores a value.
func (c *ttlCache[V]) put(key string, val V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(key, val)
}

// store adds an entry; c.mu is held. When the cache is full it drops the
// expired entries, then, if still full, arbitrary ones.
func (c *ttlCache[V]) store(key string, val V) {
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	if _, ok := c.entries[key]; !ok {
		c.keys.Add(1)
	}
	c.entries[key] = ttlEntry[V]{val: val, expires: now.Add(c.ttl)}
	c.version.Add(1)
}

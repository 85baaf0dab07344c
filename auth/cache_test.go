package auth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// clock is a settable time for the cache's policy tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// origin is a stand-in for the lookup's answers in the policy tests (the
// lookup itself is tested against Postgres in lookup_test.go and below).
type origin struct {
	mu      sync.Mutex
	entries map[string]Entry
	down    bool
	calls   atomic.Int32
}

func (o *origin) fetch(ctx context.Context, db, role string) (Entry, error) {
	o.calls.Add(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		return Entry{}, errors.New("connection refused")
	}
	return o.entries[role], nil
}

func (o *origin) set(role string, e Entry, down bool) {
	o.mu.Lock()
	if e.Found || role != "" {
		o.entries[role] = e
	}
	o.down = down
	o.mu.Unlock()
}

func TestCache_Policy(t *testing.T) {
	v1, _ := scramVerifier(t, "one", []byte("salt-one"), 4096)
	v2, _ := scramVerifier(t, "two", []byte("salt-two"), 4096)
	alice := Entry{Found: true, Verifier: v1, CanConnect: true}
	o := &origin{entries: map[string]Entry{"alice": alice}}
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := &Cache{Fetch: o.fetch, TTL: time.Minute, MaxStale: time.Hour, NegativeTTL: 5 * time.Second, RefetchEvery: time.Second, Now: clk.now}
	ctx := context.Background()
	get := func(role string) (Entry, bool, error) { return c.Get(ctx, "db", role) }

	if e, stale, err := get("alice"); err != nil || stale || !e.Verifier.Equal(v1) {
		t.Fatalf("first get: %v %v %v", e, stale, err)
	}
	clk.add(10 * time.Second)
	get("alice")
	if n := o.calls.Load(); n != 1 {
		t.Fatalf("a fresh entry was fetched again: %d lookups", n)
	}
	// In the last quarter of its life: served, and refreshed behind.
	clk.add(40 * time.Second)
	get("alice")
	deadline := time.Now().Add(5 * time.Second)
	for o.calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := o.calls.Load(); n != 2 {
		t.Fatalf("no refresh ahead of expiry: %d lookups", n)
	}
	// The origin goes down: the entry serves, stale, until MaxStale.
	o.set("", Entry{}, true)
	clk.add(2 * time.Minute)
	if e, stale, err := get("alice"); err != nil || !stale || !e.Found {
		t.Fatalf("during the outage: %v %v %v", e, stale, err)
	}
	clk.add(2 * time.Hour)
	if _, _, err := get("alice"); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("past max_stale: %v", err)
	}
	// Back up, with a new password: a failed proof refetches once.
	o.set("alice", Entry{Found: true, Verifier: v2, CanConnect: true}, false)
	if e, changed, err := c.Refetch(ctx, "db", "alice"); err != nil || !changed || !e.Verifier.Equal(v2) {
		t.Fatalf("refetch: %v %v %v", e, changed, err)
	}
	n := o.calls.Load()
	if _, changed, _ := c.Refetch(ctx, "db", "alice"); changed || o.calls.Load() != n {
		t.Fatalf("a second refetch within RefetchEvery went to the origin")
	}
	// Unknown roles are remembered briefly.
	for i := 0; i < 3; i++ {
		if e, _, err := get("mallory"); err != nil || e.Found {
			t.Fatalf("unknown role: %v %v", e, err)
		}
	}
	if o.calls.Load() != n+1 {
		t.Fatalf("an unknown role was looked up %d times", o.calls.Load()-n)
	}
	clk.add(6 * time.Second)
	get("mallory")
	if o.calls.Load() != n+2 {
		t.Fatal("an unknown role was remembered past NegativeTTL")
	}
	// A role the origin drops is refused as soon as it is looked up.
	o.set("alice", Entry{}, false)
	clk.add(2 * time.Minute)
	if e, _, err := get("alice"); err != nil || e.Found {
		t.Fatalf("a dropped role: %v %v", e, err)
	}
	// MaxStale 0: never served stale.
	c2 := &Cache{Fetch: o.fetch, TTL: time.Minute, Now: clk.now}
	o.set("bob", alice, false)
	c2.Get(ctx, "db", "bob")
	o.set("", Entry{}, true)
	clk.add(2 * time.Minute)
	if _, _, err := c2.Get(ctx, "db", "bob"); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("max_stale 0 served a stale entry: %v", err)
	}
}

// TestCache_Persist writes the cache (mode 0600), reads it into a new one
// that serves with the origin down, and refuses a file others may read.
func TestCache_Persist(t *testing.T) {
	v, _ := scramVerifier(t, "pw", []byte("salt"), 4096)
	o := &origin{entries: map[string]Entry{"alice": {Found: true, Verifier: v, CanConnect: true}}}
	path := filepath.Join(t.TempDir(), "auth-verifiers.json")
	c := &Cache{Fetch: o.fetch, TTL: time.Minute, MaxStale: time.Hour, Path: path}
	ctx := context.Background()
	if _, _, err := c.Get(ctx, "db", "alice"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the cache file: %v, %v", info, err)
	}
	o.set("", Entry{}, true)
	restarted := &Cache{Fetch: o.fetch, TTL: time.Nanosecond, MaxStale: time.Hour, Path: path}
	if err := restarted.Load(); err != nil {
		t.Fatal(err)
	}
	e, stale, err := restarted.Get(ctx, "db", "alice")
	if err != nil || !stale || !e.Verifier.Equal(v) || !e.CanConnect {
		t.Fatalf("after a restart in an outage: %v %v %v", e, stale, err)
	}
	// An md5 role is never written.
	o.set("mallory", Entry{Found: true, Verifier: Verifier{Kind: MD5, MD5: "0123456789abcdef0123456789abcdef"}}, false)
	if _, _, err := c.Get(ctx, "db", "mallory"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || strings.Contains(string(data), "md5") || strings.Contains(string(data), "mallory") {
		t.Fatalf("the cache file holds an md5 verifier: %s %v", data, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (&Cache{Path: path}).Load(); err == nil {
		t.Fatal("a cache file others may read was loaded")
	}
}

// TestCache_PasswordChangedAtTheOrigin: with the real lookup, a password
// changed at the origin is refused with the old verifier's exchange and,
// after the refetch a failed proof makes, accepted with the new one.
func TestCache_PasswordChangedAtTheOrigin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lookup := roleAndLookup(ctx, t, "auth_rotating", "old-pw", "auth_lookup3")
	var mu sync.Mutex
	c := &Cache{TTL: time.Hour, MaxStale: time.Hour, RefetchEvery: time.Second,
		Fetch: func(ctx context.Context, db, role string) (Entry, error) {
			mu.Lock()
			defer mu.Unlock()
			return Lookup(ctx, lookup, role, db)
		}}
	login := func(e Entry, password string) error {
		addr, _ := fakeServer(t, e.Verifier)
		conn, err := pgconn.Connect(ctx, "postgres://auth_rotating:"+password+"@"+addr+"/db?sslmode=disable")
		if err == nil {
			conn.Close(ctx)
		}
		return err
	}
	e, _, err := c.Get(ctx, srv.Database, "auth_rotating")
	if err != nil || login(e, "old-pw") != nil {
		t.Fatalf("old password: %v", err)
	}
	if err := srv.Exec(ctx, "ALTER ROLE auth_rotating PASSWORD 'new-pw'"); err != nil {
		t.Fatal(err)
	}
	e, _, _ = c.Get(ctx, srv.Database, "auth_rotating") // still the cached verifier
	if login(e, "new-pw") == nil {
		t.Fatal("the new password passed against the old verifier")
	}
	e, changed, err := c.Refetch(ctx, srv.Database, "auth_rotating")
	if err != nil || !changed {
		t.Fatalf("refetch: changed %v, %v", changed, err)
	}
	if err := login(e, "new-pw"); err != nil {
		t.Fatalf("the new password after the refetch: %v", err)
	}
	if login(e, "old-pw") == nil {
		t.Fatal("the old password still passes")
	}
}

// TestCache_ConcurrentMissesAreOneLookup: a burst of first logins of one
// role waits for one lookup.
func TestCache_ConcurrentMissesAreOneLookup(t *testing.T) {
	v, _ := scramVerifier(t, "pw", []byte("salt"), 4096)
	var calls atomic.Int32
	release := make(chan struct{})
	c := &Cache{TTL: time.Minute, Fetch: func(ctx context.Context, db, role string) (Entry, error) {
		calls.Add(1)
		<-release
		return Entry{Found: true, Verifier: v}, nil
	}}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, _, err := c.Get(context.Background(), "db", "alice")
			if err == nil && !e.Found {
				err = errors.New("not found")
			}
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them all miss
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d lookups for one burst", n)
	}
}

// TestCache_HungOrigin: a lookup the origin never answers (a partition, a
// frozen host) holds a login with an expired entry for StaleWait at most,
// then the entry serves; the logins during that lookup, and for
// RetryAfter after it failed, do not wait; a role with no entry waits for
// the lookup and is refused as unreachable when it gives up.
func TestCache_HungOrigin(t *testing.T) {
	v, _ := scramVerifier(t, "pw", []byte("salt-hung"), 4096)
	var hung atomic.Bool
	var calls atomic.Int32
	c := &Cache{
		TTL: 50 * time.Millisecond, MaxStale: time.Hour,
		StaleWait: 500 * time.Millisecond, LookupTimeout: 4 * time.Second, RetryAfter: time.Hour,
		Fetch: func(ctx context.Context, db, role string) (Entry, error) {
			calls.Add(1)
			if hung.Load() {
				<-ctx.Done() // answers nothing until the lookup gives up
				return Entry{}, ctx.Err()
			}
			return Entry{Found: true, Verifier: v, CanConnect: true}, nil
		},
	}
	ctx := context.Background()
	if e, stale, err := c.Get(ctx, "db", "alice"); err != nil || stale || !e.Found {
		t.Fatalf("first get: %v %v %v", e, stale, err)
	}
	hung.Store(true)
	time.Sleep(60 * time.Millisecond) // expired

	start := time.Now()
	e, stale, err := c.Get(ctx, "db", "alice")
	if err != nil || !stale || !e.Verifier.Equal(v) {
		t.Fatalf("get while the origin hangs: %v %v %v", e, stale, err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("the login waited %v for a hung origin, StaleWait is 500ms", waited)
	}
	// The lookup is still running: the next login does not wait for it.
	start = time.Now()
	if _, stale, err := c.Get(ctx, "db", "alice"); err != nil || !stale {
		t.Fatalf("second get: %v %v", stale, err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("a login during the running lookup waited %v", waited)
	}
	// No entry: the login waits for the lookup, which gives up.
	if _, _, err := c.Get(ctx, "db", "bob"); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("unknown role while the origin hangs: %v, want ErrUnreachable", err)
	}
	// After the failure, logins serve the entry at once (RetryAfter).
	n := calls.Load()
	start = time.Now()
	if _, stale, err := c.Get(ctx, "db", "alice"); err != nil || !stale {
		t.Fatalf("get after the failed lookup: %v %v", stale, err)
	}
	if waited := time.Since(start); waited > 400*time.Millisecond {
		t.Errorf("a login after the failed lookup waited %v (StaleWait is 500ms)", waited)
	}
	// The origin answers again: a lookup still runs for the key, and its
	// answer serves the logins after it.
	hung.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		e, stale, err := c.Get(ctx, "db", "alice")
		if err == nil && !stale && e.Found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fresh entry after the origin answered again: %v %v (lookups %d, %d before)", stale, err, calls.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

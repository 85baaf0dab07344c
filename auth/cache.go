package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Cache holds the origin's entries (verifier, CONNECT) by (database,
// role), so a login needs no origin round trip while its entry is fresh,
// and can still be verified while the origin is unreachable.
//
//   - An entry is fresh for TTL; one read in its last quarter is refreshed
//     in the background, so a busy role never waits for the origin.
//   - Unknown roles are remembered for NegativeTTL (a few seconds), so a
//     burst of bad logins is one lookup, and a role created at the origin
//     is seen soon.
//   - A failed proof may refetch the entry once (Refetch), at most once
//     per RefetchEvery for a key: a password changed at the origin is
//     taken at the next login, and wrong passwords cannot hammer it.
//   - When a lookup fails (the origin is down), an entry keeps serving
//     until MaxStale past its expiry (0: never), then logins fail.
//   - An origin that does not answer (a network partition, a frozen
//     host: the connection hangs rather than fails) holds a login for at
//     most StaleWait when an expired entry can serve: past it the entry
//     serves and the lookup goes on in the background, bounded by
//     LookupTimeout, for the next logins. Once a lookup has failed, the
//     logins of the next RetryAfter serve the expired entry without
//     waiting (one lookup at a time still tries the origin).
//   - A lookup that answers replaces the entry at once: a role dropped,
//     expired or set NOLOGIN is refused from then on.
//   - With a Path, entries are written there (mode 0600, replaced
//     atomically) and read at start, so logins work after a restart in an
//     outage. Only verifiers are written: they are what the origin stores,
//     and no login to the origin can be made from them alone.
type Cache struct {
	Fetch        func(ctx context.Context, database, role string) (Entry, error)
	TTL          time.Duration
	MaxStale     time.Duration
	NegativeTTL  time.Duration
	RefetchEvery time.Duration
	// StaleWait, LookupTimeout and RetryAfter (see above; 0: 2s, 10s and
	// 5s).
	StaleWait     time.Duration
	LookupTimeout time.Duration
	RetryAfter    time.Duration
	Path          string           // "" keeps entries in memory only
	Now           func() time.Time // time.Now when nil

	mu      sync.Mutex
	entries map[cacheKey]*cached
	flights map[cacheKey]*flight // lookups running for a Get
	// failedAt is when a lookup last failed (zero once one answers).
	failedAt time.Time
}

// flight is one lookup that concurrent Gets of a key wait for.
type flight struct {
	done    chan struct{}
	started time.Time
	e       Entry
	err     error
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

type cacheKey struct{ Database, Role string }

type cached struct {
	e         Entry
	fetched   time.Time
	refetched time.Time // last refetch after a failed proof
	updating  bool      // a background refresh runs
}

// ErrUnreachable wraps a lookup that failed with no entry to serve.
var ErrUnreachable = errors.New("auth: the origin cannot be reached to verify the login")

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// life is how long an entry is fresh: TTL, or NegativeTTL for a role the
// origin does not know.
func (c *Cache) life(e Entry) time.Duration {
	if !e.Found && c.NegativeTTL > 0 && c.NegativeTTL < c.TTL {
		return c.NegativeTTL
	}
	return c.TTL
}

// Get returns the entry of role for database, from the cache when fresh.
// stale is true when the origin could not be reached and an expired entry
// (within MaxStale) serves.
func (c *Cache) Get(ctx context.Context, database, role string) (e Entry, stale bool, err error) {
	k := cacheKey{database, role}
	now := c.now()
	c.mu.Lock()
	ce := c.entries[k]
	if ce != nil {
		age := now.Sub(ce.fetched)
		life := c.life(ce.e)
		if age < life {
			if age >= life*3/4 && !ce.updating {
				ce.updating = true
				go c.refresh(k) // ahead of expiry
			}
			e := ce.e
			c.mu.Unlock()
			return e, false, nil
		}
	}
	// An expired entry that may still serve bounds the wait.
	staleOK := ce != nil && ce.e.Found && c.MaxStale > 0 && now.Sub(ce.fetched) < c.life(ce.e)+c.MaxStale
	f := c.flightLocked(k)
	if staleOK && !c.failedAt.IsZero() && now.Sub(c.failedAt) < orDefault(c.RetryAfter, 5*time.Second) {
		e := ce.e
		c.mu.Unlock()
		return e, true, nil // the origin failed a moment ago: no wait
	}
	c.mu.Unlock()
	var wait <-chan time.Time
	if staleOK {
		t := time.NewTimer(max(0, time.Until(f.started.Add(orDefault(c.StaleWait, 2*time.Second)))))
		defer t.Stop()
		wait = t.C
	}
	select {
	case <-f.done:
		if f.err == nil {
			return f.e, false, nil
		}
		err = f.err
	case <-wait:
		err = errors.New("the origin has not answered the lookup")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if staleOK {
		return ce.e, true, nil
	}
	return Entry{}, false, fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// flightLocked returns the lookup of k running, or starts one: one lookup
// for all the Gets that miss k at the same time (a burst of first logins
// is one lookup), which stores its answer. It runs apart from the Gets,
// bounded by LookupTimeout, so that a login that stops waiting (StaleWait,
// or its client gone) leaves it to answer the next. c.mu is held.
func (c *Cache) flightLocked(k cacheKey) *flight {
	if f := c.flights[k]; f != nil {
		return f
	}
	if c.flights == nil {
		c.flights = map[cacheKey]*flight{}
	}
	f := &flight{done: make(chan struct{}), started: time.Now()}
	c.flights[k] = f
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), orDefault(c.LookupTimeout, 10*time.Second))
		defer cancel()
		at := c.now()
		f.e, f.err = c.Fetch(ctx, k.Database, k.Role)
		if f.err == nil {
			c.store(k, f.e, at, false)
		}
		c.mu.Lock()
		delete(c.flights, k)
		if f.err != nil {
			c.failedAt = c.now()
		} else {
			c.failedAt = time.Time{}
		}
		c.mu.Unlock()
		close(f.done)
	}()
	return f
}

// Refetch looks role up again after its proof failed, unless that was done
// within RefetchEvery; changed reports whether the origin's verifier
// differs from the cached one (then the login should be tried again
// with e).
func (c *Cache) Refetch(ctx context.Context, database, role string) (e Entry, changed bool, err error) {
	k := cacheKey{database, role}
	now := c.now()
	c.mu.Lock()
	ce := c.entries[k]
	if ce != nil && !ce.refetched.IsZero() && now.Sub(ce.refetched) < c.RefetchEvery {
		e := ce.e
		c.mu.Unlock()
		return e, false, nil
	}
	var old Entry
	if ce != nil {
		old = ce.e
		ce.refetched = now
	}
	c.mu.Unlock()
	// Waited for as a stale entry is (StaleWait): the login it is for
	// fails either way when the origin does not answer.
	ctx, cancel := context.WithTimeout(ctx, orDefault(c.StaleWait, 2*time.Second))
	defer cancel()
	fresh, err := c.Fetch(ctx, database, role)
	if err != nil {
		return old, false, err
	}
	c.store(k, fresh, now, true)
	return fresh, fresh.Found != old.Found || !fresh.Verifier.Equal(old.Verifier) || fresh.CanConnect != old.CanConnect, nil
}

// refresh fetches k in the background.
func (c *Cache) refresh(k cacheKey) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fresh, err := c.Fetch(ctx, k.Database, k.Role)
	c.mu.Lock()
	if ce := c.entries[k]; ce != nil {
		ce.updating = false
	}
	c.mu.Unlock()
	if err == nil {
		c.store(k, fresh, c.now(), false)
	}
}

func (c *Cache) store(k cacheKey, e Entry, at time.Time, refetched bool) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[cacheKey]*cached{}
	}
	ce := &cached{e: e, fetched: at}
	if old := c.entries[k]; old != nil {
		ce.refetched = old.refetched
	}
	if refetched {
		ce.refetched = at
	}
	c.entries[k] = ce
	c.mu.Unlock()
	if c.Path != "" {
		_ = c.Save() // best effort: the next store writes again
	}
}

// persisted is the file's form of one entry.
type persisted struct {
	Database   string    `json:"database"`
	Role       string    `json:"role"`
	Found      bool      `json:"found"`
	Verifier   string    `json:"verifier,omitempty"`
	CanConnect bool      `json:"can_connect"`
	ValidUntil time.Time `json:"valid_until,omitempty"`
	Fetched    time.Time `json:"fetched"`
}

// Save writes the known roles' entries to Path (mode 0600, replaced
// atomically).
func (c *Cache) Save() error {
	if c.Path == "" {
		return nil
	}
	c.mu.Lock()
	var out []persisted
	for k, ce := range c.entries {
		if !ce.e.Found || ce.e.Verifier.Kind == MD5 {
			continue // an md5 verifier is a login credential: never on disk
		}
		out = append(out, persisted{Database: k.Database, Role: k.Role, Found: true, Verifier: ce.e.Verifier.text(),
			CanConnect: ce.e.CanConnect, ValidUntil: ce.e.ValidUntil, Fetched: ce.fetched})
	}
	c.mu.Unlock()
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := WritePrivateFile(c.Path, data); err != nil {
		return fmt.Errorf("auth: save verifiers: %w", err)
	}
	return nil
}

// Load reads the entries Save wrote. A missing file is no entry; a file
// others may read is refused (its verifiers may have been seen).
func (c *Cache) Load() error {
	if c.Path == "" {
		return nil
	}
	data, err := ReadPrivateFile(c.Path)
	if err != nil {
		return fmt.Errorf("auth: load verifiers: %w", err)
	}
	if data == nil {
		return nil
	}
	var in []persisted
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("auth: load verifiers from %s: %w", c.Path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[cacheKey]*cached{}
	}
	for _, p := range in {
		v, err := ParseVerifier(p.Verifier)
		if p.Verifier != "" && err != nil {
			return fmt.Errorf("auth: load verifiers from %s: %w", c.Path, err)
		}
		c.entries[cacheKey{p.Database, p.Role}] = &cached{e: Entry{Found: p.Found, Verifier: v, CanConnect: p.CanConnect, ValidUntil: p.ValidUntil}, fetched: p.Fetched}
	}
	return nil
}

// text is v in pg_authid's form (for the cache file).
func (v Verifier) text() string {
	switch v.Kind {
	case SCRAM:
		return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", v.Iterations, b64(v.Salt), b64(v.StoredKey), b64(v.ServerKey))
	case MD5:
		return "md5" + v.MD5
	}
	return ""
}

// WritePrivateFile replaces path atomically with data, mode 0600 (for the
// files of auth.persist).
func WritePrivateFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadPrivateFile reads a file WritePrivateFile wrote: nil for a missing
// one, an error for one that others may read (what it holds may have been
// seen; pgaccel writes it again).
func ReadPrivateFile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %v): remove it, pgaccel writes it again with mode 0600", path, info.Mode().Perm())
	}
	return os.ReadFile(path)
}

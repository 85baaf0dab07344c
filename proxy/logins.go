package proxy

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pgaccel/pgaccel/auth"
)

// loginCache keeps, per login key (database, role and the other startup
// parameters: loginKeyOf), what the origin said when a session of that
// key started: its ParameterStatus set, and the session info read before
// the session changed anything. With it a login completes without the
// origin (auth.mode proxy): the client gets the same ParameterStatus
// messages, and the acceleration plans with the same search path and
// output settings. Nothing in it is a secret (no password, no verifier,
// no query); with a path it is kept on disk (mode 0600) for a restart
// during an outage.
type loginCache struct {
	path string

	mu      sync.Mutex
	entries map[string]*loginState
}

// loginState is what a login key's sessions start with.
type loginState struct {
	Params map[string]string `json:"params"`
	// Info is the session info (valid false until one was read).
	Info     loginInfo `json:"info"`
	Observed time.Time `json:"observed"`
}

// loginInfo is sessionInfo in the cache's form (temporary tables are
// never part of a session's start).
type loginInfo struct {
	Valid            bool          `json:"valid"`
	User             string        `json:"user"`
	SearchPath       []string      `json:"search_path"`
	ExtraFloatDigits string        `json:"extra_float_digits"`
	ByteaOutput      string        `json:"bytea_output"`
	StatementTimeout time.Duration `json:"statement_timeout"`
	RouteDetail      string        `json:"route_detail"`
	CacheOff         bool          `json:"cache_off"`
	Locale           string        `json:"locale,omitempty"`
	TextBytewise     bool          `json:"text_bytewise,omitempty"`
	DefaultCollation string        `json:"default_collation,omitempty"`
}

// loginCacheMax bounds the keys kept.
const loginCacheMax = 10000

func (c *loginCache) get(key string) (loginState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ls := c.entries[key]
	if ls == nil {
		return loginState{}, false
	}
	out := *ls
	out.Params = maps.Clone(ls.Params)
	return out, true
}

// putParams records the ParameterStatus set a key's session started with.
// A set that differs from the one kept drops the info read with it.
func (c *loginCache) putParams(key string, params map[string]string) {
	c.mu.Lock()
	ls := c.entries[key]
	changed := ls == nil || !maps.Equal(ls.Params, params)
	if changed {
		if c.entries == nil || len(c.entries) >= loginCacheMax {
			c.entries = map[string]*loginState{}
		}
		c.entries[key] = &loginState{Params: maps.Clone(params), Observed: time.Now()}
	} else {
		ls.Observed = time.Now()
	}
	c.mu.Unlock()
	if changed {
		c.save()
	}
}

// putInfo records the session info of a key's session that had changed
// nothing yet.
func (c *loginCache) putInfo(key string, info sessionInfo) {
	li := loginInfo{Valid: true, User: info.user, SearchPath: slices.Clone(info.searchPath), ExtraFloatDigits: info.extraFloatDigits,
		ByteaOutput: info.byteaOutput, StatementTimeout: info.statementTimeout, RouteDetail: info.routeDetail,
		CacheOff: info.cacheOff, Locale: info.locale, TextBytewise: info.textBytewise, DefaultCollation: info.defaultCollation}
	c.mu.Lock()
	ls := c.entries[key]
	if ls == nil {
		c.mu.Unlock()
		return
	}
	changed := !ls.Info.equal(li)
	ls.Info = li
	c.mu.Unlock()
	if changed {
		c.save()
	}
}

func (li loginInfo) equal(o loginInfo) bool {
	return li.Valid == o.Valid && li.User == o.User && slices.Equal(li.SearchPath, o.SearchPath) &&
		li.ExtraFloatDigits == o.ExtraFloatDigits && li.ByteaOutput == o.ByteaOutput &&
		li.StatementTimeout == o.StatementTimeout && li.RouteDetail == o.RouteDetail && li.CacheOff == o.CacheOff && li.Locale == o.Locale && li.TextBytewise == o.TextBytewise &&
		li.DefaultCollation == o.DefaultCollation
}

// sessionInfo returns the info in the session's form.
func (li loginInfo) sessionInfo() sessionInfo {
	return sessionInfo{valid: li.Valid, user: li.User, searchPath: slices.Clone(li.SearchPath), tempTables: map[string]bool{},
		extraFloatDigits: li.ExtraFloatDigits, byteaOutput: li.ByteaOutput, statementTimeout: li.StatementTimeout, routeDetail: li.RouteDetail,
		cacheOff: li.CacheOff, locale: li.Locale, textBytewise: li.TextBytewise, defaultCollation: li.DefaultCollation}
}

// save writes the cache to its path, best effort (the next change writes
// it again).
func (c *loginCache) save() {
	if c.path == "" {
		return
	}
	c.mu.Lock()
	data, err := json.Marshal(c.entries)
	c.mu.Unlock()
	if err != nil {
		return
	}
	_ = auth.WritePrivateFile(c.path, data)
}

// load reads what save wrote; a missing file is an empty cache.
func (c *loginCache) load() error {
	if c.path == "" {
		return nil
	}
	data, err := auth.ReadPrivateFile(c.path)
	if err != nil || data == nil {
		return err
	}
	var m map[string]*loginState
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("read %s: %w", c.path, err)
	}
	c.mu.Lock()
	c.entries = m
	c.mu.Unlock()
	return nil
}

// loginKeyOf keys a StartupMessage's sessions: every parameter, sorted,
// except an application_name Postgres reports as it came (printable ASCII
// below NAMEDATALEN), which the session's start takes from the client.
func loginKeyOf(params map[string]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if name == "application_name" && plainAppName(params[name]) {
			continue
		}
		b.WriteString(name)
		b.WriteByte(0)
		b.WriteString(params[name])
		b.WriteByte(0)
	}
	return b.String()
}

// plainAppName reports whether Postgres reports application_name v as it
// came: printable ASCII, shorter than NAMEDATALEN.
func plainAppName(v string) bool {
	if len(v) >= 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 32 || v[i] > 126 {
			return false
		}
	}
	return true
}

// similar returns the state kept for a login key whose sessions start as
// params's would, for a login whose own key has none: one of the same
// user and database whose other startup parameters are params's but for
// application_name and parameters that only set what the origin reported
// anyway (client_encoding=UTF8 when it reported UTF8: psql's next to
// pgx's). It is used when the origin cannot be reached; the most recently
// observed such state wins.
func (c *loginCache) similar(params map[string]string) (loginState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *loginState
	for key, ls := range c.entries {
		if !ls.Info.Valid || best != nil && !ls.Observed.After(best.Observed) {
			continue
		}
		if kp, ok := keyParams(key); ok && sameStart(kp, params, ls.Params) {
			best = ls
		}
	}
	if best == nil {
		return loginState{}, false
	}
	out := *best
	out.Params = maps.Clone(best.Params)
	return out, true
}

// keyParams reads the startup parameters back from a loginKeyOf key.
func keyParams(key string) (map[string]string, bool) {
	parts := strings.Split(key, "\x00")
	if len(parts)%2 != 1 || parts[len(parts)-1] != "" {
		return nil, false
	}
	m := make(map[string]string, len(parts)/2)
	for i := 0; i+1 < len(parts); i += 2 {
		m[parts[i]] = parts[i+1]
	}
	return m, true
}

// sameStart reports whether sessions of startup parameters a and b start
// alike, given reported, the ParameterStatus set a's sessions started
// with: user and database are the same, and every other parameter but a
// plain application_name is the same on both sides, or set only to the
// value the origin reported.
func sameStart(a, b, reported map[string]string) bool {
	if a["user"] != b["user"] || a["database"] != b["database"] {
		return false
	}
	asReported := func(name, v string) bool {
		r, ok := reported[name]
		return ok && r == v
	}
	for _, side := range [2][2]map[string]string{{a, b}, {b, a}} {
		for name, v := range side[0] {
			if name == "application_name" && plainAppName(v) {
				continue
			}
			if w, ok := side[1][name]; ok && w == v {
				continue
			}
			if !asReported(name, v) {
				return false
			}
			if w, ok := side[1][name]; ok && !asReported(name, w) {
				return false
			}
		}
	}
	return true
}

// keyFlights makes the sessions that need the origin for the same thing
// wait for the first of them. Logins of one key that need the origin (no
// state kept, or none fresh) wait for the first, which logs in there,
// reads the session info at once and keeps both (proxyLogin); sessions
// without an origin connection that need the origin's description of the
// same text wait for the first to ask (describeFlight). Without them, a
// burst of new sessions of one role (a pool filling up, 50 psycopg2
// workers starting) each opened an origin connection and held a backend
// for origin_idle_timeout, though they only read accelerated datasets.
type keyFlights struct {
	mu      sync.Mutex
	flights map[string]*keyFlight
}

// keyFlight is one key's flight.
type keyFlight struct {
	done    chan struct{}
	started time.Time
}

// flightMax is how long a flight lasts at most: one whose first session
// never finished it (its client left, its statement failed) is replaced
// by the next session that joins; those waiting for it wait at most as
// long. Without the flight each of them would have asked the origin
// itself, waiting as long for a slow one (DialTimeout's default).
const flightMax = 10 * time.Second

// join returns, for the first session of key in flight, leader true (it
// calls finish once what the others wait for is kept, or cannot be had);
// for the others, the channel finish closes.
func (f *keyFlights) join(key string) (wait <-chan struct{}, leader bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.flights[key]; ok && time.Since(fl.started) < flightMax {
		return fl.done, false
	} else if ok {
		close(fl.done)
	}
	if f.flights == nil {
		f.flights = map[string]*keyFlight{}
	}
	if len(f.flights) >= maxFlights {
		// Flights whose first session never finished them (an extended-
		// protocol leader whose statement went elsewhere): gone once over.
		for k, fl := range f.flights {
			if time.Since(fl.started) >= flightMax {
				delete(f.flights, k)
				close(fl.done)
			}
		}
	}
	f.flights[key] = &keyFlight{done: make(chan struct{}), started: time.Now()}
	return nil, true
}

// maxFlights is how many flights are kept before the ones over are swept.
const maxFlights = 1024

// finish ends key's flight, if one is in the air.
func (f *keyFlights) finish(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.flights[key]; ok {
		delete(f.flights, key)
		close(fl.done)
	}
}

// await waits for the flight whose channel is wait, at most flightMax, or
// until done is closed; it reports whether the flight ended.
func await(wait <-chan struct{}, done <-chan struct{}) bool {
	timer := time.NewTimer(flightMax)
	defer timer.Stop()
	select {
	case <-wait:
		return true
	case <-timer.C:
	case <-done:
	}
	return false
}

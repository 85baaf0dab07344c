package originlink

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

// Logins keeps, per login key (database, role and the other startup
// parameters: LoginKeyOf), what the origin said when a session of that
// key started: its ParameterStatus set, and the session info read before
// the session changed anything. With it a login completes without the
// origin (auth.mode proxy): the client gets the same ParameterStatus
// messages, and the acceleration plans with the same search path and
// output settings. Nothing in it is a secret (no password, no verifier,
// no query); with a path it is kept on disk (mode 0600) for a restart
// during an outage.
type Logins struct {
	// Path is where Save writes and Load reads ("": memory only).
	Path string

	mu      sync.Mutex
	entries map[string]*LoginState
}

// LoginState is what a login key's sessions start with.
type LoginState struct {
	Params map[string]string `json:"params"`
	// Info is the session info (valid false until one was read).
	Info     LoginInfo `json:"info"`
	Observed time.Time `json:"observed"`
}

// LoginInfo is SessionInfo in the cache's form (temporary tables are
// never part of a session's start).
type LoginInfo struct {
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

// Get returns what sessions of key start with.
func (c *Logins) Get(key string) (LoginState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ls := c.entries[key]
	if ls == nil {
		return LoginState{}, false
	}
	out := *ls
	out.Params = maps.Clone(ls.Params)
	return out, true
}

// putParams records the ParameterStatus set a key's session started with.
// A set that differs from the one kept drops the info read with it.
func (c *Logins) PutParams(key string, params map[string]string) {
	c.mu.Lock()
	ls := c.entries[key]
	changed := ls == nil || !maps.Equal(ls.Params, params)
	if changed {
		if c.entries == nil || len(c.entries) >= loginCacheMax {
			c.entries = map[string]*LoginState{}
		}
		c.entries[key] = &LoginState{Params: maps.Clone(params), Observed: time.Now()}
	} else {
		ls.Observed = time.Now()
	}
	c.mu.Unlock()
	if changed {
		c.Save()
	}
}

// putInfo records the session info of a key's session that had changed
// nothing yet.
func (c *Logins) PutInfo(key string, info SessionInfo) {
	li := LoginInfo{Valid: true, User: info.User, SearchPath: slices.Clone(info.SearchPath), ExtraFloatDigits: info.ExtraFloatDigits,
		ByteaOutput: info.ByteaOutput, StatementTimeout: info.StatementTimeout, RouteDetail: info.RouteDetail,
		CacheOff: info.CacheOff, Locale: info.Locale, TextBytewise: info.TextBytewise, DefaultCollation: info.DefaultCollation}
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
		c.Save()
	}
}

func (li LoginInfo) equal(o LoginInfo) bool {
	return li.Valid == o.Valid && li.User == o.User && slices.Equal(li.SearchPath, o.SearchPath) &&
		li.ExtraFloatDigits == o.ExtraFloatDigits && li.ByteaOutput == o.ByteaOutput &&
		li.StatementTimeout == o.StatementTimeout && li.RouteDetail == o.RouteDetail && li.CacheOff == o.CacheOff && li.Locale == o.Locale && li.TextBytewise == o.TextBytewise &&
		li.DefaultCollation == o.DefaultCollation
}

// SessionInfo returns the info in the session's form.
func (li LoginInfo) SessionInfo() SessionInfo {
	return SessionInfo{Valid: li.Valid, User: li.User, SearchPath: slices.Clone(li.SearchPath), TempTables: map[string]bool{},
		ExtraFloatDigits: li.ExtraFloatDigits, ByteaOutput: li.ByteaOutput, StatementTimeout: li.StatementTimeout, RouteDetail: li.RouteDetail,
		CacheOff: li.CacheOff, Locale: li.Locale, TextBytewise: li.TextBytewise, DefaultCollation: li.DefaultCollation}
}

// save writes the cache to its path, best effort (the next change writes
// it again).
func (c *Logins) Save() {
	if c.Path == "" {
		return
	}
	c.mu.Lock()
	data, err := json.Marshal(c.entries)
	c.mu.Unlock()
	if err != nil {
		return
	}
	_ = auth.WritePrivateFile(c.Path, data)
}

// load reads what save wrote; a missing file is an empty cache.
func (c *Logins) Load() error {
	if c.Path == "" {
		return nil
	}
	data, err := auth.ReadPrivateFile(c.Path)
	if err != nil || data == nil {
		return err
	}
	var m map[string]*LoginState
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("read %s: %w", c.Path, err)
	}
	c.mu.Lock()
	c.entries = m
	c.mu.Unlock()
	return nil
}

// LoginKeyOf keys a StartupMessage's sessions: every parameter, sorted,
// except an application_name Postgres reports as it came (printable ASCII
// below NAMEDATALEN), which the session's start takes from the client.
func LoginKeyOf(params map[string]string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if name == "application_name" && PlainAppName(params[name]) {
			continue
		}
		b.WriteString(name)
		b.WriteByte(0)
		b.WriteString(params[name])
		b.WriteByte(0)
	}
	return b.String()
}

// PlainAppName reports whether Postgres reports application_name v as it
// came: printable ASCII, shorter than NAMEDATALEN.
func PlainAppName(v string) bool {
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
func (c *Logins) Similar(params map[string]string) (LoginState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *LoginState
	for key, ls := range c.entries {
		if !ls.Info.Valid || best != nil && !ls.Observed.After(best.Observed) {
			continue
		}
		if kp, ok := keyParams(key); ok && sameStart(kp, params, ls.Params) {
			best = ls
		}
	}
	if best == nil {
		return LoginState{}, false
	}
	out := *best
	out.Params = maps.Clone(best.Params)
	return out, true
}

// keyParams reads the startup parameters back from a LoginKeyOf key.
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
			if name == "application_name" && PlainAppName(v) {
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

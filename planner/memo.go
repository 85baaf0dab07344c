package planner

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The decision memo. A prepared statement is planned at every Bind and
// Execute, and a plan of a cached analysis still resolves the relations,
// checks the columns and keys the rewrite: several microseconds per
// execution of a statement whose every execution is decided alike. An
// accelerated decision is remembered by text and session for a moment
// (memoTTL, well under the resolver's own reuse of relation answers) and
// while no dataset's state or configuration changed (Registry.Version)
// and no fallback was remembered; the privilege check runs again on every
// use, as it does for every plan. Only accelerated decisions are kept: a
// decision for the origin may have been the privilege check's.

// memoTTL bounds how long a decision is reused.
const memoTTL = time.Second

// memoMax bounds the decisions kept; when full, the memo starts over.
const memoMax = 4096

type decisionMemo struct {
	mu sync.Mutex
	m  map[string]memoEntry
	// fallbacks counts RememberFallback calls: a decision made before one
	// may be for a statement that must now go to the origin.
	fallbacks atomic.Uint64
}

type memoEntry struct {
	d  Decision
	at Version
	// made is when; refs are the datasets' DuckDB tables the SQL reads.
	made time.Time
	refs []string
}

// Version is what a decision was made at: the registry's version and the
// fallbacks remembered. It changes whenever a decision may no longer be
// the one the planner would make (a dataset's state or configuration
// changed, a fallback was remembered).
type Version struct{ registry, fallbacks uint64 }

// memoKey keys sql's decision for s, or "" when s is not memoised (it has
// temporary tables, which shadow names).
func memoKey(sql string, s *Session) string {
	if len(s.TempTables) > 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(len(sql) + len(s.User) + 32)
	flags := byte('0')
	if s.TxWrote {
		flags |= 1
	}
	if s.OriginDown {
		flags |= 2
	}
	if s.TextBytewise {
		flags |= 4
	}
	b.WriteByte(flags)
	b.WriteString(s.DefaultCollationLocale)
	b.WriteByte(0)
	b.WriteString(s.User)
	b.WriteByte(0)
	for _, sp := range s.SearchPath {
		b.WriteString(sp)
		b.WriteByte(1)
	}
	b.WriteByte(0)
	b.WriteString(sql)
	return b.String()
}

// Version is the Version a decision made now is made at.
func (p *Planner) Version() Version {
	return Version{registry: p.reg.Version(), fallbacks: p.memo.fallbacks.Load()}
}

// memoised returns the decision kept for key, privileges checked again.
func (p *Planner) memoised(ctx context.Context, key string, s *Session) (Decision, bool) {
	if key == "" {
		return Decision{}, false
	}
	v := p.Version()
	p.memo.mu.Lock()
	e, ok := p.memo.m[key]
	p.memo.mu.Unlock()
	if !ok || e.at != v || time.Since(e.made) > memoTTL {
		return Decision{}, false
	}
	for i, ds := range e.d.Datasets {
		if p.res.TableRef(ds) != e.refs[i] {
			return Decision{}, false
		}
	}
	if d, refused := p.refusedSelect(ctx, s, e.d.Tables, Decision{Route: RouteOrigin, Fingerprint: e.d.Fingerprint, Kind: e.d.Kind,
		Tables: e.d.Tables, Datasets: e.d.Datasets, ParamCount: e.d.ParamCount}); refused {
		return d, true
	}
	return e.d, true
}

// keep remembers d, made at v, for key.
func (p *Planner) keep(key string, v Version, d Decision) {
	if key == "" || d.Route != RouteAccelerate || d.Caching || d.SQL == "" {
		return
	}
	refs := make([]string, len(d.Datasets))
	for i, ds := range d.Datasets {
		refs[i] = p.res.TableRef(ds)
	}
	p.memo.mu.Lock()
	defer p.memo.mu.Unlock()
	if p.memo.m == nil || len(p.memo.m) >= memoMax {
		p.memo.m = make(map[string]memoEntry)
	}
	p.memo.m[key] = memoEntry{d: d, at: v, made: time.Now(), refs: refs}
}

package planner

import (
	"encoding/json"
	"fmt"
	"time"
)

// The origin's answers on disk. A restart of pgaccel while the origin is
// down empties the caches of relation names (OriginResolver) and
// privileges (Privileges), and every read then needs the origin to be
// planned: a login worked (auth.persist keeps verifiers), its reads did
// not. ExportLookups and ImportLookups carry both caches over a restart,
// for the proxy's auth.persist (the caller writes the file, mode 0600).
// Each answer keeps the expiry it was fetched with, so it serves after the
// restart exactly as long as it would have without one: within
// auth.max_stale of that expiry, and only while the origin cannot be
// reached.

// lookupsFile is the form of the file.
type lookupsFile struct {
	Relations  []persistedRelation  `json:"relations"`
	Privileges []persistedPrivilege `json:"privileges"`
}

// persistedRelation is one relation lookup: the search path and name of
// relationKey (NUL-separated), and its answer.
type persistedRelation struct {
	Key       string    `json:"key"`
	Schema    string    `json:"schema,omitempty"`
	InCatalog bool      `json:"in_catalog,omitempty"`
	Found     bool      `json:"found"`
	Expires   time.Time `json:"expires"`
}

// persistedPrivilege is one privilege check: the role, schema and table of
// privKey (NUL-separated), and its answer.
type persistedPrivilege struct {
	Key         string    `json:"key"`
	Exists      bool      `json:"exists"`
	CanSelect   bool      `json:"can_select"`
	RowSecurity bool      `json:"row_security,omitempty"`
	Expires     time.Time `json:"expires"`
}

// LookupsVersion tells the caller when to write the file again: answers
// changes whenever either cache keeps an answer (a refreshed one too),
// keys whenever one keeps an answer to a question it had none for (a
// role's first read of a table, a new search path).
func LookupsVersion(o *OriginResolver, p *Privileges) (answers, keys uint64) {
	return o.cache.version.Load() + p.cache.version.Load(), o.cache.keys.Load() + p.cache.keys.Load()
}

// ExportLookups returns both caches' answers that may still serve (within
// max_stale of their expiry), as the file holds them.
func ExportLookups(o *OriginResolver, p *Privileges) ([]byte, error) {
	var f lookupsFile
	o.cache.each(func(key string, a relationAnswer, expires time.Time) {
		f.Relations = append(f.Relations, persistedRelation{Key: key, Schema: a.schema, InCatalog: a.inCatalog, Found: a.found, Expires: expires})
	})
	p.cache.each(func(key string, a privAnswer, expires time.Time) {
		f.Privileges = append(f.Privileges, persistedPrivilege{Key: key, Exists: a.exists, CanSelect: a.canSelect, RowSecurity: a.rowSecurity, Expires: expires})
	})
	return json.Marshal(f)
}

// ImportLookups puts the answers of data (ExportLookups') back in the
// caches, each with its expiry; those past max_stale are left out, and an
// answer the cache holds already is kept.
func ImportLookups(data []byte, o *OriginResolver, p *Privileges) error {
	var f lookupsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("read the origin's answers: %w", err)
	}
	for _, r := range f.Relations {
		o.cache.restore(r.Key, relationAnswer{schema: r.Schema, inCatalog: r.InCatalog, found: r.Found}, r.Expires)
	}
	for _, r := range f.Privileges {
		p.cache.restore(r.Key, privAnswer{exists: r.Exists, canSelect: r.CanSelect, rowSecurity: r.RowSecurity}, r.Expires)
	}
	return nil
}

// each calls f with every entry that may still serve.
func (c *ttlCache[V]) each(f func(key string, val V, expires time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for k, e := range c.entries {
		if now.Before(e.expires.Add(c.maxStale)) {
			f(k, e.val, e.expires)
		}
	}
}

// restore adds an entry with its own expiry, unless the cache holds one
// for key already, it may no longer serve, or the cache is full.
func (c *ttlCache[V]) restore(key string, val V, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok || !c.now().Before(expires.Add(c.maxStale)) || len(c.entries) >= c.max {
		return
	}
	c.entries[key] = ttlEntry[V]{val: val, expires: expires}
}

package planner

import "sync"

// lru maps statement texts to their analysis, keeping the most recently
// used ones.
type lru struct {
	mu    sync.Mutex
	cap   int
	items map[string]*lruItem
	head  lruItem // sentinel: head.next is the most recent, head.prev the least
}

type lruItem struct {
	key        string
	val        *analysis
	prev, next *lruItem
}

func newLRU(capacity int) *lru {
	c := &lru{cap: capacity, items: make(map[string]*lruItem, capacity)}
	c.head.next, c.head.prev = &c.head, &c.head
	return c
}

func (c *lru) get(key string) (*analysis, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.unlink(it)
	c.pushFront(it)
	return it.val, true
}

func (c *lru) add(key string, val *analysis) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.items[key]; ok {
		it.val = val
		c.unlink(it)
		c.pushFront(it)
		return
	}
	if len(c.items) >= c.cap {
		old := c.head.prev
		c.unlink(old)
		delete(c.items, old.key)
	}
	it := &lruItem{key: key, val: val}
	c.items[key] = it
	c.pushFront(it)
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

func (c *lru) unlink(it *lruItem) {
	it.prev.next = it.next
	it.next.prev = it.prev
}

func (c *lru) pushFront(it *lruItem) {
	it.prev = &c.head
	it.next = c.head.next
	c.head.next.prev = it
	c.head.next = it
}

// fallbackSet remembers a bounded number of statement fingerprints that
// DuckDB failed on, forgetting the oldest first. Each is remembered with
// the datasets the statement read and their generation then (the sum of
// their Generation): when one of them changes (a load, new columns), the
// cause may be gone (a column the acceleration lacked is there now), so
// the fingerprint is forgotten and the statement tried on DuckDB again.
type fallbackSet struct {
	mu   sync.RWMutex
	set  map[uint64]fallbackEntry
	ring []uint64
	next int
}

type fallbackEntry struct {
	datasets []string
	gen      uint64
}

func newFallbackSet(capacity int) *fallbackSet {
	return &fallbackSet{set: make(map[uint64]fallbackEntry), ring: make([]uint64, 0, capacity)}
}

// has reports whether fp is remembered and its datasets' generation, by
// gen, is still the one it was remembered at; an entry whose datasets
// changed since is forgotten.
func (f *fallbackSet) has(fp uint64, gen func(datasets []string) uint64) bool {
	f.mu.RLock()
	e, ok := f.set[fp]
	f.mu.RUnlock()
	if !ok {
		return false
	}
	if gen(e.datasets) == e.gen {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.set[fp]; ok && cur.gen == e.gen {
		delete(f.set, fp) // its slot in the ring is reused when it comes round
	}
	return false
}

// add remembers fp, read from datasets at their generation gen.
func (f *fallbackSet) add(fp uint64, datasets []string, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := fallbackEntry{datasets: append([]string(nil), datasets...), gen: gen}
	if _, ok := f.set[fp]; ok {
		f.set[fp] = e
		return
	}
	if len(f.ring) < cap(f.ring) {
		f.ring = append(f.ring, fp)
	} else {
		if old := f.ring[f.next]; old != fp {
			delete(f.set, old)
		}
		f.ring[f.next] = fp
		f.next = (f.next + 1) % len(f.ring)
	}
	f.set[fp] = e
}

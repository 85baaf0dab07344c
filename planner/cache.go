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

// fingerprintSet remembers a bounded number of fingerprints, forgetting the
// oldest first.
type fingerprintSet struct {
	mu   sync.RWMutex
	set  map[uint64]struct{}
	ring []uint64
	next int
}

func newFingerprintSet(capacity int) *fingerprintSet {
	return &fingerprintSet{set: make(map[uint64]struct{}), ring: make([]uint64, 0, capacity)}
}

func (f *fingerprintSet) has(fp uint64) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, ok := f.set[fp]
	return ok
}

func (f *fingerprintSet) add(fp uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.set[fp]; ok {
		return
	}
	if len(f.ring) < cap(f.ring) {
		f.ring = append(f.ring, fp)
	} else {
		delete(f.set, f.ring[f.next])
		f.ring[f.next] = fp
		f.next = (f.next + 1) % len(f.ring)
	}
	f.set[fp] = struct{}{}
}

package originlink

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// ItemKind is a client (or proxy) message sent to the origin whose
// response has not fully arrived yet.
type ItemKind uint8

const (
	ItemParse ItemKind = iota
	ItemBind
	ItemDescribeStatement
	ItemDescribePortal
	ItemExecute
	ItemClose
	ItemSync
	ItemQuery
	ItemFunctionCall
	// ItemLocal is an answer of the proxy's own (an accelerated Execute's
	// rows) that the client gets once every origin response before it
	// has been relayed; the origin owes nothing for it.
	ItemLocal
)

// Collector receives the origin's answer to a request the proxy made on
// its own behalf. Messages are copies; done is closed after the last one.
type Collector struct {
	Msgs []pgproto3.BackendMessage
	Done chan struct{}
}

// NewCollector is a collector for one private request.
func NewCollector() *Collector { return &Collector{Done: make(chan struct{})} }

// Item is one entry of the queue of expected origin responses.
type Item struct {
	Kind ItemKind
	// Wrote marks a Sync or Query that ends a stretch of statements that
	// wrote or ran DDL.
	Wrote bool
	// Private, when set, receives the responses instead of the client.
	Private *Collector
	// Capture, when set, receives a copy of a Describe's descriptions; the
	// client still gets them.
	Capture func(pgproto3.BackendMessage)
	// Last marks the final item of a private request: its Collector is
	// closed when the item completes.
	Last bool
	// Out is an ItemLocal item's encoded messages.
	Out []byte
	// Swallow: the client already has the proxy's own answer to this
	// message (a deferred Bind sent late); only an error is relayed.
	Swallow bool
	// Seq is the item's position (Pending.next).
	Seq uint64
	// Started, when set, is when the client's Query or Execute arrived:
	// its completion is timed under route (pgaccel_query_duration_seconds).
	Started time.Time
	Route   string
	// Stat is the statement's statistics entry (the proxy's), for Observe.
	Stat any
}

// Pending tracks, in order, the responses the origin still owes. It
// is what lets the proxy know when every earlier message has been answered
// (before it answers a statement itself) and which responses belong to the
// proxy's own requests.
//
// Postgres skips every message after an error in the extended protocol up
// to the next Sync; skipTail mirrors that for messages not queued yet.
type Pending struct {
	mu      sync.Mutex
	changed *sync.Cond
	items   []Item
	// base is items' backing array from its start: popping the head
	// slices it off the front, and an emptied queue starts over at base
	// so that a session's steady round trips allocate nothing.
	base     []Item
	skipTail bool
	closed   bool
	// failures counts extended-protocol errors (failedLocked); failedSeqs
	// holds the positions those takeFailed has not returned yet made the
	// origin skip, and failCount mirrors failures for a check without the
	// lock.
	failures   uint64
	failedSeqs []FailRange
	failCount  atomic.Uint64
	// next is the position of the next message queued or answered
	// locally; every pending item and local answer takes one, in order.
	next uint64
	// Observe, when set, receives every item the origin answers, with the
	// queue held: those with Item.Started set are timed.
	Observe func(it *Item)
}

// NewPending is an empty queue.
func NewPending() *Pending {
	q := &Pending{}
	q.changed = sync.NewCond(&q.mu)
	return q
}

// Push records a message sent to the origin. It reports false when the
// origin will skip the message (an earlier error before the next Sync), in
// which case nothing is queued.
func (q *Pending) Push(it Item) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushLocked(it)
}

// PushAll pushes items in order, as push does each, under one lock.
func (q *Pending) PushAll(items []Item) {
	q.mu.Lock()
	for _, it := range items {
		q.pushLocked(it)
	}
	q.mu.Unlock()
}

func (q *Pending) pushLocked(it Item) bool {
	it.Seq = q.next
	q.next++
	if q.skipTail && it.Kind != ItemSync {
		if it.Private != nil && it.Last {
			close(it.Private.Done)
		}
		return false
	}
	if it.Kind == ItemSync {
		if q.skipTail && len(q.failedSeqs) > 0 {
			q.failedSeqs[len(q.failedSeqs)-1].To = it.Seq
		}
		q.skipTail = false
	}
	q.appendLocked(it)
	return true
}

func (q *Pending) appendLocked(it Item) {
	if n := len(q.items); n == cap(q.items) && 2*n <= cap(q.base) {
		// The head has moved up the array and the tail reached its end:
		// move the items back to its start rather than grow a new one.
		full := q.base[:cap(q.base)]
		copy(full, q.items)
		clear(full[n:])
		q.items = full[:n]
	}
	c := cap(q.items)
	q.items = append(q.items, it)
	if cap(q.items) != c {
		q.base = q.items[:0]
	}
}

// Head returns the oldest pending item.
func (q *Pending) Head() (Item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return Item{}, false
	}
	return q.items[0], true
}

// Pop completes the oldest pending item.
func (q *Pending) Pop() {
	q.Settle(true, false)
}

// Settle applies the classification of an origin message to the queue,
// under one lock: done completes the head, failed completes it and skips
// to the next Sync. It reports whether nothing is pending any more, and
// whether an answer of the proxy's own is now at the head (takeLocal).
func (q *Pending) Settle(done, failed bool) (idle, local bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case failed:
		q.failedLocked()
	case done:
		q.TimeHead()
		q.popLocked()
		q.changed.Broadcast()
	}
	return len(q.items) == 0, len(q.items) > 0 && q.items[0].Kind == ItemLocal
}

// TimeHead hands the head item, completed, to Observe (which times it
// when it is timed: Item.Started).
func (q *Pending) TimeHead() {
	if len(q.items) > 0 && q.Observe != nil {
		q.Observe(&q.items[0])
	}
}

func (q *Pending) popLocked() {
	if len(q.items) == 0 {
		return
	}
	it := q.items[0]
	q.items[0] = Item{}
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = q.base[:0]
	}
	if it.Private != nil && it.Last {
		close(it.Private.Done)
	}
}

// Failed handles an ErrorResponse for the head item of the extended
// protocol: the head is done and the origin skips everything up to the
// next Sync.
func (q *Pending) Failed() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failedLocked()
}

// failedLocked is Failed with the queue held.
func (q *Pending) failedLocked() {
	q.failures++
	q.failCount.Store(q.failures)
	r := FailRange{To: math.MaxUint64}
	if len(q.items) > 0 {
		r.From = q.items[0].Seq
	}
	q.TimeHead() // the failed statement; those skipped after it never ran
	q.popLocked()
	for len(q.items) > 0 && q.items[0].Kind != ItemSync {
		q.popLocked()
	}
	if len(q.items) == 0 {
		q.skipTail = true
	} else {
		r.To = q.items[0].Seq
	}
	q.failedSeqs = append(q.failedSeqs, r)
	q.changed.Broadcast()
}

// LocalOutcome is what pushLocal did with an answer of the proxy's own.
type LocalOutcome uint8

const (
	LocalWriteNow LocalOutcome = iota // nothing is pending: the caller writes it
	LocalQueued                       // queued behind the pending origin responses
	LocalDropped                      // the origin skips to the next Sync: so must it
)

// PushLocal queues out (copied) behind the pending origin responses, for
// TakeLocal to hand over in order. With skippable, out answers a client
// message that Postgres would skip while the origin skips to the next
// Sync: it is dropped then. With check, out answers a statement decided
// when the queue had seen `since` failures: if another came since, the
// origin skips that statement, and out is dropped. Callers hold the
// session's write lock, so that nothing reaches the client between the
// check and their write.
func (q *Pending) PushLocal(out []byte, skippable, check bool, since uint64) (LocalOutcome, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.next
	q.next++
	switch {
	case skippable && q.skipTail, check && q.failures != since:
		return LocalDropped, seq
	case len(q.items) == 0:
		return LocalWriteNow, seq
	}
	q.appendLocked(Item{Kind: ItemLocal, Out: append([]byte(nil), out...), Seq: seq})
	return LocalQueued, seq
}

// NextSeq is the position the next queued message or local answer takes.
func (q *Pending) NextSeq() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.next
}

// FailRange is what an error made the origin skip: the failed message at
// position from and everything after it up to the Sync at position to
// (MaxUint64 until that Sync is queued).
type FailRange struct{ From, To uint64 }

// TakeFailed returns what the failures since its last call made the
// origin skip.
func (q *Pending) TakeFailed() []FailRange {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.failedSeqs
	q.failedSeqs = nil
	return out
}

// TakeLocal removes the local answers at the head of the queue and returns
// them, in order, for the client.
func (q *Pending) TakeLocal() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	var outs [][]byte
	for len(q.items) > 0 && q.items[0].Kind == ItemLocal {
		outs = append(outs, q.items[0].Out)
		q.popLocked()
	}
	if outs != nil {
		q.changed.Broadcast()
	}
	return outs
}

// OnlyStatementSetup reports whether every pending item is a Parse, Bind,
// Describe or Close of the current stretch (or an answer of the proxy's
// own): nothing pending can change the session or its transaction, and an
// error in any of them makes the origin skip what follows up to the Sync,
// which failedLocked mirrors by dropping the queued local answers too.
// It also returns the failures counted so far (see pushLocal), and false
// when the origin is already skipping to the next Sync.
func (q *Pending) OnlyStatementSetup() (bool, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.skipTail {
		return false, q.failures
	}
	for _, it := range q.items {
		switch it.Kind {
		case ItemParse, ItemBind, ItemDescribeStatement, ItemDescribePortal, ItemClose, ItemLocal:
		default:
			return false, q.failures
		}
	}
	return true, q.failures
}

// Quiet reports whether nothing is pending and no tail is skipped (idle
// and not skipping), under one lock.
func (q *Pending) Quiet() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0 && !q.skipTail
}

// Skipping reports whether the origin is discarding messages until a Sync.
func (q *Pending) Skipping() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.skipTail
}

// WaitEmpty blocks until no response is pending (or the queue is closed) and
// reports whether the queue is still open.
func (q *Pending) WaitEmpty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) > 0 && !q.closed {
		q.changed.Wait()
	}
	return !q.closed
}

// Idle reports whether no response is pending.
func (q *Pending) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// Close wakes every waiter; the session is ending.
func (q *Pending) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, it := range q.items {
		if it.Private != nil && it.Last {
			select {
			case <-it.Private.Done:
			default:
				close(it.Private.Done)
			}
		}
	}
	q.items, q.base = nil, nil
	q.changed.Broadcast()
}

// Lock holds the queue for a relay that walks it (ItemsLocked,
// PopDoneLocked); Unlock lets it go.
func (q *Pending) Lock() { q.mu.Lock() }

// Unlock: see Lock.
func (q *Pending) Unlock() { q.mu.Unlock() }

// ItemsLocked are the pending items, head first; the queue is held.
func (q *Pending) ItemsLocked() []Item { return q.items }

// PopDoneLocked pops the n items at the head a relay has completed,
// timing each, and wakes the waiters; the queue is held.
func (q *Pending) PopDoneLocked(n int) {
	for range n {
		q.TimeHead()
		q.popLocked()
	}
	q.changed.Broadcast()
}

// Failures is how many extended-protocol errors the queue has seen (see
// PushLocal), read without the lock.
func (q *Pending) Failures() uint64 { return q.failCount.Load() }

package proxy

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// pendingKind is a client (or proxy) message sent to the origin whose
// response has not fully arrived yet.
type pendingKind uint8

const (
	pkParse pendingKind = iota
	pkBind
	pkDescribeStatement
	pkDescribePortal
	pkExecute
	pkClose
	pkSync
	pkQuery
	pkFunctionCall
	// pkLocal is an answer of the proxy's own (an accelerated Execute's
	// rows) that the client gets once every origin response before it
	// has been relayed; the origin owes nothing for it.
	pkLocal
)

// collector receives the origin's answer to a request the proxy made on
// its own behalf. Messages are copies; done is closed after the last one.
type collector struct {
	msgs []pgproto3.BackendMessage
	done chan struct{}
}

func newCollector() *collector { return &collector{done: make(chan struct{})} }

// pendingItem is one entry of the queue of expected origin responses.
type pendingItem struct {
	kind pendingKind
	// wrote marks a Sync or Query that ends a stretch of statements that
	// wrote or ran DDL.
	wrote bool
	// private, when set, receives the responses instead of the client.
	private *collector
	// capture, when set, receives a copy of a Describe's descriptions; the
	// client still gets them.
	capture func(pgproto3.BackendMessage)
	// last marks the final item of a private request: its collector is
	// closed when the item completes.
	last bool
	// out is a pkLocal item's encoded messages.
	out []byte
	// swallow: the client already has the proxy's own answer to this
	// message (a deferred Bind sent late); only an error is relayed.
	swallow bool
	// seq is the item's position (pendingQueue.next).
	seq uint64
	// started, when set, is when the client's Query or Execute arrived:
	// its completion is timed under route (pgaccel_query_duration_seconds).
	started time.Time
	route   string
}

// pendingQueue tracks, in order, the responses the origin still owes. It
// is what lets the proxy know when every earlier message has been answered
// (before it answers a statement itself) and which responses belong to the
// proxy's own requests.
//
// Postgres skips every message after an error in the extended protocol up
// to the next Sync; skipTail mirrors that for messages not queued yet.
type pendingQueue struct {
	mu      sync.Mutex
	changed *sync.Cond
	items   []pendingItem
	// base is items' backing array from its start: popping the head
	// slices it off the front, and an emptied queue starts over at base
	// so that a session's steady round trips allocate nothing.
	base     []pendingItem
	skipTail bool
	closed   bool
	// failures counts extended-protocol errors (failedLocked); failedSeqs
	// holds the positions those takeFailed has not returned yet made the
	// origin skip, and failCount mirrors failures for a check without the
	// lock.
	failures   uint64
	failedSeqs []failRange
	failCount  atomic.Uint64
	// next is the position of the next message queued or answered
	// locally; every pending item and local answer takes one, in order.
	next uint64
	// observe, when set, receives the route and start of every timed item
	// the origin answers (pendingItem.started).
	observe func(route string, started time.Time)
}

func newPendingQueue() *pendingQueue {
	q := &pendingQueue{}
	q.changed = sync.NewCond(&q.mu)
	return q
}

// push records a message sent to the origin. It reports false when the
// origin will skip the message (an earlier error before the next Sync), in
// which case nothing is queued.
func (q *pendingQueue) push(it pendingItem) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushLocked(it)
}

// pushAll pushes items in order, as push does each, under one lock.
func (q *pendingQueue) pushAll(items []pendingItem) {
	q.mu.Lock()
	for _, it := range items {
		q.pushLocked(it)
	}
	q.mu.Unlock()
}

func (q *pendingQueue) pushLocked(it pendingItem) bool {
	it.seq = q.next
	q.next++
	if q.skipTail && it.kind != pkSync {
		if it.private != nil && it.last {
			close(it.private.done)
		}
		return false
	}
	if it.kind == pkSync {
		if q.skipTail && len(q.failedSeqs) > 0 {
			q.failedSeqs[len(q.failedSeqs)-1].to = it.seq
		}
		q.skipTail = false
	}
	q.appendLocked(it)
	return true
}

func (q *pendingQueue) appendLocked(it pendingItem) {
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

// head returns the oldest pending item.
func (q *pendingQueue) head() (pendingItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return pendingItem{}, false
	}
	return q.items[0], true
}

// pop completes the oldest pending item.
func (q *pendingQueue) pop() {
	q.settle(true, false)
}

// settle applies the classification of an origin message to the queue,
// under one lock: done completes the head, failed completes it and skips
// to the next Sync. It reports whether nothing is pending any more, and
// whether an answer of the proxy's own is now at the head (takeLocal).
func (q *pendingQueue) settle(done, failed bool) (idle, local bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case failed:
		q.failedLocked()
	case done:
		q.timeHead()
		q.popLocked()
		q.changed.Broadcast()
	}
	return len(q.items) == 0, len(q.items) > 0 && q.items[0].kind == pkLocal
}

// timeHead reports the head item's time to observe when it is timed.
func (q *pendingQueue) timeHead() {
	if len(q.items) > 0 && q.observe != nil && !q.items[0].started.IsZero() {
		q.observe(q.items[0].route, q.items[0].started)
	}
}

func (q *pendingQueue) popLocked() {
	if len(q.items) == 0 {
		return
	}
	it := q.items[0]
	q.items[0] = pendingItem{}
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = q.base[:0]
	}
	if it.private != nil && it.last {
		close(it.private.done)
	}
}

// failed handles an ErrorResponse for the head item of the extended
// protocol: the head is done and the origin skips everything up to the
// next Sync.
func (q *pendingQueue) failed() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failedLocked()
}

func (q *pendingQueue) failedLocked() {
	q.failures++
	q.failCount.Store(q.failures)
	r := failRange{to: math.MaxUint64}
	if len(q.items) > 0 {
		r.from = q.items[0].seq
	}
	q.timeHead() // the failed statement; those skipped after it never ran
	q.popLocked()
	for len(q.items) > 0 && q.items[0].kind != pkSync {
		q.popLocked()
	}
	if len(q.items) == 0 {
		q.skipTail = true
	} else {
		r.to = q.items[0].seq
	}
	q.failedSeqs = append(q.failedSeqs, r)
	q.changed.Broadcast()
}

// localOutcome is what pushLocal did with an answer of the proxy's own.
type localOutcome uint8

const (
	localWriteNow localOutcome = iota // nothing is pending: the caller writes it
	localQueued                       // queued behind the pending origin responses
	localDropped                      // the origin skips to the next Sync: so must it
)

// pushLocal queues out (copied) behind the pending origin responses, for
// takeLocal to hand over in order. With skippable, out answers a client
// message that Postgres would skip while the origin skips to the next
// Sync: it is dropped then. With check, out answers a statement decided
// when the queue had seen `since` failures: if another came since, the
// origin skips that statement, and out is dropped. Callers hold the
// session's write lock, so that nothing reaches the client between the
// check and their write.
func (q *pendingQueue) pushLocal(out []byte, skippable, check bool, since uint64) (localOutcome, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	seq := q.next
	q.next++
	switch {
	case skippable && q.skipTail, check && q.failures != since:
		return localDropped, seq
	case len(q.items) == 0:
		return localWriteNow, seq
	}
	q.appendLocked(pendingItem{kind: pkLocal, out: append([]byte(nil), out...), seq: seq})
	return localQueued, seq
}

// nextSeq is the position the next queued message or local answer takes.
func (q *pendingQueue) nextSeq() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.next
}

// failRange is what an error made the origin skip: the failed message at
// position from and everything after it up to the Sync at position to
// (MaxUint64 until that Sync is queued).
type failRange struct{ from, to uint64 }

// takeFailed returns what the failures since its last call made the
// origin skip.
func (q *pendingQueue) takeFailed() []failRange {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.failedSeqs
	q.failedSeqs = nil
	return out
}

// takeLocal removes the local answers at the head of the queue and returns
// them, in order, for the client.
func (q *pendingQueue) takeLocal() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	var outs [][]byte
	for len(q.items) > 0 && q.items[0].kind == pkLocal {
		outs = append(outs, q.items[0].out)
		q.popLocked()
	}
	if outs != nil {
		q.changed.Broadcast()
	}
	return outs
}

// onlyStatementSetup reports whether every pending item is a Parse, Bind,
// Describe or Close of the current stretch (or an answer of the proxy's
// own): nothing pending can change the session or its transaction, and an
// error in any of them makes the origin skip what follows up to the Sync,
// which failedLocked mirrors by dropping the queued local answers too.
// It also returns the failures counted so far (see pushLocal), and false
// when the origin is already skipping to the next Sync.
func (q *pendingQueue) onlyStatementSetup() (bool, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.skipTail {
		return false, q.failures
	}
	for _, it := range q.items {
		switch it.kind {
		case pkParse, pkBind, pkDescribeStatement, pkDescribePortal, pkClose, pkLocal:
		default:
			return false, q.failures
		}
	}
	return true, q.failures
}

// skipping reports whether the origin is discarding messages until a Sync.
// quiet reports whether nothing is pending and no tail is skipped (idle
// and not skipping), under one lock.
func (q *pendingQueue) quiet() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0 && !q.skipTail
}

func (q *pendingQueue) skipping() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.skipTail
}

// wait blocks until no response is pending (or the queue is closed) and
// reports whether the queue is still open.
func (q *pendingQueue) waitEmpty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) > 0 && !q.closed {
		q.changed.Wait()
	}
	return !q.closed
}

// idle reports whether no response is pending.
func (q *pendingQueue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// close wakes every waiter; the session is ending.
func (q *pendingQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, it := range q.items {
		if it.private != nil && it.last {
			select {
			case <-it.private.done:
			default:
				close(it.private.done)
			}
		}
	}
	q.items, q.base = nil, nil
	q.changed.Broadcast()
}

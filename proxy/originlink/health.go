package originlink

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// RetryEvery is how long after a failed connect to the origin no session
// tries again; in between, statements that need the origin fail at once.
const RetryEvery = time.Second

// StallMemo is how long after a login the origin did not answer in time
// the logins that can start without it do not wait for it.
const StallMemo = 5 * time.Second

// Health is what sessions know of the origin's reachability: after a
// failed connect no session dials again for RetryEvery. Its zero value is
// an origin not known to be down. Any goroutine may use it.
type Health struct {
	mu        sync.Mutex
	failedAt  time.Time
	err       error
	stalledAt time.Time // Stalls
	// DialTimeout is the connect timeout: after a connect that timed out,
	// sessions wait that long before trying again.
	DialTimeout time.Duration
}

// RetryDue reports whether a session may try to connect now: RetryEvery
// after a failed connect, or DialTimeout after one the origin did not
// answer in time (a partition, a frozen host), so that while it hangs one
// session in that long waits for it, not every session's statement that
// needs it.
func (h *Health) RetryDue() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	after := RetryEvery
	if isTimeout(h.err) {
		after = max(after, h.DialTimeout)
	}
	return h.err == nil || time.Since(h.failedAt) >= after
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout())
}

// LastError is the error of the last failed connect (nil once the origin
// answered again).
func (h *Health) LastError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// Down records a failed connect.
func (h *Health) Down(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failedAt, h.err = time.Now(), err
}

// Up records that the origin answered.
func (h *Health) Up() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = nil
	h.stalledAt = time.Time{}
}

// Stalls records a login the origin did not answer in time (it may be
// slow rather than down: statements that need it still try it).
func (h *Health) Stalls() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stalledAt = time.Now()
}

// Stalled reports whether a login timed out within StallMemo, or a
// connect failed within RetryEvery.
func (h *Health) Stalled() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.stalledAt.IsZero() && time.Since(h.stalledAt) < StallMemo ||
		h.err != nil && time.Since(h.failedAt) < RetryEvery
}

package refresh

import (
	"sort"
	"sync"
	"time"
)

// Clock is the time source of the scheduler. Tests use a ManualClock to
// step through cron schedules and long intervals without waiting.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer implements Clock.
func (SystemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }

// ManualClock is a Clock that moves only when Advance or Set is called. It
// is safe for concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*manualTimer
	changed chan struct{} // closed and replaced whenever a timer is added
}

// NewManualClock returns a ManualClock reading now.
func NewManualClock(now time.Time) *ManualClock {
	return &ManualClock{now: now, changed: make(chan struct{})}
}

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer implements Clock.
func (c *ManualClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		t.fired = true
		return t
	}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

// Advance moves the clock forward by d, firing the timers due by then in
// order.
func (c *ManualClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to now (never backwards), firing the timers due.
func (c *ManualClock) Set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Before(c.now) {
		return
	}
	c.now = now
	sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(now) {
			keep = append(keep, t)
			continue
		}
		t.fired = true
		t.ch <- t.at
	}
	c.timers = keep
}

// Pending returns the due times of the timers waiting, earliest first.
func (c *ManualClock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.at)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// WaitTimers blocks until at least n timers are waiting or timeout
// passes, and reports whether they are.
func (c *ManualClock) WaitTimers(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		count, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if count >= n {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		case <-time.After(10 * time.Millisecond): // timers also leave by Stop
		}
	}
}

type manualTimer struct {
	c     *ManualClock
	at    time.Time
	ch    chan time.Time
	fired bool // guarded by c.mu
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired {
		return false
	}
	for i, o := range t.c.timers {
		if o == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			break
		}
	}
	t.fired = true
	return true
}

package catalog

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Applied is how far a changes dataset's acceleration has followed the
// origin's WAL: every transaction that committed before Position is in the
// data new reads see. The change stream advances it (refresh); a reader
// that must see a commit (read-your-writes) waits for it, and its wait
// tells the stream, which then applies what it holds at once and asks the
// origin where its WAL is, instead of waiting for its batch or the next
// keepalive. Its methods are safe for concurrent use.
type Applied struct {
	mu  sync.Mutex
	pos uint64
	// wants are the positions readers wait for now, one per waiter.
	wants []uint64
	// changed is closed and replaced at every advance.
	changed chan struct{}
	// nudge wakes the stream (SetNudge); nil while none streams.
	nudge func()
}

// Applied returns the named dataset's applied position (nil for an unknown
// name). One exists per dataset, whatever its mode; only changes datasets
// advance theirs.
func (r *Registry) Applied(name string) *Applied {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.applied[name]
}

// Position returns the WAL position the data has caught up with (0 before
// the stream says).
func (a *Applied) Position() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.pos
}

// Advance records that the data new reads see holds every transaction
// committed before lsn; a lower lsn than the last changes nothing.
func (a *Applied) Advance(lsn uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if lsn <= a.pos {
		return
	}
	a.pos = lsn
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

// Wanted returns the lowest and the highest positions readers wait for
// that the data has not reached (0, 0: none).
func (a *Applied) Wanted() (lo, hi uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, w := range a.wants {
		if w <= a.pos {
			continue
		}
		if lo == 0 || w < lo {
			lo = w
		}
		hi = max(hi, w)
	}
	return lo, hi
}

// SetNudge sets the function that wakes the stream when a reader starts
// waiting (nil: none streams).
func (a *Applied) SetNudge(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nudge = f
}

// Wait waits until the data has reached lsn, at most max; it reports
// whether it has.
func (a *Applied) Wait(ctx context.Context, lsn uint64, max time.Duration) bool {
	a.mu.Lock()
	if a.pos >= lsn {
		a.mu.Unlock()
		return true
	}
	if max <= 0 {
		a.mu.Unlock()
		return false
	}
	a.wants = append(a.wants, lsn)
	nudge := a.nudge
	a.mu.Unlock()
	defer a.unwant(lsn)
	if nudge != nil {
		nudge()
	}
	timer := time.NewTimer(max)
	defer timer.Stop()
	for {
		a.mu.Lock()
		if a.pos >= lsn {
			a.mu.Unlock()
			return true
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return a.Position() >= lsn
		case <-ctx.Done():
			return false
		}
	}
}

// unwant drops one waiter's lsn.
func (a *Applied) unwant(lsn uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i := slices.Index(a.wants, lsn); i >= 0 {
		a.wants = slices.Delete(a.wants, i, i+1)
	}
}

// DataAsOf returns the named dataset's DataAsOf, without copying its state.
func (r *Registry) DataAsOf(name string) time.Time {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if st, ok := r.states[name]; ok {
		return st.DataAsOf
	}
	return time.Time{}
}

// DataAge is how old the data is at now: since DataAsOf; ok is false when
// that is not known.
func (s DatasetState) DataAge(now time.Time) (age time.Duration, ok bool) {
	if s.DataAsOf.IsZero() {
		return 0, false
	}
	return max(now.Sub(s.DataAsOf), 0), true
}

// ServedAge is DataAge for d's state, where it means something: not for
// a refresh_mode: caching dataset, whose answers each have their own age.
// The status, the metrics and SHOW pgaccel.datasets show it.
func (s DatasetState) ServedAge(d *Dataset, now time.Time) (age time.Duration, ok bool) {
	if d.Acceleration.RefreshMode == RefreshCaching {
		return 0, false
	}
	return s.DataAge(now)
}

// Stale reports whether data as of asOf is older at now than bound (a
// bound of 0 never is; unknown data always is).
func Stale(asOf, now time.Time, bound time.Duration) bool {
	if bound <= 0 {
		return false
	}
	return asOf.IsZero() || now.Sub(asOf) > bound
}

// Bounded reports whether a dataset has a max_staleness.
func (r *Registry) Bounded() bool { return r.bounded.Load() }

package refresh

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

func TestFibonacciDelay_GrowsToTheCapWithinItsSpread(t *testing.T) {
	lowest := func(int64) int64 { return 0 }
	highest := func(n int64) int64 { return n - 1 }
	middle := func(n int64) int64 { return n / 2 }
	want := []time.Duration{1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 300, 300}
	for i, w := range want {
		attempt := i + 1
		base := w * time.Second
		if got := DefaultBackoff.delay(attempt, middle); got < base-time.Second/2 || got > base+time.Second/2 && got != retryCap {
			t.Errorf("attempt %d: delay %v, want about %v", attempt, got, base)
		}
		lo, hi := DefaultBackoff.delay(attempt, lowest), DefaultBackoff.delay(attempt, highest)
		if lo < base*3/4-time.Nanosecond || hi > min(base*5/4, retryCap) || lo > hi {
			t.Errorf("attempt %d: spread [%v, %v], want within [%v, %v]", attempt, lo, hi, base*3/4, min(base*5/4, retryCap))
		}
	}
	if got := DefaultBackoff.delay(1000, highest); got != retryCap {
		t.Errorf("attempt 1000: %v, want the cap %v", got, retryCap)
	}
	// Other bounds: Fibonacci multiples of First, up to Max.
	b := Backoff{First: 100 * time.Millisecond, Max: time.Second}
	for i, w := range []time.Duration{100, 200, 300, 500, 800, 1000, 1000} {
		base := w * time.Millisecond
		if got := b.delay(i+1, middle); got < base*3/4 || got > min(base*5/4, b.Max) {
			t.Errorf("Backoff{100ms, 1s} attempt %d: delay %v, want about %v", i+1, got, base)
		}
	}
	if got := (Backoff{}).withDefaults(); got != DefaultBackoff {
		t.Errorf("zero Backoff with defaults = %+v", got)
	}
}

func TestSchedule_IntervalJitterAndCron(t *testing.T) {
	from := time.Date(2026, 11, 30, 10, 7, 0, 0, time.UTC)
	lowest := func(int64) int64 { return 0 }
	highest := func(n int64) int64 { return n - 1 }

	// refresh_check_interval 10s with jitter 1s: the initial load waits
	// 0..1s, later refreshes come 9..11s apart.
	a := &catalog.Acceleration{RefreshCheckInterval: 10 * time.Second, RefreshJitterEnabled: true, RefreshJitterMax: time.Second}
	lo, hi := newSchedule(a, lowest), newSchedule(a, highest)
	if d := lo.initialDelay(); d != 0 {
		t.Errorf("lowest initial delay %v", d)
	}
	if d := hi.initialDelay(); d != time.Second {
		t.Errorf("highest initial delay %v, want 1s", d)
	}
	if due, start := lo.next(from); due != from.Add(9*time.Second) || start != due {
		t.Errorf("lowest next = %v, %v", due, start)
	}
	if due, _ := hi.next(from); due != from.Add(11*time.Second) {
		t.Errorf("highest next = %v", due)
	}
	// The default jitter is 10% of the interval.
	a = &catalog.Acceleration{RefreshCheckInterval: time.Minute, RefreshJitterEnabled: true}
	if due, _ := newSchedule(a, highest).next(from); due != from.Add(66*time.Second) {
		t.Errorf("default jitter next = %v, want +66s", due)
	}
	// No jitter unless enabled.
	a = &catalog.Acceleration{RefreshCheckInterval: time.Minute, RefreshJitterMax: time.Second}
	if due, _ := newSchedule(a, highest).next(from); due != from.Add(time.Minute) {
		t.Errorf("jitter disabled next = %v", due)
	}

	// Cron: the next cron time is due, the start is jittered after it.
	a = &catalog.Acceleration{RefreshCron: "0 12 * * 1-5", RefreshJitterEnabled: true, RefreshJitterMax: 30 * time.Second}
	s := newSchedule(a, highest)
	due, start := s.next(from) // Monday 10:07
	if want := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC); !due.Equal(want) || !start.Equal(want.Add(30*time.Second)) {
		t.Errorf("cron next = %v, %v", due, start)
	}
	due, _ = s.next(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)) // Friday noon: next is Monday
	if want := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC); !due.Equal(want) {
		t.Errorf("cron after Friday noon = %v, want %v", due, want)
	}

	// Neither: nothing scheduled.
	if s := newSchedule(&catalog.Acceleration{}, lowest); s.scheduled() {
		t.Error("no interval and no cron is scheduled")
	} else if due, start := s.next(from); !due.IsZero() || !start.IsZero() {
		t.Errorf("unscheduled next = %v, %v", due, start)
	}
}

func TestClassify_TransientAndConfigurationErrors(t *testing.T) {
	tests := []struct {
		err       error
		reason    string
		transient bool
	}{
		{&pgconn.PgError{Code: "57P01"}, reasonOriginRestart, true},
		{&pgconn.PgError{Code: "57P03"}, reasonOriginRestart, true},
		{&pgconn.PgError{Code: "40001"}, reasonSerialization, true},
		{&pgconn.PgError{Code: "40P01"}, reasonSerialization, true},
		{&pgconn.PgError{Code: "57014"}, reasonTimeout, true},
		{&pgconn.PgError{Code: "53300"}, reasonResources, true},
		{&pgconn.PgError{Code: "08006"}, reasonConnection, true},
		{&pgconn.PgError{Code: "28P01"}, reasonAuth, false},
		{&pgconn.PgError{Code: "42501"}, reasonAuth, false},
		{&pgconn.PgError{Code: "42P01"}, reasonSchema, false},
		{&pgconn.PgError{Code: "42703"}, reasonSchema, false},
		{&pgconn.PgError{Code: "3D000"}, reasonSchema, false},
		{&pgconn.PgError{Code: "42601"}, reasonSQL, false},
		{fmt.Errorf("x: %w", errTableNotFound), reasonSchema, false},
		{fmt.Errorf("x: %w", errMissingColumn), reasonSchema, false},
		{fmt.Errorf("x: %w", errConfig), reasonConfig, false},
		{fmt.Errorf("load dataset d: %w", accelerator.ErrData), reasonData, false},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, reasonConnection, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), reasonConnection, true},
		{io.ErrUnexpectedEOF, reasonConnection, true},
		{context.DeadlineExceeded, reasonTimeout, true},
		{x509.UnknownAuthorityError{}, reasonTLS, false},
		{errors.New("tls: first record does not look like a TLS handshake"), reasonTLS, false},
		{errors.New("something else"), reasonOther, true},
	}
	for _, tt := range tests {
		reason, transient := classify(fmt.Errorf("refresh dataset d: %w", tt.err))
		if reason != tt.reason || transient != tt.transient {
			t.Errorf("classify(%v) = %s, %v; want %s, %v", tt.err, reason, transient, tt.reason, tt.transient)
		}
	}
}

func TestManualClock_FiresTimersInOrder(t *testing.T) {
	c := NewManualClock(time.Unix(0, 0))
	a, b := c.NewTimer(2*time.Second), c.NewTimer(time.Second)
	stopped := c.NewTimer(time.Second)
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer = false")
	}
	c.Advance(1500 * time.Millisecond)
	select {
	case at := <-b.C():
		if at != time.Unix(1, 0) {
			t.Errorf("b fired at %v", at)
		}
	default:
		t.Fatal("b did not fire")
	}
	select {
	case <-a.C():
		t.Fatal("a fired early")
	case <-stopped.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	if p := c.Pending(); len(p) != 1 || p[0] != time.Unix(2, 0) {
		t.Errorf("pending = %v", p)
	}
	c.Advance(time.Second)
	<-a.C()
}

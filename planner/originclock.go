package planner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// OriginClock measures how far the origin's clock is from this process's,
// so that the relative-time values of accelerated statements (now(),
// CURRENT_DATE: clock.go) are the origin's. A probe reads
// clock_timestamp() at the origin and takes it for the midpoint of the
// round trip, as NTP does; of a round of probes the one with the shortest
// round trip counts, and half its round trip bounds the error (the origin
// read its clock somewhere inside it).
type OriginClock struct {
	pool *pgxpool.Pool

	mu         sync.Mutex
	offset     time.Duration
	bound      time.Duration
	measuredAt time.Time
	measured   bool
}

// Defaults of the clock probe.
const (
	// DefaultClockEvery is how often the offset is measured again.
	DefaultClockEvery = time.Minute
	// clockProbes is how many round trips one measurement takes.
	clockProbes = 5
)

// NewOriginClock returns a clock over the origin behind pool (the refresh
// account's catalog pool). It knows no offset until Measure succeeds.
func NewOriginClock(pool *pgxpool.Pool) *OriginClock { return &OriginClock{pool: pool} }

// Offset is the origin's clock minus this process's, 0 until measured (or
// for a nil clock).
func (c *OriginClock) Offset() time.Duration {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// Reading is the last measurement: the offset, its error bound and when
// it was taken; ok is false before the first.
func (c *OriginClock) Reading() (offset, bound time.Duration, at time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, c.bound, c.measuredAt, c.measured
}

// Measure probes the origin and keeps the offset of the probe with the
// shortest round trip.
func (c *OriginClock) Measure(ctx context.Context) error {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	best := time.Duration(-1)
	var offset time.Duration
	for range clockProbes {
		var at time.Time
		t0 := time.Now()
		if err := conn.QueryRow(ctx, "SELECT pg_catalog.clock_timestamp()").Scan(&at); err != nil {
			return err
		}
		rtt := time.Since(t0) // monotonic
		if best < 0 || rtt < best {
			best = rtt
			offset = at.Sub(t0.Add(rtt / 2))
		}
	}
	if best < 0 {
		return errors.New("origin clock: no probe")
	}
	c.mu.Lock()
	c.offset, c.bound, c.measuredAt, c.measured = offset, best/2, time.Now(), true
	c.mu.Unlock()
	return nil
}

// Run measures at once and then every every (DefaultClockEvery when 0)
// until ctx ends; failures (the origin is down) keep the last offset.
// report, when set, is called after each measurement.
func (c *OriginClock) Run(ctx context.Context, every time.Duration, report func(error)) {
	if every <= 0 {
		every = DefaultClockEvery
	}
	for {
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.Measure(mctx)
		cancel()
		if report != nil && ctx.Err() == nil {
			report(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

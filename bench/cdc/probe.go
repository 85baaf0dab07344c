package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/refresh"
)

// marker is one marker row: inserted at the origin, then looked for
// through the proxy.
type marker struct {
	id        int64
	sent      time.Time // the INSERT sent (autocommit)
	committed time.Time // its COMMIT returned
	seen      time.Time // the first probe read that returned it came back; zero if never
}

// lag is from commit to visibility through the proxy.
func (m marker) lag() time.Duration { return m.seen.Sub(m.committed) }

// maxInList bounds the markers one probe read asks for (point reads take
// up to 100 values, and one is the read's own, below).
const maxInList = 99

// uniqueBase is added to a probe read's sequence number to make an id no
// row has (the workload's ids stay far below it). Every probe read's IN
// list ends with one, so that no two reads have the same text: pgaccel's
// DuckDB connections keep prepared the statements whose text comes again,
// and at this revision a kept statement over a changes dataset is not
// prepared again after an apply (the engine looks for the dataset's
// database quoted in the text; the planner's rewrite names it unquoted),
// so DuckDB answers it with a plan made for the old data, which missed
// rows inserted since (markers stayed invisible for minutes).
const uniqueBase = int64(9_000_000_000_000_000)

// probe writes marker rows at the origin and reads them back through the
// proxy. Marker ids are negative, so the workload never touches them.
type probe struct {
	origin *pgx.Conn // direct, as the superuser
	proxy  *pgx.Conn // through pgaccel, as the application role
	every  time.Duration
	poll   time.Duration // the longest interval between probe reads
	// status reads the stream's status in-process: a probe read follows
	// every change of its applied position or transaction count (checked
	// every millisecond), as a batch committed to the acceleration
	// publishes them.
	status func() refresh.ReplicationStatus
	next   int64 // the last marker id used (negative)
	reads  int64 // probe reads so far, for their unique ids

	mu      sync.Mutex
	pending []*marker
}

// probeRun is one window of probing.
type probeRun struct {
	markers []*marker // in commit order; the last is the drain marker
	polls   int       // probe reads through the proxy
	err     error
}

// run probes until stop is closed: a marker every p.every, probe reads
// every p.poll. Then it writes one last marker (the drain marker) and
// goes on reading until every marker has been seen or drainTimeout
// passed.
func (p *probe) run(ctx context.Context, stop <-chan struct{}, drainTimeout time.Duration) probeRun {
	var out probeRun
	writerDone := make(chan struct{})
	var werr error
	go func() {
		defer close(writerDone)
		werr = p.write(ctx, stop, &out)
	}()
	out.polls, out.err = p.read(ctx, writerDone, drainTimeout)
	<-writerDone
	if werr != nil && out.err == nil {
		out.err = werr
	}
	return out
}

// write inserts markers until stop, then the drain marker.
func (p *probe) write(ctx context.Context, stop <-chan struct{}, out *probeRun) error {
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return p.insert(ctx, out)
		case <-tick.C:
			if err := p.insert(ctx, out); err != nil {
				return err
			}
		}
	}
}

// insert writes one marker row and queues it for the reader.
func (p *probe) insert(ctx context.Context, out *probeRun) error {
	p.next--
	m := &marker{id: p.next, sent: time.Now()}
	_, err := p.origin.Exec(ctx, "INSERT INTO "+table+" (id, v, payload) VALUES ("+strconv.FormatInt(m.id, 10)+", 0, 'marker')")
	if err != nil {
		return fmt.Errorf("insert marker %d at the origin: %w", m.id, err)
	}
	m.committed = time.Now()
	p.mu.Lock()
	p.pending = append(p.pending, m)
	out.markers = append(out.markers, m)
	p.mu.Unlock()
	return nil
}

// read polls for pending markers until the writer is done and every
// marker was seen, or drainTimeout after the writer finished: right after
// the stream's status moves, and at least every p.poll.
func (p *probe) read(ctx context.Context, writerDone <-chan struct{}, drainTimeout time.Duration) (int, error) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	polls := 0
	var deadline, lastRead time.Time
	var lastLSN string
	var lastTx int64
	for {
		select {
		case <-ctx.Done():
			return polls, ctx.Err()
		case <-tick.C:
		}
		st := p.status()
		moved := st.AppliedLSN != lastLSN || st.Transactions != lastTx
		if !moved && time.Since(lastRead) < p.poll {
			continue
		}
		lastLSN, lastTx = st.AppliedLSN, st.Transactions
		done := false
		select {
		case <-writerDone:
			done = true
			if deadline.IsZero() {
				deadline = time.Now().Add(drainTimeout)
			}
		default:
		}
		p.mu.Lock()
		ask := p.pending[:min(len(p.pending), maxInList)]
		ids := make([]string, len(ask), len(ask)+1)
		for i, m := range ask {
			ids[i] = strconv.FormatInt(m.id, 10)
		}
		p.mu.Unlock()
		p.reads++
		if len(ids) == 0 {
			if done {
				return polls, nil
			}
			lastRead = time.Now()
			continue
		}
		if done && time.Now().After(deadline) {
			return polls, fmt.Errorf("%d marker(s) committed at the origin were not visible through pgaccel %v after the writes stopped (ids %s)",
				len(p.pending), drainTimeout, strings.Join(ids, ","))
		}
		in := strings.Join(append(ids, strconv.FormatInt(uniqueBase+p.reads, 10)), ", ")
		rows, err := benchutil.TextRows(ctx, p.proxy.PgConn(), "SELECT id FROM "+table+" WHERE id IN ("+in+")")
		now := time.Now()
		lastRead = now
		polls++
		if err != nil {
			return polls, fmt.Errorf("probe read through pgaccel: %w", err)
		}
		seen := make(map[string]bool, len(rows))
		for _, r := range rows {
			seen[r] = true
		}
		if len(rows) == len(ask) && len(ask) == maxInList {
			lastRead = time.Time{} // more may be visible already: read again at once
		}
		p.mu.Lock()
		kept := p.pending[:0]
		for _, m := range p.pending {
			if seen[strconv.FormatInt(m.id, 10)] {
				m.seen = now
			} else {
				kept = append(kept, m)
			}
		}
		p.pending = kept
		p.mu.Unlock()
	}
}

// gaugeSample is the stream's own view at one moment.
type gaugeSample struct {
	at       time.Time
	lagMs    int64
	lagBytes int64
}

// sampleGauges reads the stream's status every 100 ms until stop.
func sampleGauges(a *app.App, stop <-chan struct{}) []gaugeSample {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var out []gaugeSample
	for {
		select {
		case <-stop:
			return out
		case now := <-tick.C:
			st := replication(a)
			out = append(out, gaugeSample{at: now, lagMs: st.LagMs, lagBytes: st.LagBytes})
		}
	}
}

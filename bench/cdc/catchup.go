package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
)

// catchUpResult is the catch-up after a pause: pgaccel down while
// pgbench writes a backlog, then started again on the same data dir.
type catchUpResult struct {
	load      load
	pg        pgbenchResult
	rows      int64 // the backlog's row changes, with the closing marker
	writeTime time.Duration
	walBytes  int64
	// From app.Start: the stream's resume (its log line), the first
	// batch applied (the stream's counters), the closing marker visible
	// in the acceleration (read from DuckDB directly, every 10 ms), and
	// WaitReady returning.
	resumeAt, firstAt, doneAt, readyAt time.Duration
	hasResume                          bool
	applied                            int64 // rows the stream counted
	txApplied                          int64
	cpuSelf                            time.Duration
	check                              string
	equal                              bool
	loadAvg                            string
	warnings                           []string
	err                                error
}

// rate is the backlog's rows per second from the stream's resume to the
// last of them applied.
func (c *catchUpResult) rate() float64 {
	d := c.doneAt - c.resumeAt
	if !c.hasResume || d <= 0 {
		return 0
	}
	return float64(c.rows) / d.Seconds()
}

// bulkResult is one UPDATE of every row in one transaction.
type bulkResult struct {
	rows     int64
	origin   time.Duration // the UPDATE and its COMMIT at the origin
	visible  time.Duration // from the COMMIT to the marker after it visible in the acceleration
	cpuSelf  time.Duration
	check    string
	equal    bool
	warnings []string
	err      error
}

func (b *bulkResult) rate() float64 {
	if b.visible <= 0 {
		return 0
	}
	return float64(b.rows) / b.visible.Seconds()
}

// waitMarker waits until marker id is in the acceleration, reading
// DuckDB directly (not through the proxy, which could route the read to
// the origin while the dataset is not ready).
func waitMarker(ctx context.Context, a *app.App, id int64, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	q := "SELECT count(*) FROM " + a.Engine.TableRef(table) + " WHERE id = " + strconv.FormatInt(id, 10)
	var lastErr error
	for {
		rows, err := a.Engine.Query(ctx, q)
		if err == nil {
			n := int64(0)
			if rows.Next() {
				if v, ok := rows.Values()[0].(int64); ok {
					n = v
				}
			}
			err = rows.Err()
			rows.Close()
			if err == nil && n == 1 {
				return time.Now(), nil
			}
		}
		if err != nil {
			lastErr = err
		}
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("marker %d not in the acceleration after %v (last DuckDB error: %v)", id, timeout, lastErr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// insertMarker writes one marker row at the origin.
func insertMarker(ctx context.Context, conn *pgx.Conn, p *probe) (int64, time.Time, error) {
	p.next--
	if _, err := conn.Exec(ctx, "INSERT INTO "+table+" (id, v, payload) VALUES ("+strconv.FormatInt(p.next, 10)+", 0, 'marker')"); err != nil {
		return 0, time.Time{}, fmt.Errorf("insert a marker: %w", err)
	}
	return p.next, time.Now(), nil
}

// currentLSN is the origin's WAL insert position as text.
func currentLSN(ctx context.Context, conn *pgx.Conn) (string, error) {
	var lsn string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err != nil {
		return "", fmt.Errorf("read the origin's WAL position: %w", err)
	}
	return lsn, nil
}

// measureCatchUp shuts e.a down, writes the backlog, starts pgaccel again
// and times the catch-up. e.a and the proxy connections are replaced by
// the new pgaccel's (e.a is nil if it did not start).
func measureCatchUp(ctx context.Context, e *env, restart func() (*app.App, error), progress func(string, ...any)) *catchUpResult {
	c := &catchUpResult{load: load{txnsPerClient: max(1, e.opts.catchupOps/e.opts.clients), clients: e.opts.clients, threads: e.opts.threads}}
	closeProxies(e)
	if err := shutdown(e.a); err != nil {
		c.err = err
		e.a = nil
		return c
	}
	e.a = nil
	before, err := currentLSN(ctx, e.check)
	if err != nil {
		c.err = err
		return c
	}
	progress("pgaccel is down; pgbench writes %d changes (%d per client, unthrottled)", c.load.txnsPerClient*c.load.clients, c.load.txnsPerClient)
	began := time.Now()
	if c.pg, c.err = e.bench.run(ctx, c.load); c.err != nil {
		return c
	}
	marker, _, err := insertMarker(ctx, e.origin, e.markers)
	if err != nil {
		c.err = err
		return c
	}
	c.writeTime = time.Since(began)
	c.rows = c.pg.txns + 1
	after, err := currentLSN(ctx, e.check)
	if err != nil {
		c.err = err
		return c
	}
	if err := e.check.QueryRow(ctx, "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint", after, before).Scan(&c.walBytes); err != nil {
		c.err = fmt.Errorf("measure the backlog's WAL: %w", err)
		return c
	}

	progress("starting pgaccel again on the same data dir; timing the catch-up")
	e.logs.reset()
	e.logs.warnings()
	cpuBefore := selfCPU()
	started := time.Now()
	a, err := restart()
	if err != nil {
		c.err = err
		return c
	}
	e.a = a
	// The first batch, from the stream's counters, meanwhile.
	firstCh := make(chan time.Time, 1)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(firstCh)
		for wctx.Err() == nil {
			if appliedRows(replication(a)) > 0 {
				firstCh <- time.Now()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	done, err := waitMarker(ctx, a, marker, e.opts.drainTimeout+time.Duration(c.rows/1000)*time.Second)
	cancel()
	if first, ok := <-firstCh; ok {
		c.firstAt = first.Sub(started)
	}
	if err != nil {
		c.err = err
		return c
	}
	c.doneAt = done.Sub(started)
	c.cpuSelf = selfCPU() - cpuBefore
	if t, ok := e.logs.firstSeen(msgResuming); ok {
		c.resumeAt, c.hasResume = t.Sub(started), true
	} else if _, rebuilt := e.logs.firstSeen(msgLoaded); rebuilt {
		c.err = errors.New("pgaccel rebuilt the dataset from a new snapshot instead of resuming from the stored position")
		return c
	}
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Minute)
	err = a.Runner.WaitReady(rctx, table)
	rcancel()
	if err != nil {
		c.err = fmt.Errorf("dataset %s did not become ready after the catch-up: %w", table, err)
		return c
	}
	c.readyAt = time.Since(started)
	st := replication(a)
	c.applied, c.txApplied = appliedRows(st), st.Transactions
	if c.err = openProxies(ctx, e); c.err != nil {
		return c
	}
	c.check, c.equal, c.err = compareTable(ctx, e)
	c.loadAvg = benchutil.LoadAvg()
	c.warnings = e.logs.warnings()
	return c
}

// measureBulk updates every non-marker row in one transaction and times
// its apply.
func measureBulk(ctx context.Context, e *env) *bulkResult {
	b := &bulkResult{}
	e.logs.warnings()
	cpuBefore := selfCPU()
	began := time.Now()
	tag, err := e.origin.Exec(ctx, "UPDATE "+table+" SET v = v + 1 WHERE id > 0")
	if err != nil {
		b.err = fmt.Errorf("bulk update at the origin: %w", err)
		return b
	}
	committed := time.Now()
	b.origin, b.rows = committed.Sub(began), tag.RowsAffected()
	marker, _, err := insertMarker(ctx, e.origin, e.markers)
	if err != nil {
		b.err = err
		return b
	}
	done, err := waitMarker(ctx, e.a, marker, e.opts.drainTimeout+time.Duration(b.rows/1000)*time.Second)
	if err != nil {
		b.err = err
		return b
	}
	b.visible = done.Sub(committed)
	b.cpuSelf = selfCPU() - cpuBefore
	b.check, b.equal, b.err = compareTable(ctx, e)
	b.warnings = e.logs.warnings()
	return b
}

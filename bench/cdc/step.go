package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/refresh"
)

// stepResult is everything measured at one rate.
type stepResult struct {
	target int  // ops/s; 0: unthrottled
	search bool // a bisection step
	load   load
	pg     pgbenchResult

	markers []marker // during the writes, in commit order
	drain   marker   // the marker written after pgbench ended
	polls   int      // probe reads
	// accelerated and routed are the probe reads pgaccel_statements_total
	// counted as accelerated, and as anything else.
	accelerated, routed float64
	gauges              []gaugeSample
	applyLag            histogram // the step's batches
	applied             int64     // row changes the stream applied in the step
	txApplied           int64

	wall          time.Duration // pgbench's run
	cpu           cpuSnapshot   // CPU used during pgbench's run, by whom
	cpuWindow     time.Duration // the time cpu covers: the run, and its backends' ends
	cpuWalsender  time.Duration // the origin's walsender of the stream, during the run
	walsenderSeen bool
	loadAvg       string // at the end of the step
	check         string // the table through pgaccel against the origin, after the drain
	equal         bool
	warnings      []string // pgaccel's warnings and errors during the step
	err           error
}

// lags are the markers' lags, in commit order.
func (s *stepResult) lags() []time.Duration {
	out := make([]time.Duration, len(s.markers))
	for i, m := range s.markers {
		out[i] = m.lag()
	}
	return out
}

// kept reports whether pgbench held the target rate (always for an
// unthrottled run).
func (s *stepResult) kept() bool {
	return s.target == 0 || s.pg.tps >= keptShare*float64(s.target)
}

// sustained reports whether the stream followed the rate: pgbench kept
// it, the lag did not grow, every marker was seen and every probe read
// was accelerated.
func (s *stepResult) sustained() bool {
	if s.err != nil || !s.kept() || s.routed > 0 {
		return false
	}
	t := trendOf(s.lags())
	return t.ok && !t.growing
}

// keptShare is the share of the target rate pgbench must reach.
const keptShare = 0.95

// env is what a step needs.
type env struct {
	a       *app.App
	bench   *pgbench
	origin  *pgx.Conn // direct, superuser: markers
	check   *pgx.Conn // direct, superuser: aggregates and the walsender
	proxy   *pgx.Conn // through pgaccel: probe reads
	proxy2  *pgx.Conn // through pgaccel: the aggregate check
	opts    options
	logs    *logCapture
	markers *probe
	// proxyDSN is the application role's DSN through the current pgaccel.
	proxyDSN func() string
	checks   int // table checks so far
	// postmaster is the origin's postmaster pid, for its CPU time.
	postmaster int
}

// openProxies connects the two connections through pgaccel.
func openProxies(ctx context.Context, e *env) error {
	closeProxies(e)
	var err error
	if e.proxy, err = benchutil.ConnectSimple(ctx, e.proxyDSN()); err != nil {
		return fmt.Errorf("connect through pgaccel: %w", err)
	}
	if e.proxy2, err = benchutil.ConnectSimple(ctx, e.proxyDSN()); err != nil {
		return fmt.Errorf("connect through pgaccel: %w", err)
	}
	e.markers.proxy = e.proxy
	a := e.a
	e.markers.status = func() refresh.ReplicationStatus { return replication(a) }
	return nil
}

// closeProxies closes them.
func closeProxies(e *env) {
	for _, c := range []**pgx.Conn{&e.proxy, &e.proxy2} {
		if *c != nil {
			(*c).Close(context.Background())
			*c = nil
		}
	}
}

// runStep runs pgbench at target (0: unthrottled) with the probe and the
// gauge sampler, then drains and checks the table.
func runStep(ctx context.Context, e *env, target int, progress func(string, ...any)) *stepResult {
	s := &stepResult{target: target}
	s.load = load{rate: target, d: e.opts.duration, clients: e.opts.clients, threads: e.opts.threads}
	e.logs.warnings()
	routesBefore, err := statementRoutes(e.a)
	if err != nil {
		s.err = err
		return s
	}
	histBefore, err := applyLagHistogram(e.a)
	if err != nil {
		s.err = err
		return s
	}
	repBefore := replication(e.a)
	wsPID := walsenderPID(ctx, e.check)
	wsBefore, wsOK := procCPU(wsPID)
	cpuBefore := takeCPU(e.postmaster)

	stop := make(chan struct{})
	probed := make(chan probeRun, 1)
	go func() { probed <- e.markers.run(ctx, stop, e.opts.drainTimeout) }()
	gauges := make(chan []gaugeSample, 1)
	stopGauges := make(chan struct{})
	go func() { gauges <- sampleGauges(e.a, stopGauges) }()

	began := time.Now()
	s.pg, s.err = e.bench.run(ctx, s.load)
	s.wall = time.Since(began)
	// pgbench's backends end after it: once they are gone (and reaped),
	// their CPU time is in the postmaster's.
	waitBackendsGone(ctx, e.check)
	s.cpu = takeCPU(e.postmaster).sub(cpuBefore)
	s.cpuWindow = time.Since(began)
	if wsAfter, ok := procCPU(wsPID); ok && wsOK {
		s.cpuWalsender, s.walsenderSeen = wsAfter-wsBefore, true
	}
	close(stopGauges)
	close(stop)
	s.gauges = <-gauges
	pr := <-probed
	if s.err == nil && pr.err != nil {
		s.err = fmt.Errorf("%w; %s", pr.err, diagnose(ctx, e))
	}
	s.polls = pr.polls
	for i, m := range pr.markers {
		if i == len(pr.markers)-1 {
			s.drain = *m
			break
		}
		s.markers = append(s.markers, *m)
	}
	if s.err == nil {
		s.check, s.equal, s.err = compareTable(ctx, e)
	}
	routesAfter, err := statementRoutes(e.a)
	if err == nil {
		for route, v := range routesAfter {
			d := v - routesBefore[route]
			if route == routeAccelerated {
				s.accelerated = d
			} else {
				s.routed += d
			}
		}
		// The aggregate check is one accelerated statement too.
		s.accelerated--
	}
	if h, err := applyLagHistogram(e.a); err == nil {
		s.applyLag = h.sub(histBefore)
	}
	repAfter := replication(e.a)
	s.applied = appliedRows(repAfter) - appliedRows(repBefore)
	s.txApplied = repAfter.Transactions - repBefore.Transactions
	s.loadAvg = benchutil.LoadAvg()
	s.warnings = e.logs.warnings()
	return s
}

const routeAccelerated = "accelerated"

// diagnose says where the markers still pending stand: at the origin, in
// the acceleration (DuckDB read directly), through pgaccel, and the
// stream's and the slot's status.
func diagnose(ctx context.Context, e *env) string {
	e.markers.mu.Lock()
	var ids []string
	for _, m := range e.markers.pending {
		ids = append(ids, strconv.FormatInt(m.id, 10))
	}
	e.markers.mu.Unlock()
	if len(ids) == 0 {
		return "no marker pending"
	}
	in := " WHERE id IN (" + strings.Join(ids, ", ") + ")"
	var parts []string
	if rows, err := benchutil.TextRows(ctx, e.check.PgConn(), "SELECT count(*) FROM "+table+in); err == nil {
		parts = append(parts, "at the origin: "+strings.Join(rows, ""))
	} else {
		parts = append(parts, "at the origin: "+err.Error())
	}
	if rows, err := e.a.Engine.Query(ctx, "SELECT count(*) FROM "+e.a.Engine.TableRef(table)+in); err == nil {
		for rows.Next() {
			parts = append(parts, fmt.Sprintf("in DuckDB: %v", rows.Values()[0]))
		}
		rows.Close()
	} else {
		parts = append(parts, "in DuckDB: "+err.Error())
	}
	if rows, err := benchutil.TextRows(ctx, e.check.PgConn(), "SELECT slot_name, active, confirmed_flush_lsn, pg_current_wal_lsn() FROM pg_replication_slots"); err == nil {
		parts = append(parts, "slots (name|active|confirmed_flush|current wal): "+strings.Join(rows, "; "))
	}
	// The same read through pgaccel, with a text no connection has kept
	// prepared, and the planner's rewrite of it.
	q := "SELECT id FROM " + table + " WHERE id IN (" + strings.Join(ids, ", ") + ", " + strconv.FormatInt(uniqueBase-1, 10) + ")"
	rows, err := benchutil.TextRows(ctx, e.proxy2.PgConn(), q)
	parts = append(parts, fmt.Sprintf("through pgaccel (a new text): %d rows, error %v", len(rows), err))
	d := e.a.Planner.Plan(ctx, q, &planner.Session{User: pgtest.AppUser, SearchPath: []string{"public"}})
	parts = append(parts, fmt.Sprintf("planner: route %v, reason %q, DuckDB SQL %q", d.Route, d.Reason, d.SQL))
	parts = append(parts, fmt.Sprintf("stream status: %+v", replication(e.a)))
	st, _ := e.a.Registry.State(table)
	parts = append(parts, fmt.Sprintf("dataset status %s, error %q", st.Status, st.Error))
	return strings.Join(parts, "; ")
}

// aggregateSQL sums up the table; the same text runs on the origin and
// through pgaccel. Its last column, the check's sequence number, makes
// every check's text new (see uniqueBase).
func aggregateSQL(seq int) string {
	return "SELECT count(*), sum(id), sum(v), sum(length(payload)), min(id), max(id), " + strconv.Itoa(seq) + " AS check_no FROM " + table
}

// compareTable compares the table's aggregates through pgaccel with the
// origin's (after the drain marker was seen, the acceleration holds every
// change committed before it).
func compareTable(ctx context.Context, e *env) (string, bool, error) {
	e.checks++
	q := aggregateSQL(e.checks)
	want, err := benchutil.TextRows(ctx, e.check.PgConn(), q)
	if err != nil {
		return "", false, fmt.Errorf("aggregate the origin's table: %w", err)
	}
	got, err := benchutil.TextRows(ctx, e.proxy2.PgConn(), q)
	if err != nil {
		return "", false, fmt.Errorf("aggregate the table through pgaccel: %w", err)
	}
	if slices.Equal(want, got) {
		return "equal (count, sum(id), sum(v), sum(length(payload)), min(id), max(id), check: " + want[0] + ")", true, nil
	}
	return fmt.Sprintf("DIFFERENT: origin %q, pgaccel %q", want, got), false, nil
}

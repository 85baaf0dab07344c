package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/bench/internal/tpchdata"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/rs/zerolog"
)

// The three ways a query is timed.
const (
	targetOrigin  = "origin"  // pgx straight to Postgres
	targetPgaccel = "pgaccel" // pgx through the proxy
	targetDuckDB  = "duckdb"  // Engine.Query with the planner's rewrite
)

var targetNames = []string{targetOrigin, targetPgaccel, targetDuckDB}

// Routes of pgaccel_queries_total.
const (
	routeAccelerated = "accelerated"
	routeFallback    = "fallback"
	routeOrigin      = "origin"
)

// queryResult is everything measured about one query.
type queryResult struct {
	q        query
	decision planner.Decision // the planner's, before the proxy first ran q
	route    string           // of the first run through pgaccel (the check)
	why      string           // why it was not accelerated
	check    string           // how the proxy's answer compared with the origin's
	equal    bool
	rows     int
	times    map[string][]time.Duration // by target, in round order
	timed    map[string]float64         // routes of the timed pgaccel runs
	err      error                      // a failed run; the query's timings are incomplete
}

func (r *queryResult) accelerated() bool { return r.route == routeAccelerated }

// median is the median time of target, ok false when it has none.
func (r *queryResult) median(target string) (time.Duration, bool) {
	ts := r.times[target]
	return medianDuration(ts), len(ts) > 0
}

// logCapture is the pgaccel logger's sink: warnings and errors go to the
// console, and the proxy's debug lines that say why a statement was not
// accelerated are kept for the report.
type logCapture struct {
	console io.Writer
	mu      sync.Mutex
	notes   []string
}

var _ zerolog.LevelWriter = (*logCapture)(nil)

func (c *logCapture) Write(p []byte) (int, error) { return c.WriteLevel(zerolog.NoLevel, p) }

func (c *logCapture) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	if level >= zerolog.WarnLevel && level != zerolog.NoLevel {
		return c.console.Write(p)
	}
	if !bytes.Contains(p, []byte("falling back")) && !bytes.Contains(p, []byte("goes to the origin")) {
		return len(p), nil
	}
	var ev map[string]any
	if err := json.Unmarshal(p, &ev); err != nil {
		return len(p), nil
	}
	note := fmt.Sprint(ev["message"])
	if r, ok := ev["reason"].(string); ok && r != "" {
		note += ": reason " + r
	}
	if e, ok := ev["error"].(string); ok {
		note += ": " + e
	}
	c.mu.Lock()
	c.notes = append(c.notes, note)
	c.mu.Unlock()
	return len(p), nil
}

// take returns and forgets the notes kept so far.
func (c *logCapture) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notes
	c.notes = nil
	return n
}

// startPgaccel starts pgaccel in-process with the TPC-H tables ts (all of
// them when nil) as memory-mode datasets of the origin at dsn, and waits
// until all have loaded.
func startPgaccel(ctx context.Context, dsn string, ts []tpchdata.Table, dataDir string, logs *logCapture, verify string, noCache bool) (*app.App, time.Duration, error) {
	if ts == nil {
		ts = tpchdata.Tables
	}
	runtime := ""
	if verify != "" {
		runtime = fmt.Sprintf("  verify:\n    enabled: true\n    sample_rate: %q\n", verify)
	}
	if noCache {
		runtime += "  results_cache:\n    enabled: false\n"
	}
	cfg, err := tpchdata.Config(dsn, dataDir, runtime, ts, "      mode: memory\n")
	if err != nil {
		return nil, 0, err
	}
	log := zerolog.New(logs).Level(zerolog.DebugLevel).With().Timestamp().Str("component", "pgaccel").Logger()
	began := time.Now()
	a, err := app.Start(cfg, log)
	if err != nil {
		return nil, 0, fmt.Errorf("start pgaccel: %w", err)
	}
	for _, t := range ts {
		if err := a.Runner.WaitReady(ctx, t.Name); err != nil {
			return a, 0, fmt.Errorf("dataset %s did not load: %w", t.Name, err)
		}
		st, _ := a.Registry.State(t.Name)
		if !st.Loaded {
			return a, 0, fmt.Errorf("dataset %s did not load: %s", t.Name, st.Error)
		}
		for _, c := range st.Columns {
			if !c.Accelerated {
				return a, 0, fmt.Errorf("dataset %s: column %s (%s) is not accelerated", t.Name, c.Name, c.TypeName)
			}
		}
	}
	return a, time.Since(began), nil
}

// routeCounts sums pgaccel_statements_total (each statement once, however
// many datasets it reads) by route.
func routeCounts(a *app.App) (map[string]float64, error) {
	return benchutil.MetricSums(a.Metrics, "pgaccel_statements_total", "route")
}

func routeDelta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for _, r := range []string{routeAccelerated, routeFallback, routeOrigin} {
		if v := after[r] - before[r]; v != 0 {
			d[r] = v
		}
	}
	return d
}

// clients are the two client connections, both as the application role
// and with the simple protocol.
type clients struct {
	originDSN, proxyDSN string
	origin, proxy       *pgx.Conn
}

func (c *clients) connect(ctx context.Context) error {
	var err error
	if c.origin == nil || c.origin.IsClosed() {
		if c.origin, err = benchutil.ConnectSimple(ctx, c.originDSN); err != nil {
			return fmt.Errorf("connect to the origin as %s: %w", pgtest.AppUser, err)
		}
	}
	if c.proxy == nil || c.proxy.IsClosed() {
		if c.proxy, err = benchutil.ConnectSimple(ctx, c.proxyDSN); err != nil {
			return fmt.Errorf("connect through pgaccel as %s: %w", pgtest.AppUser, err)
		}
	}
	return nil
}

func (c *clients) close() {
	for _, conn := range []*pgx.Conn{c.origin, c.proxy} {
		if conn != nil {
			conn.Close(context.Background())
		}
	}
}

// compareRows says how the proxy's rows compare with the origin's.
func compareRows(origin, proxy []string) (string, bool) {
	if slices.Equal(origin, proxy) {
		return "equal", true
	}
	if len(origin) == len(proxy) {
		o, p := slices.Clone(origin), slices.Clone(proxy)
		slices.Sort(o)
		slices.Sort(p)
		if slices.Equal(o, p) {
			return "equal rows, ties ordered differently", true
		}
	}
	for i := range max(len(origin), len(proxy)) {
		var o, p string = "(none)", "(none)"
		if i < len(origin) {
			o = origin[i]
		}
		if i < len(proxy) {
			p = proxy[i]
		}
		if o != p {
			return fmt.Sprintf("DIFFERENT (%d vs %d rows; row %d: origin %q, pgaccel %q)", len(origin), len(proxy), i+1, o, p), false
		}
	}
	return "DIFFERENT", false
}

// drain runs sql over conn and reads every row.
func drain(ctx context.Context, conn *pgx.Conn, sql string) error {
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		return err
	}
	for rows.Next() {
		_ = rows.RawValues()
	}
	rows.Close()
	return rows.Err()
}

// drainDuckDB runs the planner's rewrite on the engine and reads every row.
func drainDuckDB(ctx context.Context, a *app.App, sql string) error {
	rows, err := a.Engine.Query(ctx, sql)
	if err != nil {
		return err
	}
	for rows.Next() {
		_ = rows.Values()
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// runQueries checks and times every query. Per query: the planner's
// decision; one run on the origin and one through pgaccel, compared row by
// row as text, with the route the proxy counted; then opts.rounds rounds of
// origin, pgaccel and bare DuckDB, the order rotating each round.
func runQueries(ctx context.Context, a *app.App, c *clients, logs *logCapture, qs []query, opts options, progress func(string, ...any)) ([]*queryResult, error) {
	// The session the proxy would plan for: the database's default
	// collation as refresh established it (the C locale's is bytewise).
	sess := &planner.Session{User: pgtest.AppUser, SearchPath: []string{"public"}, TextBytewise: opts.locale == ""}
	if opts.locale != "" {
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
		var key string
		if err := c.origin.QueryRow(ctx, "SELECT "+accelerator.DefaultCollationKeySQL).Scan(&key); err != nil {
			return nil, fmt.Errorf("read the default collation: %w", err)
		}
		sess.DefaultCollationLocale = accelerator.EstablishedCollation(key)
	}
	var out []*queryResult
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r := &queryResult{q: q, times: map[string][]time.Duration{}, timed: map[string]float64{}}
		out = append(out, r)
		if err := c.connect(ctx); err != nil {
			return out, err
		}
		r.decision = a.Planner.Plan(ctx, q.sql, sess)
		checkQuery(ctx, a, c, logs, r, opts)
		progress("%s: %s, %s", q.name, r.route, r.check)
		if r.err != nil {
			progress("%s: %v", q.name, r.err)
			continue
		}
		for round := range opts.rounds {
			for i := range targetNames {
				t := targetNames[(i+round)%len(targetNames)]
				if t == targetDuckDB && r.decision.Route != planner.RouteAccelerate {
					continue
				}
				if err := timeOnce(ctx, a, c, r, t, opts); err != nil {
					r.err = fmt.Errorf("%s round %d: %w", t, round+1, err)
					break
				}
			}
			if r.err != nil {
				progress("%s: %v", q.name, r.err)
				if err := c.connect(ctx); err != nil {
					return out, err
				}
				break
			}
		}
		o, _ := r.median(targetOrigin)
		p, _ := r.median(targetPgaccel)
		progress("%s: origin %v, pgaccel %v", q.name, o.Round(time.Microsecond), p.Round(time.Microsecond))
	}
	return out, nil
}

// checkQuery runs q once on the origin and once through pgaccel.
func checkQuery(ctx context.Context, a *app.App, c *clients, logs *logCapture, r *queryResult, opts options) {
	qctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	want, err := benchutil.TextRows(qctx, c.origin.PgConn(), r.q.sql)
	if err != nil {
		r.route, r.check, r.err = "?", "not checked", fmt.Errorf("origin: %w", err)
		return
	}
	logs.take()
	before, err := routeCounts(a)
	if err != nil {
		r.err = err
		return
	}
	got, err := benchutil.TextRows(qctx, c.proxy.PgConn(), r.q.sql)
	if err != nil {
		r.route, r.check, r.err = "?", "not checked", fmt.Errorf("pgaccel: %w", err)
		return
	}
	after, err := routeCounts(a)
	if err != nil {
		r.err = err
		return
	}
	d := routeDelta(before, after)
	switch {
	case d[routeAccelerated] == 1 && len(d) == 1:
		r.route = routeAccelerated
	case d[routeFallback] > 0:
		r.route = routeFallback
	case d[routeOrigin] > 0:
		r.route = routeOrigin
	default:
		r.route = fmt.Sprintf("? (%v)", d)
	}
	if !r.accelerated() {
		var why []string
		if r.decision.Route != planner.RouteAccelerate {
			why = append(why, "planner: "+r.decision.Reason)
		}
		why = append(why, logs.take()...)
		r.why = strings.Join(why, "; ")
	}
	r.rows = len(want)
	r.check, r.equal = compareRows(want, got)
}

// timeOnce runs r's query once on target and records the time.
func timeOnce(ctx context.Context, a *app.App, c *clients, r *queryResult, target string, opts options) error {
	qctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	var before map[string]float64
	if target == targetPgaccel {
		var err error
		if before, err = routeCounts(a); err != nil {
			return err
		}
	}
	began := time.Now()
	var err error
	switch target {
	case targetOrigin:
		err = drain(qctx, c.origin, r.q.sql)
	case targetPgaccel:
		err = drain(qctx, c.proxy, r.q.sql)
	case targetDuckDB:
		err = drainDuckDB(qctx, a, r.decision.SQL)
	}
	elapsed := time.Since(began)
	if err != nil {
		return err
	}
	r.times[target] = append(r.times[target], elapsed)
	if target == targetPgaccel {
		after, err := routeCounts(a)
		if err != nil {
			return err
		}
		for k, v := range routeDelta(before, after) {
			r.timed[k] += v
		}
	}
	return nil
}

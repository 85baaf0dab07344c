// Command dashboard replays a dashboard against TPC-H (issue 19's
// "bench/dashboard"): 20 distinct analytic statements, sent in random order
// by -clients sessions for -duration, against the origin directly, through
// pgaccel with the results cache off (SET pgaccel.cache = off, through the
// startup options) and with it on; halfway through each pgaccel run,
// lineitem and orders are refreshed (which drops the cached answers that
// read them). It reports statements per second and p50/p99 latency for
// each, and the cache's hits and misses. A last run goes through a second
// pgaccel whose eight datasets are refresh_mode: caching (nothing loaded:
// the origin answers each miss, kept for refresh_check_interval, 30s),
// with an on-demand refresh of lineitem and orders halfway (their answers
// dropped).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/bench/internal/tpchdata"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

const resultsSection = "Dashboard replay (bench/dashboard)"

// statements are the dashboard: aggregates a BI tool's tiles send.
var statements = []string{
	"SELECT l_returnflag, l_linestatus, sum(l_quantity), count(*) FROM lineitem GROUP BY 1, 2 ORDER BY 1, 2",
	"SELECT l_shipmode, count(*) FROM lineitem GROUP BY 1 ORDER BY 1",
	"SELECT extract(year FROM l_shipdate) AS y, count(*) FROM lineitem GROUP BY 1 ORDER BY 1",
	"SELECT l_linestatus, max(l_extendedprice), min(l_extendedprice) FROM lineitem GROUP BY 1 ORDER BY 1",
	"SELECT count(*) FROM lineitem WHERE l_shipdate >= DATE '1995-01-01' AND l_shipdate < DATE '1996-01-01'",
	"SELECT l_shipinstruct, sum(l_quantity) FROM lineitem GROUP BY 1 ORDER BY 1",
	"SELECT o_orderpriority, count(*) FROM orders GROUP BY 1 ORDER BY 1",
	"SELECT o_orderstatus, sum(o_totalprice) FROM orders GROUP BY 1 ORDER BY 1",
	"SELECT extract(year FROM o_orderdate) AS y, count(*), sum(o_totalprice) FROM orders GROUP BY 1 ORDER BY 1",
	"SELECT count(DISTINCT o_custkey) FROM orders",
	"SELECT c_mktsegment, count(*) FROM customer GROUP BY 1 ORDER BY 1",
	"SELECT n_name, count(*) FROM customer JOIN nation ON c_nationkey = n_nationkey GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
	"SELECT r_name, count(*) FROM supplier JOIN nation ON s_nationkey = n_nationkey JOIN region ON n_regionkey = r_regionkey GROUP BY 1 ORDER BY 1",
	"SELECT p_brand, count(*) FROM part GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
	"SELECT p_container, max(p_retailprice) FROM part GROUP BY 1 ORDER BY 1 LIMIT 20",
	"SELECT ps_suppkey, sum(ps_availqty) FROM partsupp GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
	"SELECT c_mktsegment, count(*) FROM orders JOIN customer ON o_custkey = c_custkey GROUP BY 1 ORDER BY 1",
	"SELECT o_orderpriority, count(*) FROM orders JOIN lineitem ON l_orderkey = o_orderkey WHERE l_commitdate < l_receiptdate GROUP BY 1 ORDER BY 1",
	"SELECT count(*) FROM supplier WHERE s_acctbal > 5000",
	"SELECT n_name, sum(s_acctbal) FROM supplier JOIN nation ON s_nationkey = n_nationkey GROUP BY 1 ORDER BY 1",
}

// relativeStatements are dashboard tiles over the last N years (TPC-H's
// dates are 1992-1998): now() and CURRENT_DATE, Metabase's "this year"
// truncation among them, which the acceleration answers as parameters bound per
// execution (planner/clock.go) and never keeps in the results cache
// (-set relative).
var relativeStatements = []string{
	"SELECT count(*), sum(l_quantity) FROM lineitem WHERE l_shipdate > current_date - interval '29 years'",
	"SELECT l_shipmode, count(*) FROM lineitem WHERE l_shipdate >= current_date - interval '30 years' GROUP BY 1 ORDER BY 1",
	"SELECT date_trunc('month', o_orderdate) AS m, count(*) FROM orders WHERE o_orderdate > now() - interval '30 years' GROUP BY 1 ORDER BY 1",
	"SELECT o_orderpriority, count(*) FROM orders WHERE o_orderdate BETWEEN current_date - 11000 AND current_date GROUP BY 1 ORDER BY 1",
	"SELECT extract(year FROM o_orderdate) AS y, count(*), sum(o_totalprice) FROM orders WHERE o_orderdate >= date_trunc('year', now() - interval '30 years') GROUP BY 1 ORDER BY 1",
}

// numericStatements are tiles over amounts of mixed display scales
// (-set numeric): o_totalprice and l_extendedprice become numerics without
// a declared scale, a third of them rounded to one decimal and a third
// given three (numericSetup), which the acceleration holds as their text
// (planner/numerictext.go): revenue by status, filters and top-N by value.
var numericStatements = []string{
	"SELECT o_orderstatus, sum(o_totalprice), count(*) FROM orders GROUP BY 1 ORDER BY 1",
	"SELECT o_orderpriority, sum(o_totalprice) FROM orders WHERE o_totalprice > 100000 GROUP BY 1 ORDER BY 1",
	"SELECT l_returnflag, l_linestatus, sum(l_extendedprice), count(*) FROM lineitem GROUP BY 1, 2 ORDER BY 1, 2",
	"SELECT count(*) FROM lineitem WHERE l_extendedprice BETWEEN 1000 AND 2000",
	"SELECT o_orderkey, o_totalprice FROM orders ORDER BY o_totalprice DESC, o_orderkey LIMIT 10",
}

// numericSetup gives the amounts of -set numeric their mixed scales.
var numericSetup = []string{
	`ALTER TABLE orders ALTER COLUMN o_totalprice TYPE numeric USING
	  CASE o_orderkey % 3 WHEN 0 THEN round(o_totalprice, 1) WHEN 1 THEN o_totalprice::numeric(16,3) ELSE o_totalprice END`,
	`ALTER TABLE lineitem ALTER COLUMN l_extendedprice TYPE numeric USING
	  CASE l_linenumber % 3 WHEN 0 THEN round(l_extendedprice, 1) WHEN 1 THEN l_extendedprice::numeric(16,3) ELSE l_extendedprice END`,
	"VACUUM ANALYZE orders",
	"VACUUM ANALYZE lineitem",
}

type options struct {
	set           string
	sf            float64
	clients       int
	duration      time.Duration
	out           string
	generateChild bool
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&o.sf, "sf", 1, "TPC-H scale factor: a whole number, or a multiple of 0.001 below 1")
	fs.IntVar(&o.clients, "clients", 8, "sessions replaying the dashboard at once")
	fs.StringVar(&o.set, "set", "bi", "the statements: bi (20 BI tiles), relative (5 tiles filtering by now() and CURRENT_DATE) or numeric (5 tiles over amounts of mixed display scales)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "length of each target's run")
	fs.StringVar(&o.out, "out", "", "also append the Markdown report to this `file` (bench/RESULTS.md) under \""+resultsSection+"\"")
	fs.BoolVar(&o.generateChild, tpchdata.ChildFlag, false, "internal: generate the data as the child process of a run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.generateChild {
		return tpchdata.ChildMain(ctx, "dashboard", o.sf, stdout, stderr)
	}
	switch o.set {
	case "bi":
	case "relative":
		statements = relativeStatements
	case "numeric":
		statements = numericStatements
	default:
		fmt.Fprintln(stderr, "dashboard: -set is bi, relative or numeric")
		return 2
	}
	if fs.NArg() > 0 || o.sf <= 0 || o.clients < 1 || o.duration <= 0 {
		fmt.Fprintln(stderr, "dashboard: bad flags (see -help)")
		return 2
	}
	return benchutil.Exit(ctx, "dashboard", benchmark(ctx, o, args, stdout, stderr), stderr)
}

// result is one target's run.
type result struct {
	target     string
	statements int
	errors     int
	elapsed    time.Duration
	lat        []time.Duration
	hits, miss float64
	originReqs float64 // the results cache's origin requests (refresh_mode: caching)
	accel      float64 // statements the acceleration answered (cache hits included)
}

func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

func benchmark(ctx context.Context, o options, args []string, stdout, stderr io.Writer) (err error) {
	progress := benchutil.Progress(stderr)
	loadStart := benchutil.LoadAvg()
	origin, err := benchutil.StartOrigin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if serr := origin.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	if _, err := tpchdata.Load(ctx, origin, o.sf, progress); err != nil {
		return err
	}
	if o.set == "numeric" {
		progress("giving o_totalprice and l_extendedprice mixed display scales")
		for _, sql := range numericSetup {
			if err := origin.Exec(ctx, sql); err != nil {
				return err
			}
		}
	}
	dir, err := os.MkdirTemp("", "pgaccel-dashboard-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, err := tpchdata.Config(origin.SuperDSN(), dir, "", nil, "")
	if err != nil {
		return err
	}
	progress("starting pgaccel; loading the 8 datasets")
	a, err := app.Start(cfg, zerolog.Nop())
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = a.Shutdown(sctx)
	}()
	if err := a.WaitReady(ctx); err != nil {
		return err
	}
	via := func(a *app.App, opts string) string {
		return "postgres://" + pgtest.AppUser + ":" + pgtest.AppPassword + "@" + a.Addr() + "/" + origin.Database + "?sslmode=disable" + opts
	}
	// The caching-mode pgaccel starts when its run comes (nothing to load).
	ccfg, err := tpchdata.Config(origin.SuperDSN(), dir+"/caching", "", nil, "      refresh_mode: caching\n")
	if err != nil {
		return err
	}
	var ca *app.App
	defer func() {
		if ca != nil {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = ca.Shutdown(sctx)
		}
	}()
	targets := []struct {
		name    string
		dsn     func() (string, *app.App, error)
		refresh bool
	}{
		{"origin", func() (string, *app.App, error) { return origin.DSN(pgtest.AppUser, pgtest.AppPassword), a, nil }, false},
		{"pgaccel, cache off", func() (string, *app.App, error) { return via(a, "&options=-c%20pgaccel.cache%3Doff"), a, nil }, true},
		{"pgaccel, cache on", func() (string, *app.App, error) { return via(a, ""), a, nil }, true},
		{"pgaccel, refresh_mode: caching", func() (string, *app.App, error) {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = a.Shutdown(sctx) // the accelerations' memory back
			cancel()
			var err error
			if ca, err = app.Start(ccfg, zerolog.Nop()); err != nil {
				return "", nil, err
			}
			return via(ca, ""), ca, ca.WaitReady(ctx)
		}, true},
	}
	var results []result
	for _, tg := range targets {
		dsn, ta, err := tg.dsn()
		if err != nil {
			return fmt.Errorf("%s: %w", tg.name, err)
		}
		progress("%s: %d clients for %v", tg.name, o.clients, o.duration)
		before, beforeMiss := counter(ta, "pgaccel_results_cache_hits_total"), counter(ta, "pgaccel_results_cache_misses_total")
		beforeOrigin := counter(ta, "pgaccel_results_cache_origin_requests_total")
		beforeAccel := routeCounter(ta, "accelerated")
		r, err := replay(ctx, dsn, o, func() {
			if tg.refresh {
				for _, t := range []string{"lineitem", "orders"} {
					if err := ta.Runner.Refresh(ctx, t); err != nil {
						progress("refresh of %s: %v", t, err)
					}
				}
			}
		})
		if err != nil {
			return fmt.Errorf("%s: %w", tg.name, err)
		}
		r.target = tg.name
		r.hits = counter(ta, "pgaccel_results_cache_hits_total") - before
		r.miss = counter(ta, "pgaccel_results_cache_misses_total") - beforeMiss
		r.originReqs = counter(ta, "pgaccel_results_cache_origin_requests_total") - beforeOrigin
		if tg.name != "origin" {
			r.accel = routeCounter(ta, "accelerated") - beforeAccel
		}
		progress("%s: %d statements, %.0f/s, p50 %v, p99 %v, %d errors", tg.name, r.statements,
			float64(r.statements)/r.elapsed.Seconds(), r.pct(0.5), r.pct(0.99), r.errors)
		results = append(results, r)
	}

	var md strings.Builder
	setName := "The 20 statements are in bench/dashboard/main.go"
	if o.set == "relative" {
		setName = "The 5 relative-time statements (now(), CURRENT_DATE, date_trunc of now()) are relativeStatements in bench/dashboard/main.go"
	}
	if o.set == "numeric" {
		setName = "The 5 statements over amounts of mixed display scales (held as text) are numericStatements in bench/dashboard/main.go"
	}
	fmt.Fprintf(&md, "\n### %s, TPC-H SF%g, %d clients, %v per target, -set %s (%s)\n\n", time.Now().UTC().Format("2006-01-02"), o.sf, o.clients, o.duration, o.set, benchutil.Revision(ctx))
	fmt.Fprintf(&md, "Command: `%s`. Machine: %s, %s, %s; load average at start %s, at end %s. %s; each pgaccel run refreshes lineitem and orders halfway (their cached answers are dropped).\n\n",
		benchutil.CommandLine("./bench/dashboard", args), benchutil.CPUModel(), benchutil.MemTotal(), benchutil.GoVersion(), loadStart, benchutil.LoadAvg(), setName)
	md.WriteString("| target | statements/s | p50 | p99 | errors | accelerated | cache hits | cache misses | origin requests of the cache |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	rate := func(r result) float64 { return float64(r.statements) / r.elapsed.Seconds() }
	for i, r := range results {
		if i == 0 {
			fmt.Fprintf(&md, "| %s | %.1f | %v | %v | %d | | | | |\n", r.target, rate(r), r.pct(0.5).Round(10*time.Microsecond), r.pct(0.99).Round(10*time.Microsecond), r.errors)
			continue
		}
		fmt.Fprintf(&md, "| %s | %.1f | %v | %v | %d | %.0f | %.0f | %.0f | %.0f |\n", r.target, rate(r),
			r.pct(0.5).Round(10*time.Microsecond), r.pct(0.99).Round(10*time.Microsecond), r.errors, r.accel, r.hits, r.miss, r.originReqs)
	}
	if len(results) == 4 && results[1].statements > 0 && results[0].statements > 0 {
		fmt.Fprintf(&md, "\nStatements per second, cache on / cache off: **%.1f×**; cache on / origin: **%.1f×**; refresh_mode: caching / origin: **%.1f×**.\n",
			rate(results[2])/rate(results[1]), rate(results[2])/rate(results[0]), rate(results[3])/rate(results[0]))
	}
	fmt.Fprint(stdout, md.String())
	if o.out != "" {
		return benchutil.AppendToSection(o.out, resultsSection, md.String())
	}
	return nil
}

// replay runs o.clients sessions sending the statements in random order
// until o.duration has passed, calling mid once halfway.
func replay(ctx context.Context, dsn string, o options, mid func()) (result, error) {
	var r result
	var mu sync.Mutex
	var wg sync.WaitGroup
	conns := make([]*pgx.Conn, o.clients)
	for i := range conns {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return r, err
		}
		defer c.Close(context.Background())
		conns[i] = c
	}
	start := time.Now()
	end := start.Add(o.duration)
	midDone := make(chan struct{})
	go func() {
		defer close(midDone)
		select {
		case <-ctx.Done():
		case <-time.After(o.duration / 2):
			mid()
		}
	}()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(i), 42))
			var lat []time.Duration
			n, errs := 0, 0
			for time.Now().Before(end) && ctx.Err() == nil {
				sql := statements[rnd.IntN(len(statements))]
				t0 := time.Now()
				rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
				if err == nil {
					for rows.Next() {
					}
					rows.Close()
					err = rows.Err()
				}
				lat = append(lat, time.Since(t0))
				n++
				if err != nil {
					errs++
				}
			}
			mu.Lock()
			r.lat = append(r.lat, lat...)
			r.statements += n
			r.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	<-midDone
	slices.Sort(r.lat)
	return r, ctx.Err()
}

// counter is the value of an unlabelled counter of a's metrics.
func counter(a *app.App, name string) float64 {
	mfs, err := a.Metrics.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			sum := 0.0
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
			return sum
		}
	}
	return 0
}

// routeCounter is pgaccel_statements_total of one route.
func routeCounter(a *app.App, route string) float64 {
	mfs, err := a.Metrics.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "pgaccel_statements_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "route" && l.GetValue() == route {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/bench/internal/tpchdata"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/rs/zerolog"
)

// options are the command-line flags.
type options struct {
	sf            float64
	rounds        int
	refreshRounds int
	refreshTLS    bool
	queries       string
	timeout       time.Duration
	out           string
	// verify is runtime.verify's sample_rate ("": off).
	verify string
	// noCache turns the results cache off (runtime.results_cache).
	noCache bool
	// locale: the data lives in a database created with this LOCALE
	// ("": the harness's C database).
	locale string
	// generateChild makes this process loadTPCH's generator (hidden).
	generateChild bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "tpch: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.generateChild {
		return tpchdata.ChildMain(ctx, "tpch", opts.sf, stdout, stderr)
	}

	return benchutil.Exit(ctx, "tpch", benchmark(ctx, opts, args, stdout, stderr), stderr)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("tpch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&o.sf, "sf", 0.1, "TPC-H scale factor: a whole number, or a multiple of 0.001 below 1")
	fs.IntVar(&o.rounds, "rounds", 3, "timed runs of every query on every target")
	fs.IntVar(&o.refreshRounds, "refresh-rounds", 3, "timed refreshes of lineitem (and plain COPYs)")
	fs.BoolVar(&o.refreshTLS, "refresh-tls", true, "also time the refreshes over a TLS origin link (sslmode=require), by a second pgaccel holding only lineitem")
	fs.StringVar(&o.queries, "queries", "all", "comma-separated queries to run, e.g. 1,3,6 (all: Q1 to Q22)")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "limit of any one query run")
	fs.BoolVar(&o.noCache, "no-results-cache", false, "turn the results cache off, so that every pgaccel run executes on DuckDB")
	fs.StringVar(&o.verify, "verify", "", "turn shadow verification (runtime.verify) on with this sample_rate, e.g. 1% (off when empty)")
	fs.StringVar(&o.locale, "locale", "", "load and query a database created with this `LOCALE` (e.g. en_US.UTF-8 for libc, icu:en-US for ICU) instead of the C one")
	fs.StringVar(&o.out, "out", "", "also append the Markdown report to this `file` (bench/RESULTS.md) under \""+resultsSection+"\"")
	fs.BoolVar(&o.generateChild, tpchdata.ChildFlag, false, "internal: generate the data as the child process of a run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q; every setting is a flag (see -help)", fs.Args())
	}
	var problems []string
	if o.sf <= 0 {
		problems = append(problems, "-sf must be positive")
	}
	if o.rounds < 1 {
		problems = append(problems, "-rounds must be at least 1")
	}
	if o.refreshRounds < 0 {
		problems = append(problems, "-refresh-rounds must not be negative")
	}
	if o.timeout <= 0 {
		problems = append(problems, "-timeout must be positive")
	}
	if _, err := selectQueries(tpchQueries(1), o.queries); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return o, errors.New(strings.Join(problems, "; "))
	}
	return o, nil
}

// benchmark runs the whole benchmark; everything it starts is stopped
// before it returns.
func benchmark(ctx context.Context, opts options, args []string, stdout, stderr io.Writer) (err error) {
	progress := benchutil.Progress(stderr)
	qs, err := selectQueries(tpchQueries(opts.sf), opts.queries)
	if err != nil {
		return err
	}
	rep := report{command: benchutil.CommandLine("./bench/tpch", args), opts: opts}
	rep.loadAvgs = append(rep.loadAvgs, [2]string{"start", benchutil.LoadAvg()})

	progress("starting origin PostgreSQL")
	origin, err := benchutil.StartOrigin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := origin.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()

	if opts.locale != "" {
		const db = "pgaccel_tpch_locale"
		if err := benchutil.LocaleDatabase(ctx, origin, db, opts.locale); err != nil {
			return err
		}
		origin.Database = db // every DSN below, pgaccel's origin too
		progress("data in database %s, LOCALE %s", db, opts.locale)
	}
	if rep.load, err = tpchdata.Load(ctx, origin, opts.sf, progress); err != nil {
		return err
	}

	progress("starting pgaccel; loading the 8 datasets")
	dataDir, err := os.MkdirTemp("", "pgaccel-tpch-")
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	defer os.RemoveAll(dataDir)
	logs := &logCapture{console: zerolog.ConsoleWriter{Out: stderr}}
	rep.rssBeforeStart = benchutil.SelfStatus("VmRSS")
	a, accelLoad, err := startPgaccel(ctx, origin.SuperDSN(), nil, dataDir, logs, opts.verify, opts.noCache)
	if a != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if serr := a.Shutdown(sctx); serr != nil && err == nil {
				err = fmt.Errorf("shut pgaccel down: %w", serr)
			}
		}()
	}
	if err != nil {
		return err
	}
	rep.accelLoad = accelLoad
	progress("pgaccel ready in %v; RSS %d MiB (%d MiB before it started)", accelLoad.Round(time.Millisecond), benchutil.SelfStatus("VmRSS")>>20, rep.rssBeforeStart>>20)
	rep.machine = collectMachineInfo(ctx, origin, a)
	rep.loadAvgs = append(rep.loadAvgs, [2]string{"after loading", benchutil.LoadAvg()})

	if opts.refreshRounds > 0 {
		progress("measuring the refresh of lineitem against plain COPY")
		if rep.refresh, rep.idleRSS, err = measureRefresh(ctx, a, origin.SuperDSN(), opts, progress); err != nil {
			return err
		}
		rep.loadAvgs = append(rep.loadAvgs, [2]string{"after refresh", benchutil.LoadAvg()})
		if opts.refreshTLS {
			progress("measuring the refresh of lineitem over a TLS origin link (sslmode=require) against plain COPY over TLS")
			if rep.refreshTLS, rep.idleRSSTLS, err = measureTLSRefresh(ctx, origin, dataDir, logs, opts, progress); err != nil {
				return err
			}
			rep.loadAvgs = append(rep.loadAvgs, [2]string{"after TLS refresh", benchutil.LoadAvg()})
		}
	}

	c := &clients{
		originDSN: origin.DSN(pgtest.AppUser, pgtest.AppPassword),
		proxyDSN:  "postgres://" + pgtest.AppUser + ":" + pgtest.AppPassword + "@" + a.Addr() + "/" + origin.Database + "?sslmode=disable",
	}
	defer c.close()
	progress("running %d queries, %d round(s)", len(qs), opts.rounds)
	rep.queries, err = runQueries(ctx, a, c, logs, qs, opts, progress)
	if err != nil {
		return err
	}
	for _, q := range qs {
		if q.name == "Q1" {
			progress("Q1 with an exact avg(numeric), hand-written for DuckDB")
			rep.exactAvg = probeExactAvg(ctx, a, c, q, opts)
		}
	}
	rep.loadAvgs = append(rep.loadAvgs, [2]string{"end", benchutil.LoadAvg()})
	rep.finished = time.Now()
	if opts.verify != "" {
		v, _ := benchutil.MetricSums(a.Metrics, "pgaccel_verify_total", "result")
		progress("shadow verification (sample_rate %s): %v", opts.verify, v)
		rep.verify = v
	}

	md := rep.markdown()
	fmt.Fprint(stdout, md)
	if opts.out != "" {
		if err := benchutil.AppendToSection(opts.out, resultsSection, md); err != nil {
			return err
		}
		progress("appended the report to %s", opts.out)
	}
	return nil
}

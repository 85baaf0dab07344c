package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// options are the command-line flags.
type options struct {
	rates        []int // ops/s; 0: unthrottled
	duration     time.Duration
	rows         int
	clients      int
	threads      int
	search       int
	markerEvery  time.Duration
	pollEvery    time.Duration
	syncCommit   string
	drainTimeout time.Duration
	catchupOps   int
	bulk         bool
	mode         string
	out          string
	cpuprofile   string
	logFile      string
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
		fmt.Fprintf(stderr, "cdc: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.cpuprofile != "" {
		f, err := os.Create(opts.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "cdc: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "cdc: start the CPU profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	return benchutil.Exit(ctx, "cdc", benchmark(ctx, opts, args, stdout, stderr), stderr)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var rates string
	fs := flag.NewFlagSet("cdc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&rates, "rates", "1000,5000,max", "comma-separated write rates in ops/s (1000, 5k), in the order run; max runs pgbench unthrottled")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "pgbench's run at each rate (whole seconds)")
	fs.IntVar(&o.rows, "rows", 100000, "rows in the table at the start")
	fs.IntVar(&o.clients, "clients", 8, "pgbench clients (-c)")
	fs.IntVar(&o.threads, "threads", 2, "pgbench threads (-j)")
	fs.IntVar(&o.search, "search", 0, "bisection steps between the highest sustained rate and the lowest unsustained one, after -rates")
	fs.DurationVar(&o.markerEvery, "marker-every", 25*time.Millisecond, "interval between marker rows")
	fs.DurationVar(&o.pollEvery, "poll-every", 50*time.Millisecond, "longest interval between probe reads through pgaccel (one also follows every move of the stream's published position, checked every 1 ms)")
	fs.StringVar(&o.syncCommit, "synchronous-commit", "on", "synchronous_commit of pgbench's and the markers' sessions (the harness origin's default is off; logical decoding sends a commit only once its WAL is flushed)")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 2*time.Minute, "how long markers may stay invisible after the writes stop")
	fs.IntVar(&o.catchupOps, "catchup-ops", 100000, "changes written while pgaccel is down, then caught up (0: skip)")
	fs.BoolVar(&o.bulk, "bulk", true, "also time one UPDATE of every row in a single transaction")
	fs.StringVar(&o.mode, "mode", "file", "the dataset's acceleration.mode: file, or memory (no catch-up: a restart rebuilds)")
	fs.StringVar(&o.out, "out", "", "also append the Markdown report to this `file` (bench/RESULTS.md) under \""+resultsSection+"\"")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a Go CPU profile of the whole run (pgaccel runs in this process) to `file`")
	fs.StringVar(&o.logFile, "log", "", "write pgaccel's log (info and above, JSON) to `file` (default: a file in the run's temp dir, removed after)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q; every setting is a flag (see -help)", fs.Args())
	}
	var problems []string
	var err error
	if o.rates, err = parseRates(rates); err != nil {
		problems = append(problems, err.Error())
	}
	if o.duration < 3*time.Second {
		problems = append(problems, "-duration must be at least 3s (the lag trend compares thirds of the run)")
	}
	if o.rows < 1000 {
		problems = append(problems, "-rows must be at least 1000")
	}
	if o.clients < 1 || o.threads < 1 || o.threads > o.clients {
		problems = append(problems, "-clients and -threads must be at least 1, and -threads at most -clients")
	}
	if o.search < 0 || o.catchupOps < 0 {
		problems = append(problems, "-search and -catchup-ops must not be negative")
	}
	if o.markerEvery <= 0 || o.pollEvery <= 0 || o.drainTimeout <= 0 {
		problems = append(problems, "-marker-every, -poll-every and -drain-timeout must be positive")
	}
	if o.mode != "file" && o.mode != "memory" {
		problems = append(problems, "-mode must be file or memory")
	}
	if len(problems) > 0 {
		return o, errors.New(strings.Join(problems, "; "))
	}
	return o, nil
}

// parseRates reads "1000,5k,max".
func parseRates(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		if f == "max" {
			out = append(out, 0)
			continue
		}
		mult := 1
		if n, ok := strings.CutSuffix(f, "k"); ok {
			f, mult = n, 1000
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v*float64(mult) < 1 {
			return nil, fmt.Errorf("-rates: %q is not a rate (a number of ops/s such as 1000 or 5k, or max)", f)
		}
		out = append(out, int(v*float64(mult)))
	}
	if len(out) == 0 {
		return nil, errors.New("-rates names no rate")
	}
	return out, nil
}

// benchmark runs the whole benchmark; everything it starts is stopped
// before it returns.
func benchmark(ctx context.Context, opts options, args []string, stdout, stderr io.Writer) (err error) {
	progress := benchutil.Progress(stderr)
	rep := &report{command: benchutil.CommandLine("./bench/cdc", args), opts: opts}
	rep.loadAvgs = append(rep.loadAvgs, [2]string{"start", benchutil.LoadAvg()})
	pgbenchPath, err := benchutil.FindPgbench()
	if err != nil {
		return err
	}

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
	dir, err := os.MkdirTemp("", "pgaccel-cdc-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	progress("creating %s with %d rows", table, opts.rows)
	if err := setupTable(ctx, origin, opts.rows); err != nil {
		return err
	}
	bench, err := newPgbench(pgbenchPath, origin, dir, opts.rows, opts.syncCommit)
	if err != nil {
		return err
	}

	logPath := opts.logFile
	if logPath == "" {
		logPath = filepath.Join(dir, "pgaccel.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("pgaccel log: %w", err)
	}
	defer logFile.Close()
	logs := &logCapture{console: stderr, file: logFile}
	cfg, err := config(origin.SuperDSN(), filepath.Join(dir, "data"), opts.mode)
	if err != nil {
		return err
	}

	e := &env{bench: bench, opts: opts, logs: logs}
	defer func() {
		closeProxies(e)
		for _, c := range []*pgx.Conn{e.origin, e.check} {
			if c != nil {
				c.Close(context.Background())
			}
		}
		if e.a != nil {
			if serr := shutdown(e.a); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	progress("starting pgaccel; initial load of %s from its slot's snapshot", table)
	began := time.Now()
	e.a, err = startPgaccel(ctx, cfg, logs)
	if err != nil {
		return err
	}
	rep.initialLoad = time.Since(began)
	if e.origin, err = benchutil.ConnectSimple(ctx, origin.SuperDSN()); err != nil {
		return fmt.Errorf("connect to the origin: %w", err)
	}
	if _, err := e.origin.Exec(ctx, "SET synchronous_commit = "+opts.syncCommit); err != nil {
		return fmt.Errorf("-synchronous-commit: %w", err)
	}
	if e.check, err = benchutil.ConnectSimple(ctx, origin.SuperDSN()); err != nil {
		return fmt.Errorf("connect to the origin: %w", err)
	}
	var backend int
	if err := e.check.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return fmt.Errorf("read the origin's backend pid: %w", err)
	}
	e.postmaster = parentOf(backend)
	e.markers = &probe{origin: e.origin, every: opts.markerEvery, poll: opts.pollEvery}
	e.proxyDSN = func() string {
		return "postgres://" + pgtest.AppUser + ":" + pgtest.AppPassword + "@" + e.a.Addr() + "/" + origin.Database + "?sslmode=disable"
	}
	if err := openProxies(ctx, e); err != nil {
		return err
	}
	rep.machine = collectMachineInfo(ctx, e.check, e.a, bench)
	rep.loadAvgs = append(rep.loadAvgs, [2]string{"after the initial load", benchutil.LoadAvg()})
	progress("pgaccel ready in %v", rep.initialLoad.Round(time.Millisecond))

	step := func(target int, search bool) *stepResult {
		name := "unthrottled"
		if target > 0 {
			name = fmt.Sprintf("%d ops/s", target)
		}
		progress("%s for %v: pgbench against the origin, a marker every %v", name, opts.duration, opts.markerEvery)
		s := runStep(ctx, e, target, progress)
		s.search = search
		rep.steps = append(rep.steps, s)
		rep.loadAvgs = append(rep.loadAvgs, [2]string{"after " + rateName(target), s.loadAvg})
		progress("%s", s.summary())
		return s
	}
	for _, rate := range opts.rates {
		if s := step(rate, false); s.err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("rate %d: %w", rate, s.err)
		}
	}
	for range opts.search {
		lo, hi, ok := rep.bounds()
		if !ok {
			break
		}
		mid, ok := bisect(lo, hi)
		if !ok || rep.tried(mid) {
			break
		}
		if s := step(mid, true); s.err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("rate %d: %w", mid, s.err)
		}
	}

	if opts.catchupOps > 0 && opts.mode == "file" {
		restart := func() (*app.App, error) {
			a, err := app.Start(cfg, zerologFor(logs))
			if err != nil {
				return nil, fmt.Errorf("start pgaccel again: %w", err)
			}
			return a, nil
		}
		rep.catchUp = measureCatchUp(ctx, e, restart, progress)
		if rep.catchUp.err != nil {
			return fmt.Errorf("catch-up: %w", rep.catchUp.err)
		}
		progress("%s", rep.catchUp.summary())
		rep.loadAvgs = append(rep.loadAvgs, [2]string{"after the catch-up", benchutil.LoadAvg()})
	}
	if opts.bulk {
		progress("one UPDATE of every row in one transaction")
		rep.bulk = measureBulk(ctx, e)
		if rep.bulk.err != nil {
			return fmt.Errorf("bulk update: %w", rep.bulk.err)
		}
		progress("%s", rep.bulk.summary())
	}
	rep.loadAvgs = append(rep.loadAvgs, [2]string{"end", benchutil.LoadAvg()})
	rep.finished = time.Now()

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

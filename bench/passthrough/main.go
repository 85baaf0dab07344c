// Command passthrough benchmarks pgaccel's pass-through path against a
// direct connection and pgbouncer with pgbench. See package bench's doc.
//
//	go run ./bench/passthrough [-scale 10] [-duration 10s] [-rounds 3]
//	                           [-targets direct,pgaccel,pgbouncer]
//	                           [-workloads W,... | -cells W:CLIENTS,...]
//	                           [-out FILE] [-cpuprofile FILE] [-memprofile FILE]
//
// It starts a throwaway origin (internal/pgtest), loads it with
// `pgbench -i`, starts pgaccel and pgbouncer as child processes,
// runs every workload (at 1 and 8 clients, or the -cells named) against
// every target, prints a Markdown report (with each ratio's spread over
// the rounds) and
// stops everything it started, also on error, SIGINT and SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
)

// options are the command-line flags.
type options struct {
	scale      int
	duration   time.Duration
	rounds     int
	targets    []string
	out        string
	cpuprofile string
	memprofile string
	// withDataset runs pgaccel as `pgaccel run` with one accelerated
	// dataset (not read by pgbench): every statement then goes through the
	// routing hook before it takes the origin route.
	withDataset bool
	// accelerated also accelerates pgbench_accounts: select-only reads are
	// then answered by DuckDB (point reads by the primary key).
	accelerated bool
	// pointReads is runtime.point_reads for the -accelerated runs.
	pointReads string
	// noResultsCache turns runtime.results_cache off.
	noResultsCache bool
	// control runs the pgaccel-passthrough target with the same dataset as
	// pgaccel (an A/A run): their ratio then shows the bench's own bias
	// between two identical processes, against which -with-dataset's
	// ratio is read.
	control bool
	// noSettle skips settling the origin after a run that writes
	// (runAll).
	noSettle bool
	// auth is pgaccel's auth.mode: origin (logins relayed) or proxy
	// (pgaccel verifies SCRAM itself and logs in with the ClientKey).
	auth string
	// baseline is a passthrough binary built at another revision: its
	// pgaccel runs as the pgaccel-baseline target, with pgaccel's
	// configuration, so that one run compares two revisions round by
	// round.
	baseline string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(serveChild(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "-pool" {
		if err := pool(strings.Split(os.Args[2], ","), os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "passthrough: -pool: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "passthrough: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	return benchutil.Exit(ctx, "passthrough", benchmark(ctx, opts, args, stdout, stderr), stderr)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var targets, only, cells string
	fs := flag.NewFlagSet("passthrough", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.scale, "scale", 10, "pgbench scale factor for `pgbench -i -s`")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "length of each pgbench run (whole seconds)")
	fs.IntVar(&o.rounds, "rounds", 3, "how many times every workload runs against every target")
	fs.StringVar(&targets, "targets", strings.Join(slices.DeleteFunc(slices.Clone(targetNames), func(t string) bool { return t == targetBaseline }), ","), "comma-separated targets to run (pgaccel-baseline: see -baseline)")
	fs.StringVar(&o.out, "out", "", "also write the Markdown report to this `file`, replacing its \""+resultsHeading+"\" section if it has one")
	fs.StringVar(&only, "workloads", "", "comma-separated workloads to run (select-only-simple, select-only-extended, select-only-prepared, tpcb-like-simple, select-only-simple-connect, hot-key-select-simple, hot-key-select-extended, hot-key-select-prepared; default all but the hot-key ones, which -accelerated adds)")
	fs.StringVar(&cells, "cells", "", "comma-separated workload:clients pairs to run instead of every workload at 1 and 8 clients (such as select-only-simple:1,tpcb-like-simple:8)")
	fs.BoolVar(&o.withDataset, "with-dataset", false, "run pgaccel with one accelerated dataset, so that every statement passes the routing hook")
	fs.BoolVar(&o.noSettle, "no-settle", false, "do not vacuum and checkpoint the origin after each run that writes (as before 2026-12-05)")
	fs.BoolVar(&o.control, "control", false, "with -with-dataset, run the pgaccel-passthrough target with the same dataset too (an A/A run: its ratio to pgaccel is the bench's own bias)")
	fs.BoolVar(&o.accelerated, "accelerated", false, "also accelerate pgbench_accounts, whose select-only reads are point reads by its primary key (implies -with-dataset)")
	fs.StringVar(&o.pointReads, "point-reads", "origin", "runtime.point_reads: origin, or acceleration (DuckDB answers the point reads of -accelerated)")
	fs.BoolVar(&o.noResultsCache, "no-results-cache", false, "run pgaccel with runtime.results_cache.enabled: false")
	fs.StringVar(&o.auth, "auth", "origin", "pgaccel's auth.mode: origin (logins relayed to the origin) or proxy (pgaccel verifies them itself)")
	fs.StringVar(&o.memprofile, "memprofile", "", "write pgaccel's allocation profile (its allocations since it started, sampled) to `file` when it stops")
	fs.StringVar(&o.baseline, "baseline", "", "a passthrough `binary` built at another revision (go build -o BIN ./bench/passthrough in a worktree of it): its pgaccel runs beside this one's as the pgaccel-baseline target, configured alike")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of pgaccel (its process, the whole benchmark) to `file`")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.accelerated {
		o.withDataset = true
	}
	if o.control && !o.withDataset {
		return o, fmt.Errorf("-control needs -with-dataset")
	}
	if o.auth != "origin" && o.auth != "proxy" {
		return o, fmt.Errorf("-auth: %q is not origin or proxy", o.auth)
	}
	if o.pointReads != "origin" && o.pointReads != "acceleration" {
		return o, fmt.Errorf("-point-reads: %q is not origin or acceleration", o.pointReads)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q; every setting is a flag (see -help)", fs.Args())
	}
	var problems []string
	if o.scale < 1 {
		problems = append(problems, "-scale must be at least 1")
	}
	if o.duration < time.Second || o.duration%time.Second != 0 {
		problems = append(problems, "-duration must be a whole number of seconds, at least 1s (pgbench -T takes seconds)")
	}
	if o.rounds < 1 {
		problems = append(problems, "-rounds must be at least 1")
	}
	for _, t := range strings.Split(targets, ",") {
		t = strings.TrimSpace(t)
		if !isTarget(t) {
			problems = append(problems, fmt.Sprintf("-targets: unknown target %q (choose from %s)", t, strings.Join(targetNames, ", ")))
			continue
		}
		o.targets = append(o.targets, t)
	}
	switch has := slices.Contains(o.targets, targetBaseline); {
	case o.baseline != "" && !has:
		o.targets = append(o.targets, targetBaseline)
	case o.baseline == "" && has:
		problems = append(problems, "-targets: pgaccel-baseline needs -baseline")
	}
	if cells != "" {
		if only != "" {
			problems = append(problems, "-cells and -workloads: give one of them")
		} else if c, err := parseCells(cells); err != nil {
			problems = append(problems, err.Error())
		} else {
			onlyCells = c
		}
	}
	if only != "" {
		var keep []workload
		for _, name := range strings.Split(only, ",") {
			name = strings.TrimSpace(name)
			i := slices.IndexFunc(workloads, func(w workload) bool { return strings.ReplaceAll(w.name, " ", "-") == name })
			if i < 0 {
				problems = append(problems, fmt.Sprintf("-workloads: unknown workload %q", name))
				continue
			}
			keep = append(keep, workloads[i])
		}
		workloads = keep
	} else if !o.accelerated {
		workloads = slices.DeleteFunc(workloads, func(w workload) bool { return w.hot })
	}
	if len(problems) > 0 {
		return o, errors.New(strings.Join(problems, "; "))
	}
	return o, nil
}

// benchmark runs the whole benchmark; everything it starts is stopped
// before it returns.
func benchmark(ctx context.Context, opts options, args []string, stdout, stderr io.Writer) (err error) {
	pgb, err := findPgbench()
	if err != nil {
		return err
	}
	wantBouncer := slices.Contains(opts.targets, targetPgbouncer)
	if wantBouncer {
		if err := checkPgbouncer(); err != nil {
			return err
		}
	}
	progress := benchutil.Progress(stderr)

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
	pgb.configure(origin)
	scripts, err := os.MkdirTemp("", "pgaccel-passthrough-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scripts)
	if err := writeHotKeyScript(scripts); err != nil {
		return err
	}

	progress("pgbench -i -s %d", opts.scale)
	if err := pgb.initialize(ctx, origin.Host, origin.Port, opts.scale); err != nil {
		return err
	}

	targets := []target{{name: targetDirect, host: origin.Host, port: origin.Port}}
	var stops []func() error
	defer func() {
		for _, stop := range stops {
			if stopErr := stop(); stopErr != nil && err == nil {
				err = stopErr
			}
		}
	}()
	// startTarget starts a pgaccel target (of binary; "": this one), which
	// stops when the run ends.
	startTarget := func(name, what string, o options, binary string) error {
		progress("starting %s", what)
		if name != targetPgaccel {
			o.cpuprofile, o.memprofile = "", ""
		}
		if binary == "" {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find this binary to run pgaccel: %w", err)
			}
			binary = self
		}
		px, err := startPgaccel(ctx, origin, o, binary, stderr)
		if err != nil {
			return err
		}
		px.name = name
		stops = append(stops, px.stop)
		targets = append(targets, px.target())
		return nil
	}
	if slices.Contains(opts.targets, targetPgaccel) {
		if err := startTarget(targetPgaccel, "pgaccel", opts, ""); err != nil {
			return err
		}
	}
	if opts.baseline != "" {
		if err := startTarget(targetBaseline, "pgaccel of the baseline binary", opts, opts.baseline); err != nil {
			return err
		}
	}
	if opts.withDataset && slices.Contains(opts.targets, targetPlain) {
		plainOpts := opts
		if !opts.control {
			plainOpts.withDataset, plainOpts.accelerated = false, false
		}
		if err := startTarget(targetPlain, "pgaccel without datasets", plainOpts, ""); err != nil {
			return err
		}
	}
	if wantBouncer {
		bouncer, startErr := startPgbouncer(ctx, origin)
		if startErr != nil {
			return startErr
		}
		defer func() {
			if stopErr := bouncer.stop(); stopErr != nil && err == nil {
				err = stopErr
			}
		}()
		targets = append(targets, bouncer.target())
	}
	targets = selectTargets(targets, opts.targets)

	info := collectMachineInfo(ctx, origin, pgb)

	results, err := runAll(ctx, pgb, targets, opts, origin.SuperDSN(), progress)
	if err != nil {
		return err
	}
	rep := report{
		command:  commandLine(args),
		machine:  info,
		opts:     opts,
		targets:  targetNamesOf(targets),
		results:  results,
		finished: time.Now(),
		loadEnd:  benchutil.LoadAvg(),
	}
	md := rep.markdown()
	if _, err := io.WriteString(stdout, md); err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	if opts.out != "" {
		if err := benchutil.ReplaceSection(opts.out, rep.heading(), md); err != nil {
			return err
		}
	}
	return nil
}

// runAll runs every case against every target, round by round. Within a
// round the target order rotates so that no target always runs first after
// another target's write-heavy run. After a run that writes, the origin is
// settled (settle) before the next run, unless -no-settle.
func runAll(ctx context.Context, pgb *pgbench, targets []target, opts options, originDSN string, progress func(string, ...any)) (*results, error) {
	res := newResults()
	cases := benchCases()
	total := opts.rounds * len(cases) * len(targets)
	n := 0
	for r := 0; r < opts.rounds; r++ {
		for _, c := range cases {
			for i := range targets {
				t := targets[(i+r)%len(targets)]
				n++
				out, err := runOne(ctx, pgb, t, c, opts.duration)
				if err != nil {
					return nil, fmt.Errorf("round %d, %s, %s: %w", r+1, c, t.name, err)
				}
				res.add(c, t.name, out)
				progress("[%d/%d] round %d  %-34s %-9s %10.1f tps %8.3f ms", n, total, r+1, c, t.name, out.tps, out.latencyMS)
				if c.workload.writes && !opts.noSettle {
					if err := settle(ctx, originDSN); err != nil {
						return nil, fmt.Errorf("round %d, after %s, %s: settle the origin: %w", r+1, c, t.name, err)
					}
				}
			}
		}
	}
	return res, nil
}

// settle brings the origin back to the state of a fresh load after a run
// that wrote: every page the run's updates touched vacuumed (so the next
// run does not prune and set hint bits as it reads) and a checkpoint (so
// it does not flush the run's pages meanwhile). Without it, whichever
// target ran first after a TPC-B run paid for it: at one client the
// select-only run after the TPC-B cell was about 10 % slower than the
// next one, whichever target (bench/RESULTS.md, 2026-12-05 evening).
// It runs directly against the origin, outside every measurement.
func settle(ctx context.Context, dsn string) error {
	c, err := benchutil.ConnectSimple(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, sql := range []string{
		"VACUUM pgbench_accounts, pgbench_branches, pgbench_tellers, pgbench_history",
		"CHECKPOINT",
	} {
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// runOne runs c against t once, measuring the proxy's CPU time too.
func runOne(ctx context.Context, pgb *pgbench, t target, c benchCase, d time.Duration) (outcome, error) {
	var before cpuTimes
	if t.cpu != nil {
		var err error
		if before, err = t.cpu(); err != nil {
			return outcome{}, err
		}
	}
	out, err := pgb.run(ctx, t, c, d)
	if err != nil || t.cpu == nil {
		return out, err
	}
	after, err := t.cpu()
	if err != nil {
		return outcome{}, err
	}
	out.proxyCPU, out.hasCPU = after.sub(before), true
	return out, nil
}

// commandLine is how the benchmark was invoked, for the report.
func commandLine(args []string) string {
	return strings.TrimSpace("go run ./bench/passthrough " + strings.Join(args, " "))
}

// writeHeapProfile writes the allocation profile (every allocation since
// the process started, sampled) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create memory profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("write memory profile: %w", err)
	}
	return f.Close()
}

// Command snapshots measures a new replica's time to its first accelerated
// answer on TPC-H, started from acceleration snapshots against started by
// a full refresh from the origin, in the same run, with the bytes it read
// from the origin (issue 18's "bench/snapshots").
//
// It loads TPC-H at -sf into a throwaway origin (bench/internal/tpchdata),
// starts a writer pgaccel that loads the eight tables in file mode and
// publishes a snapshot of each to a real S3-compatible server (versitygw,
// integration/s3test) or a directory (-store file), and stops it. Then,
// -rounds times, it starts new replicas, each with an empty data dir and
// its origin link through a counting TCP relay (integration/tcprelay):
//
//   - full: no snapshots; every table loads from the origin;
//   - bootstrap: acceleration.snapshots: bootstrap_only (refresh_mode
//     full): each table starts from its current snapshot;
//   - reader: refresh_mode: snapshot (the fleet's read replicas).
//
// For each it reports the time until every dataset is ready, the time
// until a client (connected through the replica, as the app role) has
// the answer of `SELECT count(*) FROM lineitem` from the acceleration,
// and the bytes the origin sent until each moment (the client's login and
// the catalog lookups of its first statement go to the origin, so the
// second figure is not zero for any replica).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/bench/internal/tpchdata"
	"github.com/pgaccel/pgaccel/integration/s3test"
	"github.com/pgaccel/pgaccel/integration/tcprelay"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/snapshot"
)

const resultsSection = "Replica cold start from snapshots"

type options struct {
	sf            float64
	rounds        int
	store         string
	out           string
	generateChild bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("snapshots", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&o.sf, "sf", 1, "TPC-H scale factor: a whole number, or a multiple of 0.001 below 1")
	fs.IntVar(&o.rounds, "rounds", 1, "times each replica kind is started")
	fs.StringVar(&o.store, "store", "s3", "where snapshots go: s3 (versitygw, started here) or file (a directory)")
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
		return tpchdata.ChildMain(ctx, "snapshots", o.sf, stdout, stderr)
	}
	if fs.NArg() > 0 || o.sf <= 0 || o.rounds < 1 || (o.store != "s3" && o.store != "file") {
		fmt.Fprintln(stderr, "snapshots: bad flags (see -help): -sf > 0, -rounds >= 1, -store s3 or file, no arguments")
		return 2
	}
	return benchutil.Exit(ctx, "snapshots", benchmark(ctx, o, args, stdout, stderr), stderr)
}

// replica is one kind of new replica.
type replica struct {
	name, snapshots, acc string
}

var replicas = []replica{
	{"full", "", "      mode: file\n"},
	{"bootstrap", "yes", "      mode: file\n      snapshots: bootstrap_only\n"},
	{"reader", "yes", "      mode: file\n      refresh_mode: snapshot\n      snapshots: enabled\n"},
}

// start is one replica's cold start.
type start struct {
	kind                   string
	ready, answer          time.Duration
	originReady, originAns int64 // bytes the origin sent until ready, until the answer
	downloaded             float64
	count                  int64
	route                  string
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
	load, err := tpchdata.Load(ctx, origin, o.sf, progress)
	if err != nil {
		return err
	}

	location, params, cleanup, err := snapshotStore(ctx, o.store, progress)
	if err != nil {
		return err
	}
	defer cleanup()
	store, err := snapshot.Open(ctx, location, params)
	if err != nil {
		return err
	}
	block := snapshotsBlock(location, params)

	progress("writer: loading the 8 tables from the origin and publishing a snapshot of each to %s", location)
	began := time.Now()
	writer, err := startApp(ctx, origin.SuperDSN(), block, "      mode: file\n      snapshots: create_only\n")
	if err != nil {
		return err
	}
	writerReady := time.Since(began)
	var snapBytes int64
	for _, t := range tpchdata.Tables {
		s, err := waitSnapshot(ctx, store, t.Name)
		if err != nil {
			_ = shutdown(writer)
			return err
		}
		snapBytes += s.Size
	}
	writerPublished := time.Since(began)
	if err := shutdown(writer); err != nil {
		return err
	}
	progress("writer: ready in %v, all published in %v (%d MiB of snapshots)", writerReady.Round(time.Millisecond),
		writerPublished.Round(time.Millisecond), snapBytes>>20)

	relay, err := tcprelay.Start(origin.Addr())
	if err != nil {
		return err
	}
	defer relay.Close()
	u, err := url.Parse(origin.SuperDSN())
	if err != nil {
		return err
	}
	u.Host = relay.Addr()
	viaRelay := u.String()

	var starts []start
	for round := 1; round <= o.rounds; round++ {
		for _, r := range replicas {
			b := ""
			if r.snapshots != "" {
				b = block
			}
			progress("round %d: starting a %s replica", round, r.name)
			s, err := coldStart(ctx, relay, viaRelay, origin.Database, b, r, load.Rows["lineitem"])
			if err != nil {
				return fmt.Errorf("%s replica: %w", r.name, err)
			}
			progress("round %d: %s replica ready in %v, first answer in %v, %d bytes from the origin until ready, %d until the answer",
				round, r.name, s.ready.Round(time.Millisecond), s.answer.Round(time.Millisecond), s.originReady, s.originAns)
			starts = append(starts, s)
		}
	}

	md := report(ctx, o, args, load, loadStart, writerReady, writerPublished, snapBytes, starts)
	fmt.Fprint(stdout, md)
	if o.out != "" {
		if err := benchutil.AppendToSection(o.out, resultsSection, md); err != nil {
			return err
		}
	}
	return nil
}

// snapshotStore makes the location snapshots go to: a bucket of a
// versitygw started here, or a new directory.
func snapshotStore(ctx context.Context, kind string, progress func(string, ...any)) (string, map[string]string, func(), error) {
	if kind == "file" {
		dir, err := os.MkdirTemp("", "pgaccel-snapshots-")
		if err != nil {
			return "", nil, nil, err
		}
		return "file://" + dir, nil, func() { os.RemoveAll(dir) }, nil
	}
	progress("starting versitygw (built on first use)")
	sctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	srv, err := s3test.Start(sctx)
	if err != nil {
		return "", nil, nil, err
	}
	raw := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	if _, err := raw.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bench")}); err != nil {
		_ = srv.Stop()
		return "", nil, nil, err
	}
	params := map[string]string{snapshot.ParamEndpoint: srv.Endpoint, snapshot.ParamRegion: srv.Region,
		snapshot.ParamKey: srv.AccessKey, snapshot.ParamSecret: srv.SecretKey}
	return "s3://bench/snaps/", params, func() { _ = srv.Stop() }, nil
}

func snapshotsBlock(location string, params map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "snapshots:\n  enabled: true\n  location: %s\n", location)
	if len(params) > 0 {
		b.WriteString("  params:\n")
		for _, k := range []string{snapshot.ParamEndpoint, snapshot.ParamRegion, snapshot.ParamKey, snapshot.ParamSecret} {
			fmt.Fprintf(&b, "    %s: %q\n", k, params[k])
		}
	}
	return b.String()
}

// startApp starts pgaccel in-process with the eight tables, each with the
// acceleration lines acc, and waits until each is loaded; the data dir is
// removed at shutdown.
func startApp(ctx context.Context, dsn, block, acc string) (*app.App, error) {
	dir, err := os.MkdirTemp("", "pgaccel-replica-")
	if err != nil {
		return nil, err
	}
	cfg, err := tpchdata.Config(dsn, dir, block, nil, acc)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	a, err := app.Start(cfg, zerolog.Nop())
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	dirs[a] = dir
	for _, t := range tpchdata.Tables {
		if err := a.Runner.WaitReady(ctx, t.Name); err != nil {
			_ = shutdown(a)
			return nil, fmt.Errorf("dataset %s: %w", t.Name, err)
		}
		if st, _ := a.Registry.State(t.Name); !st.Loaded {
			_ = shutdown(a)
			return nil, fmt.Errorf("dataset %s did not load: %s", t.Name, st.Error)
		}
	}
	return a, nil
}

// dirs are the data dirs of the running apps.
var dirs = map[*app.App]string{}

func shutdown(a *app.App) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := a.Shutdown(ctx)
	os.RemoveAll(dirs[a])
	delete(dirs, a)
	return err
}

// waitSnapshot waits until dataset has a current snapshot.
func waitSnapshot(ctx context.Context, st snapshot.Store, dataset string) (snapshot.Snapshot, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		m, _, err := snapshot.Read(ctx, st, "")
		if err != nil && !errors.Is(err, snapshot.ErrNotFound) {
			return snapshot.Snapshot{}, err
		}
		if s, ok := m.Current(dataset); ok {
			return s, nil
		}
		if time.Now().After(deadline) {
			return snapshot.Snapshot{}, fmt.Errorf("no snapshot of %s was published", dataset)
		}
		select {
		case <-ctx.Done():
			return snapshot.Snapshot{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// coldStart starts a replica of kind r with an empty data dir and its
// origin link through relay, and times it.
func coldStart(ctx context.Context, relay *tcprelay.Relay, dsn, database, block string, r replica, lineitem int64) (start, error) {
	s := start{kind: r.name}
	_, down0 := relay.Bytes()
	began := time.Now()
	a, err := startApp(ctx, dsn, block, r.acc)
	if err != nil {
		return s, err
	}
	defer shutdown(a)
	s.ready = time.Since(began)
	_, down := relay.Bytes()
	s.originReady = down - down0
	c, err := pgx.Connect(ctx, "postgres://"+pgtest.AppUser+":"+pgtest.AppPassword+"@"+a.Addr()+"/"+database+"?sslmode=disable")
	if err != nil {
		return s, err
	}
	defer c.Close(context.Background())
	if err := c.QueryRow(ctx, "SELECT count(*) FROM lineitem").Scan(&s.count); err != nil {
		return s, err
	}
	s.answer = time.Since(began)
	_, down = relay.Bytes()
	s.originAns = down - down0
	if err := c.QueryRow(ctx, "SHOW pgaccel.last_route").Scan(&s.route); err != nil {
		return s, err
	}
	if s.route != "accelerated" || s.count != lineitem {
		return s, fmt.Errorf("the first answer: %d lineitem rows (want %d), route %s", s.count, lineitem, s.route)
	}
	sums, err := benchutil.MetricSums(a.Metrics, "dataset_acceleration_snapshot_bytes_total", "direction")
	if err != nil {
		return s, err
	}
	s.downloaded = sums["download"]
	return s, nil
}

func report(ctx context.Context, o options, args []string, load tpchdata.Stats, loadStart string, writerReady, writerPublished time.Duration,
	snapBytes int64, starts []start) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s, TPC-H SF%g, snapshots in %s (%s)\n\n", time.Now().UTC().Format("2006-01-02"), o.sf, o.store, benchutil.Revision(ctx))
	fmt.Fprintf(&b, "Command: `%s`. Machine: %s, %s, %s; load average at start %s, at end %s.\n\n",
		benchutil.CommandLine("./bench/snapshots", args), benchutil.CPUModel(), benchutil.MemTotal(), benchutil.GoVersion(), loadStart, benchutil.LoadAvg())
	fmt.Fprintf(&b, "The writer loaded the eight tables (%d lineitem rows) in %v and had published all eight snapshots (%.1f MiB) %v after it started.\n\n",
		load.Rows["lineitem"], writerReady.Round(time.Millisecond), float64(snapBytes)/(1<<20), writerPublished.Round(time.Millisecond))
	b.WriteString("| replica | ready (all 8 datasets) | first accelerated answer | bytes from the origin until ready | until the answer | bytes from the snapshot store |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	best := map[string]start{}
	for _, s := range starts {
		fmt.Fprintf(&b, "| %s | %v | %v | %d | %d | %.0f |\n", s.kind, s.ready.Round(time.Millisecond), s.answer.Round(time.Millisecond),
			s.originReady, s.originAns, s.downloaded)
		if cur, ok := best[s.kind]; !ok || s.answer < cur.answer {
			best[s.kind] = s
		}
	}
	full := best["full"]
	for _, k := range []string{"bootstrap", "reader"} {
		if s, ok := best[k]; ok && s.answer > 0 {
			fmt.Fprintf(&b, "\nFirst answer, full refresh / %s (best of %d): **%.1f×**.", k, o.rounds, float64(full.answer)/float64(s.answer))
		}
	}
	b.WriteString("\n\nThe bytes from the origin are what it sent over the replica's origin link (a counting relay): the full replica's COPYs; " +
		"for the snapshot replicas, nothing until ready, then the client's relayed login and the catalog lookups (relation, privileges) of its first statement.\n")
	return b.String()
}

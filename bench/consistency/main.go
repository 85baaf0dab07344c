// Command consistency measures read-your-writes (runtime.read_your_writes)
// on a refresh_mode: changes dataset: clients that each write a row and
// then read what they wrote, directly at the origin and through pgaccel,
// in the same run. It reports pairs per second, the latency of a pair
// (p50, p99) and what pgaccel added to it, how often a read waited for the
// change stream or went to the origin, how many reads were older than the
// client's own write (0 with read_your_writes on; with it off, as a
// reference, most), and the change stream's apply lag over the run.
//
//	go run ./bench/consistency [-clients 8] [-duration 20s] [-rows 100000]
//	                           [-synchronous-commit on] [-out bench/RESULTS.md]
//
// Two reads are measured, each after the client's write of the same row:
//
//   - point: SELECT * FROM cons WHERE id = $1 (a save-then-show: a point
//     read, which runtime.point_reads sends to the origin by default, and
//     which after a write the acceleration would answer only once it has
//     applied the write);
//   - aggregate: SELECT count(*), coalesce(max(seq), 0) FROM cons WHERE client = $1 (a
//     dashboard tile over the client's rows, which the acceleration
//     answers once it has applied the write, waiting for it).
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
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

type options struct {
	clients    int
	duration   time.Duration
	rows       int
	syncCommit string
	out        string
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("consistency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.clients, "clients", 8, "clients writing and reading at once")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "how long each target and read runs")
	fs.IntVar(&o.rows, "rows", 100_000, "rows in the table at the start")
	fs.StringVar(&o.syncCommit, "synchronous-commit", "on", "the clients' synchronous_commit (on: each commit waits for its WAL flush, as Postgres' default)")
	fs.StringVar(&o.out, "out", "", "append the report to this file under its section")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return benchutil.Exit(ctx, "consistency", benchmark(ctx, o, args, stdout, stderr), stderr)
}

const (
	table          = "cons"
	resultsSection = "## Read-your-writes (bench/consistency)"
)

// reads are the two reads measured.
var reads = []struct{ name, sql string }{
	{"point", "SELECT * FROM " + table + " WHERE id = $1"},
	{"aggregate", "SELECT count(*), coalesce(max(seq), 0) FROM " + table + " WHERE client = $2"},
}

// result is one target's run of one read.
type result struct {
	target, read   string
	pairs, stale   int64
	latencies      []time.Duration
	waits, routes  map[string]float64
	elapsed        time.Duration
	applyLagP99Sec float64
}

func benchmark(ctx context.Context, o options, args []string, stdout, stderr io.Writer) (err error) {
	progress := benchutil.Progress(stderr)
	progress("starting origin PostgreSQL")
	origin, err := benchutil.StartOrigin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if serr := origin.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	if err := origin.Exec(ctx, fmt.Sprintf(`CREATE TABLE %[1]s (id bigint PRIMARY KEY, client int NOT NULL, seq bigint NOT NULL, note text);
		INSERT INTO %[1]s SELECT g, -1, g, 'row ' || g FROM generate_series(1, %[2]d) g;
		GRANT SELECT, INSERT, UPDATE ON %[1]s TO %[3]s;`, table, o.rows, pgtest.AppUser)); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "pgaccel-consistency-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	var results []*result
	nextID := int64(o.rows) + 1
	run := 0
	for _, target := range []string{"origin", "pgaccel, no datasets", "pgaccel", "pgaccel, read_your_writes off"} {
		var a *app.App
		dsn := origin.DSN(pgtest.AppUser, pgtest.AppPassword)
		if target != "origin" {
			runtime := ""
			if strings.HasSuffix(target, "off") {
				runtime = "  read_your_writes: off\n"
			}
			datasets := fmt.Sprintf("datasets:\n  - from: postgres:public.%s\n    acceleration:\n      mode: file\n      refresh_mode: changes\n      primary_key: [id]\n", table)
			if strings.HasSuffix(target, "no datasets") {
				datasets = "datasets: []\n"
			}
			cfgText := fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\n%s%s",
				origin.SuperDSN(), filepath.Join(dir, strings.NewReplacer(" ", "", ",", "").Replace(target)), runtime, datasets)
			cfg, err := catalog.Parse([]byte(cfgText), "consistency.yaml")
			if err != nil {
				return err
			}
			progress("starting %s", target)
			if a, err = app.Start(cfg, zerolog.New(io.Discard)); err != nil {
				return err
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			err = a.WaitReady(wctx)
			cancel()
			if err != nil {
				return err
			}
			dsn = "postgres://" + pgtest.AppUser + ":" + pgtest.AppPassword + "@" + a.Addr() + "/" + origin.Database + "?sslmode=disable"
		}
		for _, rd := range reads {
			progress("%s, %s read: %d clients for %v", target, rd.name, o.clients, o.duration)
			run++
			r, err := runPairs(ctx, dsn, o, rd.sql, &nextID, 100*run)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", target, rd.name, err)
			}
			r.target, r.read = target, rd.name
			if a != nil && !strings.HasSuffix(target, "no datasets") {
				r.waits, _ = benchutil.MetricSums(a.Metrics, "pgaccel_read_your_writes_waits_total", "outcome")
				r.routes, _ = benchutil.MetricSums(a.Metrics, "pgaccel_statements_total", "reason")
				r.applyLagP99Sec = histogramQuantile(a, "dataset_replication_apply_lag_seconds", 0.99)
				resetCounts(r, results, target)
			}
			progress("  %d pairs, %.0f/s, p50 %v, p99 %v, %d stale", r.pairs, float64(r.pairs)/r.elapsed.Seconds(), pct(r.latencies, 0.5), pct(r.latencies, 0.99), r.stale)
			results = append(results, r)
		}
		if a != nil {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := a.Shutdown(sctx)
			cancel()
			if err != nil {
				return err
			}
		}
	}
	md := report(o, args, results)
	fmt.Fprint(stdout, md)
	if o.out != "" {
		return benchutil.AppendToSection(o.out, resultsSection, md)
	}
	return nil
}

// resetCounts turns the cumulative counters of r (pgaccel's since it
// started) into those of r's run alone, taking away the target's earlier
// runs.
func resetCounts(r *result, earlier []*result, target string) {
	for _, e := range earlier {
		if e.target != target {
			continue
		}
		for k, v := range e.waits {
			r.waits[k] -= v
		}
		for k, v := range e.routes {
			r.routes[k] -= v
		}
	}
}

// runPairs runs the clients for o.duration: each inserts a row of its own
// then runs read, and checks the read saw its write. Clients are numbered
// from base.
func runPairs(ctx context.Context, dsn string, o options, read string, nextID *int64, base int) (*result, error) {
	var mu sync.Mutex
	r := &result{}
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	errs := make(chan error, o.clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range o.clients {
		c := base + c // clients of earlier runs wrote rows of their own
		wg.Go(func() {
			conn, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), "SET synchronous_commit = "+o.syncCommit); err != nil {
				errs <- err
				return
			}
			var local []time.Duration
			var stale int64
			for seq := int64(1); ctx.Err() == nil; seq++ {
				mu.Lock()
				id := *nextID
				*nextID++
				mu.Unlock()
				t0 := time.Now()
				if _, err := conn.Exec(ctx, "INSERT INTO "+table+" (id, client, seq, note) VALUES ($1, $2, $3, 'written')", id, c, seq); err != nil {
					if ctx.Err() != nil {
						break
					}
					errs <- err
					return
				}
				ok, err := readBack(ctx, conn, read, id, c, seq)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					errs <- err
					return
				}
				local = append(local, time.Since(t0))
				if !ok {
					stale++
				}
			}
			mu.Lock()
			r.latencies = append(r.latencies, local...)
			r.pairs += int64(len(local))
			r.stale += stale
			mu.Unlock()
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	close(errs)
	for err := range errs {
		return nil, err
	}
	return r, nil
}

// readBack runs read for the row id the client c just wrote as its seq-th
// and reports whether it saw it.
func readBack(ctx context.Context, conn *pgx.Conn, read string, id int64, c int, seq int64) (bool, error) {
	if strings.Contains(read, "WHERE id") {
		rows, err := conn.Query(ctx, read, id)
		if err != nil {
			return false, err
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		return n == 1, rows.Err()
	}
	var count, maxSeq int64
	if err := conn.QueryRow(ctx, strings.Replace(read, "$2", "$1", 1), c).Scan(&count, &maxSeq); err != nil {
		return false, err
	}
	return maxSeq >= seq, nil
}

// histogramQuantile estimates quantile q of histogram name (its buckets'
// upper bounds), in seconds; 0 when it has no sample.
func histogramQuantile(a *app.App, name string, q float64) float64 {
	mfs, err := a.Metrics.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		var total uint64
		bounds := map[float64]uint64{}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			total += h.GetSampleCount()
			for _, b := range h.GetBucket() {
				bounds[b.GetUpperBound()] += b.GetCumulativeCount()
			}
		}
		if total == 0 {
			return 0
		}
		keys := make([]float64, 0, len(bounds))
		for k := range bounds {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if float64(bounds[k]) >= q*float64(total) {
				return k
			}
		}
	}
	return 0
}

func pct(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Microsecond)
}

func report(o options, args []string, results []*result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s, %d clients, %v per run\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), o.clients, o.duration)
	fmt.Fprintf(&b, "`%s`. Machine: %s, %s, %s; %s.\n\n", benchutil.CommandLine("./bench/consistency", args), benchutil.CPUModel(), benchutil.MemTotal(), benchutil.Kernel(), benchutil.GoVersion())
	fmt.Fprintf(&b, "Each client inserts a row (synchronous_commit %s) and reads it back, on one connection. A changes dataset over the table; runtime.point_reads at its default (origin). Stale: reads that did not see the client's own write.\n\n", o.syncCommit)
	b.WriteString("| target | read | pairs/s | ×origin | p50 | p99 | added p99 | stale | waits reached / timeout / origin | reads for read_your_writes at the origin | apply lag p99 (bucket) |\n|---|---|--:|--:|--:|--:|--:|--:|---|--:|--:|\n")
	base := map[string]*result{}
	for _, r := range results {
		if r.target == "origin" {
			base[r.read] = r
		}
	}
	for _, r := range results {
		tps := float64(r.pairs) / r.elapsed.Seconds()
		ratio, added := "", ""
		if o := base[r.read]; o != nil && r.target != "origin" {
			ratio = fmt.Sprintf("%.2f", tps/(float64(o.pairs)/o.elapsed.Seconds()))
			added = (pct(r.latencies, 0.99) - pct(o.latencies, 0.99)).String()
		}
		waits, ryw, lag := "", "", ""
		if r.waits != nil {
			waits = fmt.Sprintf("%.0f / %.0f / %.0f", r.waits["reached"], r.waits["timeout"], r.waits["origin"])
			ryw = fmt.Sprintf("%.0f", r.routes["read_your_writes"])
			lag = fmt.Sprintf("%gs", r.applyLagP99Sec)
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %v | %v | %s | %d | %s | %s | %s |\n", r.target, r.read, tps, ratio,
			pct(r.latencies, 0.5), pct(r.latencies, 0.99), added, r.stale, waits, ryw, lag)
	}
	return b.String()
}

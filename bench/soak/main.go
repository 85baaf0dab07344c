// Command soak runs pgaccel in front of tables under steady writes for a
// long time and samples what grows: each dataset's file against its
// compacted size, the process's RSS, DuckDB's memory, the change stream's
// lag and the point index's hit rate (issue 46). Four file-mode datasets:
//
//   - soak_changes: refresh_mode changes, -rows rows, -rate updates/s of
//     random rows, point reads by key through pgaccel;
//   - soak_toast: changes, REPLICA IDENTITY FULL, a TOASTed text column
//     the updates leave alone;
//   - soak_full: full, refreshed every 5 s, updated at a tenth of -rate;
//   - soak_window: append with retention_period 60s, -append-rate rows/s
//     inserted (a sliding window).
//
// pgaccel restarts once, halfway. At the end the writes stop, the streams
// catch up, and each dataset's answer to a checksum query through pgaccel
// is compared with the origin's.
//
//	go run ./bench/soak -duration 30m -out bench/RESULTS.md
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

type options struct {
	duration, sample     time.Duration
	rows, rate, appendHz int
	pointReads           int
	out                  string
	logFile              string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.DurationVar(&o.duration, "duration", 30*time.Minute, "how long the writes run")
	fs.DurationVar(&o.sample, "sample", 15*time.Second, "time between samples")
	fs.IntVar(&o.rows, "rows", 200000, "rows of soak_changes (soak_full has as many, soak_toast a tenth)")
	fs.IntVar(&o.rate, "rate", 2000, "updates per second on soak_changes")
	fs.IntVar(&o.appendHz, "append-rate", 300, "rows per second inserted into soak_window")
	fs.IntVar(&o.pointReads, "point-reads", 200, "point reads per second of soak_changes through pgaccel")
	fs.StringVar(&o.out, "out", "", "append the report to this RESULTS.md section")
	fs.StringVar(&o.logFile, "log", "", "pgaccel's log (default: a temp file)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	err := run(ctx, o, os.Stdout, os.Stderr)
	os.Exit(benchutil.Exit(ctx, "soak", err, os.Stderr))
}

// sample is one reading.
type sample struct {
	at             time.Duration
	files, compact map[string]int64 // file bytes; compacted size (end only)
	dead           map[string]float64
	rss, duck      int64
	goHeap         int64 // the Go heap in use (this process's: pgaccel and the load generator)
	goHeld         int64 // what the Go runtime holds from the system (Sys less HeapReleased)
	lagMs          int64
	hits, misses   uint64
	pointShare     float64
	restarted      bool
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	progress := benchutil.Progress(stderr)
	progress("starting origin PostgreSQL")
	origin, err := benchutil.StartOrigin(ctx)
	if err != nil {
		return err
	}
	defer origin.Stop()
	dir, err := os.MkdirTemp("", "pgaccel-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := origin.Exec(ctx, fmt.Sprintf(`
		CREATE TABLE soak_changes (id bigint PRIMARY KEY, v text, n int);
		INSERT INTO soak_changes SELECT g, md5(g::text), 0 FROM generate_series(1, %[1]d) g;
		CREATE TABLE soak_toast (id bigint PRIMARY KEY, big text, k int);
		ALTER TABLE soak_toast ALTER COLUMN big SET STORAGE EXTERNAL;
		ALTER TABLE soak_toast REPLICA IDENTITY FULL;
		INSERT INTO soak_toast SELECT g, repeat(md5(g::text), 100), 0 FROM generate_series(1, %[2]d) g;
		CREATE TABLE soak_full (id bigint PRIMARY KEY, v text, n int);
		INSERT INTO soak_full SELECT g, md5(g::text), 0 FROM generate_series(1, %[1]d) g;
		CREATE TABLE soak_window (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), v text);
		GRANT SELECT ON soak_changes, soak_toast, soak_full, soak_window TO %[3]s;`, o.rows, max(o.rows/10, 1), pgtest.AppUser)); err != nil {
		return err
	}
	logPath := o.logFile
	if logPath == "" {
		logPath = filepath.Join(dir, "pgaccel.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	cfg, err := catalog.Parse([]byte(fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
runtime:
  data_dir: %q
  point_reads: acceleration
datasets:
  - from: postgres:public.soak_changes
    acceleration: {mode: file, refresh_mode: changes, primary_key: [id]}
  - from: postgres:public.soak_toast
    acceleration: {mode: file, refresh_mode: changes, primary_key: [id]}
  - from: postgres:public.soak_full
    acceleration: {mode: file, refresh_mode: full, refresh_check_interval: 5s}
  - from: postgres:public.soak_window
    time_column: at
    acceleration: {mode: file, refresh_mode: append, refresh_check_interval: 1s, retention_check_enabled: true,
      retention_check_interval: 5s, retention_period: 60s}
`, origin.SuperDSN(), filepath.Join(dir, "data"))), "soak.yaml")
	if err != nil {
		return err
	}
	names := []string{"soak_changes", "soak_toast", "soak_full", "soak_window"}
	start := func() (*app.App, error) {
		a, err := app.Start(cfg, zerolog.New(logf).Level(zerolog.InfoLevel).With().Timestamp().Logger())
		if err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		for _, n := range names {
			if err := a.Runner.WaitReady(wctx, n); err != nil {
				return a, fmt.Errorf("%s not ready: %w", n, err)
			}
		}
		return a, nil
	}
	progress("starting pgaccel (four file-mode datasets)")
	var cur atomic.Pointer[app.App]
	a, err := start()
	if a != nil {
		cur.Store(a)
	}
	defer func() {
		if a := cur.Load(); a != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = a.Shutdown(sctx)
		}
	}()
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, origin.SuperDSN())
	if err != nil {
		return err
	}
	defer pool.Close()

	// The writes: every 10 ms a share of each second's rate.
	wctx, stopWrites := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var writeErrs atomic.Int64
	writer := func(every time.Duration, sql func(r *rand.Rand) string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(rand.Uint64(), 1))
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case <-t.C:
				}
				if _, err := pool.Exec(wctx, sql(r)); err != nil && wctx.Err() == nil {
					writeErrs.Add(1)
				}
			}
		}()
	}
	ids := func(r *rand.Rand, n, of int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprint(1 + r.IntN(of))
		}
		return strings.Join(s, ",")
	}
	per := func(rate int) int { return max(rate/100, 1) }
	writer(10*time.Millisecond, func(r *rand.Rand) string {
		return "UPDATE soak_changes SET n = n + 1, v = md5(random()::text) WHERE id IN (" + ids(r, per(o.rate), o.rows) + ")"
	})
	writer(10*time.Millisecond, func(r *rand.Rand) string {
		return "UPDATE soak_toast SET k = k + 1 WHERE id IN (" + ids(r, per(o.rate/10), max(o.rows/10, 1)) + ")"
	})
	writer(10*time.Millisecond, func(r *rand.Rand) string {
		return "UPDATE soak_full SET n = n + 1 WHERE id IN (" + ids(r, per(o.rate/10), o.rows) + ")"
	})
	writer(10*time.Millisecond, func(r *rand.Rand) string {
		return fmt.Sprintf("INSERT INTO soak_window (v) SELECT md5(random()::text) FROM generate_series(1, %d)", per(o.appendHz))
	})
	// Point reads through pgaccel (the current instance).
	var reads, readErrs atomic.Int64
	readsBegan := time.Now()
	// readErrText keeps the first read errors, for the report.
	var readErrMu sync.Mutex
	var readErrText []string
	readFailed := func(at time.Duration, err error) {
		readErrs.Add(1)
		readErrMu.Lock()
		defer readErrMu.Unlock()
		if len(readErrText) < 5 {
			readErrText = append(readErrText, fmt.Sprintf("%s: %v", at.Round(time.Second), err))
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(2, 3))
		var conn *pgx.Conn
		var at *app.App
		t := time.NewTicker(time.Second / time.Duration(max(o.pointReads, 1)))
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				if conn != nil {
					conn.Close(context.Background())
				}
				return
			case <-t.C:
			}
			if a := cur.Load(); a != at || conn == nil {
				if conn != nil {
					conn.Close(context.Background())
					conn = nil
				}
				at = a
				if a == nil {
					continue
				}
				c, err := pgx.Connect(wctx, fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", pgtest.AppUser, pgtest.AppPassword, a.Addr(), origin.Database))
				if err != nil {
					readFailed(time.Since(readsBegan), err)
					continue
				}
				conn = c
			}
			var v string
			if err := conn.QueryRow(wctx, "SELECT v FROM soak_changes WHERE id = $1", 1+r.IntN(o.rows)).Scan(&v); err != nil && wctx.Err() == nil {
				readFailed(time.Since(readsBegan), err)
				conn.Close(context.Background())
				conn = nil
				continue
			}
			reads.Add(1)
		}
	}()

	began := time.Now()
	var samples []sample
	var lastHits, lastMisses uint64
	restartAt := o.duration / 2
	restarted := false
	take := func(a *app.App, justRestarted bool) sample {
		s := sample{at: time.Since(began).Round(time.Second), files: map[string]int64{}, dead: map[string]float64{}, restarted: justRestarted}
		for _, n := range names {
			if st, ok := a.Registry.StorageStatus(n); ok {
				s.files[n], s.dead[n] = st.FileBytes, st.DeadShare
			}
		}
		s.rss = benchutil.SelfStatus("VmRSS")
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.goHeap = int64(ms.HeapInuse)
		s.goHeld = int64(ms.Sys - ms.HeapReleased)
		s.duck = a.Engine.MemoryBytes(ctx)
		if rs, ok := a.Runner.Replication("soak_changes"); ok {
			s.lagMs = rs.LagMs
		}
		if ps, ok := a.Registry.PointIndexStatus("soak_changes"); ok {
			if ps.Hits < lastHits || ps.Misses < lastMisses { // a new instance
				lastHits, lastMisses = 0, 0
			}
			s.hits, s.misses = ps.Hits-lastHits, ps.Misses-lastMisses
			lastHits, lastMisses = ps.Hits, ps.Misses
			if s.hits+s.misses > 0 {
				s.pointShare = float64(s.hits) / float64(s.hits+s.misses)
			}
		}
		return s
	}
	progress("writes running for %s; a sample every %s; pgaccel restarts at %s", o.duration, o.sample, restartAt)
	tick := time.NewTicker(o.sample)
	defer tick.Stop()
	for time.Since(began) < o.duration {
		select {
		case <-ctx.Done():
			stopWrites()
			wg.Wait()
			return ctx.Err()
		case <-tick.C:
		}
		just := false
		if !restarted && time.Since(began) >= restartAt {
			progress("restarting pgaccel")
			old := cur.Swap(nil)
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_ = old.Shutdown(sctx)
			cancel()
			a, err := start()
			if a != nil {
				cur.Store(a)
			}
			if err != nil {
				stopWrites()
				wg.Wait()
				return err
			}
			restarted, just = true, true
		}
		s := take(cur.Load(), just)
		samples = append(samples, s)
		progress("%s: changes %s, toast %s, full %s, window %s; RSS %s, DuckDB %s, Go heap %s; lag %d ms; point index %.0f%%",
			s.at, mib(s.files["soak_changes"]), mib(s.files["soak_toast"]), mib(s.files["soak_full"]), mib(s.files["soak_window"]),
			mib(s.rss), mib(s.duck), mib(s.goHeap), s.lagMs, 100*s.pointShare)
	}
	stopWrites()
	wg.Wait()
	a = cur.Load()

	// The end: streams caught up, a refresh of the full dataset, checksums.
	progress("writes stopped; comparing checksums")
	if err := a.Runner.Refresh(ctx, "soak_full"); err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	proxyDSN := fmt.Sprintf("postgres://%s:%s@%s/%s?sslmode=disable", pgtest.AppUser, pgtest.AppPassword, a.Addr(), origin.Database)
	var checks []string
	for _, n := range []string{"soak_changes", "soak_toast", "soak_full"} {
		col := "n"
		if n == "soak_toast" {
			col = "k"
		}
		q := fmt.Sprintf("SELECT count(*), sum(%s), md5(string_agg(md5(t::text), '' ORDER BY id)) FROM %s t", col, n)
		var direct, proxied string
		deadline := time.Now().Add(2 * time.Minute)
		for {
			direct, proxied = checksum(ctx, origin.DSN(pgtest.AppUser, pgtest.AppPassword), q), checksum(ctx, proxyDSN, q)
			if direct == proxied || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		verdict := "equal"
		if direct != proxied {
			verdict = "DIFFERENT: origin " + direct + ", pgaccel " + proxied
		}
		checks = append(checks, fmt.Sprintf("%s: %s", n, verdict))
	}
	// Compacted sizes: a fresh copy of each dataset (COPY FROM DATABASE).
	final := take(a, false)
	final.compact = map[string]int64{}
	for _, n := range names {
		if path, _, err := a.Engine.SnapshotTo(ctx, n); err == nil {
			if fi, err := os.Stat(path); err == nil {
				final.compact[n] = fi.Size()
			}
			os.Remove(path)
		}
	}
	md := report(o, samples, final, checks, reads.Load(), readErrs.Load(), writeErrs.Load(), benchutil.Revision(ctx), benchutil.DuckDBVersion(ctx, a))
	readErrMu.Lock()
	for _, e := range readErrText {
		md += "\nA point read failed at " + e + "\n"
	}
	readErrMu.Unlock()
	fmt.Fprint(stdout, md)
	if o.out != "" {
		return benchutil.AppendToSection(o.out, "## Soak: bounded storage under sustained change (bench/soak, issue 46)", md)
	}
	return nil
}

func checksum(ctx context.Context, dsn, q string) string {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "error: " + err.Error()
	}
	defer c.Close(context.Background())
	var n int64
	var sum int64
	var h string
	if err := c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&n, &sum, &h); err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%d/%d/%s", n, sum, h)
}

// rssSummary reads the RSS samples of the last 20 minutes (of the run's
// last two thirds when it is shorter than 30 minutes) against the issue's
// target: their median, how many lie outside ±10 % of it, and the trend
// from the median of their first five minutes to that of their last five.
func rssSummary(d time.Duration, samples []sample) string {
	from := d - 20*time.Minute
	if d < 30*time.Minute {
		from = d / 3
	}
	var all, first, last []int64
	for _, s := range samples {
		if s.at <= from || s.restarted {
			continue
		}
		all = append(all, s.rss)
		if s.at <= from+5*time.Minute {
			first = append(first, s.rss)
		}
		if s.at > d-5*time.Minute {
			last = append(last, s.rss)
		}
	}
	if len(all) == 0 || len(first) == 0 || len(last) == 0 {
		return ""
	}
	med := median(all)
	out := 0
	for _, r := range all {
		if float64(r) > 1.1*float64(med) || float64(r) < 0.9*float64(med) {
			out++
		}
	}
	return fmt.Sprintf("\nRSS after %s (but the sample just after the restart): median %s, %d of %d samples outside ±10 %% of it; median of the first five minutes %s, of the last five %s (%+.1f %%).\n",
		from, mib(med), out, len(all), mib(median(first)), mib(median(last)), 100*(float64(median(last))/float64(median(first))-1))
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func report(o options, samples []sample, final sample, checks []string, reads, readErrs, writeErrs int64, rev, duck string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s, %s of writes (revision %s)\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), o.duration, rev)
	fmt.Fprintf(&b, "Command: `go run ./bench/soak -duration %s -rows %d -rate %d -append-rate %d -point-reads %d`  \n", o.duration, o.rows, o.rate, o.appendHz, o.pointReads)
	fmt.Fprintf(&b, "Machine: nproc %d, %s, %s; %s; origin, pgaccel and the load generator share it. Load average at the end: %s  \n",
		runtime.NumCPU(), benchutil.CPUModel(), benchutil.MemTotal(), duck, benchutil.LoadAvg())
	fmt.Fprintf(&b, "Point reads through pgaccel: %d (%d errors); write errors at the origin: %d. pgaccel restarted at %s.\n\n", reads, readErrs, writeErrs, o.duration/2)
	b.WriteString("| at | soak_changes | soak_toast | soak_full | soak_window | RSS | DuckDB memory | Go heap in use | Go runtime held | CDC lag ms | point index hits |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range samples {
		mark := ""
		if s.restarted {
			mark = " (after the restart)"
		}
		fmt.Fprintf(&b, "| %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.0f %% |\n", s.at, mark, mib(s.files["soak_changes"]), mib(s.files["soak_toast"]),
			mib(s.files["soak_full"]), mib(s.files["soak_window"]), mib(s.rss), mib(s.duck), mib(s.goHeap), mib(s.goHeld), s.lagMs, 100*s.pointShare)
	}
	b.WriteString(rssSummary(o.duration, samples))
	b.WriteString("\nAt the end, each file against a fresh copy of its rows (`COPY FROM DATABASE`, the compacted size), and the largest ratio over the samples after the first five minutes:\n\n")
	b.WriteString("| dataset | file | compacted | ratio | worst ratio after 5 min |\n|---|--:|--:|--:|--:|\n")
	for _, n := range []string{"soak_changes", "soak_toast", "soak_full", "soak_window"} {
		c := final.compact[n]
		worst := 0.0
		for _, s := range samples {
			if s.at >= 5*time.Minute && c > 0 {
				worst = max(worst, float64(s.files[n])/float64(c))
			}
		}
		ratio := 0.0
		if c > 0 {
			ratio = float64(final.files[n]) / float64(c)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %.2f |\n", n, mib(final.files[n]), mib(c), ratio, worst)
	}
	b.WriteString("\nChecksums after the writes stopped (count, sum, md5 of every row's text, through pgaccel against the origin):\n\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	return b.String()
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/bench/internal/tpchdata"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// resultsSection is the heading under which -out appends each run.
const resultsSection = "## TPC-H (accelerated reads)"

// The targets the issue sets.
const (
	targetSpeedup      = 15.0    // geometric-mean speedup origin/pgaccel, at least
	targetRefreshRatio = 1.3     // refresh time / plain COPY time, at most
	targetRefreshMem   = 1 << 30 // peak RSS above idle during a refresh, below
)

// machineInfo describes where and how the benchmark ran.
type machineInfo struct {
	nproc      int
	cpu        string
	memTotal   string
	kernel     string
	postgres   string
	pgSettings string
	duckdb     string
	goVersion  string
	revision   string
	started    time.Time
}

func collectMachineInfo(ctx context.Context, origin *pgtest.Server, a *app.App) machineInfo {
	m := machineInfo{
		nproc:     runtime.NumCPU(),
		cpu:       benchutil.CPUModel(),
		memTotal:  benchutil.MemTotal(),
		kernel:    benchutil.Kernel(),
		postgres:  "unknown",
		duckdb:    cmp.Or(benchutil.DuckDBVersion(ctx, a), "unknown"),
		goVersion: benchutil.GoVersion(),
		revision:  benchutil.Revision(ctx),
		started:   time.Now().UTC(),
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, origin.SuperDSN())
	if err != nil {
		return m
	}
	defer conn.Close(context.Background())
	m.postgres = "PostgreSQL " + conn.ParameterStatus("server_version")
	var settings []string
	for _, s := range []string{"shared_buffers", "work_mem", "max_parallel_workers_per_gather", "jit"} {
		res := conn.ExecParams(ctx, "SELECT current_setting($1)", [][]byte{[]byte(s)}, nil, nil, nil).Read()
		if res.Err == nil && len(res.Rows) == 1 {
			settings = append(settings, s+"="+string(res.Rows[0][0]))
		}
	}
	m.pgSettings = strings.Join(settings, ", ")
	return m
}

// report is the Markdown the benchmark prints.
type report struct {
	// verify: pgaccel_verify_total by result, with -verify.
	verify    map[string]float64
	command   string
	opts      options
	machine   machineInfo
	load      tpchdata.Stats
	accelLoad time.Duration
	loadAvgs  [][2]string // phase, load average
	refresh   []refreshRound
	idleRSS   int64
	// refreshTLS are the rounds over a TLS origin link (-refresh-tls),
	// idleRSSTLS the idle RSS before them.
	refreshTLS []refreshRound
	idleRSSTLS int64
	// rssBeforeStart is the process's RSS before app.Start.
	rssBeforeStart int64
	queries        []*queryResult
	exactAvg       *exactAvgProbe // nil unless Q1 ran
	finished       time.Time
}

func (r report) markdown() string {
	var b strings.Builder
	m := r.machine
	fmt.Fprintf(&b, "### Scale factor %g, %s\n\n", r.opts.sf, m.started.Format("2006-01-02 15:04 MST"))
	built := ""
	if !strings.HasPrefix(r.command, "go run ") {
		built = " (a binary built from ./bench/tpch at the revision below)"
	}
	fmt.Fprintf(&b, "Command: `%s`%s  \n", r.command, built)
	fmt.Fprintf(&b, "pgaccel revision: %s  \n", m.revision)
	if r.opts.locale != "" {
		fmt.Fprintf(&b, "Origin database created with LOCALE %s (text ordered by pgaccel's collation keys)  \n", r.opts.locale)
	}
	if r.opts.noCache {
		fmt.Fprintf(&b, "Results cache off (runtime.results_cache.enabled: false): every pgaccel run executes on DuckDB  \n")
	}
	if r.verify != nil {
		fmt.Fprintf(&b, "Shadow verification on (runtime.verify sample_rate %s): equal %v, differed %v, skipped %v  \n",
			r.opts.verify, r.verify["equal"], r.verify["differed"], r.verify["skipped"])
	}
	fmt.Fprintf(&b, "Date: %s (finished %s)  \n", m.started.Format(time.RFC3339), r.finished.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Machine: nproc %d, %s, %s RAM, Linux %s; %s (%s); %s; Go %s  \n",
		m.nproc, m.cpu, m.memTotal, m.kernel, m.postgres, m.pgSettings, m.duckdb, m.goVersion)
	var la []string
	for _, p := range r.loadAvgs {
		la = append(la, p[0]+" "+p[1])
	}
	fmt.Fprintf(&b, "Load average (1/5/15 min; the machine is shared, and origin, pgaccel and client share its %d CPUs): %s\n\n",
		m.nproc, strings.Join(la, "; "))

	fmt.Fprintf(&b, "Data: go-tpc v1.0.7 dbgen, %s, streamed into `COPY ... FROM STDIN` (%v), then primary keys, "+
		"one index on lineitem (l_partkey, l_suppkey) for Q17/Q20, VACUUM ANALYZE (%v). pgaccel loaded the 8 "+
		"memory-mode datasets in %v.\n\n",
		rowCounts(r.load.Rows), r.load.Generate.Round(time.Millisecond), r.load.Finish.Round(time.Millisecond), r.accelLoad.Round(time.Millisecond))

	fmt.Fprintf(&b, "Targets: geometric-mean speedup ≥ %.0f×; refresh ≤ %.1f× plain COPY; peak refresh memory < %d MiB above idle.\n\n",
		targetSpeedup, targetRefreshRatio, targetRefreshMem>>20)

	r.queryTable(&b)
	r.summary(&b)
	r.notAccelerated(&b)
	r.exactAvgNote(&b)
	r.refreshTable(&b, "Refresh of lineitem", "", r.refresh, r.idleRSS)
	r.refreshTable(&b, "Refresh of lineitem over TLS", " Origin link and COPY connection both with `sslmode=require`; a second pgaccel holding only lineitem, in the same process.", r.refreshTLS, r.idleRSSTLS)
	r.everyRun(&b)
	return b.String()
}

func rowCounts(rows map[string]int64) string {
	var parts []string
	for _, t := range tpchdata.Tables {
		parts = append(parts, fmt.Sprintf("%s %d", t.Name, rows[t.Name]))
	}
	return "rows: " + strings.Join(parts, ", ")
}

func (r report) queryTable(b *strings.Builder) {
	fmt.Fprintf(b, "Per query: the first run on the origin and through pgaccel compared row by row as text; route as "+
		"counted by pgaccel_queries_total on that run; then %d round(s) of origin (pgx, simple protocol, as `%s`), "+
		"pgaccel (the same through the proxy) and bare DuckDB (Engine.Query with the planner's rewrite, rows drained), "+
		"interleaved, the order rotating each round. Medians in ms; speedup = origin / pgaccel; proxy + = pgaccel − DuckDB.\n\n",
		r.opts.rounds, pgtest.AppUser)
	b.WriteString("| Query | Route | Result vs origin | Rows | Origin ms | pgaccel ms | DuckDB ms | Speedup | Proxy + ms | pgaccel / DuckDB |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, q := range r.queries {
		o, okO := q.median(targetOrigin)
		p, okP := q.median(targetPgaccel)
		d, okD := q.median(targetDuckDB)
		route := q.route
		if q.err != nil {
			route += " (error)"
		}
		if n := q.timed[routeAccelerated]; q.accelerated() && int(n) != len(q.times[targetPgaccel]) {
			route += fmt.Sprintf(" (%d/%d timed runs)", int(n), len(q.times[targetPgaccel]))
		}
		duck := ms(d, okD)
		if okD && !q.accelerated() {
			duck = "(" + duck + ")" // the proxy did not use it
		}
		cells := []string{q.q.name, route, q.check, fmt.Sprint(q.rows), ms(o, okO), ms(p, okP), duck, "–", "–", "–"}
		if okO && okP {
			cells[7] = fmt.Sprintf("%.1f×", o.Seconds()/p.Seconds())
		}
		if okP && okD && q.accelerated() {
			cells[8] = fmt.Sprintf("%+.2f", msf(p-d))
			cells[9] = fmt.Sprintf("%.2f", p.Seconds()/d.Seconds())
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n")
}

// ms formats a median in milliseconds, "–" when there is none.
func ms(d time.Duration, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.1f", msf(d))
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// geomean is the geometric mean of xs, 0 for none.
// issueQueries are the queries the acceleration issue names as the least
// a run times.
var issueQueries = []string{"Q1", "Q3", "Q5", "Q6", "Q10", "Q12", "Q14", "Q17", "Q18", "Q19"}

func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

func (r report) summary(b *strings.Builder) {
	var all, acc, overheadRatio, bare, bareListed, listed []float64
	var overhead []time.Duration
	var names []string
	for _, q := range r.queries {
		o, okO := q.median(targetOrigin)
		p, okP := q.median(targetPgaccel)
		if !okO || !okP {
			continue
		}
		all = append(all, o.Seconds()/p.Seconds())
		if !q.accelerated() {
			continue
		}
		acc = append(acc, o.Seconds()/p.Seconds())
		names = append(names, q.q.name)
		if d, ok := q.median(targetDuckDB); ok {
			overhead = append(overhead, p-d)
			overheadRatio = append(overheadRatio, p.Seconds()/d.Seconds())
			bare = append(bare, o.Seconds()/d.Seconds())
			if slices.Contains(issueQueries, q.q.name) {
				bareListed = append(bareListed, o.Seconds()/d.Seconds())
				listed = append(listed, o.Seconds()/p.Seconds())
			}
		}
	}
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	g := geomean(all)
	fmt.Fprintf(b, "**Geometric-mean speedup, all %d queries: %.2f×** (target ≥ %.0f×: %s). "+
		"Over the %d accelerated ones (%s): %.2f×.  \n",
		len(all), g, targetSpeedup, met(g >= targetSpeedup), len(acc), strings.Join(names, " "), geomean(acc))
	if len(overhead) > 0 {
		slices.Sort(overhead)
		fmt.Fprintf(b, "Proxy latency over bare DuckDB (accelerated queries): median %+.2f ms, range %+.2f to %+.2f ms; "+
			"pgaccel/DuckDB time ratio geometric mean %.2f.\n\n",
			msf(medianDuration(overhead)), msf(overhead[0]), msf(overhead[len(overhead)-1]), geomean(overheadRatio))
		// What the engine itself reaches bounds what the proxy can.
		fmt.Fprintf(b, "Bare DuckDB (the planner's rewrite on the engine) over the origin, geometric mean: %.2f× over the %d accelerated queries",
			geomean(bare), len(bare))
		if len(bareListed) == len(issueQueries) {
			fmt.Fprintf(b, "; over the issue's %s: %.2f× (pgaccel %.2f×)", strings.Join(issueQueries, " "), geomean(bareListed), geomean(listed))
		}
		b.WriteString(".\n\n")
	}
	var bad []string
	for _, q := range r.queries {
		if !q.equal {
			bad = append(bad, q.q.name)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(b, "**Results differing from the origin: %s.**\n\n", strings.Join(bad, ", "))
	} else {
		b.WriteString("Every answer through pgaccel equals the origin's.\n\n")
	}
}

func (r report) notAccelerated(b *strings.Builder) {
	var lines []string
	for _, q := range r.queries {
		if q.accelerated() && q.err == nil {
			continue
		}
		why := q.why
		if q.err != nil {
			why = strings.TrimPrefix(why+"; ", "; ") + "error: " + q.err.Error()
		}
		lines = append(lines, fmt.Sprintf("- %s (%s): %s", q.q.name, q.route, why))
	}
	if len(lines) == 0 {
		b.WriteString("Every query was accelerated.\n\n")
		return
	}
	b.WriteString("Not accelerated, and why (the planner's reason, or the proxy's debug log of the fallback):\n\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n\n")
}

func (r report) exactAvgNote(b *strings.Builder) {
	p := r.exactAvg
	if p == nil {
		return
	}
	b.WriteString("Q1 with an exact avg(numeric): Q1 hand-rewritten for DuckDB with Postgres's avg computed from sum and " +
		"count in HUGEINT arithmetic (the select_div_scale rule, rounding half away from zero; see exactavg.go), run on " +
		"bare DuckDB: ")
	if p.err != nil {
		fmt.Fprintf(b, "failed: %v.\n\n", p.err)
		return
	}
	d := medianDuration(p.times)
	fmt.Fprintf(b, "answer vs the origin's: %s; median %.1f ms", p.check, msf(d))
	for _, q := range r.queries {
		if q.q.name != "Q1" {
			continue
		}
		if o, ok := q.median(targetOrigin); ok {
			fmt.Fprintf(b, " (origin %.1f ms: %.1f× on bare DuckDB", msf(o), o.Seconds()/d.Seconds())
		}
		if dd, ok := q.median(targetDuckDB); ok {
			fmt.Fprintf(b, "; Q1 as the planner rewrites it, with DuckDB's DOUBLE avg: %.1f ms", msf(dd))
		}
		b.WriteString(")")
	}
	b.WriteString(".\n\n")
}

func (r report) refreshTable(b *strings.Builder, title, note string, rounds []refreshRound, idleRSS int64) {
	if len(rounds) == 0 {
		return
	}
	fmt.Fprintf(b, "%s (%d rows):%s `Runner.Refresh` (a full refresh: binary COPY from the origin into a new "+
		"DuckDB table, then the swap) against a plain `COPY lineitem TO STDOUT (FORMAT binary)` into io.Discard on one "+
		"pgconn connection, interleaved (the order alternating), %d rounds. Memory: before each refresh the process "+
		"rests %v (after debug.FreeOSMemory) and its VmRSS is the baseline; during the refresh VmRSS is read every 10 ms, "+
		"and VmHWM is read after it, having been reset (`5` written to /proc/self/clear_refs) just before; the peak is "+
		"the higher of the two. Idle RSS, all datasets loaded, before the first round: %d MiB (%d MiB before pgaccel started).\n\n",
		title, r.load.Rows["lineitem"], note, len(rounds), settleTime, idleRSS>>20, r.rssBeforeStart>>20)
	b.WriteString("| Round | COPY s | Refresh s | Refresh / COPY | RSS before MiB | Peak (samples) MiB | Peak (VmHWM) MiB | Peak − before MiB |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var copies, refreshes []time.Duration
	var ratios []float64
	var worst int64
	for i, rr := range rounds {
		peak := max(rr.rssPeak, rr.hwmPeak)
		hwm := "–"
		if rr.hwmPeak > 0 {
			hwm = fmt.Sprint(rr.hwmPeak >> 20)
		}
		fmt.Fprintf(b, "| %d | %.2f | %.2f | %.2f | %d | %d | %s | %d |\n", i+1, rr.copy.Seconds(), rr.refresh.Seconds(),
			rr.refresh.Seconds()/rr.copy.Seconds(), rr.rssBefore>>20, rr.rssPeak>>20, hwm, (peak-rr.rssBefore)>>20)
		copies = append(copies, rr.copy)
		refreshes = append(refreshes, rr.refresh)
		ratios = append(ratios, rr.refresh.Seconds()/rr.copy.Seconds())
		worst = max(worst, peak-rr.rssBefore)
	}
	c, f := medianDuration(copies), medianDuration(refreshes)
	ratio := f.Seconds() / c.Seconds()
	met := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	slices.Sort(ratios)
	perRound := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		perRound = (ratios[len(ratios)/2-1] + ratios[len(ratios)/2]) / 2
	}
	fmt.Fprintf(b, "\n**Refresh %.2f s vs COPY %.2f s (medians): %.2f×** (target ≤ %.1f×: %s); "+
		"median of the per-round ratios %.2f× (%s). "+
		"**Peak RSS above the RSS before the refresh, worst round: %d MiB** (target < %d MiB: %s).\n\n",
		f.Seconds(), c.Seconds(), ratio, targetRefreshRatio, met(ratio <= targetRefreshRatio),
		perRound, met(perRound <= targetRefreshRatio),
		worst>>20, targetRefreshMem>>20, met(worst < targetRefreshMem))
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r report) everyRun(b *strings.Builder) {
	b.WriteString("<details><summary>Every timed run (ms, round order)</summary>\n\n| Query | Origin | pgaccel | DuckDB |\n|---|---|---|---|\n")
	for _, q := range r.queries {
		cells := []string{q.q.name}
		for _, t := range targetNames {
			var xs []string
			for _, d := range q.times[t] {
				xs = append(xs, fmt.Sprintf("%.1f", msf(d)))
			}
			cells = append(cells, strings.Join(xs, ", "))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n</details>\n")
}

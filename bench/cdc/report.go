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

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
)

// resultsSection is the heading under which -out appends each run.
const resultsSection = "## Change data capture (refresh_mode: changes)"

// The targets.
const (
	targetRate       = 5000        // ops/s at which ...
	targetP99        = time.Second // ... p99 lag must stay below this
	targetCatchUpRPS = 50000.0     // catch-up rows/s, at least
	anchors          = "Sequin: 55 ms average, 253 ms p99 at 40–50k ops/s on a 16-vCPU box; Debezium on MSK: 6k ops/s at 258 ms average"
)

// machineInfo describes where and how the benchmark ran.
type machineInfo struct {
	nproc      int
	cpu        string
	memTotal   string
	kernel     string
	postgres   string
	pgSettings string
	pgbench    string
	duckdb     string
	goVersion  string
	revision   string
	started    time.Time
}

func collectMachineInfo(ctx context.Context, conn *pgx.Conn, a *app.App, p *pgbench) machineInfo {
	m := machineInfo{
		nproc:     runtime.NumCPU(),
		cpu:       benchutil.CPUModel(),
		memTotal:  benchutil.MemTotal(),
		kernel:    benchutil.Kernel(),
		postgres:  "PostgreSQL " + conn.PgConn().ParameterStatus("server_version"),
		pgbench:   benchutil.PgbenchVersion(ctx, p.path),
		duckdb:    cmp.Or(benchutil.DuckDBVersion(ctx, a), "DuckDB unknown"),
		goVersion: benchutil.GoVersion(),
		revision:  benchutil.Revision(ctx),
		started:   time.Now().UTC(),
	}
	var settings []string
	for _, s := range []string{"wal_level", "synchronous_commit", "fsync", "shared_buffers"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", s).Scan(&v); err == nil {
			settings = append(settings, s+"="+v)
		}
	}
	m.pgSettings = strings.Join(settings, ", ")
	return m
}

// report is the Markdown the benchmark prints.
type report struct {
	command     string
	opts        options
	machine     machineInfo
	initialLoad time.Duration
	loadAvgs    [][2]string // phase, load average
	steps       []*stepResult
	catchUp     *catchUpResult
	bulk        *bulkResult
	finished    time.Time
}

// rateName names a step's target.
func rateName(target int) string {
	if target == 0 {
		return "max (unthrottled)"
	}
	return fmt.Sprint(target)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msCell formats a duration in ms, "–" when absent.
func msCell(d time.Duration, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.0f", msf(d))
}

// summary is a step's one-line progress report.
func (s *stepResult) summary() string {
	if s.err != nil {
		return fmt.Sprintf("%s: error: %v", rateName(s.target), s.err)
	}
	lags := s.lags()
	p50, _ := percentile(lags, 0.5)
	p99, _ := percentile(lags, 0.99)
	mx, _ := percentile(lags, 1)
	t := trendOf(lags)
	return fmt.Sprintf("%s: pgbench %.0f ops/s; %d markers, lag p50 %.0f ms, p99 %.0f ms, max %.0f ms; trend %.0f → %.0f ms; drain %.0f ms; %s; sustained %v",
		rateName(s.target), s.pg.tps, len(lags), msf(p50), msf(p99), msf(mx), msf(t.first), msf(t.last), msf(s.drain.lag()), s.check, s.sustained())
}

func (c *catchUpResult) summary() string {
	return fmt.Sprintf("catch-up: %d rows (%.1f MiB of WAL) applied in %.2f s from the resume: %.0f rows/s", c.rows, float64(c.walBytes)/(1<<20),
		(c.doneAt - c.resumeAt).Seconds(), c.rate())
}

func (b *bulkResult) summary() string {
	return fmt.Sprintf("bulk: %d rows updated in one transaction (%.2f s at the origin), visible %.2f s after its COMMIT: %.0f rows/s; %s",
		b.rows, b.origin.Seconds(), b.visible.Seconds(), b.rate(), b.check)
}

// rateOf is the rate a step tried: its target, or what pgbench reached
// unthrottled.
func (s *stepResult) rateOf() float64 {
	if s.target == 0 {
		return s.pg.tps
	}
	return float64(s.target)
}

// byRate are the steps by the rate they tried, ascending.
func (r *report) byRate() []*stepResult {
	s := slices.Clone(r.steps)
	slices.SortStableFunc(s, func(a, b *stepResult) int { return cmpFloat(a.rateOf(), b.rateOf()) })
	return s
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// highestSustained is the sustained step with the highest achieved rate
// below which every step was sustained too (nil when the lowest was not),
// and the sustained steps above the first one that was not (a busy shared
// machine makes a single run noisy).
func (r *report) highestSustained() (best *stepResult, above []*stepResult) {
	failed := false
	for _, s := range r.byRate() {
		switch {
		case !s.sustained():
			failed = true
		case failed:
			above = append(above, s)
		case best == nil || s.pg.tps > best.pg.tps:
			best = s
		}
	}
	return best, above
}

// bounds are the achieved rate of the highest sustained step (as
// highestSustained) and the rate the first unsustained step above it
// tried; ok is false when there is nothing to split.
func (r *report) bounds() (lo, hi float64, ok bool) {
	best, _ := r.highestSustained()
	if best == nil {
		return 0, 0, false
	}
	lo = best.pg.tps
	for _, s := range r.byRate() {
		if !s.sustained() && s.rateOf() > lo {
			return lo, s.rateOf(), true
		}
	}
	return lo, 0, false
}

// tried reports whether a step already ran at target.
func (r *report) tried(target int) bool {
	for _, s := range r.steps {
		if s.target == target {
			return true
		}
	}
	return false
}

// sortedSteps are the steps by target (unthrottled last), in run order
// within a target.
func (r *report) sortedSteps() []*stepResult {
	s := slices.Clone(r.steps)
	key := func(x *stepResult) int {
		if x.target == 0 {
			return math.MaxInt
		}
		return x.target
	}
	slices.SortStableFunc(s, func(a, b *stepResult) int { return key(a) - key(b) })
	return s
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func (r *report) markdown() string {
	var b strings.Builder
	m := r.machine
	var names []string
	for _, s := range r.steps {
		names = append(names, rateName(s.target))
	}
	fmt.Fprintf(&b, "### %s: %s ops/s, %v each\n\n", m.started.Format("2006-01-02 15:04 MST"), strings.Join(names, ", "), r.opts.duration)
	built := ""
	if !strings.HasPrefix(r.command, "go run ") {
		built = " (a binary built from ./bench/cdc at the revision below)"
	}
	fmt.Fprintf(&b, "Command: `%s`%s  \n", r.command, built)
	fmt.Fprintf(&b, "pgaccel revision: %s  \n", m.revision)
	fmt.Fprintf(&b, "Date: %s (finished %s)  \n", m.started.Format(time.RFC3339), r.finished.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Machine: nproc %d, %s, %s RAM, Linux %s; %s (server settings: %s); %s; %s; Go %s  \n",
		m.nproc, m.cpu, m.memTotal, m.kernel, m.postgres, m.pgSettings, m.pgbench, m.duckdb, m.goVersion)
	var la []string
	for _, p := range r.loadAvgs {
		la = append(la, p[0]+" "+p[1])
	}
	fmt.Fprintf(&b, "Load average (1/5/15 min; the machine is shared, and origin, pgaccel, pgbench and the probe share its %d CPUs): %s\n\n",
		m.nproc, strings.Join(la, "; "))

	fmt.Fprintf(&b, "Setup: `%s` (id bigint primary key, v int, payload text of 64 characters, updated_at timestamptz default now()), "+
		"%d rows at the start, a `refresh_mode: changes` dataset (`primary_key: [id]`, mode %s, `runtime.point_reads: acceleration`), "+
		"initial load from the slot's snapshot until ready: %.2f s. "+
		"Writes: pgbench straight to the origin, one change per transaction: %d%% INSERT of a new id, %d%% UPDATE of a random existing row, "+
		"%d%% DELETE of an existing row; `%s` (no -R for max). "+
		"pgbench's and the markers' sessions run with `synchronous_commit = %s` (the harness origin's default is off, fsync is off: "+
		"a commit's WAL is written, not synced). "+
		"Lag: a marker row inserted at the origin every %v (own connection, autocommit), from its COMMIT returning to the return of the first "+
		"probe read through pgaccel that saw it: `SELECT id FROM %s WHERE id IN (<markers not yet seen>, <an id no row has, new each read>)`, "+
		"a point read answered from DuckDB, sent within 1 ms of every move of the stream's published position (read in-process) and at least "+
		"every %v. Drain: the same for one marker written after pgbench ended. The stream's own view is "+
		"`dataset_replication_lag_ms` sampled every 100 ms and `dataset_replication_apply_lag_seconds` (a histogram: its p50/p99 are bucket "+
		"bounds). A rate is sustained when pgbench reached ≥ %.0f%% of it, every probe read was accelerated and the lag did not grow "+
		"(the median lag of the last third of the markers no more than %v or %.2f× above the first third's).\n\n",
		table, r.opts.rows, r.opts.mode, r.initialLoad.Seconds(), insertPct, updatePct, deletePct,
		load{rate: 1, d: r.opts.duration, clients: r.opts.clients, threads: r.opts.threads}.commandLine(),
		r.opts.syncCommit, r.opts.markerEvery, table, r.opts.pollEvery, keptShare*100, growthAbs, growthRel)

	r.targets(&b)
	r.lagTable(&b)
	r.streamTable(&b)
	r.catchUpText(&b)
	fmt.Fprintf(&b, "Published anchors, for comparison (much bigger machines, other pipelines): %s. Here origin, pgaccel and "+
		"pgbench share %d CPUs.\n\n", anchors, m.nproc)
	r.warnings(&b)
	r.perSecond(&b)
	return b.String()
}

// targets states the targets and whether this run met them.
func (r *report) targets(b *strings.Builder) {
	var at *stepResult
	for _, s := range r.steps {
		if s.target == targetRate && !s.search {
			at = s
		}
	}
	b.WriteString("**Targets**: ")
	if at == nil {
		fmt.Fprintf(b, "p99 lag under %v at %d ops/s: not measured (no %d in -rates)", targetP99, targetRate, targetRate)
	} else {
		p99, _ := percentile(at.lags(), 0.99)
		fmt.Fprintf(b, "p99 lag under %v at %d ops/s: **%.0f ms** at %.0f ops/s achieved (%s)", targetP99, targetRate, msf(p99), at.pg.tps,
			met(p99 < targetP99 && at.kept()))
	}
	b.WriteString("; catch-up at least 50k rows/s: ")
	if r.catchUp == nil {
		b.WriteString("not measured")
	} else {
		fmt.Fprintf(b, "**%.0f rows/s** (%s)", r.catchUp.rate(), met(r.catchUp.rate() >= targetCatchUpRPS))
	}
	b.WriteString(".  \n")
	hs, above := r.highestSustained()
	if hs != nil {
		fmt.Fprintf(b, "**Highest rate applied without growing lag: %.0f ops/s** (target %s; lag p50 %s ms, p99 %s ms; every lower rate tried was sustained too).",
			hs.pg.tps, rateName(hs.target), msCell(percentile(hs.lags(), 0.5)), msCell(percentile(hs.lags(), 0.99)))
	} else {
		b.WriteString("**No rate was applied without growing lag.**")
	}
	var grew, passed []string
	for _, s := range r.byRate() {
		if !s.sustained() {
			grew = append(grew, fmt.Sprintf("%s (%.0f ops/s achieved)", rateName(s.target), s.pg.tps))
		}
	}
	for _, s := range above {
		passed = append(passed, fmt.Sprintf("%s (%.0f ops/s achieved)", rateName(s.target), s.pg.tps))
	}
	if len(grew) > 0 {
		fmt.Fprintf(b, " Not sustained: %s.", strings.Join(grew, ", "))
	}
	if len(passed) > 0 {
		fmt.Fprintf(b, " Sustained above a rate that was not: %s.", strings.Join(passed, ", "))
	}
	b.WriteString("\n\n")
}

func (r *report) lagTable(b *strings.Builder) {
	b.WriteString("Lag from commit at the origin to visibility through pgaccel (marker rows, ms):\n\n")
	b.WriteString("| Target ops/s | Achieved ops/s | Slowest second | pgbench schedule lag avg / max ms | Markers | Mean | p50 | p90 | p99 | Max | Trend: p50 first → last third | Drain | Sustained |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, s := range r.sortedSteps() {
		lags := s.lags()
		t := trendOf(lags)
		target := rateName(s.target)
		if s.search {
			target += " (search)"
		}
		slowest := "–"
		if len(s.pg.perSecond) > 0 {
			slowest = fmt.Sprintf("%.0f", slices.Min(s.pg.perSecond))
		}
		sched := "–"
		if s.pg.hasSchedLag {
			sched = fmt.Sprintf("%.1f / %.0f", s.pg.schedLagMS, s.pg.schedLagMaxMS)
		}
		trendCell := "–"
		if t.ok {
			trendCell = fmt.Sprintf("%.0f → %.0f", msf(t.first), msf(t.last))
			if t.growing {
				trendCell += " (growing)"
			}
		}
		sus := "yes"
		if !s.sustained() {
			var why []string
			if !s.kept() {
				why = append(why, "rate not kept")
			}
			if t.growing {
				why = append(why, "lag grows")
			}
			if s.routed > 0 {
				why = append(why, "probe reads not accelerated")
			}
			if s.err != nil {
				why = append(why, "error")
			}
			sus = "no: " + strings.Join(why, ", ")
		}
		fmt.Fprintf(b, "| %s | %.0f | %s | %s | %d | %.0f | %s | %s | %s | %s | %s | %.0f | %s |\n",
			target, s.pg.tps, slowest, sched, len(lags), msf(mean(lags)),
			msCell(percentile(lags, 0.5)), msCell(percentile(lags, 0.9)), msCell(percentile(lags, 0.99)), msCell(percentile(lags, 1)),
			trendCell, msf(s.drain.lag()), sus)
	}
	b.WriteString("\n")
}

func (r *report) streamTable(b *strings.Builder) {
	fmt.Fprintf(b, "The stream's own view and the checks:\n\n")
	b.WriteString("| Target ops/s | Rows applied | Txns applied | `lag_ms` gauge p50 / p99 / max | `lag_bytes` max KiB | `apply_lag_seconds` p50 / p99 (bucket ≤ ms) | Probe reads accelerated | Table through pgaccel vs origin |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, s := range r.sortedSteps() {
		var gl []time.Duration
		var maxBytes int64
		for _, g := range s.gauges {
			gl = append(gl, time.Duration(g.lagMs)*time.Millisecond)
			maxBytes = max(maxBytes, g.lagBytes)
		}
		hist := "–"
		if q50, ok := s.applyLag.quantile(0.5); ok {
			q99, _ := s.applyLag.quantile(0.99)
			hist = bucketMs(q50) + " / " + bucketMs(q99)
		}
		check := s.check
		if s.err != nil {
			check = "error: " + s.err.Error()
		}
		target := rateName(s.target)
		if s.search {
			target += " (search)"
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s / %s / %s | %d | %s | %.0f of %d | %s |\n",
			target, s.applied, s.txApplied,
			msCell(percentile(gl, 0.5)), msCell(percentile(gl, 0.99)), msCell(percentile(gl, 1)), maxBytes>>10,
			hist, s.accelerated, s.polls, check)
	}
	b.WriteString("\n")
	r.cpuTable(b)
}

// cpuTable says who used the CPUs during each step.
func (r *report) cpuTable(b *strings.Builder) {
	fmt.Fprintf(b, "Who used the %d CPUs during each pgbench run (until its sessions at the origin had ended), in %% of one CPU (/proc/stat, getrusage, /proc/<pid>/stat): pgaccel's process "+
		"(the stream, DuckDB, the proxy, and the probe), the origin's walsender of the stream, the whole origin (postmaster and every backend, "+
		"the walsender and pgbench's included), pgbench itself, and everything else on the machine (other users' work):\n\n", r.machine.nproc)
	b.WriteString("| Target ops/s | Machine busy | pgaccel | walsender | Origin (all) | pgbench | Others |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range r.sortedSteps() {
		if s.cpuWindow <= 0 {
			continue
		}
		pct := func(d time.Duration) string { return fmt.Sprintf("%.0f%%", 100*d.Seconds()/s.cpuWindow.Seconds()) }
		ws := "–"
		if s.walsenderSeen {
			ws = pct(s.cpuWalsender)
		}
		target := rateName(s.target)
		if s.search {
			target += " (search)"
		}
		if !s.cpu.ok {
			fmt.Fprintf(b, "| %s | – | %s | %s | – | %s | – |\n", target, pct(s.cpu.self), ws, pct(s.cpu.children))
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", target, pct(s.cpu.machine), pct(s.cpu.self), ws, pct(s.cpu.origin), pct(s.cpu.children), pct(s.cpu.others()))
	}
	b.WriteString("\n")
}

func bucketMs(bound float64) string {
	if math.IsInf(bound, 1) {
		return "> last bucket"
	}
	return fmt.Sprintf("%.0f", bound*1000)
}

func (r *report) catchUpText(b *strings.Builder) {
	if c := r.catchUp; c != nil {
		fmt.Fprintf(b, "**Catch-up after a pause: %.0f rows/s.** pgaccel shut down; pgbench wrote %d changes unthrottled (`%s`, %.0f ops/s, %.1f MiB of WAL) "+
			"and one marker row; pgaccel started again on the same data dir and resumed from the position stored in its acceleration. "+
			"From app.Start: the stream resumed at %.2f s (its log line), the first batch was applied at %.2f s, the marker was in the "+
			"acceleration at %.2f s (read from DuckDB every 10 ms), ready at %.2f s. Rows/s = %d rows / %.2f s (resume → marker). "+
			"The stream counted %d rows in %d transactions; pgaccel's process used %.1f s of CPU from the start to the marker. "+
			"Table through pgaccel vs origin: %s.\n\n",
			c.rate(), c.pg.txns, c.load.commandLine(), c.pg.tps, float64(c.walBytes)/(1<<20),
			c.resumeAt.Seconds(), c.firstAt.Seconds(), c.doneAt.Seconds(), c.readyAt.Seconds(), c.rows, (c.doneAt - c.resumeAt).Seconds(),
			c.applied, c.txApplied, c.cpuSelf.Seconds(), c.check)
	} else if r.opts.mode != "file" {
		b.WriteString("Catch-up: not measured (mode memory: a restart rebuilds the acceleration).\n\n")
	}
	if k := r.bulk; k != nil {
		fmt.Fprintf(b, "**One large transaction: %.0f rows/s.** `UPDATE %s SET v = v + 1 WHERE id > 0` (%d rows in one transaction, %.2f s at the origin), "+
			"then a marker: in the acceleration %.2f s after the UPDATE's COMMIT returned; pgaccel's process used %.1f s of CPU meanwhile. "+
			"Table through pgaccel vs origin: %s.\n\n",
			k.rate(), table, k.rows, k.origin.Seconds(), k.visible.Seconds(), k.cpuSelf.Seconds(), k.check)
	}
}

func (r *report) warnings(b *strings.Builder) {
	var lines []string
	for _, s := range r.steps {
		for _, w := range s.warnings {
			lines = append(lines, "- "+rateName(s.target)+": "+w)
		}
	}
	if r.catchUp != nil {
		for _, w := range r.catchUp.warnings {
			lines = append(lines, "- catch-up: "+w)
		}
	}
	if r.bulk != nil {
		for _, w := range r.bulk.warnings {
			lines = append(lines, "- bulk: "+w)
		}
	}
	if len(lines) == 0 {
		b.WriteString("pgaccel logged no warning or error during the measurements.\n\n")
		return
	}
	b.WriteString("pgaccel's warnings and errors during the measurements:\n\n" + strings.Join(lines, "\n") + "\n\n")
}

// perSecond lists, per step, the median marker lag of each second of the
// run and pgbench's TPS in it.
func (r *report) perSecond(b *strings.Builder) {
	b.WriteString("<details><summary>Per second of each run: pgbench TPS / median marker lag ms</summary>\n\n")
	for _, s := range r.steps {
		if len(s.markers) == 0 {
			continue
		}
		start := s.markers[0].committed
		var buckets [][]time.Duration
		for _, m := range s.markers {
			i := int(m.committed.Sub(start) / time.Second)
			for len(buckets) <= i {
				buckets = append(buckets, nil)
			}
			buckets[i] = append(buckets[i], m.lag())
		}
		var cells []string
		for i, lags := range buckets {
			tps := "–"
			if i < len(s.pg.perSecond) {
				tps = fmt.Sprintf("%.0f", s.pg.perSecond[i])
			}
			cells = append(cells, tps+" / "+msCell(percentile(lags, 0.5)))
		}
		fmt.Fprintf(b, "- %s: %s\n", rateName(s.target), strings.Join(cells, ", "))
	}
	b.WriteString("\n</details>\n")
}

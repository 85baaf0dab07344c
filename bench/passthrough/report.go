package main

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// results holds every run's outcome by case and target, in run order.
type results struct {
	runs map[string]map[string][]outcome // case → target → rounds
}

func newResults() *results {
	return &results{runs: make(map[string]map[string][]outcome)}
}

func (r *results) add(c benchCase, target string, o outcome) {
	byTarget := r.runs[c.String()]
	if byTarget == nil {
		byTarget = make(map[string][]outcome)
		r.runs[c.String()] = byTarget
	}
	byTarget[target] = append(byTarget[target], o)
}

// metric reads one number from a run; ok is false when the run has none.
type metric func(outcome) (v float64, ok bool)

var (
	tpsMetric     metric = func(o outcome) (float64, bool) { return o.tps, true }
	latencyMetric metric = func(o outcome) (float64, bool) { return o.latencyMS, true }
	// cpuMetric is the proxy's CPU time (user and system) per transaction
	// in microseconds, userCPUMetric its user-space part: the proxy's own
	// code, which varies far less from run to run than the kernel's time
	// on a shared machine.
	cpuMetric metric = func(o outcome) (float64, bool) {
		return perTxn(o, o.proxyCPU.user+o.proxyCPU.system)
	}
	userCPUMetric metric = func(o outcome) (float64, bool) { return perTxn(o, o.proxyCPU.user) }
)

// perTxn is d per transaction of o, in microseconds.
func perTxn(o outcome, d time.Duration) (float64, bool) {
	if !o.hasCPU || o.txns == 0 {
		return 0, false
	}
	return float64(d.Microseconds()) / float64(o.txns), true
}

// median is the median of m over c's runs on target; ok is false when no
// run has m.
func (r *results) median(c benchCase, target string, m metric) (v float64, ok bool) {
	var xs []float64
	for _, o := range r.runs[c.String()][target] {
		if v, ok := m(o); ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

// pairedRatios is, for each round in which both a and b ran c, a's TPS
// over b's.
func (r *results) pairedRatios(c benchCase, a, b string) ratioSpread {
	tps := func(os []outcome) []float64 {
		xs := make([]float64, len(os))
		for i, o := range os {
			xs[i] = o.tps
		}
		return xs
	}
	return roundRatios(tps(r.runs[c.String()][a]), tps(r.runs[c.String()][b]))
}

// ratioSpread is a set of per-round ratios.
type ratioSpread []float64

// String is the median, the quartiles, and how many reached 0.95 and 1.
func (s ratioSpread) String() string {
	if len(s) == 0 {
		return "–"
	}
	lo, hi := quartiles(s)
	var at95, at100 int
	for _, x := range s {
		if x >= 0.95 {
			at95++
		}
		if x >= 1 {
			at100++
		}
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]; ≥0.95: %d/%d, ≥1: %d/%d", median(s), lo, hi, at95, len(s), at100, len(s))
}

// quartiles are the medians of the lower and upper halves of xs (the
// middle value, for an odd count, in neither).
func quartiles(xs []float64) (lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 1 {
		return s[0], s[0]
	}
	half := len(s) / 2
	return median(s[:half]), median(s[len(s)-half:])
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// machineInfo describes where the benchmark ran.
type machineInfo struct {
	nproc     int
	cpu       string
	kernel    string
	postgres  string
	pgbouncer string
	pgbench   string
	goVersion string
	revision  string // of the pgaccel checkout
	started   time.Time
	loadStart string // /proc/loadavg's 1/5/15-minute averages
}

func collectMachineInfo(ctx context.Context, origin *pgtest.Server, pgb *pgbench) machineInfo {
	info := machineInfo{
		nproc:     runtime.NumCPU(), // sched_getaffinity, as nproc(1) counts
		cpu:       benchutil.CPUModel(),
		kernel:    cmp.Or(benchutil.Kernel(), "unknown"),
		postgres:  postgresVersion(ctx, origin),
		pgbouncer: "not run",
		pgbench:   benchutil.PgbenchVersion(ctx, pgb.path),
		goVersion: benchutil.GoVersion(),
		revision:  benchutil.Revision(ctx),
		started:   time.Now().UTC(),
		loadStart: benchutil.LoadAvg(),
	}
	if checkPgbouncer() == nil {
		info.pgbouncer = pgbouncerVersion(ctx)
	}
	return info
}

// postgresVersion is the origin's server_version.
func postgresVersion(ctx context.Context, origin *pgtest.Server) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, origin.SuperDSN())
	if err != nil {
		return "unknown"
	}
	defer conn.Close(context.Background())
	return "PostgreSQL " + conn.ParameterStatus("server_version")
}

// report is the Markdown the benchmark prints.
type report struct {
	command  string
	machine  machineInfo
	opts     options
	targets  []string
	results  *results
	finished time.Time
	loadEnd  string
}

// settling says whether the origin was settled after the runs that
// wrote (runAll).
func (r report) settling() string {
	if r.opts.noSettle {
		return ", the origin not settled between runs"
	}
	return "; after each run that writes, the origin is vacuumed and checkpointed before the next run"
}

// pgaccelMode says how pgaccel was configured.
func (r report) pgaccelMode() string {
	if r.opts.auth == "proxy" {
		o := r.opts
		o.auth = "origin"
		return strings.TrimSuffix(report{opts: o}.pgaccelMode(), ")") + "; with `auth.mode: proxy`: pgaccel verifies each SCRAM login itself and logs in to the origin with the login's ClientKey)"
	}
	if r.opts.accelerated && r.opts.pointReads == "acceleration" {
		cache := fmt.Sprintf("the results cache on (hot-key workloads read the first %d accounts only; the point index answers them before the cache is looked at, and its answers are not kept)", hotKeys)
		if r.opts.noResultsCache {
			cache = "the results cache off (`runtime.results_cache.enabled: false`)"
		}
		return "as `pgaccel run` with pgbench_accounts accelerated and `runtime.point_reads: acceleration` (select-only reads are point reads by its primary key, answered from the point index (`runtime.point_index`, built on the first read; DuckDB answers until then); tpcb-like writes go to the origin, and so do its reads after them), with " + cache
	}
	if r.opts.accelerated {
		return "as `pgaccel run` with pgbench_accounts accelerated and `runtime.point_reads: origin`, the default (select-only reads are point reads by its primary key: planned, then relayed to the origin)"
	}
	if r.opts.withDataset {
		return "as `pgaccel run` with one accelerated dataset that pgbench does not read (every statement passes the routing hook)"
	}
	return "without accelerated datasets, as `pgaccel run` is then (no routing hook: every message takes the origin route)"
}

func (r report) markdown() string {
	var b strings.Builder
	m := r.machine
	fmt.Fprintf(&b, "%s\n\n", r.heading())
	fmt.Fprintf(&b, "Command: `%s`  \n", r.command)
	fmt.Fprintf(&b, "pgaccel revision: %s  \n", m.revision)
	fmt.Fprintf(&b, "Date: %s (finished %s)  \n", m.started.Format(time.RFC3339), r.finished.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Machine: nproc %d, %s, Linux %s; %s; %s; %s; Go %s  \n",
		m.nproc, m.cpu, m.kernel, m.postgres, m.pgbouncer, m.pgbench, m.goVersion)
	fmt.Fprintf(&b, "Load average (1/5/15 min): start %s, end %s\n\n", m.loadStart, r.loadEnd)
	fmt.Fprintf(&b, "pgbench scale %d, each run `-T %d`, %d round(s); runs interleaved (round → workload → clients → target, "+
		"target order rotating each round)%s. Medians over the rounds; ratios are of median TPS; TPS excludes initial "+
		"connection time. pgaccel runs as its own process %s; pgbouncer runs in session mode. "+
		"Origin, proxies and pgbench share the same %d CPUs.\n\n",
		r.opts.scale, int(r.opts.duration/time.Second), r.opts.rounds, r.settling(), r.pgaccelMode(), m.nproc)

	has := func(t string) bool { return slices.Contains(r.targets, t) }
	var ratios [][2]string
	for _, q := range [][2]string{{targetPgaccel, targetDirect}, {targetPgaccel, targetBaseline}, {targetPgbouncer, targetDirect}, {targetPgaccel, targetPgbouncer},
		{targetPgaccel, targetPlain}, {targetPlain, targetPgbouncer}} {
		if has(q[0]) && has(q[1]) {
			ratios = append(ratios, q)
		}
	}
	var proxies []string
	for _, t := range r.targets {
		if t != targetDirect {
			proxies = append(proxies, t)
		}
	}

	// Throughput.
	var head []string
	for _, t := range r.targets {
		head = append(head, "TPS "+t)
	}
	for _, q := range ratios {
		head = append(head, q[0]+"/"+q[1])
	}
	tableHead(&b, head)
	for _, c := range benchCases() {
		tps := map[string]float64{}
		var cells []string
		for _, t := range r.targets {
			v, ok := r.results.median(c, t, tpsMetric)
			tps[t] = v
			cells = append(cells, number(v, ok, "%.0f"))
		}
		for _, q := range ratios {
			cells = append(cells, ratio(tps[q[0]], tps[q[1]]))
		}
		tableRow(&b, c, cells)
	}

	// Per-round ratios: each round runs a case's targets back to back, so
	// the ratio of one round's pair is less exposed to the machine's slow
	// drift than the ratio of medians over the whole run.
	if r.opts.rounds > 1 && len(ratios) > 0 {
		fmt.Fprintf(&b, "\nPer-round TPS ratios (each round's runs of a case ran back to back): median [lower quartile, upper quartile] "+
			"over the rounds, and how many rounds reached 0.95 and 1.00:\n\n")
		head = head[:0]
		for _, q := range ratios {
			head = append(head, q[0]+"/"+q[1])
		}
		tableHead(&b, head)
		for _, c := range benchCases() {
			var cells []string
			for _, q := range ratios {
				cells = append(cells, r.results.pairedRatios(c, q[0], q[1]).String())
			}
			tableRow(&b, c, cells)
		}
	}

	// Latency and proxy CPU.
	fmt.Fprintf(&b, "\nLatency (pgbench \"latency average\", ms) and the proxy's own CPU time per transaction "+
		"(user+system of its process, µs; then its user time alone, µs):\n\n")
	head = head[:0]
	for _, t := range r.targets {
		head = append(head, "ms "+t)
	}
	for _, t := range proxies {
		head = append(head, "CPU µs/txn "+t)
	}
	for _, t := range proxies {
		head = append(head, "user µs/txn "+t)
	}
	tableHead(&b, head)
	for _, c := range benchCases() {
		var cells []string
		for _, t := range r.targets {
			v, ok := r.results.median(c, t, latencyMetric)
			cells = append(cells, number(v, ok, "%.3f"))
		}
		for _, t := range proxies {
			v, ok := r.results.median(c, t, cpuMetric)
			cells = append(cells, number(v, ok, "%.1f"))
		}
		for _, t := range proxies {
			v, ok := r.results.median(c, t, userCPUMetric)
			cells = append(cells, number(v, ok, "%.1f"))
		}
		tableRow(&b, c, cells)
	}

	// Every run.
	fmt.Fprintf(&b, "\nEvery run, TPS by round:\n\n| Workload | Clients | Target |")
	for i := 1; i <= r.opts.rounds; i++ {
		fmt.Fprintf(&b, " %d |", i)
	}
	b.WriteString("\n|---|--:|---|" + strings.Repeat("--:|", r.opts.rounds) + "\n")
	for _, c := range benchCases() {
		for _, t := range r.targets {
			fmt.Fprintf(&b, "| %s | %d | %s |", c.workload.name, c.clients.conns, t)
			for _, o := range r.results.runs[c.String()][t] {
				fmt.Fprintf(&b, " %.0f |", o.tps)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func tableHead(b *strings.Builder, cols []string) {
	b.WriteString("| Workload | Clients |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|--:|" + strings.Repeat("--:|", len(cols)) + "\n")
}

func tableRow(b *strings.Builder, c benchCase, cells []string) {
	fmt.Fprintf(b, "| %s | %d |", c.workload.name, c.clients.conns)
	for _, v := range cells {
		fmt.Fprintf(b, " %s |", v)
	}
	b.WriteString("\n")
}

func number(v float64, ok bool, format string) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// resultsHeading starts the report (datasetHeading with -with-dataset);
// -out replaces the section it heads, so one results file can hold
// other benchmarks' sections too.
const (
	resultsHeading = "## Pass-through (pgbench)"
	datasetHeading = "## Pass-through with one accelerated dataset (pgbench)"
	accelHeading   = "## Accelerated point reads with point_reads: %s (pgbench)"
)

func (r report) heading() string {
	h := resultsHeading
	switch {
	case r.opts.accelerated:
		h = fmt.Sprintf(accelHeading, r.opts.pointReads)
	case r.opts.withDataset:
		h = datasetHeading
	}
	if r.opts.auth == "proxy" {
		// Its own section: logins verified by pgaccel.
		h = strings.Replace(h, " (pgbench)", ", auth.mode: proxy (pgbench)", 1)
	}
	return h
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// workload is a pgbench script and protocol.
type workload struct {
	name string
	args []string
	// hot: reads of hotKeys keys only (hotKeyScript), run only when named
	// in -workloads or with -accelerated.
	hot bool
	// writes: the script updates pgbench_accounts, which leaves the
	// origin in a state the next run pays for (runAll settles it).
	writes bool
}

// hotKeys is how many keys the hot-key workloads read: the point reads of
// a dashboard or an API that asks for the same rows again and again, which
// the results cache answers after the first time.
const hotKeys = 1000

// hotKeyFile is where writeHotKeyScript wrote the hot-key workloads'
// script; "@hotkeys" in a workload's arguments names it.
var hotKeyFile string

// writeHotKeyScript writes into dir pgbench's select-only script over the
// first hotKeys accounts.
func writeHotKeyScript(dir string) error {
	hotKeyFile = filepath.Join(dir, "hotkeys.sql")
	script := fmt.Sprintf("\\set aid random(1, %d)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", hotKeys)
	return os.WriteFile(hotKeyFile, []byte(script), 0o644)
}

// clients is a pgbench -c/-j pair.
type clients struct {
	conns, threads int
}

// benchCase is one row of the report: a workload at a client count.
type benchCase struct {
	workload workload
	clients  clients
}

func (c benchCase) String() string {
	return fmt.Sprintf("%s, %d client(s)", c.workload.name, c.clients.conns)
}

var (
	workloads = []workload{
		{name: "select-only simple", args: []string{"-S", "-M", "simple"}},
		{name: "select-only extended", args: []string{"-S", "-M", "extended"}},
		{name: "select-only prepared", args: []string{"-S", "-M", "prepared"}},
		{name: "tpcb-like simple", args: nil, writes: true}, // pgbench's default script and protocol
		// A new connection for every transaction (-C): the login rate.
		{name: "select-only simple connect", args: []string{"-S", "-M", "simple", "-C"}},
		{name: "hot-key select simple", args: []string{"-f", "@hotkeys", "-M", "simple"}, hot: true},
		{name: "hot-key select extended", args: []string{"-f", "@hotkeys", "-M", "extended"}, hot: true},
		{name: "hot-key select prepared", args: []string{"-f", "@hotkeys", "-M", "prepared"}, hot: true},
	}
	clientCounts = []clients{{conns: 1, threads: 1}, {conns: 8, threads: 2}}
)

// onlyCells, when set (-cells), replaces every workload at every client
// count.
var onlyCells []benchCase

// benchCases is every workload at every client count (or -cells), in
// report order.
func benchCases() []benchCase {
	if onlyCells != nil {
		return onlyCells
	}
	var out []benchCase
	for _, w := range workloads {
		for _, c := range clientCounts {
			out = append(out, benchCase{workload: w, clients: c})
		}
	}
	return out
}

// parseCells reads -cells: comma-separated workload:clients pairs, such as
// select-only-simple:1,tpcb-like-simple:8 (pgbench -j is 1 at one client,
// 2 otherwise, as in clientCounts).
func parseCells(spec string) ([]benchCase, error) {
	var out []benchCase
	for _, item := range strings.Split(spec, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(item), ":")
		conns, err := strconv.Atoi(n)
		if !ok || err != nil || conns < 1 {
			return nil, fmt.Errorf("-cells: %q is not workload:clients (clients a whole number, at least 1)", item)
		}
		i := slices.IndexFunc(workloads, func(w workload) bool { return strings.ReplaceAll(w.name, " ", "-") == name })
		if i < 0 {
			return nil, fmt.Errorf("-cells: unknown workload %q", name)
		}
		out = append(out, benchCase{workload: workloads[i], clients: clients{conns: conns, threads: min(conns, 2)}})
	}
	return out, nil
}

// outcome is what one pgbench run measured.
type outcome struct {
	tps       float64 // without initial connection time
	latencyMS float64 // latency average
	txns      int64   // number of transactions actually processed

	// proxyCPU is the CPU time the proxy used during the run; hasCPU is
	// false for the direct target.
	proxyCPU cpuTimes
	hasCPU   bool
}

// pgbench runs the pgbench binary as the origin's superuser.
type pgbench struct {
	path     string
	user     string
	database string
	env      []string // holds PGPASSWORD; never printed
}

// findPgbench finds the pgbench binary (benchutil.FindPgbench).
func findPgbench() (*pgbench, error) {
	p, err := benchutil.FindPgbench()
	if err != nil {
		return nil, err
	}
	return &pgbench{path: p}, nil
}

// configure points pgbench at origin's database and superuser. The PG*
// variables of this process are dropped so that they cannot redirect it.
func (p *pgbench) configure(origin *pgtest.Server) {
	p.user, p.database = origin.SuperUser, origin.Database
	p.env = benchutil.PgbenchEnv("PGPASSWORD="+origin.SuperPassword, "PGSSLMODE=disable", "PGAPPNAME=pgbench")
}

// initialize runs `pgbench -i -s scale` against host:port.
func (p *pgbench) initialize(ctx context.Context, host string, port, scale int) error {
	if _, err := p.exec(ctx, host, port, "-i", "-q", "-s", strconv.Itoa(scale)); err != nil {
		return fmt.Errorf("pgbench -i -s %d: %w", scale, err)
	}
	return nil
}

// run runs one case against t for d and parses the result.
func (p *pgbench) run(ctx context.Context, t target, c benchCase, d time.Duration) (outcome, error) {
	args := slices.Clone(c.workload.args)
	for i, a := range args {
		if a == "@hotkeys" {
			args[i] = hotKeyFile
		}
	}
	args = append(args,
		"-c", strconv.Itoa(c.clients.conns), "-j", strconv.Itoa(c.clients.threads),
		"-T", strconv.Itoa(int(d/time.Second)))
	out, err := p.exec(ctx, t.host, t.port, args...)
	if err != nil {
		return outcome{}, err
	}
	return parseOutput(out)
}

// exec runs pgbench with args against host:port and returns its combined
// output. A failure's error carries the end of that output.
func (p *pgbench) exec(ctx context.Context, host string, port int, args ...string) ([]byte, error) {
	args = append(args, "-h", host, "-p", strconv.Itoa(port), "-U", p.user, p.database)
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("pgbench %s: %w\n%s", strings.Join(args, " "), err, benchutil.Tail(out, 15))
	}
	return out, nil
}

// parseOutput reads TPS and average latency from pgbench's summary.
func parseOutput(out []byte) (outcome, error) {
	sum, err := benchutil.ParsePgbenchSummary(out)
	if err != nil {
		return outcome{}, err
	}
	return outcome{tps: sum.TPS, latencyMS: sum.LatencyMS, txns: sum.Txns}, nil
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/integration/pgtest"
)

const pgbenchInstall = "apt-get update && apt-get install -y postgresql-client"

// workload is a pgbench script and protocol.
type workload struct {
	name string
	args []string
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
		{name: "tpcb-like simple", args: nil}, // pgbench's default script and protocol
	}
	clientCounts = []clients{{conns: 1, threads: 1}, {conns: 8, threads: 2}}
)

// benchCases is every workload at every client count, in report order.
func benchCases() []benchCase {
	var out []benchCase
	for _, w := range workloads {
		for _, c := range clientCounts {
			out = append(out, benchCase{workload: w, clients: c})
		}
	}
	return out
}

// outcome is what one pgbench run measured.
type outcome struct {
	tps       float64 // without initial connection time
	latencyMS float64 // latency average
	txns      int64   // number of transactions actually processed

	// proxyCPU is the CPU time (user+system) the proxy used during the run;
	// hasCPU is false for the direct target.
	proxyCPU time.Duration
	hasCPU   bool
}

// pgbench runs the pgbench binary as the origin's superuser.
type pgbench struct {
	path     string
	user     string
	database string
	env      []string // holds PGPASSWORD; never printed
}

// findPgbench looks for pgbench where pgtest looks for the server (pg_config
// --bindir, the highest /usr/lib/postgresql/*/bin), then on PATH.
func findPgbench() (*pgbench, error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return majorOf(debian[i]) > majorOf(debian[j]) })
	dirs = append(dirs, debian...)
	for _, d := range dirs {
		p := filepath.Join(d, "pgbench")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return &pgbench{path: p}, nil
		}
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return &pgbench{path: p}, nil
	}
	return nil, fmt.Errorf("pgbench not found (looked in pg_config --bindir, /usr/lib/postgresql/*/bin and PATH); install it with: %s", pgbenchInstall)
}

// majorOf turns /usr/lib/postgresql/9.6/bin into 9.6 for sorting.
func majorOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// configure points pgbench at origin's database and superuser. The PG*
// variables of this process are dropped so that they cannot redirect it.
func (p *pgbench) configure(origin *pgtest.Server) {
	p.user, p.database = origin.SuperUser, origin.Database
	env := []string{"PGPASSWORD=" + origin.SuperPassword, "PGSSLMODE=disable", "PGAPPNAME=pgbench"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	p.env = env
}

// version is the output of `pgbench --version`.
func (p *pgbench) version(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, p.path, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
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
	args := append(slices.Clone(c.workload.args),
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
		return nil, fmt.Errorf("pgbench %s: %w\n%s", strings.Join(args, " "), err, tail(out, 15))
	}
	return out, nil
}

var (
	tpsRe     = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	latencyRe = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	failedRe  = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
	txnsRe    = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
)

// parseOutput reads TPS and average latency from pgbench's summary.
func parseOutput(out []byte) (outcome, error) {
	if m := failedRe.FindSubmatch(out); m != nil && string(m[1]) != "0" {
		return outcome{}, fmt.Errorf("pgbench reported %s failed transactions:\n%s", m[1], tail(out, 15))
	}
	tm := tpsRe.FindSubmatch(out)
	lm := latencyRe.FindSubmatch(out)
	nm := txnsRe.FindSubmatch(out)
	if tm == nil || lm == nil || nm == nil {
		return outcome{}, errors.New("pgbench output lacks one of the lines \"tps = ... (without initial connection time)\", " +
			"\"latency average\", \"number of transactions actually processed\":\n" + tail(out, 15))
	}
	var o outcome
	var err error
	if o.tps, err = strconv.ParseFloat(string(tm[1]), 64); err != nil {
		return outcome{}, fmt.Errorf("parse pgbench tps %q: %w", tm[1], err)
	}
	if o.latencyMS, err = strconv.ParseFloat(string(lm[1]), 64); err != nil {
		return outcome{}, fmt.Errorf("parse pgbench latency %q: %w", lm[1], err)
	}
	if o.txns, err = strconv.ParseInt(string(nm[1]), 10, 64); err != nil {
		return outcome{}, fmt.Errorf("parse pgbench transaction count %q: %w", nm[1], err)
	}
	return o, nil
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(string(bytes.TrimRight(out, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

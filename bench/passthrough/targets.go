package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// The targets pgbench runs against, in report order.
const (
	targetDirect  = "direct"
	targetPgaccel = "pgaccel"
	// targetPlain is pgaccel without datasets (pass-through), run beside
	// targetPgaccel with -with-dataset, so the cost of the routing hook is
	// measured in the same run.
	targetPlain     = "pgaccel-passthrough"
	targetPgbouncer = "pgbouncer"
	// targetBaseline is pgaccel of another revision's binary (-baseline).
	targetBaseline = "pgaccel-baseline"
)

var targetNames = []string{targetDirect, targetPgaccel, targetBaseline, targetPlain, targetPgbouncer}

func isTarget(name string) bool { return slices.Contains(targetNames, name) }

// target is somewhere pgbench can connect to: the origin itself or a proxy
// in front of it. Every target serves the origin's database and roles.
type target struct {
	name string
	host string
	port int
	// cpu is the CPU time the proxy has used so far; nil for the direct
	// target.
	cpu func() (cpuTimes, error)
}

// selectTargets keeps the targets named in want, in report order.
func selectTargets(all []target, want []string) []target {
	var out []target
	for _, t := range all {
		if slices.Contains(want, t.name) {
			out = append(out, t)
		}
	}
	return out
}

func targetNamesOf(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	return out
}

// pgaccelProcess is pgaccel serving in a child process, as `pgaccel run`
// does: this binary re-executed with childFlag (child.go) runs app.Start
// with a config file. A separate process is what users run, and what
// pgbouncer is here: measured in-process, the proxy shared its Go runtime
// with the benchmark, whose scheduler then behaved otherwise.
type pgaccelProcess struct {
	name string
	cmd  *exec.Cmd
	dir  string
	port int
	done chan error
}

// pgaccelConfig is the config pgaccel runs with: no datasets (every message
// takes the origin route), or, with opts.withDataset, one accelerated
// dataset pgbench never reads, bench_dim (created here), and with
// opts.accelerated pgbench_accounts too.
func pgaccelConfig(ctx context.Context, origin *pgtest.Server, dir string, opts options) (string, error) {
	yaml := fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\n",
		origin.SuperDSN(), filepath.Join(dir, "data"))
	if opts.auth == "proxy" {
		if err := origin.Exec(ctx, auth.SetupSQL(origin.SuperUser)); err != nil {
			return "", fmt.Errorf("create the verifier lookup: %w", err)
		}
		yaml = strings.Replace(yaml, "runtime:\n", "auth:\n  mode: proxy\nruntime:\n", 1)
	}
	if !opts.withDataset {
		return yaml, nil
	}
	if err := origin.Exec(ctx, `DROP TABLE IF EXISTS bench_dim;
		CREATE TABLE bench_dim (id int PRIMARY KEY, v text);
		INSERT INTO bench_dim SELECT g, 'v' || g FROM generate_series(1, 100) g;`); err != nil {
		return "", fmt.Errorf("create bench_dim: %w", err)
	}
	yaml += fmt.Sprintf("  point_reads: %s\n  results_cache:\n    enabled: %t\ndatasets:\n  - from: postgres:public.bench_dim\n", opts.pointReads, !opts.noResultsCache)
	if opts.accelerated {
		yaml += "  - from: postgres:public.pgbench_accounts\n"
	}
	return yaml, nil
}

// startPgaccel starts pgaccel of binary (a passthrough binary: it serves
// when re-executed with childFlag) in front of origin and waits until it
// serves (its datasets loaded). Its log goes to stderr.
func startPgaccel(ctx context.Context, origin *pgtest.Server, opts options, binary string, stderr io.Writer) (_ *pgaccelProcess, err error) {
	dir, err := os.MkdirTemp("", "pgaccel-bench-")
	if err != nil {
		return nil, err
	}
	p := &pgaccelProcess{name: targetPgaccel, dir: dir, done: make(chan error, 1)}
	defer func() {
		if err != nil {
			_ = p.stop()
		}
	}()
	yaml, err := pgaccelConfig(ctx, origin, dir, opts)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "pgaccel.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	args := []string{childFlag}
	if opts.cpuprofile != "" {
		args = append(args, "-cpuprofile", opts.cpuprofile)
	}
	if opts.memprofile != "" {
		args = append(args, "-memprofile", opts.memprofile)
	}
	p.cmd = exec.Command(binary, append(args, cfgPath)...)
	p.cmd.Stderr = stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a Ctrl-C reaches this process, which then
		// stops pgaccel.
		Setpgid: true,
		// If this process dies without stopping it, so does pgaccel.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pgaccel: %w", err)
	}
	go func() { p.done <- p.cmd.Wait() }()

	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), childReady); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			return nil, errors.New("pgaccel exited before it served (its log is above)")
		}
		_, portText, _ := net.SplitHostPort(a)
		if p.port, err = strconv.Atoi(portText); err != nil {
			return nil, fmt.Errorf("pgaccel reported address %q", a)
		}
		return p, nil
	case <-time.After(2 * time.Minute):
		return nil, errors.New("pgaccel did not serve within 2 minutes")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pgaccelProcess) target() target {
	return target{name: p.name, host: "127.0.0.1", port: p.port, cpu: func() (cpuTimes, error) {
		return procCPU(p.cmd.Process.Pid)
	}}
}

// stop ends pgaccel (SIGTERM: a graceful shutdown, then SIGKILL if it
// lingers) and removes its dir.
func (p *pgaccelProcess) stop() error {
	var errs []error
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			if err != nil {
				errs = append(errs, fmt.Errorf("pgaccel exited: %w", err))
			}
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			errs = append(errs, errors.New("pgaccel ignored SIGTERM for 30s; killed it"))
		}
		p.cmd = nil
	}
	if err := os.RemoveAll(p.dir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop pgaccel: %w", err)
	}
	return nil
}

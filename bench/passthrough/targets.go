package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/integration/pgtest"
	"github.com/pgaccel/pgaccel/proxy"
	"github.com/rs/zerolog"
)

// The targets pgbench runs against, in report order.
const (
	targetDirect    = "direct"
	targetPgaccel   = "pgaccel"
	targetPgbouncer = "pgbouncer"
)

var targetNames = []string{targetDirect, targetPgaccel, targetPgbouncer}

func isTarget(name string) bool { return slices.Contains(targetNames, name) }

// target is somewhere pgbench can connect to: the origin itself or a proxy
// in front of it. Every target serves the origin's database and roles.
type target struct {
	name string
	host string
	port int
	// cpu is the CPU time (user+system) the proxy has used so far; nil for
	// the direct target.
	cpu func() (time.Duration, error)
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

// pgaccelProxy is a pgaccel proxy.Server serving in this process.
type pgaccelProxy struct {
	srv  *proxy.Server
	ln   net.Listener
	done chan error
	// app and dir, instead, for startPgaccelApp.
	app *app.App
	dir string
}

// startPgaccel starts the proxy in front of origin on a free loopback port,
// configured as `pgaccel run` would be for a catalog without datasets: every
// message takes the origin route.
func startPgaccel(origin *pgtest.Server, log zerolog.Logger) (*pgaccelProxy, error) {
	oc, err := pgconn.ParseConfig(origin.SuperDSN())
	if err != nil {
		// The parse error may quote the DSN, password included.
		return nil, fmt.Errorf("parse the origin's connection string for %s", origin.Addr())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for pgaccel: %w", err)
	}
	p := &pgaccelProxy{
		srv:  proxy.NewServer(proxy.Config{Origin: oc, ShutdownGrace: 5 * time.Second, Logger: log}),
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { p.done <- p.srv.Serve(ln) }()
	return p, nil
}

func (p *pgaccelProxy) target() target {
	addr := ""
	if p.app != nil {
		addr = p.app.Addr()
	} else {
		addr = p.ln.Addr().String()
	}
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	return target{name: targetPgaccel, host: "127.0.0.1", port: port, cpu: selfCPU}
}

// selfCPU is this process's CPU time: the proxy's, as the rest of the
// process only waits for pgbench while it runs.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// stop shuts the proxy down and waits for Serve to return.
func (p *pgaccelProxy) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if p.app != nil {
		defer os.RemoveAll(p.dir)
		return p.app.Shutdown(ctx)
	}
	if err := p.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop pgaccel: %w", err)
	}
	if err := <-p.done; err != nil {
		return fmt.Errorf("pgaccel serve: %w", err)
	}
	return nil
}

// startPgaccelApp starts pgaccel as `pgaccel run` does (app.Start) with one
// accelerated dataset, bench_dim, that pgbench never reads; with accounts,
// pgbench_accounts is accelerated too.
func startPgaccelApp(origin *pgtest.Server, log zerolog.Logger, accounts bool, pointReads string) (*pgaccelProxy, error) {
	ctx := context.Background()
	if err := origin.Exec(ctx, `DROP TABLE IF EXISTS bench_dim;
		CREATE TABLE bench_dim (id int PRIMARY KEY, v text);
		INSERT INTO bench_dim SELECT g, 'v' || g FROM generate_series(1, 100) g;`); err != nil {
		return nil, fmt.Errorf("create bench_dim: %w", err)
	}
	dir, err := os.MkdirTemp("", "pgaccel-bench-")
	if err != nil {
		return nil, err
	}
	yaml := fmt.Sprintf("origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\n  point_reads: %s\ndatasets:\n  - from: postgres:public.bench_dim\n",
		origin.SuperDSN(), dir, pointReads)
	ready := []string{"bench_dim"}
	if accounts {
		yaml += "  - from: postgres:public.pgbench_accounts\n"
		ready = append(ready, "pgbench_accounts")
	}
	cfg, err := catalog.Parse([]byte(yaml), "bench.yaml")
	if err != nil {
		return nil, err
	}
	a, err := app.Start(cfg, log)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, name := range ready {
		if err := a.Runner.WaitReady(wctx, name); err != nil {
			return nil, fmt.Errorf("%s did not load: %w", name, err)
		}
	}
	p := &pgaccelProxy{app: a, dir: dir}
	return p, nil
}

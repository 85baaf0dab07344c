package main

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

//go:embed demo.sql
var demoSQL string

// demoRefreshInterval is the demo datasets' refresh_check_interval: a
// write at the origin is served by pgaccel within it.
const demoRefreshInterval = 10 * time.Second

// demoQuery is the query the demo times on the origin and through pgaccel.
const demoQuery = `SELECT c.country, o.status, count(*), sum(o.amount) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country, o.status ORDER BY c.country, o.status`

// demoRuns is how many times each way the demo query runs for its median.
const demoRuns = 5

// cmdDemo starts a throwaway origin with sample data and pgaccel in front
// of it, prints how to use it (psql lines, the admin port, the datasets'
// status, a query timed both ways, how to see a write arrive), and runs
// until interrupted.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", catalog.DefaultServerListen, "address pgaccel listens on for clients (when it is taken and not given, a free port)")
	adminAddr := fs.String("admin", catalog.DefaultAdminListen, "address of the admin port (when it is taken and not given, a free port)")
	level := fs.String("log-level", "warn", "log level: debug, info (shows every refresh), warn, error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel demo [flags]\n\nStarts a throwaway origin Postgres with sample data (customers, orders) and pgaccel in front of it, until Ctrl-C.")
		fs.PrintDefaults()
	}
	if extra, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(extra) != 0 {
		return fmt.Errorf("demo takes no arguments, got %q", strings.Join(extra, " "))
	}
	log, err := newLogger(stderr, *level, logConsole)
	if err != nil {
		return err
	}

	// The ports come first: a second demo must not fail only after initdb
	// and the data load. The probes stay open until pgaccel starts, so the
	// ports cannot be taken in between.
	var probes []net.Listener
	defer func() {
		for _, ln := range probes {
			ln.Close()
		}
	}()
	for _, p := range []struct {
		flag string
		addr *string
	}{{"listen", listen}, {"admin", adminAddr}} {
		ln, addr, err := demoPort(*p.addr, "-"+p.flag, flagGiven(fs, p.flag), stdout)
		if err != nil {
			return err
		}
		probes = append(probes, ln)
		*p.addr = addr
	}

	dir, err := os.MkdirTemp("", "pgaccel-demo-")
	if err != nil {
		return fmt.Errorf("create the demo's directory: %w", err)
	}
	defer os.RemoveAll(dir)

	fmt.Fprintln(stdout, "Starting a throwaway origin Postgres ...")
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	origin, err := pgtest.Start(sctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted; pgtest has cleaned up
		}
		return fmt.Errorf("start the demo origin: %w", err)
	}
	defer func() {
		if err := origin.Stop(); err != nil {
			fmt.Fprintln(stderr, "pgaccel: stop the demo origin:", err)
		}
	}()
	fmt.Fprintln(stdout, "Loading sample data (customers, orders) ...")
	// The demo user owns the tables, so it can write them (directly or
	// through pgaccel).
	owner := pgtest.AppUser
	if err := origin.Exec(sctx, demoSQL+"\nALTER TABLE customers OWNER TO "+owner+"; ALTER TABLE orders OWNER TO "+owner+";"); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("load sample data: %w", err)
	}

	cfgPath := filepath.Join(dir, "pgaccel.yaml")
	cfgText := fmt.Sprintf(`# written by pgaccel demo
origin:
  dsn: %q
server:
  listen: %q
admin:
  listen: %q
runtime:
  data_dir: %q
  verify:
    enabled: true
    sample_rate: 10%%
datasets:
  - from: postgres:public.orders
    name: orders
    acceleration:
      refresh_check_interval: %s
  - from: postgres:public.customers
    name: customers
    acceleration:
      refresh_check_interval: %s
`, origin.SuperDSN(), *listen, *adminAddr, filepath.Join(dir, "data"), demoRefreshInterval, demoRefreshInterval)
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		return fmt.Errorf("write demo config: %w", err)
	}
	cfg, err := catalog.Load(cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	for _, ln := range probes {
		ln.Close()
	}
	probes = nil
	a, err := app.Start(cfg, log)
	if err != nil {
		return err
	}
	stop := func() error {
		dctx, dcancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace+10*time.Second)
		defer dcancel()
		return a.Shutdown(dctx)
	}
	err = demoShow(ctx, a, origin, cfgPath, stdout)
	if err == nil {
		<-ctx.Done()
	}
	fmt.Fprintln(stdout, "\nStopping ...")
	if serr := stop(); err == nil {
		err = serr
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil // interrupted while loading
	}
	return err
}

// demoPort checks that addr is free and returns a listener holding it. When
// it is taken: with the flag given, an error; otherwise a free port on the
// same host, said on out.
func demoPort(addr, flagName string, given bool, out io.Writer) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, addr, nil
	}
	if given {
		return nil, "", fmt.Errorf("%s %s: %w (another pgaccel demo? stop it, or choose another address)", flagName, addr, err)
	}
	host, _, serr := net.SplitHostPort(addr)
	if serr != nil {
		return nil, "", fmt.Errorf("%s %s: %w", flagName, addr, serr)
	}
	ln, err2 := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err2 != nil {
		return nil, "", fmt.Errorf("%s %s: %w; and no free port either: %w", flagName, addr, err, err2)
	}
	free := ln.Addr().String()
	fmt.Fprintf(out, "%s is in use (another pgaccel demo?): using %s instead (choose one with %s)\n", addr, free, flagName)
	return ln, free, nil
}

// demoShow waits for the datasets, then prints how to use the demo.
func demoShow(ctx context.Context, a *app.App, origin *pgtest.Server, cfgPath string, out io.Writer) error {
	fmt.Fprintln(out, "Loading the accelerations ...")
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := a.WaitReady(wctx); err != nil {
		return err
	}
	proxyURL := (&url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(pgtest.AppUser, pgtest.AppPassword),
		Host:     a.Addr(),
		Path:     "/" + origin.Database,
		RawQuery: "sslmode=disable",
	}).String()
	originURL := origin.DSN(pgtest.AppUser, pgtest.AppPassword)
	self := "pgaccel"
	if strings.Contains(os.Args[0], "/") {
		self = os.Args[0]
	}

	fmt.Fprintf(out, `
pgaccel is running in front of the demo origin.

  Connect through pgaccel:  psql %q
  Connect to the origin:    psql %q
  Admin port:               http://%s/v1/datasets?status=true  (also /metrics, /v1/ready, /health)
  Status:                   %s status -admin %s
  Config:                   %s

`, proxyURL, originURL, a.AdminAddr(), self, a.AdminAddr(), cfgPath)

	admin := &adminClient{base: "http://" + a.AdminAddr(), http: &http.Client{Timeout: 10 * time.Second}}
	rows, err := admin.datasets()
	if err != nil {
		return err
	}
	if err := printStatus(out, rows); err != nil {
		return err
	}

	originMs, originRows, err := timeQuery(ctx, originURL, demoQuery, demoRuns)
	if err != nil {
		return fmt.Errorf("time the demo query on the origin: %w", err)
	}
	accelMs, accelRows, err := timeQuery(ctx, proxyURL, demoQuery, demoRuns)
	if err != nil {
		return fmt.Errorf("time the demo query through pgaccel: %w", err)
	}
	same := "the same rows both ways"
	if !bytes.Equal(originRows, accelRows) {
		same = "DIFFERENT rows (please report this)"
	}
	fmt.Fprintf(out, `
A query to try (median of %d runs each, %s):
  %s;
  on the origin:     %7.1f ms
  through pgaccel:   %7.1f ms

The datasets refresh every %s. A write at the origin shows up through pgaccel
after the next refresh:
  psql %q -c "INSERT INTO orders VALUES (200001, 1, 'paid', 9.99, now())"
  psql %q -c "SELECT count(*) FROM orders"
(200000 until the refresh, then 200001.) The demo user %s owns the tables and
can write them; writes through pgaccel go to the origin, and reads through
pgaccel see them after the next refresh.

Logs show warnings only; run pgaccel demo -log-level info to see every refresh.
Press Ctrl-C to stop; the origin and its data are removed.
`, demoRuns, same, demoQuery, originMs, accelMs, demoRefreshInterval, originURL, proxyURL, pgtest.AppUser)
	return nil
}

// timeQuery runs sql runs times on one connection to dsn (after one run
// to warm up) and returns the median in milliseconds and the rows of the
// last run, as text.
func timeQuery(ctx context.Context, dsn, sql string, runs int) (float64, []byte, error) {
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(qctx, dsn)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close(context.Background())
	var times []time.Duration
	var text []byte
	for i := 0; i <= runs; i++ {
		start := time.Now()
		res := conn.ExecParams(qctx, sql, nil, nil, nil, nil).Read()
		elapsed := time.Since(start)
		if res.Err != nil {
			return 0, nil, res.Err
		}
		if i > 0 {
			times = append(times, elapsed)
		}
		var b bytes.Buffer
		for _, r := range res.Rows {
			b.Write(bytes.Join(r, []byte{'|'}))
			b.WriteByte('\n')
		}
		text = b.Bytes()
	}
	slices.Sort(times)
	return float64(times[len(times)/2].Microseconds()) / 1000, text, nil
}

package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/integration/pgtest"
)

//go:embed demo.sql
var demoSQL string

// cmdDemo starts a throwaway origin with sample data and pgaccel in front
// of it, prints how to connect, and runs until interrupted.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:15432", "address pgaccel listens on")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, *level, "console")
	if err != nil {
		return err
	}

	fmt.Fprintln(stdout, "Starting a throwaway origin Postgres ...")
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	origin, err := pgtest.Start(sctx)
	if err != nil {
		return fmt.Errorf("start the demo origin: %w", err)
	}
	defer func() {
		if err := origin.Stop(); err != nil {
			fmt.Fprintln(stderr, "pgaccel: stop the demo origin:", err)
		}
	}()
	fmt.Fprintln(stdout, "Loading sample data (customers, orders) ...")
	if err := origin.Exec(sctx, demoSQL); err != nil {
		return fmt.Errorf("load sample data: %w", err)
	}

	cfgPath := filepath.Join(origin.Dir, "pgaccel.yaml")
	cfgText := fmt.Sprintf(`# written by pgaccel demo
origin:
  dsn: %q
server:
  listen: %q
datasets:
  - from: postgres:public.orders
    name: orders
  - from: postgres:public.customers
    name: customers
`, origin.SuperDSN(), *listen)
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		return fmt.Errorf("write demo config: %w", err)
	}
	cfg, err := catalog.Load(cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	a, err := app.Start(cfg, log)
	if err != nil {
		return err
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(pgtest.AppUser, pgtest.AppPassword),
		Host:     a.Addr(),
		Path:     "/" + origin.Database,
		RawQuery: "sslmode=disable",
	}
	fmt.Fprintf(stdout, `
pgaccel is running in front of the demo origin.

  Connect through pgaccel:   psql %q
  Connect to the origin:     psql %q
  Config:                    %s

Try:  SELECT status, count(*), sum(amount) FROM orders GROUP BY status ORDER BY status;
Press Ctrl-C to stop; the origin and its data are removed.
`, u.String(), origin.DSN(pgtest.AppUser, pgtest.AppPassword), cfgPath)

	<-ctx.Done()
	fmt.Fprintln(stdout, "\nStopping ...")
	dctx, dcancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace+10*time.Second)
	defer dcancel()
	return a.Shutdown(dctx)
}

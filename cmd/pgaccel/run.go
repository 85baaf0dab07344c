package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/refresh"
	"github.com/rs/zerolog"
)

func cmdRun(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	format := fs.String("log-format", logConsole, logFormatHelp)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel run [-c pgaccel.yaml] [-log-level info] [-log-format console]\n\nServes clients until SIGINT or SIGTERM, then drains (server.shutdown_grace). SIGHUP reloads the config file's datasets (as POST /v1/reload): added, removed or changed without dropping sessions; a change elsewhere is refused and logged.")
		fs.PrintDefaults()
	}
	if extra, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(extra) != 0 {
		return fmt.Errorf("run takes no arguments, got %q; name the config with -c", strings.Join(extra, " "))
	}
	log, err := newLogger(stderr, *level, *format)
	if err != nil {
		return err
	}
	hup := handleHangups(log, *cfgPath)
	defer hup.stop()
	cfg, err := catalog.Load(*cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	a, err := app.Start(cfg, log)
	if err != nil {
		return err
	}
	hup.reload.Store(&a)
	log.Info().Str("version", buildVersion()).Str("listen", a.Addr()).Str("admin", a.AdminAddr()).Int("datasets", len(cfg.Datasets)).Msg("pgaccel started")
	<-ctx.Done()
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace+10*time.Second)
	defer cancel()
	return a.Shutdown(sctx)
}

// hangups handles SIGHUP during pgaccel run: its default is to end the
// process at once (no drain, no log line). Once the app has started
// (reload set), each one reloads the config file (App.Reload), and the
// outcome is logged; before, it is logged and ignored.
type hangups struct {
	reload atomic.Pointer[*app.App]
	stop   func()
}

func handleHangups(log zerolog.Logger, cfgPath string) *hangups {
	h := &hangups{}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-sig:
				p := h.reload.Load()
				if p == nil {
					log.Warn().Str("signal", "SIGHUP").Str("config", cfgPath).
						Msg("SIGHUP received while starting: ignored, the configuration is not reloaded (send it again once pgaccel has started)")
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res, err := (*p).Reload(ctx)
				cancel()
				switch {
				case err != nil && res.Message == "":
					log.Error().Str("signal", "SIGHUP").Str("config", cfgPath).Err(err).Msg("SIGHUP received: configuration not reloaded; pgaccel keeps serving with the one it has")
				case err != nil:
					log.Error().Str("signal", "SIGHUP").Str("config", cfgPath).Err(err).Msg("SIGHUP received: " + res.Message + " Part of it failed")
				default:
					log.Info().Str("signal", "SIGHUP").Str("config", cfgPath).Msg("SIGHUP received: " + res.Message)
				}
			}
		}
	}()
	h.stop = func() {
		signal.Stop(sig)
		close(done)
		<-finished
	}
	return h
}

// printConfigError prints every problem of an invalid config, one a line.
func printConfigError(w io.Writer, err error) {
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Fprintln(w, p.Format(ve.File))
		}
		fmt.Fprintf(w, "%s in %s\n", plural(len(ve.Problems), "problem"), ve.File)
		return
	}
	fmt.Fprintln(w, "pgaccel:", err)
}

// plural is "1 dataset", "2 datasets".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// checkAuthSetup checks, for auth.mode proxy, that the verifier lookup is
// installed at the origin and origin.dsn's user may run it.
func checkAuthSetup(ctx context.Context, cfg *catalog.Config, cfgPath string) []catalog.Problem {
	conn, err := pgconn.Connect(ctx, cfg.Origin.DSN)
	if err != nil {
		return []catalog.Problem{{Key: "auth.mode", Message: "cannot connect to the origin to check the verifier lookup"}}
	}
	defer conn.Close(context.Background())
	if err := auth.CheckSetup(ctx, conn); err != nil {
		return []catalog.Problem{{Key: "auth.mode", Message: "proxy needs the verifier lookup at the origin: " + err.Error(),
			Fix: "run the SQL `pgaccel setup-sql -c " + cfgPath + "` prints, once, as a superuser in origin.dsn's database"}}
	}
	return nil
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file")
	withOrigin := fs.Bool("origin", false, "also check each accelerated dataset at the origin (origin.dsn): the table and the columns the config names exist, "+
		"the refresh's query and retention_sql's condition run there (as SELECT ... LIMIT 0, in a read-only session: nothing is deleted), "+
		"and the refresh role may read the table; for refresh_mode: changes, that the role may open a replication connection and create (or use) the publication, and a slot is free")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel validate [-c pgaccel.yaml] [-origin]\n\nChecks a config and prints every problem (exit 1) and every warning (exit 0).")
		fs.PrintDefaults()
	}
	extra, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(extra) != 0 {
		return fmt.Errorf("validate takes no arguments, got %q; name the config with -c", strings.Join(extra, " "))
	}
	cfg, err := catalog.Load(*cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	for _, w := range append(cfg.Warnings(), refresh.Warnings(cfg)...) {
		fmt.Fprintln(stderr, "warning: "+w.Format(*cfgPath))
	}
	accelerated := 0
	for _, ds := range cfg.Datasets {
		if ds.Acceleration.Enabled {
			accelerated++
		}
	}
	if !*withOrigin {
		fmt.Fprintf(stdout, "%s: ok (%s)\n", *cfgPath, plural(len(cfg.Datasets), "dataset"))
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	problems, err := refresh.CheckOrigin(ctx, cfg)
	if err == nil && cfg.Auth.Mode == catalog.AuthProxy {
		problems = append(problems, checkAuthSetup(ctx, cfg, *cfgPath)...)
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, p.Format(*cfgPath))
	}
	if err != nil {
		fmt.Fprintln(stderr, "pgaccel:", err)
		return exitError(1)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "%s at the origin in %s\n", plural(len(problems), "problem"), *cfgPath)
		return exitError(1)
	}
	fmt.Fprintf(stdout, "%s: ok (%s; %s checked at the origin)\n", *cfgPath, plural(len(cfg.Datasets), "dataset"), plural(accelerated, "accelerated dataset"))
	return nil
}

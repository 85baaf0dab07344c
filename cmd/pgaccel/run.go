package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
)

func cmdRun(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	format := fs.String("log-format", logConsole, logFormatHelp)
	if extra, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(extra) != 0 {
		return fmt.Errorf("run takes no arguments, got %q; name the config with -c", strings.Join(extra, " "))
	}
	log, err := newLogger(stderr, *level, *format)
	if err != nil {
		return err
	}
	cfg, err := catalog.Load(*cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	a, err := app.Start(cfg, log)
	if err != nil {
		return err
	}
	log.Info().Str("version", buildVersion()).Str("listen", a.Addr()).Str("admin", a.AdminAddr()).Int("datasets", len(cfg.Datasets)).Msg("pgaccel started")
	<-ctx.Done()
	log.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownGrace+10*time.Second)
	defer cancel()
	return a.Shutdown(sctx)
}

// printConfigError prints every problem of an invalid config, one a line.
func printConfigError(w io.Writer, err error) {
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Fprintln(w, p.Format(ve.File))
		}
		fmt.Fprintf(w, "%d problem(s) in %s\n", len(ve.Problems), ve.File)
		return
	}
	fmt.Fprintln(w, "pgaccel:", err)
}

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := catalog.Load(*cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	fmt.Fprintf(stdout, "%s: ok (%d datasets)\n", *cfgPath, len(cfg.Datasets))
	return nil
}

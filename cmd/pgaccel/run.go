package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/proxy"
	"github.com/rs/zerolog"
)

func cmdRun(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file")
	level := fs.String("log-level", "info", "log level: debug, info, warn, error")
	format := fs.String("log-format", "console", "log format: console or json")
	if err := fs.Parse(args); err != nil {
		return err
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
	a, err := startApp(cfg, log)
	if err != nil {
		return err
	}
	log.Info().Str("version", buildVersion()).Str("listen", a.Addr()).Msg("pgaccel started")
	<-ctx.Done()
	log.Info().Msg("shutting down")
	return a.Shutdown(cfg.Server.ShutdownGrace + 5*time.Second)
}

// app is a running pgaccel: the proxy listener and what it serves.
type app struct {
	srv     *proxy.Server
	ln      net.Listener
	log     zerolog.Logger
	served  chan error
	started time.Time
}

// startApp wires the components of cfg together and starts listening.
func startApp(cfg *catalog.Config, log zerolog.Logger) (*app, error) {
	pcfg, err := proxyConfig(cfg, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on server.listen %s: %w", cfg.Server.Listen, err)
	}
	a := &app{srv: proxy.NewServer(pcfg), ln: ln, log: log, served: make(chan error, 1), started: time.Now()}
	go func() { a.served <- a.srv.Serve(ln) }()
	return a, nil
}

// Addr is the address the proxy listens on.
func (a *app) Addr() string { return a.ln.Addr().String() }

// Shutdown drains the proxy: no new clients, statements finish within the
// grace period, then the rest are cancelled.
func (a *app) Shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := a.srv.Shutdown(ctx)
	if serr := <-a.served; serr != nil && err == nil {
		err = serr
	}
	return err
}

// proxyConfig translates the config file's server and origin sections.
func proxyConfig(cfg *catalog.Config, log zerolog.Logger) (proxy.Config, error) {
	origin, err := pgconn.ParseConfig(cfg.Origin.DSN)
	if err != nil {
		// pgconn's error can include the DSN; say which key is wrong instead.
		return proxy.Config{}, errors.New("origin.dsn: not a valid Postgres connection string (URL or key=value form)")
	}
	pc := proxy.Config{
		Origin:          origin,
		MaxMessageBytes: cfg.Server.MaxMessageBytes,
		ShutdownGrace:   cfg.Server.ShutdownGrace,
		Logger:          log,
	}
	if t := cfg.Server.TLS; t != nil {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return proxy.Config{}, fmt.Errorf("server.tls: load cert_file %s and key_file %s: %w", t.CertFile, t.KeyFile, err)
		}
		pc.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return pc, nil
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
	if _, err := proxyConfig(cfg, zerolog.Nop()); err != nil {
		fmt.Fprintln(stderr, *cfgPath+":", err)
		return exitError(1)
	}
	fmt.Fprintf(stdout, "%s: ok (%d datasets)\n", *cfgPath, len(cfg.Datasets))
	return nil
}

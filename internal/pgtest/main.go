package pgtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds Start in RunMain: initdb, server start and bootstrap.
const startTimeout = 3 * time.Minute

// RunMain is a TestMain helper: it starts one server for the test binary,
// stores it in *srv, runs the tests and exits with their code.
//
//	var srv *pgtest.Server
//
//	func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }
//
// If the server cannot start, RunMain prints why (and how to install
// PostgreSQL) and exits 1; tests never run and never skip. The server is
// stopped when the tests return, when TestMain's goroutine panics, and on
// SIGINT or SIGTERM. A test that panics, a -timeout, or SIGKILL end the
// process without running any of that; the watchdog (see the package doc)
// stops the server then.
func RunMain(m *testing.M, srv **Server) {
	os.Exit(runMain(m, srv))
}

func runMain(m *testing.M, srv **Server) (code int) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	var (
		mu          sync.Mutex
		running     *Server
		interrupted os.Signal // a signal that arrived before the server was up
	)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			cancel() // abandons a Start in progress
			mu.Lock()
			s := running
			if s == nil {
				interrupted = sig
			}
			mu.Unlock()
			if s == nil {
				continue
			}
			fmt.Fprintf(os.Stderr, "pgtest: %v: stopping PostgreSQL\n", sig)
			if err := s.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			}
			os.Exit(128 + int(sig.(syscall.Signal)))
		}
	}()

	began := time.Now()
	s, err := Start(ctx)
	mu.Lock()
	sig := interrupted
	mu.Unlock()
	if sig != nil {
		fmt.Fprintf(os.Stderr, "FAIL: pgtest: %v while starting PostgreSQL\n", sig)
		if err == nil { // Start finished just before the signal
			if err := s.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			}
		}
		return 128 + int(sig.(syscall.Signal))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: pgtest: cannot start PostgreSQL for the integration tests:\n%v\n", err)
		if !errors.Is(err, errNotInstalled) {
			fmt.Fprintf(os.Stderr, "If PostgreSQL is not installed: %s (Debian/Ubuntu)\n", InstallHint)
		}
		return 1
	}
	if !flag.Parsed() {
		flag.Parse() // for testing.Verbose; m.Run does not parse again
	}
	if testing.Verbose() {
		where := "external server from " + OriginDSNEnv
		if !s.External {
			where = "dir " + s.Dir
		}
		fmt.Fprintf(os.Stderr, "pgtest: PostgreSQL on %s (%s) ready in %v\n",
			s.Addr(), where, time.Since(began).Round(time.Millisecond))
	}
	mu.Lock()
	running = s
	mu.Unlock()
	*srv = s

	defer func() {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return m.Run()
}

// WaitFor polls cond every 10 ms until it holds, and fails the test after a
// minute, naming what it waited for.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

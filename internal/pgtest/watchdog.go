package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// watchdogScript blocks until its stdin reaches EOF, then stops the server
// and removes the temp dir. Its stdin is the read end of a pipe whose only
// write end lives in this process, so EOF arrives exactly when this process
// closes it (Stop) or dies in any way: a panicking test, a -timeout, os.Exit,
// SIGKILL. The kernel closes the descriptors of a dead process; no handler
// has to run.
//
// $1 is pg_ctl, $2 the data dir, $3 the temp dir.
const watchdogScript = `cat >/dev/null
"$1" stop -D "$2" -m immediate -w -t 30 >/dev/null 2>&1
rm -rf "$3"`

// startWatchdog starts the watchdog shell for this server. It runs in its own
// process group so that a Ctrl-C at the terminal, which kills the test binary,
// does not kill the watchdog too.
func (s *Server) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start watchdog: %w", err)
	}
	pgctl := filepath.Join(s.binDir, "pg_ctl")
	cmd := s.command(context.Background(), "/bin/sh", "-c", watchdogScript, "pgtest-watchdog", pgctl, s.dataDir, s.Dir)
	cmd.Dir = "/"
	cmd.Stdin = r // Stdout and Stderr stay nil (/dev/null): holding the test's output open would stall `go test`.
	cmd.SysProcAttr.Setpgid = true
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return fmt.Errorf("start watchdog: %w", err)
	}
	s.watchdog, s.watchdogPipe = cmd, w
	return nil
}

// stopWatchdog lets the watchdog run its cleanup (a no-op once Stop has
// stopped the server and removed the dir) and waits for it to exit.
func (s *Server) stopWatchdog() error {
	if s.watchdog == nil {
		return nil
	}
	s.watchdogPipe.Close()
	err := s.watchdog.Wait()
	s.watchdog, s.watchdogPipe = nil, nil
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	return nil
}

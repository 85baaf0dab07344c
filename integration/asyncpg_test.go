package integration

import (
	"bufio"
	"context"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/integration/pgtest"
)

// asyncpgInstall is how to get what TestSessions_AsyncpgPoolThroughOutage
// runs.
const asyncpgInstall = "apt-get update && apt-get install -y python3 python3-asyncpg"

// TestSessions_AsyncpgPoolThroughOutage runs the real asyncpg driver
// (testdata/asyncpg/pool_check.py) against pgaccel with auth.mode proxy:
// a pool of four connections whose tasks read (asyncpg prepares each
// statement with arguments, named) and give their connection back, which
// the pool resets (SELECT pg_advisory_unlock_all(); CLOSE ALL;
// UNLISTEN *; RESET ALL;). A pool that only reads holds no origin backend;
// through an outage it keeps reading, a write gets 08006, and a new pool
// logs in and reads.
func TestSessions_AsyncpgPoolThroughOutage(t *testing.T) {
	if out, err := exec.Command(debianPython, "-c", "import asyncpg").CombinedOutput(); err != nil {
		t.Fatalf("asyncpg missing (%v: %s): install it with `%s`", err, strings.TrimSpace(string(out)), asyncpgInstall)
	}
	a, _ := startShortLinkApp(t)
	host, port, _ := net.SplitHostPort(a.Addr())

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, debianPython, "testdata/asyncpg/pool_check.py", host, port, origin.Database, sessUser, sessPass)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("python: %v\n%s", err, stderr.String())
		}
	}()
	out := bufio.NewReader(stdout)
	got := map[string]string{}
	phase := func(name string) {
		t.Helper()
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("phase %s: %v\n%s", name, err, stderr.String())
			}
			line = strings.TrimSpace(line)
			if line == "PHASE "+name+" done" {
				return
			}
			if step, ok := strings.CutPrefix(line, "OK "); ok {
				got[step] = "OK"
			} else if rest, ok := strings.CutPrefix(line, "FAIL "); ok {
				step, msg, _ := strings.Cut(rest, ": ")
				got[step] = msg
			}
		}
	}
	next := func() {
		if _, err := io.WriteString(stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(step, want string) {
		t.Helper()
		if g := got[step]; !strings.HasPrefix(g, want) {
			t.Errorf("%s: %q, want %q", step, g, want)
		}
	}

	phase("open")
	expect("open/reads", "OK")
	// The first reads had the origin describe the texts; those
	// connections go back to the pool once idle (origin_idle_timeout).
	pgtest.WaitFor(t, "the described texts' connections released", func() bool { return heldBackends(t, a) == 0 })
	next()
	phase("logins")
	expect("logins/reads", "OK")
	if n := heldBackends(t, a); n != 0 {
		t.Errorf("an asyncpg pool that only reads holds %d origin backends", n)
	}

	resume := origin.PauseDuring(t)
	next()
	phase("outage")
	expect("outage/reads", "OK")
	expect("outage/write", "08006")
	expect("outage/reads after write", "OK")
	expect("outage/new pool reads", "OK")
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	next()
}

package integration

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/internal/pgtest"
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
	prog := startDriverProgram(t, 4*time.Minute, debianPython, "testdata/asyncpg/pool_check.py", host, port, origin.Database, sessUser, sessPass)

	prog.phase("open")
	prog.expect("open/reads", "OK")
	// The first reads had the origin describe the texts; those
	// connections go back to the pool once idle (origin_idle_timeout).
	pgtest.WaitFor(t, "the described texts' connections released", func() bool { return heldBackends(t, a) == 0 })
	prog.next()
	prog.phase("logins")
	prog.expect("logins/reads", "OK")
	if n := heldBackends(t, a); n != 0 {
		t.Errorf("an asyncpg pool that only reads holds %d origin backends", n)
	}

	resume := origin.PauseDuring(t)
	prog.next()
	prog.phase("outage")
	prog.expect("outage/reads", "OK")
	prog.expect("outage/write", "08006")
	prog.expect("outage/reads after write", "OK")
	prog.expect("outage/new pool reads", "OK")
	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	prog.next()
}

package integration

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// psycopgInstall is how to get what TestSessions_PsycopgThroughOutage runs.
const psycopgInstall = "apt-get update && apt-get install -y python3 python3-psycopg python3-psycopg2"

// debianPython is Debian's interpreter, which has Debian's psycopg
// packages (a python3 earlier on PATH, such as pyenv's, may not).
const debianPython = "/usr/bin/python3"

// TestSessions_PsycopgThroughOutage runs the real psycopg 3 and psycopg2
// drivers (testdata/psycopg/outage_check.py) against pgaccel with
// auth.mode proxy. psycopg 3 sends parameters server-side in the extended
// protocol and prepares a text itself from its fifth run; psycopg2 sends
// simple queries with the parameters in the text; both open a transaction
// with BEGIN before its first statement unless in autocommit, and both
// read large results through a server-side cursor (DECLARE, FETCH,
// CLOSE). Sessions that only read accelerated data hold no origin backend;
// through an outage, open sessions and new logins keep reading (also in
// transactions and through cursors), a write gets 08006 and the session
// goes on, a wrong password gets 28P01; once the origin is back the same
// sessions write.
func TestSessions_PsycopgThroughOutage(t *testing.T) {
	if _, err := os.Stat(debianPython); err != nil {
		t.Fatal(debianPython + " not found: install it with `" + psycopgInstall + "`")
	}
	if out, err := exec.Command(debianPython, "-c", "import psycopg, psycopg2").CombinedOutput(); err != nil {
		t.Fatalf("psycopg or psycopg2 missing (%v: %s): install them with `%s`", err, strings.TrimSpace(string(out)), psycopgInstall)
	}
	a, _ := startShortLinkApp(t)
	host, port, _ := net.SplitHostPort(a.Addr())

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	prog := startDriverProgram(t, 4*time.Minute, debianPython, "testdata/psycopg/outage_check.py", host, port, origin.Database, sessUser, sessPass)

	for _, d := range []string{"pg3", "pg2"} {
		p := d + "/"
		prog.phase(p + "open")
		for _, s := range []string{"open/connect", "open/reads", "open/tx reads", "open/cursor", "open/pipeline", "open/tx pipeline"} {
			prog.expect(p+s, "OK")
		}
		// The first sessions had the origin describe the texts; their
		// connections go back to the pool once idle (origin_idle_timeout).
		pgtest.WaitFor(t, d+": the described texts' connections released", func() bool { return heldBackends(t, a) == 0 })
		prog.next()
		prog.phase(p + "logins")
		prog.expect(p+"logins/reads", "OK")
		if n := heldBackends(t, a); n != 0 {
			t.Errorf("%s sessions that only read hold %d origin backends", d, n)
		}

		resume := origin.PauseDuring(t)
		prog.next()
		prog.phase(p + "outage")
		for _, s := range []string{"outage/reads", "outage/tx reads", "outage/pipeline", "outage/tx pipeline", "outage/login reads",
			"outage/login tx reads", "outage/reads after write", "outage/tx rollback", "outage/tx reads after write"} {
			prog.expect(p+s, "OK")
		}
		prog.expect(p+"outage/wrong password", "28P01")
		prog.expect(p+"outage/write", "08006")
		prog.expect(p+"outage/cursor", "08006") // cursors run at the origin
		prog.expect(p+"outage/tx write", "08006")
		if err := resume(ctx); err != nil {
			t.Fatal(err)
		}
		waitOriginBack(t)
		prog.next()
		prog.phase(p + "back")
		for _, s := range []string{"back/write", "back/tx write", "back/reads", "back/cursor"} {
			prog.expect(p+s, "OK")
		}
	}
	// A failed step's rollback (psycopg 3 sends DEALLOCATE ALL after
	// it): never refused.
	for step, msg := range prog.got {
		if strings.HasSuffix(step, " (rollback)") {
			t.Errorf("%s: %s", step, msg)
		}
	}
	notes := mustQuery(t, connect(t, origin.SuperDSN()), "SELECT note FROM sess_writes ORDER BY id")
	if strings.Join(notes, ",") != "after pg3,after tx pg3,after pg2,after tx pg2" {
		t.Errorf("rows written: %q, want the four written after the outages", notes)
	}
}

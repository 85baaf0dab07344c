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

// jdbcInstall is how to get what TestSessions_PgjdbcThroughOutage runs.
const jdbcInstall = "apt-get update && apt-get install -y default-jdk-headless libpostgresql-jdbc-java"

// pgjdbcJar is Debian's pgjdbc (package libpostgresql-jdbc-java).
const pgjdbcJar = "/usr/share/java/postgresql.jar"

// TestSessions_PgjdbcThroughOutage runs the real pgjdbc driver
// (testdata/jdbc/OutageCheck.java) against pgaccel with auth.mode proxy.
// pgjdbc sends everything in the extended protocol: at each login
// SET extra_float_digits = 3 and SET application_name, BEGIN before the
// first statement of a transaction (autocommit off), COMMIT, an empty
// statement for isValid, and its prepared BEGIN and COMMIT are named
// statements it keeps across transactions. Sessions that only read
// accelerated data hold no origin backend; through an outage, open
// sessions and new logins keep reading (also in transactions), a write
// gets 08006, a wrong password 28P01; once the origin is back the same
// sessions write, with the settings pgaccel answered itself in force.
func TestSessions_PgjdbcThroughOutage(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java not found: install it with `" + jdbcInstall + "`")
	}
	if _, err := exec.LookPath("javac"); err != nil {
		// java runs OutageCheck.java from its source, with the JDK's
		// compiler.
		t.Fatal("javac not found (a JDK is needed): install it with `" + jdbcInstall + "`")
	}
	if _, err := os.Stat(pgjdbcJar); err != nil {
		t.Fatal(pgjdbcJar + " not found: install it with `" + jdbcInstall + "`")
	}
	a, _ := startShortLinkApp(t)
	host, port, _ := net.SplitHostPort(a.Addr())

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	prog := startDriverProgram(t, 4*time.Minute, java, "-cp", pgjdbcJar, "testdata/jdbc/OutageCheck.java", host, port, origin.Database, sessUser, sessPass)

	prog.phase("open")
	for _, s := range []string{"open/reads", "open/tx reads", "open/isValid"} {
		prog.expect(s, "OK")
	}
	// The first sessions had the origin describe the texts; their
	// connections go back to the pool once idle (origin_idle_timeout).
	pgtest.WaitFor(t, "the described texts' connections released", func() bool { return heldBackends(t, a) == 0 })
	prog.next()
	prog.phase("logins")
	prog.expect("logins/reads", "OK")
	// Logins (with their SETs), transactions and pings of sessions that
	// only read: no backend held.
	if n := heldBackends(t, a); n != 0 {
		t.Errorf("pgjdbc sessions that only read hold %d origin backends", n)
	}

	resume := origin.PauseDuring(t)
	prog.next()
	prog.phase("outage")
	for _, s := range []string{"outage/reads", "outage/tx reads", "outage/login reads", "outage/login tx reads",
		"outage/isValid", "outage/reads after write", "outage/tx rollback"} {
		prog.expect(s, "OK")
	}
	prog.expect("outage/wrong password", "28P01")
	prog.expect("outage/write", "08006")
	prog.expect("outage/tx write", "08006")

	if err := resume(ctx); err != nil {
		t.Fatal(err)
	}
	waitOriginBack(t)
	prog.next()
	prog.phase("back")
	for _, s := range []string{"back/write", "back/tx write", "back/settings", "back/reads"} {
		prog.expect(s, "OK")
	}
	notes := mustQuery(t, connect(t, origin.SuperDSN()), "SELECT note FROM sess_writes ORDER BY id")
	if strings.Join(notes, ",") != "after,after tx" {
		t.Errorf("rows written: %q, want after, after tx", notes)
	}
}

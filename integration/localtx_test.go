package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// TestSessions_TransactionsWithoutTheOrigin: with auth.mode proxy, reads
// wrapped in transactions (pgx's Begin/Commit, psql's BEGIN; ...; COMMIT,
// what psycopg2 and pools do) hold no origin backend; a transaction whose
// statement needs the origin starts there first (its isolation level
// too), sees its own writes and commits or rolls back there; during an
// outage such transactions keep reading, and one whose statement needed
// the origin fails as Postgres fails it (25P02 until ROLLBACK). A pool's
// checks (pgx's Ping, an empty query; SELECT 1) need no origin either.
func TestSessions_TransactionsWithoutTheOrigin(t *testing.T) {
	setupProxyAuth(t)
	a, _ := startProxyAuthApp(t, t.TempDir(), "60s", true)
	ctx := ctxT(t)
	dsn := appDSN(a, sessUser, sessPass)
	firstSession(t, a, dsn)

	// Reads in transactions: no backend.
	const n = 50
	conns := openSessions(t, n, dsn, func(i int, c *pgx.Conn) error {
		// A pool's checks: pgx's Ping (an empty query) and SELECT 1.
		if err := c.Ping(ctx); err != nil {
			return fmt.Errorf("ping: %w", err)
		}
		var one int
		if err := c.QueryRow(ctx, "SELECT 1", pgx.QueryExecModeSimpleProtocol).Scan(&one); err != nil || one != 1 {
			return fmt.Errorf("SELECT 1: %d %v", one, err)
		}
		for range 2 {
			tx, err := c.Begin(ctx)
			if err != nil {
				return err
			}
			if got, err := readAll(ctx, tx); err != nil || got != wantReads {
				return fmt.Errorf("session %d: %q %v", i, got, err)
			}
			if i%2 == 0 {
				err = tx.Commit(ctx)
			} else {
				err = tx.Rollback(ctx)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if got := heldBackends(t, a); got != 0 {
		t.Errorf("%d sessions reading in transactions hold %d origin backends, want 0", n, got)
	}
	status := func(c *pgx.Conn) byte { return c.PgConn().TxStatus() }

	// A transaction that writes: it starts at the origin before the write,
	// with its isolation level, and sees its writes; ROLLBACK undoes them.
	c := conns[0]
	for _, end := range []string{"ROLLBACK", "COMMIT"} {
		mustRun(t, c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
		if status(c) != 'T' {
			t.Fatalf("after BEGIN: status %q", status(c))
		}
		if got, err := readAll(ctx, c); err != nil || got != wantReads {
			t.Fatalf("read in the transaction: %q %v", got, err)
		}
		mustRun(t, c, "INSERT INTO sess_writes (note) VALUES ('tx-"+end+"')")
		var iso string
		var mine int
		if err := c.QueryRow(ctx, "SELECT current_setting('transaction_isolation'), (SELECT count(*) FROM sess_writes WHERE note = $1)", "tx-"+end).Scan(&iso, &mine); err != nil || iso != "repeatable read" || mine != 1 {
			t.Errorf("in the transaction: isolation %q, own rows %d, %v", iso, mine, err)
		}
		mustRun(t, c, end)
		if status(c) != 'I' {
			t.Errorf("after %s: status %q", end, status(c))
		}
		var kept int
		if err := originConn(t).QueryRow(ctx, "SELECT count(*) FROM sess_writes WHERE note = $1", "tx-"+end).Scan(&kept); err != nil || kept != map[string]int{"ROLLBACK": 0, "COMMIT": 1}[end] {
			t.Errorf("after %s: %d rows at the origin, %v", end, kept, err)
		}
	}

	// The origin stops: transactions of reads go on; one whose statement
	// needs the origin fails, as Postgres fails a transaction at an error.
	ps := startPsql(t, dsn)
	if got := ps.run("SELECT count(*) FROM sess_orders"); got != "200" {
		t.Fatalf("psql: %q", got)
	}
	resume := origin.PauseDuring(t)
	d := conns[1]
	if err := d.Ping(ctx); err != nil {
		t.Errorf("ping during the outage: %v", err)
	}
	if got := ps.run("SELECT 1"); got != "1" {
		t.Errorf("psql's SELECT 1 during the outage: %q", got)
	}
	tx, err := d.Begin(ctx)
	if err != nil {
		t.Fatalf("BEGIN during the outage: %v", err)
	}
	if got, err := readAll(ctx, tx); err != nil || got != wantReads {
		t.Errorf("a read in a transaction during the outage: %q %v", got, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Errorf("COMMIT during the outage: %v", err)
	}
	for _, line := range []struct{ sql, want string }{
		{"BEGIN", ""},
		{"SELECT count(*) FROM sess_orders", "200"},
		{"INSERT INTO sess_writes (note) VALUES ('outage')", "origin is unavailable"},
		{"SELECT count(*) FROM sess_orders", "current transaction is aborted"},
		{"COMMIT", ""},
		{"SELECT count(*) FROM sess_orders", "200"},
	} {
		if got := ps.run(line.sql); line.want == "" && got != "" || !strings.Contains(got, line.want) {
			t.Errorf("psql during the outage, %s: %q, want %q", line.sql, got, line.want)
		}
	}
	mustRun(t, d, "BEGIN")
	if _, err := d.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('outage')"); pgErrCode(err) != "08006" || status(d) != 'E' {
		t.Errorf("a write in a transaction during the outage: %v, status %q", err, status(d))
	}
	if _, err := readAll(ctx, d); pgErrCode(err) != "25P02" {
		t.Errorf("a read in the failed transaction: %v, want 25P02", err)
	}
	res := d.PgConn().Exec(ctx, "COMMIT")
	if r, err := res.ReadAll(); err != nil || len(r) != 1 || r[0].CommandTag.String() != "ROLLBACK" {
		t.Errorf("COMMIT of the failed transaction: %v %v, want ROLLBACK", tags(r), err)
	}
	if got, err := readAll(ctx, d); err != nil || got != wantReads || status(d) != 'I' {
		t.Errorf("after it: %q %v %q", got, err, status(d))
	}

	// The origin returns: the same session writes in a transaction.
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitOriginBack(t)
	pgtest.WaitFor(t, "a transaction that writes", func() bool {
		tx, err := d.Begin(ctx)
		if err != nil {
			return false
		}
		if _, err := tx.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('back')"); err != nil {
			_ = tx.Rollback(ctx)
			return false
		}
		return tx.Commit(ctx) == nil
	})
}

func mustRun(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func tags(rs []*pgconn.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.CommandTag.String())
	}
	return out
}

// slowSessQuery runs for seconds on DuckDB: a count over a four-way cross
// join of sess_orders (200 rows), 1.6 billion combinations.
const slowSessQuery = "SELECT count(*) FROM sess_orders a, sess_orders b, sess_orders c, sess_orders d WHERE a.id + b.id + c.id + d.id = 401"

// TestSessions_SetsWithoutTheOrigin: with auth.mode proxy, the SETs
// frameworks send at every connection (Rails: client_min_messages,
// standard_conforming_strings, IntervalStyle, TimeZone, and the
// statement_timeout and lock_timeout database.yml names; pgjdbc:
// extra_float_digits, application_name), in the simple protocol and the
// extended one, and the DISCARD ALL of a session that set nothing
// (Npgsql's pool), need no origin backend and no origin during an outage:
// pgaccel answers them, reports what changed in a ParameterStatus, and a
// later statement that needs the origin runs with them in force. Other
// settings, and values pgaccel cannot check, go to the origin, which
// decides (its errors, as Postgres gives them).
func TestSessions_SetsWithoutTheOrigin(t *testing.T) {
	a, dsn := startShortLinkApp(t)
	ctx := ctxT(t)
	// The simple protocol's texts (pgx writes the parameters in) are
	// described once too.
	warm := connectSimple(t, dsn)
	if got, err := readAll(ctx, warm); err != nil || got != wantReads {
		t.Fatalf("simple-protocol reads: %q %v", got, err)
	}
	timeZone := warm.PgConn().ParameterStatus("TimeZone")
	warm.Close(ctx)
	pgtest.WaitFor(t, "the describing session's backend gone to the pool", func() bool { return heldBackends(t, a) == 0 })
	setUp := []string{
		"SET client_min_messages TO 'warning'",
		"SET standard_conforming_strings = on",
		"SET intervalstyle = iso_8601",
		"SET SESSION timezone TO '" + timeZone + "'",
		"SET application_name = 'rails-app'",
		"SET extra_float_digits = 3",
		"SET SESSION statement_timeout TO 5000",
		"SET lock_timeout = '3s'",
	}
	// connectSetUp opens a session of either protocol and sets it up.
	connectSetUp := func(simple bool) (*pgx.Conn, error) {
		var c *pgx.Conn
		if simple {
			c = connectSimple(t, dsn)
		} else {
			c = connect(t, dsn)
		}
		for _, sql := range setUp {
			if _, err := c.Exec(ctx, sql); err != nil {
				return c, fmt.Errorf("%s: %w", sql, err)
			}
		}
		if got, err := readAll(ctx, c); err != nil || got != wantReads {
			return c, fmt.Errorf("reads after the SETs: %q %v", got, err)
		}
		for name, want := range map[string]string{"IntervalStyle": "iso_8601", "application_name": "rails-app", "TimeZone": timeZone} {
			if got := c.PgConn().ParameterStatus(name); got != want {
				return c, fmt.Errorf("ParameterStatus %s: %q, want %q", name, got, want)
			}
		}
		return c, nil
	}
	var sessions []*pgx.Conn
	for _, simple := range []bool{true, false} {
		c, err := connectSetUp(simple)
		if err != nil {
			t.Fatalf("simple=%t: %v", simple, err)
		}
		sessions = append(sessions, c)
	}
	if got := heldBackends(t, a); got != 0 {
		t.Errorf("sessions that set up and read hold %d origin backends, want 0", got)
	}
	// A statement that needs the origin runs with the settings in force.
	for i, c := range sessions {
		var ims, cmm, efd, app, st, lt string
		if err := c.QueryRow(ctx, "SELECT current_setting('intervalstyle'), current_setting('client_min_messages'), current_setting('extra_float_digits'), current_setting('application_name'), current_setting('statement_timeout'), current_setting('lock_timeout') FROM pg_catalog.pg_class LIMIT 1").Scan(&ims, &cmm, &efd, &app, &st, &lt); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join([]string{ims, cmm, efd, app, st, lt}, " "); got != "iso_8601 warning 3 rails-app 5s 3s" {
			t.Errorf("session %d at the origin: %q", i, got)
		}
	}
	// The slow read, interrupted by a statement_timeout, with the origin
	// up (pgaccel learns its description there once).
	for i, c := range sessions {
		mustExecConn(t, c, "SET statement_timeout = '50ms'")
		var n int64
		if err := c.QueryRow(ctx, slowSessQuery).Scan(&n); pgErrCode(err) != "57014" {
			t.Errorf("session %d: a slow read after SET statement_timeout = '50ms': %d %v, want 57014", i, n, err)
		}
		mustExecConn(t, c, "SET statement_timeout = 0")
	}
	// The origin decides what pgaccel cannot check.
	if _, err := sessions[0].Exec(ctx, "SET extra_float_digits = 4"); pgErrCode(err) != "22023" {
		t.Errorf("SET extra_float_digits = 4: %v, want the origin's 22023", err)
	}
	if _, err := sessions[1].Exec(ctx, "SET work_mem = '8MB'"); err != nil {
		t.Errorf("SET work_mem: %v", err)
	}

	// DISCARD ALL (Npgsql sends it when it reuses a pooled connection) of
	// a session that set nothing: answered by pgaccel, in either protocol,
	// dropping the session's named statements.
	pgtest.WaitFor(t, "the set-up sessions' backends gone to the pool", func() bool { return heldBackends(t, a) == 0 })
	disc := connect(t, dsn)
	if got, err := readAll(ctx, disc); err != nil || got != wantReads {
		t.Fatalf("reads before DISCARD ALL: %q %v", got, err)
	}
	if _, err := disc.PgConn().Prepare(ctx, "mine", "SELECT v FROM sess_orders WHERE id = $1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := disc.PgConn().ExecParams(ctx, "DISCARD ALL", nil, nil, nil, nil).Close(); err != nil {
		t.Errorf("extended-protocol DISCARD ALL: %v", err)
	}
	if _, err := disc.Exec(ctx, "DISCARD ALL", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Errorf("simple-protocol DISCARD ALL: %v", err)
	}
	if got := heldBackends(t, a); got != 0 {
		t.Errorf("a session that read and discarded holds %d origin backends, want 0", got)
	}
	if _, err := disc.PgConn().ExecPrepared(ctx, "mine", [][]byte{[]byte("1")}, nil, nil).Close(); pgErrCode(err) != "26000" {
		t.Errorf("a statement prepared before DISCARD ALL: %v, want 26000", err)
	}

	// During an outage: new sessions set up and read; a setting only the
	// origin can take gets 08006.
	resume := origin.PauseDuring(t)
	for _, simple := range []bool{true, false} {
		c, err := connectSetUp(simple)
		if err != nil {
			t.Errorf("during the outage, simple=%t: %v", simple, err)
			continue
		}
		if _, err := c.Exec(ctx, "SET DateStyle = 'German'"); pgErrCode(err) != "08006" {
			t.Errorf("SET DateStyle during the outage, simple=%t: %v, want 08006", simple, err)
		}
		if got, err := readAll(ctx, c); err != nil || got != wantReads {
			t.Errorf("reads after the failed SET, simple=%t: %q %v", simple, got, err)
		}
		// A statement_timeout set without the origin holds for what
		// pgaccel answers: a read that runs for seconds on DuckDB is
		// interrupted with Postgres's 57014, and the session goes on.
		if _, err := c.Exec(ctx, "SET statement_timeout = '50ms'"); err != nil {
			t.Errorf("SET statement_timeout during the outage, simple=%t: %v", simple, err)
		}
		var n int64
		err = c.QueryRow(ctx, slowSessQuery).Scan(&n)
		if pgErrCode(err) != "57014" {
			t.Errorf("a slow read after SET statement_timeout = '50ms' during the outage, simple=%t: %d %v, want 57014", simple, n, err)
		}
		if _, err := c.Exec(ctx, "SET statement_timeout = 0"); err != nil {
			t.Errorf("SET statement_timeout = 0 during the outage, simple=%t: %v", simple, err)
		}
		if got, err := readAll(ctx, c); err != nil || got != wantReads {
			t.Errorf("reads after the timeout, simple=%t: %q %v", simple, got, err)
		}
	}
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
}

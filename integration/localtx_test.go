package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/integration/pgtest"
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

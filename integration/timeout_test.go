package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/app"
)

// slowQuery runs for about a second on DuckDB (a cross join of acc_orders
// with itself, 250 million combinations) and far longer than 50 ms.
const slowQuery = "SELECT count(*) FROM acc_orders a, acc_orders b, acc_orders c WHERE c.id <= 10 AND a.qty + b.qty + c.qty = 20"

// slowAnswer is slowQuery's answer.
const slowAnswer = 11413578

// wantTimeout fails unless err is Postgres's statement timeout error, as
// the origin sends it.
func wantTimeout(t *testing.T, what string, err error) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: want ERROR 57014, got %v", what, err)
	}
	if pe.Severity != "ERROR" || pe.SeverityUnlocalized != "ERROR" || pe.Code != "57014" || pe.Message != "canceling statement due to statement timeout" {
		t.Fatalf("%s: want ERROR 57014 canceling statement due to statement timeout, got %s %s %s", what, pe.Severity, pe.Code, pe.Message)
	}
}

// countSlow runs slowQuery and checks its answer.
func countSlow(t *testing.T, c *pgx.Conn, mode pgx.QueryExecMode) {
	t.Helper()
	var n int64
	if err := c.QueryRow(ctxT(t), slowQuery, mode).Scan(&n); err != nil || n != slowAnswer {
		t.Fatalf("%s (%v): %d %v, want %d", slowQuery, mode, n, err, slowAnswer)
	}
}

// accelerated runs fn and fails unless it made exactly want accelerated
// executions.
func accelerated(t *testing.T, a *app.App, want float64, fn func()) {
	t.Helper()
	before := routeCounts(t, a)
	fn()
	if got := routeCounts(t, a)["accelerated"] - before["accelerated"]; got != want {
		t.Fatalf("%v accelerated executions, want %v", got, want)
	}
}

var protocols = map[string]pgx.QueryExecMode{
	"simple":   pgx.QueryExecModeSimpleProtocol,
	"extended": pgx.QueryExecModeCacheStatement,
}

// TestStatementTimeout_InterruptsDuckDB: after SET statement_timeout, an
// accelerated statement that runs longer is interrupted and the client gets
// the origin's error; the session goes on, RESET and 0 turn it off, and SET
// LOCAL lasts until the transaction ends.
func TestStatementTimeout_InterruptsDuckDB(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	direct := connect(t, origin.DSN(appUser, appPass))
	for name, mode := range protocols {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, appDSN(a, appUser, appPass))
			// DuckDB is to run each statement: a cached answer is sent at
			// once, whatever statement_timeout says.
			mustExecConn(t, c, "SET pgaccel.cache = off")
			mustExecConn(t, c, "SET statement_timeout = '50ms'")
			// The origin's answer to the same statement, for comparison.
			mustExecConn(t, direct, "SET statement_timeout = '50ms'")
			_, err := direct.Exec(ctx, slowQuery, mode)
			wantTimeout(t, "directly", err)

			accelerated(t, a, 0, func() {
				start := time.Now()
				_, err := c.Exec(ctx, slowQuery, mode)
				wantTimeout(t, "through pgaccel", err)
				t.Logf("timed out after %v", time.Since(start))
			})
			if c.PgConn().TxStatus() != 'I' {
				t.Fatalf("transaction status %c after the timeout, want I", c.PgConn().TxStatus())
			}
			accelerated(t, a, 1, func() {
				var n int
				if err := c.QueryRow(ctx, "SELECT count(*) FROM acc_orders", mode).Scan(&n); err != nil || n != 5000 {
					t.Fatalf("session after the timeout: %d %v", n, err)
				}
			})

			mustExecConn(t, c, "RESET statement_timeout")
			accelerated(t, a, 1, func() { countSlow(t, c, mode) })
			mustExecConn(t, c, "SET statement_timeout = '1min'")
			accelerated(t, a, 1, func() { countSlow(t, c, mode) })
			mustExecConn(t, c, "SET statement_timeout = 0")
			accelerated(t, a, 1, func() { countSlow(t, c, mode) })

			// SET LOCAL: until the end of the transaction.
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = '50ms'", mode); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, slowQuery, mode)
			wantTimeout(t, "SET LOCAL", err)
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			accelerated(t, a, 1, func() { countSlow(t, c, mode) })
		})
	}
}

func mustExecConn(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.Exec(ctxT(t), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestStatementTimeout_FromStartupAndRole: statement_timeout given in the
// startup packet's options, or as the role's default, applies to
// accelerated statements too.
func TestStatementTimeout_FromStartupAndRole(t *testing.T) {
	mustExec(t, accelSchema)
	mustExec(t, `DO $$ BEGIN CREATE ROLE timeout_user LOGIN PASSWORD 'timeout-pass'; EXCEPTION WHEN duplicate_object THEN END $$;
		GRANT SELECT ON acc_orders TO timeout_user;
		ALTER ROLE timeout_user SET statement_timeout = '50ms'`)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	for name, dsn := range map[string]string{
		"startup options": appDSN(a, appUser, appPass) + "&options=-c%20statement_timeout%3D50ms",
		"role default":    appDSN(a, "timeout_user", "timeout-pass"),
	} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, dsn)
			for pname, mode := range protocols {
				_, err := c.Exec(ctxT(t), slowQuery, mode)
				wantTimeout(t, pname, err)
			}
			mustExecConn(t, c, "SET statement_timeout = 0")
			accelerated(t, a, 1, func() { countSlow(t, c, pgx.QueryExecModeCacheStatement) })
		})
	}
}

// TestStatementTimeout_TransactionBlock: a statement that times out (or is
// cancelled) in a transaction block fails the transaction, as in Postgres:
// status E, the next statement refused with 25P02, ROLLBACK leaves the
// session as it was. The origin's transaction fails with it.
func TestStatementTimeout_TransactionBlock(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	for name, mode := range protocols {
		for _, how := range []string{"timeout", "cancel"} {
			t.Run(name+" "+how, func(t *testing.T) {
				ctx := ctxT(t)
				session := func(t *testing.T, c *pgx.Conn, tr *transcript) {
					mustExecConn(t, c, "BEGIN")
					if how == "timeout" {
						mustExecConn(t, c, "SET LOCAL statement_timeout = '50ms'")
					} else {
						go func() {
							time.Sleep(300 * time.Millisecond)
							_ = c.PgConn().CancelRequest(context.Background())
						}()
					}
					_, err := c.Exec(ctx, "SELECT count(*) FROM acc_orders a, acc_orders b, acc_orders c WHERE a.qty + b.qty + c.qty = 20", mode)
					tr.err(err)
					tr.printf("txstatus %c", c.PgConn().TxStatus())
					_, err = c.Exec(ctx, "SELECT count(*) FROM acc_orders", mode)
					tr.err(err)
					tr.printf("txstatus %c", c.PgConn().TxStatus())
					simple(ctx, c, tr, "COMMIT")
					simple(ctx, c, tr, "SELECT count(*) FROM acc_orders")
				}
				differentialDSN(t, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), session)
			})
		}
	}
}

// TestStatementTimeout_AfterRows: a statement whose deadline passes after
// rows were sent gets those rows, then the error, as from Postgres. The
// client reads nothing for a while, so the answer is still being sent at
// the deadline.
func TestStatementTimeout_AfterRows(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	// Two million rows, about 60 MB on the wire.
	sql := "SELECT a.id, b.id FROM acc_orders a, acc_orders b WHERE a.id <= 400"
	session := func(addr string) string {
		rc := dialRawAddr(t, addr, "trustuser")
		_ = rc.conn.SetDeadline(time.Now().Add(2 * time.Minute))
		rc.fe.Send(&pgproto3.Query{String: "SET statement_timeout = '2s'"})
		rc.fe.Send(&pgproto3.Query{String: sql})
		if err := rc.fe.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * time.Second)
		var tr strings.Builder
		rows, rfqs := 0, 0
		for rfqs < 2 {
			msg, err := rc.fe.Receive()
			if err != nil {
				t.Fatalf("receive: %v\n%s", err, tr.String())
			}
			if _, ok := msg.(*pgproto3.DataRow); ok {
				rows++
				continue
			}
			if rows > 0 {
				fmt.Fprintf(&tr, "(rows before: some)\n")
				t.Logf("%s: %d rows before %T", addr, rows, msg)
				rows = 0
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				fmt.Fprintf(&tr, "Error %s %s %s\n", m.Severity, m.Code, m.Message)
			case *pgproto3.ReadyForQuery:
				rfqs++
				fmt.Fprintf(&tr, "ReadyForQuery %c\n", m.TxStatus)
			default:
				fmt.Fprintf(&tr, "%T\n", msg)
			}
		}
		return tr.String()
	}
	direct := session(origin.Addr())
	var proxied string
	accelerated(t, a, 0, func() { proxied = session(a.Addr()) })
	if direct != proxied {
		t.Fatalf("through pgaccel:\n%s\ndirectly:\n%s", proxied, direct)
	}
	if !strings.Contains(direct, "(rows before: some)\nError ERROR 57014") {
		t.Fatalf("want rows, then the timeout:\n%s", direct)
	}
}

// TestStatementTimeout_WhileTheClientPauses: the timer runs from a
// statement's first message, also while the client pauses between them
// (pgx's TestPrepareHandlesTimeoutBetweenParseAndDescribe): a statement
// whose Parse went to the origin, and an accelerated one whose Parse the
// proxy kept, time out as on the origin.
func TestStatementTimeout_WhileTheClientPauses(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	// The accelerated text described once, so that its Parse is kept.
	warm := connect(t, appDSN(a, "trustuser", ""))
	accelerated(t, a, 1, func() {
		if _, err := warm.Exec(ctxT(t), "SELECT count(*) FROM acc_orders WHERE qty > $1", pgx.QueryExecModeExec, 3); err != nil {
			t.Fatal(err)
		}
	})
	for name, parse := range map[string]*pgproto3.Parse{
		"named, at the origin":   {Name: "s1", Query: "SELECT $1::varchar"},
		"unnamed, accelerated":   {Query: "SELECT count(*) FROM acc_orders WHERE qty > $1"},
		"unnamed, in a block":    {Query: "SELECT count(*) FROM acc_orders WHERE qty > $1"},
		"paused before the Sync": {Query: "SELECT count(*) FROM acc_orders WHERE qty > $1"},
	} {
		t.Run(name, func(t *testing.T) {
			var out [2]string
			for i, addr := range []string{origin.Addr(), a.Addr()} {
				out[i] = pausedSession(t, addr, name, parse)
			}
			if out[0] != out[1] {
				t.Fatalf("through pgaccel:\n%s\ndirectly:\n%s", out[1], out[0])
			}
			if strings.Contains(out[0], "57014") != (name != "paused before the Sync") {
				t.Fatalf("a timeout only while a statement runs:\n%s", out[0])
			}
		})
	}
}

// pausedSession runs, as trustuser, a statement whose messages come with a
// pause longer than statement_timeout in between, and records the replies.
func pausedSession(t *testing.T, addr, name string, parse *pgproto3.Parse) string {
	rc := dialRawAddr(t, addr, "trustuser")
	var tr strings.Builder
	send := func(ms ...pgproto3.FrontendMessage) {
		for _, m := range ms {
			rc.fe.Send(m)
		}
		if err := rc.fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(rfqs int) { tr.WriteString(readReplies(t, rc.fe, rfqs)) }
	bind := &pgproto3.Bind{PreparedStatement: parse.Name, Parameters: [][]byte{[]byte("3")}}
	send(&pgproto3.Query{String: "SET statement_timeout = '100ms'"})
	read(1)
	switch name {
	case "unnamed, in a block":
		send(&pgproto3.Query{String: "BEGIN"})
		read(1)
		send(parse, bind)
		time.Sleep(300 * time.Millisecond)
		send(&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		read(1)
		send(&pgproto3.Query{String: "SELECT 1"})
		read(1)
		send(&pgproto3.Query{String: "ROLLBACK"})
		read(1)
	case "paused before the Sync":
		send(parse, bind, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Flush{})
		time.Sleep(300 * time.Millisecond)
		send(&pgproto3.Sync{})
		read(1)
	default:
		send(parse)
		time.Sleep(300 * time.Millisecond)
		send(&pgproto3.Describe{ObjectType: 'S', Name: parse.Name}, bind, &pgproto3.Execute{}, &pgproto3.Sync{})
		read(1)
	}
	send(&pgproto3.Query{String: "SET statement_timeout = 0"})
	read(1)
	send(parse, bind, &pgproto3.Execute{}, &pgproto3.Sync{})
	read(1)
	return tr.String()
}

// TestTimeouts_OtherTimeoutsReachTheOrigin: lock_timeout and
// idle_in_transaction_session_timeout, set with SET or in the startup
// options, are the origin's to apply, and it applies them to sessions
// through pgaccel as to direct ones.
func TestTimeouts_OtherTimeoutsReachTheOrigin(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_orders\n")
	for name, dsn := range map[string]func(string) string{
		"direct":  func(opts string) string { return origin.DSN(appUser, appPass) + opts },
		"pgaccel": func(opts string) string { return appDSN(a, appUser, appPass) + opts },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			for _, how := range []string{"SET", "startup"} {
				opts := ""
				if how == "startup" {
					opts = "&options=-c%20lock_timeout%3D100ms%20-c%20idle_in_transaction_session_timeout%3D300ms"
				}
				// lock_timeout: a locking read waits for a lock another
				// session holds.
				c := connect(t, dsn(opts))
				if how == "SET" {
					mustExecConn(t, c, "SET lock_timeout = '100ms'")
					mustExecConn(t, c, "SET idle_in_transaction_session_timeout = '300ms'")
				}
				holder := connect(t, origin.SuperDSN())
				tx, err := holder.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, "LOCK TABLE acc_orders IN ACCESS EXCLUSIVE MODE"); err != nil {
					t.Fatal(err)
				}
				_, err = c.Exec(ctx, "SELECT id FROM acc_orders WHERE id = 1 FOR UPDATE")
				_ = tx.Rollback(ctx)
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "55P03" || pe.Message != "canceling statement due to lock timeout" {
					t.Fatalf("%s: want 55P03 lock timeout, got %v", how, err)
				}
				// idle_in_transaction_session_timeout: the origin ends
				// the session.
				mustExecConn(t, c, "BEGIN")
				mustExecConn(t, c, "SELECT 1")
				time.Sleep(time.Second)
				_, err = c.Exec(ctx, "SELECT 1")
				if !errors.As(err, &pe) || pe.Code != "25P03" || pe.Severity != "FATAL" {
					t.Fatalf("%s: want FATAL 25P03 idle-in-transaction timeout, got %v", how, err)
				}
			}
		})
	}
}

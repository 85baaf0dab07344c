package integration

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
)

// The event loop's origin lane (proxy/lane.go): round trips of SELECTs
// the fast path sends to the origin are relayed without being decoded.
// Against the origin directly, every answer is the same (values, errors,
// transaction states) in every pgx execution mode; the lane takes them
// (its counter moves), but not a SELECT that leaves state in the session
// (set_config, a session-level advisory lock); accelerated reads in between are still accelerated; SHOW
// pgaccel.last_route still says origin. Both auth modes: with auth.mode
// proxy the session replays its settings on a new origin connection, which
// a lane that took set_config would break.
func TestEventLoop_OriginLane(t *testing.T) {
	t.Run("auth=origin", func(t *testing.T) {
		mustExec(t, accelSchema)
		a := startApp(t, accelDatasets)
		direct := connect(t, origin.DSN(appUser, appPass))
		c := connect(t, appDSN(a, appUser, appPass))
		laneScript(t, a, direct, c, "acc_orders", appUser)
	})
	t.Run("auth=proxy", func(t *testing.T) {
		setupProxyAuth(t)
		a, _ := startProxyAuthApp(t, t.TempDir(), "60s", true)
		direct := connect(t, origin.DSN(sessUser, sessPass))
		c := connect(t, appDSN(a, sessUser, sessPass))
		laneScript(t, a, direct, c, "sess_orders", sessUser)
	})
}

func laneScript(t *testing.T, a *app.App, direct, c *pgx.Conn, table, user string) {
	ctx := ctxT(t)
	trips := func() float64 {
		return metricSums(t, a.Metrics, "pgaccel_event_loop_lane_round_trips_total")[""]
	}
	// run answers sql on both connections and compares: the rows as text,
	// or the error's SQLSTATE.
	run := func(mode pgx.QueryExecMode, sql string, args ...any) string {
		t.Helper()
		answer := func(conn *pgx.Conn) string {
			rows, err := conn.Query(ctx, sql, append([]any{mode}, args...)...)
			if err != nil {
				return "error " + sqlState(err)
			}
			var out []string
			for rows.Next() {
				vals, err := rows.Values()
				if err != nil {
					return "error " + sqlState(err)
				}
				out = append(out, fmt.Sprint(vals...))
			}
			if err := rows.Err(); err != nil {
				return strings.Join(out, ";") + " error " + sqlState(err)
			}
			return strings.Join(out, ";") + " " + rows.CommandTag().String()
		}
		want, got := answer(direct), answer(c)
		if got != want {
			t.Fatalf("%v %q %v: proxy %q, origin %q", mode, sql, args, got, want)
		}
		return got
	}
	var count string
	accelerated := func(mode pgx.QueryExecMode) {
		t.Helper()
		before := routeCounts(t, a)[acc]
		count = run(mode, "SELECT count(*) FROM "+table)
		if routeCounts(t, a)[acc] != before+1 {
			t.Fatalf("%v: the read of %s was not accelerated", mode, table)
		}
	}
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	start := trips()
	for _, mode := range modes {
		before := trips()
		for i := range 100 {
			run(mode, "SELECT $1::int * 3 AS x, 'r' || $1::text AS r", i)
			if i%25 == 0 {
				// An error in a round trip the lane takes, and the session
				// going on.
				if got := run(mode, "SELECT 10 / $1::int", 0); !strings.Contains(got, "22012") {
					t.Fatalf("%v: division by zero answered %q", mode, got)
				}
				run(mode, "SELECT 10 / $1::int", 2)
			}
		}
		// After an accelerated read (on goroutines: handoff.go), a run of
		// origin statements brings the session back to the loop.
		if trips() < before+30 {
			t.Fatalf("%v: the lane took %v round trips of 108 origin statements", mode, trips()-before)
		}
		if got := lastRoute(t, c, true); !strings.HasPrefix(got, "origin: ") {
			t.Fatalf("%v: last route %q", mode, got)
		}
		accelerated(mode)
	}

	// In a transaction block: statements, an error, the aborted block
	// (25P02), the rollback, all as the origin answers them.
	for _, mode := range modes {
		for _, conn := range []*pgx.Conn{direct, c} {
			if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 5 {
			run(mode, "SELECT $1::int + 1", i)
		}
		run(mode, "SELECT 10 / $1::int", 0)
		if got := run(mode, "SELECT $1::int + 1", 7); !strings.Contains(got, "25P02") {
			t.Fatalf("%v: in the aborted block: %q", mode, got)
		}
		for _, conn := range []*pgx.Conn{direct, c} {
			if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		}
		run(mode, "SELECT $1::int + 1", 8)
	}

	// A SELECT whose effect outlives it is not the lane's: a session-level
	// advisory lock (which the planner's fast path, and so the loop, takes)
	// and set_config (which it does not). The session is on the loop first.
	warm := trips()
	for i := range 80 {
		run(pgx.QueryExecModeExec, "SELECT $1::int - 1", i)
	}
	if trips() < warm+10 {
		t.Fatalf("the lane took %v round trips of 80 origin statements", trips()-warm)
	}
	before := trips()
	for i := range 10 {
		run(pgx.QueryExecModeExec, "SELECT pg_try_advisory_lock($1::bigint) IS NOT NULL", 4242+i)
		run(pgx.QueryExecModeSimpleProtocol, "SELECT pg_try_advisory_lock(4141) IS NOT NULL")
		run(pgx.QueryExecModeExec, "SELECT set_config('application_name', $1, false)", fmt.Sprint("lane", i))
		run(pgx.QueryExecModeSimpleProtocol, "SELECT set_config('application_name', 'lane_simple', false)")
	}
	if trips() != before {
		t.Fatalf("the lane took %v round trips of statements that leave session state", trips()-before)
	}
	run(pgx.QueryExecModeSimpleProtocol, "SELECT pg_advisory_unlock_all() IS NULL")

	// pgbench's TPC-B in the simple protocol: BEGIN, writes and COMMIT
	// are the lane's too, with the decoded path's effects: a read of a
	// dataset after a write in the transaction goes to the origin
	// (tx_wrote), and sees the write. The two connections update rows of
	// their own, alike.
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS lane_tpcb, lane_hist;
		CREATE TABLE lane_tpcb (id int PRIMARY KEY, v int NOT NULL);
		INSERT INTO lane_tpcb SELECT g, 0 FROM generate_series(1, 10) g;
		CREATE TABLE lane_hist (id int, delta int);
		GRANT SELECT, INSERT, UPDATE, DELETE ON lane_tpcb, lane_hist TO %s`, user))
	tpcb := func(conn *pgx.Conn, i, base int) string {
		t.Helper()
		var out []string
		for _, sql := range []string{
			"BEGIN;",
			fmt.Sprintf("UPDATE lane_tpcb SET v = v + %d WHERE id = %d;", i, base+i%5),
			fmt.Sprintf("SELECT v FROM lane_tpcb WHERE id = %d;", base+i%5),
			fmt.Sprintf("INSERT INTO lane_hist (id, delta) VALUES (%d, %d);", base+i%5, i),
			fmt.Sprintf("DELETE FROM lane_hist WHERE id = %d AND delta < 0;", base+i%5),
			"END;",
		} {
			res, err := conn.PgConn().Exec(ctx, sql).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			for _, r := range res {
				out = append(out, fmt.Sprint(r.Rows, r.CommandTag.String()))
			}
		}
		return strings.Join(out, " ")
	}
	for i := range 80 {
		run(pgx.QueryExecModeSimpleProtocol, fmt.Sprintf("SELECT %d", i))
	}
	before = trips()
	for i := range 20 {
		if want, got := tpcb(direct, i, 1), tpcb(c, i, 6); got != want {
			t.Fatalf("TPC-B transaction %d: proxy %q, origin %q", i, got, want)
		}
	}
	if trips() < before+20*6 {
		t.Fatalf("the lane took %v round trips of 20 TPC-B transactions of 6 statements", trips()-before)
	}
	// After a write the lane took, a read of a dataset in the same
	// transaction goes to the origin (tx_wrote); after a write that
	// failed, it gets the origin's 25P02. After the transaction the
	// dataset is accelerated again.
	for _, failing := range []bool{false, true} {
		write := "INSERT INTO lane_hist (id, delta) VALUES (1, 1);"
		if failing {
			write = "INSERT INTO lane_hist (id, delta) VALUES (1, 'x');"
		}
		originBefore, tripsBefore := routeCounts(t, a)["origin"], trips()
		for i := range 80 {
			run(pgx.QueryExecModeSimpleProtocol, fmt.Sprintf("SELECT %d", i))
		}
		// Each is counted once, whichever path took it (the lane, once the
		// session is back on its event loop, or the decoded path).
		if n, tr := routeCounts(t, a)["origin"]-originBefore, trips()-tripsBefore; n != 80 || tr == 0 {
			t.Fatalf("80 SELECTs through the lane: %v counted at the origin, %v lane round trips", n, tr)
		}
		before = trips()
		if _, err := c.PgConn().Exec(ctx, "BEGIN;").ReadAll(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PgConn().Exec(ctx, write).ReadAll(); failing != (err != nil) {
			t.Fatalf("%s: %v", write, err)
		}
		if trips() != before+2 {
			t.Fatalf("the lane took %v round trips of BEGIN and a write", trips()-before)
		}
		accBefore := routeCounts(t, a)[acc]
		var n int64
		err := c.QueryRow(ctx, "SELECT count(*) FROM "+table, pgx.QueryExecModeSimpleProtocol).Scan(&n)
		if failing && sqlState(err) != "25P02" || !failing && err != nil {
			t.Fatalf("the read after %s: %v", write, err)
		}
		if routeCounts(t, a)[acc] != accBefore {
			t.Fatalf("a read of %s after a write in the transaction was accelerated", table)
		}
		if !failing {
			if got := lastRoute(t, c, true); !strings.Contains(got, "tx_wrote") {
				t.Fatalf("last route %q after a write in the transaction", got)
			}
		}
		if _, err := c.PgConn().Exec(ctx, "ROLLBACK;").ReadAll(); err != nil {
			t.Fatal(err)
		}
	}
	accelerated(pgx.QueryExecModeSimpleProtocol)
	run(pgx.QueryExecModeSimpleProtocol, "SHOW application_name")
	accelerated(pgx.QueryExecModeCacheStatement)
	if count == "" {
		t.Fatal("no accelerated count")
	}
	if p := metricSums(t, a.Metrics, "pgaccel_session_panics_total")[""]; p != 0 {
		t.Fatalf("%v session panics", p)
	}
	t.Logf("lane round trips: %v", trips()-start)
}

// sqlState is err's SQLSTATE, or its text when it has none.
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return err.Error()
}

// Point reads that runtime.point_reads: origin sends to the origin, as
// pgbench -S sends them (simple Query, a new literal each time): once one
// text of a shape has been planned, the session keeps its decision for
// the shape, and the origin lane relays the others undecoded (the lane's
// counter moves), each answer the origin's, each counted as an origin
// point read, SHOW pgaccel.last_route saying so. A refresh of the dataset
// makes the session plan the shape again; accelerated reads in between
// stay accelerated.
func TestEventLoop_PointReadsTakeTheLane(t *testing.T) {
	mustExec(t, accelSchema)
	a := startAppRuntime(t, "", "", accelDatasets, true) // runtime.point_reads: origin, the default
	direct := connectSimple(t, origin.DSN(appUser, appPass))
	c := connectSimple(t, appDSN(a, appUser, appPass))
	ctx := ctxT(t)
	trips := func() float64 { return metricSums(t, a.Metrics, "pgaccel_event_loop_lane_round_trips_total")[""] }
	pointReads := func() float64 {
		return metricSums(t, a.Metrics, "pgaccel_statements_total", "route", "reason")["origin|point_read"]
	}
	read := func(id int) {
		t.Helper()
		sql := fmt.Sprintf("SELECT status, amount FROM acc_orders WHERE id = %d", id)
		want, got := mustQuery(t, direct, sql), mustQuery(t, c, sql)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: %q, origin %q", sql, got, want)
		}
	}
	read(1)
	// A session on goroutines goes back to its loop after 64 loop-safe
	// messages in a row (proxy/handoff.go): with the shape kept, the
	// point reads are such messages.
	startTrips, startReads := trips(), pointReads()
	for i := range 300 {
		read(2 + i%40)
	}
	if got := trips() - startTrips; got < 300-64-10 {
		t.Errorf("the lane took %v of 300 point reads, want all but those before the session went back to its loop", got)
	}
	if got := lastRoute(t, c, true); !strings.Contains(got, "point_read") {
		t.Fatalf("last route of a kept point read: %q", got)
	}
	// A refresh of the dataset: the shape is planned again.
	if err := a.Runner.Refresh(ctx, "acc_orders"); err != nil {
		t.Fatal(err)
	}
	before := routeCounts(t, a)[acc]
	mustQuery(t, c, "SELECT count(*) FROM acc_orders")
	if routeCounts(t, a)[acc] != before+1 {
		t.Fatal("a read of the dataset between point reads was not accelerated")
	}
	for i := range 100 {
		read(3 + i%40)
	}
	if got := pointReads() - startReads; got != 400 {
		t.Errorf("%v origin point reads counted, want 400", got)
	}
}

package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// lastRoute reads SHOW pgaccel.last_route with the simple protocol (on
// pgconn) or the extended one (pgx).
func lastRoute(t *testing.T, c *pgx.Conn, simple bool) string {
	t.Helper()
	ctx := ctxT(t)
	if simple {
		res, err := c.PgConn().Exec(ctx, "SHOW pgaccel.last_route").ReadAll()
		if err != nil {
			t.Fatalf("SHOW pgaccel.last_route: %v", err)
		}
		if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].FieldDescriptions) != 1 || res[0].FieldDescriptions[0].Name != "pgaccel.last_route" {
			t.Fatalf("SHOW pgaccel.last_route answered %+v", res)
		}
		return string(res[0].Rows[0][0])
	}
	var v string
	if err := c.QueryRow(ctx, "show pgaccel.last_route;").Scan(&v); err != nil {
		t.Fatalf("SHOW pgaccel.last_route (extended): %v", err)
	}
	return v
}

// TestRoute_ShowLastRoute: every client sees how its previous statement
// was routed, in both protocols, and SHOW itself does not count.
func TestRoute_ShowLastRoute(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	for _, simple := range []bool{true, false} {
		c := connect(t, appDSN(a, appUser, appPass))
		if got := lastRoute(t, c, simple); got != "none" {
			t.Errorf("simple %v: at the start: %q", simple, got)
		}
		mustQuery(t, c, "SELECT count(*) FROM acc_orders")
		// The second session's read is answered from the results cache.
		if got := lastRoute(t, c, simple); got != "accelerated" && (simple || got != "accelerated (cache hit)") {
			t.Errorf("simple %v: after an accelerated read: %q", simple, got)
		}
		first := lastRoute(t, c, simple)
		if got := lastRoute(t, c, simple); got != first {
			t.Errorf("simple %v: SHOW pgaccel.last_route changed the route it shows: %q", simple, got)
		}
		mustQuery(t, c, "SELECT count(*) FROM pg_class")
		if got := lastRoute(t, c, simple); !strings.HasPrefix(got, "origin: ") {
			t.Errorf("simple %v: after a catalog read: %q", simple, got)
		}
		mustQuery(t, c, "SELECT count(*), pg_backend_pid() > 0 FROM acc_orders")
		if got := lastRoute(t, c, simple); !strings.HasPrefix(got, "origin: ") || !strings.Contains(got, "pg_backend_pid") {
			t.Errorf("simple %v: after a read calling pg_backend_pid: %q, want the origin and the rule", simple, got)
		}
		// In a transaction, and in an aborted one (where Postgres
		// refuses SHOW too).
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustQuery(t, c, "SELECT count(*) FROM acc_orders")
		if got := lastRoute(t, c, simple); got != "accelerated (cache hit)" {
			t.Errorf("simple %v: in a transaction: %q", simple, got)
		}
		// A transaction that wrote reads from the origin, and says so.
		if _, err := c.Exec(ctx, "UPDATE acc_orders SET id = id WHERE id = -1"); err != nil {
			t.Fatal(err)
		}
		mustQuery(t, c, "SELECT count(*) FROM acc_orders")
		if got := lastRoute(t, c, simple); !strings.HasPrefix(got, "origin: tx_wrote") {
			t.Errorf("simple %v: a read after a write in the transaction: %q", simple, got)
		}
		_, _ = c.Exec(ctx, "SELECT 1/0")
		_, err = c.PgConn().Exec(ctx, "SHOW pgaccel.last_route").ReadAll()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "25P02" {
			t.Errorf("simple %v: SHOW in an aborted transaction: %v, want 25P02", simple, err)
		}
		_ = tx.Rollback(ctx)
	}
}

// TestRoute_SetRouteOrigin: SET pgaccel.route = origin sends reads to the
// origin with Postgres's SET semantics, also from the startup packet.
func TestRoute_SetRouteOrigin(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	read := func() string {
		return routeOf(t, a, func() { mustQuery(t, c, "SELECT count(*) FROM acc_orders") })
	}
	exec := func(sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if r := read(); r != acc {
		t.Fatalf("before SET: %s", r)
	}
	exec("SET pgaccel.route = origin")
	if r := read(); r != org {
		t.Errorf("after SET pgaccel.route = origin: %s", r)
	}
	if got := lastRoute(t, c, true); got != "origin: route_setting: pgaccel.route = origin" {
		t.Errorf("last route: %q", got)
	}
	var shown string
	if err := c.QueryRow(ctx, "SHOW pgaccel.route").Scan(&shown); err != nil || shown != "origin" {
		t.Errorf("SHOW pgaccel.route = %q, %v", shown, err)
	}
	exec("RESET pgaccel.route")
	if r := read(); r != acc {
		t.Errorf("after RESET: %s", r)
	}
	exec("BEGIN")
	exec("SET LOCAL pgaccel.route = origin")
	if r := read(); r != org {
		t.Errorf("after SET LOCAL: %s", r)
	}
	exec("COMMIT")
	if r := read(); r != acc {
		t.Errorf("after the transaction of SET LOCAL: %s", r)
	}
	exec("BEGIN")
	exec("SET pgaccel.route = 'origin'")
	exec("ROLLBACK")
	if r := read(); r != acc {
		t.Errorf("after a rolled-back SET: %s", r)
	}
	exec("SET pgaccel.route = auto")
	if r := read(); r != acc {
		t.Errorf("after SET pgaccel.route = auto: %s", r)
	}
	// As a startup option.
	cfg, err := pgx.ParseConfig(appDSN(a, appUser, appPass))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["options"] = "-c pgaccel.route=origin"
	c2, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(context.Background())
	if r := routeOf(t, a, func() { mustQuery(t, c2, "SELECT count(*) FROM acc_orders") }); r != org {
		t.Errorf("with -c pgaccel.route=origin at startup: %s", r)
	}
}

// TestRoute_Explain: EXPLAIN of an accelerated read answers DuckDB's plan
// under a line naming the route; EXPLAIN ANALYZE runs it on DuckDB; other
// EXPLAINs are the origin's.
func TestRoute_Explain(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	plan := func(sql string, simple bool) []string {
		t.Helper()
		var lines []string
		if simple {
			res, err := c.PgConn().Exec(ctx, sql).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			if res[0].FieldDescriptions[0].Name != "QUERY PLAN" {
				t.Errorf("%s: column %q", sql, res[0].FieldDescriptions[0].Name)
			}
			for _, r := range res[0].Rows {
				lines = append(lines, string(r[0]))
			}
			return lines
		}
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		defer rows.Close()
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		return lines
	}
	for _, simple := range []bool{true, false} {
		lines := plan("EXPLAIN SELECT count(*) FROM acc_orders WHERE id > 1", simple)
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "pgaccel: accelerated") || !strings.Contains(lines[0], "acc_orders") {
			t.Errorf("simple %v: EXPLAIN of an accelerated read: %q", simple, lines)
		}
		if got := lastRoute(t, c, true); got != "accelerated" {
			t.Errorf("simple %v: last route after EXPLAIN: %q", simple, got)
		}
		lines = plan("EXPLAIN ANALYZE SELECT count(*) FROM acc_orders", simple)
		if len(lines) < 3 || !strings.Contains(lines[0], "EXPLAIN ANALYZE ran") || !strings.Contains(strings.Join(lines, "\n"), "Total Time") {
			t.Errorf("simple %v: EXPLAIN ANALYZE of an accelerated read: %q", simple, lines)
		}
		// EXPLAIN ANALYZE of a read with a data-modifying CTE runs at
		// the origin and writes: later reads of its transaction go there.
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		lines = plan("EXPLAIN ANALYZE WITH d AS (UPDATE acc_orders SET id = id WHERE id = -12345 RETURNING 1) SELECT count(*) FROM d", simple)
		if len(lines) == 0 || strings.HasPrefix(lines[0], "pgaccel") {
			t.Errorf("simple %v: EXPLAIN ANALYZE of a data-modifying CTE: %q, want the origin's", simple, lines)
		}
		if r := routeOf(t, a, func() { mustQuery(t, c, "SELECT count(*) FROM acc_orders") }); r != org {
			t.Errorf("simple %v: a read after EXPLAIN ANALYZE of an UPDATE in the transaction: %s, want the origin", simple, r)
		}
		_ = tx.Rollback(ctx)
		lines = plan("EXPLAIN SELECT count(*) FROM pg_class", simple)
		if len(lines) == 0 || strings.HasPrefix(lines[0], "pgaccel") || !strings.Contains(strings.Join(lines, "\n"), "pg_class") {
			t.Errorf("simple %v: EXPLAIN of a catalog read: %q, want the origin's", simple, lines)
		}
		lines = plan("EXPLAIN (COSTS off) SELECT count(*) FROM acc_orders", simple)
		if len(lines) == 0 || strings.HasPrefix(lines[0], "pgaccel") {
			t.Errorf("simple %v: EXPLAIN with an option: %q, want the origin's", simple, lines)
		}
	}
}

// TestRoute_FallbackForgottenWhenTheAccelerationChanges: a read of a
// column added at the origin (ALTER TABLE) before the acceleration has it
// goes to the origin, and straight there while nothing changed; once a
// refresh brings the column in, the same read is accelerated again
// instead of being sent to the origin as a known fallback until restart.
func TestRoute_FallbackForgottenWhenTheAccelerationChanges(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS fb_items;
		CREATE TABLE fb_items (id int PRIMARY KEY, v text);
		INSERT INTO fb_items SELECT g, 'v' || g FROM generate_series(1, 10) g;
		GRANT SELECT ON fb_items TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS fb_items") })
	a := startApp(t, "  - from: postgres:public.fb_items\n")
	c := connect(t, appDSN(a, appUser, appPass))
	mustQuery(t, c, "SELECT count(*) FROM fb_items")
	if got := lastRoute(t, c, false); !strings.HasPrefix(got, "accelerated") {
		t.Fatalf("a read before the ALTER: %q", got)
	}
	mustExec(t, "ALTER TABLE fb_items ADD COLUMN w int DEFAULT 7")
	const q = "SELECT sum(w) FROM fb_items WHERE id > $1"
	sum := func() string {
		t.Helper()
		return strings.Join(mustQuery(t, c, q, 0), ",")
	}
	if got := sum(); got != "70" {
		t.Fatalf("the new column before a refresh: %s, want 70 (from the origin)", got)
	}
	if got := lastRoute(t, c, false); strings.HasPrefix(got, "accelerated") {
		t.Fatalf("the new column before a refresh was accelerated: %q", got)
	}
	if got := sum(); got != "70" {
		t.Fatalf("again: %s", got)
	}
	if got := lastRoute(t, c, false); !strings.Contains(got, "known_fallback") {
		t.Errorf("the second read before a refresh: %q, want straight to the origin (known_fallback)", got)
	}
	if err := a.Runner.Refresh(ctxT(t), "fb_items"); err != nil {
		t.Fatal(err)
	}
	if got := sum(); got != "70" {
		t.Fatalf("the new column after the refresh: %s, want 70", got)
	}
	if got := lastRoute(t, c, false); !strings.HasPrefix(got, "accelerated") {
		t.Errorf("the new column after the refresh that brought it in: %q, want accelerated", got)
	}
}

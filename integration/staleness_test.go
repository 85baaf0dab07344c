package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// acceleration.max_staleness: a dataset whose refreshes fail (the refresh
// account's password was changed) gets older; once it is older than its
// bound, its reads go to the origin and its status says stale, and
// /v1/ready turns 503 with runtime.ready_requires_fresh (200 without it).
// Once a refresh succeeds again, reads are accelerated again. A session's
// SET pgaccel.max_staleness bounds its own reads the same way.
func TestMaxStaleness_RefreshesFailing(t *testing.T) {
	const table, refresher = "stale_orders", "stale_refresher"
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id bigint PRIMARY KEY, amount int);
		INSERT INTO %[1]s SELECT g, g FROM generate_series(1, 1000) g;
		GRANT SELECT ON %[1]s TO app;
		DROP ROLE IF EXISTS %[2]s;
		CREATE ROLE %[2]s LOGIN PASSWORD 'refresh-pass';
		GRANT SELECT ON %[1]s TO %[2]s;`, table, refresher))
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS "+table+"; DROP ROLE IF EXISTS "+refresher) })
	dataset := fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      refresh_check_interval: 1s\n      refresh_retry_max_attempts: 1000\n      max_staleness: 4s\n", table)

	for _, requireFresh := range []bool{false, true} {
		runtime := "  verify:\n    enabled: false\n"
		if requireFresh {
			runtime += "  ready_requires_fresh: true\n"
		}
		a := startAppOrigin(t, origin.DSN(refresher, "refresh-pass"), "", runtime, dataset, true)
		conn := connect(t, appDSN(a, appUser, appPass))
		ctx := ctxT(t)
		const read = "SELECT sum(amount) FROM " + table
		route := func() string {
			var sum int64
			if err := conn.QueryRow(ctx, read).Scan(&sum); err != nil {
				t.Fatal(err)
			}
			if sum != 500500 {
				t.Fatalf("sum %d, want 500500", sum)
			}
			var r string
			if err := conn.QueryRow(ctx, "SHOW pgaccel.last_route").Scan(&r); err != nil {
				t.Fatal(err)
			}
			return r
		}
		ready := func() int { code, _ := adminGet(t, a.AdminAddr(), "/v1/ready", ""); return code }
		if r := route(); !strings.HasPrefix(r, "accelerated") {
			t.Fatalf("before: route %q", r)
		}
		if ds := datasetStatus(t, a.AdminAddr(), "", table); ds["stale"] == true || ds["data_age_seconds"] == nil || ds["max_staleness_seconds"] != 4.0 {
			t.Fatalf("before: status %v", ds)
		}

		// The session's own bound.
		mustExecOn(t, conn, "SET pgaccel.max_staleness = '1ms'")
		if r := route(); !strings.HasPrefix(r, "origin: max_staleness") {
			t.Errorf("with pgaccel.max_staleness 1ms: route %q", r)
		}
		mustExecOn(t, conn, "SET pgaccel.max_staleness = 'soon'")
		if r := route(); !strings.HasPrefix(r, "origin: max_staleness") {
			t.Errorf("with pgaccel.max_staleness 'soon': route %q", r)
		}
		mustExecOn(t, conn, "RESET pgaccel.max_staleness")
		if r := route(); !strings.HasPrefix(r, "accelerated") {
			t.Errorf("after RESET pgaccel.max_staleness: route %q", r)
		}

		// The refreshes fail from now on.
		mustExec(t, "ALTER ROLE "+refresher+" PASSWORD 'rotated'")
		pgtest.WaitFor(t, "the dataset stale", func() bool { return datasetStatus(t, a.AdminAddr(), "", table)["stale"] == true })
		if r := route(); !strings.HasPrefix(r, "origin: max_staleness") {
			t.Errorf("stale: route %q", r)
		}
		if code, want := ready(), map[bool]int{false: 200, true: 503}[requireFresh]; code != want {
			t.Errorf("stale, ready_requires_fresh %v: /v1/ready %d, want %d", requireFresh, code, want)
		}

		// The refreshes succeed again.
		mustExec(t, "ALTER ROLE "+refresher+" PASSWORD 'refresh-pass'")
		pgtest.WaitFor(t, "the dataset fresh again", func() bool { return datasetStatus(t, a.AdminAddr(), "", table)["stale"] != true })
		if r := route(); !strings.HasPrefix(r, "accelerated") {
			t.Errorf("refreshed again: route %q", r)
		}
		if code := ready(); code != 200 {
			t.Errorf("refreshed again: /v1/ready %d", code)
		}
		conn.Close(context.Background())
		shutdownApp(t, a)
		time.Sleep(10 * time.Millisecond)
	}
}

// mustExecOn runs sql on conn.
func mustExecOn(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(ctxT(t), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// GET /v1/ready?login=true answers 503 while the origin does not answer
// (auth.mode origin: no new session could log in), /v1/ready 200 all the
// same; both 200 once it is back.
func TestReady_LoginCheck(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	get := func(path string) int { code, _ := adminGet(t, a.AdminAddr(), path, ""); return code }
	if r, l := get("/v1/ready"), get("/v1/ready?login=true"); r != 200 || l != 200 {
		t.Fatalf("origin up: /v1/ready %d, ?login=true %d", r, l)
	}
	resume := origin.PauseDuring(t)
	if r, l := get("/v1/ready"), get("/v1/ready?login=true"); r != 200 || l != 503 {
		t.Errorf("origin down: /v1/ready %d, ?login=true %d; want 200 and 503", r, l)
	}
	if err := resume(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitOriginBack(t)
	pgtest.WaitFor(t, "?login=true back to 200", func() bool { return get("/v1/ready?login=true") == 200 })
}

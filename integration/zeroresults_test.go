package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
)

const zeroResultsSchema = `
DROP TABLE IF EXISTS zr_events, zr_bad;
CREATE TABLE zr_events (id int PRIMARY KEY, status text, at timestamptz, v text);
INSERT INTO zr_events SELECT g, 'live', now() - g * interval '1 hour', 'v' || g FROM generate_series(1, 10) g;
INSERT INTO zr_events VALUES (11, 'archived', now() - interval '1 hour', 'v11'),
                             (12, 'live', now() - interval '40 days', 'v12'),
                             (13, NULL, NULL, 'v13');
CREATE TABLE zr_bad (id int, v text);
INSERT INTO zr_bad VALUES (1, 'x');
GRANT SELECT ON zr_events, zr_bad TO app;
`

// On_zero_results: use_source. Rows the acceleration never loaded come
// from the origin when the accelerated answer is empty; rows its retention
// policy evicts do not, on either protocol.
func TestZeroResults_UseSourceAppliesTheInverseRetention(t *testing.T) {
	mustExec(t, zeroResultsSchema)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS zr_events, zr_bad") })
	a := startApp(t, `  - from: postgres:public.zr_events
    time_column: at
    acceleration:
      refresh_sql: SELECT * FROM zr_events WHERE id <= 5 OR id > 10
      on_zero_results: use_source
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_period: 30d
      retention_sql: DELETE FROM zr_events WHERE status = 'archived'
`)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	st, _ := a.Registry.State("zr_events")
	// Loaded: 1..5, and 13 (NULL status and time are kept); 11 and 12 were
	// evicted by retention as they loaded.
	if st.Rows != 6 || !st.FallbackReady || st.FallbackFilter == "" {
		t.Fatalf("state = %+v", st)
	}

	modes := []struct {
		name string
		mode pgx.QueryExecMode
	}{
		{"simple", pgx.QueryExecModeSimpleProtocol},
		{"extended", pgx.QueryExecModeCacheStatement},
	}
	cases := []struct {
		sql   string
		arg   int
		want  string
		route string
	}{
		{"SELECT id, v FROM zr_events WHERE id = $1", 3, "3 v3", acc},                                             // in the acceleration
		{"SELECT id, v FROM zr_events WHERE id = $1", 7, "7 v7", fbk},                                             // never loaded: the origin
		{"SELECT id, v FROM zr_events WHERE id = $1", 11, "", fbk},                                                // archived: evicted, not read back
		{"SELECT id, v FROM zr_events WHERE id = $1", 12, "", fbk},                                                // too old: evicted, not read back
		{"SELECT e.id, e.v FROM zr_events AS e WHERE e.id = $1", 8, "8 v8", fbk},                                  // alias kept
		{"SELECT public.zr_events.id FROM public.zr_events WHERE zr_events.id = $1", 9, "9", fbk},                 // schema-qualified columns
		{"SELECT x.id, y.id FROM zr_events x JOIN zr_events y ON y.id = x.id + 1 WHERE x.id = $1", 6, "6 7", fbk}, // both references filtered
		{"SELECT id FROM zr_events WHERE id IN (SELECT id FROM zr_events WHERE id = $1)", 10, "10", fbk},
		{"SELECT count(*) FROM zr_events WHERE id = $1", 7, "0", acc}, // an aggregate has a row: no fallback
	}
	for _, m := range modes {
		for _, tc := range cases {
			var got []string
			r := routeOf(t, a, func() {
				rows, err := c.Query(ctx, tc.sql, m.mode, tc.arg)
				if err != nil {
					t.Fatalf("%s %s: %v", m.name, tc.sql, err)
				}
				defer rows.Close()
				for rows.Next() {
					vals, err := rows.Values()
					if err != nil {
						t.Fatal(err)
					}
					var parts []string
					for _, v := range vals {
						parts = append(parts, fmt.Sprint(v))
					}
					got = append(got, strings.Join(parts, " "))
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s %s (%d): %v", m.name, tc.sql, tc.arg, err)
				}
			})
			if strings.Join(got, ";") != tc.want || r != tc.route {
				t.Errorf("%s: %s with %d = %q via %s, want %q via %s", m.name, tc.sql, tc.arg, got, r, tc.want, tc.route)
			}
		}
	}

	// The pipeline goes on after a fallback in the extended protocol:
	// several statements before one Sync, one of them falling back.
	batch := &pgx.Batch{}
	batch.Queue("SELECT v FROM zr_events WHERE id = $1", 2)
	batch.Queue("SELECT v FROM zr_events WHERE id = $1", 9)
	batch.Queue("SELECT v FROM zr_events WHERE id = $1", 4)
	br := c.SendBatch(ctx, batch)
	for _, want := range []string{"v2", "v9", "v4"} {
		var v string
		if err := br.QueryRow().Scan(&v); err != nil || v != want {
			t.Errorf("batch: %q, %v; want %s", v, err, want)
		}
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestZeroResults_ImpossibleInverseFailsTheLoad(t *testing.T) {
	mustExec(t, zeroResultsSchema)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS zr_events, zr_bad") })
	a := startAppNoWait(t, `  - from: postgres:public.zr_bad
    acceleration:
      on_zero_results: use_source
      retention_sql: DELETE FROM zr_bad WHERE no_such_column = 1
`)
	ctx := ctxT(t)
	_ = a.Runner.WaitReady(ctx, "zr_bad")
	var st catalog.DatasetState
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ = a.Registry.State("zr_bad")
		if st.Status == catalog.StatusError || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	const want = "Failed to register dataset 'zr_bad' (postgres): `on_zero_results: use_source` cannot be combined with this retention configuration, so the dataset was not loaded."
	if st.Loaded || !strings.Contains(st.Error, want) || !strings.Contains(st.Error, "no_such_column") {
		t.Fatalf("state = %+v, want the load failure %q", st, want)
	}
	// Queries go to the origin.
	c := connect(t, appDSN(a, appUser, appPass))
	if r := routeOf(t, a, func() { mustQuery(t, c, "SELECT * FROM zr_bad") }); r != org {
		t.Errorf("route %s, want origin", r)
	}
}

// The statement a use_source fallback sends to the origin must mean what
// the client's statement means: with an inverse that keeps every row
// (retention_sql: DELETE ... WHERE false), each accelerated statement of
// the corpus and its fallback form give the origin's same answer.
func TestZeroResults_FallbackFormKeepsTheMeaningOfEveryCorpusQuery(t *testing.T) {
	mustExec(t, accelSchema)
	var cfg strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(accelDatasets), "\n") {
		table := strings.TrimPrefix(strings.TrimSpace(line), "- from: postgres:public.")
		fmt.Fprintf(&cfg, "  - from: postgres:public.%s\n    acceleration:\n      on_zero_results: use_source\n      retention_sql: DELETE FROM %s WHERE false\n", table, table)
	}
	a := startApp(t, cfg.String())
	ctx := ctxT(t)
	c := connect(t, origin.DSN(appUser, appPass))
	run := func(sql string, args []any) string {
		rows, err := c.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
		if err != nil {
			return "error " + err.Error()
		}
		defer rows.Close()
		var out []string
		for _, f := range rows.FieldDescriptions() {
			out = append(out, fmt.Sprintf("col %s %d %d", f.Name, f.DataTypeOID, f.TypeModifier))
		}
		for rows.Next() {
			out = append(out, fmt.Sprintf("%x", rows.RawValues()))
		}
		if err := rows.Err(); err != nil {
			out = append(out, "error "+err.Error())
		}
		return strings.Join(out, "\n")
	}
	checked := 0
	for _, q := range corpus {
		if q.Route != acc {
			continue
		}
		d := a.Planner.Plan(ctx, q.SQL, &planner.Session{User: appUser, SearchPath: []string{"public"}})
		if d.Route != planner.RouteAccelerate {
			continue // routed by session state the planner alone does not see
		}
		if d.FallbackSQL == "" || d.FallbackSQL == q.SQL {
			t.Errorf("%s: no filtered fallback form: %q", q.Name, d.FallbackSQL)
			continue
		}
		if want, got := run(q.SQL, q.Args), run(d.FallbackSQL, q.Args); want != got {
			t.Errorf("%s: the fallback form answers differently\n  sql:      %s\n  fallback: %s\n  origin:   %.300s\n  fallback: %.300s", q.Name, q.SQL, d.FallbackSQL, want, got)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("only %d corpus statements were checked", checked)
	}
	t.Logf("%d corpus statements checked", checked)
}

// A fallback that fails at the origin reports the origin's error, and the
// rest of the pipeline up to Sync is skipped as the origin skips it; the
// session goes on.
func TestZeroResults_FallbackErrorInAPipeline(t *testing.T) {
	mustExec(t, zeroResultsSchema)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS zr_events, zr_bad") })
	a := startApp(t, `  - from: postgres:public.zr_events
    acceleration:
      refresh_sql: SELECT * FROM zr_events WHERE id <= 5
      on_zero_results: use_source
      retention_sql: DELETE FROM zr_events WHERE status = 'archived'
`)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	before := routeCounts(t, a)
	batch := &pgx.Batch{}
	batch.Queue("SELECT v FROM zr_events WHERE id = $1", 2)                      // accelerated
	batch.Queue("SELECT v FROM zr_events WHERE id = $1 AND 1 / (id - 7) > 0", 7) // empty here, 1/0 at the origin
	batch.Queue("SELECT v FROM zr_events WHERE id = $1", 3)                      // skipped
	br := c.SendBatch(ctx, batch)
	var v string
	if err := br.QueryRow().Scan(&v); err != nil || v != "v2" {
		t.Fatalf("first: %q %v", v, err)
	}
	if err := br.QueryRow().Scan(&v); pgErrCode(err) != "22012" {
		t.Fatalf("second: %v, want division_by_zero from the origin", err)
	}
	_ = br.Close()
	if after := routeCounts(t, a); after[fbk]-before[fbk] != 1 {
		t.Errorf("fallbacks: %v, want the one of the second statement", after[fbk]-before[fbk])
	}
	// The session is usable, on both routes.
	for _, id := range []int{4, 8} {
		if err := c.QueryRow(ctx, "SELECT v FROM zr_events WHERE id = $1", id).Scan(&v); err != nil || v != fmt.Sprintf("v%d", id) {
			t.Errorf("after the failed pipeline, id %d: %q %v", id, v, err)
		}
	}
}

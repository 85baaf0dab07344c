package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// The point index (issue 19): with point_reads: acceleration, a read that
// pins a dataset's primary key is answered from the dataset's rows held in
// memory by key, byte for byte as the origin answers it, across types,
// settings, formats and protocols; never from rows older than the
// acceleration's (a refresh or an append is seen at once, the index is
// rebuilt after); a role without privilege is refused; a dataset that does
// not fit the budget is answered by DuckDB.

const pointIndexSchema = `
DROP TABLE IF EXISTS pi_items, pi_text, pi_pair, pi_events, pi_uuid;
CREATE TABLE pi_items (id int PRIMARY KEY, i2 smallint, i8 bigint, n numeric(12,2), nu numeric(20,6), f4 real, f8 double precision,
	t text, vc varchar(20), c char(5), b bytea, d date, ts timestamp, tz timestamptz, iv interval, bo boolean,
	j json, jb jsonb, u uuid, arr int[], tarr text[]);
INSERT INTO pi_items SELECT g, (g % 100)::smallint, g * 1000000007::bigint, g * 1.25, g / 7.0, g / 3.0, g / 7.0,
	'text ' || g || ' ''q'' é', 'v' || g, 'c' || (g % 10), decode(md5(g::text), 'hex'), '2026-01-01'::date + g,
	'2026-03-01 12:00:00'::timestamp + g * interval '7 hours 3 minutes', '2026-03-01 12:00:00+00'::timestamptz + g * interval '11 hours',
	make_interval(days => g, hours => g % 24, secs => g / 8.0), g % 2 = 0, json_build_object('g', g), jsonb_build_object('g', g, 'h', 'x'),
	md5(g::text)::uuid, ARRAY[g, g + 1], ARRAY['a' || g, NULL]
	FROM generate_series(1, 300) g;
INSERT INTO pi_items (id) VALUES (1000), (-5);
CREATE TABLE pi_text (k text PRIMARY KEY, v int);
INSERT INTO pi_text VALUES ('a', 1), ('it''s', 2), ('Ünïcødé ✓', 3), ('', 4), ('trailing  ', 5), ('12', 6);
CREATE TABLE pi_pair (a bigint, b varchar(10), v text, PRIMARY KEY (a, b));
INSERT INTO pi_pair SELECT g / 3, 'b' || (g % 3), 'v' || g FROM generate_series(0, 89) g;
CREATE TABLE pi_events (id bigint PRIMARY KEY, at timestamptz NOT NULL, v text);
INSERT INTO pi_events SELECT g, now() - interval '1 day' + g * interval '1 minute', 'e' || g FROM generate_series(1, 100) g;
CREATE TABLE pi_uuid (id uuid PRIMARY KEY, v int);
INSERT INTO pi_uuid SELECT md5(g::text)::uuid, g FROM generate_series(1, 50) g;
GRANT SELECT ON pi_items, pi_text, pi_pair, pi_events, pi_uuid TO app;
`

const pointIndexDatasets = `  - from: postgres:public.pi_items
  - from: postgres:public.pi_uuid
  - from: postgres:public.pi_text
  - from: postgres:public.pi_pair
  - from: postgres:public.pi_events
    time_column: at
    acceleration:
      refresh_mode: append
`

// pointIndexStatus is a dataset's point_index in /v1/datasets?status=true.
type pointIndexStatus struct {
	Current bool   `json:"current"`
	Rows    int    `json:"rows"`
	Bytes   int64  `json:"bytes"`
	Builds  uint64 `json:"builds"`
	Follows uint64 `json:"follows"`
	Hits    uint64 `json:"hits"`
	Misses  uint64 `json:"misses"`
	Error   string `json:"error"`
}

func pointIndexOf(t *testing.T, a *app.App, dataset string) *pointIndexStatus {
	t.Helper()
	code, body := adminGet(t, a.AdminAddr(), "/v1/datasets?status=true", "")
	if code != 200 {
		t.Fatalf("status: %d %s", code, body)
	}
	var sts []struct {
		Name       string            `json:"name"`
		PointIndex *pointIndexStatus `json:"point_index"`
	}
	if err := json.Unmarshal([]byte(body), &sts); err != nil {
		t.Fatal(err)
	}
	for _, s := range sts {
		if s.Name == dataset {
			return s.PointIndex
		}
	}
	t.Fatalf("no dataset %s in %s", dataset, body)
	return nil
}

// untilIndexed runs read until the point index answers it (it starts the
// build), and returns the last answer.
func untilIndexed(t *testing.T, c *pgx.Conn, read func() string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := read()
		if r := lastRoute(t, c, true); r == "accelerated (point index)" {
			return got
		} else if time.Now().After(deadline) {
			t.Fatalf("the point index never answered (last route %q)", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPointIndex_AnswersAreTheOrigins(t *testing.T) {
	mustExec(t, pointIndexSchema)
	a := startApp(t, pointIndexDatasets)
	ctx := ctxT(t)
	proxyPgx := connect(t, appDSN(a, appUser, appPass))
	proxyConn := proxyPgx.PgConn()
	direct := connect(t, origin.DSN(appUser, appPass)).PgConn()

	const all = "id, i2, i8, n, nu, f4, f8, t, vc, c, b, d, ts, tz, iv, bo, j, jb, u, arr, tarr"
	untilIndexed(t, proxyPgx, func() string { return simpleDump(t, proxyConn, "SELECT "+all+" FROM pi_items WHERE id = 1") })

	type read struct {
		what string
		run  func(c *pgconn.PgConn) string
	}
	var reads []read
	for _, id := range []string{"1", "2", "150", "300", "1000", "-5", "4000", "2147483648"} {
		reads = append(reads,
			read{"simple * id " + id, func(c *pgconn.PgConn) string { return simpleDump(t, c, "SELECT * FROM pi_items WHERE id = "+id) }},
			read{"simple cols id " + id, func(c *pgconn.PgConn) string {
				return simpleDump(t, c, "SELECT t AS label, id, tz FROM public.pi_items p WHERE p.id = "+id+" LIMIT 1")
			}},
		)
		if id == "2147483648" {
			continue // no int4 parameter holds it
		}
		reads = append(reads,
			read{"extended text id " + id, func(c *pgconn.PgConn) string {
				return extendedDump(t, c, "SELECT "+all+" FROM pi_items WHERE id = $1", [][]byte{[]byte(id)}, nil)
			}},
			read{"extended binary id " + id, func(c *pgconn.PgConn) string {
				return extendedDump(t, c, "SELECT "+all+" FROM pi_items WHERE $1 = id", [][]byte{[]byte(id)}, []int16{1})
			}},
		)
	}
	reads = append(reads,
		read{"NULL key", func(c *pgconn.PgConn) string {
			return extendedDump(t, c, "SELECT id, t FROM pi_items WHERE id = $1", [][]byte{nil}, nil)
		}},
		read{"bigint parameter", func(c *pgconn.PgConn) string {
			return extendedDump(t, c, "SELECT id, t FROM pi_items WHERE id = $1::int8", [][]byte{[]byte("7")}, nil)
		}},
	)
	for _, k := range []string{"a", "it''s", "Ünïcødé ✓", "", "trailing  ", "trailing", "12", "missing"} {
		reads = append(reads,
			read{"text key " + k, func(c *pgconn.PgConn) string { return simpleDump(t, c, "SELECT v, k FROM pi_text WHERE k = '"+k+"'") }},
			read{"text key param " + k, func(c *pgconn.PgConn) string {
				return extendedDump(t, c, "SELECT * FROM pi_text WHERE k = $1", [][]byte{[]byte(strings.ReplaceAll(k, "''", "'"))}, []int16{1})
			}},
		)
	}
	for _, ab := range [][2]string{{"0", "b1"}, {"29", "b2"}, {"5", "b9"}} {
		reads = append(reads,
			read{"pair " + ab[0] + ab[1], func(c *pgconn.PgConn) string {
				return simpleDump(t, c, "SELECT v FROM pi_pair WHERE b = '"+ab[1]+"' AND a = "+ab[0])
			}},
			read{"pair param " + ab[0] + ab[1], func(c *pgconn.PgConn) string {
				return extendedDump(t, c, "SELECT a, b, v FROM pi_pair WHERE a = $1 AND b = $2", [][]byte{[]byte(ab[0]), []byte(ab[1])}, nil)
			}},
		)
	}
	// md5('7') is 8f14e45fceea167a5a36dedd4bea2543.
	for _, u := range []string{"8f14e45f-ceea-167a-5a36-dedd4bea2543", "8F14E45FCEEA167A5A36DEDD4BEA2543", "{8f14e45f-ceea167a-5a36dedd-4bea2543}",
		"00000000-0000-0000-0000-000000000000"} {
		reads = append(reads,
			read{"uuid " + u, func(c *pgconn.PgConn) string { return simpleDump(t, c, "SELECT v, id FROM pi_uuid WHERE id = '"+u+"'") }},
			read{"uuid param " + u, func(c *pgconn.PgConn) string {
				return extendedDump(t, c, "SELECT * FROM pi_uuid WHERE id = $1", [][]byte{[]byte(u)}, []int16{1})
			}},
		)
	}
	// Warm every dataset's index, then compare under each setting.
	for _, ds := range []string{"pi_text", "pi_pair", "pi_uuid"} {
		q := map[string]string{"pi_text": "SELECT v FROM pi_text WHERE k = 'a'", "pi_pair": "SELECT v FROM pi_pair WHERE a = 1 AND b = 'b1'",
			"pi_uuid": "SELECT v FROM pi_uuid WHERE id = '8f14e45f-ceea-167a-5a36-dedd4bea2543'"}[ds]
		untilIndexed(t, proxyPgx, func() string { return simpleDump(t, proxyConn, q) })
	}
	indexed := 0
	notIndexed := map[string]bool{}
	for _, set := range []string{"RESET ALL", "SET TimeZone = 'America/St_Johns'", "SET DateStyle = 'SQL, DMY'", "SET IntervalStyle = 'iso_8601'",
		"SET extra_float_digits = 0", "SET bytea_output = 'escape'", "RESET ALL"} {
		simpleDump(t, proxyConn, set)
		simpleDump(t, direct, set)
		for _, r := range reads {
			want := r.run(direct)
			got := r.run(proxyConn)
			if got != want {
				t.Fatalf("%s (%s): pgaccel\n%s\nwant the origin's\n%s", r.what, set, got, want)
			}
			route := lastRoute(t, proxyPgx, true)
			if !strings.HasPrefix(route, "accelerated") {
				t.Fatalf("%s (%s): routed %q", r.what, set, route)
			}
			if route == "accelerated (point index)" {
				indexed++
			} else {
				notIndexed[r.what] = true
			}
		}
	}
	// A literal beyond int4 parses as a numeric, and a cast is not a
	// plain pin: DuckDB answers those. (A text of a remembered shape with
	// that literal is an integer key no row has, as at the origin: the
	// index answers it.)
	wantNot := map[string]bool{"simple cols id 2147483648": true, "bigint parameter": true}
	if fmt.Sprint(notIndexed) != fmt.Sprint(wantNot) || indexed != (len(reads)-len(wantNot))*7 {
		t.Errorf("the point index answered %d of %d reads; not: %v", indexed, len(reads)*7, notIndexed)
	}

	// A key the origin cannot read is its error, not an empty answer.
	for _, sql := range []string{"SELECT v FROM pi_uuid WHERE id = 'not-a-uuid'", "SELECT v FROM pi_uuid WHERE id = '8f14e45f-ceea-167a-5a36-dedd4bea254'"} {
		_, err := proxyConn.Exec(ctx, sql).ReadAll()
		_, werr := direct.Exec(ctx, sql).ReadAll()
		if err == nil || werr == nil || err.Error() != werr.Error() {
			t.Fatalf("%s: pgaccel %v, the origin %v", sql, err, werr)
		}
	}

	// A row changes at the origin and the dataset is refreshed: the next
	// read has the new row (DuckDB's answer until the index is rebuilt,
	// then the index's), never the old one.
	before := pointIndexOf(t, a, "pi_items")
	mustExec(t, "UPDATE pi_items SET t = 'changed' WHERE id = 2")
	if err := a.Runner.Refresh(ctx, "pi_items"); err != nil {
		t.Fatal(err)
	}
	const q2 = "SELECT id, t FROM pi_items WHERE id = 2"
	want := simpleDump(t, direct, q2)
	if !strings.Contains(want, fmt.Sprintf("%x", "changed")) {
		t.Fatalf("origin: %s", want)
	}
	if got := simpleDump(t, proxyConn, q2); got != want {
		t.Fatalf("after a refresh: %s, want %s", got, want)
	}
	if got := untilIndexed(t, proxyPgx, func() string { return simpleDump(t, proxyConn, q2) }); got != want {
		t.Fatalf("after the rebuild: %s, want %s", got, want)
	}
	if after := pointIndexOf(t, a, "pi_items"); after == nil || after.Builds <= before.Builds || !after.Current || after.Rows != 302 || after.Bytes <= 0 || after.Hits == 0 {
		t.Fatalf("status after the rebuild: %+v (before %+v)", after, before)
	}

	// An append brings a new key: found at once; and the results cache's
	// answer over the dataset is not served after it.
	const cnt = "SELECT count(*) FROM pi_events"
	for i, want := range []string{"accelerated", "accelerated (cache hit)"} {
		if got := simpleDump(t, proxyConn, cnt); !strings.Contains(got, fmt.Sprintf("%x", "100")) {
			t.Fatalf("count %d: %s", i, got)
		}
		if r := lastRoute(t, proxyPgx, true); r != want {
			t.Fatalf("count %d routed %q, want %q", i, r, want)
		}
	}
	mustExec(t, "INSERT INTO pi_events VALUES (101, now(), 'new')")
	untilIndexed(t, proxyPgx, func() string { return simpleDump(t, proxyConn, "SELECT v FROM pi_events WHERE id = 100") })
	if err := a.Runner.Refresh(ctx, "pi_events"); err != nil {
		t.Fatal(err)
	}
	const q3 = "SELECT id, at, v FROM pi_events WHERE id = 101"
	if got, want := simpleDump(t, proxyConn, q3), simpleDump(t, direct, q3); got != want || !strings.Contains(got, fmt.Sprintf("%x", "new")) {
		t.Fatalf("after an append: %s, want %s", got, want)
	}
	if got := simpleDump(t, proxyConn, cnt); !strings.Contains(got, fmt.Sprintf("%x", "101")) || lastRoute(t, proxyPgx, true) != "accelerated" {
		t.Fatalf("count after an append: %s", got)
	}

	// A role without SELECT gets the origin's refusal, not the row.
	other := connect(t, appDSN(a, pgtest.NoAccessUser, pgtest.NoAccessPassword)).PgConn()
	for _, sql := range []string{"SELECT id, t FROM pi_items WHERE id = 3", "SELECT id, t FROM pi_items WHERE id = 4"} {
		if _, err := other.Exec(ctx, sql).ReadAll(); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("a role without privilege: %v", err)
		}
	}
	if n := metricSums(t, a.Metrics, "pgaccel_point_index_bytes")[""]; n <= 0 {
		t.Errorf("pgaccel_point_index_bytes: %v", n)
	}
}

// A dataset whose rows do not fit runtime.point_index.max_bytes is not
// indexed: DuckDB answers its point reads, and its status says why.
func TestPointIndex_OverBudgetIsAnsweredByDuckDB(t *testing.T) {
	mustExec(t, pointIndexSchema)
	a := startAppRuntime(t, "", "  point_reads: acceleration\n  point_index:\n    max_bytes: 4KiB\n", "  - from: postgres:public.pi_items\n", true)
	c := connect(t, appDSN(a, appUser, appPass))
	direct := connect(t, origin.DSN(appUser, appPass)).PgConn()
	const q = "SELECT * FROM pi_items WHERE id = 9"
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got, want := simpleDump(t, c.PgConn(), q), simpleDump(t, direct, q); got != want {
			t.Fatalf("over budget: %s, want %s", got, want)
		}
		if r := lastRoute(t, c, true); r != "accelerated" && r != "accelerated (cache hit)" {
			t.Fatalf("over budget: routed %q", r)
		}
		if st := pointIndexOf(t, a, "pi_items"); st != nil && st.Builds > 0 {
			if st.Current || !strings.Contains(st.Error, "max_bytes") {
				t.Fatalf("status: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no build attempted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A retention pass changes a dataset's rows: the results cache's answers
// over it and its point index are not served again (the pass bumps its
// data generation), so a row the pass deleted is never returned.
func TestPointIndex_RetentionPassInvalidates(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS pi_ret;
		CREATE TABLE pi_ret (id int PRIMARY KEY, at timestamptz, v text);
		INSERT INTO pi_ret SELECT g, now() - interval '1 hour', 'v' || g FROM generate_series(1, 20) g;
		UPDATE pi_ret SET at = now() - interval '1 day' + interval '3 seconds' WHERE id = 5;
		GRANT SELECT ON pi_ret TO app`)
	loaded := time.Now()
	a := startApp(t, `  - from: postgres:public.pi_ret
    time_column: at
    acceleration:
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_period: 1d
`)
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass))
	const count, point = "SELECT count(*) FROM pi_ret", "SELECT v FROM pi_ret WHERE id = 5"
	for i, want := range []string{"accelerated", "accelerated (cache hit)"} {
		if got := simpleDump(t, c.PgConn(), count); !strings.Contains(got, fmt.Sprintf("%x", "20")) {
			t.Fatalf("count %d: %s", i, got)
		}
		if r := lastRoute(t, c, true); r != want {
			t.Fatalf("count %d routed %q, want %q", i, r, want)
		}
	}
	if got := untilIndexed(t, c, func() string { return simpleDump(t, c.PgConn(), point) }); !strings.Contains(got, fmt.Sprintf("%x", "v5")) {
		t.Fatalf("point read before the pass: %s", got)
	}
	time.Sleep(time.Until(loaded.Add(4 * time.Second)))
	if err := a.Runner.RetainNow(ctx, "pi_ret"); err != nil {
		t.Fatal(err)
	}
	if got := simpleDump(t, c.PgConn(), count); !strings.Contains(got, fmt.Sprintf("%x", "19")) {
		t.Fatalf("count after the pass: %s", got)
	}
	if r := lastRoute(t, c, true); r != "accelerated" {
		t.Fatalf("count after the pass routed %q", r)
	}
	for range 20 {
		if got := simpleDump(t, c.PgConn(), point); strings.Contains(got, fmt.Sprintf("%x", "v5")) {
			t.Fatalf("a row the pass deleted came back (%s): %s", lastRoute(t, c, true), got)
		}
	}
	if got := untilIndexed(t, c, func() string { return simpleDump(t, c.PgConn(), point) }); strings.Contains(got, fmt.Sprintf("%x", "v5")) {
		t.Fatalf("the rebuilt index has the deleted row: %s", got)
	}
}

// TestPointIndex_FollowsChanges: a changes dataset's point index moves
// with the change stream instead of being rebuilt by a scan after each
// batch: updates, deletes and inserts at the origin are answered from the
// index, byte for byte as the origin answers, with one build in all.
func TestPointIndex_FollowsChanges(t *testing.T) {
	const table = "pi_cdc"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table); mustExec(t, "DROP TABLE IF EXISTS "+table) })
	mustExec(t, `DROP TABLE IF EXISTS pi_cdc;
		CREATE TABLE pi_cdc (id bigint PRIMARY KEY, v text, n numeric(10,2));
		INSERT INTO pi_cdc SELECT g, 'v' || g, g / 4.0 FROM generate_series(1, 2000) g;
		GRANT SELECT ON pi_cdc TO app;`)
	a := startAppRuntime(t, "", "  point_reads: acceleration\n", changesDatasetYAML(table), true)
	c := connect(t, appDSN(a, appUser, appPass))
	direct := connect(t, origin.DSN(appUser, appPass)).PgConn()
	read := func(id int) string {
		return simpleDump(t, c.PgConn(), fmt.Sprintf("SELECT * FROM pi_cdc WHERE id = %d", id))
	}
	untilIndexed(t, c, func() string { return read(5) })
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	for r := 1; r <= 10; r++ {
		mustExec(t, fmt.Sprintf(`UPDATE pi_cdc SET v = v || '-%[1]d', n = n + %[1]d WHERE id %% 10 = %[2]d;
			DELETE FROM pi_cdc WHERE id = %[3]d;
			INSERT INTO pi_cdc VALUES (%[4]d, 'new %[1]d', %[1]d.5)`, r, r%10, 100+r, 5000+r))
		v.waitEqual(t, table, fmt.Sprintf("after round %d", r), replicationOf(a, table), lagZero(a, table))
		for _, id := range []int{r % 10, 10 + r%10, 100 + r, 5000 + r, 7, 1999} {
			q := fmt.Sprintf("SELECT * FROM pi_cdc WHERE id = %d", id)
			deadline := time.Now().Add(10 * time.Second)
			for {
				got := read(id)
				route := lastRoute(t, c, true)
				if want := simpleDump(t, direct, q); got != want {
					t.Fatalf("round %d, %s: %s, want %s (%s)", r, q, got, want, route)
				}
				if route == "accelerated (point index)" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d, %s: routed %q, not from the point index", r, q, route)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	st := pointIndexOf(t, a, table)
	t.Logf("point index: %+v", st)
	if st == nil || st.Builds != 1 || st.Follows < 10 || !st.Current || st.Rows != 2000 {
		t.Errorf("point index status %+v: want one build, at least 10 batches followed, 2000 rows", st)
	}
}

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// The results cache (issue 19): a repeated accelerated statement is
// answered from the cache with the bytes DuckDB's answer had, which are
// the origin's; settings, formats, parameters and protocols each get
// their own entry; an entry is never served after the dataset changed; a
// role without privilege never gets another role's answer; SET
// pgaccel.cache = off bypasses it.
func TestResultsCache_RepeatedStatementsAreExact(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS rc_items;
		CREATE TABLE rc_items (id int PRIMARY KEY, ts timestamptz, amount numeric(12,2), name text, b bytea, d date);
		INSERT INTO rc_items SELECT g, '2026-03-01 12:00:00+00'::timestamptz + g * interval '7 hours', g * 1.25, 'n' || g,
			decode(md5(g::text), 'hex'), '2026-01-01'::date + g FROM generate_series(1, 200) g;
		GRANT SELECT ON rc_items TO `+appUser)
	a := startApp(t, "  - from: postgres:public.rc_items\n")
	ctx := ctxT(t)
	proxyPgx := connect(t, appDSN(a, appUser, appPass))
	proxyConn := proxyPgx.PgConn()
	direct := connect(t, origin.DSN(appUser, appPass)).PgConn()

	route := func() string { t.Helper(); return lastRoute(t, proxyPgx, true) }
	simple := func(c *pgconn.PgConn, sql string) string { t.Helper(); return simpleDump(t, c, sql) }
	extended := func(c *pgconn.PgConn, sql string, params [][]byte, resultFormats []int16) string {
		t.Helper()
		return extendedDump(t, c, sql, params, resultFormats)
	}
	// same runs a statement at the origin and twice through pgaccel:
	// DuckDB's answer, then the cache's, both the origin's.
	same := func(what string, run func(*pgconn.PgConn) string) {
		t.Helper()
		want := run(direct)
		if got := run(proxyConn); got != want {
			t.Fatalf("%s: first answer differs from the origin's:\n%s\nwant\n%s", what, got, want)
		}
		if r := route(); r != "accelerated" && !strings.HasPrefix(what, "RESET") {
			// After RESET ALL the settings are the first entry's again.
			t.Fatalf("%s: first answer routed %q", what, r)
		}
		if got := run(proxyConn); got != want {
			t.Fatalf("%s: cached answer differs from the origin's:\n%s\nwant\n%s", what, got, want)
		}
		if r := route(); r != "accelerated (cache hit)" {
			t.Fatalf("%s: second answer routed %q", what, r)
		}
	}
	const q = "SELECT id, ts, amount, name, b, d FROM rc_items WHERE id % 7 = 3 ORDER BY id"
	same("simple", func(c *pgconn.PgConn) string { return simple(c, q) })
	same("extended text", func(c *pgconn.PgConn) string { return extended(c, q, nil, nil) })
	same("extended binary", func(c *pgconn.PgConn) string { return extended(c, q, nil, []int16{1}) })
	const pq = "SELECT id, ts, amount FROM rc_items WHERE id > $1 ORDER BY id LIMIT 5"
	same("parameter 10", func(c *pgconn.PgConn) string { return extended(c, pq, [][]byte{[]byte("10")}, nil) })
	same("parameter 20", func(c *pgconn.PgConn) string { return extended(c, pq, [][]byte{[]byte("20")}, nil) })

	// Settings the answer is printed under: each its own entry.
	for _, set := range []string{"SET TimeZone = 'Asia/Kolkata'", "SET DateStyle = 'German, DMY'", "SET bytea_output = 'escape'",
		"SET IntervalStyle = 'sql_standard'", "RESET ALL"} {
		simple(proxyConn, set)
		simple(direct, set)
		same(set, func(c *pgconn.PgConn) string { return simple(c, q) })
	}

	// The dataset changes: the next answer is DuckDB's, with the new row.
	mustExec(t, "INSERT INTO rc_items VALUES (1000, now(), 1, 'new', NULL, NULL)")
	if err := a.Runner.Refresh(ctx, "rc_items"); err != nil {
		t.Fatal(err)
	}
	const cq = "SELECT count(*), max(id) FROM rc_items"
	want := simple(direct, cq)
	if !strings.Contains(want, "31303030") { // 1000
		t.Fatalf("origin: %s", want)
	}
	if got := simple(proxyConn, q); got != simple(direct, q) || route() != "accelerated" {
		t.Fatalf("after a refresh, an answer came from the cache (%s)", route())
	}
	same("after a refresh", func(c *pgconn.PgConn) string { return simple(c, cq) })
	if inv := metricSums(t, a.Metrics, "pgaccel_results_cache_invalidations_total", "dataset")["rc_items"]; inv < 1 {
		t.Errorf("invalidations of rc_items: %v", inv)
	}
	if hits := metricSums(t, a.Metrics, "pgaccel_results_cache_hits_total")[""]; hits < 10 {
		t.Errorf("hits counted: %v", hits)
	}

	// EXPLAIN is DuckDB's plan of the moment, never kept.
	for range 2 {
		simple(proxyConn, "EXPLAIN SELECT count(*) FROM rc_items")
		if r := route(); r != "accelerated" {
			t.Fatalf("EXPLAIN routed %q", r)
		}
	}

	// A role without SELECT gets the origin's refusal, not the answer.
	other := connect(t, appDSN(a, pgtest.NoAccessUser, pgtest.NoAccessPassword)).PgConn()
	if _, err := other.Exec(ctx, q).ReadAll(); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("a role without privilege: %v", err)
	}

	// pgaccel.cache = off: DuckDB answers every time.
	simple(proxyConn, "SET pgaccel.cache = off")
	for range 2 {
		if got := simple(proxyConn, cq); got != want || route() != "accelerated" {
			t.Fatalf("with pgaccel.cache = off: %s (%s)", got, route())
		}
	}
	simple(proxyConn, "RESET pgaccel.cache")
	simple(proxyConn, cq)
	if r := route(); r != "accelerated (cache hit)" {
		t.Fatalf("after RESET pgaccel.cache: %q", r)
	}
}

// simpleDump runs sql on c in the simple protocol and renders its results
// (dumpResults); extendedDump runs it in the extended protocol with params
// and resultFormats.
func simpleDump(t *testing.T, c *pgconn.PgConn, sql string) string {
	t.Helper()
	res, err := c.Exec(ctxT(t), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return dumpResults(res)
}

func extendedDump(t *testing.T, c *pgconn.PgConn, sql string, params [][]byte, resultFormats []int16) string {
	t.Helper()
	res := c.ExecParams(ctxT(t), sql, params, nil, nil, resultFormats).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", sql, res.Err)
	}
	return dumpResults([]*pgconn.Result{res})
}

// dumpResults renders results byte for byte: the columns (name, type,
// format), every value (hex; NULL apart) and the command tag.
func dumpResults(res []*pgconn.Result) string {
	var b strings.Builder
	for _, r := range res {
		for _, f := range r.FieldDescriptions {
			fmt.Fprintf(&b, "%s:%d:%d:%d ", f.Name, f.DataTypeOID, f.Format, f.TypeModifier)
		}
		b.WriteString("\n")
		for _, row := range r.Rows {
			for _, v := range row {
				if v == nil {
					b.WriteString("NULL ")
					continue
				}
				fmt.Fprintf(&b, "%x ", v)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n", r.CommandTag.String())
	}
	return b.String()
}

// A change batch of a refresh_mode: changes dataset drops the entries
// that read it: a repeated statement sees each change as DuckDB does.
func TestResultsCache_ChangeBatchesInvalidate(t *testing.T) {
	dropCDCSlots(t, "rc_cdc")
	t.Cleanup(func() { dropCDCSlots(t, "rc_cdc") }) // after the instance stops
	mustExec(t, `DROP TABLE IF EXISTS rc_cdc;
		CREATE TABLE rc_cdc (id int PRIMARY KEY, v text);
		INSERT INTO rc_cdc SELECT g, 'v' || g FROM generate_series(1, 50) g;
		GRANT SELECT ON rc_cdc TO `+appUser)
	a := startApp(t, "  - from: postgres:public.rc_cdc\n    acceleration:\n      refresh_mode: changes\n      primary_key: id\n")
	ctx := ctxT(t)
	c := connect(t, appDSN(a, appUser, appPass)).PgConn()
	count := func() (string, string) {
		t.Helper()
		res, err := c.Exec(ctx, "SELECT count(*) FROM rc_cdc").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Exec(ctx, "SHOW pgaccel.last_route").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return string(res[0].Rows[0][0]), string(r[0].Rows[0][0])
	}
	if n, _ := count(); n != "50" {
		t.Fatalf("count %s", n)
	}
	if n, r := count(); n != "50" || r != "accelerated (cache hit)" {
		t.Fatalf("repeated: %s (%s)", n, r)
	}
	for i, want := range []string{"51", "50"} {
		if i == 0 {
			mustExec(t, "INSERT INTO rc_cdc VALUES (51, 'new')")
		} else {
			mustExec(t, "DELETE FROM rc_cdc WHERE id = 51")
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			n, r := count()
			if n == want && strings.HasPrefix(r, "accelerated") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a change batch the count stays %s (%s), want %s", n, r, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

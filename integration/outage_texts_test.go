package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestSessions_NewTextsThroughOutage: statements whose text was never
// seen before the origin stopped, but whose shape was (the same statement
// with other values in its WHERE clause, as a dashboard's filters or
// Grafana's time ranges make them), are answered from the acceleration
// during the outage, through psql and pgx (simple and extended protocol).
func TestSessions_NewTextsThroughOutage(t *testing.T) {
	setupProxyAuth(t)
	for _, mode := range []string{"origin", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			a, _ := startSessionsApp(t, mode, "origin", t.TempDir(), "60s", true)
			dsn := appDSN(a, sessUser, sessPass)
			ctx := ctxT(t)
			ps := startPsql(t, dsn)
			ext := connect(t, dsn)
			simple := connectSimple(t, dsn)
			countOver := func(q interface {
				QueryRow(context.Context, string, ...any) pgx.Row
			}, sql string) (int64, error) {
				var n int64
				err := q.QueryRow(ctx, sql).Scan(&n)
				return n, err
			}
			if got := ps.run("SELECT count(*) FROM sess_orders WHERE id > 100 AND v <> 'x'"); got != "100" {
				t.Fatalf("psql before the outage: %q", got)
			}
			for _, q := range []*pgx.Conn{ext, simple} {
				if n, err := countOver(q, "SELECT count(*) FROM sess_orders WHERE id > 100 AND v <> 'x'"); err != nil || n != 100 {
					t.Fatalf("before the outage: %d %v", n, err)
				}
			}
			resume := origin.PauseDuring(t)
			if got := ps.run("SELECT count(*) FROM sess_orders WHERE id > 150 AND v <> 'y'"); got != "50" {
				t.Errorf("psql, a new text during the outage: %q", got)
			}
			for name, q := range map[string]*pgx.Conn{"extended": ext, "simple": simple} {
				for i, over := range []int{160, 170} {
					sql := fmt.Sprintf("SELECT count(*) FROM sess_orders WHERE id > %d AND v <> 'z%d'", over, i)
					if n, err := countOver(q, sql); err != nil || n != int64(200-over) {
						t.Errorf("%s, a new text during the outage: %d %v", name, n, err)
					}
				}
			}
			// pgjdbc-style: a named statement prepared during the outage.
			named := ext.PgConn()
			if _, err := named.Prepare(ctx, "S_new", "SELECT count(*) FROM sess_orders WHERE id > 190 AND v <> 'q'", nil); err != nil {
				t.Errorf("prepare during the outage: %v", err)
			} else if res := named.ExecPrepared(ctx, "S_new", nil, nil, nil).Read(); res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "10" {
				t.Errorf("a named statement during the outage: %v %v", res.Rows, res.Err)
			}
			// A text of a shape never described, of a form pgaccel does
			// not describe itself (planner.Describe): ERROR 08006, and the
			// sessions go on.
			if _, err := countOver(ext, "SELECT (SELECT count(*) FROM sess_orders WHERE id > 5)"); pgErrCode(err) != "08006" {
				t.Errorf("a new shape during the outage: %v, want 08006", err)
			}
			if got := ps.run("SELECT sqrt(id), 2 FROM sess_orders LIMIT 1"); !strings.Contains(got, "origin is unavailable") {
				t.Errorf("psql, a new shape during the outage: %q", got)
			}
			if got := ps.run("SELECT count(*) FROM sess_orders WHERE id > 199 AND v <> ''"); got != "1" {
				t.Errorf("psql after the failed one: %q", got)
			}
			if n, err := countOver(ext, "SELECT count(*) FROM sess_orders WHERE id > 198 AND v <> 'a'"); err != nil || n != 2 {
				t.Errorf("extended after the failed one: %d %v", n, err)
			}

			if err := resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			waitOriginBack(t)
			if mode == "origin" {
				return // its sessions cannot log in again (TestSessions_PsqlAndPointReadsThroughOutage)
			}
			// The origin returns: the statement prepared during the outage
			// is set up there when a transaction that wrote runs it.
			time.Sleep(originRetry)
			tx, err := ext.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('texts')"); err != nil {
				t.Fatal(err)
			}
			if res := named.ExecPrepared(ctx, "S_new", nil, nil, nil).Read(); res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "10" {
				t.Errorf("the named statement at the origin: %v %v", res.Rows, res.Err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := countOver(ext, "SELECT count(*) FROM sess_orders WHERE id > 160 AND v <> 'z0'"); err != nil || n != 40 {
				t.Errorf("after the origin returned: %d %v", n, err)
			}
		})
	}
}

// describedReads are reads of forms planner.Describe works out, over a
// table of many types (with a dropped column, so that attnums are not
// positions, and a domain), each text new to pgaccel when the origin
// stops.
var describedReads = []string{
	"SELECT * FROM sess_types ORDER BY id",
	"SELECT id, c AS amount, h, m, t.iv FROM sess_types t WHERE id < 5 ORDER BY id",
	"SELECT t.*, o.v FROM sess_types t JOIN sess_orders o ON o.id = t.id ORDER BY t.id",
	"SELECT o.* FROM sess_orders o LEFT JOIN sess_types t ON t.id = o.id WHERE o.id BETWEEN 3 AND 12 ORDER BY o.id",
	"SELECT count(*), count(f), sum(a), sum(b), sum(c), avg(a), avg(c), avg(b), sum(m) FROM sess_types",
	"SELECT min(g), min(i), max(j), max(k), min(c), max(a), min(f), max(iv) FROM sess_types",
	"SELECT f, count(*) AS n, max(c) AS top, sum(DISTINCT a) FROM sess_types GROUP BY f ORDER BY f",
	"SELECT count(*)::int AS n, max(c)::numeric(14,2), g::text, b::numeric FROM sess_types GROUP BY g, b ORDER BY g",
	"SELECT l, count(id) FROM sess_types GROUP BY l ORDER BY l",
	"SELECT pg_catalog.count(*) AS rows, v FROM sess_orders WHERE id < 4 GROUP BY v ORDER BY v",
	// As BI tools write them (Metabase: schema.table.column, date_trunc; Tableau: count(1), quoted aliases).
	`SELECT "public"."sess_types"."f" AS "f", date_trunc('day', "public"."sess_types"."j") AS "j", count(1) AS "count" FROM "public"."sess_types" GROUP BY 1, 2 ORDER BY 1, 2 LIMIT 7`,
	`SELECT date_trunc('month', k), date_trunc('week', i) AS "wk:ok" FROM sess_types t GROUP BY 1, 2 ORDER BY 1, 2`,
	`SELECT CAST(j AS date), count(*) FROM sess_types GROUP BY 1 ORDER BY 1`,
	`SELECT f, COALESCE(sum(a), 0) AS total FROM sess_types GROUP BY f ORDER BY f`,
	`SELECT SUM(1) AS "sum:Number of Records:ok" FROM sess_types`,
	`SELECT round(c, 1), round(c), upper(f), lower(g), length(g), extract(year FROM i), extract(hour FROM j), date_part('day', k) FROM sess_types WHERE id < 6 ORDER BY id`,
	`SELECT id * 2 + 1 AS k, -b, c * a, 2.5 * a, 'lbl' AS label, 7, 12345678901, id / 2, f || g, a + b FROM sess_types WHERE id < 4 ORDER BY id`,
	`SELECT sum(b) / count(*), sum(c) / 2, max(a) - min(a) FROM sess_types`,
	// Superset wraps a virtual dataset's query, Metabase a nested question's.
	`SELECT virtual_table.f AS f, count(*) AS count, max(virtual_table.j) FROM (SELECT f, a, j FROM sess_types WHERE a > 1) AS virtual_table GROUP BY virtual_table.f ORDER BY count DESC, f LIMIT 10`,
	`SELECT "source"."f" AS "f", "source"."n" AS "n", "source".top FROM (SELECT f, count(*) AS n, max(c) AS top FROM sess_types GROUP BY f) "source" ORDER BY "source"."f"`,
	`SELECT s.* FROM (SELECT id, b * 2 AS b2, m, g FROM sess_types) s WHERE s.id < 3 ORDER BY s.id`,
	`WITH recent AS (SELECT id, f, c FROM sess_types WHERE id > 30), totals AS (SELECT f, sum(c) AS total FROM recent GROUP BY f) SELECT t.f, t.total, r.id, r.c FROM totals t JOIN recent r ON r.f = t.f ORDER BY r.id`,
	`SELECT -2147483648, 2147483648, -0.5, 'x'::text, '2024-03-01'::date AS d, id FROM sess_types WHERE id = 1`,
	`SELECT "sess_types"."l" AS "l", SUM("sess_types"."c") AS "sum:c:ok" FROM "public"."sess_types" "sess_types" GROUP BY 1 ORDER BY 1`,
	// Window functions, CASE, COALESCE, GREATEST and LEAST, set operations, scalar subqueries and EXISTS, functions of text.
	`SELECT id, row_number() OVER (ORDER BY id DESC), rank() OVER (PARTITION BY f ORDER BY a), dense_rank() OVER (ORDER BY a), ntile(3) OVER (ORDER BY id), count(*) OVER (), max(c) OVER (PARTITION BY f) FROM sess_types ORDER BY id`,
	`SELECT id, lag(c) OVER (ORDER BY id), lead(g, 2) OVER (ORDER BY id) AS next2, first_value(j) OVER (ORDER BY id), last_value(i) OVER (ORDER BY id) FROM sess_types WHERE id < 8 ORDER BY id`,
	`SELECT id, CASE WHEN a > 3 THEN 'high' WHEN a > 1 THEN 'mid' ELSE 'low' END AS band, CASE WHEN l THEN c END, CASE f WHEN 'f1' THEN b ELSE a END, CASE WHEN id % 2 = 0 THEN true ELSE false END, CASE WHEN l THEN c ELSE c END FROM sess_types WHERE id < 10 ORDER BY id`,
	`SELECT coalesce(f, 'none'), coalesce(c, 0.5), coalesce(a, b), greatest(a, 2), least(c, 10), coalesce(c, c) FROM sess_types WHERE id < 5 ORDER BY id`,
	`SELECT id, f FROM sess_types WHERE id < 3 UNION ALL SELECT id, v FROM sess_orders WHERE id < 3 ORDER BY 1, 2`,
	`SELECT a FROM sess_types UNION SELECT id FROM sess_orders WHERE id < 10 ORDER BY 1`,
	`SELECT g, id FROM sess_types WHERE id < 3 INTERSECT SELECT g, id FROM sess_types ORDER BY 1`,
	`SELECT g FROM sess_types EXCEPT SELECT g FROM sess_types WHERE id > 2 ORDER BY 1`,
	`SELECT id, (SELECT max(amount) FROM sess_orders) AS top, (SELECT v FROM sess_orders o WHERE o.id = t.id), EXISTS (SELECT 1 FROM sess_orders o WHERE o.id = t.id * 10) FROM sess_types t WHERE id < 5 ORDER BY id`,
	`SELECT concat(f, '-', id), substr(g, 2), replace(f, 'f', 'F'), left(g, 2), md5(f), abs(a), abs(c) FROM sess_types WHERE id < 4 ORDER BY id`,
	// Aggregates and functions of expressions, nullif, comparisons, more aggregates.
	`SELECT f, round(avg(c), 2), sum(a * 2), max(j::date), round(sum(c) / nullif(count(*), 0), 3), date_trunc('day', max(j)), bool_and(a > 1), bool_or(l) FROM sess_types GROUP BY f ORDER BY f`,
	`SELECT id, id > 3, c <= a, f = 'f1' AS is_f1, nullif(a, 0), nullif(f, 'f1'), ceil(c), floor(c), trunc(c, 1), upper(f || g) FROM sess_types WHERE id < 6 ORDER BY id`,
	`SELECT string_agg(g, '; '), stddev(a), variance(b) FROM sess_types WHERE id < 3`,
	// Dates, times and intervals (Superset's time grains).
	`SELECT id, j + interval '1 day', date_trunc('week', j + INTERVAL '1 day') - INTERVAL '1 day' AS wk, i + 7, i - DATE '2024-01-01', i + interval '1 hour' FROM sess_types WHERE id < 4 ORDER BY id`,
	// lag/lead with a default, ORDER BY in an aggregate, ordered-set aggregates.
	`SELECT id, lag(b, 1, 0) OVER (ORDER BY id), lead(id, 2, -1) OVER (ORDER BY id) FROM sess_types WHERE id < 6 ORDER BY id`,
	`SELECT f, string_agg(g, ',' ORDER BY id), percentile_cont(0.5) WITHIN GROUP (ORDER BY a), percentile_disc(0.5) WITHIN GROUP (ORDER BY j), mode() WITHIN GROUP (ORDER BY l) FROM sess_types GROUP BY f ORDER BY f`,
	// JSON operators, arrays, trim and position.
	`SELECT id, js ->> 'k' AS k, js -> 'n', (js ->> 'n')::int + 1, js #>> '{arr,0}', js ? 'k', jsonb_typeof(js -> 'arr'), jsonb_array_length(js -> 'arr') FROM sess_docs ORDER BY id`,
	`SELECT id, array_length(tags, 1), cardinality(tags), trim(note), btrim(note, ' '), ltrim(note), strpos(note, 'note'), position('no' IN note) FROM sess_docs ORDER BY id`,
	// Columns cast to their own type (Tableau's CAST(col AS TEXT)), with their typmod and without.
	`SELECT CAST("sess_types"."f" AS TEXT) AS "f", id::int, g::varchar, c::numeric, CAST(i AS DATE), count(*) OVER ()::bigint FROM sess_types WHERE id < 3 ORDER BY id`,
}

// describedParamReads are reads with parameters whose types the planner
// works out (planner.Describe), with their arguments in text form.
var describedParamReads = []struct {
	sql  string
	args []any
}{
	{"SELECT id, f FROM sess_types WHERE id = $1 OR g <> $2 AND id < 9 ORDER BY id", []any{"3", "g4"}},
	{"SELECT count(*) FROM sess_types WHERE a BETWEEN $1 AND $2 OR c > $3", []any{"2", "4", "40.5"}},
	{"SELECT id FROM sess_types WHERE j >= $1 AND i < $2 AND l = $3 AND b IN ($4, $5) ORDER BY id LIMIT $6",
		[]any{"2024-01-01 03:00+00", "2024-02-01", "true", "4000012", "8000024", "1"}},
	{"SELECT count(*) FROM sess_types WHERE iv > $1 AND m <= $2 AND f <> $3", []any{"3 days", "15.5", "f1"}},
	{"SELECT id FROM sess_types WHERE id + 1 = $1 OR lower(f) = $2 AND a * 2 > $3 ORDER BY id", []any{"3", "f1", "5"}},
	{"SELECT id FROM sess_types WHERE f LIKE $1 AND g NOT ILIKE $2 ORDER BY id", []any{"f%", "G1%"}},
	{"SELECT id, g FROM sess_types WHERE id = ANY($1) OR g = ANY($2) ORDER BY id", []any{"{1,2,3}", "{g10,g20}"}},
	{"SELECT f, count(*) FROM sess_types GROUP BY f HAVING count(*) > $1 AND sum(c) < $2 ORDER BY f", []any{"2", "1000"}},
	{"SELECT t.id FROM sess_types t JOIN sess_orders o ON o.id = t.id AND o.v <> $1 WHERE t.a < $2 ORDER BY t.id", []any{"x", "4"}},
	{"SELECT id FROM sess_types WHERE id IN (SELECT id FROM sess_orders WHERE v = $1 OR id > $2) ORDER BY id", []any{"x", "35"}},
	{"WITH w AS (SELECT id, f FROM sess_types WHERE a >= $1) SELECT f, count(*) FROM w GROUP BY f ORDER BY f LIMIT $2", []any{"3", "2"}},
	{"SELECT s.f, s.n FROM (SELECT f, count(*) AS n FROM sess_types WHERE g <> $1 GROUP BY f) s WHERE s.n > $2 ORDER BY s.f", []any{"g1", "3"}},
	{"SELECT id FROM sess_types WHERE l = $1 UNION ALL SELECT id FROM sess_orders WHERE id < $2 ORDER BY 1", []any{"true", "3"}},
	{"SELECT $1::text AS label, id, count(*) OVER () FROM sess_types WHERE j >= $2::timestamptz AND j < $3::timestamptz AND id <> $4::int8 ORDER BY id",
		[]any{"hello", "2024-01-01 05:00+00", "2024-01-02 00:00+00", "7"}},
}

// TestSessions_DescribesNewReadsThroughOutage: reads of a form the
// planner can describe itself (planner.Describe) are answered from the
// acceleration during an outage although neither their text nor their
// description shape was seen before, some of a table the sessions never
// read before the outage, through the simple and the extended
// protocol (the unnamed statement and a named one), with the origin's
// row description, byte for byte, and its rows. A form it cannot describe
// still gets 08006.
func TestSessions_DescribesNewReadsThroughOutage(t *testing.T) {
	setupProxyAuth(t)
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS sess_types; DROP DOMAIN IF EXISTS sess_money;
		CREATE DOMAIN sess_money AS numeric(10,2) CHECK (VALUE >= 0);
		CREATE TABLE sess_types (id int PRIMARY KEY, gone int, a smallint, b bigint, c numeric(12,3), f text,
			g varchar(20), h char(5), i date, j timestamptz, k timestamp, l bool, m sess_money, iv interval);
		ALTER TABLE sess_types DROP COLUMN gone;
		INSERT INTO sess_types SELECT g, g %% 7, g * 1000003, g * 1.125, 'f' || (g %% 3), 'g' || g, 'h' || (g %% 4),
			date '2024-01-01' + g, timestamptz '2024-01-01 00:00+00' + g * interval '1 hour',
			timestamp '2024-02-01' + g * interval '1 minute', g %% 2 = 0, g * 0.5, g * interval '1 day'
			FROM generate_series(1, 40) g;
		GRANT SELECT ON sess_types TO %s;`, sessUser))
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS sess_docs;
		CREATE TABLE sess_docs (id int PRIMARY KEY, js jsonb, tags text[], note text);
		INSERT INTO sess_docs SELECT g, jsonb_build_object('k', 'v' || g, 'n', g, 'arr', jsonb_build_array(g, g + 1)),
			ARRAY['t' || g, 'u'], '  note ' || g || '  ' FROM generate_series(1, 5) g;
		GRANT SELECT ON sess_docs TO %s;`, sessUser))
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS sess_types, sess_docs; DROP DOMAIN IF EXISTS sess_money") })
	a := startAppText(t, fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
auth:
  mode: proxy
  cache_ttl: 60s
  max_stale: 1h
runtime:
  data_dir: %q
datasets:
  - from: postgres:public.sess_orders
  - from: postgres:public.sess_types
  - from: postgres:public.sess_docs
`, origin.SuperDSN(), t.TempDir()))
	t.Cleanup(func() { shutdownApp(t, a) })
	ctx := ctxT(t)
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := appDSN(a, sessUser, sessPass)
	simple, ext := connectSimple(t, dsn), connect(t, dsn)
	// A first read through each, of sess_orders only: the lookups it
	// makes at the origin (the table's name on the session's path, the
	// role's privilege) ask about sess_types too.
	for _, c := range []*pgx.Conn{simple, ext} {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM sess_orders").Scan(&n); err != nil || n != 200 {
			t.Fatalf("a first read: %d %v", n, err)
		}
	}
	// While the origin answers, its descriptions of new texts are
	// checked against the planner's (proxy.checkDerived).
	if got := metricSums(t, a.Metrics, "pgaccel_derived_descriptions_total", "result"); got["matched"] < 2 || got["differed"] != 0 {
		t.Errorf("descriptions checked: %v, want 2 or more matched, none differed", got)
	}
	// The origin's answers, read directly.
	type answer struct {
		fields []pgconn.FieldDescription
		rows   [][][]byte
	}
	want := make([]answer, len(describedReads))
	oc := originConn(t)
	if _, err := oc.Exec(ctx, "SET ROLE "+sessUser); err != nil {
		t.Fatal(err)
	}
	for i, sql := range describedReads {
		res, err := oc.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			t.Fatalf("%s at the origin: %v", sql, err)
		}
		want[i] = answer{fields: res[0].FieldDescriptions, rows: res[0].Rows}
	}
	type prepared struct {
		params []uint32
		fields []pgconn.FieldDescription
		rows   [][][]byte
	}
	wantParams := make([]prepared, len(describedParamReads))
	for i, c := range describedParamReads {
		sd, err := oc.PgConn().Prepare(ctx, "", c.sql, nil)
		if err != nil {
			t.Fatalf("%s at the origin: %v", c.sql, err)
		}
		res := oc.PgConn().ExecParams(ctx, c.sql, textArgs(c.args), nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatalf("%s at the origin: %v", c.sql, res.Err)
		}
		wantParams[i] = prepared{params: sd.ParamOIDs, fields: sd.Fields, rows: res.Rows}
	}
	before := routeCounts(t, a)

	resume := origin.PauseDuring(t)
	defer func() {
		if err := resume(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitOriginBack(t)
	}()
	check := func(how, sql string, fields []pgconn.FieldDescription, rows [][][]byte, w answer) {
		t.Helper()
		if fmt.Sprint(fields) != fmt.Sprint(w.fields) {
			t.Errorf("%s, %s: row description\n got %v\nwant %v", how, sql, fields, w.fields)
		}
		if fmt.Sprintf("%q", rows) != fmt.Sprintf("%q", w.rows) {
			t.Errorf("%s, %s: rows\n got %q\nwant %q", how, sql, rows, w.rows)
		}
	}
	for i, sql := range describedReads {
		res, err := simple.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			t.Errorf("simple, %s: %v", sql, err)
		} else {
			check("simple", sql, res[0].FieldDescriptions, res[0].Rows, want[i])
		}
		// The same text again, now in the extended protocol: the simple
		// Query's description was not kept, so it is worked out again.
		r := ext.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Read()
		if r.Err != nil {
			t.Errorf("extended, %s: %v", sql, r.Err)
		} else {
			check("extended", sql, r.FieldDescriptions, r.Rows, want[i])
		}
		name := fmt.Sprintf("described_%d", i)
		sd, err := ext.PgConn().Prepare(ctx, name, sql+" ", nil)
		if err != nil {
			t.Errorf("prepare, %s: %v", sql, err)
			continue
		}
		if fmt.Sprint(sd.Fields) != fmt.Sprint(want[i].fields) {
			t.Errorf("prepare, %s: row description\n got %v\nwant %v", sql, sd.Fields, want[i].fields)
		}
		r = ext.PgConn().ExecPrepared(ctx, name, nil, nil, nil).Read()
		if r.Err != nil {
			t.Errorf("named, %s: %v", sql, r.Err)
		} else {
			check("named", sql, r.FieldDescriptions, r.Rows, want[i])
		}
	}
	// With parameters, pgx's way (Parse without types, Describe) and a
	// named statement's.
	for i, c := range describedParamReads {
		w := wantParams[i]
		sd, err := ext.PgConn().Prepare(ctx, fmt.Sprintf("described_p%d", i), c.sql, nil)
		if err != nil {
			t.Errorf("prepare, %s: %v", c.sql, err)
			continue
		}
		if fmt.Sprint(sd.ParamOIDs) != fmt.Sprint(w.params) || fmt.Sprint(sd.Fields) != fmt.Sprint(w.fields) {
			t.Errorf("prepare, %s: described as %v %v\nwant %v %v", c.sql, sd.ParamOIDs, sd.Fields, w.params, w.fields)
		}
		r := ext.PgConn().ExecPrepared(ctx, sd.Name, textArgs(c.args), nil, nil).Read()
		if r.Err != nil {
			t.Errorf("named, %s: %v", c.sql, r.Err)
		} else {
			check("named", c.sql, r.FieldDescriptions, r.Rows, answer{fields: w.fields, rows: w.rows})
		}
		r = ext.PgConn().ExecParams(ctx, c.sql, textArgs(c.args), nil, nil, nil).Read()
		if r.Err != nil {
			t.Errorf("extended, %s: %v", c.sql, r.Err)
		} else {
			check("extended", c.sql, r.FieldDescriptions, r.Rows, answer{fields: w.fields, rows: w.rows})
		}
	}
	wantAccel := float64(3*len(describedReads) + 2*len(describedParamReads))
	if got := routeCounts(t, a); got["accelerated"]-before["accelerated"] != wantAccel {
		t.Errorf("accelerated during the outage: %v -> %v, want %v more", before, got, wantAccel)
	}
	if got := metricSums(t, a.Metrics, "pgaccel_derived_descriptions_total", "result"); got["used"] < float64(len(describedReads)) || got["differed"] != 0 {
		t.Errorf("descriptions worked out: %v", got)
	}
	// Forms it does not work out: 08006, and the session goes on.
	for _, sql := range []string{"SELECT sqrt(b) FROM sess_types", "SELECT tags[1] FROM sess_docs", "SELECT array_agg(id) FROM sess_types"} {
		if _, err := simple.Exec(ctx, sql); pgErrCode(err) != "08006" {
			t.Errorf("%s during the outage: %v, want 08006", sql, err)
		}
	}
	var n int64
	if err := simple.QueryRow(ctx, "SELECT count(*) FROM sess_types WHERE l").Scan(&n); err != nil || n != 20 {
		t.Errorf("after the refused ones: %d %v", n, err)
	}
}

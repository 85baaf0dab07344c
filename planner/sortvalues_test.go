package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// valsConfig has one dataset, public.vals, whose columns valsRegistry
// types: the types whose values sort, compare or print in ways of their
// own (floats and their -0, intervals, numerics).
const valsConfig = `
origin:
  dsn: postgres://app@localhost/shop
datasets:
  - from: postgres:public.vals
  - from: postgres:public.other
`

// valsRegistry is valsConfig's registry, loaded: vals(id int4, i2 int2,
// f float8, r float4, fa float8[], iv interval, iva interval[], n
// numeric(12,2), txt text, ts timestamp, tz timestamptz, d date) and
// other(id int4, f float8, iv interval).
func valsRegistry(t testing.TB) *catalog.Registry {
	t.Helper()
	col := func(name string, oid uint32, typeName string, mod int32) catalog.ColumnInfo {
		return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeName: typeName, TypeMod: mod, Accelerated: true, BinaryCollation: true}
	}
	return valsWith(t, map[string][]catalog.ColumnInfo{
		"vals": {col("id", 23, "integer", -1), col("i2", 21, "smallint", -1), col("f", 701, "double precision", -1),
			col("r", 700, "real", -1), col("fa", 1022, "double precision[]", -1), col("iv", 1186, "interval", -1),
			col("iva", 1187, "interval[]", -1), col("n", 1700, "numeric(12,2)", (12<<16|2)+4), col("txt", 25, "text", -1),
			col("ts", 1114, "timestamp without time zone", -1), col("tz", 1184, "timestamp with time zone", -1),
			col("d", 1082, "date", -1)},
		"other": {col("id", 23, "integer", -1), col("f", 701, "double precision", -1), col("iv", 1186, "interval", -1)},
	})
}

func valsResolver() *fakeResolver {
	r := newFakeResolver()
	r.schemas["public"]["vals"] = true
	r.schemas["public"]["other"] = true
	return r
}

// sortCase is a read of vals, the route it must take, and texts its
// rewritten SQL must and must not hold.
type sortCase struct {
	sql           string
	route         Route
	want, notWant []string
}

func checkSortCases(t *testing.T, cases []sortCase) {
	t.Helper()
	checkPlanCases(t, New(valsRegistry(t), valsResolver(), Options{}), defaultSession(), cases)
}

// checkPlanCases plans each case with p for session s and checks its route
// and rewritten SQL.
func checkPlanCases(t *testing.T, p *Planner, s *Session, cases []sortCase) {
	t.Helper()
	for _, c := range cases {
		d := p.Plan(context.Background(), c.sql, s)
		if d.Route != c.route {
			t.Errorf("%s: route %v (%s: %s), want %v\n  SQL %s", c.sql, d.Route, d.Reason, d.Detail, c.route, d.SQL)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(d.SQL, w) {
				t.Errorf("%s:\n  SQL %s\n  lacks %s", c.sql, d.SQL, w)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(d.SQL, w) {
				t.Errorf("%s:\n  SQL %s\n  holds %s", c.sql, d.SQL, w)
			}
		}
	}
}

// TestPlan_ExactAvgSortsByValue: ORDER BY and DISTINCT ON an exact avg
// output sort by its numeric value, not by its text (F16); SELECT
// DISTINCT of one goes to the origin.
func TestPlan_ExactAvgSortsByValue(t *testing.T) {
	key := "pgaccel_numeric_sortkey(pgaccel_numeric_avg(sum(i2)::text, count(i2)))"
	checkSortCases(t, []sortCase{
		{sql: "SELECT n, avg(i2) AS a FROM vals GROUP BY n ORDER BY 2, 1", route: RouteAccelerate, want: []string{"ORDER BY " + key}},
		{sql: "SELECT n, avg(i2) AS a FROM vals GROUP BY n ORDER BY a DESC", route: RouteAccelerate, want: []string{"ORDER BY " + key + " DESC"}},
		{sql: "SELECT n, avg(i2) FROM vals GROUP BY n ORDER BY avg, n", route: RouteAccelerate, want: []string{"ORDER BY " + key}},
		{sql: "SELECT DISTINCT ON (2) n, avg(i2) FROM vals GROUP BY n ORDER BY 2, 1", route: RouteAccelerate, want: []string{"DISTINCT ON (" + key + ")"}},
		{sql: "SELECT id, avg(i2) OVER (PARTITION BY n) FROM vals ORDER BY 2", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_numeric_sortkey("}},
		{sql: "SELECT n, avg(i2) FROM vals GROUP BY n ORDER BY 1", route: RouteAccelerate, notWant: []string{"sortkey"}},
		{sql: "SELECT DISTINCT avg(i2) FROM vals GROUP BY n", route: RouteOrigin},
	})
}

// TestPlan_FloatSortsKeepNegativeZero: every sort key that may hold a
// float sorts by a copy DuckDB does not return its values from (F13).
func TestPlan_FloatSortsKeepNegativeZero(t *testing.T) {
	const sh = "CASE WHEN"
	checkSortCases(t, []sortCase{
		{sql: "SELECT id, '-0'::float4 AS z FROM vals ORDER BY 1, 2", route: RouteAccelerate, want: []string{"ORDER BY 1 NULLS LAST, CASE WHEN '-0'::float4 IS NULL THEN NULL ELSE '-0'::float4 END NULLS LAST"}},
		{sql: "SELECT fa FROM vals ORDER BY 1", route: RouteAccelerate, want: []string{"ORDER BY CASE WHEN fa IS NULL THEN NULL ELSE fa END"}},
		{sql: "SELECT f AS x FROM vals ORDER BY x DESC", route: RouteAccelerate, want: []string{"ORDER BY CASE WHEN f IS NULL THEN NULL ELSE f END DESC"}},
		{sql: "SELECT DISTINCT ON (1) f, id FROM vals ORDER BY 1 DESC, 2", route: RouteAccelerate, want: []string{"ORDER BY " + sh}},
		// Without a key past DISTINCT ON's, which of -0 and 0 is kept
		// is each engine's own.
		{sql: "SELECT DISTINCT ON (1) f FROM vals ORDER BY 1 DESC", route: RouteOrigin},
		{sql: "SELECT id, lag(f) OVER (ORDER BY f, id) FROM vals", route: RouteAccelerate, want: []string{"OVER (ORDER BY " + sh}},
		{sql: "SELECT id, sum(id) OVER (PARTITION BY r ORDER BY id) FROM vals", route: RouteAccelerate, want: []string{"PARTITION BY " + sh}},
		{sql: "SELECT array_agg(f ORDER BY f) FROM vals", route: RouteAccelerate, want: []string{"array_agg(f ORDER BY " + sh}},
		{sql: "SELECT txt, min(f) AS m FROM vals GROUP BY txt ORDER BY m, txt", route: RouteAccelerate, want: []string{"ORDER BY CASE WHEN min(f) IS NULL THEN NULL ELSE min(f) END"}},
		{sql: "SELECT x.f FROM (SELECT f FROM vals ORDER BY f LIMIT 3) x", route: RouteAccelerate, want: []string{"ORDER BY " + sh}},
		{sql: "SELECT f FROM vals UNION ALL SELECT f FROM other ORDER BY 1", route: RouteAccelerate,
			want: []string{"SELECT * FROM (SELECT f FROM ds_vals.main.vals vals UNION ALL SELECT f FROM ds_other.main.other other) pgaccel_setop(c1) ORDER BY CASE WHEN pgaccel_setop.c1 IS NULL"}},
		{sql: "SELECT id, txt FROM vals UNION SELECT id, txt FROM other ORDER BY 1", route: RouteAccelerate, notWant: []string{sh}},
		{sql: "SELECT id, txt, d FROM vals ORDER BY id, 2, d", route: RouteAccelerate, notWant: []string{sh}},
		{sql: "SELECT id, f FROM vals ORDER BY id", route: RouteAccelerate, notWant: []string{sh}},
		{sql: "SELECT * FROM vals ORDER BY 3", route: RouteOrigin},
		{sql: "SELECT f * '-0'::float8, f * 0 FROM vals", route: RouteOrigin},
		{sql: "SELECT f * '-0'::float8 FROM vals ORDER BY 1", route: RouteAccelerate, want: []string{"ORDER BY " + sh}},
		// DuckDB's normalized values that no copy of a sort key avoids.
		{sql: "SELECT GREATEST(f, -1), LEAST(f, r, 1) FROM vals", route: RouteAccelerate,
			want: []string{"CASE WHEN -1 IS NULL THEN f WHEN f IS NULL THEN -1 WHEN -1 > f THEN -1 ELSE f END"}, notWant: []string{"GREATEST", "LEAST"}},
		{sql: "SELECT GREATEST(id, 2) FROM vals", route: RouteAccelerate, want: []string{"GREATEST(id, 2)"}},
		{sql: "SELECT f FROM vals INTERSECT ALL SELECT f FROM other", route: RouteOrigin},
		{sql: "SELECT id FROM vals EXCEPT ALL SELECT id FROM other", route: RouteAccelerate},
		{sql: "SELECT id % 2, min(fa) FROM vals GROUP BY 1", route: RouteOrigin},
		{sql: "SELECT min(ARRAY[f]) FROM vals", route: RouteOrigin},
		{sql: "SELECT min(f), max(txt) FROM vals", route: RouteAccelerate},
		{sql: "SELECT DISTINCT ON (id % 2) id % 2, fa FROM vals ORDER BY id % 2, id", route: RouteOrigin},
		{sql: "SELECT DISTINCT ON (id % 2) id % 2, f FROM vals ORDER BY id % 2, id", route: RouteAccelerate},
		{sql: "SELECT id, (SELECT fa FROM other LIMIT 1) FROM vals", route: RouteOrigin},
		{sql: "SELECT id, ARRAY(SELECT f FROM other ORDER BY id) FROM vals", route: RouteOrigin},
		{sql: "SELECT id, (SELECT f FROM other ORDER BY id LIMIT 1), ARRAY(SELECT id FROM other) FROM vals", route: RouteAccelerate},
	})
}

// TestPlan_IntervalsCompareBySpan: intervals order and compare by
// Postgres's span (pgaccel_interval_key), min and max return the interval
// of the least or greatest span, and what DuckDB would compare by its own
// equality goes to the origin (F28).
func TestPlan_IntervalsCompareBySpan(t *testing.T) {
	const key = "pgaccel_interval_key("
	checkSortCases(t, []sortCase{
		{sql: "SELECT id, iv FROM vals ORDER BY iv, id", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_interval_key(iv) NULLS LAST, id"}},
		{sql: "SELECT '-3 days 04:00:00'::interval + iv AS x FROM vals ORDER BY 1", route: RouteAccelerate,
			want: []string{"ORDER BY pgaccel_interval_key('-3 days 04:00:00'::interval + iv)"}},
		{sql: "SELECT id, ts - ts AS d FROM vals ORDER BY d DESC", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_interval_key(ts - ts) DESC"}},
		{sql: "SELECT id FROM vals WHERE iv < '27 days 04:00:00'", route: RouteAccelerate,
			want: []string{"pgaccel_interval_key(iv) < pgaccel_interval_key('27 days 04:00:00'::interval)"}},
		{sql: "SELECT id FROM vals WHERE iv BETWEEN interval '1 day' AND interval '2 days'", route: RouteAccelerate,
			want: []string{"pgaccel_interval_key(iv) BETWEEN pgaccel_interval_key('1 day'::interval) AND pgaccel_interval_key('2 days'::interval)"}},
		{sql: "SELECT id FROM vals WHERE iv IN ('1 day', '2 days')", route: RouteAccelerate,
			want: []string{"pgaccel_interval_key(iv) IN (pgaccel_interval_key('1 day'::interval), pgaccel_interval_key('2 days'::interval))"}},
		{sql: "SELECT id FROM vals WHERE txt = $1 AND iv > $2", route: RouteAccelerate,
			want: []string{"txt = $1 AND pgaccel_interval_key(iv) > pgaccel_interval_key($2::interval)"}},
		// = ANY of a parameter, an array whose type is not known yet: its
		// rewrite's len() and list_count() are integers (the statement
		// is planned before the Bind, at a Parse during an outage).
		{sql: "SELECT id, txt FROM vals WHERE id = ANY($1) OR txt = ANY($2) ORDER BY id", route: RouteAccelerate, want: []string{"list_count($2) < len($2)"}},
		{sql: "SELECT a.id FROM vals a JOIN other b ON a.iv = b.iv", route: RouteAccelerate, want: []string{"ON pgaccel_interval_key(a.iv) = pgaccel_interval_key(b.iv)"}},
		{sql: "SELECT min(iv), max(iv) FILTER (WHERE id > 1) FROM vals", route: RouteAccelerate,
			want: []string{"arg_min(iv, pgaccel_interval_key(iv))", "arg_max(iv, pgaccel_interval_key(iv)) FILTER (WHERE id > 1)"}},
		{sql: "SELECT id, max(iv) OVER (PARTITION BY iv ORDER BY iv) FROM vals", route: RouteAccelerate,
			want: []string{"arg_max(iv, pgaccel_interval_key(iv)) OVER (PARTITION BY pgaccel_interval_key(iv) ORDER BY pgaccel_interval_key(iv)"}},
		{sql: "SELECT NULLIF(iv, '1 mon') FROM vals", route: RouteAccelerate,
			want: []string{"CASE WHEN pgaccel_interval_key(iv) = pgaccel_interval_key('1 mon'::interval) THEN NULL ELSE iv END"}},
		{sql: "SELECT CASE iv WHEN '1 mon' THEN 1 END FROM vals", route: RouteAccelerate,
			want: []string{"CASE pgaccel_interval_key(iv) WHEN pgaccel_interval_key('1 mon'::interval) THEN 1 END"}},
		{sql: "SELECT DISTINCT ON (iv) id FROM vals ORDER BY iv, id", route: RouteAccelerate, want: []string{"DISTINCT ON (pgaccel_interval_key(iv))"}},
		{sql: "SELECT array_agg(id ORDER BY iv) FROM vals", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_interval_key(iv)"}},
		{sql: "SELECT iv FROM vals UNION ALL SELECT iv FROM other ORDER BY 1", route: RouteAccelerate, want: []string{"ORDER BY pgaccel_interval_key(pgaccel_setop.c1)"}},
		{sql: "SELECT id, txt FROM vals WHERE id > 1 ORDER BY txt", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT iv, count(*) FROM vals GROUP BY iv", route: RouteOrigin},
		{sql: "SELECT count(*) FROM vals GROUP BY ROLLUP (ts - ts)", route: RouteOrigin},
		{sql: "SELECT DISTINCT iv FROM vals", route: RouteOrigin},
		{sql: "SELECT iv FROM vals UNION SELECT iv FROM other", route: RouteOrigin},
		{sql: "SELECT greatest(iv, interval '1 day') FROM vals", route: RouteOrigin},
		{sql: "SELECT count(DISTINCT iv) FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals a JOIN other b USING (iv)", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE iv IN (SELECT iv FROM other UNION SELECT '1 day')", route: RouteAccelerate,
			want: []string{"pgaccel_interval_key(iv) IN (SELECT pgaccel_interval_key(iv) FROM ds_other.main.other other UNION SELECT pgaccel_interval_key('1 day'::interval))"}},
		{sql: "SELECT id FROM vals WHERE iv IN (SELECT id FROM other)", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE (iv, id) IN (SELECT iv, id FROM other)", route: RouteOrigin},
		{sql: "SELECT DISTINCT interval '1 day', id FROM vals", route: RouteAccelerate},
		{sql: "SELECT sum(DISTINCT interval '1 day') FROM vals GROUP BY id, interval '2 days'", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE iva @> ARRAY[iv]", route: RouteOrigin},
		{sql: "SELECT id FROM vals ORDER BY iva", route: RouteOrigin},
		{sql: "SELECT mode() WITHIN GROUP (ORDER BY iv) FROM vals", route: RouteOrigin},
	})
}

// TestPlan_CorrelatedFloatsAndIntervals: a subquery that reads an outer
// float or interval otherwise than comparing it goes to the origin
// (DuckDB runs it once per distinct outer value, F15).
func TestPlan_CorrelatedFloatsAndIntervals(t *testing.T) {
	checkSortCases(t, []sortCase{
		{sql: "SELECT id, (SELECT t.iv) FROM vals t", route: RouteOrigin},
		{sql: "SELECT id, (SELECT t.f) FROM vals t", route: RouteOrigin},
		{sql: "SELECT id, (SELECT 1 / f FROM other o WHERE o.id = t.id) FROM vals t", route: RouteAccelerate},
		{sql: "SELECT id, (SELECT 1 / t.f FROM other o WHERE o.id = t.id) FROM vals t", route: RouteOrigin},
		{sql: "SELECT id, (SELECT count(*) FROM other o WHERE o.iv = t.iv) FROM vals t", route: RouteAccelerate,
			want: []string{"pgaccel_interval_key(o.iv) = pgaccel_interval_key(t.iv)"}},
		{sql: "SELECT id, (SELECT count(*) FROM other o WHERE o.f BETWEEN t.f AND t.r AND t.iv IS NOT NULL) FROM vals t", route: RouteAccelerate},
		{sql: "SELECT id FROM vals t WHERE EXISTS (SELECT 1 FROM other o WHERE o.f < t.f)", route: RouteAccelerate},
		{sql: "SELECT id FROM vals t WHERE EXISTS (SELECT 1 FROM other o WHERE o.f < t.f * 2)", route: RouteOrigin},
		{sql: "SELECT t.id, x.v FROM vals t, LATERAL (SELECT t.iv AS v) x", route: RouteOrigin},
		{sql: "SELECT t.id, u FROM vals t, unnest(t.fa) AS x(u)", route: RouteOrigin},
		{sql: "SELECT t.id, u FROM vals t, unnest(ARRAY[t.id]) AS x(u)", route: RouteAccelerate},
		{sql: "SELECT id, (SELECT t.txt || o.txt FROM vals o WHERE o.id = t.id) FROM vals t", route: RouteAccelerate},
		{sql: "SELECT id, (SELECT max(f) FROM other WHERE other.id = vals.id) FROM vals", route: RouteAccelerate},
		{sql: "SELECT id, (SELECT x FROM (SELECT t.f AS x) s) FROM vals t", route: RouteOrigin},
		{sql: "SELECT s.x FROM (SELECT f AS x FROM vals) s WHERE s.x > (SELECT min(f) FROM other)", route: RouteAccelerate},
	})
}

// TestPlan_SortKeysOfSharedOutputs: an output column sorted by position
// and holding what the rewrites change (GREATEST of floats, an interval
// key) is rewritten once in each place.
func TestPlan_SortKeysOfSharedOutputs(t *testing.T) {
	checkSortCases(t, []sortCase{
		{sql: "SELECT DISTINCT ON (1) iv * GREATEST(f, 1), id FROM vals ORDER BY 1, 2", route: RouteAccelerate,
			want: []string{"DISTINCT ON (pgaccel_interval_key(iv * CASE WHEN"}, notWant: []string{"GREATEST"}},
		{sql: "SELECT GREATEST(f, r) AS g FROM vals ORDER BY g, 1", route: RouteAccelerate, notWant: []string{"GREATEST"}},
	})
}

// TestPlan_ValueHazardsOfMathAndArrays: exp, ln, log, sqrt, power and ^
// of a numeric (Postgres computes them in numeric), array_to_string of
// arrays other than text or integers, ROW(...) IS NULL (field by field)
// and split_part with an empty delimiter (the whole string).
func TestPlan_ValueHazardsOfMathAndArrays(t *testing.T) {
	checkSortCases(t, []sortCase{
		{sql: "SELECT sqrt(n) FROM vals", route: RouteOrigin},
		{sql: "SELECT ln(n + 1), exp(n) FROM vals", route: RouteOrigin},
		{sql: "SELECT n ^ 2 FROM vals", route: RouteOrigin},
		{sql: "SELECT power(i2, 0.5) FROM vals", route: RouteOrigin},
		{sql: "SELECT sqrt(f), ln(f), f ^ 2, power(i2, 2) FROM vals", route: RouteAccelerate},
		{sql: "SELECT array_to_string(fa, ',') FROM vals", route: RouteOrigin},
		{sql: "SELECT array_to_string(iva, ',') FROM vals", route: RouteOrigin},
		{sql: "SELECT ROW(id, txt) IS NULL, (n, d) IS NOT NULL FROM vals", route: RouteAccelerate,
			want: []string{"id IS NULL AND txt IS NULL", "n IS NOT NULL AND d IS NOT NULL"}},
		{sql: "SELECT ROW(ROW(id), txt) IS NULL FROM vals", route: RouteOrigin},
		{sql: "SELECT split_part(txt, '', 1) FROM vals", route: RouteOrigin},
		{sql: "SELECT split_part(txt, txt, 1) FROM vals", route: RouteAccelerate, want: []string{"an empty delimiter"}},
		{sql: "SELECT id FROM vals WHERE EXISTS (SELECT sum(1 / id) FROM other)", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE EXISTS (SELECT 1 FROM other WHERE other.id = vals.id)", route: RouteAccelerate},
	})
}

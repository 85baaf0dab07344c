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
	cfg, err := catalog.Parse([]byte(valsConfig), "test.yaml")
	if err != nil {
		t.Fatalf("parse test config: %v", err)
	}
	reg := catalog.NewRegistry(cfg)
	col := func(name string, oid uint32, typeName string, mod int32) catalog.ColumnInfo {
		return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeName: typeName, TypeMod: mod, Accelerated: true, BinaryCollation: true}
	}
	load := func(name string, cols ...catalog.ColumnInfo) {
		if !reg.Update(name, func(s *catalog.DatasetState) {
			s.Status, s.Loaded, s.Columns, s.SubsetReady = catalog.StatusReady, true, cols, true
		}) {
			t.Fatalf("no dataset %s", name)
		}
	}
	load("vals",
		col("id", 23, "integer", -1), col("i2", 21, "smallint", -1), col("f", 701, "double precision", -1),
		col("r", 700, "real", -1), col("fa", 1022, "double precision[]", -1), col("iv", 1186, "interval", -1),
		col("iva", 1187, "interval[]", -1), col("n", 1700, "numeric(12,2)", (12<<16|2)+4), col("txt", 25, "text", -1),
		col("ts", 1114, "timestamp without time zone", -1), col("tz", 1184, "timestamp with time zone", -1),
		col("d", 1082, "date", -1))
	load("other", col("id", 23, "integer", -1), col("f", 701, "double precision", -1), col("iv", 1186, "interval", -1))
	return reg
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
	p := New(valsRegistry(t), valsResolver(), Options{})
	for _, c := range cases {
		d := p.Plan(context.Background(), c.sql, defaultSession())
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
		{sql: "SELECT DISTINCT ON (1) f FROM vals ORDER BY 1 DESC", route: RouteAccelerate, want: []string{"ORDER BY " + sh}},
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
	})
}

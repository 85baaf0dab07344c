package planner

import (
	"context"
	"strings"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// typedPlanner plans over public.typed, a dataset with columns of the
// types the type rules track: id int4, j jsonb, js json, c char(5), vc
// varchar(10), t text, f4 real, f8 double precision, i8 bigint, arr
// int4[], narr numeric(8,2)[].
func typedPlanner(t *testing.T) *Planner {
	t.Helper()
	cfg, err := catalog.Parse([]byte(`
origin:
  dsn: postgres://app@localhost/shop
datasets:
  - from: postgres:public.typed
`), "typed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := catalog.NewRegistry(cfg)
	col := func(name string, oid uint32, mod int32) catalog.ColumnInfo {
		return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeMod: mod, Accelerated: true, BinaryCollation: true, ASCIICase: true}
	}
	cols := []catalog.ColumnInfo{
		col("id", 23, -1), col("j", 3802, -1), col("js", 114, -1), col("c", 1042, 9), col("vc", 1043, 14),
		col("t", 25, -1), col("f4", 700, -1), col("f8", 701, -1), col("i8", 20, -1), col("arr", 1007, -1),
		col("narr", 1231, 8<<16|2+4),
	}
	if !reg.Update("typed", func(s *catalog.DatasetState) {
		s.Status, s.Loaded, s.Columns, s.SubsetReady = catalog.StatusReady, true, cols, true
	}) {
		t.Fatal("no dataset typed")
	}
	res := newFakeResolver()
	res.schemas["public"]["typed"] = true
	return New(reg, res, Options{NoFastPath: true})
}

type typeRuleCase struct {
	sql   string
	route Route
	want  []string // in the DuckDB statement
}

func checkTypeRules(t *testing.T, cases []typeRuleCase) {
	t.Helper()
	p := typedPlanner(t)
	for _, tc := range cases {
		d := p.Plan(context.Background(), tc.sql, defaultSession())
		if d.Route != tc.route {
			t.Errorf("%s: route %v (%s: %s), want %v", tc.sql, d.Route, d.Reason, d.Detail, tc.route)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(d.SQL, w) {
				t.Errorf("%s:\n got %s\nwant it to contain %s", tc.sql, d.SQL, w)
			}
		}
	}
}

// TestPlan_JSONBOrderingAndEquality: jsonb is held as its text, so what
// orders or compares jsonb (or json, which Postgres neither orders nor
// compares) goes to the origin, and so do jsonb || jsonb and casts of
// documents to other types; text out of them (->>) is ordered as text.
func TestPlan_JSONBOrderingAndEquality(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT id, j FROM typed ORDER BY 2, 1", RouteOrigin, nil},
		{"SELECT id, j FROM typed ORDER BY j DESC", RouteOrigin, nil},
		{"SELECT id, j AS doc FROM typed ORDER BY doc", RouteOrigin, nil},
		{"SELECT id, j -> 'a' AS x FROM typed ORDER BY x", RouteOrigin, nil},
		{"SELECT a.id FROM typed a, typed b WHERE a.j < b.j", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE j BETWEEN '1' AND '2'", RouteOrigin, nil},
		{"SELECT id, row_number() OVER (ORDER BY j) FROM typed", RouteOrigin, nil},
		{"SELECT max(j), min(js) FROM typed", RouteOrigin, nil},
		{"SELECT greatest(j, '{}') FROM typed", RouteOrigin, nil},
		{"SELECT array_agg(id ORDER BY j) FROM typed", RouteOrigin, nil},
		{"SELECT j, count(*) FROM typed GROUP BY 1", RouteOrigin, nil},
		{"SELECT DISTINCT j FROM typed", RouteOrigin, nil},
		{"SELECT count(DISTINCT j) FROM typed", RouteOrigin, nil},
		{"SELECT j FROM typed UNION SELECT j FROM typed", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE j = '{\"a\":1}'", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE j IN ('1', '2')", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE js = js", RouteOrigin, nil},
		{"SELECT a.id FROM typed a JOIN typed b USING (j)", RouteOrigin, nil},
		{"SELECT a.id FROM typed a NATURAL JOIN typed b", RouteOrigin, nil},
		{"SELECT id, sum(id) OVER (PARTITION BY j -> 'k') FROM typed", RouteOrigin, nil},
		{"SELECT x FROM (SELECT j AS x FROM typed) s ORDER BY x", RouteOrigin, nil},
		{"SELECT id, j || j FROM typed", RouteOrigin, nil},
		{"SELECT id, j || '{\"b\": 2}' FROM typed", RouteOrigin, nil},
		{"SELECT (j -> 0)::int4, (j -> 'a')::bool FROM typed", RouteOrigin, nil},
		// Text out of documents, containment and text casts stay.
		{"SELECT id, j ->> 'a' AS x FROM typed ORDER BY x, id", RouteAccelerate, nil},
		{"SELECT id, j ->> 'a' AS j FROM typed ORDER BY j", RouteAccelerate, nil},
		{"SELECT j #>> '{a,b}', count(*) FROM typed GROUP BY 1 ORDER BY 1", RouteAccelerate, nil},
		{"SELECT (j ->> 'n')::int4 FROM typed ORDER BY 1", RouteAccelerate, nil},
		{"SELECT id, j, js, j::text FROM typed ORDER BY id", RouteAccelerate, nil},
		{"SELECT id, t || j FROM typed", RouteAccelerate, nil},
		{"SELECT id FROM typed WHERE j @> '{\"a\": 1}' ORDER BY id", RouteAccelerate, nil},
		{"SELECT min(id), max(id) FROM typed WHERE j IS NOT NULL", RouteAccelerate, nil},
		{"SELECT * FROM typed ORDER BY 1", RouteAccelerate, nil},
		{"SELECT * FROM typed ORDER BY 2", RouteOrigin, nil},
		{"WITH typed AS (SELECT j AS id FROM public.typed) SELECT * FROM typed ORDER BY 1", RouteOrigin, nil},
	})
}

// TestPlan_JSONBScalarElements: -> and ->> of a jsonb document call the
// jsonb forms, which take a scalar as a one-element array; json's keep
// json's; a document that may be either, with an integer key, goes to the
// origin.
func TestPlan_JSONBScalarElements(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT id, j -> -1, j ->> 0 FROM typed", RouteAccelerate, []string{"pgaccel_jsonb_get(j, -1)", "pgaccel_jsonb_get_text(j, 0)"}},
		{"SELECT id, j -> 'b' -> 1 FROM typed", RouteAccelerate, []string{"pgaccel_jsonb_get(pgaccel_jsonb_get(j, 'b'), 1)"}},
		{"SELECT id, js -> 0 FROM typed", RouteAccelerate, []string{"pgaccel_json_get(js, 0)"}},
		{"SELECT coalesce(j, js) -> 0 FROM typed", RouteOrigin, nil},
	})
}

// TestPlan_CharNSemantics: char(n) is held without its trailing spaces;
// what would see them (literals and varchars compared with it, LIKE,
// printing functions) goes to the origin or is padded.
func TestPlan_CharNSemantics(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT id FROM typed WHERE c = 'a  '", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE c < 'a '", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE c IN ('a', 'b ')", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE c = ANY(ARRAY['a', 'b '])", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE 'a  '::varchar = c", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE c = vc", RouteOrigin, nil},
		{"SELECT a.id FROM typed a JOIN typed b ON a.c = b.vc", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE c IN (SELECT vc FROM typed)", RouteOrigin, nil},
		{"SELECT id, concat(c, 'x'), concat_ws(',', c) FROM typed", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE coalesce(c, 'x') LIKE 'a%'", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE c = 'a' OR c = t", RouteAccelerate, nil},
		{"SELECT id FROM typed WHERE c LIKE '%  ' AND c NOT LIKE 'a %'", RouteAccelerate, []string{"rpad(c, 5, ' ') LIKE '%  '", "rpad(c, 5, ' ') NOT LIKE 'a %'"}},
		{"SELECT id FROM typed WHERE c ILIKE 'A%'", RouteAccelerate, []string{"rpad(c, 5, ' ')"}},
		{"SELECT id, c, c || 'x', length(c) FROM typed ORDER BY c", RouteAccelerate, nil},
	})
}

// TestPlan_RealMixedWithOtherNumbers: Postgres computes a real mixed with
// other numbers in double precision, DuckDB in single precision: such
// arithmetic and comparisons go to the origin, wherever the real comes
// from.
func TestPlan_RealMixedWithOtherNumbers(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT 1000000000000::int8 - '2.5'::float4 FROM typed", RouteOrigin, nil},
		{"SELECT '-3.4e38'::real * i8 FROM typed", RouteOrigin, nil},
		{"SELECT coalesce(f4, 0) * i8 FROM typed", RouteOrigin, nil},
		{"SELECT CASE WHEN id > 2 THEN f4 END + i8 FROM typed", RouteOrigin, nil},
		{"SELECT greatest(f4, 1) + id, abs(f4) * 2 FROM typed", RouteOrigin, nil},
		{"SELECT (SELECT max(f4) FROM typed) * 3 FROM typed", RouteOrigin, nil},
		{"SELECT lag(f4) OVER (ORDER BY id) * 3 FROM typed", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE f4 = 0.1", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE f4 > 16777217", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE f4 < i8", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE f4 BETWEEN 0.1 AND 3", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE f4 = 2.5 OR f4 < 16777216 OR f4 > '0.1' OR f4 < f8 OR f4 = f4", RouteAccelerate, nil},
		{"SELECT id, f4, f8 * 2 FROM typed ORDER BY f4", RouteAccelerate, nil},
		{"SELECT id, -'2.5'::real, @ '-1.5'::float4 FROM typed", RouteAccelerate, nil},
	})
}

// TestPlan_ArrayContainmentWithNulls: @> and <@ of arrays call
// pgaccel_array_contains, for which a NULL element matches nothing.
func TestPlan_ArrayContainmentWithNulls(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT id, arr <@ arr FROM typed", RouteAccelerate, []string{"pgaccel_array_contains(arr, arr)"}},
		{"SELECT id FROM typed WHERE arr @> ARRAY[1, 2]", RouteAccelerate, []string{"pgaccel_array_contains(arr, ARRAY[1, 2])"}},
		{"SELECT id FROM typed WHERE '{1}' <@ arr", RouteAccelerate, []string{"pgaccel_array_contains(arr, '{1}')"}},
		{"SELECT id FROM typed WHERE j -> 'a' @> '1'", RouteAccelerate, []string{"pgaccel_jsonb_contains(pgaccel_jsonb_get(j, 'a'), '1')"}},
		{"SELECT id FROM typed WHERE arr && ARRAY[1]", RouteAccelerate, []string{"arr && ARRAY[1]"}},
	})
}

// TestPlan_RowComparisons: row comparisons are spelled out field by field
// with SQL's NULL semantics; the others go to the origin.
func TestPlan_RowComparisons(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT id FROM typed WHERE (id, t) < (i8, '42'::text)", RouteAccelerate,
			[]string{"WHERE id < i8 OR (id = i8 AND t < '42'::text)"}},
		{"SELECT id FROM typed WHERE (id, t, i8) >= (1, 'a', 2)", RouteAccelerate,
			[]string{"WHERE id > 1 OR (id = 1 AND (t > 'a' OR (t = 'a' AND i8 >= 2)))"}},
		{"SELECT count(*) FROM typed WHERE (id, t) = (i8, t)", RouteAccelerate, []string{"WHERE id = i8 AND t = t"}},
		{"SELECT count(*) FROM typed WHERE ROW(id, t) <> ROW(i8, t)", RouteAccelerate, []string{"WHERE id <> i8 OR t <> t"}},
		{"SELECT id FROM typed WHERE (id, t) IN ((1, 'a'), (2, 'b'))", RouteAccelerate,
			[]string{"WHERE (id = 1 AND t = 'a') OR (id = 2 AND t = 'b')"}},
		{"SELECT id FROM typed WHERE (id, t) IS DISTINCT FROM (1, 'a')", RouteAccelerate,
			[]string{"WHERE id IS DISTINCT FROM 1 OR t IS DISTINCT FROM 'a'"}},
		{"SELECT id FROM typed WHERE ((id, t) = (1, 'a'), i8) = (true, 2)", RouteAccelerate,
			[]string{"WHERE (id = 1 AND t = 'a') = true AND i8 = 2"}},
		{"SELECT id FROM typed WHERE (id, t) IN (SELECT id, t FROM typed)", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE (id, t) = (SELECT id, t FROM typed LIMIT 1)", RouteOrigin, nil},
		{"SELECT id FROM typed WHERE ((id, t), i8) = ((1, 'a'), 2)", RouteOrigin, nil},
	})
}

// TestPlan_NumericArrayScales: an array built of numeric arrays and
// values holds each element's scale at the origin, one scale in DuckDB.
func TestPlan_NumericArrayScales(t *testing.T) {
	checkTypeRules(t, []typeRuleCase{
		{"SELECT array_append(narr, 1.5) FROM typed", RouteOrigin, nil},
		{"SELECT array_prepend(1.5, narr) FROM typed", RouteOrigin, nil},
		{"SELECT array_cat(narr, narr) FROM typed", RouteOrigin, nil},
		// array_append, array_cat and trim_array are not in the allowlist
		// (allowlist.go: array_cat of two NULLs is NULL in Postgres, {}
		// in DuckDB): the origin, whatever the scales.
		{"SELECT array_append(arr, 1), narr FROM typed", RouteOrigin, nil},
		{"SELECT array_append(arr[1:2], 7), array_cat(arr, arr) FROM typed", RouteOrigin, nil},
		{"SELECT array_append(narr[1:2], 7) FROM typed", RouteOrigin, nil},
	})
}

// TestPlan_SlicesMarkBinaryArrays: a statement slicing arrays says so
// (Decision.BinaryArraysInexact); one subscripting them does not.
func TestPlan_SlicesMarkBinaryArrays(t *testing.T) {
	p := typedPlanner(t)
	for sql, want := range map[string]bool{
		"SELECT arr[1:2] FROM typed":    true,
		"SELECT arr[1], arr FROM typed": false,
	} {
		d := p.Plan(context.Background(), sql, defaultSession())
		if d.Route != RouteAccelerate || d.BinaryArraysInexact != want {
			t.Errorf("%s: route %v (%s), BinaryArraysInexact %v, want accelerated and %v", sql, d.Route, d.Detail, d.BinaryArraysInexact, want)
		}
	}
}

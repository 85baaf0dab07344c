package planner

import (
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// enumRegistry is public.vals with st, an enum (sad < ok < happy), and
// public.other with st2 of another enum, in a bytewise database.
func enumRegistry(t *testing.T) *catalog.Registry {
	t.Helper()
	enum := func(name string, oid uint32, labels ...string) catalog.ColumnInfo {
		c := plainColumn(name, oid, "mood")
		c.EnumLabels = labels
		return c
	}
	return valsWith(t, map[string][]catalog.ColumnInfo{
		"vals": {plainColumn("id", 23, "integer"), enum("st", 90001, "sad", "ok", "happy"),
			plainColumn("w", 25, "text"), plainColumn("n", 23, "integer")},
		"other": {plainColumn("id", 23, "integer"), enum("st2", 90002, "a", "b")},
	})
}

// TestPlan_EnumsOrderByTheirLabels: an enum is ordered and range-compared
// by its label's position; literals it adopts must be labels; what
// Postgres refuses of an enum goes to the origin.
func TestPlan_EnumsOrderByTheirLabels(t *testing.T) {
	p := New(enumRegistry(t), valsResolver(), Options{})
	session := &Session{User: "app", SearchPath: []string{"public"}, TextBytewise: true}
	const key = "list_position(list_value('sad', 'ok', 'happy'), "
	checkPlanCases(t, p, session, []sortCase{
		{sql: "SELECT id, st FROM vals ORDER BY st, id", route: RouteAccelerate, want: []string{"ORDER BY CASE WHEN st IS NOT NULL AND " + key + "st) IS NULL THEN error("}},
		{sql: "SELECT id FROM vals WHERE st > 'sad'", route: RouteAccelerate, want: []string{key + "'sad')"}},
		{sql: "SELECT id FROM vals WHERE st BETWEEN 'sad' AND 'ok'", route: RouteAccelerate, want: []string{key + "'ok')"}},
		{sql: "SELECT min(st), max(st) OVER () FROM vals", route: RouteAccelerate, want: []string{"arg_min(st, ", "arg_max(st, "}},
		{sql: "SELECT st, count(*) FROM vals GROUP BY st ORDER BY 1", route: RouteAccelerate, want: []string{key}},
		{sql: "SELECT row_number() OVER (PARTITION BY w ORDER BY st) FROM vals", route: RouteAccelerate, want: []string{key}},
		{sql: "SELECT id FROM vals WHERE st <= $1", route: RouteAccelerate, want: []string{"list_contains(list_value('sad', 'ok', 'happy'), $1)"}},
		// No key where none is needed.
		{sql: "SELECT id, st FROM vals WHERE st = 'ok' OR st IN ('sad', 'happy') ORDER BY id", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT st::text, st || '!' FROM vals ORDER BY 1", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT DISTINCT st FROM vals", route: RouteAccelerate, notWant: []string{key}},
		{sql: "SELECT coalesce(st, 'ok') FROM vals", route: RouteAccelerate},
		// To the origin.
		{sql: "SELECT id FROM vals WHERE st = 'meh'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE st IN ('ok', 'meh')", route: RouteOrigin},
		{sql: "SELECT coalesce(st, 'meh') FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE st = w", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE st LIKE 'h%'", route: RouteOrigin},
		{sql: "SELECT upper(st) FROM vals", route: RouteOrigin},
		{sql: "SELECT length(st) FROM vals", route: RouteOrigin},
		{sql: "SELECT string_agg(st, ',') FROM vals", route: RouteOrigin},
		{sql: "SELECT st::int FROM vals", route: RouteOrigin},
		{sql: "SELECT greatest(st, 'ok') FROM vals", route: RouteOrigin},
		{sql: "SELECT st FROM vals UNION SELECT 'meh'", route: RouteOrigin},
		{sql: "SELECT st FROM vals UNION VALUES ('meh')", route: RouteOrigin},
		{sql: "SELECT st FROM vals UNION VALUES ('ok')", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE st BETWEEN 'sad' AND 'meh'", route: RouteOrigin},
		{sql: "SELECT st FROM vals UNION ALL SELECT st FROM vals ORDER BY 1", route: RouteOrigin},
		{sql: "SELECT id FROM vals, other WHERE st = st2", route: RouteOrigin},
	})
}

// TestPlan_OrderByNamesAnOutputColumn: ORDER BY a name that Postgres
// resolves to an unnamed output column (amt::text is named "amt") sorts
// by that output, not by the input column of that name.
func TestPlan_OrderByNamesAnOutputColumn(t *testing.T) {
	p := New(enumRegistry(t), valsResolver(), Options{})
	session := &Session{User: "app", SearchPath: []string{"public"}, TextBytewise: true}
	checkPlanCases(t, p, session, []sortCase{
		{sql: "SELECT n::text FROM vals ORDER BY n DESC", route: RouteAccelerate, want: []string{"ORDER BY 1 DESC"}},
		{sql: "SELECT id, n::text, w FROM vals ORDER BY n, id", route: RouteAccelerate, want: []string{"ORDER BY 2 NULLS LAST, id"}},
		{sql: "SELECT id, n FROM vals ORDER BY n", route: RouteAccelerate, want: []string{"ORDER BY n"}},
		{sql: "SELECT n + 1 AS n FROM vals ORDER BY n", route: RouteAccelerate, want: []string{"ORDER BY 1"}},
		{sql: "SELECT *, n::text FROM vals ORDER BY n", route: RouteAccelerate, want: []string{"ORDER BY n"}},
		// DISTINCT ON reads names alike; a position there is a constant
		// to DuckDB.
		{sql: "SELECT DISTINCT ON (n) n::text FROM vals ORDER BY n", route: RouteOrigin},
		{sql: "SELECT DISTINCT ON (n) n, w FROM vals ORDER BY n, w", route: RouteAccelerate},
	})
}

package planner

import "testing"

// TestPlan_FlooredDivision: floor(x / N) of a numeric of known scale or
// an epoch, N a positive integer constant, is the exact floored quotient;
// other floored divisions of numerics keep the division rules.
func TestPlan_FlooredDivision(t *testing.T) {
	const call = "pgaccel_numeric_div_int("
	checkSortCases(t, []sortCase{
		{sql: "SELECT floor(extract(epoch from tz)/3600)*3600 AS time, count(*) FROM vals GROUP BY 1 ORDER BY 1", route: RouteAccelerate, want: []string{call, `::"varchar", '3600', 'floor')::"decimal"(38, 0)`}},
		{sql: "SELECT floor(extract(epoch from ts)/60) FROM vals", route: RouteAccelerate, want: []string{call}},
		{sql: "SELECT floor(n / 10) * 10, count(*) FROM vals GROUP BY 1", route: RouteAccelerate, want: []string{call + `n::"varchar", '10', 'floor')`}},
		{sql: "SELECT pg_catalog.floor(n / 10) FROM vals", route: RouteAccelerate, want: []string{call}},
		{sql: "SELECT floor(i2 / 10) FROM vals", route: RouteAccelerate, notWant: []string{call}},
		// Metabase's bins.
		{sql: "SELECT floor(((n - 0.0) / 12.5)) * 12.5 + 0.0 AS bin, count(*) FROM vals GROUP BY 1 ORDER BY 1", route: RouteAccelerate, want: []string{call, `'12.5', 'floor')`}},
		{sql: "SELECT floor((i2 + n - 1) / 10) FROM vals", route: RouteAccelerate, want: []string{call}},
		{sql: "SELECT floor((i2 - 1) / 2.5) * 2.5 FROM vals", route: RouteAccelerate, want: []string{call, `'2.5', 'floor')`}},
		// An integer over an integer: integer division, as before.
		{sql: "SELECT floor((i2 - 1) / 10) FROM vals", route: RouteAccelerate, notWant: []string{call}},
		// To the division rules, which send numerics to the origin.
		{sql: "SELECT floor(n / 2.5e1) FROM vals", route: RouteOrigin},
		{sql: "SELECT floor(n / -2.5) FROM vals", route: RouteOrigin},
		{sql: "SELECT floor(n / id) FROM vals", route: RouteOrigin},
		{sql: "SELECT floor(n * 2 / 10) FROM vals", route: RouteOrigin},
		{sql: "SELECT floor(extract(epoch from d) / 10) FROM vals", route: RouteOrigin},
		{sql: "SELECT floor(extract(epoch from iv) / 10) FROM vals", route: RouteOrigin},
		{sql: "SELECT ceil(n / 10), ceiling(n / 3), round(extract(epoch from tz) / 60), trunc(-n / 7) FROM vals", route: RouteAccelerate,
			want: []string{"'10', 'ceil')", "'3', 'ceil')", "'60', 'round')", "'7', 'trunc')"}},
	})
}

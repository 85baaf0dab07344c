package planner

import (
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestPlan_NumericHeldAsText: a numeric held as text is read as it is
// (bare outputs, *, count, IS NULL), by value through the guard where its
// scale is never printed, and in outputs whose scale the scale tracking
// follows row by row; the rest goes to the origin.
func TestPlan_NumericHeldAsText(t *testing.T) {
	three := 3
	col := func(name string, oid uint32, typeName string) catalog.ColumnInfo {
		return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeName: typeName, TypeMod: -1, Accelerated: true, BinaryCollation: true}
	}
	amt := col("amt", 1700, "numeric")
	amt.NumericText, amt.ValueScale = true, &three
	nan := col("r", 1700, "numeric")
	nan.NumericText = true
	reg := valsWith(t, map[string][]catalog.ColumnInfo{
		"vals": {col("id", 23, "integer"), col("st", 25, "text"), amt, nan},
	})
	p := New(reg, valsResolver(), Options{})
	held := `pgaccel_numeric_held(amt, 3)::"decimal"(38, 3)`
	checkPlanCases(t, p, defaultSession(), []sortCase{
		{sql: "SELECT * FROM vals", route: RouteAccelerate, notWant: []string{"held"}},
		{sql: "SELECT id, amt, r FROM vals WHERE amt > 5 ORDER BY amt", route: RouteAccelerate, want: []string{"SELECT id, amt, r", "WHERE " + held + " > 5 ORDER BY " + held}},
		{sql: "SELECT count(amt), count(r) FROM vals WHERE r IS NULL", route: RouteAccelerate, notWant: []string{"held"}},
		{sql: "SELECT st FROM vals GROUP BY st HAVING sum(amt) > 1", route: RouteAccelerate, want: []string{"sum(" + held + ") > 1"}},
		{sql: "SELECT sum(amt) FROM vals", route: RouteAccelerate, want: []string{"pgaccel_numeric_text_scale(amt)"}},
		{sql: "SELECT st, sum(amt), count(*) FROM vals GROUP BY st", route: RouteAccelerate, want: []string{"pgaccel_numeric_text_scale(amt)"}},
		{sql: "SELECT id, amt * 2 FROM vals", route: RouteAccelerate, want: []string{"pgaccel_numeric_text_scale(amt)"}},
		// To the origin.
		{sql: "SELECT amt::text FROM vals", route: RouteOrigin},
		{sql: "SELECT DISTINCT amt FROM vals", route: RouteOrigin},
		{sql: "SELECT amt, count(*) FROM vals GROUP BY amt", route: RouteOrigin},
		{sql: "SELECT min(amt) FROM vals", route: RouteOrigin},
		{sql: "SELECT amt AS a FROM vals ORDER BY a", route: RouteOrigin},
		{sql: "SELECT amt FROM vals ORDER BY 1", route: RouteOrigin},
		{sql: "SELECT * FROM vals ORDER BY 3", route: RouteOrigin},
		{sql: "SELECT s.amt FROM (SELECT amt FROM vals) s", route: RouteOrigin},
		{sql: "SELECT amt FROM vals UNION SELECT 1", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE r > 1", route: RouteOrigin},
		{sql: "SELECT sum(r) FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE amt / 3 > 1", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE amt::text = '1.50'", route: RouteOrigin},
		{sql: "SELECT id FROM vals v JOIN vals w USING (amt)", route: RouteOrigin},
	})
}

// TestPlan_NumericHeldAsTextAvg: avg of a numeric held as text, a whole
// output, divides the sum printed at Postgres's scale.
func TestPlan_NumericHeldAsTextAvg(t *testing.T) {
	three := 3
	amt := catalog.ColumnInfo{Name: "amt", TypeOID: 1700, TypeName: "numeric", TypeMod: -1, Accelerated: true, NumericText: true, ValueScale: &three}
	st := catalog.ColumnInfo{Name: "st", TypeOID: 25, TypeName: "text", TypeMod: -1, Accelerated: true, BinaryCollation: true}
	p := New(valsWith(t, map[string][]catalog.ColumnInfo{"vals": {st, amt}}), valsResolver(), Options{})
	checkPlanCases(t, p, defaultSession(), []sortCase{
		{sql: "SELECT st, avg(amt) FROM vals GROUP BY st", route: RouteAccelerate,
			want: []string{"pgaccel_numeric_avg(pgaccel_numeric_scale(sum(", "pgaccel_numeric_text_scale(amt)"}},
		{sql: "SELECT avg(amt) OVER (PARTITION BY st) FROM vals", route: RouteAccelerate, want: []string{"pgaccel_numeric_text_scale(amt)"}},
		{sql: "SELECT avg(amt * 2) FROM vals", route: RouteOrigin},
		{sql: "SELECT st FROM vals GROUP BY st HAVING avg(amt) > 1", route: RouteOrigin},
	})
}

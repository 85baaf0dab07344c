package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// char(n) values are held without their trailing spaces (the encoder pads
// them again). Postgres compares char(n) with a literal or a varchar
// ignoring trailing spaces, where the literal or varchar keeps them in
// DuckDB: a literal ending in a space, a varchar or a number compared with
// a char(n) goes to the origin. LIKE and ILIKE match a char(n) with its
// padding: a char(n) column's is padded by the rewrite (typerewrite.go),
// another char(n) value's goes to the origin. Functions that print their
// arguments with their types' output functions (concat, to_json, ...)
// print the padding: a char(n) argument goes to the origin.

// printingFuncs print their arguments with their types' output
// functions (a char(n) with its padding).
var printingFuncs = map[string]bool{
	"concat": true, "concat_ws": true, "format": true, "to_json": true, "to_jsonb": true,
	"json_build_object": true, "jsonb_build_object": true, "json_build_array": true, "jsonb_build_array": true,
	"json_agg": true, "jsonb_agg": true, "json_object_agg": true, "jsonb_object_agg": true,
	"array_to_json": true, "row_to_json": true, "array_to_string": true, "json_object": true, "jsonb_object": true,
}

// bpcharHazard returns why the statement compares, matches or prints a
// char(n) value as the acceleration cannot, or "".
func (t *typer) bpcharHazard() string {
	ts := &t.a.types
	for _, p := range ts.pairs {
		l, r := t.typesOf(p.l), t.typesOf(p.r)
		if l&tBpchar == 0 && r&tBpchar == 0 {
			continue
		}
		for _, side := range [2][2]*pg_query.Node{{p.l, p.r}, {p.r, p.l}} {
			if t.typesOf(side[0])&tBpchar == 0 {
				continue
			}
			other := side[1]
			if c := other.GetAConst(); c != nil {
				switch v := c.Val.(type) {
				case *pg_query.A_Const_Sval:
					if strings.HasSuffix(v.Sval.Sval, " ") || p.any && strings.Contains(v.Sval.Sval, " ") {
						return "comparing a char(n) value with a literal ending in a space (Postgres ignores trailing spaces of char(n); the literal keeps them in DuckDB)"
					}
				default:
					if !c.Isnull {
						return "comparing a char(n) value with a number or boolean (no such operator in Postgres)"
					}
				}
				continue
			}
			if t.typesOf(other)&tVarchar != 0 {
				return "comparing a char(n) value with " + describeExpr(other) + ", which may be a varchar (Postgres compares them as char(n), ignoring trailing spaces; the varchar keeps them in DuckDB)"
			}
		}
	}
	for _, n := range ts.likes {
		if t.typesOf(n)&tBpchar == 0 {
			continue
		}
		if _, ok := t.paddedColumn(n); !ok {
			return "LIKE of " + describeExpr(n) + ", which may be a char(n) value not known to be a column (Postgres matches it with its padding)"
		}
	}
	for _, n := range ts.printed {
		if t.typesOf(n)&tBpchar != 0 {
			return describeExpr(n) + " may be a char(n) value printed with its padding (concat, format, to_json, array_to_string ...), which the acceleration does not keep"
		}
	}
	return ""
}

// paddedColumn returns n of char(n) when x is a column reference whose
// every dataset column is a char(n) of that length and no output column
// is so named.
func (t *typer) paddedColumn(x *pg_query.Node) (int32, bool) {
	cr := x.GetColumnRef()
	if cr == nil || lastField(cr) == "" || len(cr.Fields) > 3 {
		return 0, false
	}
	name := lastField(cr)
	if len(t.a.aliasDefs[name]) > 0 || len(t.a.types.outputs[name]) > 0 {
		return 0, false
	}
	n := int32(-1)
	if !columnsAre(t.r, name, func(c catalog.ColumnInfo) bool {
		if c.TypeOID != pgdef.OIDBpchar || c.TypeMod <= 4 || n >= 0 && c.TypeMod-4 != n {
			return false
		}
		n = c.TypeMod - 4
		return true
	}) {
		return 0, false
	}
	return n, true
}

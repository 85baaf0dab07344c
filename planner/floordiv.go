package planner

import (
	"strconv"

	"github.com/pgaccel/pgaccel/catalog"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// floor(x / N), N a positive integer constant, x a numeric of a known
// display scale: Grafana's $__timeGroup (floor(extract(epoch from t) /
// 3600) * 3600) and bucketing of amounts. Postgres divides the numerics
// with the scale select_div_scale picks, rounding half away from zero,
// and floors that: a value just below a multiple of N can land in the
// next bucket, and DuckDB divides decimals in floating point. The rewrite
// makes it the accelerator's pgaccel_numeric_floor_div of the two texts
// (numeric_div as Postgres computes it, then floor), an integer, cast to
// DECIMAL(38,0):
//
//	CAST(pgaccel_numeric_floor_div(CAST(x AS varchar), 'N') AS decimal(38, 0))
//
// x is a numeric column with a declared or held scale (DuckDB prints its
// DECIMAL with that scale, Postgres's display scale) or
// extract(epoch from a timestamptz or timestamp) (scale 6, as the extract
// rewrite computes it). Anything else stays a division the division rules
// judge (divkinds.go).

// numericFloorDivFunction is accelerator.NumericFloorDivFunction.
const numericFloorDivFunction = "pgaccel_numeric_floor_div"

// flooredDivision returns the division of floor(x / N) and N; nil when
// fc is not such a call.
func flooredDivision(fc *pg_query.FuncCall) (*pg_query.A_Expr, int32) {
	if funcName(fc) != "floor" || len(fc.Args) != 1 || fc.Over != nil || fc.AggFilter != nil || len(fc.Funcname) > 2 {
		return nil, 0
	}
	if len(fc.Funcname) == 2 {
		if s, ok := fc.Funcname[0].GetNode().(*pg_query.Node_String_); !ok || s.String_.Sval != "pg_catalog" {
			return nil, 0
		}
	}
	e := fc.Args[0].GetAExpr()
	if e == nil || !isDivision(e) || divisionOp(e) != "/" {
		return nil, 0
	}
	c := e.Rexpr.GetAConst()
	if c == nil {
		return nil, 0
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	if !ok || iv.Ival == nil || iv.Ival.Ival <= 0 {
		return nil, 0
	}
	return e, iv.Ival.Ival
}

// floorDividend reports whether n prints in DuckDB as the text of the
// numeric Postgres divides: a numeric column of a known scale, or
// extract(epoch from) a timestamptz or timestamp.
func (a *analysis) floorDividend(r resolution, n *pg_query.Node) bool {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		return name != "" && len(a.aliasDefs[name]) == 0 && len(a.types.outputs[name]) == 0 &&
			columnsAre(r, name, func(c catalog.ColumnInfo) bool { _, ok := numericColumnScale(c); return ok })
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if funcName(fc) != "extract" || len(fc.Args) != 2 {
			return false
		}
		if field, ok := constString(fc.Args[0]); !ok || field != "epoch" {
			return false
		}
		x := fc.Args[1]
		if a.tstzOf(r, x, 0) == tstzYes {
			return true
		}
		if cr := x.GetColumnRef(); cr != nil {
			name := lastField(cr)
			return name != "" && len(a.aliasDefs[name]) == 0 && len(a.types.outputs[name]) == 0 &&
				columnsAre(r, name, func(c catalog.ColumnInfo) bool { return c.TypeOID == oidTimestamp })
		}
	}
	return false
}

// rewriteFloorDivision makes the division e, held by node, the exact
// floored quotient (floor() around it keeps an integer as it is).
func rewriteFloorDivision(node *pg_query.Node, e *pg_query.A_Expr) error {
	if node == nil {
		return errRewrite
	}
	c := e.Rexpr.GetAConst()
	iv, ok := c.GetVal().(*pg_query.A_Const_Ival)
	if c == nil || !ok || iv.Ival == nil {
		return errRewrite
	}
	q := fnCall(numericFloorDivFunction, castTo(e.Lexpr, "varchar"),
		pg_query.MakeAConstStrNode(strconv.Itoa(int(iv.Ival.Ival)), -1))
	node.Node = castTo(q, "decimal", 38, 0).Node
	return nil
}

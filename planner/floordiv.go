package planner

import (
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// floor(x / N) (and ceil, round, trunc), N a positive integer or decimal
// constant, x a numeric of a known display scale: Grafana's $__timeGroup
// (floor(extract(epoch from t) / 3600) * 3600) and the bins of amounts
// (Metabase's floor((amount - 0.0) / 12.5) * 12.5 + 0.0). Postgres divides the numerics
// with the scale select_div_scale picks, rounding half away from zero,
// and floors that: a value just below a multiple of N can land in the
// next bucket, and DuckDB divides decimals in floating point. The rewrite
// makes the division the accelerator's pgaccel_numeric_div_int of the two
// texts (numeric_div as Postgres computes it, then the function), an
// integer, cast to DECIMAL(38,0), which the function around it keeps:
//
//	CAST(pgaccel_numeric_div_int(CAST(x AS varchar), 'N', 'floor') AS decimal(38, 0))
//
// x is a numeric column with a declared or held scale (DuckDB prints its
// DECIMAL with that scale, Postgres's display scale), extract(epoch from a
// timestamptz or timestamp) (scale 6, as the extract rewrite computes
// it), or sums and differences of those with integers and decimal
// constants (floorDividend). Anything else stays a division the division
// rules judge (divkinds.go).

// pgdef.FuncNumericDivInt is pgdef.FuncNumericDivInt.

// integralFuncs are the functions of one numeric argument that make it an
// integer, as NumericDivIntFunction names them.
var integralFuncs = map[string]string{"floor": "floor", "ceil": "ceil", "ceiling": "ceil", "round": "round", "trunc": "trunc"}

// flooredDivision returns the division of floor(x / N) (or ceil, round,
// trunc) and the function; nil when fc is not such a call. N is a
// positive integer or decimal constant (Metabase's bins divide by 12.5).
func flooredDivision(fc *pg_query.FuncCall) (*pg_query.A_Expr, string) {
	name, ok := builtinName(fc.Funcname)
	how := integralFuncs[strings.ToLower(name)]
	if !ok || how == "" || len(fc.Args) != 1 || fc.Over != nil || fc.AggFilter != nil {
		return nil, ""
	}
	e := fc.Args[0].GetAExpr()
	if e == nil || !isDivision(e) || divisionOp(e) != "/" {
		return nil, ""
	}
	if _, ok := positiveConst(e.Rexpr); ok {
		return e, how
	}
	return nil, ""
}

// positiveConst is the text of a positive integer constant, or of a
// decimal one written with a point (no sign, no exponent: Postgres reads
// it as a numeric of that scale).
func positiveConst(n *pg_query.Node) (string, bool) {
	c := n.GetAConst()
	if c == nil {
		return "", false
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		if v.Ival != nil && v.Ival.Ival > 0 {
			return strconv.Itoa(int(v.Ival.Ival)), true
		}
	case *pg_query.A_Const_Fval:
		f := v.Fval.GetFval()
		if strings.Contains(f, ".") && !strings.ContainsAny(f, "eE+-") && strings.Trim(f, "0.") != "" {
			return f, true
		}
	}
	return "", false
}

// floorDividend reports whether n prints in DuckDB as the text of the
// numeric Postgres divides: a numeric column of a known scale,
// extract(epoch from) a timestamptz or timestamp, or a sum or difference
// of those with integer columns and constants and decimal constants
// (DuckDB's DECIMAL addition keeps the larger scale, as numeric_add does),
// at least one of its terms a numeric, or N a decimal (an integer divided
// by an integer is an integer division, which the division rules take).
func (a *analysis) floorDividend(r resolution, d division) bool {
	numeric, ok := a.floorTerms(r, d.l, 0)
	// An integer x divided by a decimal N is a numeric division too.
	decimalN := d.r.GetAConst() != nil && d.r.GetAConst().GetFval() != nil
	return ok && (numeric || decimalN)
}

// floorTerms judges the terms of a dividend: ok when every one is of the
// kinds floorDividend takes, numeric when one is a numeric.
func (a *analysis) floorTerms(r resolution, n *pg_query.Node, depth int) (numeric, ok bool) {
	if depth > 16 {
		return false, false
	}
	plainColumn := func(cr *pg_query.ColumnRef, is func(c catalog.ColumnInfo) bool) bool {
		name := lastField(cr)
		return name != "" && len(a.aliasDefs[name]) == 0 && len(a.types.outputs[name]) == 0 && columnsAre(r, name, is)
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		if plainColumn(v.ColumnRef, func(c catalog.ColumnInfo) bool { _, ok := numericColumnScale(c); return ok }) {
			return true, true
		}
		return false, plainColumn(v.ColumnRef, func(c catalog.ColumnInfo) bool {
			return c.TypeOID == pgdef.OIDInt2 || c.TypeOID == pgdef.OIDInt4 || c.TypeOID == pgdef.OIDInt8
		})
	case *pg_query.Node_AConst:
		switch c := v.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return false, true
		case *pg_query.A_Const_Fval:
			f := c.Fval.GetFval()
			return true, strings.Contains(f, ".") && !strings.ContainsAny(f, "eE")
		}
		return false, false
	case *pg_query.Node_AExpr:
		e := v.AExpr
		op := divisionOp(e)
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || op != "+" && op != "-" {
			return false, false
		}
		if e.Lexpr == nil { // a sign
			return a.floorTerms(r, e.Rexpr, depth+1)
		}
		ln, lok := a.floorTerms(r, e.Lexpr, depth+1)
		rn, rok := a.floorTerms(r, e.Rexpr, depth+1)
		return ln || rn, lok && rok
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if funcName(fc) != "extract" || len(fc.Args) != 2 {
			return false, false
		}
		if field, ok := constString(fc.Args[0]); !ok || field != "epoch" {
			return false, false
		}
		x := fc.Args[1]
		if a.tstzOf(r, x, 0) == tstzYes {
			return true, true
		}
		if cr := x.GetColumnRef(); cr != nil {
			return true, plainColumn(cr, func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDTimestamp })
		}
	}
	return false, false
}

// rewriteFloorDivision makes the division e, held by node, the exact
// quotient made an integer by how (the function around it keeps an
// integer as it is).
func rewriteFloorDivision(node *pg_query.Node, e *pg_query.A_Expr, how string) error {
	n, ok := positiveConst(e.Rexpr)
	if node == nil || !ok || how == "" {
		return errRewrite
	}
	q := fnCall(pgdef.FuncNumericDivInt, castTo(e.Lexpr, "varchar"), pg_query.MakeAConstStrNode(n, -1), pg_query.MakeAConstStrNode(how, -1))
	node.Node = castTo(q, "decimal", 38, 0).Node
	return nil
}

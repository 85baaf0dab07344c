package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Postgres functions and operators whose DuckDB namesakes answer otherwise,
// rewritten per plan (the column types they depend on are the datasets').

// rewriteByArgType adapts calls whose DuckDB namesake differs by the type
// of their first argument, a column of the datasets (the analysis refuses
// names that are also outputs of subqueries: aliasDefs):
//
//   - date_trunc(part, date): Postgres casts the date to timestamptz (its
//     local midnight in the session's TimeZone) and truncates that; DuckDB
//     truncates the date to a timestamp. The rewrite casts it first.
//   - length(bytea) is octet_length in DuckDB; octet_length(text) is
//     strlen; cardinality(array) is len; every is bool_and (any argument);
//     array_length(a, 1) of an empty array is NULL.
func rewriteByArgType(fc *pg_query.FuncCall, a *analysis, r resolution) {
	name := funcName(fc)
	switch name {
	case "round":
		// round(double precision) is rint in Postgres, half to even;
		// DuckDB's round goes half away from zero (numerics round half
		// away in both).
		if len(fc.Args) == 1 && a.floatValue(r, fc.Args[0]) {
			fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("round_even")}
			fc.Args = append(fc.Args, pg_query.MakeAConstIntNode(0, -1))
		}
		return
	case "lpad", "rpad":
		// Postgres fills with spaces when no fill is given; DuckDB wants one.
		if len(fc.Args) == 2 {
			fc.Args = append(fc.Args, pg_query.MakeAConstStrNode(" ", -1))
		}
		return
	case "btrim":
		// btrim(s[, chars]) is DuckDB's trim(s[, chars]).
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("trim")}
		return
	case "json_typeof", "jsonb_typeof":
		// DuckDB's json_type says OBJECT, VARCHAR, BIGINT...
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncJSONTypeof)}
		return
	case "json_array_length", "jsonb_array_length":
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncJSONArrayLength)}
		return
	case "justify_hours", "justify_days", "justify_interval":
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_" + name)}
		return
	case "percentile_cont":
		// Postgres interpolates in float8: the ordered values as DuckDB
		// doubles, when they convert exactly alike (percentileDouble).
		if fc.AggWithinGroup && len(fc.AggOrder) == 1 {
			if sb := fc.AggOrder[0].GetSortBy(); sb != nil {
				if cr := sb.Node.GetColumnRef(); cr != nil && len(a.aliasDefs[lastField(cr)]) == 0 && percentileDouble(r, lastField(cr)) {
					sb.Node = castTo(sb.Node, "float8")
				}
			}
		}
		return
	}
	if name == "every" && fc.Over == nil && len(fc.Args) == 1 {
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("bool_and")}
		return
	}
	if name == "array_length" && len(fc.Args) == 2 {
		// The length of an empty array is NULL to Postgres, 0 to DuckDB
		// (the analysis admits dimension 1 only).
		inner := &pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("array_length")}, Args: fc.Args, Location: -1}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("nullif")}
		fc.Args = []*pg_query.Node{{Node: &pg_query.Node_FuncCall{FuncCall: inner}}, pg_query.MakeAConstIntNode(0, -1)}
		return
	}
	var arg *pg_query.Node
	switch name {
	case "date_trunc":
		if len(fc.Args) != 2 {
			return
		}
		arg = fc.Args[1]
	case "length", "octet_length", "cardinality":
		if len(fc.Args) != 1 {
			return
		}
		arg = fc.Args[0]
	default:
		return
	}
	cr := arg.GetColumnRef()
	if cr == nil || lastField(cr) == "" || len(a.aliasDefs[lastField(cr)]) > 0 {
		return
	}
	col := lastField(cr)
	is := func(ok func(catalog.ColumnInfo) bool) bool { return columnsAre(r, col, ok) }
	rename := func(to string) { fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(to)} }
	switch {
	case name == "date_trunc" && is(func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDDate }):
		fc.Args[1] = castTo(&pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: cr}}, "timestamptz")
	case name == "length" && is(func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDBytea }):
		rename("octet_length")
	case name == "octet_length" && is(func(c catalog.ColumnInfo) bool { return textTypeOIDs[c.TypeOID] && c.TypeOID != pgdef.OIDBpchar }):
		rename("strlen")
	case name == "cardinality" && is(func(c catalog.ColumnInfo) bool { return strings.HasSuffix(c.TypeName, "[]") }):
		rename("len")
	}
}

// percentileDouble reports whether the datasets' columns of that name
// convert to float8 as Postgres converts them: floats, integers, and
// numerics of at most 15 digits (their unscaled value and its power of ten
// are exact doubles, and one division rounds correctly, as Postgres's
// conversion does).
func percentileDouble(r resolution, name string) bool {
	return columnsAre(r, name, func(c catalog.ColumnInfo) bool {
		switch c.TypeOID {
		case pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8:
			return true
		case pgdef.OIDNumeric:
			return c.TypeMod >= 4 && (c.TypeMod-4)>>16 <= 15
		}
		return false
	})
}

// rewriteEqualsAny spells x = ANY(array) out with Postgres's NULLs (the
// array is no subquery: that is a SubLink):
//
//	CASE WHEN a IS NULL THEN NULL WHEN len(a) = 0 THEN false
//	     WHEN list_contains(a, x) THEN true
//	     WHEN x IS NULL OR list_count(a) < len(a) THEN NULL ELSE false END
func rewriteEqualsAny(site likeSite) {
	e := site.expr
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP_ANY || divisionOp(e) != "=" || site.node == nil || site.node.GetAExpr() != e || nullFreeArray(e.Rexpr) {
		return
	}
	clone := func(n *pg_query.Node) *pg_query.Node { return proto.Clone(n).(*pg_query.Node) }
	call := func(name string, args ...*pg_query.Node) *pg_query.Node {
		return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
	}
	isNull := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{Arg: n, Nulltesttype: pg_query.NullTestType_IS_NULL, Location: -1}}}
	}
	op := func(o string, l, r *pg_query.Node) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(o)}, l, r, -1)
	}
	when := func(cond, res *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: cond, Result: res, Location: -1}}}
	}
	null := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
	boolean := func(b bool) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: b}}, Location: -1}}}
	}
	x, a := e.Lexpr, e.Rexpr
	site.node.Node = &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args: []*pg_query.Node{
			when(isNull(clone(a)), clone(null)),
			when(op("=", call("len", clone(a)), pg_query.MakeAConstIntNode(0, -1)), boolean(false)),
			when(call("list_contains", clone(a), clone(x)), boolean(true)),
			when(&pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{Boolop: pg_query.BoolExprType_OR_EXPR, Args: []*pg_query.Node{
				isNull(clone(x)), op("<", call("list_count", clone(a)), call("len", clone(a))),
			}, Location: -1}}}, clone(null)),
		},
		Defresult: boolean(false),
		Location:  -1,
	}}
}

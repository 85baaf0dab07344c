package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/pgdef"
)

// DuckDB's avg of integers and decimals is a DOUBLE; Postgres's is an exact
// numeric. An avg(x) that is a whole output column of the statement is
// rewritten to the accelerator's exact function,
//
//	pgaccel_numeric_avg(sum(x)::text, count(x))
//
// whose text the proxy encodes as a numeric (Decision.NumericText lists
// those columns); over a window, sum and count take the same window. Any
// other avg (inside an expression, HAVING, ORDER BY, DISTINCT or FILTER),
// and any avg of a SELECT DISTINCT, would compute in floating point and compare
// or combine inexactly: such statements go to the origin. ORDER BY and
// DISTINCT ON an exact avg output sort by its value (avgsort.go). An avg of a
// float column is left alone here: valueHazard sends it to the origin.

// pgdef.FuncNumericAvg is pgdef.FuncNumericAvg (planner does not
// import accelerator).

// exactAvgPositions returns the output columns of sel that are a plain
// avg(x), or nil when the target list cannot be numbered (a set
// operation, or a * that expands to several columns).
func exactAvgPositions(sel *pg_query.SelectStmt) []int {
	if sel == nil || (sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED) {
		return nil
	}
	if len(sel.DistinctClause) > 0 && !hasDistinctOn(sel) {
		// SELECT DISTINCT would compare the texts (avgsort.go).
		return nil
	}
	var pos []int
	for i, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return nil
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			for _, f := range cr.Fields {
				if f.GetAStar() != nil {
					return nil
				}
			}
		}
		if fc := rt.Val.GetFuncCall(); fc != nil && outputAvg(fc) {
			pos = append(pos, i)
		}
	}
	return pos
}

// outputAvg reports whether fc is avg(x) without DISTINCT, FILTER or ORDER
// BY, as an aggregate or over a window: its sum and count over the same
// window are exact in DuckDB.
func outputAvg(fc *pg_query.FuncCall) bool {
	return funcName(fc) == "avg" && len(fc.Args) == 1 && !fc.AggStar && !fc.AggDistinct &&
		fc.AggFilter == nil && len(fc.AggOrder) == 0 && !fc.AggWithinGroup && !floatArg(fc)
}

// floatArg reports whether the argument of fc is cast to a float type:
// its avg is a double precision in Postgres too (floatagg.go).
func floatArg(fc *pg_query.FuncCall) bool {
	tc := fc.Args[0].GetTypeCast()
	return tc != nil && castTarget(tc, floatTypeNames)
}

// plainAvg reports whether fc is avg(x) without DISTINCT, FILTER, ORDER BY
// or a window.
func plainAvg(fc *pg_query.FuncCall) bool {
	return funcName(fc) == "avg" && len(fc.Args) == 1 && !fc.AggStar && !fc.AggDistinct &&
		fc.AggFilter == nil && fc.Over == nil && len(fc.AggOrder) == 0 && !fc.AggWithinGroup && !floatArg(fc)
}

// rewriteAvg replaces the plain avg(x) at the given output positions.
func rewriteAvg(sel *pg_query.SelectStmt, positions []int) {
	for _, i := range positions {
		rt := sel.TargetList[i].GetResTarget()
		rt.Val = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncNumericAvg)}, avgArgs(rt.Val.GetFuncCall()), -1)
	}
}

// avgArgs are the arguments of the exact avg functions for avg(x):
// sum(x)::text and count(x).
func avgArgs(avg *pg_query.FuncCall) []*pg_query.Node {
	arg := avg.Args[0]
	sum := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("sum")}, []*pg_query.Node{arg}, -1)
	count := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("count")}, []*pg_query.Node{arg}, -1)
	if avg.Over != nil {
		// The same window for both.
		sum.GetFuncCall().Over = avg.Over
		count.GetFuncCall().Over = proto.Clone(avg.Over).(*pg_query.WindowDef)
	}
	return []*pg_query.Node{textCast(sum), count}
}

// textCast is n::text.
func textCast(n *pg_query.Node) *pg_query.Node { return castTo(n, "text") }

// castTo is CAST(n AS typ(mods...)), the rewrite's casts for DuckDB.
func castTo(n *pg_query.Node, typ string, mods ...int64) *pg_query.Node {
	tn := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(typ)}, Typemod: -1, Location: -1}
	for _, m := range mods {
		tn.Typmods = append(tn.Typmods, pg_query.MakeAConstIntNode(m, -1))
	}
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: n, TypeName: tn, Location: -1}}}
}

// fnCall is name(args...).
func fnCall(name string, args ...*pg_query.Node) *pg_query.Node {
	return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
}

// binOp is l op r.
func binOp(op string, l, r *pg_query.Node) *pg_query.Node {
	return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)}, l, r, -1)
}

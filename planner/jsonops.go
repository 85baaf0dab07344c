package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Postgres's json and jsonb operators become the accelerator's functions
// (accelerator/jsonfuncs.go), which return a value's text as it stands in
// the document (the origin's canonical jsonb text, or json's own text):
// DuckDB's operators of the same spelling print containers their own way
// ({"a":1} where Postgres prints {"a": 1}), and DuckDB parses neither #>
// nor ?.
var jsonOperatorFuncs = map[string]string{
	"->":  "pgaccel_json_get",
	"->>": "pgaccel_json_get_text",
	"#>":  "pgaccel_json_path",
	"#>>": "pgaccel_json_path_text",
	"?":   "pgaccel_jsonb_exists",
}

// jsonOperator is the operator of a binary A_Expr, or "".
func jsonOperator(e *pg_query.A_Expr) string {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil || e.Rexpr == nil {
		return ""
	}
	return divisionOp(e)
}

// rewriteJSONOperator replaces doc OP key by its function call.
func rewriteJSONOperator(site likeSite) {
	fn, ok := jsonOperatorFuncs[jsonOperator(site.expr)]
	if !ok || site.node == nil || site.node.GetAExpr() != site.expr {
		return
	}
	site.node.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(fn)},
		[]*pg_query.Node{site.expr.Lexpr, site.expr.Rexpr}, -1).Node
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

// rewriteJSONBContains turns doc @> template (and template <@ doc) into
// the accelerator's jsonb containment when doc is a jsonb column of the
// datasets (json has no @>; the same operators on arrays are DuckDB's
// list containment, left alone).
func rewriteJSONBContains(site likeSite, a *analysis, r resolution) {
	e := site.expr
	op := jsonOperator(e)
	if (op != "@>" && op != "<@") || site.node == nil || site.node.GetAExpr() != e {
		return
	}
	doc, tmpl := e.Lexpr, e.Rexpr
	if op == "<@" {
		doc, tmpl = tmpl, doc
	}
	cr := doc.GetColumnRef()
	if cr == nil || lastField(cr) == "" || len(a.aliasDefs[lastField(cr)]) > 0 {
		return
	}
	if oid, _ := columnType(r, lastField(cr)); oid != 3802 {
		return
	}
	site.node.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("pgaccel_jsonb_contains")},
		[]*pg_query.Node{doc, tmpl}, -1).Node
}

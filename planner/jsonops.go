package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Postgres's json and jsonb operators become the accelerator's functions
// (accelerator/jsonfuncs.go), which return a value's text as it stands in
// the document (the origin's canonical jsonb text, or json's own text):
// DuckDB's operators of the same spelling print containers their own way
// ({"a":1} where Postgres prints {"a": 1}), and DuckDB parses neither #>
// nor ?.
var jsonOperatorFuncs = map[string]string{
	"->":  pgdef.FuncJSONGet,
	"->>": pgdef.FuncJSONGetText,
	"#>":  pgdef.FuncJSONPath,
	"#>>": pgdef.FuncJSONPathText,
	"?":   pgdef.FuncJSONBExists,
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
	if !columnsAre(r, lastField(cr), func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDJSONB }) {
		return
	}
	site.node.Node = pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncJSONBContains)},
		[]*pg_query.Node{doc, tmpl}, -1).Node
}

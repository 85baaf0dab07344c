package planner

import pg_query "github.com/pganalyze/pg_query_go/v6"

// Row comparisons ((a, b) < (c, d), (a, b) = (c, d), IN of rows) are
// field by field with SQL's NULL semantics in Postgres, of structs with
// NULLs ordered in DuckDB: the rewrite spells the plain ones out field by
// field (typerewrite.go); the others (a row beside a subquery, rows of
// rows, ANY, BETWEEN ...) go to the origin.

// noteRows judges a comparison of rows: the plain ones (rowComparison)
// are spelled out by the rewrite, the others go to the origin. It reports
// whether e is one.
func (ts *typeSites) noteRows(e *pg_query.A_Expr, op string) bool {
	isRow := func(n *pg_query.Node) bool { return n.GetRowExpr() != nil }
	rows := isRow(e.Lexpr) || isRow(e.Rexpr)
	if l := e.Rexpr.GetList(); l != nil && !rows {
		for _, item := range l.Items {
			rows = rows || isRow(item)
		}
	}
	if !rows {
		return false
	}
	if _, ok := rowComparison(e); !ok {
		ts.rowCmp = "a comparison of rows (" + op + ") other than =, <>, <, <=, >, >=, IS DISTINCT FROM or IN of rows of plain values"
	}
	// The fields are compared pairwise: their types too.
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_IN:
		if l := e.Rexpr.GetList(); l != nil {
			for _, item := range l.Items {
				ts.notePair(e.Lexpr, item, false, false)
			}
		}
	default:
		ts.notePair(e.Lexpr, e.Rexpr, false, orderingOps[op])
	}
	return true
}

// rowComparison spells out a comparison of rows of plain values (copies
// of its operands), when it is one: ok is false for anything else.
func rowComparison(e *pg_query.A_Expr) (*pg_query.Node, bool) {
	op := operatorName(e)
	fields := func(n *pg_query.Node) []*pg_query.Node {
		re := n.GetRowExpr()
		if re == nil || len(re.Args) == 0 {
			return nil
		}
		for _, f := range re.Args {
			if f.GetRowExpr() != nil || f.GetSubLink() != nil && f.GetSubLink().SubLinkType != pg_query.SubLinkType_EXPR_SUBLINK {
				return nil // a row of rows: compared as records
			}
		}
		return re.Args
	}
	l := fields(e.Lexpr)
	if l == nil {
		return nil, false
	}
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		r := fields(e.Rexpr)
		if len(r) != len(l) {
			return nil, false
		}
		switch op {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			return rowOp(op, l, r), true
		}
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		r := fields(e.Rexpr)
		if len(r) != len(l) {
			return nil, false
		}
		parts := make([]*pg_query.Node, len(l))
		for i := range l {
			parts[i] = pg_query.MakeAExprNode(e.Kind, []*pg_query.Node{pg_query.MakeStrNode("=")}, copyNode(l[i]), copyNode(r[i]), -1)
		}
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_DISTINCT {
			return boolOf(pg_query.BoolExprType_OR_EXPR, parts), true
		}
		return boolOf(pg_query.BoolExprType_AND_EXPR, parts), true
	case pg_query.A_Expr_Kind_AEXPR_IN:
		list := e.Rexpr.GetList()
		if list == nil || len(list.Items) == 0 || op != "=" && op != "<>" {
			return nil, false
		}
		parts := make([]*pg_query.Node, len(list.Items))
		for i, item := range list.Items {
			r := fields(item)
			if len(r) != len(l) {
				return nil, false
			}
			parts[i] = rowOp(op, l, r)
		}
		if op == "=" {
			return boolOf(pg_query.BoolExprType_OR_EXPR, parts), true
		}
		return boolOf(pg_query.BoolExprType_AND_EXPR, parts), true // NOT IN
	}
	return nil, false
}

// rowOp is (l...) op (r...) field by field.
func rowOp(op string, l, r []*pg_query.Node) *pg_query.Node {
	cmp := func(o string, i int) *pg_query.Node {
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(o)}, copyNode(l[i]), copyNode(r[i]), -1)
	}
	switch op {
	case "=", "<>", "!=":
		parts := make([]*pg_query.Node, len(l))
		for i := range l {
			parts[i] = cmp(op, i)
		}
		if op == "=" {
			return boolOf(pg_query.BoolExprType_AND_EXPR, parts)
		}
		return boolOf(pg_query.BoolExprType_OR_EXPR, parts)
	}
	strict := op[:1] // < or >
	last := len(l) - 1
	out := cmp(op, last)
	for i := last - 1; i >= 0; i-- {
		out = boolOf(pg_query.BoolExprType_OR_EXPR, []*pg_query.Node{
			cmp(strict, i),
			boolOf(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{cmp("=", i), out}),
		})
	}
	return out
}

// boolOf is AND or OR of parts (the part itself when alone).
func boolOf(op pg_query.BoolExprType, parts []*pg_query.Node) *pg_query.Node {
	if len(parts) == 1 {
		return parts[0]
	}
	return pg_query.MakeBoolExprNode(op, parts, -1)
}

package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Division and modulo by zero are errors in Postgres (22012) and NULL in
// DuckDB. The rewrite guards every right operand of / and %:
//
//	a / b   becomes   a / (CASE WHEN b = 0 THEN error('division by zero') ELSE b END)
//
// so DuckDB fails instead of answering, and the statement falls back to the
// origin, which reports Postgres's own error. DuckDB evaluates CASE
// branches only for the rows that take them, so a division guarded by the
// statement itself (CASE WHEN b <> 0 THEN a / b END) still runs locally.

// isDivision reports whether e is a binary / or % operator.
func isDivision(e *pg_query.A_Expr) bool {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || e.Lexpr == nil || e.Rexpr == nil || len(e.Name) != 1 {
		return false
	}
	s, ok := e.Name[0].GetNode().(*pg_query.Node_String_)
	return ok && (s.String_.Sval == "/" || s.String_.Sval == "%")
}

// guardDivisor wraps e's right operand in the zero check.
func guardDivisor(e *pg_query.A_Expr) {
	divisor := e.Rexpr
	isZero := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP,
		[]*pg_query.Node{pg_query.MakeStrNode("=")}, divisor, pg_query.MakeAConstIntNode(0, -1), -1)
	fail := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("error")},
		[]*pg_query.Node{pg_query.MakeAConstStrNode("division by zero", -1)}, -1)
	e.Rexpr = &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args:      []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: isZero, Result: fail}}}},
		Defresult: divisor,
		Location:  -1,
	}}}
}

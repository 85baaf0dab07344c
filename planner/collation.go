package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// DuckDB compares and sorts strings by their bytes. So does Postgres under
// the C and POSIX collations, but not under a linguistic one (en_US,
// ICU...): a statement that orders or compares text of a column whose
// origin collation is not bytewise goes to the origin. Equality (=, <>,
// GROUP BY, DISTINCT, joins) is bytewise for every deterministic collation
// and is not affected.
//
// Case mapping (upper, lower, initcap, ILIKE) follows the origin's
// LC_CTYPE, which DuckDB does not share (under C, Postgres maps ASCII
// only; DuckDB maps all of Unicode): those go to the origin too.

// orderingOps are the operators whose result depends on the collation.
var orderingOps = map[string]bool{"<": true, ">": true, "<=": true, ">=": true}

// orderingFuncs are functions whose result depends on the collation.
var orderingFuncs = map[string]bool{"min": true, "max": true, "greatest": true, "least": true}

// noteOrdering records that the statement orders or range-compares values.
func (z *analyzer) noteOrdering(m any) {
	switch n := m.(type) {
	case *pg_query.SortBy:
		z.a.ordering = true
	case *pg_query.A_Expr:
		switch n.Kind {
		case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			z.a.ordering = true
		case pg_query.A_Expr_Kind_AEXPR_OP, pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
			if len(n.Name) == 1 {
				if s, ok := n.Name[0].GetNode().(*pg_query.Node_String_); ok && orderingOps[s.String_.Sval] {
					z.a.ordering = true
				}
			}
		case pg_query.A_Expr_Kind_AEXPR_ILIKE:
			z.flag(flagUnsupported)
		}
	case *pg_query.FuncCall:
		switch funcName(n) {
		case "upper", "lower", "initcap":
			z.flag(flagUnsupported)
		}
		if orderingFuncs[funcName(n)] {
			z.a.ordering = true
		}
	case *pg_query.MinMaxExpr:
		z.a.ordering = true
	}
}

// collatable reports whether values of the type compare by a collation.
func collatable(oid uint32) bool {
	switch oid {
	case 25, 1043, 1042, 19, 1009, 1015, 1014, 1003: // text, varchar, bpchar, name and their arrays
		return true
	}
	return false
}

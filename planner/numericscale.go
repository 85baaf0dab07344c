package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// A Postgres numeric value carries its own display scale, row by row; a
// DuckDB DECIMAL column has one scale. Where a statement merges values of
// possibly different scales into one column, the two print differently:
// COALESCE(amount, 0) is "0" at the origin and "0.00" in DuckDB. So:
//
//   - CASE, COALESCE, NULLIF, GREATEST/LEAST, set operations (UNION, ...)
//     and VALUES lists merge values: unless every merged value is an
//     integer, string or NULL literal, the statement goes to the origin
//     when a referenced dataset has a numeric column or the statement has
//     a numeric literal;
//   - a cast to numeric without precision and scale is DuckDB's
//     DECIMAL(18,3), which rounds: it goes to the origin.

// checkNumericCast flags casts to an unconstrained numeric.
func checkNumericCast(tc *pg_query.TypeCast) uint8 {
	if tc.TypeName == nil || len(tc.TypeName.Typmods) > 0 {
		return 0
	}
	names, ok := stringsOf(tc.TypeName.Names)
	if !ok || len(names) == 0 {
		return 0
	}
	switch strings.ToLower(names[len(names)-1]) {
	case "numeric", "decimal":
		return flagUnsupported
	}
	return 0
}

// noteMerging records constructs that merge values into one column.
func (z *analyzer) noteMerging(m any) {
	outside := true
	if pm, ok := m.(proto.Message); ok && z.exempt[pm] {
		outside = false
	}
	switch n := m.(type) {
	case *pg_query.CaseExpr:
		branches := []*pg_query.Node{n.Defresult}
		for _, w := range n.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				branches = append(branches, cw.Result)
			}
		}
		z.merging(branches, outside)
	case *pg_query.CoalesceExpr:
		z.merging(n.Args, outside)
	case *pg_query.MinMaxExpr:
		z.merging(n.Args, true)
	case *pg_query.A_Expr:
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			z.merging([]*pg_query.Node{n.Lexpr}, true)
		}
	case *pg_query.SelectStmt:
		if n.Op != pg_query.SetOperation_SETOP_NONE && n.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			for _, arm := range []*pg_query.SelectStmt{n.Larg, n.Rarg} {
				if arm == nil || arm.Op != pg_query.SetOperation_SETOP_NONE {
					continue // a nested set operation is visited on its own
				}
				var vals []*pg_query.Node
				for _, t := range arm.TargetList {
					if rt := t.GetResTarget(); rt != nil {
						vals = append(vals, rt.Val)
					}
				}
				if len(arm.ValuesLists) > 0 {
					z.mergesAll(true)
				}
				z.merging(vals, true)
			}
		}
		if len(n.ValuesLists) > 1 {
			z.mergesAll(true)
		}
	case *pg_query.FuncCall:
		// lag(x, 1, d) and lead(x, 1, d) return x or the default d.
		if name := funcName(n); (name == "lag" || name == "lead") && len(n.Args) == 3 {
			z.merging([]*pg_query.Node{n.Args[0], n.Args[2]}, true)
		}
	case *pg_query.A_Const:
		if _, ok := n.Val.(*pg_query.A_Const_Fval); ok {
			z.a.numericLiteral = true
		}
	}
}

// mergesAll marks the statement as merging values of any kind (and, when
// outside, outside the scale-tracked outputs too).
func (z *analyzer) mergesAll(outside bool) {
	z.a.mergesValues = true
	if outside {
		z.a.mergesOutside = true
	}
}

// merging notes the values merged into one column: literals that cannot
// carry a numeric scale are fine, column references are checked against
// the datasets' column types per plan, anything else marks the statement.
func (z *analyzer) merging(branches []*pg_query.Node, outside bool) {
	for _, b := range branches {
		if b == nil {
			continue // CASE without ELSE: NULL
		}
		if cr := b.GetColumnRef(); cr != nil {
			if name := lastField(cr); name != "" {
				if z.a.mergeCols == nil {
					z.a.mergeCols = map[string]struct{}{}
				}
				z.a.mergeCols[name] = struct{}{}
				if outside {
					if z.a.mergeColsOutside == nil {
						z.a.mergeColsOutside = map[string]struct{}{}
					}
					z.a.mergeColsOutside[name] = struct{}{}
				}
				continue
			}
			z.mergesAll(outside)
			return
		}
		if tc := b.GetTypeCast(); tc != nil && (castTarget(tc, textTypeNames) || castTarget(tc, integerTypeNames)) || textExpr(b) || countExpr(b) {
			continue // text or an integer: no display scale
		}
		c := b.GetAConst()
		if c == nil {
			z.mergesAll(outside)
			return
		}
		switch c.Val.(type) {
		case *pg_query.A_Const_Ival, *pg_query.A_Const_Sval, *pg_query.A_Const_Boolval:
		default:
			if !c.Isnull {
				z.mergesAll(outside)
				return
			}
		}
	}
}

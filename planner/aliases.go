package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Rules that look at a column's type (casts to text, ||, merged numeric
// scales, char(n) values) find it among the datasets' columns by name. A
// name may instead be the output of a subquery or CTE (customer_orders.
// lifetime_value, defined as sum(amount)), or both: the rule then follows
// the output columns of that name, through further names, to dataset
// columns or to expressions it can judge. A name it cannot follow is
// judged unsafe.

// noteAlias records an output column's expression under its name: its
// alias, or the name Postgres gives an unaliased column or function call.
func (z *analyzer) noteAlias(rt *pg_query.ResTarget) {
	if rt.Val == nil || z.topTargets[rt] {
		// The statement's own outputs: no column reference of it can
		// mean them (ORDER BY and GROUP BY refer to them apart).
		return
	}
	name := rt.Name
	if name == "" {
		switch v := rt.Val.GetNode().(type) {
		case *pg_query.Node_ColumnRef:
			return // a column under its own name: the datasets' column
		case *pg_query.Node_FuncCall:
			name = funcName(v.FuncCall)
		default:
			return
		}
	}
	if z.a.aliasDefs == nil {
		z.a.aliasDefs = map[string][]*pg_query.Node{}
	}
	// A copy: the first rewrite changes the analysed tree in place.
	z.a.aliasDefs[name] = append(z.a.aliasDefs[name], proto.Clone(rt.Val).(*pg_query.Node))
}

// outputTargets adds the output columns of sel (of both sides of a set
// operation) to set.
func outputTargets(sel *pg_query.SelectStmt, set map[*pg_query.ResTarget]bool) map[*pg_query.ResTarget]bool {
	if sel == nil {
		return set
	}
	if set == nil {
		set = map[*pg_query.ResTarget]bool{}
	}
	for _, t := range sel.TargetList {
		if rt := t.GetResTarget(); rt != nil {
			set[rt] = true
		}
	}
	outputTargets(sel.Larg, set)
	outputTargets(sel.Rarg, set)
	return set
}

// nameRule judges what a name may hold: a dataset column (col) or the
// expression of an output column (expr).
type nameRule struct {
	col  func(c catalog.ColumnInfo) bool
	expr func(n *pg_query.Node) bool
}

// maxAliasDepth bounds how many names deep a name is followed.
const maxAliasDepth = 6

// safeName reports whether every value the name may stand for in the
// statement passes rule: each dataset column of that name, and each output
// column of that name, followed through the names it refers to.
func (a *analysis) safeName(r resolution, name string, rule nameRule, depth int) bool {
	found, all := columnsNamed(r, name, rule.col)
	if found && !all {
		return false
	}
	for _, def := range a.aliasDefs[name] {
		found = true
		if !a.safeExpr(r, def, name, rule, depth) {
			return false
		}
	}
	return found
}

// safeExpr reports whether the output expression n, defining name, passes
// rule: a column reference is followed by its name, the branches of CASE,
// COALESCE, GREATEST, LEAST and NULLIF are judged each, anything else by
// rule.expr.
func (a *analysis) safeExpr(r resolution, n *pg_query.Node, name string, rule nameRule, depth int) bool {
	if depth >= maxAliasDepth {
		return false
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		ref := lastField(v.ColumnRef)
		if ref == "" {
			return false
		}
		// A column under its own name: the dataset columns of that
		// name, judged by safeName already.
		return ref == name || a.safeName(r, ref, rule, depth+1)
	case *pg_query.Node_CoalesceExpr:
		return a.safeAll(r, v.CoalesceExpr.Args, name, rule, depth)
	case *pg_query.Node_MinMaxExpr:
		return a.safeAll(r, v.MinMaxExpr.Args, name, rule, depth)
	case *pg_query.Node_CaseExpr:
		branches := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				branches = append(branches, cw.Result)
			}
		}
		return a.safeAll(r, branches, name, rule, depth)
	case *pg_query.Node_AExpr:
		if v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return a.safeExpr(r, v.AExpr.Lexpr, name, rule, depth+1)
		}
	}
	return rule.expr(n)
}

// safeAll is safeExpr of every branch (a missing ELSE is NULL).
func (a *analysis) safeAll(r resolution, branches []*pg_query.Node, name string, rule nameRule, depth int) bool {
	for _, b := range branches {
		if b != nil && !a.safeExpr(r, b, name, rule, depth+1) {
			return false
		}
	}
	return true
}

// firstUnsafe returns a name of names that fails rule, or "".
func (a *analysis) firstUnsafe(r resolution, names map[string]struct{}, rule nameRule) string {
	for name := range names {
		if !a.safeName(r, name, rule, 0) {
			return name
		}
	}
	return ""
}

// textExpr reports whether n is text whose value DuckDB and Postgres agree
// on: a string literal, a cast to a text type, ->>, #>> or ||, or a call
// of textResultFuncs.
func textExpr(n *pg_query.Node) bool {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		_, isStr := v.AConst.Val.(*pg_query.A_Const_Sval)
		return isStr || v.AConst.Isnull
	case *pg_query.Node_TypeCast:
		return castTarget(v.TypeCast, textTypeNames)
	case *pg_query.Node_AExpr:
		op := divisionOp(v.AExpr)
		return v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "->>" || op == "#>>" || op == "||")
	case *pg_query.Node_FuncCall:
		return textResultFuncs[funcName(v.FuncCall)]
	}
	return false
}

// countExpr reports whether n is count(...), a bigint.
func countExpr(n *pg_query.Node) bool {
	fc := n.GetFuncCall()
	return fc != nil && funcName(fc) == "count" && fc.Over == nil
}

// castTarget reports whether tc casts to one of the type names.
func castTarget(tc *pg_query.TypeCast, names map[string]bool) bool {
	if tc.TypeName == nil || len(tc.TypeName.ArrayBounds) > 0 {
		return false
	}
	parts, ok := stringsOf(tc.TypeName.Names)
	return ok && len(parts) > 0 && names[strings.ToLower(parts[len(parts)-1])]
}

// integerTypeNames are the spellings of the integer types in a cast.
var integerTypeNames = map[string]bool{"int2": true, "int4": true, "int8": true, "int": true, "integer": true, "smallint": true, "bigint": true}

// Spellings of single types in a cast, as pg_query leaves them (double
// precision and float are float8 there, real is float4).
var (
	int4TypeNames   = map[string]bool{"int2": true, "int4": true, "int": true, "integer": true, "smallint": true}
	int8TypeNames   = map[string]bool{"int8": true, "bigint": true}
	float8TypeNames = map[string]bool{"float8": true}
	float4TypeNames = map[string]bool{"float4": true}
	dateTypeNames   = map[string]bool{"date": true}
)

// Rules for names.
var (
	// textCastRule: a value cast to text prints alike (textCastSafe).
	textCastRule = nameRule{
		col: textCastSafeColumn,
		expr: func(n *pg_query.Node) bool {
			if tc := n.GetTypeCast(); tc != nil && castTarget(tc, integerTypeNames) {
				return true
			}
			return textExpr(n) || countExpr(n)
		},
	}
	// concatRule: an operand of || prints alike (as a cast to text).
	concatRule = nameRule{
		col:  textCastSafeColumn,
		expr: textCastRule.expr,
	}
	// mergeRule: a merged value carries no numeric display scale.
	mergeRule = nameRule{
		col: func(c catalog.ColumnInfo) bool {
			return c.TypeOID != pgdef.OIDNumeric && c.TypeOID != pgdef.OIDNumericArray
		},
		expr: noScale,
	}
	// bpcharValueRule: a value is no char(n) returned without its length.
	bpcharValueRule = nameRule{
		col: func(c catalog.ColumnInfo) bool {
			return c.TypeOID != pgdef.OIDBpchar && c.TypeOID != pgdef.OIDBpcharArray
		},
		expr: func(n *pg_query.Node) bool {
			switch v := n.GetNode().(type) {
			case *pg_query.Node_FuncCall:
				return !valueFuncs[funcName(v.FuncCall)]
			case *pg_query.Node_AConst:
				return true
			case *pg_query.Node_AExpr:
				return v.AExpr.Kind != pg_query.A_Expr_Kind_AEXPR_NULLIF
			case *pg_query.Node_TypeCast:
				return !castTarget(v.TypeCast, map[string]bool{"char": true, "bpchar": true, "character": true})
			}
			return false
		},
	}
)

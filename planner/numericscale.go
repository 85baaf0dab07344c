package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"strings"
)

// A Postgres numeric value carries its own display scale, row by row; a
// DuckDB DECIMAL column has one scale. Where a statement merges values of
// possibly different scales into one column, the two print differently:
// COALESCE(amount, 0) is "0" at the origin and "0.00" in DuckDB. So:
//
//   - CASE, COALESCE, GREATEST/LEAST, set operations (UNION, ...)
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
	if pm, ok := m.(proto.Message); ok && z.absorbed[pm] {
		return // its scale is never printed (absorbing)
	}
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
		z.merging(n.Args, outside)
	case *pg_query.A_Expr:
		// NULLIF(a, b) is a or NULL: a's scale, no merge; but a char(n)
		// a loses its length (the char rule).
		if n.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			if cr := n.Lexpr.GetColumnRef(); cr != nil && lastField(cr) != "" {
				if z.a.valueCols == nil {
					z.a.valueCols = map[string]struct{}{}
				}
				z.a.valueCols[lastField(cr)] = struct{}{}
			}
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
			z.merging([]*pg_query.Node{n.Args[0], n.Args[2]}, outside)
			z.a.valueDefaults = append(z.a.valueDefaults, [2]*pg_query.Node{copyNode(n.Args[0]), copyNode(n.Args[2])})
		}
		if arrayMergingFuncs[funcName(n)] {
			// One array of the elements of both: a DuckDB list has one
			// scale, each Postgres numeric element its own. A slice or
			// subscript of a column holds the column's elements.
			args := make([]*pg_query.Node, len(n.Args))
			for i, arg := range n.Args {
				args[i] = arg
				if ind := arg.GetAIndirection(); ind != nil && ind.Arg.GetColumnRef() != nil && onlySubscripts(ind) {
					args[i] = ind.Arg
				}
			}
			z.merging(args, outside)
		}
	case *pg_query.A_ArrayExpr:
		// ARRAY[a, b]: the elements' common type.
		z.merging(n.Elements, outside)
	case *pg_query.A_Const:
		if _, ok := n.Val.(*pg_query.A_Const_Fval); ok {
			z.a.numericLiteral = true
		}
	}
}

// arrayMergingFuncs build an array of the elements of their arguments
// (array_append(arr, x) of arr's and x).
var arrayMergingFuncs = map[string]bool{"array_append": true, "array_prepend": true, "array_cat": true, "array_replace": true}

// onlySubscripts reports whether every indirection of ind is a subscript
// or slice (no field selection).
func onlySubscripts(ind *pg_query.A_Indirection) bool {
	for _, i := range ind.Indirection {
		if i.GetAIndices() == nil {
			return false
		}
	}
	return true
}

// commonTypeHazard returns the first lag or lead default whose common
// type with the value may not be the value's own type: DuckDB casts the
// default to the value's type (lag(int_col, 1, -1.4) is -1 there, -1.4 in
// Postgres). A NULL or a string literal (an unknown, which Postgres
// resolves to the value's type) is fine; so is an integer beside an
// integer or a double precision, and a decimal literal beside a double
// precision.
func (a *analysis) commonTypeHazard(r resolution) string {
	for _, vd := range a.valueDefaults {
		v, d := vd[0], vd[1]
		if c := d.GetAConst(); c != nil {
			if _, ok := c.Val.(*pg_query.A_Const_Sval); ok || c.Isnull {
				continue
			}
		}
		vk, dk := a.kindOf(r, v, 0), a.kindOf(r, d, 0)
		switch {
		case dk == kindNull:
			continue
		case vk == kindInt8 && (dk == kindInt4 || dk == kindInt8), vk == kindInt4 && dk == kindInt4:
			continue
		case vk == kindFloat8 && (dk == kindInt4 || dk == kindInt8 || dk == kindNumLit || dk == kindFloat8):
			continue
		}
		// A numeric value and a numeric literal: Postgres's common type
		// is numeric, the value's; DuckDB's cast of the literal to the
		// value's scale is exact when the literal has no more decimals
		// (the display scale is the scale tracking's).
		if vs, ok := a.numericScaleOf(r, v, 0); ok {
			if ds, ok := constScale(d); ok && ds <= vs {
				continue
			}
		}
		return "a default of lag or lead whose type may not be the value's (Postgres takes their common type, DuckDB the value's)"
	}
	return ""
}

// numericScaleOf returns the scale DuckDB gives the numeric value n: a
// numeric column of the datasets (every one of its name), or an output
// column naming one, or sum, min or max of one. ok is false for anything
// else.
func (a *analysis) numericScaleOf(r resolution, n *pg_query.Node, depth int) (int, bool) {
	if depth >= maxAliasDepth || n == nil {
		return 0, false
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		if name == "" {
			return 0, false
		}
		scale, found := -1, false
		for _, d := range r.datasets {
			for _, c := range d.state.Columns {
				if c.Name != name {
					continue
				}
				found = true
				cs, ok := numericColumnScale(c)
				if !ok {
					return 0, false
				}
				if scale < 0 || cs < scale {
					scale = cs
				}
			}
		}
		for _, def := range a.aliasDefs[name] {
			if cr := def.GetColumnRef(); cr != nil && lastField(cr) == name {
				continue // the column itself
			}
			ds, ok := a.numericScaleOf(r, def, depth+1)
			if !ok {
				return 0, false
			}
			found = true
			if scale < 0 || ds < scale {
				scale = ds
			}
		}
		return scale, found && scale >= 0
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		switch funcName(fc) {
		case "sum", "min", "max":
			if len(fc.Args) == 1 && len(fc.Funcname) == 1 {
				return a.numericScaleOf(r, fc.Args[0], depth+1)
			}
		}
	}
	return 0, false
}

// constScale returns the decimals of a number literal (an integer's are
// 0), or of one cast to numeric without a type modifier.
func constScale(n *pg_query.Node) (int, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		if !castTarget(tc, numericTypeNames) || len(tc.TypeName.Typmods) > 0 {
			return 0, false
		}
		n = tc.Arg
	}
	c := n.GetAConst()
	if c == nil {
		return 0, false
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return 0, true
	case *pg_query.A_Const_Fval:
		return literalScale(v.Fval.Fval)
	}
	return 0, false
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
		if noScale(b) {
			continue // text, an integer, a boolean, a date...: no display scale
		}
		if nested := nestedBranches(b); nested != nil {
			z.merging(nested, outside)
			continue
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

// numericTypeNames are the spellings of numeric in a cast.
var numericTypeNames = map[string]bool{"numeric": true, "decimal": true}

// nonNumericFuncs are functions whose result is never a numeric.
var nonNumericFuncs = map[string]bool{
	"date_trunc": true, "make_date": true, "to_char": true, "md5": true, "now": true,
	"starts_with": true, "isfinite": true, "bool_and": true, "bool_or": true, "every": true,
	"array_length": true, "cardinality": true, "array_position": true, "jsonb_typeof": true, "json_typeof": true,
	"jsonb_array_length": true, "json_array_length": true, "array_to_string": true,
}

// comparisonOps are operators whose result is a boolean.
var comparisonOps = map[string]bool{
	"=": true, "<>": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"@>": true, "<@": true, "&&": true, "?": true, "?|": true, "?&": true, "~": true, "~*": true, "!~": true, "!~*": true,
	"->>": true, "#>>": true, "||": true, "->": true, "#>": true,
}

// noScale reports whether the value of n can never be a numeric, whose
// display scale would vary: a literal other than a decimal, a cast to a
// type other than numeric, a boolean expression, a comparison, text, an
// integer result.
func noScale(n *pg_query.Node) bool {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		_, isFloat := v.AConst.Val.(*pg_query.A_Const_Fval)
		return !isFloat
	case *pg_query.Node_TypeCast:
		return v.TypeCast.TypeName != nil && !castTarget(v.TypeCast, numericTypeNames)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return true
	case *pg_query.Node_SubLink:
		return v.SubLink.SubLinkType == pg_query.SubLinkType_EXISTS_SUBLINK || v.SubLink.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK ||
			v.SubLink.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK
	case *pg_query.Node_AExpr:
		switch v.AExpr.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			return comparisonOps[divisionOp(v.AExpr)]
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			return false
		default: // LIKE, ILIKE, IN, BETWEEN, IS DISTINCT FROM, = ANY: booleans
			return true
		}
	case *pg_query.Node_FuncCall:
		name := funcName(v.FuncCall)
		return textResultFuncs[name] || integerResultFuncs[name] || nonNumericFuncs[name]
	}
	return false
}

// nestedBranches returns the values a nested CASE or COALESCE may take,
// or nil for another node.
func nestedBranches(n *pg_query.Node) []*pg_query.Node {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_CoalesceExpr:
		return v.CoalesceExpr.Args
	case *pg_query.Node_CaseExpr:
		out := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				out = append(out, cw.Result)
			}
		}
		return out
	}
	return nil
}

// A merge whose values are only compared, sorted, grouped by, counted or
// cast to a type of fixed scale prints no scale: it is no hazard. These
// absorb the scale of everything under them.
var absorbingFuncs = map[string]bool{"floor": true, "ceil": true, "ceiling": true, "sign": true, "count": true}

// absorbingCasts are the type names a cast to which fixes the scale (or
// has none): integers, floats, booleans; numeric(p,s) counts too.
var absorbingCasts = map[string]bool{
	"int2": true, "int4": true, "int8": true, "int": true, "integer": true, "smallint": true, "bigint": true,
	"float4": true, "float8": true, "real": true, "float": true, "double precision": true, "bool": true, "boolean": true,
}

// absorbedMerges returns the merge nodes (CASE, COALESCE, GREATEST/LEAST,
// lag/lead, set operations) under absorbing contexts of sel: comparisons
// and other predicates, WHERE, HAVING, ON, FILTER, ORDER BY, GROUP BY,
// PARTITION BY, casts to fixed-scale types, and absorbingFuncs.
func absorbedMerges(sel *pg_query.SelectStmt) map[proto.Message]bool {
	f := &absorbFinder{out: map[proto.Message]bool{}}
	walk(sel, f)
	return f.out
}

type absorbFinder struct{ out map[proto.Message]bool }

func (f *absorbFinder) enter(m proto.Message, w *walker) {
	var roots []*pg_query.Node
	switch n := m.(type) {
	case *pg_query.SelectStmt:
		roots = append(roots, n.WhereClause, n.HavingClause)
		roots = append(roots, n.GroupClause...)
	case *pg_query.JoinExpr:
		roots = append(roots, n.Quals)
	case *pg_query.SortBy:
		roots = append(roots, n.Node)
	case *pg_query.WindowDef:
		roots = append(roots, n.PartitionClause...)
	case *pg_query.FuncCall:
		roots = append(roots, n.AggFilter)
		if absorbingFuncs[funcName(n)] && n.Over == nil {
			roots = append(roots, n.Args...)
		}
	case *pg_query.NullTest:
		roots = append(roots, n.Arg)
	case *pg_query.BooleanTest:
		roots = append(roots, n.Arg)
	case *pg_query.TypeCast:
		if castTarget(n, absorbingCasts) || castTarget(n, numericTypeNames) && n.TypeName != nil && len(n.TypeName.Typmods) == 2 {
			roots = append(roots, n.Arg)
		}
	case *pg_query.A_Expr:
		switch n.Kind {
		case pg_query.A_Expr_Kind_AEXPR_OP:
			switch divisionOp(n) {
			case "=", "<>", "!=", "<", ">", "<=", ">=":
				roots = append(roots, n.Lexpr, n.Rexpr)
			}
		case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL, pg_query.A_Expr_Kind_AEXPR_DISTINCT,
			pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN,
			pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN, pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
			roots = append(roots, n.Lexpr, n.Rexpr)
		}
	}
	for _, r := range roots {
		if r != nil {
			walk(r, mergeMarker{f.out})
		}
	}
}

// mergeMarker marks every merge node it meets.
type mergeMarker struct{ out map[proto.Message]bool }

func (mm mergeMarker) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.CaseExpr, *pg_query.CoalesceExpr, *pg_query.MinMaxExpr:
		mm.out[m] = true
	case *pg_query.SelectStmt:
		if n.Op != pg_query.SetOperation_SETOP_NONE && n.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
			mm.out[m] = true
		}
	case *pg_query.FuncCall:
		if name := funcName(n); name == "lag" || name == "lead" || scaleSetting(n) {
			mm.out[m] = true // round(x, k) and trunc(x, k) set a scale no one prints
		}
	}
}

// numericColumnScale is the scale every value of a numeric column prints
// with: its declared scale, or for one without, the scale the acceleration
// holds its values at (catalog.ColumnInfo.HeldScale: all its values have
// it). ok is false for other columns.
func numericColumnScale(c catalog.ColumnInfo) (int, bool) {
	switch {
	case c.TypeOID != pgdef.OIDNumeric:
		return 0, false
	case c.TypeMod >= 4:
		return int((c.TypeMod - 4) & 0xffff), true
	case c.HeldScale != nil:
		return *c.HeldScale, true
	}
	return 0, false
}

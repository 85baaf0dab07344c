package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Text of the database's default collation. The column rule (hazards.go)
// sends a statement that orders or range-compares a text column of a
// collation that is not bytewise to the origin. Text that comes from no
// collatable column has the database's default collation instead: the
// text out of a jsonb (doc->>'n'), to_char, a cast to text of a number, a
// concatenation, string literals compared with each other; and jsonb
// itself compares its strings by the default collation. When that
// collation is not bytewise (en_US.UTF-8, an ICU locale), ordering such
// text is the origin's: DuckDB compares bytes. Session.TextBytewise says
// whether the database's default collation is bytewise (the session info
// reads it).

// noteOrderedExprs records expressions whose order the statement depends
// on (copies: the rewrite changes the tree), judged once the datasets
// are resolved (defaultCollationHazard).
func (z *analyzer) noteOrderedExprs(ns ...*pg_query.Node) {
	for _, n := range ns {
		if n != nil {
			z.a.orderedExprs = append(z.a.orderedExprs, copyNode(n))
		}
	}
}

// orderedOperands notes the operands of a comparison that orders: each
// on its own, but a string literal or a parameter beside an operand takes
// that operand's collation, so only two of them compared alone count.
func (z *analyzer) orderedOperands(ops ...*pg_query.Node) {
	allConst := true
	for _, op := range ops {
		if op == nil {
			continue
		}
		if !isStringConst(op) && op.GetParamRef() == nil {
			allConst = false
			z.noteOrderedExprs(op)
		}
	}
	if allConst {
		z.noteOrderedExprs(ops...)
	}
}

func isStringConst(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil && tc.TypeName == nil {
		n = tc.Arg
	}
	if c := n.GetAConst(); c != nil {
		_, ok := c.Val.(*pg_query.A_Const_Sval)
		return ok
	}
	return false
}

// defaultCollationHazard returns the first ordered expression that may be
// text of the database's default collation, when that collation is not
// bytewise.
func (a *analysis) defaultCollationHazard(r resolution, s *Session) string {
	if s.TextBytewise || s.DefaultCollationLocale != "" {
		return "" // collorder.go keys or refuses each ordering
	}
	for _, n := range a.orderedExprs {
		if a.defaultText(r, n, 0) {
			return "ordering or comparing " + describeExpr(n) + ", text of the database's default collation, which is not bytewise"
		}
	}
	return ""
}

// describeExpr names an expression for the debug log.
func describeExpr(n *pg_query.Node) string {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		if name := lastField(v.ColumnRef); name != "" {
			return name
		}
	case *pg_query.Node_FuncCall:
		return "a call of " + funcName(v.FuncCall)
	case *pg_query.Node_AExpr:
		if names, ok := stringsOf(v.AExpr.Name); ok && len(names) > 0 {
			return "a value of operator " + names[len(names)-1]
		}
	case *pg_query.Node_AConst:
		return "a string literal"
	}
	return "an expression"
}

// collatedTextFuncs are functions whose result is text (or jsonb) whose
// collation derives from their collatable arguments, or is the database's
// default when none is collatable.
var collatedTextFuncs = map[string]bool{
	"lower": true, "upper": true, "initcap": true, "substr": true, "substring": true, "left": true,
	"right": true, "lpad": true, "rpad": true, "ltrim": true, "rtrim": true, "btrim": true, "trim": true,
	"replace": true, "concat": true, "concat_ws": true, "md5": true, "to_char": true, "string_agg": true,
	"array_to_string": true, "split_part": true, "reverse": true, "repeat": true, "translate": true,
	"regexp_replace": true, "format": true, "jsonb_typeof": true, "json_typeof": true,
	"jsonb_extract_path_text": true, "json_extract_path_text": true, "jsonb_extract_path": true,
	"to_jsonb": true, "jsonb_build_object": true, "jsonb_agg": true, "chr": true, "to_hex": true,
	"quote_ident": true, "quote_literal": true, "encode": true,
}

// passThroughFuncs return one of their arguments.
var passThroughFuncs = map[string]bool{
	"min": true, "max": true, "first_value": true, "last_value": true, "nth_value": true, "lag": true,
	"lead": true, "mode": true, "percentile_disc": true, "any_value": true, "coalesce": true, "nullif": true,
	"greatest": true, "least": true,
}

// defaultText reports whether n may be text (or jsonb) that compares by the
// database's default collation rather than by a column's own.
func (a *analysis) defaultText(r resolution, n *pg_query.Node, depth int) bool {
	if n == nil {
		return false
	}
	if depth >= maxAliasDepth {
		return true
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		if name == "" {
			return true // a whole row
		}
		for _, def := range a.aliasDefs[name] {
			if cr := def.GetColumnRef(); cr != nil && lastField(cr) == name {
				continue
			}
			if a.defaultText(r, def, depth+1) {
				return true
			}
		}
		// A column: the column rule judges its collation; a jsonb one
		// compares its strings by the default collation.
		return columnsAre(r, name, func(c catalog.ColumnInfo) bool { return c.TypeOID == oidJSONB || c.TypeOID == 3807 }) ||
			!columnsNamedAny(r, name) && len(a.aliasDefs[name]) == 0
	case *pg_query.Node_AConst:
		_, isString := v.AConst.Val.(*pg_query.A_Const_Sval)
		return isString
	case *pg_query.Node_ParamRef:
		return true
	case *pg_query.Node_TypeCast:
		if castTarget(v.TypeCast, textTypeNames) {
			return !a.collatableColumn(r, v.TypeCast.Arg)
		}
		if castTarget(v.TypeCast, map[string]bool{"jsonb": true}) {
			return true
		}
		return v.TypeCast.TypeName == nil || !castTarget(v.TypeCast, plainTypeNames)
	case *pg_query.Node_AExpr:
		e := v.AExpr
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			return a.defaultText(r, e.Lexpr, depth+1)
		case pg_query.A_Expr_Kind_AEXPR_OP:
		default:
			return false // IN, LIKE, BETWEEN, ...: booleans
		}
		switch divisionOp(e) {
		case "->>", "#>>", "->", "#>", "-", "#-":
			return true // text or jsonb out of a json
		case "||":
			return !a.collatableColumn(r, e.Lexpr) && !a.collatableColumn(r, e.Rexpr)
		case "+", "*", "/", "%", "^":
			return false
		}
		return !comparisonOps[divisionOp(e)]
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		name := funcName(fc)
		switch {
		case passThroughFuncs[name]:
			for _, arg := range fc.Args {
				if a.defaultText(r, arg, depth+1) {
					return true
				}
			}
			return false
		case collatedTextFuncs[name]:
			for _, arg := range fc.Args {
				if a.collatableColumn(r, arg) {
					return false
				}
			}
			return true
		}
		return nonTextFuncs[name] == false
	case *pg_query.Node_CaseExpr:
		if a.defaultText(r, v.CaseExpr.Defresult, depth+1) {
			return true
		}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil && a.defaultText(r, cw.Result, depth+1) {
				return true
			}
		}
		return false
	case *pg_query.Node_CoalesceExpr:
		for _, arg := range v.CoalesceExpr.Args {
			if a.defaultText(r, arg, depth+1) {
				return true
			}
		}
		return false
	case *pg_query.Node_MinMaxExpr:
		for _, arg := range v.MinMaxExpr.Args {
			if a.defaultText(r, arg, depth+1) {
				return true
			}
		}
		return false
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return false
	case *pg_query.Node_SubLink:
		return v.SubLink.SubLinkType != pg_query.SubLinkType_EXISTS_SUBLINK
	}
	return true
}

// collatableColumn reports whether n is a column of a collatable type (its
// own collation then rules, judged by the column rule).
func (a *analysis) collatableColumn(r resolution, n *pg_query.Node) bool {
	cr := n.GetColumnRef()
	if cr == nil || lastField(cr) == "" {
		return false
	}
	return columnsAre(r, lastField(cr), func(c catalog.ColumnInfo) bool { return collatable(c.TypeOID) })
}

// columnsNamedAny reports whether the datasets have a column of that name.
func columnsNamedAny(r resolution, name string) bool {
	found, _ := columnsNamed(r, name, nil)
	return found
}

// plainTypeNames are types that are neither text nor jsonb: a cast to one
// of them orders by no collation.
var plainTypeNames = map[string]bool{
	"int2": true, "int4": true, "int8": true, "int": true, "integer": true, "smallint": true, "bigint": true,
	"float4": true, "float8": true, "real": true, "float": true, "double precision": true, "numeric": true,
	"decimal": true, "bool": true, "boolean": true, "date": true, "time": true, "timestamp": true,
	"timestamptz": true, "interval": true, "uuid": true, "bytea": true, "json": true,
}

// nonTextFuncs return no text: numbers, dates, booleans.
var nonTextFuncs = map[string]bool{
	"count": true, "sum": true, "avg": true, "abs": true, "round": true, "trunc": true, "floor": true,
	"ceil": true, "ceiling": true, "length": true, "char_length": true, "octet_length": true, "strpos": true,
	"position": true, "date_trunc": true, "date_part": true, "extract": true, "make_date": true, "to_date": true,
	"to_timestamp": true, "date": true, "age": true, "justify_hours": true, "justify_days": true,
	"justify_interval": true, "row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
	"cume_dist": true, "ntile": true, "stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true,
	"var_samp": true, "var_pop": true, "sqrt": true, "cbrt": true, "exp": true, "ln": true, "log": true,
	"log10": true, "power": true, "mod": true, "sign": true, "bool_and": true, "bool_or": true, "every": true,
	"array_length": true, "cardinality": true, "array_position": true, "jsonb_array_length": true,
	"json_array_length": true, "percentile_cont": true, "starts_with": true, "isfinite": true,
}

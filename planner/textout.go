package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	"google.golang.org/protobuf/proto"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Values turned into text inside a statement are formatted by Postgres's
// output functions, which DuckDB does not share: a float8 cast to text, an
// interval or a timestamptz in text, a number concatenated to a string all
// read differently. Such statements go to the origin:
//
//   - a cast to a text type (text, varchar, char, bpchar, name) of anything
//     but a string literal, a parameter, a text result or a column of a
//     type both print alike (checkTextCast);
//   - an operand of || that is not known to be text: only string literals,
//     other || expressions, function calls (assumed to return text) and
//     columns whose origin type is text-like are allowed; the column check
//     needs the datasets' column types, so it is made per plan;
//   - substr/substring with a start that is not a positive integer literal
//     are rewritten (rewriteSubstr: DuckDB counts negative starts from the
//     end of the string).

// textTypeNames are the spellings of Postgres's text-like types in a cast.
var textTypeNames = map[string]bool{"text": true, "varchar": true, "char": true, "bpchar": true, "name": true, "character varying": true, "character": true}

// textTypeOIDs are the origin column types whose text form is the value.
var textTypeOIDs = map[uint32]bool{pgdef.OIDText: true, pgdef.OIDVarchar: true, pgdef.OIDBpchar: true, pgdef.OIDName: true}

// textCastSafe are the origin column types whose DuckDB cast to VARCHAR
// prints what Postgres's cast to text prints: the text types (char(n) is
// kept without its trailing spaces, which Postgres's cast to text removes
// too), integers, booleans (true, false), uuids, and json and jsonb (kept
// as the origin's text).
var textCastSafe = map[uint32]bool{pgdef.OIDText: true, pgdef.OIDVarchar: true, pgdef.OIDBpchar: true, pgdef.OIDName: true, pgdef.OIDInt2: true, pgdef.OIDInt4: true, pgdef.OIDInt8: true, pgdef.OIDBool: true, pgdef.OIDUUID: true, pgdef.OIDJSON: true, pgdef.OIDJSONB: true}

// textCastSafeColumn reports whether a column's DuckDB cast to VARCHAR
// prints what Postgres's cast to text prints: a type of textCastSafe, or
// a numeric with a declared scale, whose every value Postgres prints with
// that scale, as DuckDB prints its DECIMAL.
func textCastSafeColumn(c catalog.ColumnInfo) bool {
	if _, ok := numericColumnScale(c); ok {
		return true
	}
	return textCastSafe[c.TypeOID] || len(c.EnumLabels) > 0 // an enum prints its label
}

// textResultFuncs are functions whose result is text that DuckDB and
// Postgres agree on once the call itself is accepted (other rules check
// the calls).
var textResultFuncs = map[string]bool{
	"lower": true, "upper": true, "initcap": true, "concat": true, "concat_ws": true, "substr": true,
	"substring": true, "replace": true, "btrim": true, "ltrim": true, "rtrim": true, "left": true,
	"right": true, "lpad": true, "rpad": true, "md5": true, "split_part": true, "translate": true,
	"regexp_replace": true, "reverse": true, "repeat": true, "string_agg": true, "to_char": true,
}

// integerResultFuncs are functions whose result is an integer, which
// DuckDB and Postgres print alike.
var integerResultFuncs = map[string]bool{
	"count": true, "length": true, "char_length": true, "character_length": true, "octet_length": true,
	"strpos": true, "row_number": true, "rank": true, "dense_rank": true, "ntile": true,
}

// checkTextCast checks a cast to a text type. Postgres prints the value
// with its type's output function, which DuckDB does not share: the cast
// is accepted for string literals, parameters, text results (->>, the
// functions of textResultFuncs, other text casts) and columns, whose type
// the plan checks against textCastSafe (textCastCols). A length (varchar(n),
// char(n)) truncates at the origin and not in DuckDB: only literals that
// fit are accepted with one, and a cast to char without a length is
// char(1).
func (z *analyzer) checkTextCast(tc *pg_query.TypeCast) uint8 {
	if tc.TypeName == nil || len(tc.TypeName.ArrayBounds) > 0 {
		return 0
	}
	names, ok := stringsOf(tc.TypeName.Names)
	if !ok || len(names) == 0 {
		return 0
	}
	target := strings.ToLower(names[len(names)-1])
	if !textTypeNames[target] {
		return 0
	}
	limit := -1 // the length the cast cuts at
	switch {
	case len(tc.TypeName.Typmods) == 1:
		c := tc.TypeName.Typmods[0].GetAConst()
		iv, isInt := c.GetVal().(*pg_query.A_Const_Ival)
		if c == nil || !isInt {
			return flagUnsupported
		}
		limit = int(iv.Ival.Ival)
	case len(tc.TypeName.Typmods) > 1:
		return flagUnsupported
	case target == "char" || target == "bpchar" || target == "character":
		limit = 1
		if target == "bpchar" {
			limit = -1
		}
	case target == "name":
		limit = 63
	}
	if c := tc.Arg.GetAConst(); c != nil {
		if c.Isnull {
			return 0
		}
		if sv, isStr := c.Val.(*pg_query.A_Const_Sval); isStr {
			if limit >= 0 && len([]rune(sv.Sval.Sval)) > limit {
				return flagUnsupported
			}
			return 0
		}
		return flagUnsupported
	}
	if limit >= 0 {
		return flagUnsupported
	}
	if z.textCastArg(tc.Arg, 0) {
		return 0
	}
	return flagUnsupported
}

// textCastArg reports whether the value n prints alike cast to text in
// both engines, recording the column names it needs to check by type.
func (z *analyzer) textCastArg(arg *pg_query.Node, depth int) bool {
	if depth > maxAliasDepth {
		return false
	}
	switch n := arg.GetNode().(type) {
	case *pg_query.Node_ParamRef:
		// $1::text: the parameter arrives as text.
		return true
	case *pg_query.Node_AConst:
		switch n.AConst.Val.(type) {
		case *pg_query.A_Const_Sval, *pg_query.A_Const_Ival:
			return true
		}
		return n.AConst.Isnull
	case *pg_query.Node_ColumnRef:
		if name := lastField(n.ColumnRef); name != "" {
			if z.a.textCastCols == nil {
				z.a.textCastCols = map[string]struct{}{}
			}
			z.a.textCastCols[name] = struct{}{}
			return true
		}
	case *pg_query.Node_CoalesceExpr:
		// coalesce(cast(x AS text), ''), as dbt's surrogate keys write it.
		for _, a := range n.CoalesceExpr.Args {
			if !z.textCastArg(a, depth+1) {
				return false
			}
		}
		return true
	case *pg_query.Node_AExpr:
		e := n.AExpr
		op := divisionOp(e)
		switch {
		case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "->>" || op == "#>>" || op == "||"):
			return true
		case e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && booleanOps[op], e.Kind == pg_query.A_Expr_Kind_AEXPR_DISTINCT,
			e.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
			return true // a boolean: true or false in both
		}
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return true // a boolean
	case *pg_query.Node_FuncCall:
		return textResultFuncs[funcName(n.FuncCall)] || integerResultFuncs[funcName(n.FuncCall)]
	case *pg_query.Node_TypeCast:
		if tn := n.TypeCast.TypeName; tn != nil && len(tn.ArrayBounds) == 0 {
			if inner, ok := stringsOf(tn.Names); ok && len(inner) > 0 && textTypeNames[strings.ToLower(inner[len(inner)-1])] {
				return true // checked as a cast of its own
			}
		}
	}
	return false
}

// booleanOps are comparison operators, whose result is a boolean.
var booleanOps = map[string]bool{"=": true, "<>": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true}

// checkConcat flags || operands that may not be text and records the
// column names among them for the per-plan type check.
func (z *analyzer) checkConcat(e *pg_query.A_Expr) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
		return
	}
	if s, ok := e.Name[0].GetNode().(*pg_query.Node_String_); !ok || s.String_.Sval != "||" {
		return
	}
	for _, op := range []*pg_query.Node{e.Lexpr, e.Rexpr} {
		z.concatOperand(op)
	}
}

// concatOperand checks one operand of ||.
func (z *analyzer) concatOperand(op *pg_query.Node) {
	switch n := op.GetNode().(type) {
	case *pg_query.Node_AConst:
		// Strings, and integers, which both print alike.
		switch n.AConst.Val.(type) {
		case *pg_query.A_Const_Sval, *pg_query.A_Const_Ival:
		default:
			if !n.AConst.Isnull {
				z.flag(flagUnsupported)
			}
		}
	case *pg_query.Node_AExpr:
		if !isConcat(n.AExpr) {
			z.flag(flagUnsupported)
		}
	case *pg_query.Node_CoalesceExpr:
		// coalesce(cast(x AS text), ''), as dbt's surrogate keys write it.
		for _, arg := range n.CoalesceExpr.Args {
			z.concatOperand(arg)
		}
	case *pg_query.Node_ParamRef:
		// Parameters of || are text.
	case *pg_query.Node_FuncCall:
		// Text results, and integers.
		if !textResultFuncs[funcName(n.FuncCall)] && !integerResultFuncs[funcName(n.FuncCall)] {
			z.flag(flagUnsupported)
		}
	case *pg_query.Node_TypeCast:
		// Casts to text (checkTextCast checks them), to integers and to
		// numerics of a declared scale print alike.
		tc := n.TypeCast
		numericScaled := castTarget(tc, numericTypeNames) && len(tc.TypeName.Typmods) == 2
		if !castTarget(tc, textTypeNames) && !castTarget(tc, integerTypeNames) && !numericScaled {
			z.flag(flagUnsupported)
		}
	case *pg_query.Node_ColumnRef:
		if name := lastField(n.ColumnRef); name != "" {
			if z.a.concatCols == nil {
				z.a.concatCols = map[string]struct{}{}
			}
			z.a.concatCols[name] = struct{}{}
		} else {
			z.flag(flagUnsupported)
		}
	default:
		z.flag(flagUnsupported)
	}
}

func isConcat(e *pg_query.A_Expr) bool {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
		return false
	}
	s, ok := e.Name[0].GetNode().(*pg_query.Node_String_)
	return ok && s.String_.Sval == "||"
}

func lastField(c *pg_query.ColumnRef) string {
	if len(c.Fields) == 0 {
		return ""
	}
	if s, ok := c.Fields[len(c.Fields)-1].GetNode().(*pg_query.Node_String_); ok {
		return s.String_.Sval
	}
	return ""
}

// rewriteSubstr makes substr and substring with a start that is not a
// positive integer literal count as Postgres does: a start below 1 counts
// against the length (DuckDB counts a negative start from the end), and a
// negative length is an error:
//
//	substr(s, m)    -> substr(s, greatest(m, 1))
//	substr(s, m, n) -> substr(s, greatest(m, 1),
//	                          CASE WHEN n < 0 THEN error(...) ELSE greatest(m + n, 1) - greatest(m, 1) END)
//
// substring(s FROM pattern) with a text pattern is a regular expression:
// a start that is no integer makes DuckDB fail, and the statement falls
// back.
func rewriteSubstr(fc *pg_query.FuncCall) {
	switch funcName(fc) {
	case "substr", "substring":
	default:
		return
	}
	if len(fc.Args) < 2 || len(fc.Args) > 3 || fc.Over != nil {
		return
	}
	if c := fc.Args[1].GetAConst(); c != nil {
		if iv, ok := c.Val.(*pg_query.A_Const_Ival); ok && iv.Ival.Ival >= 1 {
			if len(fc.Args) == 2 || nonNegativeInt(fc.Args[2]) {
				return // counted alike
			}
		}
		if _, ok := c.Val.(*pg_query.A_Const_Sval); ok {
			return // a pattern
		}
	}
	m := fc.Args[1]
	greatest := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_MinMaxExpr{MinMaxExpr: &pg_query.MinMaxExpr{
			Op: pg_query.MinMaxOp_IS_GREATEST, Args: []*pg_query.Node{n, pg_query.MakeAConstIntNode(1, -1)}, Location: -1}}}
	}
	clone := func(n *pg_query.Node) *pg_query.Node { return proto.Clone(n).(*pg_query.Node) }
	fc.Args[1] = greatest(clone(m))
	if len(fc.Args) == 3 {
		n := fc.Args[2]
		end := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("+")}, clone(m), clone(n), -1)
		length := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("-")}, greatest(end), greatest(clone(m)), -1)
		negative := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("<")}, clone(n), pg_query.MakeAConstIntNode(0, -1), -1)
		fail := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("error")},
			[]*pg_query.Node{pg_query.MakeAConstStrNode("negative substring length not allowed", -1)}, -1)
		fc.Args[2] = &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
			Args:      []*pg_query.Node{{Node: &pg_query.Node_CaseWhen{CaseWhen: &pg_query.CaseWhen{Expr: negative, Result: fail}}}},
			Defresult: length,
			Location:  -1,
		}}}
	}
}

// nonNegativeInt reports whether n is an integer literal >= 0.
func nonNegativeInt(n *pg_query.Node) bool {
	c := n.GetAConst()
	if c == nil {
		return false
	}
	iv, ok := c.Val.(*pg_query.A_Const_Ival)
	return ok && iv.Ival.Ival >= 0
}

// pgdef.FuncText is pgdef.FuncText (planner does not import proxy): it
// prints a date, time, timestamp, timestamptz, interval, float or bytea as
// Postgres's output function does, given the session's TimeZone.

// textFunctionTypes are the origin column types pgdef.FuncText prints.
var textFunctionTypes = map[uint32]bool{pgdef.OIDDate: true, pgdef.OIDTime: true, pgdef.OIDTimestamp: true, pgdef.OIDTimestamptz: true, pgdef.OIDInterval: true, pgdef.OIDFloat4: true, pgdef.OIDFloat8: true, pgdef.OIDBytea: true}

// textWrapped returns the names cast to text or concatenated that the
// rewrite prints with pgdef.FuncText: every dataset column of the name is of
// a type it prints, and no output column of a subquery or CTE has the
// name.
func textWrapped(a *analysis, r resolution) map[string]bool {
	var out map[string]bool
	for _, names := range []map[string]struct{}{a.textCastCols, a.concatCols} {
		for name := range names {
			if out[name] {
				continue
			}
			// Every value of the name is such a column, under its name
			// or another (a CTE's valid_from for ordered_at): DuckDB
			// picks the function's overload by the column's type.
			if a.safeName(r, name, textFunctionRule, 0) {
				if out == nil {
					out = map[string]bool{}
				}
				out[name] = true
			}
		}
	}
	return out
}

// textFunctionRule: a name's every value is a column of a type
// pgdef.FuncText prints.
var textFunctionRule = nameRule{
	col:  func(c catalog.ColumnInfo) bool { return textFunctionTypes[c.TypeOID] },
	expr: func(*pg_query.Node) bool { return false },
}

// without returns names minus those in drop.
func without(names map[string]struct{}, drop map[string]bool) map[string]struct{} {
	if len(drop) == 0 {
		return names
	}
	out := make(map[string]struct{}, len(names))
	for n := range names {
		if !drop[n] {
			out[n] = struct{}{}
		}
	}
	return out
}

// wrapText replaces, in the rewritten statement, the columns of wrapped
// cast to text or concatenated by pgdef.FuncText(column, TimeZone).
func wrapText(casts []*pg_query.TypeCast, concats []*pg_query.A_Expr, wrapped map[string]bool) {
	if len(wrapped) == 0 {
		return
	}
	wrap := func(n *pg_query.Node) {
		cr := n.GetColumnRef()
		if cr == nil || !wrapped[lastField(cr)] {
			return
		}
		col := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: cr}}
		tz := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("current_setting")},
			[]*pg_query.Node{pg_query.MakeAConstStrNode("TimeZone", -1)}, -1)
		n.Node = &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
			Funcname: []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncText)},
			Args:     []*pg_query.Node{col, tz},
			Location: -1,
		}}
	}
	var operand func(n *pg_query.Node)
	operand = func(n *pg_query.Node) {
		if ce := n.GetCoalesceExpr(); ce != nil {
			for _, arg := range ce.Args {
				operand(arg)
			}
			return
		}
		wrap(n)
	}
	for _, tc := range casts {
		if tc.Arg != nil && castTarget(tc, textTypeNames) && len(tc.TypeName.Typmods) == 0 {
			wrap(tc.Arg)
		}
	}
	for _, e := range concats {
		operand(e.Lexpr)
		operand(e.Rexpr)
	}
}

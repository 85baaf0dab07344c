package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Divisions by operand types. The engine divides integers as Postgres
// does (integer_division: truncated toward zero) and double precision
// values in IEEE arithmetic as Postgres does; it divides decimals in
// floating point. So a / or % is left to DuckDB only when the types of
// both operands are known: both integers, or a double precision and an
// integer or double precision. Anything else — a numeric, a sum of
// bigints or an extract() (numerics in Postgres), a parameter, a name the
// planner cannot follow — sends the statement to the origin, unless the
// division is a scale-tracked output computed exactly (scaletrack.go).
// Each divisor is guarded against zero either way (divzero.go).

// valueKind is what the planner knows of an expression's type.
type valueKind uint8

const (
	kindUnknown valueKind = iota
	kindNull              // a NULL literal: takes the other operands' type
	kindInt4              // smallint or integer
	kindInt8              // bigint
	kindFloat8            // double precision
	kindNumLit            // a decimal literal: a numeric, a double beside a double precision
)

// division is the two operands of a / or % of the statement (copies:
// the rewrite changes the analysed tree), and whether it is the
// top-level division of a scale-tracked output.
type division struct {
	l, r    *pg_query.Node
	tracked bool
	// floored: it is floor(l / N) (or ceil, round, trunc: the function's
	// name), N a positive constant (floordiv.go); "" otherwise.
	floored string
}

// untypedDivision returns the first division among a's, the tracked ones
// included unless tracked is false, whose operand types do not make
// DuckDB's answer Postgres's; ok is false when there is none.
func (a *analysis) untypedDivision(r resolution, withTracked bool) (division, bool) {
	for _, d := range a.divisions {
		if d.tracked && !withTracked || d.floored != "" && a.floorDividend(r, d) {
			continue
		}
		l, rk := a.kindOf(r, d.l, 0), a.kindOf(r, d.r, 0)
		if !divisionKindsExact(l, rk) {
			return d, true
		}
	}
	return division{}, false
}

// divisionKindsExact reports whether DuckDB divides operands of those
// kinds as Postgres does.
func divisionKindsExact(l, r valueKind) bool {
	isInt := func(k valueKind) bool { return k == kindInt4 || k == kindInt8 || k == kindNull }
	switch {
	case isInt(l) && isInt(r):
		return true
	case l == kindFloat8:
		return r == kindFloat8 || r == kindNumLit || isInt(r)
	case r == kindFloat8:
		return isInt(l) || l == kindNumLit
	}
	return false
}

// joinKinds is the type Postgres resolves for values of kinds a and b
// merged (by CASE, COALESCE, arithmetic), as far as the planner follows.
func joinKinds(a, b valueKind) valueKind {
	switch {
	case a == kindNull:
		return b
	case b == kindNull:
		return a
	case a == kindUnknown || b == kindUnknown:
		return kindUnknown
	case a == kindFloat8 || b == kindFloat8:
		return kindFloat8 // a numeric beside a double precision is cast to it
	case a == kindNumLit || b == kindNumLit:
		return kindUnknown // a numeric
	case a == kindInt8 || b == kindInt8:
		return kindInt8
	}
	return kindInt4
}

// columnKind is the kind of a dataset column's type.
func columnKind(c catalog.ColumnInfo) valueKind {
	switch c.TypeOID {
	case pgdef.OIDInt2, pgdef.OIDInt4:
		return kindInt4
	case pgdef.OIDInt8:
		return kindInt8
	case pgdef.OIDFloat8:
		return kindFloat8
	}
	return kindUnknown
}

// int4Funcs return an integer whatever their arguments.
var int4Funcs = map[string]bool{
	"length": true, "char_length": true, "character_length": true, "octet_length": true, "bit_length": true,
	"strpos": true, "ascii": true, "array_length": true, "cardinality": true,
}

// kindOf is the kind of n's value: by the datasets' column types and the
// output columns a name stands for (aliases.go), literals, casts, integer
// and float arithmetic, count, sum of integers, min, max, abs, CASE and
// COALESCE.
func (a *analysis) kindOf(r resolution, n *pg_query.Node, depth int) valueKind {
	if n == nil || depth >= maxAliasDepth {
		return kindUnknown
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		if name == "" || len(v.ColumnRef.Fields) > 3 {
			return kindUnknown
		}
		return a.nameKind(r, name, depth)
	case *pg_query.Node_AConst:
		switch c := v.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return kindInt4 // pg_query keeps int4 literals here; wider ones are Fval
		case *pg_query.A_Const_Fval:
			if !strings.ContainsAny(c.Fval.Fval, ".eE") {
				return kindInt8 // an integer literal beyond int4
			}
			return kindNumLit
		}
		if v.AConst.Isnull {
			return kindNull
		}
	case *pg_query.Node_TypeCast:
		tc := v.TypeCast
		switch {
		case castTarget(tc, int4TypeNames):
			return kindInt4
		case castTarget(tc, int8TypeNames):
			return kindInt8
		case castTarget(tc, float8TypeNames):
			return kindFloat8
		}
	case *pg_query.Node_AExpr:
		e := v.AExpr
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return a.kindOf(r, e.Lexpr, depth+1)
		}
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return kindUnknown
		}
		switch divisionOp(e) {
		case "+", "-", "*", "/":
		case "%":
			if k := a.kindOf(r, e.Lexpr, depth+1); k == kindFloat8 {
				return kindUnknown // no float modulo
			}
		default:
			return kindUnknown
		}
		if e.Lexpr == nil {
			return a.kindOf(r, e.Rexpr, depth+1)
		}
		k := joinKinds(a.kindOf(r, e.Lexpr, depth+1), a.kindOf(r, e.Rexpr, depth+1))
		if k == kindNull {
			return kindUnknown
		}
		return k
	case *pg_query.Node_CaseExpr:
		k := kindNull
		if v.CaseExpr.Defresult != nil {
			k = a.kindOf(r, v.CaseExpr.Defresult, depth+1)
		}
		for _, w := range v.CaseExpr.Args {
			cw := w.GetCaseWhen()
			if cw == nil {
				return kindUnknown
			}
			k = joinKinds(k, a.kindOf(r, cw.Result, depth+1))
		}
		return k
	case *pg_query.Node_CoalesceExpr:
		return a.kindsOf(r, v.CoalesceExpr.Args, depth)
	case *pg_query.Node_MinMaxExpr:
		return a.kindsOf(r, v.MinMaxExpr.Args, depth)
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if len(fc.Funcname) > 1 && !(len(fc.Funcname) == 2 && isPgCatalog(fc.Funcname[0])) || fc.AggWithinGroup {
			return kindUnknown
		}
		name := funcName(fc)
		switch {
		case name == "error":
			return kindNull // the division guard's branch (divzero.go)
		case name == "count":
			return kindInt8
		case int4Funcs[name]:
			return kindInt4
		case len(fc.Args) != 1 || fc.AggStar:
			return kindUnknown
		}
		arg := a.kindOf(r, fc.Args[0], depth+1)
		switch name {
		case "sum":
			switch arg {
			case kindInt4:
				return kindInt8
			case kindFloat8:
				return kindFloat8
			}
			return kindUnknown // sum(bigint) is a numeric
		case "sqrt", "cbrt", "exp", "ln", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "degrees", "radians":
			// Of an integer or a double precision, Postgres resolves
			// the double precision form (of a numeric, the numeric one).
			if arg == kindInt4 || arg == kindInt8 || arg == kindFloat8 {
				return kindFloat8
			}
			return kindUnknown
		case "round", "trunc", "floor", "ceil", "ceiling":
			if arg == kindFloat8 {
				return kindFloat8
			}
			return kindUnknown
		case "min", "max", "abs", "lag", "lead", "first_value", "last_value":
			if arg == kindNull {
				return kindUnknown
			}
			return arg
		}
	}
	return kindUnknown
}

// kindsOf is the joined kind of a list of merged values.
func (a *analysis) kindsOf(r resolution, args []*pg_query.Node, depth int) valueKind {
	k := kindNull
	for _, x := range args {
		k = joinKinds(k, a.kindOf(r, x, depth+1))
	}
	return k
}

// nameKind is the kind of every value a column name may stand for: the
// datasets' columns of that name and the output columns so named, joined
// (a name that is an integer in one place and a bigint or a double
// precision in another divides exactly in each).
func (a *analysis) nameKind(r resolution, name string, depth int) valueKind {
	k, found := kindNull, false
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name == name {
				found = true
				if k = joinKinds(k, columnKind(c)); k == kindUnknown {
					return kindUnknown
				}
			}
		}
	}
	for _, def := range a.aliasDefs[name] {
		if cr := def.GetColumnRef(); cr != nil && lastField(cr) == name {
			continue // the column under its own name: counted above
		}
		found = true
		if k = joinKinds(k, a.kindOf(r, def, depth+1)); k == kindUnknown {
			return kindUnknown
		}
	}
	if !found || k == kindNull {
		return kindUnknown
	}
	return k
}

// floatValue reports whether n is a double precision or a real: of kind
// float8, or a column whose every value is a real.
func (a *analysis) floatValue(r resolution, n *pg_query.Node) bool {
	if a.kindOf(r, n, 0) == kindFloat8 {
		return true
	}
	cr := n.GetColumnRef()
	return cr != nil && lastField(cr) != "" && len(a.aliasDefs[lastField(cr)]) == 0 &&
		columnsAre(r, lastField(cr), func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDFloat4 })
}

// noteArithmetic records the column names that are operands of + - * / %:
// arithmetic on a real (float4) is float4 arithmetic in DuckDB, and
// double precision or float4 by Postgres's operator resolution (1.5::real
// + 0.1 is 1.6 there, 1.600000023841858 through DuckDB), so valueHazard
// sends it to the origin.
func (z *analyzer) noteArithmetic(e *pg_query.A_Expr) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
		return
	}
	switch divisionOp(e) {
	case "+", "-", "*", "/", "%":
	default:
		return
	}
	for _, op := range []*pg_query.Node{e.Lexpr, e.Rexpr} {
		if cr := op.GetColumnRef(); cr != nil && lastField(cr) != "" {
			if z.a.arithCols == nil {
				z.a.arithCols = map[string]struct{}{}
			}
			z.a.arithCols[lastField(cr)] = struct{}{}
		}
	}
}

// realArithmetic returns an operand of arithmetic that may be a real.
func (a *analysis) realArithmetic(r resolution) string {
	rule := nameRule{
		col: func(c catalog.ColumnInfo) bool { return c.TypeOID != pgdef.OIDFloat4 },
		expr: func(n *pg_query.Node) bool {
			tc := n.GetTypeCast()
			return tc == nil || !castTarget(tc, float4TypeNames)
		},
	}
	for name := range a.arithCols {
		if found, _ := columnsNamed(r, name, nil); !found && len(a.aliasDefs[name]) == 0 {
			continue // no column the planner knows: another rule judges it
		}
		if !a.safeName(r, name, rule, 0) {
			return name
		}
	}
	return ""
}

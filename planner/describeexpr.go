package planner

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/pgdef"
)

// expr describes a value: an output column, or an operand of one. named
// reports whether Postgres names a cast of it by its name
// (FigureColname's strength 2) rather than by the cast's type.
func (d *describer) expr(n *pg_query.Node) (f Field, named, ok bool) {
	switch {
	case n.GetColumnRef() != nil:
		c, ok := d.column(n.GetColumnRef())
		if !ok || !c.accelerated {
			return f, false, false
		}
		return c.Field, true, true
	case n.GetFuncCall() != nil:
		return d.call(n.GetFuncCall())
	case n.GetAConst() != nil:
		t, ok := constType(n.GetAConst())
		if !ok {
			return f, false, false
		}
		return Field{Name: "?column?", TypeOID: t, TypLen: typLens[t], TypMod: -1}, false, true
	case n.GetAExpr() != nil && n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return d.nullIf(n.GetAExpr())
	case n.GetAExpr() != nil:
		t, ok := d.arithmetic(n.GetAExpr())
		if !ok {
			return f, false, false
		}
		return Field{Name: "?column?", TypeOID: t, TypLen: typLens[t], TypMod: -1}, false, true
	case n.GetCoalesceExpr() != nil:
		// coalesce(x, 0), as dashboards write it around an aggregate, and
		// coalesce of any values of one type: their common type.
		f, _, _, ok := d.common("coalesce", n.GetCoalesceExpr().Args)
		return f, ok, ok
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		name := "greatest"
		if mm.Op == pg_query.MinMaxOp_IS_LEAST {
			name = "least"
		} else if mm.Op != pg_query.MinMaxOp_IS_GREATEST {
			return f, false, false
		}
		f, _, _, ok := d.common(name, mm.Args)
		return f, ok, ok
	case n.GetCaseExpr() != nil:
		// CASE: the common type of its results, a missing ELSE a NULL.
		ce := n.GetCaseExpr()
		results := make([]*pg_query.Node, 0, len(ce.Args)+1)
		for _, w := range ce.Args {
			cw := w.GetCaseWhen()
			if cw == nil {
				return f, false, false
			}
			results = append(results, cw.Result)
		}
		if ce.Defresult != nil {
			results = append(results, ce.Defresult)
		} else {
			results = append(results, nil)
		}
		// Named as its ELSE when that is named (a column, a function,
		// ...); else "case", weakly (a cast of it is named by the type).
		f, els, elseNamed, ok := d.common("case", results)
		if elseNamed {
			f.Name = els.Name
		}
		return f, elseNamed, ok
	case n.GetSubLink() != nil:
		return d.subLink(n.GetSubLink())
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		var inner Field
		named, ok := false, true
		if tc.Arg.GetParamRef() == nil {
			// $1::type is typed by the cast (params), and named by it.
			inner, named, ok = d.expr(tc.Arg)
		}
		if !ok {
			return f, false, false
		}
		t, last, ok := describedCast(tc)
		if !ok {
			return f, false, false
		}
		mod, ok := castTypmod(t, tc.TypeName.Typmods)
		if !ok || mod != -1 && tc.Arg.GetAConst() != nil {
			// A constant cast with a typmod: Postgres coerces the
			// constant itself; not worked out here.
			return f, false, false
		}
		if t == inner.TypeOID && mod == inner.TypMod {
			// To its own type and typmod (Tableau's CAST(col AS TEXT)):
			// coerce_to_target_type leaves the value as it is, a column
			// still the table's; named by the type if not by itself.
			if !named {
				inner.Name = last
			}
			return inner, named, true
		}
		// Otherwise a conversion, or a RelabelType showing the new typmod
		// (coerce_type_typmod): no longer a table's column.
		name := last
		if named {
			name = inner.Name
		}
		return Field{Name: name, TypeOID: t, TypLen: typLens[t], TypMod: mod}, named, true
	}
	return f, false, false
}

// constType is the type Postgres gives a constant in a target list or
// arithmetic: int4, int8 or numeric for numbers, text for a string (an
// unknown-type output column is text); false for the rest.
func constType(c *pg_query.A_Const) (uint32, bool) {
	switch {
	case c.Isnull:
		return 0, false
	case c.GetIval() != nil:
		return pgdef.OIDInt4, true
	case c.GetFval() != nil:
		// make_const: an integer that fits int4 (only -2147483648 can
		// be one here) or int8 is one; another number is numeric.
		v := c.GetFval().Fval
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			if n == int64(int32(n)) {
				return pgdef.OIDInt4, true
			}
			return pgdef.OIDInt8, true
		}
		if strings.Trim(v, "-0123456789.eE+") != "" {
			return 0, false // hex, octal, underscores: not worked out here
		}
		return pgdef.OIDNumeric, true
	case c.GetSval() != nil:
		return pgdef.OIDText, true
	}
	return 0, false
}

// numberRank orders the number types Describe works with as Postgres
// converts them implicitly: each to those after it, not back.
var numberRank = map[uint32]int{pgdef.OIDInt2: 1, pgdef.OIDInt4: 2, pgdef.OIDInt8: 3, pgdef.OIDNumeric: 4, pgdef.OIDFloat8: 5}

func isInteger(t uint32) bool { return numberRank[t] >= 1 && numberRank[t] <= 3 }

func isNumber(t uint32) bool { return numberRank[t] > 0 }

func isString(t uint32) bool { return t == pgdef.OIDText || t == pgdef.OIDVarchar }

// arithmetic types x op y (+, -, *, /, %) of integers, numerics and
// double precision as Postgres resolves the operator: two integers give
// the wider, an integer or numeric with a numeric gives numeric, anything
// with a double precision gives double precision; -x keeps x's type;
// text || text is text. Constants are typed as constType says, strings
// only for ||.
func (d *describer) arithmetic(e *pg_query.A_Expr) (uint32, bool) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 {
		return 0, false
	}
	op := e.Name[0].GetString_().GetSval()
	operand := func(n *pg_query.Node) (uint32, bool) {
		f, _, ok := d.expr(n)
		return f.TypeOID, ok
	}
	if e.Lexpr == nil {
		t, ok := operand(e.Rexpr)
		if op != "-" || !ok || !isNumber(t) && t != pgdef.OIDInterval {
			return 0, false
		}
		return t, true
	}
	l, okl := operand(e.Lexpr)
	r, okr := operand(e.Rexpr)
	if !okl || !okr {
		return 0, false
	}
	if op == "||" {
		if isString(l) && isString(r) {
			return pgdef.OIDText, true
		}
		return 0, false
	}
	if l == pgdef.OIDJSON || l == pgdef.OIDJSONB {
		// doc -> key and doc -> index keep the document's type, ->> gives
		// text; #> and #>> the same with a path; ? (jsonb) a boolean. The
		// key, index or path a constant.
		if c := e.Rexpr.GetAConst(); c == nil || c.Isnull {
			return 0, false
		}
		switch {
		case (op == "->" || op == "#>") && (r == pgdef.OIDText || op == "->" && r == pgdef.OIDInt4):
			return l, true
		case (op == "->>" || op == "#>>") && (r == pgdef.OIDText || op == "->>" && r == pgdef.OIDInt4):
			return pgdef.OIDText, true
		case op == "?" && l == pgdef.OIDJSONB && r == pgdef.OIDText:
			return pgdef.OIDBool, true
		}
		return 0, false
	}
	if paramComparisons[op] {
		// A comparison of two values of one type, or of numbers, or of
		// text and varchar: boolean.
		if l == r && typLens[l] != 0 || isNumber(l) && isNumber(r) || isString(l) && isString(r) {
			return pgdef.OIDBool, true
		}
		return 0, false
	}
	switch op {
	case "+", "-", "*", "/", "%":
	default:
		return 0, false
	}
	if t, ok := dateArithmetic(op, l, r); ok {
		return t, true
	}
	switch {
	case !isNumber(l) || !isNumber(r) || op == "%" && (l == pgdef.OIDFloat8 || r == pgdef.OIDFloat8):
		return 0, false
	case isInteger(l) && isInteger(r), l == pgdef.OIDFloat8 || r == pgdef.OIDFloat8:
		// Two integers give the wider; anything with a double precision
		// is one.
		if numberRank[l] >= numberRank[r] {
			return l, true
		}
		return r, true
	}
	return pgdef.OIDNumeric, true // an integer or numeric with a numeric
}

// dateArithmetic types the operators of dates, times and intervals as
// Postgres's catalog declares them: a timestamp (with time zone or not)
// or time plus or minus an interval keeps its type; a date plus or minus
// an interval is a timestamp, plus or minus an integer a date; the
// difference of two dates is an integer, of two timestamps an interval;
// intervals add and subtract, and multiply and divide by numbers.
func dateArithmetic(op string, l, r uint32) (uint32, bool) {
	integer := func(t uint32) bool { return t == pgdef.OIDInt2 || t == pgdef.OIDInt4 } // date + int8 has no operator
	switch op {
	case "+":
		if r == pgdef.OIDInterval {
			l, r = r, l // interval + x is x + interval
		}
		switch {
		case r == pgdef.OIDInterval && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz || l == pgdef.OIDTime || l == pgdef.OIDInterval):
			return l, true
		case r == pgdef.OIDInterval && l == pgdef.OIDDate:
			return pgdef.OIDTimestamp, true
		case l == pgdef.OIDInterval && (r == pgdef.OIDTimestamp || r == pgdef.OIDTimestamptz || r == pgdef.OIDTime || r == pgdef.OIDInterval):
			return r, true
		case l == pgdef.OIDInterval && r == pgdef.OIDDate:
			return pgdef.OIDTimestamp, true
		case l == pgdef.OIDDate && integer(r), integer(l) && r == pgdef.OIDDate:
			return pgdef.OIDDate, true
		}
	case "-":
		switch {
		case r == pgdef.OIDInterval && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz || l == pgdef.OIDTime || l == pgdef.OIDInterval):
			return l, true
		case r == pgdef.OIDInterval && l == pgdef.OIDDate:
			return pgdef.OIDTimestamp, true
		case l == pgdef.OIDDate && integer(r):
			return pgdef.OIDDate, true
		case l == pgdef.OIDDate && r == pgdef.OIDDate:
			return pgdef.OIDInt4, true
		case l == r && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz):
			return pgdef.OIDInterval, true
		}
	case "*":
		if l == pgdef.OIDInterval && isNumber(r) || isNumber(l) && r == pgdef.OIDInterval {
			return pgdef.OIDInterval, true
		}
	case "/":
		if l == pgdef.OIDInterval && isNumber(r) {
			return pgdef.OIDInterval, true
		}
	}
	return 0, false
}

// intConst reports whether n is an integer constant Postgres types int4.
func intConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && !c.Isnull && c.GetIval() != nil
}

// builtinName is the name of a function call, unqualified or in
// pg_catalog (call declines the names it does not know).
func builtinName(names []*pg_query.Node) (string, bool) {
	if len(names) == 2 && names[0].GetString_().GetSval() != "pg_catalog" || len(names) == 0 || len(names) > 2 {
		return "", false
	}
	fn := names[len(names)-1].GetString_().GetSval()
	return fn, fn != ""
}

// describedCast is the type a cast names, among castTypes, and its name as
// pg_query gives it (int4 for int and integer).
func describedCast(tc *pg_query.TypeCast) (uint32, string, bool) {
	if tc.TypeName == nil || tc.TypeName.Setof || len(tc.TypeName.ArrayBounds) > 0 || tc.TypeName.PctType {
		return 0, "", false
	}
	names := tc.TypeName.Names
	if len(names) == 0 || len(names) > 2 || len(names) == 2 && names[0].GetString_().GetSval() != "pg_catalog" {
		return 0, "", false
	}
	last := names[len(names)-1].GetString_().GetSval()
	t, ok := castTypes[last]
	return t, last, ok
}

// castTypmod is the typmod a cast to type t with the given modifiers
// gives: -1 without them; numeric(p[,s]) and varchar(n) or char(n) as
// Postgres encodes them. false for anything else.
func castTypmod(t uint32, mods []*pg_query.Node) (int32, bool) {
	if len(mods) == 0 {
		return -1, true
	}
	vals := make([]int32, len(mods))
	for i, m := range mods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return 0, false
		}
		vals[i] = c.GetIval().Ival
	}
	switch t {
	case pgdef.OIDNumeric:
		p, s := vals[0], int32(0)
		if len(vals) == 2 {
			s = vals[1]
		}
		if len(vals) > 2 || p < 1 || p > 1000 || s < 0 || s > p {
			return 0, false
		}
		return (p<<16 | s) + 4, true
	case pgdef.OIDVarchar, pgdef.OIDBpchar:
		if len(vals) != 1 || vals[0] < 1 || vals[0] > 10485760 {
			return 0, false
		}
		return vals[0] + 4, true
	}
	return 0, false
}

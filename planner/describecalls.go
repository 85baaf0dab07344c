package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/pgdef"
)

// aggregates are the aggregates Describe types (aggregateResult), and
// windowFunctions the window functions (window).
var (
	aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
		"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
		"bool_and": true, "bool_or": true, "every": true, "string_agg": true}
	windowFunctions = map[string]bool{"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true,
		"cume_dist": true, "ntile": true, "lag": true, "lead": true, "first_value": true, "last_value": true}
)

// call describes a call of a built-in function: an aggregate (over a
// window or not), an ordered-set aggregate, a window function, or one of
// the scalar functions below. A call Postgres refuses (a window function
// without OVER, a scalar function with DISTINCT, FILTER, ORDER BY or
// OVER) is declined.
func (d *describer) call(fc *pg_query.FuncCall) (f Field, named, ok bool) {
	fn, ok := builtinName(fc.Funcname)
	if !ok || fc.FuncVariadic {
		return f, false, false
	}
	switch {
	case fc.AggWithinGroup:
		return d.withinGroup(fn, fc)
	case windowFunctions[fn]:
		return d.window(fn, fc)
	case aggregates[fn]:
		if fc.Over != nil && (fc.AggDistinct || len(fc.AggOrder) > 0) {
			return f, false, false // refused over a window
		}
		return d.aggregate(fn, fc)
	case fc.Over != nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0:
		return f, false, false
	}
	switch fn {
	case "date_trunc":
		return d.dateTrunc(fc)
	case "round", "upper", "lower", "length", "extract", "date_part", "ceil", "ceiling", "floor", "trunc", "abs":
		return d.scalar(fn, fc)
	case "concat", "to_char", "substr", "substring", "replace", "left", "right", "initcap", "md5", "btrim", "ltrim", "rtrim":
		return d.text(fn, fc)
	case "strpos", "position", "array_length", "cardinality", "jsonb_typeof", "json_typeof", "jsonb_array_length", "json_array_length":
		return d.oneOf(fn, fc)
	}
	return f, false, false
}

// aggregate describes an aggregate of a value (count(*) and count(1)
// too), typed by aggregateResult.
func (d *describer) aggregate(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	var arg uint32
	switch {
	case fn == "count" && len(fc.Args) == 1 && fc.Args[0].GetAConst() != nil:
		// count(1): the argument's type does not matter.
	case fn == "sum" && len(fc.Args) == 1 && intConst(fc.Args[0]):
		arg = pgdef.OIDInt4 // Tableau's sum(1)
	case fn == "string_agg" && len(fc.Args) == 2 && fc.Args[1].GetAConst() != nil && fc.Args[1].GetAConst().GetSval() != nil:
		// string_agg(text, delimiter): text (bytea's is not worked out).
		af, _, ok := d.expr(fc.Args[0])
		if !ok || !isString(af.TypeOID) {
			return f, false, false
		}
		arg = pgdef.OIDText
	case fc.AggStar:
		if fn != "count" || len(fc.Args) != 0 {
			return f, false, false
		}
	case len(fc.Args) == 1:
		af, _, ok := d.expr(fc.Args[0])
		if c := fc.Args[0].GetAConst(); !ok || c != nil && c.GetSval() != nil {
			return f, false, false // a string constant: of unknown type
		}
		arg = af.TypeOID
	default:
		return f, false, false
	}
	t, _ := aggregateResult(fn, arg)
	return fixedField(fn, t)
}

// common describes what takes the common type of args (commonType):
// coalesce, greatest, least and CASE (whose results args are, a nil arg a
// missing ELSE), named name (FigureColname's strength 2). Each arg is
// described as an output column would be, or is a NULL, true or false; a
// string constant is taken as text only when every other arg is text
// (Postgres would coerce it to another type: not worked out here). last
// is the last arg's description, when it has one, and lastNamed whether
// it is named (CASE takes its ELSE's name).
func (d *describer) common(name string, args []*pg_query.Node) (f Field, last Field, lastNamed, ok bool) {
	if len(args) == 0 {
		return f, last, false, false
	}
	fs := make([]Field, len(args))
	literal := false
	for i, a := range args {
		if a == nil {
			continue // NULL
		}
		if c := a.GetAConst(); c != nil {
			switch {
			case c.Isnull:
				continue
			case c.GetBoolval() != nil:
				fs[i] = Field{TypeOID: pgdef.OIDBool, TypLen: 1, TypMod: -1}
				continue
			case c.GetSval() != nil:
				literal = true
			}
		}
		af, named, ok := d.expr(a)
		if !ok {
			return f, last, false, false
		}
		fs[i] = af
		if i == len(args)-1 {
			last, lastNamed = af, named
		}
	}
	t, ok := commonType(fs)
	if !ok || literal && t.TypeOID != pgdef.OIDText {
		return f, last, false, false
	}
	t.Name = name
	return t, last, lastNamed, true
}

// nullIf describes nullif(a, b): the type of a as the = operator takes
// it. Integers compare across their widths without conversion, so a
// keeps its type (and typmod) then; numbers of other kinds meet at the
// wider (a converted loses its typmod); a text with a string constant, or
// two values of one type, keep a's, but varchar, which = takes as text.
// Anything else is not worked out.
func (d *describer) nullIf(e *pg_query.A_Expr) (f Field, named, ok bool) {
	a, _, okA := d.expr(e.Lexpr)
	if !okA || e.Rexpr == nil {
		return f, false, false
	}
	var b Field
	if c := e.Rexpr.GetAConst(); c != nil && c.GetSval() != nil {
		if a.TypeOID != pgdef.OIDText {
			return f, false, false
		}
		b = Field{TypeOID: pgdef.OIDText}
	} else if b, _, ok = d.expr(e.Rexpr); !ok {
		return f, false, false
	}
	t := Field{Name: "nullif", TypeOID: a.TypeOID, TypLen: a.TypLen, TypMod: a.TypMod}
	switch {
	case a.TypeOID == b.TypeOID, isInteger(a.TypeOID) && isInteger(b.TypeOID):
	default:
		c, ok := commonType([]Field{a, b})
		if !ok {
			return f, false, false
		}
		if c.TypeOID != a.TypeOID {
			t.TypeOID, t.TypLen, t.TypMod = c.TypeOID, c.TypLen, -1
		}
	}
	if t.TypeOID == pgdef.OIDVarchar {
		// varchar has no = of its own: text's takes it, and nullif
		// gives what the operator took (text), as for varchar = text.
		t.TypeOID, t.TypMod = pgdef.OIDText, -1
	}
	return t, true, true
}

// withinGroup describes the ordered-set aggregates: percentile_cont(f)
// WITHIN GROUP (ORDER BY x), double precision (interval for an
// interval), and percentile_disc(f) and mode() of x's type.
func (d *describer) withinGroup(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if fc.Over != nil || fc.AggDistinct || len(fc.AggOrder) != 1 {
		return f, false, false
	}
	sb := fc.AggOrder[0].GetSortBy()
	if sb == nil {
		return f, false, false
	}
	x, _, ok := d.expr(sb.Node)
	if !ok {
		return f, false, false
	}
	var t uint32
	switch fn {
	case "percentile_cont":
		if len(fc.Args) != 1 || fc.Args[0].GetAConst() == nil || fc.Args[0].GetAConst().GetFval() == nil && !intConst(fc.Args[0]) {
			break
		}
		switch {
		case x.TypeOID == pgdef.OIDInterval:
			t = pgdef.OIDInterval
		case isNumber(x.TypeOID):
			t = pgdef.OIDFloat8
		}
	case "percentile_disc", "mode":
		want := 1
		if fn == "mode" {
			want = 0
		}
		if len(fc.Args) == want && (want == 0 || fc.Args[0].GetAConst() != nil && fc.Args[0].GetAConst().GetSval() == nil) && typLens[x.TypeOID] != 0 {
			t = x.TypeOID
		}
	}
	return fixedField(fn, t)
}

// window describes a window function (fn, called with OVER): row_number,
// rank and dense_rank (bigint), percent_rank and cume_dist (double
// precision), ntile (integer), and lag, lead, first_value and last_value
// of a value of a built-in type, which they return as it is (lag and
// lead with a default: the common type of both), without its typmod.
func (d *describer) window(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	var none Field
	if fc.Over == nil || fc.AggStar || fc.AggDistinct || fc.AggFilter != nil || len(fc.AggOrder) > 0 {
		return none, false, false
	}
	var t uint32
	switch fn {
	case "row_number", "rank", "dense_rank":
		if len(fc.Args) == 0 {
			t = pgdef.OIDInt8
		}
	case "percent_rank", "cume_dist":
		if len(fc.Args) == 0 {
			t = pgdef.OIDFloat8
		}
	case "ntile":
		if len(fc.Args) == 1 && intConst(fc.Args[0]) {
			t = pgdef.OIDInt4
		}
	case "lag", "lead", "first_value", "last_value":
		n := 1
		if fn == "lag" || fn == "lead" {
			n = 3
		}
		if len(fc.Args) < 1 || len(fc.Args) > n || len(fc.Args) >= 2 && !intConst(fc.Args[1]) {
			return none, false, false
		}
		af, _, ok := d.expr(fc.Args[0])
		if !ok || typLens[af.TypeOID] == 0 {
			return none, false, false // a domain's or another type's: not worked out here
		}
		t = af.TypeOID
		if len(fc.Args) == 3 {
			// lag(anycompatible, integer, anycompatible): the common
			// type of the value and the default.
			def, _, ok := d.expr(fc.Args[2])
			if c := fc.Args[2].GetAConst(); !ok || c != nil && c.GetSval() != nil {
				return none, false, false
			}
			ct, ok := commonType([]Field{af, def})
			if !ok {
				return none, false, false
			}
			t = ct.TypeOID
		}
	}
	return fixedField(fn, t)
}

// text describes functions of text that return text, of a column of
// text or varchar (or, for to_char, of a number or a time) and constants:
// concat (of any columns), to_char, substr, substring, replace, left,
// right, initcap and md5.
func (d *describer) text(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) == 0 {
		return f, false, false
	}
	columns := 0
	for i, a := range fc.Args {
		if c := a.GetAConst(); c != nil {
			if c.Isnull || i == 0 && fn != "concat" {
				return f, false, false
			}
			continue
		}
		af, _, ok := d.expr(a)
		if !ok {
			return f, false, false
		}
		switch {
		case fn == "concat":
		case i > 0:
			return f, false, false // a pattern, a length: constants only
		case fn == "to_char":
			switch af.TypeOID {
			case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8, pgdef.OIDNumeric, pgdef.OIDFloat8, pgdef.OIDDate, pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval:
			default:
				return f, false, false
			}
		case !isString(af.TypeOID):
			return f, false, false
		}
		columns++
	}
	want := map[string][2]int{"concat": {1, 100}, "to_char": {2, 2}, "substr": {2, 3}, "substring": {2, 3},
		"replace": {3, 3}, "left": {2, 2}, "right": {2, 2}, "initcap": {1, 1}, "md5": {1, 1},
		"btrim": {1, 2}, "ltrim": {1, 2}, "rtrim": {1, 2}}[fn]
	if columns == 0 || len(fc.Args) < want[0] || len(fc.Args) > want[1] {
		return f, false, false
	}
	return fixedField(fn, pgdef.OIDText)
}

// oneOf describes functions of one typed argument (and constants) whose
// result type is fixed: strpos and position of text (integer),
// array_length and cardinality of an array (integer), json_typeof and
// jsonb_typeof (text), json_array_length and jsonb_array_length
// (integer).
func (d *describer) oneOf(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) == 0 || len(fc.Args) > 2 {
		return f, false, false
	}
	var types []uint32
	for _, a := range fc.Args {
		af, _, ok := d.expr(a)
		if !ok {
			return f, false, false
		}
		types = append(types, af.TypeOID)
	}
	t := uint32(0)
	switch fn {
	case "strpos", "position":
		if len(types) == 2 && isString(types[0]) && isString(types[1]) {
			t = pgdef.OIDInt4
		}
	case "array_length":
		if len(types) == 2 && arrayType(types[0]) && intConst(fc.Args[1]) {
			t = pgdef.OIDInt4
		}
	case "cardinality":
		if len(types) == 1 && arrayType(types[0]) {
			t = pgdef.OIDInt4
		}
	case "jsonb_typeof", "jsonb_array_length", "json_typeof", "json_array_length":
		doc := uint32(pgdef.OIDJSONB)
		if strings.HasPrefix(fn, "json_") {
			doc = pgdef.OIDJSON
		}
		if len(types) == 1 && types[0] == doc {
			t = pgdef.OIDText
			if strings.HasSuffix(fn, "_array_length") {
				t = pgdef.OIDInt4
			}
		}
	}
	return fixedField(fn, t)
}

// fixedField is the output column named fn of type t, a function's
// result (no origin, no typmod); false when t is 0 (not worked out).
func fixedField(fn string, t uint32) (f Field, named, ok bool) {
	if t == 0 {
		return f, false, false
	}
	return Field{Name: fn, TypeOID: t, TypLen: typLens[t], TypMod: -1}, true, true
}

// arrayType reports whether t is one of the array types arrayTypes
// names.
func arrayType(t uint32) bool { return isArrayType[t] }

var isArrayType = func() map[uint32]bool {
	m := make(map[uint32]bool, len(arrayTypes))
	for _, a := range arrayTypes {
		m[a] = true
	}
	return m
}()

// subLink describes a scalar subquery (its one column's name, type and
// typmod, but no origin) and EXISTS (boolean "exists").
func (d *describer) subLink(sl *pg_query.SubLink) (f Field, named, ok bool) {
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		if _, ok := d.sub().selectList(sl.Subselect.GetSelectStmt()); !ok {
			return f, false, false
		}
		return Field{Name: "exists", TypeOID: pgdef.OIDBool, TypLen: 1, TypMod: -1}, true, true
	case pg_query.SubLinkType_EXPR_SUBLINK:
		fields, ok := d.sub().selectList(sl.Subselect.GetSelectStmt())
		if !ok || len(fields) != 1 {
			return f, false, false
		}
		inner := fields[0]
		return Field{Name: inner.Name, TypeOID: inner.TypeOID, TypLen: inner.TypLen, TypMod: inner.TypMod}, true, true
	}
	return f, false, false
}

// dateTrunc describes date_trunc('unit', column): Postgres's date_trunc
// takes a timestamp, a timestamptz (which a date becomes) or an interval.
func (d *describer) dateTrunc(fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) != 2 || fc.Args[0].GetAConst() == nil || fc.Args[0].GetAConst().GetSval() == nil {
		return f, false, false
	}
	af, _, ok := d.expr(fc.Args[1])
	if !ok {
		return f, false, false
	}
	t := af.TypeOID
	switch t {
	case pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval:
	case pgdef.OIDDate:
		t = pgdef.OIDTimestamptz
	default:
		return f, false, false
	}
	return fixedField("date_trunc", t)
}

// scalar describes a few functions of one value whose result type
// Postgres fixes by the value's: round and trunc (numeric [, integer],
// or double precision); ceil, floor and abs; upper, lower and length of
// text or varchar;
// extract(field FROM c) (numeric) and date_part('field', c) (double
// precision) of a date or time.
func (d *describer) scalar(fn string, fc *pg_query.FuncCall) (f Field, named, ok bool) {
	if len(fc.Args) == 0 || len(fc.Args) > 2 {
		return f, false, false
	}
	col := fc.Args[len(fc.Args)-1]
	if fn != "extract" && fn != "date_part" {
		col = fc.Args[0]
	}
	af, _, ok := d.expr(col)
	if !ok {
		return f, false, false
	}
	var t uint32
	switch fn {
	case "round", "trunc":
		switch {
		case af.TypeOID == pgdef.OIDNumeric && (len(fc.Args) == 1 || intConst(fc.Args[1])):
			t = pgdef.OIDNumeric
		case af.TypeOID == pgdef.OIDFloat8 && len(fc.Args) == 1:
			t = pgdef.OIDFloat8
		}
	case "ceil", "ceiling", "floor":
		if len(fc.Args) == 1 && (af.TypeOID == pgdef.OIDNumeric || af.TypeOID == pgdef.OIDFloat8) {
			t = af.TypeOID
		}
	case "abs":
		if len(fc.Args) == 1 && isNumber(af.TypeOID) {
			t = af.TypeOID
		}
	case "upper", "lower", "length":
		if len(fc.Args) == 1 && isString(af.TypeOID) {
			t = pgdef.OIDText
			if fn == "length" {
				t = pgdef.OIDInt4
			}
		}
	case "extract", "date_part":
		field := fc.Args[0].GetAConst()
		if len(fc.Args) != 2 || field == nil || field.GetSval() == nil {
			break
		}
		switch af.TypeOID {
		case pgdef.OIDDate, pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval, pgdef.OIDTime:
			t = pgdef.OIDNumeric
			if fn == "date_part" {
				t = pgdef.OIDFloat8
			}
		}
	}
	return fixedField(fn, t)
}

package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// EXTRACT and date_part below the second. Postgres's EXTRACT(second FROM
// ts) is the numeric 59.999999 and date_part('second', ts) the double
// 59.999999; DuckDB answers the integer 59 to both, and a DOUBLE for
// epoch, which no numeric can be printed from. So for the fields second,
// milliseconds, microseconds and epoch of a timestamp or timestamp with
// time zone column (and epoch of an interval column or of the difference
// of two timestamp columns), the rewrite computes Postgres's value from
// DuckDB's integer microseconds, as timestamp_part_common and
// interval_part_common do:
//
//	EXTRACT(second FROM x)        CAST(date_part('microseconds', x) AS decimal(38,0)) * 0.000001
//	EXTRACT(milliseconds FROM x)  CAST(date_part('microseconds', x) AS decimal(38,0)) * 0.001
//	EXTRACT(epoch FROM x)         CAST(epoch_us(x) AS decimal(38,0)) * 0.000001
//	date_part('second', x)        CAST(date_part('second', x) AS double) + CAST(µs % 1000000 AS double) / 1000000.0
//	date_part('epoch', x)         CAST(epoch_us(x) AS double) / 1000000.0
//
// (the double forms in Postgres's order of operations; an interval's
// epoch counts a year as 365.25 days and a month as 30, as Postgres does,
// in pgaccel_interval_epoch_us and pgaccel_interval_epoch), with infinite
// timestamps made errors (Postgres answers Infinity or NULL), so the
// statement falls back. Those fields of anything else — a date, a time,
// an expression, julian — go to the origin. Whole-unit fields (year,
// hour, dow, ...) are integers in both engines.

// subSecondFields maps Postgres's spellings of the fields above (and
// julian, never rewritten) to a canonical name.
var subSecondFields = map[string]string{
	"second": "second", "seconds": "second", "sec": "second", "secs": "second", "s": "second",
	"millisecond": "ms", "milliseconds": "ms", "millisecon": "ms", "ms": "ms", "msec": "ms", "msecs": "ms", "msecond": "ms", "mseconds": "ms",
	"microsecond": "us", "microseconds": "us", "microsecon": "us", "us": "us", "usec": "us", "usecs": "us", "usecond": "us", "useconds": "us",
	"epoch": "epoch", "julian": "julian", "j": "julian",
}

// extractSite is an EXTRACT or date_part call of such a field: a copy of
// its source, for the plan-time type check.
type extractSite struct {
	field string // canonical
	arg   *pg_query.Node
}

// extractField returns the canonical sub-second field of an EXTRACT or
// date_part call, or "".
func extractField(fc *pg_query.FuncCall) string {
	if n := funcName(fc); n != "extract" && n != "date_part" || len(fc.Args) != 2 {
		return ""
	}
	c := fc.Args[0].GetAConst()
	if c == nil {
		return ""
	}
	sv, ok := c.Val.(*pg_query.A_Const_Sval)
	if !ok {
		return ""
	}
	return subSecondFields[strings.ToLower(sv.Sval.Sval)]
}

// noteExtract records a sub-second EXTRACT or date_part.
func (z *analyzer) noteExtract(fc *pg_query.FuncCall) {
	if f := extractField(fc); f != "" {
		z.a.extracts = append(z.a.extracts, extractSite{field: f, arg: proto.Clone(fc.Args[1]).(*pg_query.Node)})
	}
}

// timeType is the type of n when it is a column whose every value (by its
// name, through output columns) is a timestamp, a timestamptz or an
// interval, or the difference of two timestamp (or two timestamptz)
// columns, an interval; else 0.
func (a *analysis) timeType(r resolution, n *pg_query.Node) uint32 {
	n = guardedValue(n)
	if vs, ok := passedValues(n); ok {
		// COALESCE(a, b), CASE ... THEN a ELSE b END: a's and b's type.
		t := uint32(0)
		for i, v := range vs {
			vt := a.timeType(r, v)
			if i > 0 && vt != t {
				return 0
			}
			t = vt
		}
		return t
	}
	if cr := n.GetColumnRef(); cr != nil && lastField(cr) != "" {
		for _, oid := range []uint32{pgdef.OIDTimestamp, pgdef.OIDTimestamptz, pgdef.OIDInterval} {
			rule := nameRule{col: func(c catalog.ColumnInfo) bool { return c.TypeOID == oid }, expr: func(*pg_query.Node) bool { return false }}
			if a.safeName(r, lastField(cr), rule, 0) {
				return oid
			}
		}
		return 0
	}
	if fc := n.GetFuncCall(); fc != nil && funcName(fc) == pgdef.FuncTSTZDiff {
		return pgdef.OIDInterval // a timestamptz subtraction, rewritten (tstz.go)
	}
	if e := n.GetAExpr(); e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && divisionOp(e) == "-" && e.Lexpr != nil {
		l, rt := a.timeType(r, e.Lexpr), a.timeType(r, e.Rexpr)
		if l == rt && (l == pgdef.OIDTimestamp || l == pgdef.OIDTimestamptz) {
			return pgdef.OIDInterval
		}
	}
	return 0
}

// passedValues returns the values n passes on as its own, when it is one
// of the forms that return one of their operands — COALESCE, GREATEST,
// LEAST, NULLIF's first operand, CASE's results, min and max — without
// NULL constants (which take the others' type); ok is false for any other
// form, or when every value is a NULL constant. The rules that ask what
// type a value is see through these by it.
func passedValues(n *pg_query.Node) (vs []*pg_query.Node, ok bool) {
	var all []*pg_query.Node
	switch v := n.GetNode().(type) {
	case *pg_query.Node_CoalesceExpr:
		all = v.CoalesceExpr.Args
	case *pg_query.Node_MinMaxExpr:
		all = v.MinMaxExpr.Args
	case *pg_query.Node_AExpr:
		if v.AExpr.Kind != pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return nil, false
		}
		all = []*pg_query.Node{v.AExpr.Lexpr}
	case *pg_query.Node_CaseExpr:
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				all = append(all, cw.Result)
			}
		}
		all = append(all, v.CaseExpr.Defresult)
	case *pg_query.Node_FuncCall:
		switch funcName(v.FuncCall) {
		case "min", "max", "coalesce", "greatest", "least", "nullif":
			all = v.FuncCall.Args
			if funcName(v.FuncCall) == "nullif" && len(all) > 0 {
				all = all[:1]
			}
		default:
			return nil, false
		}
	default:
		return nil, false
	}
	for _, x := range all {
		if x == nil {
			continue
		}
		if c := x.GetAConst(); c != nil && c.Isnull {
			continue
		}
		vs = append(vs, x)
	}
	return vs, len(vs) > 0
}

// extractable reports whether the rewrite computes site's field exactly.
func (a *analysis) extractable(r resolution, site extractSite) bool {
	switch a.timeType(r, site.arg) {
	case pgdef.OIDTimestamp, pgdef.OIDTimestamptz:
		return site.field != "julian"
	case pgdef.OIDInterval:
		return site.field == "epoch"
	}
	return false
}

// untypedExtract returns the field of the first sub-second EXTRACT or
// date_part the rewrite cannot compute, or "".
func (a *analysis) untypedExtract(r resolution) string {
	for _, s := range a.extracts {
		if !a.extractable(r, s) {
			return s.field
		}
	}
	return ""
}

// rewriteExtract turns fc, a sub-second EXTRACT or date_part the plan
// allowed, into DuckDB's exact form (see above), in place.
func rewriteExtract(fc *pg_query.FuncCall, a *analysis, r resolution) {
	field := extractField(fc)
	if field == "" {
		return
	}
	x := fc.Args[1]
	typ := a.timeType(r, x)
	if typ == 0 {
		return // the plan sent it to the origin
	}
	numeric := funcName(fc) == "extract"
	call, cast, op := fnCall, castTo, binOp
	lit := func(s string) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: s}}, Location: -1}}}
	}
	clone := func() *pg_query.Node { return proto.Clone(x).(*pg_query.Node) }
	part := func(p string) *pg_query.Node { return call("date_part", pg_query.MakeAConstStrNode(p, -1), clone()) }
	var micros *pg_query.Node // the integer the value is counted in
	if typ == pgdef.OIDInterval {
		micros = call(pgdef.FuncIntervalEpochUS, clone())
	} else if field == "epoch" {
		micros = call("epoch_us", clone())
	} else {
		micros = part("microseconds")
	}
	var v *pg_query.Node
	switch {
	case numeric && field == "us":
		v = micros
	case numeric && field == "ms":
		v = op("*", cast(micros, "decimal", 38, 0), lit("0.001"))
	case numeric:
		v = op("*", cast(micros, "decimal", 38, 0), lit("0.000001"))
	case field == "epoch" && typ == pgdef.OIDInterval:
		v = call(pgdef.FuncIntervalEpoch, clone())
	case field == "epoch":
		v = op("/", cast(micros, "double"), lit("1000000.0"))
	default:
		// tm_sec * k + fsec / (1000000 / k), in doubles.
		sec := cast(part("second"), "double")
		frac := cast(op("%", part("microseconds"), pg_query.MakeAConstIntNode(1000000, -1)), "double")
		switch field {
		case "second":
			v = op("+", sec, op("/", frac, lit("1000000.0")))
		case "ms":
			v = op("+", op("*", sec, lit("1000.0")), op("/", frac, lit("1000.0")))
		default:
			v = op("+", op("*", sec, lit("1000000.0")), frac)
		}
	}
	// No infinite intervals (Postgres 15): if(false, ..., v) is v.
	guard := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
		Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: false}}, Location: -1}}}
	if typ != pgdef.OIDInterval {
		guard = call("isinf", clone())
	}
	fail := call("error", pg_query.MakeAConstStrNode("an infinite timestamp, whose parts Postgres gives as Infinity or NULL", -1))
	*fc = pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("if")}, Args: []*pg_query.Node{guard, fail, v}, Location: -1}
}

// pgdef.FuncIntervalEpochUS and pgdef.FuncIntervalEpoch are accelerator's
// IntervalEpochUSFunction and IntervalEpochFunction.
const ()

// Years before Christ: Postgres numbers them without a year 0 (44 BC is
// -44), DuckDB astronomically (-43). EXTRACT and date_part of year and
// isoyear of a date or timestamp subtract one from a year below 1 (and
// decade follows timestamp.c's formula for them); of an
// interval (whose years may be negative) they are left alone, which
// DuckDB decides by the argument's type as it binds:
//
//	if(typeof(x) = 'INTERVAL', date_part('year', x), if(y <= 0, y - 1, y))

// yearFields are Postgres's spellings of year and isoyear.
var yearFields = map[string]string{"year": "year", "years": "year", "y": "year", "yr": "year", "yrs": "year", "isoyear": "isoyear",
	"decade": "decade", "decades": "decade", "dec": "decade", "decs": "decade"}

// yearField returns the canonical year field of an EXTRACT or date_part
// call, or "".
func yearField(fc *pg_query.FuncCall) string {
	if n := funcName(fc); n != "extract" && n != "date_part" || len(fc.Args) != 2 {
		return ""
	}
	if c := fc.Args[0].GetAConst(); c != nil {
		if sv, ok := c.Val.(*pg_query.A_Const_Sval); ok {
			return yearFields[strings.ToLower(sv.Sval.Sval)]
		}
	}
	return ""
}

// rewriteYear rewrites fc, a year or isoyear EXTRACT or date_part, in
// place as above.
func rewriteYear(fc *pg_query.FuncCall) {
	field := yearField(fc)
	x := fc.Args[1]
	call, op := fnCall, binOp
	part := func() *pg_query.Node {
		return call("date_part", pg_query.MakeAConstStrNode(field, -1), proto.Clone(x).(*pg_query.Node))
	}
	one := func() *pg_query.Node { return pg_query.MakeAConstIntNode(1, -1) }
	bc := call("if", op("<", part(), one()), op("-", part(), one()), part())
	if field == "decade" {
		// -((8 - (y - 1)) / 10) for DuckDB's y <= 0 (timestamp.c).
		year := func() *pg_query.Node {
			return call("date_part", pg_query.MakeAConstStrNode("year", -1), proto.Clone(x).(*pg_query.Node))
		}
		neg := op("-", pg_query.MakeAConstIntNode(0, -1),
			op("/", op("-", pg_query.MakeAConstIntNode(8, -1), op("-", year(), one())), pg_query.MakeAConstIntNode(10, -1)))
		bc = call("if", op("<", year(), one()), neg, op("/", year(), pg_query.MakeAConstIntNode(10, -1)))
	}
	isInterval := op("=", call("typeof", proto.Clone(x).(*pg_query.Node)), pg_query.MakeAConstStrNode("INTERVAL", -1))
	*fc = pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("if")}, Args: []*pg_query.Node{isInterval, part(), bc}, Location: -1}
}

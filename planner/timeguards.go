package planner

import (
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Date and time functions at their edges:
//   - EXTRACT and date_part of a time field (hour, minute, second, ...) of
//     a date: Postgres 14+ raises 0A000 "unit not supported for type
//     date", DuckDB answers 0 (timeCallHazard).
//   - date_trunc to century or millennium: Postgres's centuries begin
//     with year 1 (2001-01-01), DuckDB's with year 0 (2000-01-01); a unit
//     that is not a constant cannot be checked (checkTimeArgs).
//   - ±infinity through EXTRACT, date_part, date_trunc and age: Postgres
//     answers ±Infinity, infinity or an error, DuckDB NULL or a garbled
//     timestamp; the rewrite makes DuckDB fail on an infinite argument
//     (guardInfinite), and the origin answers.
//   - make_date of a year below 1 (Postgres's year -44 is 44 BC, DuckDB's
//     45 BC; year 0 is an error) or fields out of range, and make_time(24,
//     0, 0) (Postgres's 24:00:00, DuckDB's 00:00:00) are guarded
//     (argguards.go).

// dateLessFields are the fields of EXTRACT/date_part a date does not have in
// Postgres 14+.
var dateLessFields = map[string]bool{
	"hour": true, "hours": true, "minute": true, "minutes": true, "second": true, "seconds": true,
	"millisecond": true, "milliseconds": true, "microsecond": true, "microseconds": true, "timezone": true,
	"timezone_hour": true, "timezone_minute": true, "timezone_m": true, "timezone_h": true,
	"ms": true, "us": true, "msec": true, "usec": true, "msecs": true, "usecs": true, "min": true, "mins": true,
	"sec": true, "secs": true, "h": true, "m": true, "s": true, "hr": true, "hrs": true,
}

// truncUnits are the units of date_trunc DuckDB truncates to as Postgres
// does.
var truncUnits = map[string]bool{
	"microseconds": true, "milliseconds": true, "second": true, "minute": true, "hour": true, "day": true,
	"week": true, "month": true, "quarter": true, "year": true, "decade": true,
}

// timeCall is an EXTRACT or date_part whose argument's type decides
// whether Postgres answers (copies).
type timeCall struct {
	field string
	arg   *pg_query.Node
}

// noteTimeCall records an EXTRACT or date_part of a time field.
func (z *analyzer) noteTimeCall(fc *pg_query.FuncCall) {
	if n := funcName(fc); (n == "extract" || n == "date_part") && len(fc.Args) == 2 {
		if f, ok := constString(fc.Args[0]); ok && dateLessFields[strings.ToLower(f)] {
			z.a.timeCalls = append(z.a.timeCalls, timeCall{field: strings.ToLower(f), arg: copyNode(fc.Args[1])})
		}
	}
}

// checkTimeArgs returns why a date/time call's arguments cannot be
// answered as Postgres does, or "".
func checkTimeArgs(fc *pg_query.FuncCall) string {
	if funcName(fc) == "date_trunc" && len(fc.Args) >= 2 {
		unit, ok := constString(fc.Args[0])
		if !ok || !truncUnits[strings.ToLower(unit)] {
			return "date_trunc to a unit that is not a constant one of microseconds ... decade (DuckDB's centuries and millennia begin a year early)"
		}
	}
	return ""
}

// constString returns the value of a string constant (or one cast to a
// type).
func constString(n *pg_query.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	if c := n.GetAConst(); c != nil {
		if s, ok := c.Val.(*pg_query.A_Const_Sval); ok {
			return s.Sval.Sval, true
		}
	}
	return "", false
}

// timeCallHazard returns the first EXTRACT or date_part of a time field of
// a value that may be a date.
func (a *analysis) timeCallHazard(r resolution) string {
	for _, tc := range a.timeCalls {
		if a.mayBeDate(r, tc.arg) {
			return "EXTRACT or date_part of the field " + tc.field + " of a date (Postgres raises, DuckDB answers 0)"
		}
	}
	return ""
}

// mayBeDate reports whether n may be a date: a date column (any of its
// name), a cast to date, make_date, to_date, date(), and what passes one
// on (min, max, coalesce, CASE, arithmetic with one).
func (a *analysis) mayBeDate(r resolution, n *pg_query.Node) bool {
	return a.mayBeDateAt(r, n, 0)
}

func (a *analysis) mayBeDateAt(r resolution, n *pg_query.Node, depth int) bool {
	if n == nil || depth >= maxAliasDepth {
		return n != nil
	}
	any := func(ns ...*pg_query.Node) bool {
		for _, x := range ns {
			if a.mayBeDateAt(r, x, depth+1) {
				return true
			}
		}
		return false
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_TypeCast:
		return castTarget(v.TypeCast, dateTypeNames) || v.TypeCast.TypeName == nil
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		if name == "" {
			return false
		}
		if found, all := columnsNamed(r, name, func(c catalog.ColumnInfo) bool { return c.TypeOID != pgdef.OIDDate }); found && !all {
			return true
		}
		for _, def := range a.aliasDefs[name] {
			if cr := def.GetColumnRef(); cr != nil && lastField(cr) == name {
				continue
			}
			if a.mayBeDateAt(r, def, depth+1) {
				return true
			}
		}
		return false
	case *pg_query.Node_FuncCall:
		switch funcName(v.FuncCall) {
		case "make_date", "to_date", "date":
			return true
		case "min", "max", "first_value", "last_value", "lag", "lead", "nth_value", "coalesce", "greatest", "least", "mode":
			return any(v.FuncCall.Args...)
		}
		return false
	case *pg_query.Node_AExpr:
		if v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return any(v.AExpr.Lexpr)
		}
		if op := divisionOp(v.AExpr); op == "+" || op == "-" {
			return any(v.AExpr.Lexpr, v.AExpr.Rexpr)
		}
		return false
	case *pg_query.Node_CaseExpr:
		ns := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				ns = append(ns, cw.Result)
			}
		}
		return any(ns...)
	case *pg_query.Node_CoalesceExpr:
		return any(v.CoalesceExpr.Args...)
	case *pg_query.Node_MinMaxExpr:
		return any(v.MinMaxExpr.Args...)
	}
	return false
}

// guardInfinite makes DuckDB fail on an infinite timestamp or date
// argument of EXTRACT, date_part, date_trunc and age (the rewrite's call
// loop, before their own rewrites copy the arguments): Postgres answers
// those otherwise.
func guardInfinite(f *pg_query.FuncCall, a *analysis, r resolution) {
	var idx []int
	switch funcName(f) {
	case "extract", "date_part", "date_trunc":
		if len(f.Args) >= 2 {
			idx = []int{1}
		}
	case "age":
		if len(f.Args) == 2 {
			idx = []int{0, 1}
		}
	}
	for _, i := range idx {
		x := f.Args[i]
		switch a.timeType(r, x) {
		case pgdef.OIDTimestamp, pgdef.OIDTimestamptz:
		default:
			if !a.dateTyped(r, x) && a.tstzOf(r, x, 0) != tstzYes {
				continue // an interval, or not known: isinf has no interval form
			}
		}
		f.Args[i] = guardValue(x, isInf, "an infinite date or timestamp (Postgres answers it otherwise)")
	}
}

// dateTyped reports whether n is a date column or a cast to date or
// timestamp(tz).
func (a *analysis) dateTyped(r resolution, n *pg_query.Node) bool {
	n = guardedValue(n)
	if vs, ok := passedValues(n); ok {
		for _, v := range vs {
			if !a.dateTyped(r, v) {
				return false
			}
		}
		return true
	}
	if tc := n.GetTypeCast(); tc != nil {
		return castTarget(tc, map[string]bool{"date": true, "timestamp": true, "timestamptz": true})
	}
	if cr := n.GetColumnRef(); cr != nil && lastField(cr) != "" {
		return columnsAre(r, lastField(cr), func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDDate })
	}
	return false
}

// concatHazard returns why concat or concat_ws of the statement would be
// printed otherwise by DuckDB: an argument that is neither a string
// literal nor a text column (DuckDB prints booleans, floats, intervals
// and numerics its own way).
func (a *analysis) concatHazard(r resolution) string {
	// A column prints in concat as its type's output function prints it:
	// as DuckDB prints it for the types of textCastSafe but boolean (t in
	// Postgres, true in DuckDB).
	concatCol := nameRule{
		col: func(c catalog.ColumnInfo) bool { return textCastSafeColumn(c) && c.TypeOID != pgdef.OIDBool },
		expr: func(n *pg_query.Node) bool {
			if c := n.GetAConst(); c != nil {
				_, isFloat := c.Val.(*pg_query.A_Const_Fval)
				_, isBool := c.Val.(*pg_query.A_Const_Boolval)
				return !isFloat && !isBool
			}
			return a.textValue(r, n, 0)
		},
	}
	for _, arg := range a.concatArgs {
		if cr := arg.GetColumnRef(); cr != nil && lastField(cr) != "" && a.safeName(r, lastField(cr), concatCol, 0) {
			continue
		}
		if !concatCol.expr(arg) {
			return "concat or concat_ws of a value that is not known to be text (DuckDB prints other types its own way)"
		}
	}
	return ""
}

// textFuncs return text when their first argument is text.
var textFuncs = map[string]bool{
	"lower": true, "upper": true, "initcap": true, "replace": true, "substr": true, "substring": true,
	"left": true, "right": true, "lpad": true, "rpad": true, "ltrim": true, "rtrim": true, "btrim": true,
	"trim": true, "reverse": true, "repeat": true, "split_part": true, "translate": true, "concat": true,
	"concat_ws": true, "md5": true,
}

// textValue reports whether n is text: a string literal, NULL, a column
// of a text type, and text functions, CASE, COALESCE and || of those.
func (a *analysis) textValue(r resolution, n *pg_query.Node, depth int) bool {
	if n == nil || depth >= maxAliasDepth {
		return n == nil
	}
	all := func(ns ...*pg_query.Node) bool {
		for _, x := range ns {
			if x != nil && !a.textValue(r, x, depth+1) {
				return false
			}
		}
		return true
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		_, isString := v.AConst.Val.(*pg_query.A_Const_Sval)
		return isString || v.AConst.Isnull
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		return name != "" && columnsAre(r, name, func(c catalog.ColumnInfo) bool { return textTypeOIDs[c.TypeOID] })
	case *pg_query.Node_CoalesceExpr:
		return all(v.CoalesceExpr.Args...)
	case *pg_query.Node_CaseExpr:
		ns := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			ns = append(ns, w.GetCaseWhen().GetResult())
		}
		return all(ns...)
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		if name := funcName(fc); name == "md5" || name == "concat" || name == "concat_ws" {
			return true // text whatever its arguments (concat's own are judged)
		}
		return textFuncs[funcName(fc)] && len(fc.Args) > 0 && all(fc.Args[0])
	case *pg_query.Node_AExpr:
		if v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_OP && divisionOp(v.AExpr) == "||" {
			return all(v.AExpr.Lexpr, v.AExpr.Rexpr)
		}
	}
	return false
}

// numericValue reports whether n is a numeric column (every one of its
// name).
func (a *analysis) numericValue(r resolution, n *pg_query.Node) bool {
	cr := n.GetColumnRef()
	return cr != nil && lastField(cr) != "" && columnsAre(r, lastField(cr), func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDNumeric })
}

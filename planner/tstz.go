package planner

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// timestamptz - timestamptz. Postgres subtracts the instants and makes the
// microseconds an interval of whole days of 24 hours and the rest
// (timestamp_mi, interval_justify_hours): 92 days 11:14:29 whatever the
// session's TimeZone. DuckDB subtracts on the calendar of the session's
// zone, so across a daylight-saving change (or a zone's change of its
// historic offset) its answer is an hour (or 29 minutes 43 seconds) off.
// The rewrite computes Postgres's interval from the instants, with
// Postgres's error for an infinite operand: pgaccel_tstz_diff(a, b), the
// accelerator's macro. A subtraction with one operand a
// timestamptz and the other of a type the planner cannot tell (a
// parameter, a subquery) goes to the origin (tstzHazard).
//
// Interval constants. DuckDB compares intervals as Postgres does, by their
// length with a month of 30 days and a day of 24 hours, and its optimizer
// takes two expressions that differ only by such equal constants for one:
// in SELECT a + interval '1 day', a + interval '24 hours' both columns are
// the first's (a day is 23 or 25 hours across a daylight-saving change;
// and iv + '1 day' prints otherwise than iv + '24 hours'). A statement
// with two interval constants of the same length but other fields, or
// with interval constants the planner cannot read, goes to the origin
// (intervalCollision).

// tstzVerdict is what the planner knows of whether a value is a
// timestamptz.
type tstzVerdict uint8

const (
	tstzNo tstzVerdict = iota
	tstzYes
	tstzMaybe
)

// tstzOf tells whether n is a timestamptz.
func (a *analysis) tstzOf(r resolution, n *pg_query.Node, depth int) tstzVerdict {
	if n == nil {
		return tstzNo
	}
	if depth >= maxAliasDepth {
		return tstzMaybe
	}
	n = guardedValue(n)
	join := func(ns ...*pg_query.Node) tstzVerdict {
		out := tstzNo
		for _, x := range ns {
			switch a.tstzOf(r, x, depth+1) {
			case tstzYes:
				if out == tstzNo {
					out = tstzYes
				}
			case tstzMaybe:
				out = tstzMaybe
			}
		}
		return out
	}
	switch v := n.GetNode().(type) {
	case *pg_query.Node_ColumnRef:
		name := lastField(v.ColumnRef)
		if name == "" {
			return tstzNo
		}
		found, all := columnsNamed(r, name, func(c catalog.ColumnInfo) bool { return c.TypeOID == pgdef.OIDTimestamptz })
		someNot := found && !all
		out := tstzNo
		if all {
			out = tstzYes
		}
		for _, def := range a.aliasDefs[name] {
			if cr := def.GetColumnRef(); cr != nil && lastField(cr) == name {
				continue
			}
			found = true
			switch a.tstzOf(r, def, depth+1) {
			case tstzYes:
				if someNot {
					return tstzMaybe
				}
				out = tstzYes
			case tstzMaybe:
				return tstzMaybe
			default:
				if out == tstzYes {
					return tstzMaybe
				}
			}
		}
		if !found {
			return tstzMaybe
		}
		if someNot && out == tstzYes {
			return tstzMaybe
		}
		return out
	case *pg_query.Node_TypeCast:
		if v.TypeCast.TypeName == nil {
			return tstzMaybe
		}
		if castTarget(v.TypeCast, map[string]bool{"timestamptz": true}) {
			return tstzYes
		}
		return tstzNo
	case *pg_query.Node_AConst:
		if _, ok := v.AConst.Val.(*pg_query.A_Const_Sval); ok {
			return tstzMaybe // an unknown: it takes the other operand's type
		}
		return tstzNo
	case *pg_query.Node_FuncCall:
		fc := v.FuncCall
		switch funcName(fc) {
		case "min", "max", "first_value", "last_value", "nth_value", "lag", "lead", "any_value", "mode":
			if len(fc.Args) > 0 {
				return join(fc.Args[0])
			}
			if fc.AggWithinGroup && len(fc.AggOrder) > 0 {
				return join(fc.AggOrder[0].GetSortBy().GetNode())
			}
			return tstzMaybe
		case "percentile_disc":
			if len(fc.AggOrder) > 0 {
				return join(fc.AggOrder[0].GetSortBy().GetNode())
			}
			return tstzMaybe
		case "date_trunc":
			switch len(fc.Args) {
			case 2:
				return join(fc.Args[1])
			case 3:
				return tstzYes
			}
			return tstzMaybe
		case "to_timestamp":
			if len(fc.Args) == 1 {
				return tstzYes
			}
			return tstzMaybe
		case "coalesce", "greatest", "least", "nullif":
			return join(fc.Args...)
		case "timezone":
			if len(fc.Args) == 2 && a.tstzOf(r, fc.Args[1], depth+1) == tstzNo {
				return tstzMaybe // timestamp AT TIME ZONE z is a timestamptz
			}
			return tstzNo // timestamptz AT TIME ZONE z is a timestamp
		}
		if nonTextFuncs[funcName(fc)] || collatedTextFuncs[funcName(fc)] {
			return tstzNo
		}
		return tstzMaybe
	case *pg_query.Node_AExpr:
		e := v.AExpr
		switch e.Kind {
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			return join(e.Lexpr)
		case pg_query.A_Expr_Kind_AEXPR_OP:
		default:
			return tstzNo
		}
		switch divisionOp(e) {
		case "+":
			return join(e.Lexpr, e.Rexpr)
		case "-":
			if e.Lexpr == nil {
				return tstzNo
			}
			l, rv := a.tstzOf(r, e.Lexpr, depth+1), a.tstzOf(r, e.Rexpr, depth+1)
			switch {
			case l == tstzYes && rv == tstzNo:
				return tstzYes // timestamptz - interval
			case l == tstzNo:
				return tstzNo
			case l == tstzYes && rv == tstzYes:
				return tstzNo // an interval
			}
			return tstzMaybe
		case "*", "/", "%", "^", "||":
			return tstzNo
		}
		if comparisonOps[divisionOp(e)] {
			return tstzNo
		}
		return tstzMaybe
	case *pg_query.Node_CaseExpr:
		ns := []*pg_query.Node{v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				ns = append(ns, cw.Result)
			}
		}
		return join(ns...)
	case *pg_query.Node_CoalesceExpr:
		return join(v.CoalesceExpr.Args...)
	case *pg_query.Node_MinMaxExpr:
		return join(v.MinMaxExpr.Args...)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return tstzNo
	}
	return tstzMaybe
}

// tstzHazard returns why a subtraction of the statement cannot be
// answered as Postgres does: one operand a timestamptz, the other one of a
// type the planner cannot tell.
func (a *analysis) tstzHazard(r resolution) string {
	for _, sub := range a.subtractions {
		l, rv := a.tstzOf(r, sub[0], 0), a.tstzOf(r, sub[1], 0)
		if l == tstzYes && rv == tstzMaybe && !isStringConst(sub[1]) || l == tstzMaybe && rv == tstzYes && !isStringConst(sub[0]) {
			return "a subtraction from a timestamptz of a value whose type is not known (timestamptz - timestamptz is computed on the instants in Postgres, on the session zone's calendar in DuckDB)"
		}
	}
	return ""
}

// isSubtraction reports whether e is a binary -.
func isSubtraction(e *pg_query.A_Expr) bool {
	return e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr != nil && e.Rexpr != nil && divisionOp(e) == "-"
}

// tstzSubtraction reports whether rewriteTstzSubtraction rewrites e.
func tstzSubtraction(e *pg_query.A_Expr, a *analysis, r resolution) bool {
	l, rv := a.tstzOf(r, e.Lexpr, 0), a.tstzOf(r, e.Rexpr, 0)
	return l == tstzYes && (rv == tstzYes || isStringConst(e.Rexpr)) || rv == tstzYes && isStringConst(e.Lexpr)
}

// pgdef.FuncTSTZDiff is the accelerator's pgaccel_tstz_diff (its
// TstzDiffFunction): a - b of two timestamptz as Postgres computes it.

// rewriteTstzSubtraction replaces the subtraction e (held by wrapper), of
// two timestamptz (a string literal beside one is cast to it, as Postgres
// takes it), by pgaccel_tstz_diff of the same operand nodes, so that the
// rewrites of the operands still apply to them.
func rewriteTstzSubtraction(wrapper *pg_query.Node, e *pg_query.A_Expr, a *analysis, r resolution) {
	l, rv := a.tstzOf(r, e.Lexpr, 0), a.tstzOf(r, e.Rexpr, 0)
	asTstz := func(n *pg_query.Node) *pg_query.Node {
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: n,
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("timestamptz")}, Typemod: -1, Location: -1}, Location: -1}}}
	}
	left, right := e.Lexpr, e.Rexpr
	switch {
	case l == tstzYes && rv == tstzYes:
	case l == tstzYes && isStringConst(right):
		right = asTstz(right)
	case rv == tstzYes && isStringConst(left):
		left = asTstz(left)
	default:
		return
	}
	wrapper.Node = fnCall(pgdef.FuncTSTZDiff, left, right).Node
}

// intervalCollision returns why the statement's interval constants could
// be taken one for another by DuckDB: two of the same length with other
// fields, or constants it cannot read beside others.
func intervalCollision(consts []string) string {
	if len(consts) < 2 {
		return ""
	}
	seen := map[string]intervalFields{}
	for _, c := range consts {
		f, ok := parseInterval(c)
		if !ok {
			return "an interval constant the planner cannot read (" + c + ") beside other interval constants (DuckDB may take intervals of the same length for one another)"
		}
		length := new(big.Int).Mul(big.NewInt(f.months), big.NewInt(30))
		length.Add(length, big.NewInt(f.days))
		length.Mul(length, big.NewInt(86400000000))
		length.Add(length, big.NewInt(f.micros))
		key := length.String()
		if o, dup := seen[key]; dup && o != f {
			return "two interval constants of the same length with other fields (DuckDB takes one for the other)"
		}
		seen[key] = f
	}
	return ""
}

// intervalFields are an interval's months, days and microseconds.
type intervalFields struct{ months, days, micros int64 }

// intervalUnits are the units of Postgres's interval input, as months,
// days or microseconds.
var intervalUnits = map[string]intervalFields{
	"microsecond": {micros: 1}, "microseconds": {micros: 1}, "usec": {micros: 1}, "usecs": {micros: 1}, "us": {micros: 1},
	"millisecond": {micros: 1000}, "milliseconds": {micros: 1000}, "msec": {micros: 1000}, "msecs": {micros: 1000}, "ms": {micros: 1000},
	"second": {micros: 1e6}, "seconds": {micros: 1e6}, "sec": {micros: 1e6}, "secs": {micros: 1e6}, "s": {micros: 1e6},
	"minute": {micros: 60e6}, "minutes": {micros: 60e6}, "min": {micros: 60e6}, "mins": {micros: 60e6}, "m": {micros: 60e6},
	"hour": {micros: 3600e6}, "hours": {micros: 3600e6}, "hr": {micros: 3600e6}, "hrs": {micros: 3600e6}, "h": {micros: 3600e6},
	"day": {days: 1}, "days": {days: 1}, "d": {days: 1},
	"week": {days: 7}, "weeks": {days: 7}, "w": {days: 7},
	"month": {months: 1}, "months": {months: 1}, "mon": {months: 1}, "mons": {months: 1},
	"year": {months: 12}, "years": {months: 12}, "yr": {months: 12}, "yrs": {months: 12}, "y": {months: 12},
	"decade": {months: 120}, "decades": {months: 120},
	"century": {months: 1200}, "centuries": {months: 1200},
	"millennium": {months: 12000}, "millennia": {months: 12000},
}

// parseInterval reads the common forms of Postgres's interval input:
// "[@] n unit [n unit ...] [hh:mm[:ss[.f]]] [ago]" with whole numbers (a
// fraction only of seconds). ok is false for anything else.
func parseInterval(s string) (intervalFields, bool) {
	var f intervalFields
	words := strings.Fields(strings.ToLower(s))
	if len(words) > 0 && words[0] == "@" {
		words = words[1:]
	}
	ago := false
	if len(words) > 0 && words[len(words)-1] == "ago" {
		ago, words = true, words[:len(words)-1]
	}
	if len(words) == 0 {
		return f, false
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.Contains(w, ":") {
			us, ok := parseClock(w)
			if !ok {
				return f, false
			}
			f.micros += us
			continue
		}
		// A number, and its unit in the same word ("3days") or the next.
		j := 0
		if j < len(w) && (w[j] == '-' || w[j] == '+') {
			j++
		}
		for j < len(w) && (w[j] >= '0' && w[j] <= '9' || w[j] == '.') {
			j++
		}
		num, unit := w[:j], w[j:]
		if unit == "" {
			if i+1 >= len(words) {
				unit = "seconds" // a bare number at the end: seconds
			} else {
				i++
				unit = words[i]
			}
		}
		u, ok := intervalUnits[unit]
		if !ok || num == "" || num == "-" || num == "+" {
			return f, false
		}
		if strings.Contains(num, ".") {
			if u.micros != 1e6 {
				return f, false
			}
			x, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return f, false
			}
			f.micros += int64(x*1e6 + copysignHalf(x))
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > 1e9 || n < -1e9 {
			return f, false
		}
		f.months += n * u.months
		f.days += n * u.days
		f.micros += n * u.micros
	}
	if ago {
		f.months, f.days, f.micros = -f.months, -f.days, -f.micros
	}
	return f, true
}

func copysignHalf(x float64) float64 {
	if x < 0 {
		return -0.5
	}
	return 0.5
}

// parseClock reads [-]hh:mm[:ss[.f]] as microseconds.
func parseClock(w string) (int64, bool) {
	neg := strings.HasPrefix(w, "-")
	w = strings.TrimLeft(w, "+-")
	parts := strings.Split(w, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || h > 1e8 {
		return 0, false
	}
	us := (h*60 + m) * 60e6
	if len(parts) == 3 {
		sec, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			return 0, false
		}
		us += int64(sec*1e6 + 0.5)
	}
	if neg {
		us = -us
	}
	return us, true
}

// intervalConst returns the text of an interval constant: interval 'x',
// 'x'::interval or CAST('x' AS interval).
func intervalConst(tc *pg_query.TypeCast) (string, bool) {
	if !castTarget(tc, map[string]bool{"interval": true}) || len(tc.TypeName.Typmods) > 0 {
		return "", false
	}
	c := tc.Arg.GetAConst()
	if c == nil {
		return "", false
	}
	s, ok := c.Val.(*pg_query.A_Const_Sval)
	if !ok {
		return "", false
	}
	return s.Sval.Sval, true
}

// zoneSensitive reports whether the statement adds to or subtracts from a
// timestamptz an interval of both calendar fields (months, days) and time,
// or one the planner cannot read: Postgres adds the months and days on
// the session zone's calendar and then the time as elapsed time, DuckDB
// the whole interval on the calendar, so across a daylight-saving change
// the two differ by the change. In a zone without changes (UTC) they do
// not: the proxy sends such statements to the origin only in other zones
// (Decision.ZoneSensitive).
func (a *analysis) zoneSensitive(r resolution) bool {
	for _, ops := range [][][2]*pg_query.Node{a.additions, a.subtractions} {
		for _, pair := range ops {
			for i := range 2 {
				x, iv := pair[i], pair[1-i]
				if a.tstzOf(r, x, 0) != tstzYes || a.tstzOf(r, iv, 0) == tstzYes {
					continue
				}
				if tc := iv.GetTypeCast(); tc != nil {
					if text, ok := intervalConst(tc); ok {
						if f, ok := parseInterval(text); ok && (f.micros == 0 || f.months == 0 && f.days == 0) {
							continue
						}
					}
				}
				return true
			}
		}
	}
	return false
}

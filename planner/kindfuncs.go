package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/pgdef"
)

// The kinds of the results of functions and operators (valuekinds.go).

// Functions whose result's kind the planner knows: otherFuncs return
// ksOther, floatFuncs a double precision, intervalFuncs an interval,
// temporalFuncs and dateFuncs a timestamp (or time) and a date, whatever
// their arguments.
var (
	otherFuncs = map[string]bool{
		"count": true, "row_number": true, "rank": true, "dense_rank": true, "ntile": true,
		"length": true, "char_length": true, "character_length": true, "octet_length": true, "bit_length": true,
		"strpos": true, "position": true, "array_length": true, "cardinality": true, "array_position": true,
		"array_positions": true, "array_to_string": true, "string_to_array": true, "array_ndims": true, "array_dims": true,
		"bool_and": true, "bool_or": true, "every": true, "isfinite": true, "starts_with": true, "extract": true,
		"jsonb_array_length": true, "json_array_length": true, "to_json": true, "to_jsonb": true, "jsonb_typeof": true,
		"json_typeof": true, "jsonb_build_object": true, "json_build_object": true, "jsonb_build_array": true,
		"json_build_array": true, "jsonb_agg": true, "json_agg": true, "jsonb_object_agg": true, "json_object_agg": true,
		"to_number": true, "num_nonnulls": true, "num_nulls": true, "width_bucket": true, "gcd": true, "lcm": true,
		"factorial": true, "scale": true, "min_scale": true, "trim_scale": true, "div": true, "ascii": true,
		"like_escape": true, "similar_to_escape": true, "grouping": true, "regexp_like": true, "regexp_count": true,
		"regexp_instr": true, "regexp_substr": true, "regexp_match": true, "regexp_matches": true,
		"regexp_split_to_array": true, "to_hex": true, "to_ascii": true, "bit_count": true, "get_bit": true,
		"get_byte": true, "sha224": true, "sha256": true, "sha384": true, "sha512": true, "decode": true,
		// DuckDB's and the accelerator's functions the rewrite calls.
		"typeof": true, "len": true, "list_count": true, "list_contains": true, "strlen": true, "epoch_us": true, "epoch_ms": true, "isnan": true, "isinf": true, "translate": true,
		"current_setting":    true,
		pgdef.FuncNumericAvg: true, pgdef.FuncNumericAvgDec: true, pgdef.FuncNumericScale: true, pgdef.FuncNumericDiv: true, pgdef.FuncNumericDivInt: true,
		pgdef.FuncNumericRound: true, pgdef.FuncNumericIn: true, pgdef.FuncNumericInScale: true,
		pgdef.FuncFloat8NumericText: true, pgdef.FuncNumericStddev: true, pgdef.FuncNumericSortkey: true,
		pgdef.FuncText: true, pgdef.FuncInitcapASCII: true, pgdef.FuncJSONGet: true, pgdef.FuncJSONGetText: true,
		pgdef.FuncJSONPath: true, pgdef.FuncJSONPathText: true, pgdef.FuncJSONTypeof: true,
		pgdef.FuncJSONArrayLength: true, pgdef.FuncJSONBContains: true, pgdef.FuncJSONBExists: true,
		pgdef.FuncIntervalEpochUS: true, pgdef.FuncIntervalKey: true,
	}
	floatFuncs = map[string]bool{
		"pi": true, "sin": true, "cos": true, "tan": true, "cot": true, "asin": true, "acos": true, "atan": true,
		"atan2": true, "sind": true, "cosd": true, "tand": true, "cotd": true, "asind": true, "acosd": true,
		"atand": true, "atan2d": true, "sinh": true, "cosh": true, "tanh": true, "asinh": true, "acosh": true,
		"atanh": true, "degrees": true, "radians": true, "date_part": true, "percent_rank": true, "cume_dist": true,
		"corr": true, "covar_pop": true, "covar_samp": true, "regr_avgx": true, "regr_avgy": true, "regr_count": true,
		"regr_intercept": true, "regr_r2": true, "regr_slope": true, "regr_sxx": true, "regr_sxy": true, "regr_syy": true,
		"float8": true, "float4": true, "random": true, pgdef.FuncIntervalEpoch: true, "erf": true, "erfc": true,
	}
	// numericOrFloatFuncs return double precision for double precision
	// (or integer) arguments and numeric for numeric ones.
	numericOrFloatFuncs = map[string]bool{
		"sqrt": true, "cbrt": true, "exp": true, "ln": true, "log": true, "log10": true, "power": true, "pow": true,
		"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true,
	}
	// sameKindFuncs return a value of their (first) argument's kind.
	sameKindFuncs = map[string]bool{
		"min": true, "max": true, "first_value": true, "last_value": true, "nth_value": true, "any_value": true,
		"abs": true, "round": true, "trunc": true, "ceil": true, "ceiling": true, "floor": true, "sign": true,
		"sum": true, "avg": true, "generate_series": true, "round_even": true, "arg_min": true, "arg_max": true, "justify_hours": true, "justify_days": true, "justify_interval": true,
		pgdef.FuncJustifyHours: true, pgdef.FuncJustifyDays: true, pgdef.FuncJustifyInterval: true,
	}
	intervalFuncs = map[string]bool{"age": true, "make_interval": true, pgdef.FuncTSTZDiff: true}
	temporalFuncs = map[string]bool{
		"make_timestamp": true, "make_timestamptz": true, "to_timestamp": true, "make_time": true, "date_bin": true,
		"timezone": true, "now": true, "clock_timestamp": true, "statement_timestamp": true, "transaction_timestamp": true,
	}
	dateFuncs = map[string]bool{"make_date": true, "to_date": true, "date": true}
)

// call is the kinds of a function's result.
func (k kindScope) call(fc *pg_query.FuncCall, depth int) kindSet {
	name := funcName(fc)
	args := fc.Args
	if fc.AggWithinGroup && len(fc.AggOrder) > 0 {
		// mode() and percentile_disc(f) WITHIN GROUP (ORDER BY x): x's.
		args = []*pg_query.Node{fc.AggOrder[0].GetSortBy().GetNode()}
	}
	argKinds := func() kindSet { return k.join(depth, args...) }
	switch {
	case name == "error":
		return 0 // never returns
	case otherFuncs[name] || collatedTextFuncs[name]:
		return ksOther
	case strings.HasPrefix(name, "pgaccel_") && !sameKindFuncs[name] && !intervalFuncs[name] && !floatFuncs[name]:
		return ksOther // the accelerator's: text, numerics, json, booleans
	case floatFuncs[name]:
		return ksFloat
	case intervalFuncs[name]:
		return ksInterval
	case temporalFuncs[name]:
		return ksTemporal
	case dateFuncs[name]:
		return ksDate
	case numericOrFloatFuncs[name]:
		if a := argKinds(); a.only(ksOther) {
			return ksOther | ksFloat // integer arguments make a double precision
		} else if a.only(ksFloat) {
			return ksFloat
		}
		return ksOther | ksFloat
	case sameKindFuncs[name], name == "lag", name == "lead", name == "mode", name == "percentile_disc":
		if len(args) == 0 {
			return ksAll
		}
		if name == "lag" || name == "lead" {
			ns := []*pg_query.Node{args[0]}
			if len(args) > 2 {
				ns = append(ns, args[2])
			}
			return k.join(depth, ns...)
		}
		if name == "percentile_disc" && len(fc.Args) > 0 && fc.Args[0].GetAArrayExpr() != nil {
			return k.join(depth, args[0]).arrayOf()
		}
		return k.join(depth, args[0])
	case name == "percentile_cont":
		if len(args) > 0 && k.join(depth, args[0]).only(ksIntervals) {
			return ksInterval | ksIntervalArr
		}
		return ksFloat | ksFloatArr | ksIntervals
	case name == "if" && len(args) == 3: // DuckDB's if(condition, a, b)
		return k.join(depth, args[1], args[2])
	case name == "coalesce" || name == "greatest" || name == "least" || name == "nullif":
		if name == "nullif" && len(args) > 0 {
			return k.join(depth, args[0])
		}
		return k.join(depth, args...)
	case name == "date_trunc":
		if len(args) >= 2 {
			a := k.join(depth, args[1])
			out := a & (ksInterval | ksTemporal)
			if a.has(ksDate | ksUnknown) {
				out |= ksTemporal
			}
			if a.has(^(ksInterval | ksTemporal | ksDate | ksUnknown)) {
				out |= ksAll
			}
			return out
		}
		return ksAll
	case name == "array_agg":
		return argKinds().arrayOf() | argKinds()&ksFloatArr | argKinds()&ksIntervalArr
	case name == "unnest":
		return argKinds().elementOf()
	case name == "array_append" || name == "array_prepend" || name == "array_cat" || name == "array_remove" ||
		name == "array_replace" || name == "trim_array" || name == "array_fill":
		a := argKinds()
		return a&(ksFloatArr|ksIntervalArr|ksOther) | (a & (ksFloat | ksInterval | ksTemporal | ksDate)).arrayOf()
	}
	// A function the planner does not know: of any kind, but an interval
	// only if an argument may be one.
	out := ksAll &^ ksIntervals
	if argKinds().has(ksIntervals) {
		out |= ksIntervals
	}
	return out
}

// arithKind is the kind of lb op rb for one kind of each operand (0 when
// Postgres has no such operator).
func arithKind(op string, lb, rb kindSet) kindSet {
	pair := func(x, y kindSet) bool { return lb == x && rb == y }
	switch op {
	case "+":
		switch {
		case pair(ksInterval, ksInterval):
			return ksInterval
		case pair(ksTemporal, ksInterval), pair(ksInterval, ksTemporal), pair(ksDate, ksInterval), pair(ksInterval, ksDate),
			pair(ksDate, ksTemporal), pair(ksTemporal, ksDate):
			return ksTemporal
		case pair(ksDate, ksOther), pair(ksOther, ksDate):
			return ksDate
		}
	case "-":
		switch {
		case pair(ksInterval, ksInterval), pair(ksTemporal, ksTemporal), pair(ksTemporal, ksDate), pair(ksDate, ksTemporal):
			return ksInterval
		case pair(ksTemporal, ksInterval), pair(ksDate, ksInterval):
			return ksTemporal
		case pair(ksDate, ksDate):
			return ksOther
		case pair(ksDate, ksOther):
			return ksDate
		}
	case "*":
		if pair(ksInterval, ksOther) || pair(ksOther, ksInterval) || pair(ksInterval, ksFloat) || pair(ksFloat, ksInterval) {
			return ksInterval
		}
	case "/":
		if pair(ksInterval, ksOther) || pair(ksInterval, ksFloat) {
			return ksInterval
		}
	}
	switch {
	case pair(ksOther, ksOther):
		if op == "^" {
			return ksOther | ksFloat // integers make a double precision
		}
		return ksOther
	case pair(ksFloat, ksFloat), pair(ksFloat, ksOther), pair(ksOther, ksFloat):
		return ksFloat
	}
	return ksAll &^ ksIntervals // Postgres refuses it; kept conservative
}

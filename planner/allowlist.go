package planner

// The functions the acceleration answers. A function not listed here goes
// to the origin: DuckDB has many functions of Postgres's names that
// answer otherwise without an error (decode(text, 'hex'), string_to_array
// with an empty delimiter, concat of non-text values, to_hex of a
// negative integer), and functions of its own that Postgres does not have
// at all, whose call Postgres refuses (list_value, epoch_ms). Each name
// below was checked against Postgres 15 for the inputs on which Postgres
// raises or answers otherwise, and those inputs are guarded (argguards.go,
// floatguard.go, divzero.go), rewritten (the rewrite's per-function rules)
// or refused (checkArgs, valueHazard). The random differential generator
// (integration/gen) draws from the same names.
var knownFuncs = map[string]bool{
	// Aggregates.
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "bool_and": true, "bool_or": true,
	"every": true, "string_agg": true, "array_agg": true, "stddev": true, "stddev_samp": true,
	"stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true, "percentile_cont": true,
	"percentile_disc": true, "mode": true,
	// Window functions.
	"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true,
	"ntile": true, "lag": true, "lead": true, "first_value": true, "last_value": true, "nth_value": true,
	// Numbers.
	"abs": true, "ceil": true, "ceiling": true, "floor": true, "round": true, "trunc": true, "sign": true,
	"sqrt": true, "cbrt": true, "exp": true, "ln": true, "log": true, "log10": true, "power": true,
	"pow": true, "mod": true, "pi": true, "degrees": true, "radians": true,
	// Text.
	"upper": true, "lower": true, "initcap": true, "length": true, "char_length": true,
	"character_length": true, "octet_length": true, "substr": true, "substring": true, "left": true,
	"right": true, "lpad": true, "rpad": true, "ltrim": true, "rtrim": true, "btrim": true, "trim": true,
	"replace": true, "reverse": true, "repeat": true, "strpos": true, "position": true, "split_part": true,
	"starts_with": true, "concat": true, "concat_ws": true, "md5": true, "translate": true, "ascii": true,
	"chr": true,
	// LIKE ... ESCAPE and SIMILAR TO as the parser writes them.
	"like_escape": true, "similar_to_escape": true,
	// Dates and times.
	"date_trunc": true, "date_part": true, "extract": true, "make_date": true, "make_time": true,
	"to_char": true, "to_date": true, "to_timestamp": true, "age": true, "justify_hours": true,
	"justify_days": true, "justify_interval": true, "isfinite": true, "timezone": true, "date": true,
	// JSON.
	"json_typeof": true, "jsonb_typeof": true, "json_array_length": true, "jsonb_array_length": true,
	// Arrays.
	"array_length": true, "cardinality": true, "array_position": true, "array_to_string": true,
	"unnest": true, "generate_series": true, "array_lower": true,
}

// unknownFunc reports whether a call of name (lower case, unqualified)
// goes to the origin because pgaccel does not know DuckDB to answer it as
// Postgres does.
func unknownFunc(name string) bool { return !knownFuncs[name] }

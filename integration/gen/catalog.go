package gen

import (
	"fmt"
	"strings"
)

// The catalogue: every operator, function and cast the generator writes,
// as data. Add a line here to make the generator try something new.
//
// A Fn's Form is SQL with $1..$n standing for its arguments; each argument
// is an expression of a type, or one of a list of literals. Aggregates
// (Agg) and window functions (windowFns) have tables of their own below.

// Fn is one operator or function.
type Fn struct {
	Form string
	Ret  Type
	Args []Arg
	// W is the weight among the entries of its result type: 0 is 1,
	// rareW a quarter.
	W int
}

// rareW marks an entry tried a quarter as often as a plain one: casts of
// arbitrary text, which mostly fail.
const rareW = -1

// Arg is an argument of a Fn: an expression of T, or one of Lits.
type Arg struct {
	T    Type
	Lits []string
}

// weight is the entry's weight in quarters.
func (f Fn) weight() int {
	if f.W == rareW {
		return 1
	}
	return 4 * max(f.W, 1)
}

// Tag names the entry in coverage counts and features.
func (f Fn) Tag() string {
	ts := make([]string, len(f.Args))
	for i, a := range f.Args {
		if a.Lits != nil {
			ts[i] = "lit"
		} else {
			ts[i] = string(a.T)
		}
	}
	return f.Form + " :" + strings.Join(ts, ",")
}

// Agg is an aggregate.
type Agg struct {
	Name string
	Args []Arg
	Ret  Type
	// Ordered: the result depends on the order of the rows (string_agg,
	// array_agg): the call gets ORDER BY its argument.
	Ordered bool
	// NoDistinct: DISTINCT makes no sense or is refused (count(*),
	// WITHIN GROUP).
	NoDistinct bool
	// WithinGroup: an ordered-set aggregate, Name(Args) WITHIN GROUP
	// (ORDER BY <value of Sort>).
	WithinGroup bool
	Sort        Type
	W           int
}

func (a Agg) weight() int { return max(a.W, 1) }

// Tag names the aggregate in features.
func (a Agg) Tag() string {
	ts := make([]string, len(a.Args))
	for i, x := range a.Args {
		ts[i] = string(x.T)
		if x.Lits != nil {
			ts[i] = "lit"
		}
	}
	if a.WithinGroup {
		return fmt.Sprintf("agg %s(%s) within group %s", a.Name, strings.Join(ts, ","), a.Sort)
	}
	return fmt.Sprintf("agg %s(%s)", a.Name, strings.Join(ts, ","))
}

func t(x Type) Arg          { return Arg{T: x} }
func lits(xs ...string) Arg { return Arg{Lits: xs} }
func fn(form string, ret Type, args ...Arg) Fn {
	return Fn{Form: form, Ret: ret, Args: args}
}
func fnw(w int, form string, ret Type, args ...Arg) Fn {
	return Fn{Form: form, Ret: ret, Args: args, W: w}
}

var numberTypes = []Type{Int2, Int4, Int8, Numeric, Float4, Float8}

// arith is the type of a op b for +, -, *, / of numbers, as Postgres
// resolves the operator: integers widen, an integer and a numeric make a
// numeric, anything with a float other than float4 op float4 is a float8.
func arith(a, b Type) Type {
	switch {
	case a == b:
		return a
	case a.isFloat() || b.isFloat():
		return Float8
	case a == Numeric || b == Numeric:
		return Numeric
	case numberRank(a) > numberRank(b):
		return a
	}
	return b
}

// Field and unit lists of the date/time functions.
var (
	extractFields = []string{"century", "day", "decade", "dow", "doy", "epoch", "hour", "isodow", "isoyear", "julian",
		"microseconds", "millennium", "milliseconds", "minute", "month", "quarter", "second", "week", "year"}
	tzFields   = []string{"timezone", "timezone_hour", "timezone_minute"}
	truncUnits = []string{"'microseconds'", "'milliseconds'", "'second'", "'minute'", "'hour'", "'day'", "'week'",
		"'month'", "'quarter'", "'year'", "'decade'", "'century'", "'millennium'"}
	zones = []string{"'UTC'", "'America/Los_Angeles'", "'Australia/Sydney'", "'Asia/Kolkata'", "'Europe/Moscow'",
		"'America/Sao_Paulo'", "'+05:30'", "'-08'", "'EST5EDT'", "'Etc/GMT+3'"}
	intervalFields = []string{"year", "month", "day", "hour", "minute", "second", "year to month", "day to hour",
		"day to minute", "day to second", "hour to minute", "hour to second", "minute to second", "second(0)",
		"day to second(3)", "minute to second(1)"}
	tsFormats = []string{"'YYYY-MM-DD HH24:MI:SS'", "'Day DD Mon YYYY'", "'IYYY-IW-ID'", "'TZ OF'", "'J'", "'FMMonth FMDD'",
		"'Q WW'", "'HH12:MI:SS.US AM'", "'YYYY-MM-DD\"T\"HH24:MI:SS.MSOF'", "'Dy, DD Mon YYYY HH24:MI:SS TZ'", "'CC BC'",
		"'SSSS'", "'YYYYMMDD'", "'tzh:tzm'"}
	numFormats = []string{"'999D99'", "'FM999999999.0000'", "'9.99EEEE'", "'S999'", "'000'", "'RN'", "'999G999G999'",
		"'MI99.9'", "'99th'"}
	smallInts = []string{"0", "1", "2", "-1", "3", "10", "-3", "NULL::int"}
	jsonKeys  = []string{"'a'", "'b'", "'k'", "'s'", "'c'", "'zz'", "''"}
	jsonIdx   = []string{"0", "1", "-1", "3", "-5"}
	jsonPaths = []string{"'{a}'", "'{b,1}'", "'{k,n,0}'", "'{}'", "'{3,c}'", "'{a,b}'", "'{-1}'"}
	likePats  = []string{"'a%'", "'%a%'", "'_'", "'%'", "''", "'A%'", `'%\%%'`, `'x\%y%'`, "'%_z'", `'back\\%'`, "'ü%'",
		"'%  '", "'a__'", "'%ß%'"}
)

// catalog is built once: every Fn by result type.
var catalog = buildCatalog()

func buildCatalog() map[Type][]Fn {
	var fs []Fn
	add := func(f ...Fn) { fs = append(fs, f...) }

	// Numbers: arithmetic of every pair of types.
	for _, a := range numberTypes {
		for _, b := range numberTypes {
			w := 1
			if a == b {
				w = 4
			}
			r := arith(a, b)
			add(fnw(w, "($1 + $2)", r, t(a), t(b)), fnw(w, "($1 - $2)", r, t(a), t(b)),
				fnw(w, "($1 * $2)", r, t(a), t(b)), fnw(w, "($1 / $2)", r, t(a), t(b)))
			if !a.isFloat() && !b.isFloat() {
				add(fnw(w, "($1 % $2)", r, t(a), t(b)), fn("mod($1, $2)", r, t(a), t(b)))
			}
		}
	}
	for _, a := range numberTypes {
		add(fnw(2, "(- $1)", a, t(a)), fn("abs($1)", a, t(a)), fn("(@ $1)", a, t(a)))
		switch {
		case a.isInt():
			add(fn("($1 & $2)", a, t(a), t(a)), fn("($1 | $2)", a, t(a), t(a)), fn("($1 # $2)", a, t(a), t(a)),
				fn("(~ $1)", a, t(a)), fn("($1 << $2)", a, t(a), lits("1", "31", "63", "-1", "64", "0")),
				fn("($1 >> $2)", a, t(a), lits("1", "31", "-1", "0")))
			if a != Int2 {
				add(fn("gcd($1, $2)", a, t(a), t(a)), fn("lcm($1, $2)", a, t(a), t(a)))
			}
			if a != Int2 {
				add(fn("to_hex($1)", Text, t(a)))
			}
		case a.isFloat():
			add(fn("sign($1)", a, t(a)))
		}
	}
	for _, a := range []Type{Float8, Numeric} {
		add(fnw(3, "($1 ^ $2)", a, t(a), t(a)), fn("power($1, $2)", a, t(a), t(a)),
			fn("ceil($1)", a, t(a)), fn("ceiling($1)", a, t(a)), fn("floor($1)", a, t(a)),
			fnw(3, "round($1)", a, t(a)), fn("trunc($1)", a, t(a)), fn("sign($1)", a, t(a)),
			fnw(2, "sqrt($1)", a, t(a)), fn("exp($1)", a, t(a)), fnw(2, "ln($1)", a, t(a)),
			fn("log($1)", a, t(a)), fn("log10($1)", a, t(a)), fn("(|/ $1)", Float8, t(Float8)))
	}
	add(fn("($1 ^ $2)", Float8, t(Int4), t(Int4)), fn("($1 ^ $2)", Numeric, t(Numeric), t(Int4)),
		fn("($1 ^ $2)", Float8, t(Float8), lits("1e200::float8", "0.5", "-1", "2", "1e-200::float8", "'NaN'::float8", "'Infinity'::float8")),
		fnw(3, "round($1, $2)", Numeric, t(Numeric), lits("0", "1", "2", "-1", "-2", "4", "10")),
		fnw(2, "trunc($1, $2)", Numeric, t(Numeric), lits("0", "1", "2", "-1", "3")),
		fn("round($1::numeric, $2)", Numeric, t(Float8), lits("0", "2")),
		fn("div($1, $2)", Numeric, t(Numeric), t(Numeric)), fn("log($1, $2)", Numeric, t(Numeric), t(Numeric)),
		fn("scale($1)", Int4, t(Numeric)), fn("min_scale($1)", Int4, t(Numeric)), fn("trim_scale($1)", Numeric, t(Numeric)),
		fn("cbrt($1)", Float8, t(Float8)), fn("(||/ $1)", Float8, t(Float8)),
		fn("sin($1)", Float8, t(Float8)), fn("cos($1)", Float8, t(Float8)), fn("tan($1)", Float8, t(Float8)),
		fn("asin($1)", Float8, t(Float8)), fn("acos($1)", Float8, t(Float8)), fn("atan($1)", Float8, t(Float8)),
		fn("atan2($1, $2)", Float8, t(Float8), t(Float8)), fn("sind($1)", Float8, t(Float8)), fn("cosd($1)", Float8, t(Float8)),
		fn("degrees($1)", Float8, t(Float8)), fn("radians($1)", Float8, t(Float8)), fn("pi()", Float8),
		fn("width_bucket($1, $2, $3, $4)", Int4, t(Float8), lits("0", "-1"), lits("10", "1e300"), lits("3", "1", "0")),
		fn("factorial($1)", Numeric, lits("0", "5", "20", "-1", "30")),
		fn("sqrt($1)", Float8, t(Int4)), fn("abs($1)", Int4, t(Int4)),
		fn("($1 / $2)", Numeric, t(Numeric), lits("3", "7", "0.3", "1e-10", "0")),
		fn("($1 / $2)", Int4, t(Int4), lits("2", "-1", "0", "7")),
		fn("($1 % $2)", Int4, t(Int4), lits("-3", "2", "0")),
	)

	// Casts between numbers (rounding, overflow) and with typmods.
	for _, a := range numberTypes {
		for _, b := range numberTypes {
			switch {
			case a == b:
			case b == Numeric:
				// The planner refuses a cast to numeric without a
				// typmod (its display scale).
				add(Fn{Form: "$1::numeric", Ret: b, Args: []Arg{t(a)}, W: rareW})
			default:
				add(fnw(2, "$1::"+string(b), b, t(a)))
			}
		}
	}
	for _, tm := range []string{"numeric(10,2)", "numeric(5)", "numeric(3,-1)", "numeric(4,6)", "numeric(38,10)", "numeric(1,0)"} {
		add(fnw(2, "$1::"+tm, Numeric, t(Numeric)), fn("$1::"+tm, Numeric, t(Float8)), fn("$1::"+tm, Numeric, t(Int4)))
	}
	add(fn("$1::int4", Int4, t(Bool)), fn("$1::bool", Bool, t(Int4)))

	// Text.
	for _, s := range []Type{Text, Varchar, Bpchar} {
		add(fn("length($1)", Int4, t(s)), fn("char_length($1)", Int4, t(s)), fn("octet_length($1)", Int4, t(s)),
			fnw(2, "upper($1)", Text, t(s)), fnw(2, "lower($1)", Text, t(s)), fn("initcap($1)", Text, t(s)),
			fnw(2, "($1 || $2)", Text, t(s), t(Text)))
	}
	add(fn("bit_length($1)", Int4, t(Text)),
		fnw(2, "substr($1, $2)", Text, t(Text), lits("0", "1", "2", "-1", "-5", "100")),
		fnw(2, "substr($1, $2, $3)", Text, t(Text), lits("0", "1", "2", "-1"), lits("0", "1", "2", "-1", "5")),
		fn("substring($1 from $2 for $3)", Text, t(Text), lits("0", "2", "-2"), lits("1", "3")),
		fn("substring($1 from $2)", Text, t(Text), lits("'a.'", "'[0-9]+'", "'^.'")),
		fn("substring($1 similar $2 escape '#')", Text, t(Text), lits("'%#\"b#\"%'", "'#\"a#\"%'")),
		fn("replace($1, $2, $3)", Text, t(Text), lits("'a'", "''", "'ü'"), lits("'X'", "''")),
		fn("left($1, $2)", Text, t(Text), lits("0", "1", "-1", "3")), fn("right($1, $2)", Text, t(Text), lits("0", "2", "-2")),
		fn("lpad($1, $2)", Text, t(Text), lits("0", "4", "-1")), fn("rpad($1, $2)", Text, t(Text), lits("0", "4")),
		fn("lpad($1, $2, $3)", Text, t(Text), lits("5", "1"), lits("'*'", "''", "'ab'")),
		fn("rpad($1, $2, $3)", Text, t(Text), lits("5", "2"), lits("'-'", "''")),
		fn("ltrim($1)", Text, t(Text)), fn("rtrim($1)", Text, t(Text)), fn("btrim($1)", Text, t(Text)),
		fn("ltrim($1, $2)", Text, t(Text), lits("'a'", "' a'")), fn("btrim($1, $2)", Text, t(Text), lits("'ab'", "' '")),
		fn("trim(both $2 from $1)", Text, t(Text), lits("'a'", "' '")), fn("trim(leading from $1)", Text, t(Text)),
		fn("trim(trailing $2 from $1)", Text, t(Text), lits("'z'", "' '")),
		fn("trim($1)", Text, t(Bpchar)), fn("rtrim($1)", Text, t(Bpchar)),
		fn("position($2 in $1)", Int4, t(Text), lits("'a'", "''", "'ü'")), fn("strpos($1, $2)", Int4, t(Text), t(Text)),
		fn("split_part($1, $2, $3)", Text, t(Text), lits("'a'", "' '", "''"), lits("1", "2", "-1", "0")),
		fn("starts_with($1, $2)", Bool, t(Text), lits("'a'", "''", "'A'")), fn("($1 ^@ $2)", Bool, t(Text), lits("'a'", "''")),
		fn("repeat($1, $2)", Text, t(Text), lits("0", "2", "-1")), fn("reverse($1)", Text, t(Text)),
		fn("md5($1)", Text, t(Text)), fn("translate($1, $2, $3)", Text, t(Text), lits("'ab'", "'ü'"), lits("'x'", "'XY'")),
		fn("concat($1, $2)", Text, t(Text), t(Int4)), fn("concat($1, $2, $3)", Text, t(Text), t(Numeric), t(Date)),
		fn("concat_ws($1, $2, $3)", Text, lits("','", "NULL", "''"), t(Text), t(Text)),
		fn("concat($1, $2)", Text, t(Text), t(Float8)), fn("concat($1, $2)", Text, t(Bool), t(Interval)),
		fn("regexp_replace($1, $2, $3)", Text, t(Text), lits("'a'", "'[a-z]+'", "'^'"), lits("'X'", "''")),
		fn("regexp_replace($1, $2, $3, $4)", Text, t(Text), lits("'a'", "'[a-z]'"), lits("'X'"), lits("'g'", "'gi'", "'i'")),
		fn("regexp_count($1, $2)", Int4, t(Text), lits("'a'", "'.'")), fn("regexp_like($1, $2)", Bool, t(Text), lits("'^a'", "'A'")),
		fn("($1 ~ $2)", Bool, t(Text), lits("'a'", "'^A'")), fn("($1 ~* $2)", Bool, t(Text), lits("'a'")),
		fn("($1 SIMILAR TO $2)", Bool, t(Text), lits("'a%'", "'%(b|c)%'")),
		fn("ascii($1)", Int4, t(Text)), fn("chr($1)", Text, lits("65", "0", "252", "1114111", "-1")),
		fn("quote_literal($1)", Text, t(Text)), fn("quote_ident($1)", Text, t(Text)), fn("quote_nullable($1)", Text, t(Text)),
		fn("to_char($1, $2)", Text, t(Numeric), lits(numFormats...)), fn("to_char($1, $2)", Text, t(Float8), lits(numFormats...)),
		fn("to_char($1, $2)", Text, t(Int4), lits(numFormats...)),
		fn("to_number($1, $2)", Numeric, lits("'12,454.8-'", "'1 2 3'", "'-34.5'"), lits("'99G999D9S'", "'999'", "'S99.9'")),
		fn("$1::text", Text, t(Text)), fn("$1::varchar(3)", Varchar, t(Text)), fn("$1::char(4)", Bpchar, t(Text)),
		fn("$1::varchar", Varchar, t(Text)), fn("$1::bpchar", Bpchar, t(Text)),
		fn("$1::text", Text, t(Bpchar)), fn("$1::varchar(2)", Varchar, t(Varchar)),
		fn("format($1, $2)", Text, lits("'%s|%L'", "'%I'"), t(Text)),
		fnw(2, "($1 COLLATE \"C\")", Text, t(Text)), fn("($1 COLLATE \"en-x-icu\")", Text, t(Text)),
		fn("($1 < $2 COLLATE \"en-x-icu\")", Bool, t(Text), t(Text)),
	)
	// Casts to text of every type (Postgres prints them its way), and
	// back from text (invalid input: 22P02, 22007, 22008).
	for _, a := range allTypes {
		if a != Text {
			add(fn("$1::text", Text, t(a)))
		}
		if a != Text && a != Bool {
			f := fn("$1::"+string(a), a, t(Text))
			f.W = rareW
			add(f)
		}
	}
	for _, s := range []Type{Text, Varchar, Bpchar} {
		for _, l := range []string{"LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"} {
			add(fnw(2, "($1 "+l+" $2)", Bool, t(s), lits(likePats...)))
		}
	}
	add(fn("($1 LIKE $2 ESCAPE '#')", Bool, t(Text), lits("'a#%'", "'#_%'", "'%##%'")),
		fn("($1 LIKE $2)", Bool, t(Text), t(Text)), fn("($1 ILIKE $2)", Bool, t(Text), t(Varchar)))

	// Dates and times.
	add(fnw(2, "($1 + $2)", Date, t(Date), t(Int4)), fn("($1 + $2)", Date, t(Int4), t(Date)), fnw(2, "($1 - $2)", Date, t(Date), t(Int4)),
		fnw(3, "($1 - $2)", Int4, t(Date), t(Date)), fnw(2, "($1 + $2)", Timestamp, t(Date), t(Interval)),
		fn("($1 - $2)", Timestamp, t(Date), t(Interval)), fn("($1 + $2)", Timestamp, t(Date), t(Time)),
		fnw(3, "($1 + $2)", Timestamp, t(Timestamp), t(Interval)), fnw(2, "($1 - $2)", Timestamp, t(Timestamp), t(Interval)),
		fnw(3, "($1 - $2)", Interval, t(Timestamp), t(Timestamp)), fnw(4, "($1 + $2)", Timestamptz, t(Timestamptz), t(Interval)),
		fnw(3, "($1 - $2)", Timestamptz, t(Timestamptz), t(Interval)), fnw(5, "($1 - $2)", Interval, t(Timestamptz), t(Timestamptz)),
		fn("($1 + $2)", Timestamptz, t(Interval), t(Timestamptz)),
		fnw(3, "($1 + $2)", Interval, t(Interval), t(Interval)), fnw(2, "($1 - $2)", Interval, t(Interval), t(Interval)),
		fn("(- $1)", Interval, t(Interval)), fnw(2, "($1 * $2)", Interval, t(Interval), t(Float8)),
		fn("($1 * $2)", Interval, t(Interval), lits("2", "0.5", "-1", "1e300", "'NaN'")), fn("($1 * $2)", Interval, t(Int4), t(Interval)),
		fn("($1 / $2)", Interval, t(Interval), t(Float8)), fn("($1 / $2)", Interval, t(Interval), lits("2", "3", "0", "0.1")),
		fn("($1 + $2)", Time, t(Time), t(Interval)), fn("($1 - $2)", Time, t(Time), t(Interval)), fn("($1 - $2)", Interval, t(Time), t(Time)),
		fn("($1 - $2)", Interval, t(Date), t(Timestamp)), fn("($1 - $2)", Interval, t(Timestamptz), t(Date)),
	)
	for _, x := range []Type{Date, Time, Timestamp, Timestamptz, Interval} {
		add(fnw(3, "extract($1 from $2)", Numeric, lits(extractFields...), t(x)),
			fnw(2, "date_part($1, $2)", Float8, lits(quoted(extractFields)...), t(x)))
	}
	add(fn("extract($1 from $2)", Numeric, lits(tzFields...), t(Timestamptz)),
		fn("date_part($1, $2)", Float8, lits(quoted(tzFields)...), t(Timestamptz)),
		fnw(3, "date_trunc($1, $2)", Timestamp, lits(truncUnits...), t(Timestamp)),
		fnw(4, "date_trunc($1, $2)", Timestamptz, lits(truncUnits...), t(Timestamptz)),
		fnw(2, "date_trunc($1, $2)", Timestamptz, lits(truncUnits...), t(Date)),
		fnw(2, "date_trunc($1, $2)", Interval, lits(truncUnits...), t(Interval)),
		fn("date_trunc($1, $2, $3)", Timestamptz, lits(truncUnits...), t(Timestamptz), lits(zones...)),
		fn("date_bin($1, $2, $3)", Timestamp, lits("'15 minutes'", "'1 day'", "'7 days'"), t(Timestamp), lits("'2000-01-01'::timestamp", "'2024-03-10 01:07'::timestamp")),
		fn("date_bin($1, $2, $3)", Timestamptz, lits("'1 hour'", "'1 day'"), t(Timestamptz), lits("'2000-01-01 00:00+00'::timestamptz")),
		fnw(2, "age($1, $2)", Interval, t(Timestamp), t(Timestamp)), fnw(2, "age($1, $2)", Interval, t(Timestamptz), t(Timestamptz)),
		fn("age($1)", Interval, t(Timestamp)),
		fn("make_date($1, $2, $3)", Date, lits("2024", "-44", "0", "1"), lits("2", "13", "1"), lits("29", "30", "1")),
		fn("make_time($1, $2, $3)", Time, lits("0", "23", "24"), lits("59", "0"), lits("59.999999", "0", "60")),
		fn("make_timestamp($1, $2, $3, $4, $5, $6)", Timestamp, lits("2024", "-1"), lits("3"), lits("10"), lits("2"), lits("30"), lits("0", "59.5")),
		fnw(2, "make_timestamptz($1, $2, $3, $4, $5, $6)", Timestamptz, lits("2024"), lits("3", "11"), lits("10", "3"), lits("2", "1"), lits("30"), lits("0")),
		fn("make_timestamptz($1, $2, $3, $4, $5, $6, $7)", Timestamptz, lits("2024"), lits("3", "11"), lits("10", "3"), lits("2", "1"), lits("30"), lits("0"), lits(zones...)),
		fn("make_interval($1, $2, $3, $4, $5, $6, $7)", Interval, lits("0", "1", "-1"), lits("0", "13"), lits("0", "2"), lits("0", "-40"), lits("0", "25"), lits("0", "61"), lits("0", "1.5", "-0.000001")),
		fn("make_interval(days => $1)", Interval, t(Int4)), fn("make_interval(secs => $1)", Interval, t(Float8)),
		fnw(2, "justify_days($1)", Interval, t(Interval)), fnw(2, "justify_hours($1)", Interval, t(Interval)),
		fnw(2, "justify_interval($1)", Interval, t(Interval)),
		fnw(2, "to_timestamp($1)", Timestamptz, t(Float8)), fn("to_timestamp($1)", Timestamptz, t(Int4)),
		fn("to_timestamp($1, $2)", Timestamptz, lits("'2024-03-10 02:30:00'", "'2024-11-03 01:30'"), lits("'YYYY-MM-DD HH24:MI:SS'", "'YYYY-MM-DD HH24:MI'")),
		fn("to_date($1, $2)", Date, lits("'2024-03-10'", "'20240229'", "'2023-02-29'"), lits("'YYYY-MM-DD'", "'YYYYMMDD'")),
		fnw(3, "to_char($1, $2)", Text, t(Timestamptz), lits(tsFormats...)), fn("to_char($1, $2)", Text, t(Timestamp), lits(tsFormats...)),
		fn("to_char($1, $2)", Text, t(Date), lits(tsFormats...)), fn("to_char($1, $2)", Text, t(Interval), lits("'HH24:MI:SS'", "'DD \"days\" HH24'", "'YYYY MM'")),
		fn("isfinite($1)", Bool, t(Date)), fn("isfinite($1)", Bool, t(Timestamptz)), fn("isfinite($1)", Bool, t(Interval)),
		fnw(3, "($1 AT TIME ZONE $2)", Timestamp, t(Timestamptz), lits(zones...)),
		fnw(3, "($1 AT TIME ZONE $2)", Timestamptz, t(Timestamp), lits(zones...)),
		fn("timezone($2, $1)", Timestamp, t(Timestamptz), lits(zones...)),
		fn("(($1, $2) OVERLAPS ($3, $4))", Bool, t(Date), t(Date), t(Date), t(Interval)),
		fn("(($1, $2) OVERLAPS ($3, $4))", Bool, t(Timestamptz), t(Interval), t(Timestamptz), t(Timestamptz)),
	)
	// Date/time casts: the session's TimeZone in most, typmods in some.
	for _, c := range []struct{ from, to Type }{
		{Timestamptz, Date}, {Timestamptz, Timestamp}, {Timestamptz, Time}, {Timestamp, Date}, {Timestamp, Timestamptz},
		{Timestamp, Time}, {Date, Timestamp}, {Date, Timestamptz}, {Interval, Time}, {Time, Interval},
	} {
		add(fnw(2, "$1::"+string(c.to), c.to, t(c.from)))
	}
	for _, f := range intervalFields {
		add(fnw(2, "$1::interval "+f, Interval, t(Interval)))
	}
	add(fn("$1::interval(0)", Interval, t(Interval)), fn("$1::interval(3)", Interval, t(Interval)),
		fnw(2, "$1::timestamp(0)", Timestamp, t(Timestamp)), fn("$1::timestamp(3)", Timestamp, t(Timestamptz)),
		fnw(2, "$1::timestamptz(0)", Timestamptz, t(Timestamptz)), fn("$1::timestamptz(2)", Timestamptz, t(Timestamp)),
		fn("$1::time(0)", Time, t(Time)), fn("$1::time(1)", Time, t(Timestamp)),
		fn("$1::interval", Interval, lits("'1 year 2 months 3 days'", "'P1Y2M3DT4H5M6S'", "'1-2'", "'3 4:05:06'", "'-1 day +2:03'", "'@ 1 hour ago'", "'1 week'", "'0.5 months'")),
		fn("$1::timestamptz", Timestamptz, lits("'2024-03-10 02:30:00'", "'2024-11-03 01:30:00'", "'2024-03-10 02:30:00 America/Los_Angeles'", "'1900-01-01 00:00'", "'2024-04-07 02:30:00'", "'epoch'", "'J2451545'")),
		fn("$1::date", Date, lits("'03/10/2024'", "'10/03/2024'", "'2024-03-10'", "'March 10, 2024'", "'10.03.2024'", "'epoch'")),
	)

	// Booleans.
	add(fnw(3, "($1 AND $2)", Bool, t(Bool), t(Bool)), fnw(3, "($1 OR $2)", Bool, t(Bool), t(Bool)), fnw(2, "(NOT $1)", Bool, t(Bool)),
		fn("($1 IS TRUE)", Bool, t(Bool)), fn("($1 IS NOT TRUE)", Bool, t(Bool)), fn("($1 IS FALSE)", Bool, t(Bool)),
		fn("($1 IS UNKNOWN)", Bool, t(Bool)))
	// Comparisons of every orderable type, and across types.
	for _, a := range allTypes {
		if a == JSON {
			add(fn("($1 IS NULL)", Bool, t(a)))
			continue
		}
		w := 2
		add(fnw(w, "($1 = $2)", Bool, t(a), t(a)), fnw(w, "($1 < $2)", Bool, t(a), t(a)), fn("($1 <> $2)", Bool, t(a), t(a)),
			fn("($1 >= $2)", Bool, t(a), t(a)), fn("($1 IS DISTINCT FROM $2)", Bool, t(a), t(a)),
			fn("($1 IS NOT DISTINCT FROM $2)", Bool, t(a), t(a)), fnw(2, "($1 IS NULL)", Bool, t(a)), fn("($1 IS NOT NULL)", Bool, t(a)),
			fn("($1 BETWEEN $2 AND $3)", Bool, t(a), t(a), t(a)), fn("($1 NOT BETWEEN SYMMETRIC $2 AND $3)", Bool, t(a), t(a), t(a)),
			fn("($1 IN ($2, $3))", Bool, t(a), t(a), t(a)), fn("($1 NOT IN ($2, $3))", Bool, t(a), t(a), t(a)))
	}
	for _, p := range [][2]Type{{Int4, Numeric}, {Int4, Float8}, {Numeric, Float8}, {Int8, Numeric}, {Float4, Float8},
		{Int2, Int8}, {Date, Timestamp}, {Date, Timestamptz}, {Timestamp, Timestamptz}, {Text, Bpchar}, {Varchar, Bpchar},
		{Text, Varchar}, {Float4, Numeric}} {
		add(fn("($1 = $2)", Bool, t(p[0]), t(p[1])), fn("($1 < $2)", Bool, t(p[0]), t(p[1])),
			fn("($1 >= $2)", Bool, t(p[1]), t(p[0])))
	}
	add(fn("(($1, $2) < ($3, $4))", Bool, t(Int4), t(Text), t(Int4), t(Text)),
		fn("(($1, $2) = ($3, $4))", Bool, t(Numeric), t(Date), t(Numeric), t(Date)),
		fn("(($1, $2) IS DISTINCT FROM ($3, $4))", Bool, t(Int4), t(Text), t(Int4), t(Text)),
		fn("(ROW($1, $2) IS NULL)", Bool, t(Int4), t(Text)))

	// UUIDs and bytea.
	add(fn("($1 || $2)", Bytea, t(Bytea), t(Bytea)), fn("length($1)", Int4, t(Bytea)), fn("octet_length($1)", Int4, t(Bytea)),
		fn("substring($1 from $2 for $3)", Bytea, t(Bytea), lits("1", "2", "0"), lits("1", "2")),
		fn("substr($1, $2)", Bytea, t(Bytea), lits("1", "2", "-1")),
		fnw(2, "encode($1, $2)", Text, t(Bytea), lits("'hex'", "'base64'", "'escape'")),
		fn("decode($1, $2)", Bytea, lits("'deadbeef'", "'3q2+7w=='", `'a\\b'`), lits("'hex'", "'base64'", "'escape'")),
		fn("md5($1)", Text, t(Bytea)), fn("sha256($1)", Bytea, t(Bytea)), fn("get_byte($1, $2)", Int4, t(Bytea), lits("0", "1", "3")),
		fn("position($2 in $1)", Int4, t(Bytea), lits(`'\x00'::bytea`, `'\xbe'::bytea`)),
		fn("convert_from($1, 'UTF8')", Text, t(Bytea)), fn("convert_to($1, 'UTF8')", Bytea, t(Text)),
		fn("btrim($1, $2)", Bytea, t(Bytea), lits(`'\x00'::bytea`, `'\xde'::bytea`)),
		fn("bit_length($1)", Int4, t(Bytea)))

	// json and jsonb.
	for _, j := range []Type{JSON, JSONB} {
		add(fnw(3, "($1 -> $2)", j, t(j), lits(jsonKeys...)), fnw(2, "($1 -> $2)", j, t(j), lits(jsonIdx...)),
			fnw(3, "($1 ->> $2)", Text, t(j), lits(jsonKeys...)), fn("($1 ->> $2)", Text, t(j), lits(jsonIdx...)),
			fnw(2, "($1 #> $2)", j, t(j), lits(jsonPaths...)), fnw(2, "($1 #>> $2)", Text, t(j), lits(jsonPaths...)),
			fn(string(j)+"_typeof($1)", Text, t(j)), fn(string(j)+"_array_length($1)", Int4, t(j)),
			fn(string(j)+"_extract_path($1, $2)", j, t(j), lits(jsonKeys...)),
			fn(string(j)+"_extract_path_text($1, $2, $3)", Text, t(j), lits(jsonKeys...), lits("'n'", "'0'", "'c'")),
			fn(string(j)+"_build_object($1, $2)", j, lits(jsonKeys...), t(Int4)),
			fn(string(j)+"_build_object($1, $2, 'n', $3)", j, lits(jsonKeys...), t(Text), t(Numeric)),
			fn(string(j)+"_build_array($1, $2)", j, t(Float8), t(Timestamptz)),
			fn(string(j)+"_build_array($1, $2)", j, t(Bool), t(Date)),
			fn("to_"+string(j)+"($1)", j, t(Numeric)), fn("to_"+string(j)+"($1)", j, t(Timestamptz)),
			fn("to_"+string(j)+"($1)", j, t(Float8)), fn("to_"+string(j)+"($1)", j, t(Text)),
			fn("to_"+string(j)+"($1)", j, t(Int4Arr)), fn("to_"+string(j)+"($1)", j, t(Interval)),
			fn(string(j)+"_strip_nulls($1)", j, t(j)))
	}
	add(fn("($1 ? $2)", Bool, t(JSONB), lits(jsonKeys...)), fn("($1 ?| $2)", Bool, t(JSONB), lits("'{a,b}'", "'{}'")),
		fn("($1 ?& $2)", Bool, t(JSONB), lits("'{a,b}'", "'{}'")),
		fnw(2, "($1 @> $2)", Bool, t(JSONB), lits(`'{"a": 1}'`, `'[1]'`, `'{}'`, `'1'`, `'{"b": [1]}'`)),
		fn("($1 <@ $2)", Bool, lits(`'{"a": 1}'`, `'[]'`), t(JSONB)),
		fn("($1 || $2)", JSONB, t(JSONB), t(JSONB)), fn("($1 - $2)", JSONB, t(JSONB), lits(jsonKeys...)),
		fn("($1 - $2)", JSONB, t(JSONB), lits("0", "-1")), fn("($1 #- $2)", JSONB, t(JSONB), lits(jsonPaths...)),
		fn("jsonb_set($1, $2, $3)", JSONB, t(JSONB), lits(jsonPaths...), lits(`'1'`, `'"x"'`, `'null'`)),
		fn("jsonb_insert($1, $2, $3)", JSONB, t(JSONB), lits("'{b,0}'", "'{0}'"), lits(`'0'`)),
		fn("jsonb_pretty($1)", Text, t(JSONB)), fn("jsonb_path_exists($1, $2)", Bool, t(JSONB), lits("'$.a'", "'$[*] ? (@ > 1)'", "'$.**'")),
		fn("jsonb_path_query_first($1, $2)", JSONB, t(JSONB), lits("'$.a'", "'$[1]'", "'$.k.n[0]'")),
		fn("$1::jsonb", JSONB, t(JSON)), fn("$1::json", JSON, t(JSONB)), fnw(2, "($1 -> $2)::int4", Int4, t(JSONB), lits("'a'", "0")),
		fn("($1 -> $2)::numeric", Numeric, t(JSONB), lits("'a'", "0")), fn("($1 -> $2)::float8", Float8, t(JSONB), lits("'a'")),
		fn("($1 -> $2)::bool", Bool, t(JSONB), lits("'a'", "2")), fn("($1 ->> $2)::int4", Int4, t(JSON), lits("'a'", "0")),
		fn("($1 = $2)", Bool, t(JSONB), lits(`'{"a": 1, "b": [1, 2]}'`, `'1.5'`)),
	)

	// Arrays.
	for _, a := range []Type{Int4Arr, TextArr, NumericArr, Float8Arr} {
		e, _ := a.elem()
		add(fnw(3, "($1)[$2]", e, t(a), lits("1", "2", "0", "-1", "3")), fn("($1)[$2:$3]", a, t(a), lits("1", "2", "0"), lits("2", "1", "5")),
			fn("($1)[:$2]", a, t(a), lits("1", "0")), fn("array_length($1, 1)", Int4, t(a)), fn("cardinality($1)", Int4, t(a)),
			fn("array_upper($1, 1)", Int4, t(a)), fn("array_lower($1, 1)", Int4, t(a)), fn("array_ndims($1)", Int4, t(a)),
			fn("array_dims($1)", Text, t(a)), fn("array_position($1, $2)", Int4, t(a), t(e)),
			fn("array_positions($1, $2)", Int4Arr, t(a), t(e)), fn("array_append($1, $2)", a, t(a), t(e)),
			fn("array_prepend($1, $2)", a, t(e), t(a)), fn("array_cat($1, $2)", a, t(a), t(a)), fnw(2, "($1 || $2)", a, t(a), t(a)),
			fn("($1 || $2)", a, t(a), t(e)), fn("array_remove($1, $2)", a, t(a), t(e)),
			fn("array_replace($1, $2, $3)", a, t(a), t(e), t(e)), fnw(2, "array_to_string($1, $2)", Text, t(a), lits("','", "''")),
			fn("array_to_string($1, $2, $3)", Text, t(a), lits("','"), lits("'*'", "''")),
			fnw(3, "($1 = ANY($2))", Bool, t(e), t(a)), fn("($1 <> ALL($2))", Bool, t(e), t(a)), fn("($1 < ANY($2))", Bool, t(e), t(a)),
			fn("($1 @> $2)", Bool, t(a), t(a)), fn("($1 <@ $2)", Bool, t(a), t(a)), fn("($1 && $2)", Bool, t(a), t(a)),
			fn("ARRAY[$1, $2]", a, t(e), t(e)), fn("trim_array($1, $2)", a, t(a), lits("0", "1", "5")))
	}
	add(fn("string_to_array($1, $2)", TextArr, t(Text), lits("','", "''", "NULL", "' '")),
		fn("string_to_array($1, $2, $3)", TextArr, t(Text), lits("','"), lits("'a'", "''")),
		fn("($1 = ANY($2))", Bool, t(Int4), lits("'{1,2,NULL}'::int[]", "ARRAY[1, 42]", "'{}'::int[]")),
		fn("($1 = ANY($2))", Bool, t(Text), lits("'{a,b}'::text[]", "ARRAY['A', NULL]")),
		fn("($1 IN (SELECT unnest($2)))", Bool, t(Int4), lits("'{1,2}'::int[]")),
		fn("$1::text[]", TextArr, t(Int4Arr)), fn("$1::numeric(4,1)[]", NumericArr, t(NumericArr)))

	// UUIDs.
	add(fn("$1::uuid", UUID, lits("'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "'{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}'", "'a0eebc999c0b4ef8bb6d6bb9bd380a11'")))

	out := map[Type][]Fn{}
	for _, f := range fs {
		for _, name := range duckDBLacks {
			if strings.Contains(f.Form, name) {
				f.W = rareW
			}
		}
		out[f.Ret] = append(out[f.Ret], f)
	}
	return out
}

// duckDBLacks are functions and operators DuckDB does not have: a
// statement using one falls back to the origin, which the generator needs
// to see now and then, not often.
var duckDBLacks = []string{"array_positions", "trim_array", "array_upper", "array_lower", "array_ndims", "array_dims",
	"array_replace", "array_remove", "to_jsonb", "to_json(", "jsonb_pretty", "json_build_array", "jsonb_build_array",
	"jsonb_build_object", "json_build_object", "date_bin", "OVERLAPS", "min_scale", "make_interval", "strip_nulls",
	"convert_to", "convert_from", "(|/", "(||/", "width_bucket", "to_number", "quote_ident", "quote_literal",
	"quote_nullable", "to_date", "jsonb_set", "jsonb_insert", "jsonb_path", "extract_path", "(#-", "?|", "?&",
	"factorial", "sind", "cosd", "regexp_count", "regexp_like", "SIMILAR", "similar", "(^@", "get_byte", "sha256",
	"bit_length", "lcm", "gcd", "trim_scale", "scale(", "div(", "justify_", "age(", "make_time(", "timezone(",
	"FETCH", "$1::uuid", "log($1, $2)", "(@ ", "(# ", "(~ ", "ARRAY[$1, $2]"}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "'" + x + "'"
	}
	return out
}

// aggregates are the aggregates the generator calls.
var aggregates = buildAggregates()

func buildAggregates() []Agg {
	var as []Agg
	add := func(a ...Agg) { as = append(as, a...) }
	agg := func(name string, ret Type, args ...Arg) Agg { return Agg{Name: name, Args: args, Ret: ret} }
	for _, x := range numberTypes {
		sum := map[Type]Type{Int2: Int8, Int4: Int8, Int8: Numeric, Numeric: Numeric, Float4: Float4, Float8: Float8}[x]
		avg := Numeric
		if x.isFloat() {
			avg = Float8
		}
		add(Agg{Name: "sum", Args: []Arg{t(x)}, Ret: sum, W: 4}, Agg{Name: "avg", Args: []Arg{t(x)}, Ret: avg, W: 4},
			Agg{Name: "min", Args: []Arg{t(x)}, Ret: x, W: 2}, Agg{Name: "max", Args: []Arg{t(x)}, Ret: x, W: 2},
			agg("stddev", avg, t(x)), agg("var_pop", avg, t(x)), agg("variance", avg, t(x)), agg("stddev_pop", avg, t(x)))
		if x.isInt() {
			add(agg("bit_and", x, t(x)), agg("bit_or", x, t(x)))
		}
	}
	for _, x := range []Type{Text, Varchar, Bpchar, Date, Time, Timestamp, Timestamptz, Interval, Int4Arr, TextArr} {
		add(agg("min", x, t(x)), agg("max", x, t(x)))
	}
	for _, x := range allTypes {
		add(Agg{Name: "count", Args: []Arg{t(x)}, Ret: Int8, W: 2})
	}
	add(Agg{Name: "count", Ret: Int8, NoDistinct: true, W: 4}, // count(*)
		Agg{Name: "sum", Args: []Arg{t(Interval)}, Ret: Interval, W: 2}, Agg{Name: "avg", Args: []Arg{t(Interval)}, Ret: Interval, W: 2},
		agg("bool_and", Bool, t(Bool)), agg("bool_or", Bool, t(Bool)), agg("every", Bool, t(Bool)),
		Agg{Name: "string_agg", Args: []Arg{t(Text), lits("','", "''", "NULL")}, Ret: Text, Ordered: true, W: 3},
		Agg{Name: "string_agg", Args: []Arg{t(Bytea), lits(`'\x2c'::bytea`)}, Ret: Bytea, Ordered: true},
		Agg{Name: "array_agg", Args: []Arg{t(Int4)}, Ret: Int4Arr, Ordered: true, W: 2},
		Agg{Name: "array_agg", Args: []Arg{t(Text)}, Ret: TextArr, Ordered: true},
		Agg{Name: "array_agg", Args: []Arg{t(Numeric)}, Ret: NumericArr, Ordered: true},
		Agg{Name: "json_agg", Args: []Arg{t(Timestamptz)}, Ret: JSON, Ordered: true},
		Agg{Name: "jsonb_agg", Args: []Arg{t(Numeric)}, Ret: JSONB, Ordered: true},
		Agg{Name: "jsonb_agg", Args: []Arg{t(Text)}, Ret: JSONB, Ordered: true},
		Agg{Name: "jsonb_object_agg", Args: []Arg{t(Text), t(Int4)}, Ret: JSONB, Ordered: true, NoDistinct: true},
		Agg{Name: "percentile_cont", Args: []Arg{lits("0.5", "0.25", "0", "1")}, Ret: Float8, WithinGroup: true, Sort: Float8, NoDistinct: true},
		Agg{Name: "percentile_cont", Args: []Arg{lits("0.5", "0.1")}, Ret: Float8, WithinGroup: true, Sort: Int4, NoDistinct: true},
		Agg{Name: "percentile_cont", Args: []Arg{lits("0.5", "0.75")}, Ret: Interval, WithinGroup: true, Sort: Interval, NoDistinct: true},
		Agg{Name: "percentile_disc", Args: []Arg{lits("0.5", "0.3", "1")}, Ret: Numeric, WithinGroup: true, Sort: Numeric, NoDistinct: true},
		Agg{Name: "percentile_disc", Args: []Arg{lits("0.5")}, Ret: Timestamptz, WithinGroup: true, Sort: Timestamptz, NoDistinct: true},
		Agg{Name: "mode", Ret: Text, WithinGroup: true, Sort: Text, NoDistinct: true},
		Agg{Name: "mode", Ret: Int4, WithinGroup: true, Sort: Int4, NoDistinct: true},
		agg("corr", Float8, t(Float8), t(Float8)), agg("regr_slope", Float8, t(Int4), t(Int4)), agg("covar_pop", Float8, t(Float8), t(Int8)),
	)
	return as
}

// windowFns are the window-only functions; ordered ones need a total
// order of the window's rows to be deterministic. Args as in Fn; $T is
// the result type's argument.
type windowFn struct {
	Form string
	// Value: the function returns the type of its first argument (lag,
	// first_value ...), else Ret.
	Value   bool
	Ret     Type
	Ordered bool
	W       int
}

var windowFns = []windowFn{
	{Form: "row_number()", Ret: Int8, Ordered: true, W: 3},
	{Form: "rank()", Ret: Int8, W: 2},
	{Form: "dense_rank()", Ret: Int8, W: 2},
	{Form: "percent_rank()", Ret: Float8},
	{Form: "cume_dist()", Ret: Float8},
	{Form: "ntile($n)", Ret: Int4, Ordered: true},
	{Form: "lag($v)", Value: true, Ordered: true, W: 2},
	{Form: "lead($v, $n)", Value: true, Ordered: true, W: 2},
	{Form: "lag($v, $n, $d)", Value: true, Ordered: true, W: 4},
	{Form: "lead($v, $n, $d)", Value: true, Ordered: true, W: 4},
	{Form: "first_value($v)", Value: true, Ordered: true, W: 2},
	{Form: "last_value($v)", Value: true, Ordered: true, W: 2},
	{Form: "nth_value($v, $n)", Value: true, Ordered: true, W: 3},
}

// windowInts are the literal counts and offsets of window functions.
var windowInts = []string{"1", "2", "0", "-1", "3", "100", "NULL"}

// frames are window frames (with the window's ORDER BY); %s is a small
// offset.
var frames = []string{
	"", "", "",
	"ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
	"ROWS BETWEEN %s PRECEDING AND %s FOLLOWING",
	"ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
	"ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
	"RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
	"RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
	"GROUPS BETWEEN %s PRECEDING AND CURRENT ROW",
	"ROWS BETWEEN %s PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW",
	"RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES",
	"GROUPS BETWEEN CURRENT ROW AND %s FOLLOWING EXCLUDE GROUP",
	"ROWS %s PRECEDING",
}

var frameOffsets = []string{"1", "2", "0", "1", "-1"}

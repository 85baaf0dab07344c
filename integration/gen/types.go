package gen

// Type is a Postgres type as the generator tracks it: its name as a cast
// writes it. Typmods are not tracked (a numeric(12,2) column is Numeric).
type Type string

// The types the generator builds expressions of.
const (
	Int2        Type = "int2"
	Int4        Type = "int4"
	Int8        Type = "int8"
	Float4      Type = "float4"
	Float8      Type = "float8"
	Numeric     Type = "numeric"
	Text        Type = "text"
	Varchar     Type = "varchar"
	Bpchar      Type = "bpchar"
	Bool        Type = "bool"
	Date        Type = "date"
	Time        Type = "time"
	Timestamp   Type = "timestamp"
	Timestamptz Type = "timestamptz"
	Interval    Type = "interval"
	UUID        Type = "uuid"
	JSON        Type = "json"
	JSONB       Type = "jsonb"
	Bytea       Type = "bytea"
	Int4Arr     Type = "int4[]"
	TextArr     Type = "text[]"
	NumericArr  Type = "numeric[]"
	Float8Arr   Type = "float8[]"
)

// allTypes are the types expressions are asked for, in a fixed order (the
// generator's choices must not depend on map order).
var allTypes = []Type{Int2, Int4, Int8, Float4, Float8, Numeric, Text, Varchar, Bpchar, Bool, Date, Time,
	Timestamp, Timestamptz, Interval, UUID, JSON, JSONB, Bytea, Int4Arr, TextArr, NumericArr, Float8Arr}

// outputTypes are the types a statement's output columns are drawn from,
// with weights: the common ones more often.
var outputTypes = weighted[Type]{
	{Int4, 8}, {Int8, 5}, {Int2, 2}, {Float8, 5}, {Float4, 2}, {Numeric, 9}, {Text, 8}, {Varchar, 2}, {Bpchar, 2},
	{Bool, 4}, {Date, 4}, {Time, 2}, {Timestamp, 4}, {Timestamptz, 6}, {Interval, 5}, {UUID, 1}, {JSON, 2},
	{JSONB, 3}, {Bytea, 2}, {Int4Arr, 2}, {TextArr, 2}, {NumericArr, 1}, {Float8Arr, 1},
}

// castName is how a cast to t is written: numerics with a typmod, since
// the planner refuses a cast to numeric without one (its display scale
// is the value's).
func (t Type) castName() string {
	switch t {
	case Numeric:
		return "numeric(20,4)"
	case NumericArr:
		return "numeric(8,2)[]"
	}
	return string(t)
}

// OID is the type's pg_type OID.
func (t Type) OID() uint32 {
	return typeOIDs[t]
}

var typeOIDs = map[Type]uint32{
	Int2: 21, Int4: 23, Int8: 20, Float4: 700, Float8: 701, Numeric: 1700, Text: 25, Varchar: 1043,
	Bpchar: 1042, Bool: 16, Date: 1082, Time: 1083, Timestamp: 1114, Timestamptz: 1184, Interval: 1186,
	UUID: 2950, JSON: 114, JSONB: 3802, Bytea: 17, Int4Arr: 1007, TextArr: 1009, NumericArr: 1231, Float8Arr: 1022,
}

func (t Type) isInt() bool   { return t == Int2 || t == Int4 || t == Int8 }
func (t Type) isFloat() bool { return t == Float4 || t == Float8 }

// isNumber: integers, floats and numeric.
func (t Type) isNumber() bool { return t.isInt() || t.isFloat() || t == Numeric }

// isString: text, varchar and char(n).
func (t Type) isString() bool { return t == Text || t == Varchar || t == Bpchar }

// elem is an array type's element type (ok=false for other types).
func (t Type) elem() (Type, bool) {
	switch t {
	case Int4Arr:
		return Int4, true
	case TextArr:
		return Text, true
	case NumericArr:
		return Numeric, true
	case Float8Arr:
		return Float8, true
	}
	return "", false
}

// arrayOf is the array type of t, if the generator has one.
func arrayOf(t Type) (Type, bool) {
	switch t {
	case Int4:
		return Int4Arr, true
	case Text:
		return TextArr, true
	case Numeric:
		return NumericArr, true
	case Float8:
		return Float8Arr, true
	}
	return "", false
}

// orderable: Postgres has a btree ordering for t (ORDER BY, DISTINCT,
// GROUP BY, UNION, min/max work). json has none.
func (t Type) orderable() bool { return t != JSON }

// numberRank orders the numeric types by Postgres's implicit casts: a
// value of a lower rank is cast implicitly to a higher one.
func numberRank(t Type) int {
	switch t {
	case Int2:
		return 1
	case Int4:
		return 2
	case Int8:
		return 3
	case Numeric:
		return 4
	case Float4:
		return 5
	case Float8:
		return 6
	}
	return 0
}

// implicitInto lists the types whose values Postgres casts implicitly to t
// when t is the common type (CASE, COALESCE, UNION, GREATEST, lag's
// default): the mixed-type operands the generator tries.
func implicitInto(t Type) []Type {
	switch {
	case t.isNumber():
		var out []Type
		for _, u := range []Type{Int2, Int4, Int8, Numeric, Float4, Float8} {
			if numberRank(u) <= numberRank(t) {
				out = append(out, u)
			}
		}
		return out
	case t == Text:
		return []Type{Text, Varchar, Bpchar}
	case t == Varchar:
		return []Type{Varchar}
	case t == Timestamptz:
		return []Type{Date, Timestamp, Timestamptz}
	case t == Timestamp:
		return []Type{Date, Timestamp}
	}
	return []Type{t}
}

// edgeValues are the constants of each type the generator writes: the
// edges of its range, the values its rules treat specially, and ordinary
// ones. Each is an SQL expression of exactly that type (cast where a bare
// literal would be another type); untypedEdge has bare literals.
var edgeValues = map[Type][]string{
	Int2: {"0::int2", "(-1)::int2", "1::int2", "(-32768)::int2", "32767::int2", "7::int2", "2::int2"},
	Int4: {"0", "-1", "1", "2", "3", "7", "42", "-2147483648", "2147483647", "100", "-7", "10"},
	Int8: {"0::int8", "(-1)::int8", "(-9223372036854775808)::int8", "9223372036854775807::int8", "1000000000000::int8", "3::int8"},
	Float4: {"'0'::float4", "'-0'::float4", "'1.5'::float4", "'3.4e38'::float4", "'-3.4e38'::float4", "'1e-45'::float4",
		"'Infinity'::float4", "'-Infinity'::float4", "'NaN'::float4", "'0.1'::float4", "'2.5'::float4"},
	Float8: {"0::float8", "'-0'::float8", "0.5::float8", "1.5::float8", "2.5::float8", "-2.5::float8", "1e200::float8", "1e-200::float8",
		"'1.7976931348623157e308'::float8", "'5e-324'::float8", "'Infinity'::float8", "'-Infinity'::float8",
		"'NaN'::float8", "0.1::float8", "1e15::float8", "3::float8"},
	Numeric: {"0.0", "1.5", "-2.5", "0.0001", "-0.0001", "123.4560", "1e-20", "99999999999999999999.99",
		"0.5", "2.50", "3.0", "-1.0", "1e20", "0.000", "'NaN'::numeric", "'Infinity'::numeric", "0::numeric"},
	Text: {"''::text", "'a'::text", "'A'::text", "'abc'::text", "'ABC'::text", "'a  '::text", "' a'::text", "'ü'::text",
		"'Ünïcödé ✓'::text", "'日本語'::text", "'x%y_z'::text", `'back\slash'::text`, "'it''s'::text", "'NULL'::text", "'42'::text",
		"'2024-03-10'::text", "'{\"a\": 1}'::text", "E'tab\\there'::text", "'ß'::text", "'İ'::text"},
	Varchar: {"''::varchar", "'a'::varchar", "'B'::varchar", "'a  '::varchar", "'ÿ'::varchar(3)", "'abcdef'::varchar(4)"},
	Bpchar:  {"'a'::char(3)", "''::char(2)", "'ab'::char(5)", "'x  '::bpchar", "'Z'::char"},
	Bool:    {"true", "false", "NULL::bool"},
	Date: {"'2024-03-10'::date", "'2024-11-03'::date", "'2000-02-29'::date", "'1970-01-01'::date", "'infinity'::date",
		"'-infinity'::date", "'0044-03-15 BC'::date", "'9999-12-31'::date", "'2024-04-07'::date"},
	Time: {"'00:00:00'::time", "'23:59:59.999999'::time", "'12:34:56.5'::time", "'02:30:00'::time"},
	Timestamp: {"'2024-03-10 02:30:00'::timestamp", "'2024-11-03 01:30:00'::timestamp", "'2000-02-29 23:59:59.999999'::timestamp",
		"'infinity'::timestamp", "'-infinity'::timestamp", "'1900-01-01 00:00:00'::timestamp", "'1970-01-01 00:00:00'::timestamp",
		"'2024-04-07 02:30:00'::timestamp", "'0001-01-01 00:00:00 BC'::timestamp"},
	Timestamptz: {"'2024-03-10 10:00:00+00'::timestamptz", "'2024-11-03 08:30:00+00'::timestamptz", "'2024-03-09 12:00:00+00'::timestamptz",
		"'infinity'::timestamptz", "'-infinity'::timestamptz", "'1919-07-01 00:00:00+00'::timestamptz", "'1900-01-01 00:00:00+00'::timestamptz",
		"'2000-01-01 00:00:00+00'::timestamptz", "'2024-04-06 16:00:00+00'::timestamptz", "'2018-11-04 03:00:00+00'::timestamptz"},
	Interval: {"'1 year 2 mons 3 days 04:05:06.789'::interval", "'-1 year'::interval", "'30 days'::interval", "'1 mon'::interval",
		"'24:00:00'::interval", "'-00:00:00.000001'::interval", "'1 day -1 hour'::interval", "'178000000 years'::interval",
		"'0'::interval", "'1 mon -1 days'::interval", "'1.5 days'::interval", "'-3 days 04:00:00'::interval", "'1 hour'::interval"},
	UUID: {"'00000000-0000-0000-0000-000000000000'::uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid"},
	JSON: {`'{"a": 1, "b": [1, 2]}'::json`, `'[]'::json`, `'{"a":"x","a":"y"}'::json`, `'null'::json`, `'"s"'::json`, `'1.50'::json`,
		`'[1, "2", null, {"c": 3}]'::json`},
	JSONB: {`'{"a": 1, "b": [1, 2]}'::jsonb`, `'[]'::jsonb`, `'{"b": 2, "a": 1}'::jsonb`, `'null'::jsonb`, `'"s"'::jsonb`, `'1.50'::jsonb`,
		`'[1, "2", null, {"c": 3}]'::jsonb`, `'{"a": {"b": [true, null]}}'::jsonb`},
	Bytea:      {`'\x'::bytea`, `'\x00'::bytea`, `'\xdeadbeef'::bytea`, `'\x5c27'::bytea`, `'abc'::bytea`},
	Int4Arr:    {"'{1,2,3}'::int4[]", "'{}'::int4[]", "'{NULL,1}'::int4[]", "ARRAY[1, 2]", "ARRAY[-2147483648, 2147483647]"},
	TextArr:    {"'{a,b}'::text[]", "'{}'::text[]", `'{"with space",NULL,"NULL",""}'::text[]`, "ARRAY['x', 'y']"},
	NumericArr: {"ARRAY[1.50, 2.25]", "'{}'::numeric(8,2)[]", "ARRAY[1.5, 2]", "'{NULL,0.001}'::numeric(8,3)[]", "ARRAY[0.001, NULL]"},
	Float8Arr:  {"'{NaN,Infinity,-0}'::float8[]", "'{}'::float8[]", "ARRAY[1.5::float8, 1e300]"},
}

// untypedEdge are bare literals that Postgres types by context (numeric
// literals are int4, int8 or numeric; strings are unknown).
var untypedEdge = map[Type][]string{
	Int4:        {"0", "1", "-1", "2", "7", "-2147483648", "2147483647"},
	Int8:        {"3000000000", "-9223372036854775808", "9223372036854775807"},
	Numeric:     {"1.5", "-1.4", "0.5", "-2.5", "1e200", "1e-5", "0.0", "2.50", "9223372036854775808"},
	Text:        {"'a'", "''", "'A'", "'b '", "'%'", "'_'", "'ü'", `'\'`},
	Date:        {"'2024-03-10'", "'infinity'"},
	Timestamptz: {"'2024-03-10 02:30:00'", "'2024-11-03 01:30:00-07'"},
	Interval:    {"'1 day'", "'-1 mon'"},
}

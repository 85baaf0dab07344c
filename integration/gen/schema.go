package gen

import (
	"fmt"
	"strings"
)

// Column is one column of a generator table.
type Column struct {
	Name    string
	SQLType string // as CREATE TABLE writes it, typmod included
	Type    Type
	// Values are SQL literals; row i (from 0) holds Values[i % len]. The
	// lists' lengths differ from column to column, so that rows mix them.
	Values []string
}

// Table is a generator table: id int PRIMARY KEY (1..Rows), then Columns.
type Table struct {
	Name    string
	Rows    int
	Columns []Column
}

// key is the name of every table's primary key column.
const key = "id"

// Tables are the tables the generator reads. Each is a dataset.
var Tables = []Table{genT, genU, genW, genE}

// The values of the columns. Each list has a NULL, duplicates where ties
// matter, and the type's edges. No float column holds both 0 and -0 (a
// GROUP BY or DISTINCT of it would show either); intervals that are equal
// but print differently ('1 mon', '30 days') are kept: they are an edge
// of their own (Query.MayTie).
var (
	intKeys  = []string{"1", "2", "2", "3", "NULL", "4", "5", "5", "7", "8", "-1"}
	int2Vals = []string{"0", "-1", "1", "-32768", "32767", "7", "7", "NULL", "100"}
	int4Vals = []string{"0", "-1", "1", "-2147483648", "2147483647", "42", "42", "NULL", "7", "-7", "1000"}
	int8Vals = []string{"0", "-1", "-9223372036854775808", "9223372036854775807", "1000000000000", "NULL", "3", "3", "-42"}
	f4Vals   = []string{"0", "1.5", "3.4e38", "-3.4e38", "1e-45", "'Infinity'", "'-Infinity'", "'NaN'", "0.1", "NULL", "2.5", "2.5"}
	f8Vals   = []string{"'-0'", "1e-300", "1e300", "1.7976931348623157e308", "5e-324", "'Infinity'", "'-Infinity'",
		"'NaN'", "0.1", "NULL", "2.5", "-2.5", "0.5", "1.5", "1.5", "-1e-300"}
	numVals = []string{"0", "-0.0001", "1.5000", "-2.5", "9999999999999999.9999", "0.5", "123.456", "NULL", "1.5", "-9999999999999999.9999", "2.5"}
	num2    = []string{"0.00", "1.50", "-2.50", "0.05", "NULL", "9999999999.99", "-0.01", "1.5", "12.34"}
	num0    = []string{"0", "1", "-1", "2", "9999999999", "NULL", "-9999999999", "5", "5"}
	num38   = []string{"0", "1234567890123456789012345678.0123456789", "-0.0000000001", "NULL", "0.5000000000", "1"}
	textV   = []string{"''", "'a'", "'A'", "'abc'", "'ABC'", "'a  '", "' a'", "'ü'", "'Ünïcödé ✓'", "'日本語'", "'x%y_z'",
		`'back\slash'`, "'it''s'", "NULL", "'a'", "'B'", "'b'", "'ß'", "'İi'", "'42'"}
	varcharV = []string{"'a'", "'A'", "''", "'ab  '", "NULL", "'zzz'", "'é'", "'a'", "'x_y'"}
	charV    = []string{"'a'", "'ab'", "''", "'abcde'", "NULL", "'A'", "'a  '", "'é'"}
	boolV    = []string{"true", "false", "NULL", "true"}
	dateV    = []string{"'2024-03-10'", "'2024-11-03'", "'2000-02-29'", "'infinity'", "'-infinity'", "'0044-03-15 BC'",
		"'1970-01-01'", "NULL", "'2024-04-07'", "'1999-12-31'", "'2024-03-10'", "'9999-12-31'", "'1900-01-01'"}
	timeV = []string{"'00:00:00'", "'23:59:59.999999'", "'12:34:56.5'", "NULL", "'02:30:00'", "'01:30:00'", "'12:34:56.5'"}
	tsV   = []string{"'2024-03-10 02:30:00'", "'2024-11-03 01:30:00'", "'2000-02-29 23:59:59.999999'", "'infinity'",
		"'-infinity'", "'1900-01-01 00:00:00'", "'1970-01-01 00:00:00'", "NULL", "'2024-04-07 02:30:00'",
		"'2024-10-06 02:30:00'", "'0001-01-01 00:00:00 BC'", "'2024-03-10 02:30:00'", "'2018-11-04 00:30:00'", "'2024-12-31 23:59:59.5'"}
	tstzV = []string{"'2024-03-10 09:59:59.999999+00'", "'2024-03-10 10:00:00+00'", "'2024-11-03 08:30:00+00'",
		"'2024-11-03 09:30:00+00'", "'2024-04-06 15:30:00+00'", "'2024-10-05 16:30:00+00'", "'1919-07-01 00:00:00+00'",
		"'1900-01-01 00:00:00+00'", "'2018-11-04 02:59:59+00'", "'2011-03-26 23:00:00+00'", "'infinity'", "'-infinity'",
		"NULL", "'2000-01-01 00:00:00+00'", "'1970-01-01 00:00:00+00'", "'2024-03-10 10:00:00+00'", "'2024-06-30 23:59:59.5+00'"}
	ivV = []string{"'1 year 2 mons 3 days 04:05:06.789'", "'-1 year'", "'30 days'", "'1 mon'", "'24:00:00'",
		"'-00:00:00.000001'", "'1 day -1 hour'", "'178000000 years'", "'0'", "NULL", "'1 mon -1 days'", "'1.5 days'",
		"'-3 days 04:00:00'", "'1 mon'", "'-2 mons +45 days -12:00:00'", "'36:00:00'"}
	uuidV  = []string{"'00000000-0000-0000-0000-000000000000'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "NULL", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"}
	jsonV  = []string{`'{"a": 1, "b": [1, 2]}'`, `'[]'`, `'{"a":"x","a":"y"}'`, `'null'`, `'"s"'`, `'1.50'`, "NULL", `'{"k": {"n": [true, null]}, "s": "ü"}'`, `'[1, "2", null, {"c": 3}]'`, `' {"a" : 2} '`}
	jsonbV = []string{`'{"a": 1, "b": [1, 2]}'`, `'[]'`, `'{"b": 2, "a": 1, "a": 3}'`, `'null'`, `'"s"'`, `'1.50'`, "NULL", `'{"k": {"n": [true, null]}, "s": "ü"}'`, `'[1, "2", null, {"c": 3}]'`, `'{"a": 1e2}'`, `'{}'`}
	byteaV = []string{`'\x'`, `'\x00'`, `'\xdeadbeef'`, `'\x5c27'`, "NULL", `'\x61'`, `'\x0001027f80ff'`}
	i4arrV = []string{"'{1,2,3}'", "'{}'", "'{NULL,1}'", "'{-2147483648,2147483647}'", "NULL", "'{5,5}'", "'{3}'"}
	txarrV = []string{"'{a,b}'", "'{}'", `'{"with space",NULL,"NULL",""}'`, "NULL", "'{b,a}'", `'{"é","E"}'`}
	nmarrV = []string{"'{1.50,2.25}'", "'{}'", "NULL", "'{-999999.99,0.00}'", "'{NULL}'"}
	f8arrV = []string{"'{NaN,Infinity,-Infinity,-0}'", "'{}'", "NULL", "'{1.5,2.5}'", "'{1e-300}'"}
	grpV   = []string{"'x'", "'y'", "'z'", "NULL", "'x'", "'X'", "'y'"}
)

var genT = Table{Name: "gen_t", Rows: 30, Columns: []Column{
	{"k", "int4", Int4, intKeys},
	{"grp", "text", Text, grpV},
	{"c_int2", "int2", Int2, int2Vals},
	{"c_int4", "int4", Int4, int4Vals},
	{"c_int8", "int8", Int8, int8Vals},
	{"c_float4", "float4", Float4, f4Vals},
	{"c_float8", "float8", Float8, f8Vals},
	{"c_num", "numeric(20,4)", Numeric, numVals},
	{"c_num2", "numeric(12,2)", Numeric, num2},
	{"c_num0", "numeric(10,0)", Numeric, num0},
	{"c_num38", "numeric(38,10)", Numeric, num38},
	{"c_text", "text", Text, textV},
	{"c_varchar", "varchar(10)", Varchar, varcharV},
	{"c_char", "char(5)", Bpchar, charV},
	{"c_bool", "bool", Bool, boolV},
	{"c_date", "date", Date, dateV},
	{"c_time", "time", Time, timeV},
	{"c_ts", "timestamp", Timestamp, tsV},
	{"c_tstz", "timestamptz", Timestamptz, tstzV},
	{"c_interval", "interval", Interval, ivV},
	{"c_uuid", "uuid", UUID, uuidV},
	{"c_json", "json", JSON, jsonV},
	{"c_jsonb", "jsonb", JSONB, jsonbV},
	{"c_bytea", "bytea", Bytea, byteaV},
	{"c_int4arr", "int4[]", Int4Arr, i4arrV},
	{"c_textarr", "text[]", TextArr, txarrV},
	{"c_numarr", "numeric(8,2)[]", NumericArr, nmarrV},
	{"c_float8arr", "float8[]", Float8Arr, f8arrV},
}}

// gen_u joins gen_t on k (some keys match, some do not, NULLs never) and
// shares column names with it (USING, ambiguity, scoping).
var genU = Table{Name: "gen_u", Rows: 16, Columns: []Column{
	{"k", "int4", Int4, []string{"2", "3", "3", "6", "NULL", "9", "1", "12"}},
	{"grp", "text", Text, []string{"'x'", "'z'", "NULL", "'w'", "'y'"}},
	{"c_int4", "int4", Int4, []string{"1", "42", "NULL", "-2147483648", "0", "7", "2147483647"}},
	{"c_num", "numeric(12,3)", Numeric, []string{"1.500", "-0.001", "NULL", "0.000", "999999999.999", "2.250"}},
	{"c_float8", "float8", Float8, []string{"1.5", "'-0'", "NULL", "'NaN'", "1e308", "0.25", "-1e-308"}},
	{"c_text", "text", Text, []string{"'a'", "'b'", "'A'", "NULL", "'ü'", "''", "'zz'"}},
	{"c_date", "date", Date, []string{"'2024-03-09'", "'2024-03-11'", "NULL", "'infinity'", "'2000-03-01'", "'2024-11-04'"}},
	{"c_tstz", "timestamptz", Timestamptz, []string{"'2024-03-09 10:00:00+00'", "'2024-03-11 10:00:00+00'", "'2024-11-02 08:00:00+00'",
		"'2024-11-04 12:00:00+00'", "NULL", "'2024-04-05 12:00:00+00'", "'2024-10-07 00:00:00+00'", "'1919-06-30 12:00:00+00'", "'-infinity'"}},
	{"c_interval", "interval", Interval, []string{"'1 day'", "'-1 mon 2 days'", "NULL", "'23:59:59.999999'", "'2 years'", "'1 day'"}},
	{"c_bool", "bool", Bool, []string{"false", "true", "NULL"}},
	{"c_jsonb", "jsonb", JSONB, []string{`'{"a": 2}'`, `'[1, 2]'`, "NULL", `'{"b": {"c": "d"}}'`, `'"a"'`}},
	// A linguistic collation: ordering by it is not bytewise.
	{"c_icu", `text COLLATE "en-x-icu"`, Text, []string{"'b'", "'B'", "'a'", "'É'", "NULL", "'e'", "'ä'", "'a'"}},
}}

// gen_w is small, for EXISTS, IN and scalar subqueries.
var genW = Table{Name: "gen_w", Rows: 6, Columns: []Column{
	{"k", "int4", Int4, []string{"1", "3", "NULL", "5", "3", "100"}},
	{"v", "text", Text, []string{"'a'", "NULL", "'b'", "'a'", "'ü'"}},
	{"n", "int8", Int8, []string{"10", "-10", "NULL", "0", "9223372036854775807"}},
	{"c_num", "numeric(6,1)", Numeric, []string{"0.5", "NULL", "-1.0", "2.0", "99999.9"}},
}}

// gen_e is empty: aggregates of no rows, outer joins to nothing.
var genE = Table{Name: "gen_e", Rows: 0, Columns: []Column{
	{"k", "int4", Int4, nil},
	{"v", "text", Text, nil},
	{"c_num", "numeric(10,2)", Numeric, nil},
	{"c_float8", "float8", Float8, nil},
}}

// SchemaSQL drops and creates the generator's tables, fills them and
// grants SELECT on them to reader.
func SchemaSQL(reader string) string {
	var b strings.Builder
	names := make([]string, len(Tables))
	for i, t := range Tables {
		names[i] = t.Name
	}
	fmt.Fprintf(&b, "DROP TABLE IF EXISTS %s CASCADE;\n", strings.Join(names, ", "))
	for _, t := range Tables {
		fmt.Fprintf(&b, "CREATE TABLE %s (\n    %s int PRIMARY KEY", t.Name, key)
		for _, c := range t.Columns {
			fmt.Fprintf(&b, ",\n    %s %s", c.Name, c.SQLType)
		}
		b.WriteString("\n);\n")
		if t.Rows == 0 {
			continue
		}
		fmt.Fprintf(&b, "INSERT INTO %s VALUES\n", t.Name)
		for i := 0; i < t.Rows; i++ {
			vals := []string{fmt.Sprint(i + 1)}
			for _, c := range t.Columns {
				vals = append(vals, c.Values[i%len(c.Values)])
			}
			sep := ",\n"
			if i == t.Rows-1 {
				sep = ";\n"
			}
			fmt.Fprintf(&b, " (%s)%s", strings.Join(vals, ", "), sep)
		}
	}
	fmt.Fprintf(&b, "GRANT SELECT ON %s TO %s;\nANALYZE;\n", strings.Join(names, ", "), reader)
	return b.String()
}

// DatasetsYAML is the datasets section of a pgaccel config that
// accelerates every generator table of schema public.
func DatasetsYAML() string {
	var b strings.Builder
	for _, t := range Tables {
		fmt.Fprintf(&b, "  - from: postgres:public.%s\n", t.Name)
	}
	return b.String()
}

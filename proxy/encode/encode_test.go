package encode

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Session setting combinations, by the settings a type's output depends on.
var (
	defaultSessions = []session{canonical}
	floatSessions   = sessionsOf("extra_float_digits", "1", "0", "-3", "3", "2", "-15", "-1")
	byteaSessions   = sessionsOf("bytea_output", "'hex'", "'escape'")
	intervalStyles  = sessionsOf("IntervalStyle", "'postgres'", "'postgres_verbose'", "'sql_standard'", "'iso_8601'")
	dateStyles      = sessionsOf("DateStyle", "'ISO, MDY'", "'ISO, DMY'", "'SQL, MDY'", "'SQL, DMY'", "'SQL, YMD'",
		"'Postgres, MDY'", "'Postgres, DMY'", "'Postgres, YMD'", "'German'", "'German, MDY'")
	timeZones = []string{"'UTC'", "'America/New_York'", "'Asia/Kolkata'", "'Australia/Lord_Howe'", "'Europe/Dublin'",
		"'America/Sao_Paulo'", "'Pacific/Chatham'", "'Africa/Monrovia'", "'EST5EDT'", "'Etc/GMT-14'", "'UTC+3'",
		"INTERVAL '+05:30' HOUR TO MINUTE", "-7", "'GMT'", "'posix/Europe/Paris'"}
	tzSessions = crossSessions(dateStyles, timeZones)
)

func sessionsOf(name string, values ...string) []session {
	var out []session
	for _, v := range values {
		out = append(out, session{name: name + "=" + v, sets: []string{"SET " + name + " = " + v}})
	}
	return out
}

func crossSessions(base []session, zones []string) []session {
	var out []session
	for _, b := range base {
		for _, z := range zones {
			out = append(out, session{name: b.name + " TimeZone=" + z, sets: append(append([]string{}, b.sets...), "SET TIME ZONE "+z)})
		}
	}
	return out
}

// encodeCase is one Postgres type, the DuckDB type holding it, and the edge
// values (SQL literals) to compare in every session of sessions.
type encodeCase struct {
	pgType   string
	duckType string // "" for numeric without typmod: DECIMAL(38, the value's scale)
	sessions []session
	values   []string
}

// withOffset adds +00 to timestamp literals so they mean the same instant in
// every session TimeZone.
func withOffset(lits []string) []string {
	out := make([]string, len(lits))
	for i, l := range lits {
		switch {
		case strings.Contains(l, "infinity"):
			out[i] = l
		case strings.HasSuffix(l, " BC'"):
			out[i] = strings.TrimSuffix(l, " BC'") + "+00 BC'"
		default:
			out[i] = strings.TrimSuffix(l, "'") + "+00'"
		}
	}
	return out
}

func quoted(vals ...string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return out
}

// randomFloats returns float literals from random bit patterns and random
// decimal values, to stress shortest round-trip formatting.
func randomFloats(n int, bits int) []string {
	r := rand.New(rand.NewPCG(1, uint64(bits)))
	var out []string
	for len(out) < n {
		var s string
		if bits == 32 {
			f := math.Float32frombits(r.Uint32())
			if f != f || math.IsInf(float64(f), 0) {
				continue
			}
			s = strconv.FormatFloat(float64(f), 'g', -1, 32)
		} else {
			f := math.Float64frombits(r.Uint64())
			if len(out)%2 == 1 {
				f = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
			}
			if f != f || math.IsInf(f, 0) {
				continue
			}
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
		out = append(out, "'"+s+"'")
	}
	return out
}

var (
	float4Values = append(quoted("0", "-0", "1", "-1", "0.1", "1e6", "123456", "1234567", "1e-5", "0.0001", "3.4028235e38",
		"-3.4028235e38", "1.17549435e-38", "1e-45", "NaN", "Infinity", "-Infinity", "3.14159265", "100000", "999999",
		"9999999", "1.5e-4", "2.5", "16777216", "0.3", "1e-4", "9.99999e-5", "12345.678"), randomFloats(150, 32)...)
	float8Values = append(quoted("0", "-0", "1", "0.1", "1e15", "1e14", "123456789012345", "1234567890123456", "1e-5",
		"1e-4", "0.0001234", "1e100", "1e-300", "5e-324", "1.7976931348623157e308", "2.2250738585072014e-308", "NaN",
		"Infinity", "-Infinity", "3.141592653589793", "-2.5", "100", "1e22", "1e21", "123.456", "0.30000000000000004",
		"9007199254740993", "4.35", "1e23", "8.41e21", "5e-5", "0.000099999", "999999999999999.9", "99999999999999.99",
		"-1e-10", "2e-308", "1e16", "123456789012345678"), randomFloats(300, 64)...)
	numericValues = quoted("0", "1.50", "-0.000", "123456789012345678901234567890.12345678", "1e-20", "0.00001",
		"100000000", "12345.6789", "-99999999999999999999999999999999999999", "0.1", "-1", "10000", "9999.9999",
		"0.0001", "1e30", "-0.000000000000000000000000000000000001", "3.14159", "42")
	textValues = quoted("", "a", "hello world", "NULL", "null", "Null ", "ünïcødé 日本", "tab\there", "new\nline",
		"quote\"d", "back\\slash", "{braces}", "a,b", " leading", "trailing ", "x'y", "\x01\x7f", "\r\v\f")
	dateValues = quoted("2020-01-02", "2000-01-01", "1999-12-31", "0001-01-01", "0001-12-31 BC", "0044-03-15 BC",
		"4714-11-24 BC", "5874897-12-31", "infinity", "-infinity", "1970-01-01", "2020-02-29", "10000-01-01",
		"12345-06-07", "1582-10-10", "0001-01-01 BC")
	timestampValues = quoted("2020-01-02 03:04:05", "2020-01-02 03:04:05.123456", "2020-01-02 03:04:05.1",
		"2000-01-01 00:00:00", "1999-12-31 23:59:59.999999", "0001-01-01 00:00:00", "0044-03-15 12:00:00 BC",
		"4714-11-24 00:00:00 BC", "294247-01-09 23:59:59.999999", "infinity", "-infinity", "1970-01-01 00:00:00",
		"1900-01-01 00:00:00", "12345-01-01 01:01:01", "2020-01-02 03:04:05.000001", "1883-11-18 12:00:00")
	timestamptzValues = append(withOffset(timestampValues[:len(timestampValues)-1]), quoted(
		"2021-03-14 06:59:59+00", "2021-03-14 07:00:00+00", "2021-11-07 05:30:00+00", "2021-11-07 06:30:00+00",
		"2021-04-03 14:30:00+00", "2021-04-03 15:30:00+00", "2021-10-02 15:30:00+00", "1800-01-01 00:00:00+00",
		"1883-11-18 17:00:00+00", "2038-01-19 03:14:08+00", "2100-07-01 00:00:00+00", "1916-05-21 02:00:00+00",
		"1971-10-31 02:00:00+00", "1960-06-01 12:00:00+00", "2020-07-02 03:04:05.12+00", "1000-01-01 00:00:00+00",
		"4714-11-24 12:00:00+00 BC", "294247-01-09 12:00:00+00")...)
	intervalValues = quoted("0", "1 year 2 mons 3 days 04:05:06.789", "-1 year -2 mons +3 days -04:05:06",
		"-1 days +00:00:01", "1 sec", "-0.5 sec", "1 mon -1 sec", "-1 year", "100 hours", "-3 days",
		"1.000001 sec", "-1 day -1 sec", "1 year", "13 months", "-13 months", "1 day", "2 days", "1 min", "-1 min",
		"1 hour", "-1 hour 1 sec", "178000000 years", "-178000000 years", "2147483647 days", "-2147483648 days",
		"2562047788:00:54.775807", "-2562047788:00:54.775807", "00:00:00.000001", "-00:00:00.000001", "1 mon 1 day",
		"-1 mon -1 day", "1 mon -1 day", "5 days 1 sec", "-5 days -1 sec", "1 year 1 sec", "-1 year +1 day",
		"1 day -01:00:00", "-1 sec", "1.5 sec", "-1 mon", "1 mon", "2 mons", "-12 months")
)

var encodeCases = []encodeCase{
	{"boolean", "BOOLEAN", defaultSessions, quoted("t", "f")},
	{"smallint", "SMALLINT", defaultSessions, quoted("0", "1", "-1", "32767", "-32768", "42")},
	{"smallint", "INTEGER", defaultSessions, quoted("0", "32767", "-32768")},
	{"integer", "INTEGER", defaultSessions, quoted("0", "2147483647", "-2147483648", "123456")},
	{"integer", "BIGINT", defaultSessions, quoted("0", "2147483647", "-2147483648")},
	{"bigint", "BIGINT", defaultSessions, quoted("0", "9223372036854775807", "-9223372036854775808", "1000000000000000")},
	{"bigint", "HUGEINT", defaultSessions, quoted("0", "9223372036854775807", "-9223372036854775808", "7")},
	{"bigint", "UBIGINT", defaultSessions, quoted("0", "9223372036854775807")},
	{"real", "FLOAT", floatSessions, float4Values},
	{"double precision", "DOUBLE", floatSessions, float8Values},
	{"double precision", "FLOAT", floatSessions, []string{"'0.1'::real", "'1e30'::real", "'-3.5'::real", "'NaN'::real", "'1e-40'::real", "'3.4028235e38'::real"}},
	{"double precision", "BIGINT", floatSessions, quoted("0", "1", "123456789012345", "-9007199254740992", "1000000")},
	{"numeric", "", defaultSessions, numericValues},
	{"numeric(10,2)", "DECIMAL(10,2)", defaultSessions, quoted("0", "1.5", "-1.5", "12345678.99", "-0.01", "0.10", "99999999.99")},
	{"numeric(38,10)", "DECIMAL(38,10)", defaultSessions, quoted("0", "1234567890123456789012345678.0123456789", "-0.0000000001", "1")},
	{"numeric(18,0)", "DECIMAL(18,0)", defaultSessions, quoted("0", "999999999999999999", "-1")},
	{"numeric(4,4)", "DECIMAL(4,4)", defaultSessions, quoted("0", "0.9999", "-0.0001")},
	{"numeric(5,-2)", "DECIMAL(5,0)", defaultSessions, quoted("12345", "-99949", "0")},
	{"numeric(10,4)", "DECIMAL(18,1)", defaultSessions, quoted("1.5", "-2", "0", "123456.7")},
	{"numeric(10,2)", "DECIMAL(18,6)", defaultSessions, quoted("1.5", "-2", "0", "12345678.91")},
	{"numeric", "BIGINT", defaultSessions, quoted("0", "9223372036854775807", "-9223372036854775808", "10000", "-1")},
	{"numeric", "HUGEINT", defaultSessions, quoted("0", "170141183460469231731687303715884105727", "-170141183460469231731687303715884105727", "100000000000000000000")},
	{"numeric", "INTEGER", defaultSessions, quoted("123", "-2147483648")},
	{"text", "VARCHAR", defaultSessions, append(textValues, "repeat('x', 1000)")},
	{"varchar(10)", "VARCHAR", defaultSessions, quoted("abc", "", "ü")},
	{"name", "VARCHAR", defaultSessions, quoted("abc", "NULL", "")},
	{"char(5)", "VARCHAR", defaultSessions, quoted("a", "abcde", "", "ü", "a b", "ab  ")},
	{"char", "VARCHAR", defaultSessions, quoted("x", "", "ü")},
	{"json", "VARCHAR", defaultSessions, quoted(`{"b":1, "a":[1,2]}`, "[]", `"str"`, "123.4500", "null", ` {"a" : 1 } `, `{"a":"\u00e9\n"}`)},
	{"jsonb", "VARCHAR", defaultSessions, quoted(`{"b":1, "a":[1,2], "aa": {"x": null}}`, "[]", `"str"`, "123.4500", "null",
		` {"a" : 1 } `, `{"a":"\u00e9\n"}`, `[1e3, -0, 0.10, true, false]`, `{"a":1,"a":2}`)},
	{"bytea", "BLOB", byteaSessions, append(quoted(`\x`, `\x00`, `\x0001ff5c27227f80`, "abc", `\x5c5c`),
		"decode(repeat('00', 0) || string_agg(lpad(to_hex(i), 2, '0'), '' ORDER BY i), 'hex') FROM generate_series(0, 255) i")},
	{"uuid", "UUID", defaultSessions, quoted("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "00000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff", "{12345678-1234-5678-1234-567812345678}")},
	{"date", "DATE", dateStyles, dateValues},
	{"time", "TIME", defaultSessions, quoted("00:00:00", "12:34:56", "23:59:59.999999", "12:00:00.5", "01:02:03.000001", "13:14:15.12")},
	{"time(2)", "TIME", defaultSessions, quoted("13:14:15.12", "00:00:01")},
	{"timestamp", "TIMESTAMP", dateStyles, timestampValues},
	{"timestamp(3)", "TIMESTAMP_MS", dateStyles, quoted("2020-01-02 03:04:05.123", "1999-12-31 23:59:59")},
	{"timestamp", "TIMESTAMP_S", defaultSessions, quoted("2020-01-02 03:04:05", "1970-01-01 00:00:00")},
	{"timestamp", "TIMESTAMP_NS", defaultSessions, quoted("2020-01-02 03:04:05.123456", "1970-01-01 00:00:00")},
	{"timestamptz", "TIMESTAMPTZ", tzSessions, timestamptzValues},
	{"interval", "INTERVAL", intervalStyles, intervalValues},
	{"interval(0)", "INTERVAL", intervalStyles, quoted("1 day 02:03:04", "-5 sec")},

	// Arrays: quoting, NULL elements, empty arrays, and each element type.
	{"text[]", "VARCHAR[]", defaultSessions, []string{
		"ARRAY['', 'NULL', 'null', 'a b', 'a\"b', 'a\\b', '{x}', 'a,b', NULL, E'\\t', 'ok', 'ü', E'\\x01']",
		"'{}'", "ARRAY[NULL]::text[]", "ARRAY['nULl ', ' ']",
	}},
	{"varchar(5)[]", "VARCHAR[]", defaultSessions, []string{"ARRAY['a', NULL, 'b c']"}},
	{"name[]", "VARCHAR[]", defaultSessions, []string{"ARRAY['a', 'NULL']"}},
	{"char(3)[]", "VARCHAR[]", defaultSessions, []string{"ARRAY['a', 'abc', '', NULL]"}},
	{"boolean[]", "BOOLEAN[]", defaultSessions, []string{"ARRAY[true, false, NULL]", "'{}'"}},
	{"smallint[]", "SMALLINT[]", defaultSessions, []string{"ARRAY[1, -32768, NULL]"}},
	{"integer[]", "INTEGER[]", defaultSessions, []string{"ARRAY[1, 2, NULL]", "'{}'", "ARRAY[2147483647]", "ARRAY[NULL]::int[]"}},
	{"bigint[]", "BIGINT[]", defaultSessions, []string{"ARRAY[1, -9223372036854775808, NULL]"}},
	{"real[]", "FLOAT[]", floatSessions[:3], []string{"ARRAY[1.5, 'NaN', '-Infinity', NULL, 1e-7]::real[]"}},
	{"double precision[]", "DOUBLE[]", floatSessions[:3], []string{"ARRAY[0.1, 'Infinity', -0.0, NULL, 1e300]::float8[]"}},
	{"numeric(10,2)[]", "DECIMAL(10,2)[]", defaultSessions, []string{"ARRAY[1.5, NULL, -0.01, 0]"}},
	{"numeric[]", "DECIMAL(20,3)[]", defaultSessions, []string{"ARRAY[1.500, NULL, -0.010, 0.000]"}},
	{"date[]", "DATE[]", dateStyles, []string{"ARRAY['2020-01-02', NULL, 'infinity', '0044-03-15 BC']::date[]"}},
	{"time[]", "TIME[]", defaultSessions, []string{"ARRAY['12:34:56.5', NULL]::time[]"}},
	{"timestamp[]", "TIMESTAMP[]", dateStyles, []string{"ARRAY['2020-01-02 03:04:05.5', NULL, '-infinity', '0044-03-15 12:00:00 BC']::timestamp[]"}},
	{"timestamptz[]", "TIMESTAMPTZ[]", tzSessions[:30], []string{"ARRAY['2020-01-02 03:04:05.5+00', NULL, 'infinity', '2021-07-01 00:00+00']::timestamptz[]"}},
	{"interval[]", "INTERVAL[]", intervalStyles, []string{"ARRAY['1 day', NULL, '-1 year +2 sec', '0']::interval[]"}},
	{"uuid[]", "UUID[]", defaultSessions, []string{"ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL]::uuid[]"}},
	{"json[]", "VARCHAR[]", defaultSessions, []string{`ARRAY['{"a": [1, "x"]}', 'null', NULL, '""']::json[]`}},
	{"jsonb[]", "VARCHAR[]", defaultSessions, []string{`ARRAY['{"b": 1, "a": "x y"}', 'null', NULL]::jsonb[]`}},
	{"bytea[]", "BLOB[]", byteaSessions, []string{`ARRAY['\x00ff', NULL, '', 'a\\b']::bytea[]`}},
}

// TestEncoder_MatchesPostgres reads every value of encodeCases from Postgres
// (text and binary, in every session of its case) and from DuckDB, encodes
// DuckDB's value and compares the bytes.
func TestEncoder_MatchesPostgres(t *testing.T) {
	h := newHarness(t)
	total := 0
	for caseNo, tc := range encodeCases {
		t.Run(tc.pgType+"/"+tc.duckType, func(t *testing.T) {
			h.t = t
			h.settings(canonical)
			type loaded struct {
				lit      string
				v        any
				duckName string
			}
			// Each value is stored once, read in the canonical session, so
			// that session settings change only how it is printed.
			table := fmt.Sprintf("v%d", caseNo)
			h.exec(fmt.Sprintf("CREATE TEMP TABLE %s (n int, v %s)", table, tc.pgType))
			var vals []loaded
			for n, lit := range tc.values {
				if strings.Contains(lit, " FROM ") { // a query, not a literal
					lit = "(SELECT " + lit + ")"
				}
				h.exec(fmt.Sprintf("INSERT INTO %s VALUES (%d, %s)", table, n, lit))
				lit = fmt.Sprintf("(SELECT v FROM %s WHERE n = %d)", table, n)
				duckType := tc.duckType
				if duckType == "" {
					text := h.mustQuery(fmt.Sprintf("SELECT (%s)::%s", lit, tc.pgType), 0)
					scale := 0
					if i := bytes.IndexByte(text.value, '.'); i >= 0 {
						scale = len(text.value) - i - 1
					}
					duckType = fmt.Sprintf("DECIMAL(38,%d)", scale)
				}
				v, name, err := h.loadDuck(lit, tc.pgType, duckType)
				if err != nil {
					t.Errorf("DuckDB %s as %s: %v", lit, duckType, err)
					continue
				}
				vals = append(vals, loaded{lit, v, name})
			}
			for si, s := range tc.sessions {
				st := h.settings(s)
				for _, format := range []int16{0, 1} {
					if format == 1 && si > 0 {
						continue // binary output does not depend on the settings
					}
					for _, lv := range vals {
						total++
						q := fmt.Sprintf("SELECT (%s)::%s", lv.lit, tc.pgType)
						want, pgErr := h.query(q, nil, nil, nil, format)
						var cols []Column
						if pgErr == nil {
							cols = []Column{{TypeOID: want.oid, TypeMod: want.typmod, Format: format}}
						} else {
							r := h.mustQuery(fmt.Sprintf("SELECT NULL::%s", tc.pgType), format)
							cols = []Column{{TypeOID: r.oid, TypeMod: r.typmod, Format: format}}
						}
						enc, err := NewEncoder(cols, []string{lv.duckName}, st)
						if err != nil {
							t.Errorf("%s [%s] format %d: NewEncoder(%+v, %s): %v", lv.lit, s.name, format, cols[0], lv.duckName, err)
							continue
						}
						got, isNull, err := enc.AppendValue([]byte("prefix"), 0, lv.v)
						switch {
						case pgErr != nil:
							if !errors.Is(err, ErrUnsupported) {
								t.Errorf("%s [%s] format %d: Postgres fails (%v) but encoded %q, %v", lv.lit, s.name, format, pgErr, got, err)
							}
						case err != nil:
							t.Errorf("%s [%s] format %d: %v (want %q)", lv.lit, s.name, format, err, want.value)
						case isNull != want.null:
							t.Errorf("%s [%s] format %d: null %v, want %v", lv.lit, s.name, format, isNull, want.null)
						case !want.null && !bytes.Equal(got[6:], want.value):
							t.Errorf("%s [%s] format %d (DuckDB %#v %s):\n got %q\nwant %q", lv.lit, s.name, format, lv.v, lv.duckName, got[6:], want.value)
						}
					}
				}
			}
		})
	}
	t.Logf("%d comparisons", total)
}

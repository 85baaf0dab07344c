package encode

import (
	"encoding/hex"
	"errors"
	"math/big"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

func mustSettings(t testing.TB, params map[string]string) *Settings {
	t.Helper()
	s, err := LoadSettings(params)
	if err != nil {
		t.Fatalf("LoadSettings(%v): %v", params, err)
	}
	return s
}

func TestLoadSettings_Defaults(t *testing.T) {
	s := mustSettings(t, nil)
	if s.TimeZone == nil || s.DateStyle != "ISO, MDY" || s.IntervalStyle != "postgres" || s.ExtraFloatDigits != 1 || s.ByteaOutput != "hex" {
		t.Errorf("defaults = %+v", s)
	}
}

func TestLoadSettings_Values(t *testing.T) {
	tests := []struct {
		params  map[string]string
		wantErr bool
		check   func(*Settings) bool
	}{
		{map[string]string{"timezone": "America/New_York"}, false, func(s *Settings) bool { return s.TimeZone.String() == "America/New_York" }},
		{map[string]string{"TimeZone": "<+05:30>-05:30"}, false, func(s *Settings) bool {
			_, off := time.Date(2020, 1, 1, 0, 0, 0, 0, s.TimeZone).Zone()
			return off == 5*3600+1800
		}},
		{map[string]string{"TimeZone": "UTC+3"}, false, func(s *Settings) bool {
			name, off := time.Date(2020, 1, 1, 0, 0, 0, 0, s.TimeZone).Zone()
			return off == -3*3600 && name == "UTC"
		}},
		{map[string]string{"TimeZone": "Mars/Olympus"}, true, nil},
		{map[string]string{"TimeZone": "EST5EDT4,M3.2.0,M11.1.0"}, true, nil},
		{map[string]string{"DateStyle": "German"}, false, nil},
		{map[string]string{"DateStyle": "Swatch"}, true, nil},
		{map[string]string{"IntervalStyle": "sql_standard"}, false, nil},
		{map[string]string{"IntervalStyle": "french"}, true, nil},
		{map[string]string{"extra_float_digits": "-15"}, false, func(s *Settings) bool { return s.ExtraFloatDigits == -15 }},
		{map[string]string{"extra_float_digits": "4"}, true, nil},
		{map[string]string{"extra_float_digits": "one"}, true, nil},
		{map[string]string{"bytea_output": "escape"}, false, nil},
		{map[string]string{"bytea_output": "base64"}, true, nil},
		{map[string]string{"client_encoding": "LATIN1"}, true, nil},
		{map[string]string{"integer_datetimes": "off"}, true, nil},
	}
	for _, tt := range tests {
		s, err := LoadSettings(tt.params)
		switch {
		case tt.wantErr && !errors.Is(err, ErrUnsupported):
			t.Errorf("LoadSettings(%v) = %v, want ErrUnsupported", tt.params, err)
		case !tt.wantErr && err != nil:
			t.Errorf("LoadSettings(%v): %v", tt.params, err)
		case !tt.wantErr && tt.check != nil && !tt.check(s):
			t.Errorf("LoadSettings(%v) = %+v", tt.params, s)
		}
	}
}

func TestParseDateStyle_Keywords(t *testing.T) {
	tests := []struct {
		in           string
		style, order int
	}{
		{"ISO, MDY", styleISO, orderMDY},
		{"sql, dmy", styleSQL, orderDMY},
		{"Postgres, YMD", stylePostgres, orderYMD},
		{"German", styleGerman, orderDMY},
		{"German, MDY", styleGerman, orderMDY},
		{"European", styleISO, orderDMY},
		{"", styleISO, orderMDY},
	}
	for _, tt := range tests {
		style, order, err := parseDateStyle(tt.in)
		if err != nil || style != tt.style || order != tt.order {
			t.Errorf("parseDateStyle(%q) = %d, %d, %v; want %d, %d", tt.in, style, order, err, tt.style, tt.order)
		}
	}
}

func TestPlan_Rules(t *testing.T) {
	s := mustSettings(t, nil)
	noZone := mustSettings(t, nil)
	noZone.TimeZone = nil
	tests := []struct {
		oid  uint32
		mod  int32
		duck string
		s    *Settings
		ok   bool
	}{
		{pgdef.OIDInt8, -1, "BIGINT", s, true},
		{pgdef.OIDInt8, -1, "HUGEINT", s, true},
		{pgdef.OIDInt4, -1, "BIGINT", s, true},
		{pgdef.OIDInt2, -1, "DECIMAL(4,0)", s, true},
		{pgdef.OIDInt4, -1, "DECIMAL(9,2)", s, false},
		{pgdef.OIDNumeric, -1, "BIGINT", s, true},
		{pgdef.OIDNumeric, -1, "HUGEINT", s, true},
		{pgdef.OIDNumeric, -1, "DECIMAL(38,6)", s, true},
		{pgdef.OIDNumeric, -1, "DOUBLE", s, false},
		{pgdef.OIDNumeric, -1, "FLOAT", s, false},
		{pgdef.OIDFloat8, -1, "DOUBLE", s, true},
		{pgdef.OIDFloat8, -1, "FLOAT", s, true},
		{pgdef.OIDFloat4, -1, "DOUBLE", s, false},
		{pgdef.OIDFloat8, -1, "DECIMAL(10,2)", s, false},
		{pgdef.OIDText, -1, "VARCHAR", s, true},
		{pgdef.OIDJSONB, -1, "JSON", s, false},
		{pgdef.OIDJSON, -1, "VARCHAR", s, true},
		{pgdef.OIDText, -1, "INTEGER", s, false},
		{pgdef.OIDBytea, -1, "BLOB", s, true},
		{pgdef.OIDUUID, -1, "UUID", s, true},
		{pgdef.OIDUUID, -1, "VARCHAR", s, false},
		{pgdef.OIDTimestamptz, -1, "TIMESTAMP WITH TIME ZONE", s, true},
		{pgdef.OIDTimestamptz, -1, "TIMESTAMPTZ", noZone, false},
		{pgdef.OIDTimestamptz, -1, "TIMESTAMP", s, false},
		{pgdef.OIDTimestamp, -1, "TIMESTAMPTZ", s, false},
		{pgdef.OIDTimestamp, -1, "TIMESTAMP_NS", s, true},
		{pgdef.OIDDate, -1, "TIMESTAMP", s, false},
		{pgdef.OIDTime, -1, "TIMETZ", s, false},
		{pgdef.OIDInterval, -1, "INTERVAL", s, true},
		{1007, -1, "INTEGER[]", s, true},
		{1007, -1, "INTEGER[3]", s, true},
		{1007, -1, "INTEGER[][]", s, false},
		{1007, -1, "INTEGER", s, false},
		{pgdef.OIDInt4, -1, "INTEGER[]", s, false},
		{pgdef.OIDInt4, -1, "NULL", s, true},
		{1231, 655366, "DECIMAL(10,2)[]", s, true},
		{18, -1, "VARCHAR", s, false},     // "char"
		{114000, -1, "VARCHAR", s, false}, // unknown OID
		{pgdef.OIDText, -1, "STRUCT(a INTEGER)", s, false},
		{pgdef.OIDText, -1, "MAP(VARCHAR, INTEGER)", s, false},
	}
	for _, tt := range tests {
		err := Plan([]Column{{TypeOID: tt.oid, TypeMod: tt.mod}}, []string{tt.duck}, tt.s)
		if tt.ok && err != nil {
			t.Errorf("Plan(OID %d, %s): %v", tt.oid, tt.duck, err)
		}
		if !tt.ok && !errors.Is(err, ErrUnsupported) {
			t.Errorf("Plan(OID %d, %s) = %v, want ErrUnsupported", tt.oid, tt.duck, err)
		}
	}
	if err := Plan([]Column{{TypeOID: pgdef.OIDInt4}}, nil, s); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Plan with mismatched column counts = %v", err)
	}
}

// TestAppendValue_Unsupported lists values that cannot be printed exactly.
func TestAppendValue_Unsupported(t *testing.T) {
	s := mustSettings(t, nil)
	dec := func(v int64, w, sc uint8) duckdb.Decimal {
		return duckdb.Decimal{Width: w, Scale: sc, Value: big.NewInt(v)}
	}
	huge, _ := new(big.Int).SetString("9223372036854775808", 10)
	tests := []struct {
		name string
		col  Column
		duck string
		v    any
	}{
		{"int2 overflow", Column{TypeOID: pgdef.OIDInt2}, "INTEGER", int32(40000)},
		{"int4 overflow", Column{TypeOID: pgdef.OIDInt4}, "BIGINT", int64(1 << 40)},
		{"int8 overflow", Column{TypeOID: pgdef.OIDInt8}, "HUGEINT", huge},
		{"uint64 overflow", Column{TypeOID: pgdef.OIDInt8}, "UBIGINT", uint64(1 << 63)},
		{"numeric scale drop", Column{TypeOID: pgdef.OIDNumeric, TypeMod: 10<<16 | 2 + 4}, "DECIMAL(18,3)", dec(1005, 18, 3)},
		{"float8 from big int", Column{TypeOID: pgdef.OIDFloat8}, "BIGINT", int64(1<<53 + 1)},
		{"timestamp ns", Column{TypeOID: pgdef.OIDTimestamp}, "TIMESTAMP_NS", time.Unix(0, 1).UTC()},
		{"timestamp before 4713 BC", Column{TypeOID: pgdef.OIDTimestamp}, "TIMESTAMP", time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"date after 5874897", Column{TypeOID: pgdef.OIDDate}, "DATE", time.Date(5881000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"bpchar too long", Column{TypeOID: pgdef.OIDBpchar, TypeMod: 3 + 4}, "VARCHAR", "abcd"},
		{"wrong Go type", Column{TypeOID: pgdef.OIDText}, "VARCHAR", 42},
		{"uuid length", Column{TypeOID: pgdef.OIDUUID}, "UUID", []byte{1, 2}},
		{"array element", Column{TypeOID: 1005}, "INTEGER[]", []any{int32(1), int32(70000)}},
		{"not a list", Column{TypeOID: 1007}, "INTEGER[]", int32(1)},
	}
	for _, tt := range tests {
		for _, format := range []int16{0, 1} {
			tt.col.Format = format
			enc, err := NewEncoder([]Column{tt.col}, []string{tt.duck}, s)
			if err != nil {
				t.Fatalf("%s: NewEncoder: %v", tt.name, err)
			}
			out, isNull, err := enc.AppendValue(nil, 0, tt.v)
			if !errors.Is(err, ErrUnsupported) || out != nil || isNull {
				t.Errorf("%s format %d: AppendValue = %q, %v, %v; want ErrUnsupported", tt.name, format, out, isNull, err)
			}
		}
	}
}

func TestAppendValue_NullAndExtras(t *testing.T) {
	s := mustSettings(t, nil)
	enc, err := NewEncoder([]Column{{TypeOID: pgdef.OIDText}, {TypeOID: pgdef.OIDBpchar, TypeMod: 3 + 4}, {TypeOID: pgdef.OIDNumeric, TypeMod: 10<<16 | 2 + 4}}, []string{"VARCHAR", "VARCHAR", "DECIMAL(18,4)"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if out, isNull, err := enc.AppendValue([]byte("x"), 0, nil); out != nil || !isNull || err != nil {
		t.Errorf("NULL = %q, %v, %v", out, isNull, err)
	}
	if out, _, err := enc.AppendValue(nil, 1, "ab   "); string(out) != "ab " || err != nil {
		t.Errorf("bpchar(3) of %q = %q, %v", "ab   ", out, err)
	}
	if out, _, err := enc.AppendValue(nil, 1, "ü"); string(out) != "ü  " || err != nil {
		t.Errorf("bpchar(3) of ü = %q, %v (pads characters, not bytes)", out, err)
	}
	d := duckdb.Decimal{Width: 18, Scale: 4, Value: big.NewInt(-15000)}
	if out, _, err := enc.AppendValue(nil, 2, d); string(out) != "-1.50" || err != nil {
		t.Errorf("numeric(10,2) of -1.5000 = %q, %v", out, err)
	}
	if _, _, err := enc.AppendValue(nil, 3, "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("column out of range = %v", err)
	}
}

// TestAppendValue_NoAllocs checks that the common scalar types append into
// the caller's buffer without allocating.
func TestAppendValue_NoAllocs(t *testing.T) {
	s := mustSettings(t, map[string]string{"TimeZone": "America/New_York"})
	cols, ducks, vals := benchColumns()
	for _, format := range []int16{0, 1} {
		cs := make([]Column, len(cols))
		for i, c := range cols {
			c.Format = format
			cs[i] = c
		}
		enc, err := NewEncoder(cs, ducks, s)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 0, 1024)
		for i := range cs {
			allocs := testing.AllocsPerRun(100, func() {
				if _, _, err := enc.AppendValue(buf[:0], i, vals[i]); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("format %d column %d (%s, %T): %v allocations per value", format, i, ducks[i], vals[i], allocs)
			}
		}
	}
}

// benchColumns is a mixed row: the common scalar types.
func benchColumns() ([]Column, []string, []any) {
	ts := time.Date(2024, 3, 10, 12, 34, 56, 789000000, time.UTC)
	cols := []Column{
		{TypeOID: pgdef.OIDInt4}, {TypeOID: pgdef.OIDInt8}, {TypeOID: pgdef.OIDFloat8}, {TypeOID: pgdef.OIDText},
		{TypeOID: pgdef.OIDNumeric, TypeMod: 12<<16 | 2 + 4}, {TypeOID: pgdef.OIDTimestamptz}, {TypeOID: pgdef.OIDBool},
		{TypeOID: pgdef.OIDDate}, {TypeOID: pgdef.OIDTimestamp}, {TypeOID: pgdef.OIDInterval}, {TypeOID: pgdef.OIDUUID}, {TypeOID: pgdef.OIDFloat4},
	}
	ducks := []string{"INTEGER", "BIGINT", "DOUBLE", "VARCHAR", "DECIMAL(12,2)", "TIMESTAMPTZ", "BOOLEAN",
		"DATE", "TIMESTAMP", "INTERVAL", "UUID", "FLOAT"}
	vals := []any{
		int32(123456), int64(9876543210), 3.14159, "hello, world",
		duckdb.Decimal{Width: 12, Scale: 2, Value: big.NewInt(1234567)}, ts, true,
		time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC), ts, duckdb.Interval{Months: 14, Days: 3, Micros: 14706789000},
		[]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, float32(0.1),
	}
	return cols, ducks, vals
}

// BenchmarkEncoder_MixedRows encodes 1M rows of the 12 common scalar
// types (text and binary) and reports ns/value.
func BenchmarkEncoder_MixedRows(b *testing.B) {
	s := mustSettings(b, map[string]string{"TimeZone": "America/New_York"})
	cols, ducks, vals := benchColumns()
	const rows = 1_000_000
	for _, format := range []int16{0, 1} {
		name := "text"
		if format == 1 {
			name = "binary"
		}
		b.Run(name, func(b *testing.B) {
			cs := make([]Column, len(cols))
			for i, c := range cols {
				c.Format = format
				cs[i] = c
			}
			enc, err := NewEncoder(cs, ducks, s)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for r := 0; r < rows; r++ {
					buf = buf[:0]
					for i, v := range vals {
						out, _, err := enc.AppendValue(buf, i, v)
						if err != nil {
							b.Fatal(err)
						}
						buf = out
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*len(vals)), "ns/value")
		})
	}
}

// TestAppendValue_NumericText: a numeric that DuckDB returns as
// numeric_out's text (held as text, or computed exactly as text) is
// encoded with its own display scale, NaN and ±Infinity included, in text
// and in numeric_send's binary form.
func TestAppendValue_NumericText(t *testing.T) {
	s := mustSettings(t, nil)
	for _, c := range []struct {
		text string
		bin  string // hex of numeric_send, as Postgres sends it
	}{
		{"12.50", "0002000000000002000c1388"},
		{"-0.001", "0001ffff40000003000a"},
		{"0.00", "0000000000000002"},
		{"100", "00010000000000000064"},
		{"NaN", "00000000c0000000"},
		{"Infinity", "00000000d0000020"},
		{"-Infinity", "00000000f0000020"},
	} {
		for _, format := range []int16{0, 1} {
			enc, err := NewEncoder([]Column{{TypeOID: pgdef.OIDNumeric, TypeMod: -1, Format: format}}, []string{"VARCHAR"}, s)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := enc.AppendValue(nil, 0, c.text)
			want := c.text
			if format == 1 {
				want = c.bin
				out = []byte(hex.EncodeToString(out))
			}
			if err != nil || string(out) != want {
				t.Errorf("%s (format %d) = %s, %v; want %s", c.text, format, out, err, want)
			}
		}
	}
	enc, err := NewEncoder([]Column{{TypeOID: pgdef.OIDNumeric, TypeMod: -1}}, []string{"VARCHAR"}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "-", "1.", ".5", "1e5", "nan", "1,5", "+1"} {
		if out, _, err := enc.AppendValue(nil, 0, bad); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q = %q, %v; want ErrUnsupported", bad, out, err)
		}
	}
}

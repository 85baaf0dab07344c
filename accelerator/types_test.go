package accelerator

import (
	"encoding/binary"
	"errors"
	"math/big"
	"testing"

	"github.com/pgaccel/pgaccel/pgdef"
)

func TestDuckDBType_MapsEachPostgresType(t *testing.T) {
	numeric := func(p, s int) int32 { return int32(p<<16|s&0x7ff) + 4 }
	tests := []struct {
		c    ColumnSpec
		want string // "" = not accelerated
	}{
		{ColumnSpec{TypeOID: pgdef.OIDBool, TypeMod: -1}, "BOOLEAN"},
		{ColumnSpec{TypeOID: pgdef.OIDInt2, TypeMod: -1}, "SMALLINT"},
		{ColumnSpec{TypeOID: pgdef.OIDInt4, TypeMod: -1}, "INTEGER"},
		{ColumnSpec{TypeOID: pgdef.OIDInt8, TypeMod: -1}, "BIGINT"},
		{ColumnSpec{TypeOID: pgdef.OIDFloat4, TypeMod: -1}, "FLOAT"},
		{ColumnSpec{TypeOID: pgdef.OIDFloat8, TypeMod: -1}, "DOUBLE"},
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: numeric(12, 2)}, "DECIMAL(12,2)"},
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: numeric(38, 38)}, "DECIMAL(38,38)"},
		// Numerics a DECIMAL cannot hold: numeric_out's text.
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: -1}, "VARCHAR"}, // no value to take a scale from
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: -1, HeldScale: ptr(2)}, "DECIMAL(38,2)"},
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: -1, HeldScale: ptr(2), NumericText: true}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: numeric(12, 2), NumericText: true}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: numeric(39, 2)}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: numeric(5, -2)}, "VARCHAR"}, // PG 15+ negative scale
		{ColumnSpec{TypeOID: pgdef.OIDNumeric, TypeMod: numeric(2, 5)}, "VARCHAR"},  // scale above precision
		{ColumnSpec{TypeOID: pgdef.OIDText, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDVarchar, TypeMod: 14}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDName, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDBpchar, TypeMod: 9}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDJSON, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDJSONB, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: pgdef.OIDBytea, TypeMod: -1}, "BLOB"},
		{ColumnSpec{TypeOID: pgdef.OIDDate, TypeMod: -1}, "DATE"},
		{ColumnSpec{TypeOID: pgdef.OIDTime, TypeMod: -1}, "TIME"},
		{ColumnSpec{TypeOID: pgdef.OIDTimestamp, TypeMod: 3}, "TIMESTAMP"},
		{ColumnSpec{TypeOID: pgdef.OIDTimestamptz, TypeMod: -1}, "TIMESTAMPTZ"},
		{ColumnSpec{TypeOID: pgdef.OIDInterval, TypeMod: -1}, "INTERVAL"},
		{ColumnSpec{TypeOID: pgdef.OIDUUID, TypeMod: -1}, "UUID"},
		{ColumnSpec{TypeOID: 1007, TypeMod: -1, ElemOID: pgdef.OIDInt4}, "INTEGER[]"},
		{ColumnSpec{TypeOID: 1231, TypeMod: numeric(10, 2), ElemOID: pgdef.OIDNumeric}, "DECIMAL(10,2)[]"},
		{ColumnSpec{TypeOID: 1231, TypeMod: -1, ElemOID: pgdef.OIDNumeric}, "BLOB"}, // array_send's form (ArrayBinary)
		{ColumnSpec{TypeOID: 1007, TypeMod: -1, ElemOID: pgdef.OIDInt4, ArrayBinary: true}, "BLOB"},
		{ColumnSpec{TypeOID: 1266, TypeMod: -1}, ""}, // timetz
		{ColumnSpec{TypeOID: 600, TypeMod: -1}, ""},  // point
		{ColumnSpec{TypeOID: 790, TypeMod: -1}, ""},  // money
		{ColumnSpec{TypeOID: 18, TypeMod: -1}, ""},   // "char"
	}
	for _, tt := range tests {
		got, ok := DuckDBType(tt.c)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("DuckDBType(%+v) = %q, %v; want %q", tt.c, got, ok, tt.want)
		}
	}
}

// numericBytes encodes a numeric's binary send format.
func numericBytes(weight int16, sign uint16, dscale int16, digits ...uint16) []byte {
	b := make([]byte, 8+2*len(digits))
	binary.BigEndian.PutUint16(b[0:], uint16(len(digits)))
	binary.BigEndian.PutUint16(b[2:], uint16(weight))
	binary.BigEndian.PutUint16(b[4:], sign)
	binary.BigEndian.PutUint16(b[6:], uint16(dscale))
	for i, d := range digits {
		binary.BigEndian.PutUint16(b[8+2*i:], d)
	}
	return b
}

func TestDecodeNumeric_ScalesExactly(t *testing.T) {
	tests := []struct {
		name  string
		b     []byte
		scale int
		want  string
	}{
		{"zero", numericBytes(0, numericPos, 0), 2, "0"},
		{"12.34", numericBytes(0, numericPos, 2, 12, 3400), 2, "1234"},
		{"-12.34 at scale 4", numericBytes(0, numericNeg, 2, 12, 3400), 4, "-123400"},
		{"0.0001", numericBytes(-1, numericPos, 4, 1), 4, "1"},
		{"123456789", numericBytes(2, numericPos, 0, 1, 2345, 6789), 0, "123456789"},
		{"10^20", numericBytes(5, numericPos, 0, 1), 0, "100000000000000000000"},
		{"38 nines", numericBytes(9, numericPos, 0, 99, 9999, 9999, 9999, 9999, 9999, 9999, 9999, 9999, 9999), 0,
			"99999999999999999999999999999999999999"},
		{"-28.10 digits", numericBytes(6, numericNeg, 10, 9999, 9999, 9999, 9999, 9999, 9999, 9999, 9999, 9999, 9900), 10,
			"-99999999999999999999999999999999999999"},
	}
	for _, tt := range tests {
		small, wide, err := decodeNumeric(tt.b, tt.scale)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := big.NewInt(small)
		if wide != nil {
			got = wide
		}
		if got.String() != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
	for _, sign := range []uint16{numericNaN, numericPInf, numericNInf} {
		var u *unstorableError
		if _, _, err := decodeNumeric(numericBytes(0, sign, 0), 2); !errors.As(err, &u) {
			t.Errorf("sign %#x: err = %v, want an unstorableError", sign, err)
		}
	}
	if _, _, err := decodeNumeric(numericBytes(-1, numericPos, 4, 1), 2); err == nil {
		t.Error("0.0001 at scale 2 decoded without an error")
	}
	if _, _, err := decodeNumeric(numericBytes(10, numericPos, 0, 1), 0); err == nil {
		t.Error("10^40 decoded without an error")
	}
}

func ptr[T any](v T) *T { return &v }

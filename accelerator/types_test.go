package accelerator

import (
	"encoding/binary"
	"errors"
	"math/big"
	"testing"
)

func TestDuckDBType_MapsEachPostgresType(t *testing.T) {
	numeric := func(p, s int) int32 { return int32(p<<16|s&0x7ff) + 4 }
	tests := []struct {
		c    ColumnSpec
		want string // "" = not accelerated
	}{
		{ColumnSpec{TypeOID: oidBool, TypeMod: -1}, "BOOLEAN"},
		{ColumnSpec{TypeOID: oidInt2, TypeMod: -1}, "SMALLINT"},
		{ColumnSpec{TypeOID: oidInt4, TypeMod: -1}, "INTEGER"},
		{ColumnSpec{TypeOID: oidInt8, TypeMod: -1}, "BIGINT"},
		{ColumnSpec{TypeOID: oidFloat4, TypeMod: -1}, "FLOAT"},
		{ColumnSpec{TypeOID: oidFloat8, TypeMod: -1}, "DOUBLE"},
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: numeric(12, 2)}, "DECIMAL(12,2)"},
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: numeric(38, 38)}, "DECIMAL(38,38)"},
		// Numerics a DECIMAL cannot hold: numeric_out's text.
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: -1}, "VARCHAR"}, // no value to take a scale from
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: -1, HeldScale: ptr(2)}, "DECIMAL(38,2)"},
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: -1, HeldScale: ptr(2), NumericText: true}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: numeric(12, 2), NumericText: true}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: numeric(39, 2)}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: numeric(5, -2)}, "VARCHAR"}, // PG 15+ negative scale
		{ColumnSpec{TypeOID: oidNumeric, TypeMod: numeric(2, 5)}, "VARCHAR"},  // scale above precision
		{ColumnSpec{TypeOID: oidText, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidVarchar, TypeMod: 14}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidName, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidBpchar, TypeMod: 9}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidJSON, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidJSONB, TypeMod: -1}, "VARCHAR"},
		{ColumnSpec{TypeOID: oidBytea, TypeMod: -1}, "BLOB"},
		{ColumnSpec{TypeOID: oidDate, TypeMod: -1}, "DATE"},
		{ColumnSpec{TypeOID: oidTime, TypeMod: -1}, "TIME"},
		{ColumnSpec{TypeOID: oidTimestamp, TypeMod: 3}, "TIMESTAMP"},
		{ColumnSpec{TypeOID: oidTimestamptz, TypeMod: -1}, "TIMESTAMPTZ"},
		{ColumnSpec{TypeOID: oidInterval, TypeMod: -1}, "INTERVAL"},
		{ColumnSpec{TypeOID: oidUUID, TypeMod: -1}, "UUID"},
		{ColumnSpec{TypeOID: 1007, TypeMod: -1, ElemOID: oidInt4}, "INTEGER[]"},
		{ColumnSpec{TypeOID: 1231, TypeMod: numeric(10, 2), ElemOID: oidNumeric}, "DECIMAL(10,2)[]"},
		{ColumnSpec{TypeOID: 1231, TypeMod: -1, ElemOID: oidNumeric}, "BLOB"}, // array_send's form (ArrayBinary)
		{ColumnSpec{TypeOID: 1007, TypeMod: -1, ElemOID: oidInt4, ArrayBinary: true}, "BLOB"},
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

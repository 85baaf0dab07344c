package encode

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Canonical NaN bit patterns: what Postgres stores for the input 'NaN'.
const (
	float8NaN = 0x7ff8000000000000
	float4NaN = 0x7fc00000
)

// appendFloat appends a float4 or float8 value.
//
// Text is float4out/float8out. NaN, Infinity and -Infinity are spelled so.
// With extra_float_digits > 0 the output is Postgres's Ryu (see ryu.go):
// the shortest decimal strictly inside the rounding interval, in fixed
// notation when the decimal exponent is in [-4, 15) for float8 and [-4, 6)
// for float4, else as d.ddde±XX with at least two exponent digits. With extra_float_digits <= 0 it is C's
// %.*g with 15+efd (float8) or 6+efd (float4) significant digits, at least 1.
//
// Binary is the IEEE 754 bits, big-endian; every NaN is sent as the
// canonical quiet NaN Postgres stores for 'NaN' (duckdb-go does not preserve
// a NaN's sign or payload in a way Postgres would).
func appendFloat(dst []byte, c *column, v any) ([]byte, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		if c.kind == kindFloat4 {
			return nil, wrongValue(v, "real")
		}
		f = x
	case float32:
		if c.kind == kindFloat4 {
			return appendFloat4(dst, c, x), nil
		}
		f = float64(x)
	default:
		n, ok := toInt64(v)
		if !ok || c.kind == kindFloat4 || n > 1<<53 || n < -(1<<53) {
			return nil, fmt.Errorf("%w: a DuckDB %T value that is not exactly a Postgres double precision", ErrUnsupported, v)
		}
		f = float64(n)
	}
	if c.binary {
		bits := math.Float64bits(f)
		if f != f {
			bits = float8NaN
		}
		return binary.BigEndian.AppendUint64(dst, bits), nil
	}
	return appendFloatText(dst, f, 64, c.f.efd), nil
}

func appendFloat4(dst []byte, c *column, f float32) []byte {
	if c.binary {
		bits := math.Float32bits(f)
		if f != f {
			bits = float4NaN
		}
		return binary.BigEndian.AppendUint32(dst, bits)
	}
	return appendFloatText(dst, float64(f), 32, c.f.efd)
}

// appendFloatText appends f (a float32 widened when bitSize is 32) as
// float4out or float8out print it.
func appendFloatText(dst []byte, f float64, bitSize, efd int) []byte {
	switch {
	case f != f:
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	if efd <= 0 {
		digits := 15 // DBL_DIG
		if bitSize == 32 {
			digits = 6 // FLT_DIG
		}
		return strconv.AppendFloat(dst, f, 'g', max(digits+efd, 1), 64)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, '-', '0')
		}
		return append(dst, '0')
	}
	return appendShortest(dst, f, bitSize)
}

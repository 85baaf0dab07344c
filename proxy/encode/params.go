package encode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// DecodeParam decodes one Bind parameter of Postgres type oid, sent in
// format (0 text, 1 binary), into a Go value for DuckDB. nil data is SQL
// NULL and yields nil.
//
// The Go types are: bool; int16, int32, int64 (int2, int4, int8); float32,
// float64; duckdb.Decimal (numeric, with the scale Postgres would keep);
// string (text, varchar, bpchar without trailing spaces, name, json, jsonb
// in Postgres's jsonb text form); []byte (bytea); duckdb.UUID; time.Time in
// UTC (date at midnight, time on 0001-01-01, timestamp as wall clock,
// timestamptz as the instant); duckdb.Interval; []any for arrays.
//
// Text input is decoded for the forms Postgres itself prints (under the
// session's DateStyle order MDY or DMY, IntervalStyle other than
// sql_standard, any extra_float_digits and bytea_output) and the common
// variants (white space, signs, exponents, 'T' separators, numeric zone
// offsets). Other spellings Postgres accepts (month names, the YMD order,
// zone names, 'epoch', 'today', numeric NaN and Infinity, fractional
// interval units other than seconds, SQL-standard interval forms, hex
// floats...) return ErrUnsupported, as do values DuckDB cannot hold or
// duckdb-go cannot bind (±infinity dates and timestamps, time 24:00:00,
// timestamps after 294246, numerics wider than 38 digits, arrays with NULL
// elements or more than one dimension). Input Postgres rejects also returns
// ErrUnsupported: the origin then reports its own error. Use BindArg to
// pass the value to duckdb-go.
func DecodeParam(oid uint32, format int16, data []byte, s *Settings) (any, error) {
	if data == nil {
		return nil, nil
	}
	info, ok := types[oid]
	if !ok || info.kind == kindInet && info.elem != 0 {
		return nil, fmt.Errorf("%w: parameter type OID %d is not decoded", ErrUnsupported, oid)
	}
	f := decodeCtx{}
	if s != nil {
		var err error
		if f.format, err = s.format(); err != nil {
			return nil, err
		}
		f.ok = true
	}
	var v any
	var err error
	switch format {
	case 0:
		if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			return nil, fmt.Errorf("%w: text parameter is not valid UTF-8", ErrUnsupported)
		}
		if info.elem != 0 {
			v, err = decodeArrayText(info.elem, string(data), &f)
		} else {
			v, err = decodeText(oid, info.kind, string(data), &f)
		}
	case 1:
		if info.elem != 0 {
			v, err = decodeArrayBinary(info.elem, data)
		} else {
			v, err = decodeBinary(oid, info.kind, data)
		}
	default:
		return nil, fmt.Errorf("%w: parameter format %d", ErrUnsupported, format)
	}
	if err != nil {
		return nil, fmt.Errorf("%s parameter: %w", info.name, err)
	}
	return v, nil
}

// decodeCtx is the decoding context: the session's settings, if known.
type decodeCtx struct {
	format
	ok bool
}

// errBadInput is the reason for input Postgres would reject or that this
// package does not decode.
var errBadInput = fmt.Errorf("%w: input not decoded exactly", ErrUnsupported)

// decodeBinary decodes the binary (…recv) form of a scalar.
func decodeBinary(oid uint32, k kind, b []byte) (any, error) {
	need := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("%w: %d bytes, want %d", errBadInput, len(b), n)
		}
		return nil
	}
	switch k {
	case kindBool:
		if err := need(1); err != nil {
			return nil, err
		}
		return b[0] != 0, nil
	case kindInt2:
		if err := need(2); err != nil {
			return nil, err
		}
		return int16(binary.BigEndian.Uint16(b)), nil
	case kindInt4:
		if err := need(4); err != nil {
			return nil, err
		}
		return int32(binary.BigEndian.Uint32(b)), nil
	case kindInt8:
		if err := need(8); err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint64(b)), nil
	case kindFloat4:
		if err := need(4); err != nil {
			return nil, err
		}
		bits := binary.BigEndian.Uint32(b)
		if f := math.Float32frombits(bits); f != f && bits != float4NaN {
			return nil, errNaNBits
		}
		return math.Float32frombits(bits), nil
	case kindFloat8:
		if err := need(8); err != nil {
			return nil, err
		}
		bits := binary.BigEndian.Uint64(b)
		if f := math.Float64frombits(bits); f != f && bits != float8NaN {
			return nil, errNaNBits
		}
		return math.Float64frombits(bits), nil
	case kindNumeric:
		return decodeNumericBinary(b)
	case kindText, kindBpchar, kindJSONB:
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			return nil, fmt.Errorf("%w: not valid UTF-8", errBadInput)
		}
		if k == kindJSONB {
			if len(b) == 0 || b[0] != jsonbVersion {
				return nil, fmt.Errorf("%w: unknown jsonb version", errBadInput)
			}
			return canonicalJSONB(string(b[1:]))
		}
		return textValue(oid, string(b))
	case kindBytea:
		return append([]byte{}, b...), nil
	case kindInet:
		return inetParamBinary(b, oid == pgdef.OIDCidr)
	case kindUUID:
		if err := need(16); err != nil {
			return nil, err
		}
		return duckdb.UUID(b), nil
	case kindDate:
		if err := need(4); err != nil {
			return nil, err
		}
		return dateFromDays(int64(int32(binary.BigEndian.Uint32(b))))
	case kindTime:
		if err := need(8); err != nil {
			return nil, err
		}
		return timeFromMicros(int64(binary.BigEndian.Uint64(b)))
	case kindTimestamp, kindTimestamptz:
		if err := need(8); err != nil {
			return nil, err
		}
		return timestampFromMicros(int64(binary.BigEndian.Uint64(b)))
	case kindInterval:
		if err := need(16); err != nil {
			return nil, err
		}
		return duckdb.Interval{
			Micros: int64(binary.BigEndian.Uint64(b)),
			Days:   int32(binary.BigEndian.Uint32(b[8:])),
			Months: int32(binary.BigEndian.Uint32(b[12:])),
		}, nil
	}
	return nil, errBadInput
}

// textValue finishes a text-like value: bpchar loses its trailing spaces
// (accelerations store character(n) trimmed, and Postgres compares bpchar
// ignoring them); a name longer than 63 bytes is refused (Postgres
// truncates or rejects it). json is validated by the caller.
func textValue(oid uint32, s string) (any, error) {
	switch oid {
	case pgdef.OIDBpchar:
		return strings.TrimRight(s, " "), nil
	case pgdef.OIDName:
		if len(s) > 63 {
			return nil, fmt.Errorf("%w: name longer than 63 bytes", errBadInput)
		}
	case pgdef.OIDJSON:
		if !validJSON(s) {
			return nil, fmt.Errorf("%w: not JSON Postgres accepts", errBadInput)
		}
	}
	return s, nil
}

// dateFromDays converts a binary date (days since 2000-01-01).
func dateFromDays(days int64) (any, error) {
	if days < pgMinDays || days >= pgEndDays {
		return nil, fmt.Errorf("%w: date out of range or infinite", errBadInput)
	}
	return time.Unix((days+pgEpochDays)*86400, 0).UTC(), nil
}

// timeFromMicros converts a binary time; 24:00:00 cannot be bound.
func timeFromMicros(us int64) (any, error) {
	if us < 0 || us >= microsDay {
		return nil, fmt.Errorf("%w: time out of range or 24:00:00", errBadInput)
	}
	return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(us) * time.Microsecond), nil
}

// errNaNBits: a NaN other than the one Postgres stores for 'NaN' (say
// '-nan') would not survive DuckDB and the encoder.
var errNaNBits = fmt.Errorf("%w: NaN with a sign or payload", errBadInput)

// duckMaxMicros bounds timestamps duckdb-go can bind (years up to 294246;
// DuckDB itself holds up to 294247-01-10), in microseconds since 1970.
const duckMaxMicros = 9223371244800000000 - 1 // 294247-01-01 00:00:00 UTC

// timestampFromMicros converts a binary timestamp (µs since 2000-01-01).
func timestampFromMicros(us int64) (any, error) {
	if us < pgMinMicros || us >= pgEndMicros || us > duckMaxMicros-pgEpochMicros {
		return nil, fmt.Errorf("%w: timestamp out of range or infinite", errBadInput)
	}
	return time.UnixMicro(us + pgEpochMicros).UTC(), nil
}

// decodeNumericBinary decodes numeric_recv's format, truncating digits
// hidden by dscale as Postgres does.
func decodeNumericBinary(b []byte) (any, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: short numeric", errBadInput)
	}
	ndigits := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*ndigits || dscale > 0x3fff || (sign != numericPos && sign != numericNeg) {
		return nil, fmt.Errorf("%w: numeric NaN, infinity or malformed", errBadInput)
	}
	if ndigits > 64 || dscale > 38 {
		return nil, fmt.Errorf("%w: numeric wider than DECIMAL(38)", errBadInput)
	}
	// value = sum(d[i] * 10000^(weight-i)); unscaled = value * 10^dscale,
	// truncated toward zero.
	v := new(big.Int)
	tenK := big.NewInt(10000)
	for i := 0; i < ndigits; i++ {
		d := binary.BigEndian.Uint16(b[8+2*i:])
		if d >= 10000 {
			return nil, fmt.Errorf("%w: numeric digit %d", errBadInput, d)
		}
		v.Mul(v, tenK)
		v.Add(v, big.NewInt(int64(d)))
	}
	// v now holds value * 10000^(ndigits-1-weight).
	exp10 := 4*(ndigits-1-weight) - dscale // v = unscaled * 10^exp10
	if exp10 > 4*ndigits {
		v.SetInt64(0) // every digit is hidden by dscale
	} else if exp10 > 0 {
		v.Quo(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp10)), nil))
	} else if exp10 < 0 {
		if -exp10 > 200 {
			return nil, fmt.Errorf("%w: numeric too wide", errBadInput)
		}
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp10)), nil))
	}
	if sign == numericNeg {
		v.Neg(v)
	}
	return makeDecimal(v, dscale)
}

// makeDecimal builds a duckdb.Decimal of the narrowest width that holds v
// at scale, or ErrUnsupported beyond DuckDB's 38 digits.
func makeDecimal(v *big.Int, scale int) (any, error) {
	digits := len(new(big.Int).Abs(v).String())
	width := max(digits, scale, 1)
	if width > 38 || scale > 38 {
		return nil, fmt.Errorf("%w: numeric wider than DECIMAL(38)", errBadInput)
	}
	return duckdb.Decimal{Width: uint8(width), Scale: uint8(scale), Value: v}, nil
}

// decodeArrayBinary decodes array_recv's format for a one-dimensional
// array with lower bound 1 and no NULL elements.
func decodeArrayBinary(elem uint32, b []byte) (any, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("%w: short array", errBadInput)
	}
	ndim := binary.BigEndian.Uint32(b)
	elemOID := binary.BigEndian.Uint32(b[8:])
	if elemOID != elem {
		return nil, fmt.Errorf("%w: array of OID %d, want %d", errBadInput, elemOID, elem)
	}
	if ndim == 0 {
		if len(b) != 12 {
			return nil, fmt.Errorf("%w: trailing bytes", errBadInput)
		}
		return []any{}, nil
	}
	if ndim != 1 || len(b) < 20 {
		return nil, fmt.Errorf("%w: only one-dimensional arrays are decoded", errBadInput)
	}
	n := int(int32(binary.BigEndian.Uint32(b[12:])))
	if lb := int32(binary.BigEndian.Uint32(b[16:])); lb != 1 || n < 0 {
		return nil, fmt.Errorf("%w: array lower bound %d", errBadInput, lb)
	}
	k := types[elem].kind
	out := make([]any, 0, min(n, len(b)/4))
	b = b[20:]
	for i := 0; i < n; i++ {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: short array", errBadInput)
		}
		l := int(int32(binary.BigEndian.Uint32(b)))
		b = b[4:]
		if l < 0 {
			return nil, errNullElement
		}
		if l > len(b) {
			return nil, fmt.Errorf("%w: short array", errBadInput)
		}
		v, err := decodeBinary(elem, k, b[:l])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		b = b[l:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errBadInput)
	}
	return out, nil
}

// errNullElement: duckdb-go v2 panics when it binds a list with a NULL.
var errNullElement = fmt.Errorf("%w: arrays with NULL elements cannot be bound by duckdb-go", ErrUnsupported)

// duckParamTypes maps Postgres scalar types to the DuckDB type of a bound
// parameter.
var duckParamTypes = map[uint32]string{
	pgdef.OIDBool: "BOOLEAN", pgdef.OIDInt2: "SMALLINT", pgdef.OIDInt4: "INTEGER", pgdef.OIDInt8: "BIGINT",
	pgdef.OIDFloat4: "FLOAT", pgdef.OIDFloat8: "DOUBLE", pgdef.OIDText: "VARCHAR", pgdef.OIDVarchar: "VARCHAR",
	pgdef.OIDBpchar: "VARCHAR", pgdef.OIDName: "VARCHAR", pgdef.OIDJSON: "VARCHAR", pgdef.OIDJSONB: "VARCHAR",
	pgdef.OIDBytea: "BLOB", pgdef.OIDUUID: "UUID", pgdef.OIDDate: "DATE", pgdef.OIDTime: "TIME",
	pgdef.OIDTimestamp: "TIMESTAMP", pgdef.OIDTimestamptz: "TIMESTAMPTZ", pgdef.OIDInterval: "INTERVAL",
	pgdef.OIDInet: "VARCHAR", pgdef.OIDCidr: "VARCHAR",
}

// BindArg adapts v, a value DecodeParam returned for a parameter of type
// oid, to duckdb-go v2, and returns the SQL to write in place of the
// parameter: "CAST(? AS type)", with the exact type so that DuckDB neither
// infers another type from the context nor rounds (binding "1.005" to a
// parameter DuckDB infers as DECIMAL(10,2) would round it).
//
// duckdb-go cannot bind duckdb.Decimal or duckdb.UUID values, lists of
// DECIMAL or BLOB, or lists with NULL elements (it panics): decimals are
// bound as strings and cast, bytea lists as hex strings converted with
// unhex, and lists with NULLs are refused.
func BindArg(oid uint32, v any) (arg any, placeholder string, err error) {
	info, ok := types[oid]
	if !ok {
		return nil, "", fmt.Errorf("%w: parameter type OID %d", ErrUnsupported, oid)
	}
	if info.elem == 0 {
		return bindScalar(oid, v)
	}
	list, ok := v.([]any)
	if v == nil {
		list, ok = []any{}, true
	}
	if !ok {
		return nil, "", fmt.Errorf("%w: %T for an array parameter", ErrUnsupported, v)
	}
	out := make([]any, len(list))
	switch info.kind {
	case kindNumeric:
		// A DuckDB list has one scale; Postgres keeps one per element.
		scale, intDigits := -1, 1
		for i, el := range list {
			d, ok := el.(duckdb.Decimal)
			if !ok {
				return nil, "", fmt.Errorf("%w: %T in a numeric array", ErrUnsupported, el)
			}
			if scale >= 0 && int(d.Scale) != scale {
				return nil, "", fmt.Errorf("%w: numeric array elements with different scales", ErrUnsupported)
			}
			scale = int(d.Scale)
			intDigits = max(intDigits, int(d.Width)-int(d.Scale))
			out[i] = d.String()
		}
		scale = max(scale, 0)
		if scale+intDigits > 38 {
			return nil, "", fmt.Errorf("%w: numeric array wider than DECIMAL(38)", ErrUnsupported)
		}
		return out, fmt.Sprintf("CAST(CAST(? AS VARCHAR[]) AS DECIMAL(%d,%d)[])", scale+intDigits, scale), nil
	case kindBytea:
		for i, el := range list {
			b, ok := el.([]byte)
			if !ok {
				return nil, "", fmt.Errorf("%w: %T in a bytea array", ErrUnsupported, el)
			}
			out[i] = fmt.Sprintf("%X", b)
		}
		return out, "list_transform(CAST(? AS VARCHAR[]), x -> unhex(x))", nil
	case kindUUID:
		// duckdb-go corrupts UUIDs in lists (it flips the top bit): bind text.
		for i, el := range list {
			u, ok := el.(duckdb.UUID)
			if !ok {
				return nil, "", fmt.Errorf("%w: %T in a uuid array", ErrUnsupported, el)
			}
			out[i] = u.String()
		}
		return out, "CAST(CAST(? AS VARCHAR[]) AS UUID[])", nil
	}
	for i, el := range list {
		if el == nil {
			return nil, "", errNullElement
		}
		if err := checkGoType(info.kind, el); err != nil {
			return nil, "", err
		}
		out[i] = el
	}
	return out, "CAST(? AS " + duckParamTypes[info.elem] + "[])", nil
}

// bindScalar is BindArg for a scalar.
func bindScalar(oid uint32, v any) (any, string, error) {
	switch x := v.(type) {
	case nil:
		if oid == pgdef.OIDNumeric {
			return nil, "CAST(? AS DECIMAL(38,0))", nil
		}
	case duckdb.Decimal:
		return x.String(), fmt.Sprintf("CAST(? AS DECIMAL(%d,%d))", x.Width, x.Scale), nil
	case duckdb.UUID:
		return x.String(), "CAST(? AS UUID)", nil
	default:
		if err := checkGoType(types[oid].kind, v); err != nil {
			return nil, "", err
		}
	}
	return v, "CAST(? AS " + duckParamTypes[oid] + ")", nil
}

// checkGoType guards duckdb-go's list binding, which type-asserts (and
// panics on) the exact Go type of each element.
func checkGoType(k kind, v any) error {
	ok := false
	switch k {
	case kindBool:
		_, ok = v.(bool)
	case kindInt2:
		_, ok = v.(int16)
	case kindInt4:
		_, ok = v.(int32)
	case kindInt8:
		_, ok = v.(int64)
	case kindFloat4:
		_, ok = v.(float32)
	case kindFloat8:
		_, ok = v.(float64)
	case kindText, kindBpchar, kindJSONB, kindInet:
		_, ok = v.(string)
	case kindBytea:
		_, ok = v.([]byte)
	case kindUUID:
		_, ok = v.(duckdb.UUID)
	case kindDate, kindTime, kindTimestamp, kindTimestamptz:
		_, ok = v.(time.Time)
	case kindInterval:
		_, ok = v.(duckdb.Interval)
	}
	if !ok {
		return fmt.Errorf("%w: Go %T for this parameter type", ErrUnsupported, v)
	}
	return nil
}

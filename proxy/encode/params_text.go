package encode

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// isSpace is C's isspace in the C locale, which Postgres's input functions
// use to skip white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// decodeText decodes the text (…in) form of a scalar.
func decodeText(oid uint32, k kind, s string, f *decodeCtx) (any, error) {
	switch k {
	case kindBool:
		return parseBool(s)
	case kindInt2:
		n, err := parseInt(s, math.MinInt16, math.MaxInt16)
		return int16(n), err
	case kindInt4:
		n, err := parseInt(s, math.MinInt32, math.MaxInt32)
		return int32(n), err
	case kindInt8:
		return parseInt(s, math.MinInt64, math.MaxInt64)
	case kindFloat4:
		x, err := parseFloat(s, 32)
		return float32(x), err
	case kindFloat8:
		return parseFloat(s, 64)
	case kindNumeric:
		return parseNumeric(s)
	case kindText, kindBpchar:
		return textValue(oid, s)
	case kindInet:
		return inetParamText(s, oid == pgdef.OIDCidr)
	case kindJSONB:
		return canonicalJSONB(s)
	case kindBytea:
		return parseBytea(s)
	case kindUUID:
		return parseUUID(s)
	case kindDate:
		return parseDate(s, f)
	case kindTime:
		return parseTime(s)
	case kindTimestamp, kindTimestamptz:
		return parseTimestamp(s, k == kindTimestamptz, f)
	case kindInterval:
		return parseInterval(s, f)
	}
	return nil, errBadInput
}

// parseBool is boolin: white space around a case-insensitive prefix of
// true, false, yes or no, or on, off (at least two letters), 1 or 0.
func parseBool(s string) (any, error) {
	v := strings.ToLower(trimSpace(s))
	switch {
	case v == "":
	case v == "1":
		return true, nil
	case v == "0":
		return false, nil
	case v[0] == 't' && strings.HasPrefix("true", v), v[0] == 'y' && strings.HasPrefix("yes", v):
		return true, nil
	case v[0] == 'f' && strings.HasPrefix("false", v), v[0] == 'n' && strings.HasPrefix("no", v):
		return false, nil
	case v == "on":
		return true, nil
	case len(v) >= 2 && strings.HasPrefix("off", v):
		return false, nil
	}
	return nil, fmt.Errorf("%w: not a boolean", errBadInput)
}

// parseInt is pg_strtoint16/32/64 of Postgres 15: white space, an optional
// sign, decimal digits, white space.
func parseInt(s string, lo, hi int64) (int64, error) {
	v := trimSpace(s)
	neg := false
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg = v[0] == '-'
		v = v[1:]
	}
	if v == "" {
		return 0, fmt.Errorf("%w: not an integer", errBadInput)
	}
	var mag uint64
	for i := 0; i < len(v); i++ {
		if !isDigit(v[i]) || mag > (math.MaxUint64-9)/10 {
			return 0, fmt.Errorf("%w: not an integer", errBadInput)
		}
		mag = mag*10 + uint64(v[i]-'0')
	}
	if neg {
		if mag > uint64(-lo) {
			return 0, fmt.Errorf("%w: integer out of range", errBadInput)
		}
		return -int64(mag), nil
	}
	if mag > uint64(hi) {
		return 0, fmt.Errorf("%w: integer out of range", errBadInput)
	}
	return int64(mag), nil
}

// scanDecimal checks the decimal number syntax [+-]digits[.digits][e[+-]digits]
// (with digits on at least one side of the point) and reports whether any
// mantissa digit is non-zero.
func scanDecimal(v string) (ok, nonZero bool) {
	i := 0
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(v) && isDigit(v[i]); i++ {
		digits++
		nonZero = nonZero || v[i] != '0'
	}
	if i < len(v) && v[i] == '.' {
		for i++; i < len(v) && isDigit(v[i]); i++ {
			digits++
			nonZero = nonZero || v[i] != '0'
		}
	}
	if digits == 0 {
		return false, false
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		start := i
		for i < len(v) && isDigit(v[i]) {
			i++
		}
		if i == start {
			return false, false
		}
	}
	return i == len(v), nonZero
}

// parseFloat is float4in/float8in: white space, then NaN, [+-]Infinity,
// [+-]inf or a decimal number, correctly rounded like glibc's strtod.
// Values that overflow, or underflow to zero, are errors in Postgres.
func parseFloat(s string, bitSize int) (float64, error) {
	v := trimSpace(s)
	switch strings.ToLower(v) {
	case "nan", "+nan":
		return math.NaN(), nil
	case "infinity", "+infinity", "inf", "+inf":
		return math.Inf(1), nil
	case "-infinity", "-inf":
		return math.Inf(-1), nil
	}
	ok, nonZero := scanDecimal(v)
	if !ok {
		return 0, fmt.Errorf("%w: not a decimal floating-point number", errBadInput)
	}
	x, err := strconv.ParseFloat(v, bitSize)
	if err != nil || math.IsInf(x, 0) || (x == 0 && nonZero) {
		return 0, fmt.Errorf("%w: floating-point number out of range", errBadInput)
	}
	return x, nil
}

// parseNumeric is numeric_in for finite values: white space, sign, digits
// with an optional point, an optional exponent. The display scale is the
// number of decimals minus the exponent, at least 0.
func parseNumeric(s string) (any, error) {
	v := trimSpace(s)
	if ok, _ := scanDecimal(v); !ok {
		return nil, fmt.Errorf("%w: not a finite numeric", errBadInput)
	}
	neg := v[0] == '-'
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	exp := 0
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		e, err := strconv.Atoi(v[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return nil, fmt.Errorf("%w: numeric exponent out of the decoded range", errBadInput)
		}
		exp, v = e, v[:i]
	}
	intPart, frac, _ := strings.Cut(v, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if len(digits) > 80 {
		return nil, fmt.Errorf("%w: numeric wider than DECIMAL(38)", errBadInput)
	}
	u := new(big.Int)
	if digits != "" {
		u.SetString(digits, 10)
	}
	// value = u * 10^(exp - len(frac)); unscaled at scale = u * 10^(exp-len(frac)+scale).
	scale := max(len(frac)-exp, 0)
	if shift := exp - len(frac) + scale; shift > 0 {
		if shift > 80 {
			return nil, fmt.Errorf("%w: numeric wider than DECIMAL(38)", errBadInput)
		}
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	}
	if neg {
		u.Neg(u)
	}
	return makeDecimal(u, scale)
}

// unhex returns the value of a hex digit, or -1.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// parseBytea is byteain: \x followed by hex digit pairs (white space
// allowed between pairs), or the escape format (\\, \ooo, other bytes).
func parseBytea(s string) (any, error) {
	out := []byte{}
	if strings.HasPrefix(s, `\x`) {
		for i := 2; i < len(s); {
			if c := s[i]; c == ' ' || c == '\n' || c == '\t' || c == '\r' {
				i++
				continue
			}
			if i+1 >= len(s) || unhex(s[i]) < 0 || unhex(s[i+1]) < 0 {
				return nil, fmt.Errorf("%w: bytea hex", errBadInput)
			}
			out = append(out, byte(unhex(s[i])<<4|unhex(s[i+1])))
			i += 2
		}
		return out, nil
	}
	for i := 0; i < len(s); {
		switch {
		case s[i] != '\\':
			out = append(out, s[i])
			i++
		case i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && s[i+2] >= '0' && s[i+2] <= '7' && s[i+3] >= '0' && s[i+3] <= '7':
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i += 2
		default:
			return nil, fmt.Errorf("%w: bytea escape", errBadInput)
		}
	}
	return out, nil
}

// parseUUID is uuid_in: 32 hex digits, optionally in braces, with an
// optional hyphen after each group of four digits.
func parseUUID(s string) (any, error) {
	src := s
	braces := strings.HasPrefix(src, "{")
	if braces {
		src = src[1:]
	}
	var u [16]byte
	for i := 0; i < 16; i++ {
		if len(src) < 2 || unhex(src[0]) < 0 || unhex(src[1]) < 0 {
			return nil, fmt.Errorf("%w: not a uuid", errBadInput)
		}
		u[i] = byte(unhex(src[0])<<4 | unhex(src[1]))
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < 15 {
			src = src[1:]
		}
	}
	if braces {
		if !strings.HasPrefix(src, "}") {
			return nil, fmt.Errorf("%w: not a uuid", errBadInput)
		}
		src = src[1:]
	}
	if src != "" {
		return nil, fmt.Errorf("%w: not a uuid", errBadInput)
	}
	return duckdb.UUID(u), nil
}

// decodeArrayText is array_in for a one-dimensional array without a
// dimension decoration and without NULL elements.
func decodeArrayText(elem uint32, s string, f *decodeCtx) (any, error) {
	k := types[elem].kind
	bad := func(why string) error { return fmt.Errorf("%w: array %s", errBadInput, why) }
	i := 0
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	skip()
	if i >= len(s) || s[i] != '{' {
		return nil, bad("without {, or with dimensions")
	}
	i++
	out := []any{}
	skip()
	if i < len(s) && s[i] == '}' {
		i++
		skip()
		if i != len(s) {
			return nil, bad("with trailing text")
		}
		return out, nil
	}
	var el strings.Builder
	for {
		skip()
		if i >= len(s) {
			return nil, bad("unterminated")
		}
		el.Reset()
		quoted := false
		switch s[i] {
		case '{':
			return nil, bad("with more than one dimension")
		case '"':
			quoted = true
			for i++; ; i++ {
				if i >= len(s) {
					return nil, bad("unterminated quote")
				}
				if s[i] == '\\' {
					i++
					if i >= len(s) {
						return nil, bad("unterminated quote")
					}
				} else if s[i] == '"' {
					i++
					break
				}
				el.WriteByte(s[i])
			}
			skip()
		default:
			keep := 0 // length of el up to the last escaped or non-space byte
			for ; i < len(s) && s[i] != ',' && s[i] != '}'; i++ {
				switch c := s[i]; {
				case c == '\\':
					i++
					if i >= len(s) {
						return nil, bad("unterminated escape")
					}
					quoted = true // an escaped element is never NULL
					el.WriteByte(s[i])
					keep = el.Len()
				case c == '"' || c == '{':
					return nil, bad("with an unexpected character")
				default:
					el.WriteByte(c)
					if !isSpace(c) {
						keep = el.Len()
					}
				}
			}
			if keep == 0 {
				return nil, bad("with an empty element")
			}
			txt := el.String()[:keep]
			el.Reset()
			el.WriteString(txt)
		}
		if i >= len(s) || (s[i] != ',' && s[i] != '}') {
			return nil, bad("with text after a quoted element")
		}
		if !quoted && strings.EqualFold(el.String(), "NULL") {
			return nil, errNullElement
		}
		v, err := decodeText(elem, k, el.String(), f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if s[i] == '}' {
			i++
			break
		}
		i++
	}
	skip()
	if i != len(s) {
		return nil, bad("with trailing text")
	}
	return out, nil
}

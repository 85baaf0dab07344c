package encode

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Postgres numeric sign words of the binary format.
const (
	numericPos = 0x0000
	numericNeg = 0x4000
)

// decimalDigits is an exact decimal: the digits of |unscaled| (no leading
// zeros; "0" for zero), pad zeros appended after them, and the number of
// those digits (pad included) after the decimal point.
type decimalDigits struct {
	neg    bool
	digits []byte
	pad    int
	scale  int
}

// appendNumeric appends a numeric value from a duckdb.Decimal, a *big.Int
// (HUGEINT) or a Go integer.
//
// Text is numeric_out: an optional '-', the integer digits ("0" if none),
// and, when the display scale is positive, '.' and exactly that many
// decimals. Zero is never negative. The display scale is the column's typmod
// scale when it has one (the value is padded with zeros or, if only zeros
// are dropped, shortened; dropping a non-zero digit is ErrUnsupported),
// else the DuckDB value's scale.
//
// Binary is numeric_send: int16 ndigits, int16 weight, uint16 sign, int16
// dscale, then ndigits base-10000 digits, with leading and trailing zero
// digits stripped (as Postgres stores every numeric) and weight 0 for zero.
func (e *Encoder) appendNumeric(dst []byte, c *column, v any) ([]byte, error) {
	var (
		d   decimalDigits
		buf [24]byte
	)
	switch n := v.(type) {
	case duckdb.Decimal:
		if n.Value == nil {
			return nil, wrongValue(v, "numeric")
		}
		d.scale = int(n.Scale)
		d.neg, d.digits = e.bigDigits(buf[:0], n.Value)
	case *big.Int:
		if n == nil {
			return nil, wrongValue(v, "numeric")
		}
		d.neg, d.digits = e.bigDigits(buf[:0], n)
	case uint64:
		d.digits = strconv.AppendUint(buf[:0], n, 10)
	case string:
		// numeric_out's text (a numeric held as text, or computed
		// exactly as text): NaN and the infinities as they are.
		if sign, special := numericSpecials[n]; special {
			if c.binary {
				dst = binary.BigEndian.AppendUint16(dst, 0) // ndigits
				dst = binary.BigEndian.AppendUint16(dst, 0) // weight
				dst = binary.BigEndian.AppendUint16(dst, sign)
				// numeric_send's display scale of a special value is
				// what NUMERIC_DSCALE reads from its short header: 0
				// for NaN, 32 for the infinities.
				return binary.BigEndian.AppendUint16(dst, (sign&0x1F80)>>7), nil
			}
			return append(dst, n...), nil
		}
		var ok bool
		if d, ok = textDigits(n, buf[:0]); !ok {
			return nil, fmt.Errorf("%w: %q is not a numeric's text", ErrUnsupported, n)
		}
	default:
		x, ok := toInt64(v)
		if !ok {
			return nil, wrongValue(v, "numeric")
		}
		d.neg, d.digits = intDigits(buf[:0], x)
	}
	if c.scale >= 0 && c.scale != d.scale {
		if err := d.rescale(c.scale); err != nil {
			return nil, err
		}
	}
	if d.isZero() {
		d.neg = false
	}
	if c.binary {
		return d.appendBinary(dst), nil
	}
	return d.appendText(dst), nil
}

// numericSpecials are the texts of numeric's special values and their sign
// words in the binary form (numeric_send sends no digits for them).
var numericSpecials = map[string]uint16{"NaN": 0xC000, "Infinity": 0xD000, "-Infinity": 0xF000}

// textDigits reads a decimal as numeric_out prints it (an optional '-',
// digits, and an optional '.' with digits after it).
func textDigits(s string, buf []byte) (decimalDigits, bool) {
	var d decimalDigits
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || hasDot && frac == "" || len(frac) > 0x3FFF {
		return d, false
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return d, false
			}
			if part[i] == '0' && len(buf) == 0 {
				continue // a leading zero
			}
			buf = append(buf, part[i])
		}
	}
	if len(buf) == 0 {
		buf = append(buf, '0')
	}
	d.digits, d.scale = buf, len(frac)
	return d, true
}

// intDigits returns the sign and the decimal digits of |x|, appended to buf.
func intDigits(buf []byte, x int64) (bool, []byte) {
	if x < 0 {
		return true, strconv.AppendUint(buf, uint64(-x), 10)
	}
	return false, strconv.AppendUint(buf, uint64(x), 10)
}

// bigDigits is intDigits for a *big.Int; values beyond int64 allocate.
func (e *Encoder) bigDigits(buf []byte, x *big.Int) (bool, []byte) {
	if x.IsInt64() {
		return intDigits(buf, x.Int64())
	}
	e.scratch = x.Append(e.scratch[:0], 10)
	if e.scratch[0] == '-' {
		return true, e.scratch[1:]
	}
	return false, e.scratch
}

func (d *decimalDigits) isZero() bool { return len(d.digits) == 1 && d.digits[0] == '0' }

// rescale changes the display scale to ds, exactly or not at all.
func (d *decimalDigits) rescale(ds int) error {
	if ds > d.scale {
		d.pad += ds - d.scale
		d.scale = ds
		return nil
	}
	drop := d.scale - ds
	if !d.isZero() {
		if drop >= len(d.digits) {
			return fmt.Errorf("%w: the value has more decimals than the column's scale %d", ErrUnsupported, ds)
		}
		for _, ch := range d.digits[len(d.digits)-drop:] {
			if ch != '0' {
				return fmt.Errorf("%w: the value has more decimals than the column's scale %d", ErrUnsupported, ds)
			}
		}
		d.digits = d.digits[:len(d.digits)-drop]
	}
	d.scale = ds
	return nil
}

// digit returns the k-th digit (from the left) of digits followed by pad zeros.
func (d *decimalDigits) digit(k int) byte {
	if k >= 0 && k < len(d.digits) {
		return d.digits[k]
	}
	return '0'
}

// appendText appends the numeric_out form.
func (d *decimalDigits) appendText(dst []byte) []byte {
	n := len(d.digits) + d.pad
	if d.neg {
		dst = append(dst, '-')
	}
	if n <= d.scale {
		dst = append(dst, '0')
		if d.scale > 0 {
			dst = append(dst, '.')
			for i := n; i < d.scale; i++ {
				dst = append(dst, '0')
			}
			for k := 0; k < n; k++ {
				dst = append(dst, d.digit(k))
			}
		}
		return dst
	}
	intLen := n - d.scale
	for k := 0; k < intLen; k++ {
		dst = append(dst, d.digit(k))
	}
	if d.scale > 0 {
		dst = append(dst, '.')
		for k := intLen; k < n; k++ {
			dst = append(dst, d.digit(k))
		}
	}
	return dst
}

// floorDiv4 is floor(p / 4) for negative p too.
func floorDiv4(p int) int {
	if p >= 0 {
		return p / 4
	}
	return -((-p + 3) / 4)
}

// appendBinary appends the numeric_send form.
func (d *decimalDigits) appendBinary(dst []byte) []byte {
	first, last := -1, -1
	for k, ch := range d.digits {
		if ch != '0' {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		dst = binary.BigEndian.AppendUint16(dst, 0) // ndigits
		dst = binary.BigEndian.AppendUint16(dst, 0) // weight
		dst = binary.BigEndian.AppendUint16(dst, numericPos)
		return binary.BigEndian.AppendUint16(dst, uint16(d.scale))
	}
	// The digit at index k stands for 10^(intLen-1-k).
	intLen := len(d.digits) + d.pad - d.scale
	top := floorDiv4(intLen - 1 - first)
	bottom := floorDiv4(intLen - 1 - last)
	sign := uint16(numericPos)
	if d.neg {
		sign = numericNeg
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(top-bottom+1))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(top)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(d.scale))
	for g := top; g >= bottom; g-- {
		var group uint16
		for p := 4*g + 3; p >= 4*g; p-- {
			group = group*10 + uint16(d.digit(intLen-1-p)-'0')
		}
		dst = binary.BigEndian.AppendUint16(dst, group)
	}
	return dst
}

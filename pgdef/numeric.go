package pgdef

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// The sign words of numeric's binary form (numeric_send): a finite value's
// sign, NaN, and the infinities (Postgres 14 and later).
const (
	NumericPos  uint16 = 0x0000
	NumericNeg  uint16 = 0x4000
	NumericNaN  uint16 = 0xC000
	NumericPInf uint16 = 0xD000
	NumericNInf uint16 = 0xF000
)

// NumericText prints a numeric of numeric_send's binary form as
// numeric_out does (utils/adt/numeric.c get_str_from_var): an optional
// '-', the integer digits ("0" when there are none), and, when the display
// scale is positive, '.' and exactly that many decimals; "NaN",
// "Infinity" and "-Infinity" for the special values. The binary form is
//
//	int16 ndigits, int16 weight, uint16 sign, int16 dscale, ndigits base-10000 digits
//
// where the first digit stands for 10000^weight. Digits beyond the display
// scale are dropped, as numeric_recv drops them.
func NumericText(b []byte) (string, error) {
	if len(b) < 8 {
		return "", fmt.Errorf("numeric: %d bytes, want at least 8", len(b))
	}
	ndigits := int(int16(binary.BigEndian.Uint16(b[0:])))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(int16(binary.BigEndian.Uint16(b[6:])))
	switch sign {
	case NumericNaN:
		return "NaN", nil
	case NumericPInf:
		return "Infinity", nil
	case NumericNInf:
		return "-Infinity", nil
	case NumericPos, NumericNeg:
	default:
		return "", fmt.Errorf("numeric: sign word %#x", sign)
	}
	if ndigits < 0 || len(b) != 8+2*ndigits {
		return "", fmt.Errorf("numeric: %d bytes for %d digits", len(b), ndigits)
	}
	if dscale < 0 || dscale > 0x3FFF {
		return "", fmt.Errorf("numeric: display scale %d", dscale)
	}
	digit := func(i int) (int, error) {
		if i < 0 || i >= ndigits {
			return 0, nil
		}
		d := int(binary.BigEndian.Uint16(b[8+2*i:]))
		if d >= 10000 {
			return 0, errors.New("numeric: digit out of range")
		}
		return d, nil
	}
	out := make([]byte, 0, 4*(max(weight, 0)+1)+dscale+2)
	nonZero := false
	for i := range ndigits {
		if d, _ := digit(i); d != 0 {
			nonZero = true
			break
		}
	}
	if sign == NumericNeg && nonZero { // a negative zero prints as 0
		out = append(out, '-')
	}
	// The integer part: digit groups 0..weight.
	if weight < 0 {
		out = append(out, '0')
	} else {
		for g := 0; g <= weight; g++ {
			d, err := digit(g)
			if err != nil {
				return "", err
			}
			if g == 0 {
				out = strconv.AppendInt(out, int64(d), 10)
				continue
			}
			out = append(out, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10))
		}
	}
	if dscale > 0 {
		out = append(out, '.')
		// Fraction group k (from 1) is digit index weight+k.
		groups := (dscale + 3) / 4
		for k := 1; k <= groups; k++ {
			d, err := digit(weight + k)
			if err != nil {
				return "", err
			}
			out = append(out, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10))
		}
		// Trim the last group's digits beyond the display scale.
		out = out[:len(out)-4*groups+dscale]
	}
	return string(out), nil
}

// NumericTextScale is the display scale of a numeric printed by
// numeric_out: its number of decimals (0 for NaN and the infinities).
func NumericTextScale(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return len(s) - i - 1
		}
	}
	return 0
}

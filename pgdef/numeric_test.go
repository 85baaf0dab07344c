package pgdef

import (
	"encoding/binary"
	"regexp"
	"testing"
)

// numericBytes is numeric_send's form of the given parts.
func numericBytes(weight int16, sign uint16, dscale int16, digits ...uint16) []byte {
	b := make([]byte, 8, 8+2*len(digits))
	binary.BigEndian.PutUint16(b[0:], uint16(len(digits)))
	binary.BigEndian.PutUint16(b[2:], uint16(weight))
	binary.BigEndian.PutUint16(b[4:], sign)
	binary.BigEndian.PutUint16(b[6:], uint16(dscale))
	for _, d := range digits {
		b = binary.BigEndian.AppendUint16(b, d)
	}
	return b
}

// TestNumericText: numeric_out's forms of the cases get_str_from_var
// singles out (the full comparison with Postgres is integration's
// TestNumericText_MatchesPostgres).
func TestNumericText(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{numericBytes(0, NumericPos, 0), "0"},
		{numericBytes(0, NumericPos, 3), "0.000"},
		{numericBytes(0, NumericNeg, 2), "0.00"}, // no negative zero
		{numericBytes(0, NumericPos, 2, 12, 5000), "12.50"},
		{numericBytes(1, NumericNeg, 0, 1, 2345), "-12345"},
		{numericBytes(-1, NumericPos, 5, 12), "0.00120"},
		{numericBytes(-2, NumericPos, 8, 1), "0.00000001"},
		{numericBytes(0, NumericPos, 1, 7, 1234), "7.1"}, // digits beyond the scale dropped
		{numericBytes(0, NumericNaN, 0), "NaN"},
		{numericBytes(0, NumericPInf, 32), "Infinity"},
		{numericBytes(0, NumericNInf, 32), "-Infinity"},
	} {
		if got, err := NumericText(c.b); err != nil || got != c.want {
			t.Errorf("%x: %q, %v; want %q", c.b, got, err, c.want)
		}
		if got := NumericTextScale(c.want); c.want == "12.50" && got != 2 || c.want == "-12345" && got != 0 {
			t.Errorf("scale of %s: %d", c.want, got)
		}
	}
	for _, bad := range [][]byte{nil, {0, 1}, numericBytes(0, 0x1234, 0), numericBytes(0, NumericPos, 0, 10000), numericBytes(0, NumericPos, -1)} {
		if got, err := NumericText(bad); err == nil {
			t.Errorf("%x: %q, want an error", bad, got)
		}
	}
}

var numericOut = regexp.MustCompile(`^(NaN|-?Infinity|-?[0-9]+(\.[0-9]+)?)$`)

// FuzzNumericText: any bytes give an error or numeric_out's form, never a
// panic.
func FuzzNumericText(f *testing.F) {
	f.Add(numericBytes(0, NumericPos, 2, 12, 5000))
	f.Add(numericBytes(-3, NumericNeg, 20, 1, 9999))
	f.Add(numericBytes(0, NumericNaN, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := NumericText(b)
		if err == nil && !numericOut.MatchString(s) {
			t.Fatalf("%x: %q", b, s)
		}
	})
}

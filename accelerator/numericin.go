package accelerator

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/pgdef"
)

// pgdef.FuncNumericIn and pgdef.FuncNumericInScale read text as Postgres's
// numeric_in does, for a cast of text to an unconstrained numeric
// ((properties ->> 'amount')::numeric):
//
//	pgaccel_numeric_in(VARCHAR) -> DECIMAL(38,24)
//	pgaccel_numeric_in_scale(VARCHAR) -> BIGINT
//
// the value, and the display scale Postgres gives it (the fraction digits
// as written, less a positive exponent's: '1.50' is 1.50, '1.5e3' is
// 1500). DuckDB's own cast rounds digits beyond the type's scale silently;
// these fail instead on text DECIMAL(38,24) cannot hold exactly (more
// than 24 fraction digits or 14 integer digits), on NaN and Infinity and
// on text numeric_in rejects, so the statement falls back to the origin,
// which answers or reports its own error. NULL is NULL.
const (
	numericInScale = 24
)

func numericInRow(values []driver.Value) (any, error) {
	s, ok := values[0].(string)
	if !ok {
		return nil, nil
	}
	v, _, err := NumericIn(s)
	return v, err
}

func numericInScaleRow(values []driver.Value) (any, error) {
	s, ok := values[0].(string)
	if !ok {
		return nil, nil
	}
	_, scale, err := NumericIn(s)
	return int64(scale), err
}

// NumericIn parses s as numeric_in does and returns its value scaled by
// 10^24 and its display scale.
func NumericIn(s string) (*big.Int, int, error) {
	fail := func(why string) (*big.Int, int, error) {
		return nil, 0, fmt.Errorf("%s: %q: %s", pgdef.FuncNumericIn, s, why)
	}
	t := strings.TrimFunc(s, pgSpace)
	neg := false
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
		e := t[i+1:]
		eneg := false
		switch {
		case strings.HasPrefix(e, "-"):
			eneg, e = true, e[1:]
		case strings.HasPrefix(e, "+"):
			e = e[1:]
		}
		if e == "" || len(e) > 4 || strings.ContainsFunc(e, notDigit) {
			return fail("not a decimal Postgres reads exactly here")
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart+frac == "" || strings.ContainsFunc(intPart, notDigit) || strings.ContainsFunc(frac, notDigit) {
		return fail("not a decimal Postgres reads exactly here")
	}
	scale := max(len(frac)-exp, 0)
	if scale > numericInScale {
		return fail("more fraction digits than the acceleration computes exactly")
	}
	// digits × 10^(exp - len(frac)) × 10^24
	v, _ := new(big.Int).SetString(intPart+frac, 10)
	shift := exp - len(frac) + numericInScale
	if shift >= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	} else {
		q, r := new(big.Int).QuoRem(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil), new(big.Int))
		if r.Sign() != 0 {
			return fail("more fraction digits than the acceleration computes exactly")
		}
		v = q
	}
	if v.Cmp(maxDecimal38) > 0 {
		return fail("more integer digits than the acceleration computes exactly")
	}
	if neg {
		v.Neg(v)
	}
	return v, scale, nil
}

// maxDecimal38 is the largest unscaled DECIMAL(38,s) value.
var maxDecimal38 = new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1))

// pgSpace is isspace in the C locale, what numeric_in skips.
func pgSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// pgdef.FuncFloat8NumericText prints a double as float8_numeric does before
// reading it as a numeric: 15 significant digits (DBL_DIG), %g style:
//
//	pgaccel_float8_numeric_text(DOUBLE) -> VARCHAR
//
// so pgaccel_numeric_in of it is CAST(x AS numeric) of a double precision
// (0.1 is 0.1, 1e20 is 100000000000000000000). NaN and infinities, which
// DECIMAL cannot hold, are errors.

func float8NumericTextRow(values []driver.Value) (any, error) {
	v, ok := values[0].(float64)
	if !ok {
		return nil, nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s: %v has no exact numeric in the acceleration", pgdef.FuncFloat8NumericText, v)
	}
	return strconv.FormatFloat(v, 'g', 15, 64), nil
}

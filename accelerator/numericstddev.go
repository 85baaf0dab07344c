package accelerator

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/pgaccel/pgaccel/pgdef"
)

// pgdef.FuncNumericStddev is a DuckDB scalar function that computes
// Postgres's stddev and variance of numerics (and integers, which
// Postgres aggregates as numerics) from exact sums:
//
//	pgaccel_numeric_stddev(CAST(sum(x) AS VARCHAR), CAST(sum(x * x) AS VARCHAR), count(x), kind) -> VARCHAR
//
// kind is stddev_pop, stddev_samp, var_pop or var_samp. It follows
// numeric_stddev_internal (utils/adt/numeric.c): N·Σx² − (Σx)² at twice
// the scale of Σx, zero when that is not positive, else divided by N² or
// N(N−1) at select_div_scale's scale and, for stddev, its square root at
// the same scale, rounded half up. The sums' texts must carry Postgres's
// display scales: the column's scale s for Σx and 2s for Σx² (DuckDB's
// DECIMAL scales for a numeric(p,s) or integer column). NULL for no rows,
// and for one row of a sample.

func numericStddevRow(values []driver.Value) (any, error) {
	sumX, ok1 := values[0].(string)
	sumX2, ok2 := values[1].(string)
	n, ok3 := values[2].(int64)
	kind, ok4 := values[3].(string)
	if !ok4 {
		return nil, errors.New(pgdef.FuncNumericStddev + ": no kind")
	}
	if !ok3 || n == 0 || !ok1 || !ok2 {
		return nil, nil
	}
	out, null, err := NumericStddev(sumX, sumX2, n, kind)
	if null || err != nil {
		return nil, err
	}
	return out, nil
}

// NumericStddev returns Postgres's text of the kind of aggregate over n
// values whose sum is sumX and sum of squares sumX2; null is true when
// Postgres's answer is NULL.
func NumericStddev(sumX, sumX2 string, n int64, kind string) (out string, null bool, err error) {
	var sample, variance bool
	switch kind {
	case "stddev_pop":
	case "stddev_samp":
		sample = true
	case "var_pop":
		variance = true
	case "var_samp":
		sample, variance = true, true
	default:
		return "", false, fmt.Errorf("%s: kind %q", pgdef.FuncNumericStddev, kind)
	}
	if n <= 0 || sample && n <= 1 {
		return "", true, nil
	}
	negX, uX, _, fracX, err := decimalParts(sumX)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", pgdef.FuncNumericStddev, err)
	}
	negX2, uX2, _, fracX2, err := decimalParts(sumX2)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", pgdef.FuncNumericStddev, err)
	}
	rscale := 2 * len(fracX)
	if negX2 || len(fracX2) > rscale {
		return "", false, fmt.Errorf("%s: the sum of squares %s does not have the scale of the sum %s squared", pgdef.FuncNumericStddev, sumX2, sumX)
	}
	_ = negX // squared
	// N·Σx² − (Σx)², scaled by 10^rscale.
	num := new(big.Int).Mul(big.NewInt(n), uX2)
	num.Mul(num, bigPow10(rscale-len(fracX2)))
	num.Sub(num, new(big.Int).Mul(uX, uX))
	if num.Sign() <= 0 {
		return "0", false, nil // make_result(&const_zero)
	}
	den := big.NewInt(n)
	if sample {
		den.Mul(den, big.NewInt(n-1))
	} else {
		den.Mul(den, big.NewInt(n))
	}
	v, err := NumericDiv(scaledText(num, rscale), den.String())
	if err != nil || variance {
		return v, false, err
	}
	// sqrt_var at the quotient's scale r: floor(√(v·10^(r+2))) has one
	// digit more; rounding it half up is rounding √v correctly.
	_, uv, _, fracV, err := decimalParts(v)
	if err != nil {
		return "", false, err
	}
	r := len(fracV)
	q := new(big.Int).Sqrt(new(big.Int).Mul(uv, bigPow10(r+2)))
	q.Add(q, big.NewInt(5)).Quo(q, big.NewInt(10))
	return scaledText(q, r), false, nil
}

// bigPow10 is 10^k, k >= 0.
func bigPow10(k int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
}

// scaledText prints non-negative u / 10^scale with scale digits.
func scaledText(u *big.Int, scale int) string {
	s := u.String()
	if scale == 0 {
		return s
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	return s[:len(s)-scale] + "." + s[len(s)-scale:]
}

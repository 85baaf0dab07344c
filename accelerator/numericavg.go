package accelerator

import (
	"database/sql/driver"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/pgdef"
)

// pgdef.FuncNumericAvg is a DuckDB scalar function that computes Postgres's
// avg of integers and numerics exactly, from the sum (as DuckDB prints it:
// an integer or a decimal with the operand's scale) and the count:
//
//	pgaccel_numeric_avg(CAST(sum(x) AS VARCHAR), count(x)) -> VARCHAR
//
// DuckDB's own avg of a DECIMAL is a DOUBLE. Postgres divides the numeric
// sum by the count (numeric_div) with the result scale chosen by
// select_div_scale from the operands' values, rounding half away from
// zero; the scale varies from group to group, so the result is text, which
// the proxy turns into a numeric with that scale.

// avgRow computes function name's row from (sum::text, count) with avg:
// NULL for no rows.
func avgRow(name string, avg func(sum string, n int64) (any, error)) func([]driver.Value) (any, error) {
	return func(values []driver.Value) (any, error) {
		sum, isSum := values[0].(string)
		n, ok := values[1].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: count is %T", name, values[1])
		}
		if n == 0 || !isSum {
			return nil, nil
		}
		return avg(sum, n)
	}
}

// NumericAvg returns Postgres's text of sum/n for avg: sum is an integer or
// a decimal, n > 0. avg is numeric_div of the sum by the count.
func NumericAvg(sum string, n int64) (string, error) {
	if n <= 0 {
		return "", fmt.Errorf("%s: count %d", pgdef.FuncNumericAvg, n)
	}
	return NumericDiv(sum, strconv.FormatInt(n, 10))
}

// decimalWeight returns Postgres's base-10000 weight and leading digit of
// the number whose integer digits (without leading zeros) and fraction
// digits are given; zero has weight 0 and leading digit 0.
func decimalWeight(intDigits, frac string) (weight, first int) {
	if intDigits != "" {
		lead := (len(intDigits)-1)%4 + 1
		first, _ = strconv.Atoi(intDigits[:lead])
		return (len(intDigits) - 1) / 4, first
	}
	k := strings.IndexFunc(frac, func(r rune) bool { return r != '0' })
	if k < 0 {
		return 0, 0
	}
	g := k / 4
	group := frac[4*g : min(4*g+4, len(frac))]
	group += strings.Repeat("0", 4-len(group))
	first, _ = strconv.Atoi(group)
	return -(g + 1), first
}

// pgdef.FuncNumericAvgDec is pgdef.FuncNumericAvg as an exact DECIMAL, for
// averages that are compared rather than printed:
//
//	pgaccel_numeric_avg_dec(CAST(sum(x) AS VARCHAR), count(x)) -> DECIMAL(38,24)
//
// The value is Postgres's avg (the quotient rounded to select_div_scale's
// scale) exactly; when that needs more than 24 fraction digits, or 14
// integer digits, the function fails and the statement falls back to the
// origin.

// avgDecScale is the scale of pgdef.FuncNumericAvgDec's DECIMAL(38, 24).
const avgDecScale = 24

// NumericAvgDec returns Postgres's avg of sum/n as the unscaled value of a
// DECIMAL(38, 24).
func NumericAvgDec(sum string, n int64) (*big.Int, error) {
	text, err := NumericAvg(sum, n)
	if err != nil {
		return nil, err
	}
	neg := strings.HasPrefix(text, "-")
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(text, "-"), ".")
	if len(frac) > avgDecScale {
		if strings.Trim(frac[avgDecScale:], "0") != "" {
			return nil, fmt.Errorf("%s: avg %s needs more than %d fraction digits", pgdef.FuncNumericAvgDec, text, avgDecScale)
		}
		frac = frac[:avgDecScale]
	}
	if len(strings.TrimLeft(intPart, "0")) > 38-avgDecScale {
		return nil, fmt.Errorf("%s: avg %s has too many integer digits", pgdef.FuncNumericAvgDec, text)
	}
	frac += strings.Repeat("0", avgDecScale-len(frac))
	v, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, fmt.Errorf("%s: not a number: %s", pgdef.FuncNumericAvgDec, text)
	}
	if neg {
		v.Neg(v)
	}
	return v, nil
}

package accelerator

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// NumericAvgFunction is a DuckDB scalar function that computes Postgres's
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
const NumericAvgFunction = "pgaccel_numeric_avg"

// registerNumericAvg registers NumericAvgFunction.
func (e *Engine) registerNumericAvg(ctx context.Context) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return duckdb.RegisterScalarUDF(conn, NumericAvgFunction, numericAvgUDF{})
}

type numericAvgUDF struct{}

func (numericAvgUDF) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{
		InputTypeInfos: []duckdb.TypeInfo{mustTypeInfo(duckdb.TYPE_VARCHAR), mustTypeInfo(duckdb.TYPE_BIGINT)},
		ResultTypeInfo: mustTypeInfo(duckdb.TYPE_VARCHAR),
	}
}

func (numericAvgUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(values []driver.Value) (any, error) {
		sum, _ := values[0].(string)
		n, ok := values[1].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: count is %T", NumericAvgFunction, values[1])
		}
		if n == 0 {
			return nil, nil
		}
		return NumericAvg(sum, n)
	}}
}

// NumericAvg returns Postgres's text of sum/n for avg: sum is an integer or
// a decimal, n > 0.
func NumericAvg(sum string, n int64) (string, error) {
	neg := strings.HasPrefix(sum, "-")
	digits := strings.TrimPrefix(sum, "-")
	intPart, frac, _ := strings.Cut(digits, ".")
	scale := len(frac)
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok || n <= 0 {
		return "", errors.New(NumericAvgFunction + ": not a number: " + sum)
	}
	w1, d1 := decimalWeight(strings.TrimLeft(intPart, "0"), frac)
	w2, d2 := decimalWeight(fmt.Sprint(n), "")
	// select_div_scale (utils/adt/numeric.c).
	qweight := w1 - w2
	if d1 <= d2 {
		qweight--
	}
	rscale := 16 - qweight*4
	rscale = max(rscale, scale, 0)
	rscale = min(rscale, 1000)
	// round(|u| * 10^(rscale-scale) / n), half away from zero.
	num := new(big.Int).Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(rscale-scale)), nil))
	den := big.NewInt(n)
	num.Mul(num, big.NewInt(2)).Add(num, den)
	q := num.Quo(num, den.Mul(den, big.NewInt(2)))
	s := q.String()
	if rscale > 0 {
		if len(s) <= rscale {
			s = strings.Repeat("0", rscale-len(s)+1) + s
		}
		s = s[:len(s)-rscale] + "." + s[len(s)-rscale:]
	}
	if neg && q.Sign() != 0 {
		s = "-" + s
	}
	return s, nil
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

// NumericAvgDecFunction is NumericAvgFunction as an exact DECIMAL, for
// averages that are compared rather than printed:
//
//	pgaccel_numeric_avg_dec(CAST(sum(x) AS VARCHAR), count(x)) -> DECIMAL(38,24)
//
// The value is Postgres's avg (the quotient rounded to select_div_scale's
// scale) exactly; when that needs more than 24 fraction digits, or 14
// integer digits, the function fails and the statement falls back to the
// origin.
const NumericAvgDecFunction = "pgaccel_numeric_avg_dec"

// avgDecScale is the scale of NumericAvgDecFunction's DECIMAL(38, 24).
const avgDecScale = 24

func (e *Engine) registerNumericAvgDec(ctx context.Context) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return duckdb.RegisterScalarUDF(conn, NumericAvgDecFunction, numericAvgDecUDF{})
}

type numericAvgDecUDF struct{}

func (numericAvgDecUDF) Config() duckdb.ScalarFuncConfig {
	dec, err := duckdb.NewDecimalInfo(38, avgDecScale)
	if err != nil {
		panic(err)
	}
	return duckdb.ScalarFuncConfig{
		InputTypeInfos: []duckdb.TypeInfo{mustTypeInfo(duckdb.TYPE_VARCHAR), mustTypeInfo(duckdb.TYPE_BIGINT)},
		ResultTypeInfo: dec,
	}
}

func (numericAvgDecUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(values []driver.Value) (any, error) {
		sum, _ := values[0].(string)
		n, ok := values[1].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: count is %T", NumericAvgDecFunction, values[1])
		}
		if n == 0 || values[0] == nil {
			return nil, nil
		}
		return NumericAvgDec(sum, n)
	}}
}

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
			return nil, fmt.Errorf("%s: avg %s needs more than %d fraction digits", NumericAvgDecFunction, text, avgDecScale)
		}
		frac = frac[:avgDecScale]
	}
	if len(strings.TrimLeft(intPart, "0")) > 38-avgDecScale {
		return nil, fmt.Errorf("%s: avg %s has too many integer digits", NumericAvgDecFunction, text)
	}
	frac += strings.Repeat("0", avgDecScale-len(frac))
	v, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, fmt.Errorf("%s: not a number: %s", NumericAvgDecFunction, text)
	}
	if neg {
		v.Neg(v)
	}
	return v, nil
}

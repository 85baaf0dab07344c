package accelerator

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// registerNumericFunctions registers the scalar functions through which
// the planner's rewrites compute Postgres's exact numerics.
func (e *Engine) registerNumericFunctions(ctx context.Context) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	varchar, bigint := mustTypeInfo(duckdb.TYPE_VARCHAR), mustTypeInfo(duckdb.TYPE_BIGINT)
	interval, double, hugeint := mustTypeInfo(duckdb.TYPE_INTERVAL), mustTypeInfo(duckdb.TYPE_DOUBLE), mustTypeInfo(duckdb.TYPE_HUGEINT)
	avgDec, err := duckdb.NewDecimalInfo(38, avgDecScale)
	if err != nil {
		return err
	}
	inDec, err := duckdb.NewDecimalInfo(38, numericInScale)
	if err != nil {
		return err
	}
	for name, udf := range map[string]scalarUDF{
		pgdef.FuncNumericAvg: {[]duckdb.TypeInfo{varchar, bigint}, varchar, avgRow(pgdef.FuncNumericAvg, func(sum string, n int64) (any, error) {
			return NumericAvg(sum, n)
		})},
		pgdef.FuncNumericAvgDec: {[]duckdb.TypeInfo{varchar, bigint}, avgDec, avgRow(pgdef.FuncNumericAvgDec, func(sum string, n int64) (any, error) {
			return NumericAvgDec(sum, n)
		})},
		pgdef.FuncNumericScale:      {[]duckdb.TypeInfo{varchar, bigint}, varchar, numericScaleRow},
		pgdef.FuncNumericDiv:        {[]duckdb.TypeInfo{varchar, varchar}, varchar, numericDivRow},
		pgdef.FuncNumericDivInt:     {[]duckdb.TypeInfo{varchar, varchar, varchar}, varchar, numericDivIntRow},
		pgdef.FuncNumericRound:      {[]duckdb.TypeInfo{varchar, bigint}, varchar, numericRoundRow},
		pgdef.FuncNumericSortkey:    {[]duckdb.TypeInfo{varchar}, varchar, numericSortKeyRow},
		pgdef.FuncNumericIn:         {[]duckdb.TypeInfo{varchar}, inDec, numericInRow},
		pgdef.FuncFloat8NumericText: {[]duckdb.TypeInfo{double}, varchar, float8NumericTextRow},
		pgdef.FuncNumericStddev:     {[]duckdb.TypeInfo{varchar, varchar, bigint, varchar}, varchar, numericStddevRow},
		pgdef.FuncIntervalEpochUS:   {[]duckdb.TypeInfo{interval}, hugeint, intervalEpochUSRow},
		pgdef.FuncIntervalEpoch:     {[]duckdb.TypeInfo{interval}, double, intervalEpochRow},
		pgdef.FuncNumericInScale:    {[]duckdb.TypeInfo{varchar}, bigint, numericInScaleRow},
		pgdef.FuncCollkey:           {[]duckdb.TypeInfo{varchar, varchar}, mustTypeInfo(duckdb.TYPE_BLOB), collationKeyRow},
		pgdef.FuncUpper:             {[]duckdb.TypeInfo{varchar, varchar}, varchar, caseRow(0)},
		pgdef.FuncLower:             {[]duckdb.TypeInfo{varchar, varchar}, varchar, caseRow(1)},
		pgdef.FuncInitcap:           {[]duckdb.TypeInfo{varchar, varchar}, varchar, caseRow(2)},
	} {
		if err := duckdb.RegisterScalarUDF(conn, name, udf); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	if err := registerPGFunctions(conn); err != nil {
		return err
	}
	if err := registerArrayFunctions(conn); err != nil {
		return err
	}
	return registerJSONFunctions(conn)
}

// scalarUDF is a DuckDB scalar function of fixed types, computed row by row.
type scalarUDF struct {
	in  []duckdb.TypeInfo
	out duckdb.TypeInfo
	row func(values []driver.Value) (any, error)
}

func (f scalarUDF) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{InputTypeInfos: f.in, ResultTypeInfo: f.out}
}

func (f scalarUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: f.row}
}

// pgdef.FuncNumericScale is a DuckDB scalar function that prints a decimal
// with the display scale Postgres would give it:
//
//	pgaccel_numeric_scale(CAST(value AS VARCHAR), scale) -> VARCHAR
//
// value is exact and has at least scale fraction digits (DuckDB's scale);
// the digits beyond scale must be zeros, which are dropped. A NULL value is
// NULL. The planner uses it where Postgres's scale varies row by row (see
// planner/scaletrack.go); the proxy encodes the text as a numeric.

func numericScaleRow(values []driver.Value) (any, error) {
	v, ok := values[0].(string)
	if !ok {
		return nil, nil // NULL
	}
	scale, ok := values[1].(int64)
	if !ok {
		return nil, fmt.Errorf("%s: no scale for %q", pgdef.FuncNumericScale, v)
	}
	return NumericScale(v, scale)
}

// NumericScale returns decimal text v with scale fraction digits: extra
// digits must be zeros; missing ones are added.
func NumericScale(v string, scale int64) (string, error) {
	if scale < 0 || scale > 1000 {
		return "", fmt.Errorf("%s: scale %d out of range", pgdef.FuncNumericScale, scale)
	}
	intPart, frac, _ := strings.Cut(v, ".")
	if intPart == "" || intPart == "-" || strings.ContainsFunc(intPart[1:], notDigit) || strings.ContainsFunc(frac, notDigit) {
		return "", errors.New(pgdef.FuncNumericScale + ": not a decimal: " + v)
	}
	n := int(scale)
	switch {
	case len(frac) > n:
		if strings.Trim(frac[n:], "0") != "" {
			return "", fmt.Errorf("%s: %s has non-zero digits beyond scale %d", pgdef.FuncNumericScale, v, n)
		}
		frac = frac[:n]
	case len(frac) < n:
		frac += strings.Repeat("0", n-len(frac))
	}
	if n == 0 {
		return intPart, nil
	}
	return intPart + "." + frac, nil
}

func notDigit(r rune) bool { return r < '0' || r > '9' }

// pgdef.FuncNumericDiv is a DuckDB scalar function that divides two
// decimals as Postgres's numeric_div does:
//
//	pgaccel_numeric_div(a VARCHAR, b VARCHAR) -> VARCHAR
//
// a and b are the exact texts of the operands with Postgres's display
// scales (see pgdef.FuncNumericScale); the quotient has the scale
// select_div_scale chooses from them and is rounded half away from zero.
// Division by zero is an error (the statement then falls back to the
// origin, which reports its own). NULL operands give NULL.

func numericDivRow(values []driver.Value) (any, error) {
	a, ok1 := values[0].(string)
	b, ok2 := values[1].(string)
	if !ok1 || !ok2 {
		return nil, nil // NULL
	}
	return NumericDiv(a, b)
}

// decimalParts splits decimal text into its sign, digits as an integer,
// integer digits (without leading zeros) and fraction digits.
func decimalParts(s string) (neg bool, u *big.Int, intDigits, frac string, err error) {
	neg = strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(digits, ".")
	if intPart == "" || strings.ContainsFunc(intPart, notDigit) || strings.ContainsFunc(frac, notDigit) {
		return false, nil, "", "", errors.New("not a decimal: " + s)
	}
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return false, nil, "", "", errors.New("not a decimal: " + s)
	}
	return neg, u, strings.TrimLeft(intPart, "0"), frac, nil
}

// NumericDiv returns Postgres's text of a / b for decimal texts a and b.
func NumericDiv(a, b string) (string, error) {
	neg1, u1, int1, frac1, err := decimalParts(a)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pgdef.FuncNumericDiv, err)
	}
	neg2, u2, int2, frac2, err := decimalParts(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pgdef.FuncNumericDiv, err)
	}
	if u2.Sign() == 0 {
		return "", errors.New("division by zero")
	}
	// select_div_scale (utils/adt/numeric.c).
	w1, d1 := decimalWeight(int1, frac1)
	w2, d2 := decimalWeight(int2, frac2)
	qweight := w1 - w2
	if d1 <= d2 {
		qweight--
	}
	rscale := 16 - qweight*4
	rscale = max(rscale, len(frac1), len(frac2), 0)
	rscale = min(rscale, 1000)
	// round(|a| / |b| at rscale), half away from zero:
	// u1/10^s1 / (u2/10^s2) * 10^rscale = u1 * 10^(rscale - s1 + s2) / u2.
	num := new(big.Int).Set(u1)
	den := new(big.Int).Set(u2)
	if e := rscale - len(frac1) + len(frac2); e >= 0 {
		num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
	} else {
		den.Mul(den, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil))
	}
	num.Mul(num, big.NewInt(2)).Add(num, den)
	q := num.Quo(num, den.Mul(den, big.NewInt(2)))
	s := q.String()
	if rscale > 0 {
		if len(s) <= rscale {
			s = strings.Repeat("0", rscale-len(s)+1) + s
		}
		s = s[:len(s)-rscale] + "." + s[len(s)-rscale:]
	}
	if neg1 != neg2 && q.Sign() != 0 {
		s = "-" + s
	}
	return s, nil
}

// pgdef.FuncNumericDivInt is a DuckDB scalar function that computes
// Postgres's floor(a / b), ceil(a / b), round(a / b) and trunc(a / b) of
// two decimals: numeric_div as pgdef.FuncNumericDiv computes it
// (select_div_scale, rounded half away from zero), then the function,
// printed as an integer.
//
//	pgaccel_numeric_div_int(a VARCHAR, b VARCHAR, how VARCHAR) -> VARCHAR
//
// how is floor, ceil, round or trunc.

func numericDivIntRow(values []driver.Value) (any, error) {
	a, ok1 := values[0].(string)
	b, ok2 := values[1].(string)
	how, ok3 := values[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return nil, nil // NULL
	}
	q, err := NumericDiv(a, b)
	if err != nil {
		return nil, err
	}
	return NumericToInt(q, how)
}

// NumericToInt is floor, ceil, round (half away from zero: NumericRound)
// or trunc of decimal text a (as NumericDiv prints it), printed as an
// integer.
func NumericToInt(a, how string) (string, error) {
	if how == "round" {
		return NumericRound(a, 0)
	}
	neg := strings.HasPrefix(a, "-")
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(a, "-"), ".")
	u, ok := new(big.Int).SetString("0"+intPart, 10)
	if !ok || strings.ContainsFunc(frac, notDigit) {
		return "", fmt.Errorf("%s: not a decimal: %q", pgdef.FuncNumericDivInt, a)
	}
	fractional := strings.Trim(frac, "0") != ""
	up := false // away from zero
	switch how {
	case "floor":
		up = neg && fractional
	case "ceil":
		up = !neg && fractional
	case "trunc":
	default:
		return "", fmt.Errorf("%s: %q", pgdef.FuncNumericDivInt, how)
	}
	if up {
		u.Add(u, big.NewInt(1))
	}
	if neg && u.Sign() != 0 {
		return "-" + u.String(), nil
	}
	return u.String(), nil
}

// pgdef.FuncNumericRound is a DuckDB scalar function that rounds the exact
// text of a Postgres numeric (from pgdef.FuncNumericAvg or
// pgdef.FuncNumericDiv) as round(numeric, k) does: half away from zero, to k
// decimals, printed with exactly k decimals.
//
//	pgaccel_numeric_round(text, k) -> VARCHAR

func numericRoundRow(values []driver.Value) (any, error) {
	a, ok1 := values[0].(string)
	k, ok2 := values[1].(int64)
	if !ok1 || !ok2 {
		return nil, nil // NULL
	}
	return NumericRound(a, int(k))
}

// NumericRound rounds decimal text a to k >= 0 decimals, half away from
// zero, as Postgres's round(numeric, k).
func NumericRound(a string, k int) (string, error) {
	if k < 0 || k > 1000 {
		return "", fmt.Errorf("%s: %d decimals", pgdef.FuncNumericRound, k)
	}
	neg, u, _, frac, err := decimalParts(a)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pgdef.FuncNumericRound, err)
	}
	if drop := len(frac) - k; drop > 0 {
		unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(drop)), nil)
		q, r := new(big.Int).QuoRem(u, unit, new(big.Int))
		if r.Lsh(r, 1).Cmp(unit) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		u = q
	} else if drop < 0 {
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-drop)), nil))
	}
	digits := u.String()
	if k > 0 {
		if len(digits) <= k {
			digits = strings.Repeat("0", k-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-k] + "." + digits[len(digits)-k:]
	}
	if neg && u.Sign() != 0 {
		digits = "-" + digits
	}
	return digits, nil
}

// pgdef.FuncNumericSortkey is a DuckDB scalar function whose result sorts,
// byte by byte, as the numeric text it is given (pgdef.FuncNumericScale's or
// pgdef.FuncNumericDiv's) sorts by value:
//
//	pgaccel_numeric_sortkey(VARCHAR) -> VARCHAR
//
// so ORDER BY a scale-tracked output orders by the value Postgres
// computed, not by its text. Values that differ only in trailing zeros
// (1.5 and 1.50) are equal, as in Postgres. NULL is NULL.

func numericSortKeyRow(values []driver.Value) (any, error) {
	v, ok := values[0].(string)
	if !ok {
		return nil, nil // NULL
	}
	return NumericSortKey(v)
}

// NumericSortKey returns the sort key of decimal text v: "1" for zero;
// "2", the decimal exponent offset by 50000 in five digits, and the
// significant digits for a positive value; "0", the exponent's
// complement and the digits' nines' complements ended by "~" for a
// negative one (so that -1.2 sorts after -1.23).
func NumericSortKey(v string) (string, error) {
	neg := strings.HasPrefix(v, "-")
	s := strings.TrimPrefix(v, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" || strings.ContainsFunc(intPart, notDigit) || strings.ContainsFunc(frac, notDigit) {
		return "", errors.New(pgdef.FuncNumericSortkey + ": not a decimal: " + v)
	}
	digits := intPart + frac
	exp := len(intPart) // the value is 0.digits × 10^exp
	lead := len(digits) - len(strings.TrimLeft(digits, "0"))
	digits = strings.TrimRight(digits[lead:], "0")
	if digits == "" {
		return "1", nil
	}
	exp -= lead
	if exp < -49999 || exp > 49999 {
		return "", fmt.Errorf("%s: %s out of range", pgdef.FuncNumericSortkey, v)
	}
	if !neg {
		return fmt.Sprintf("2%05d%s", exp+50000, digits), nil
	}
	comp := []byte(digits)
	for i, c := range comp {
		comp[i] = '9' - c + '0'
	}
	return fmt.Sprintf("0%05d%s~", 99999-(exp+50000), comp), nil
}

package accelerator

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// NumericScaleFunction is a DuckDB scalar function that prints a decimal
// with the display scale Postgres would give it:
//
//	pgaccel_numeric_scale(CAST(value AS VARCHAR), scale) -> VARCHAR
//
// value is exact and has at least scale fraction digits (DuckDB's scale);
// the digits beyond scale must be zeros, which are dropped. A NULL value is
// NULL. The planner uses it where Postgres's scale varies row by row (see
// planner/scaletrack.go); the proxy encodes the text as a numeric.
const NumericScaleFunction = "pgaccel_numeric_scale"

func (e *Engine) registerNumericScale(ctx context.Context) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return duckdb.RegisterScalarUDF(conn, NumericScaleFunction, numericScaleUDF{})
}

type numericScaleUDF struct{}

func (numericScaleUDF) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{
		InputTypeInfos: []duckdb.TypeInfo{mustTypeInfo(duckdb.TYPE_VARCHAR), mustTypeInfo(duckdb.TYPE_BIGINT)},
		ResultTypeInfo: mustTypeInfo(duckdb.TYPE_VARCHAR),
	}
}

func (numericScaleUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func(values []driver.Value) (any, error) {
		v, ok := values[0].(string)
		if !ok {
			return nil, nil // NULL
		}
		scale, ok := values[1].(int64)
		if !ok {
			return nil, fmt.Errorf("%s: no scale for %q", NumericScaleFunction, v)
		}
		return NumericScale(v, scale)
	}}
}

// NumericScale returns decimal text v with scale fraction digits: extra
// digits must be zeros; missing ones are added.
func NumericScale(v string, scale int64) (string, error) {
	if scale < 0 || scale > 1000 {
		return "", fmt.Errorf("%s: scale %d out of range", NumericScaleFunction, scale)
	}
	intPart, frac, _ := strings.Cut(v, ".")
	if intPart == "" || intPart == "-" || strings.ContainsFunc(intPart[1:], notDigit) || strings.ContainsFunc(frac, notDigit) {
		return "", errors.New(NumericScaleFunction + ": not a decimal: " + v)
	}
	n := int(scale)
	switch {
	case len(frac) > n:
		if strings.Trim(frac[n:], "0") != "" {
			return "", fmt.Errorf("%s: %s has non-zero digits beyond scale %d", NumericScaleFunction, v, n)
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

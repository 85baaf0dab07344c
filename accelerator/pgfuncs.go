package accelerator

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Postgres functions DuckDB lacks, computed as Postgres computes them:
//
//	pgaccel_initcap_ascii(text) -> VARCHAR: initcap under the C LC_CTYPE
//	  (a letter after an ASCII letter or digit is lowered, any other is
//	  raised; ASCII only), for columns the planner knows map so;
//	pgaccel_justify_hours(interval), pgaccel_justify_days(interval),
//	pgaccel_justify_interval(interval) -> INTERVAL (timestamp.c);
//	pgaccel_tstz_diff(timestamptz, timestamptz) -> INTERVAL: a - b as
//	Postgres's timestamp_mi computes it, on the instants (whole days of
//	24 hours and the rest), not on the session zone's calendar as DuckDB
//	does; an infinite operand is Postgres's error. A macro: DuckDB
//	inlines it.
const ()

// tstzDiffMacro defines pgdef.FuncTSTZDiff on a connection. DuckDB's // and
// % of integers truncate toward zero, as C's do in timestamp_mi.
const tstzDiffMacro = `CREATE OR REPLACE MACRO ` + pgdef.FuncTSTZDiff + `(a, b) AS
  CASE WHEN isinf(a) OR isinf(b) THEN error('cannot subtract infinite timestamps')
  ELSE to_days(((epoch_us(a) - epoch_us(b)) // 86400000000)::INTEGER) + to_microseconds((epoch_us(a) - epoch_us(b)) % 86400000000) END`

func registerPGFunctions(conn *sql.Conn) error {
	if _, err := conn.ExecContext(context.Background(), tstzDiffMacro); err != nil {
		return fmt.Errorf("register %s: %w", pgdef.FuncTSTZDiff, err)
	}
	if _, err := conn.ExecContext(context.Background(), intervalKeyMacro); err != nil {
		return fmt.Errorf("register %s: %w", pgdef.FuncIntervalKey, err)
	}
	if err := registerNumericTextMacros(conn); err != nil {
		return err
	}
	varchar, interval := mustTypeInfo(duckdb.TYPE_VARCHAR), mustTypeInfo(duckdb.TYPE_INTERVAL)
	for name, udf := range map[string]scalarUDF{
		pgdef.FuncInitcapASCII: {[]duckdb.TypeInfo{varchar}, varchar, func(v []driver.Value) (any, error) {
			s, ok := v[0].(string)
			if !ok {
				return nil, nil
			}
			return InitcapASCII(s), nil
		}},
		pgdef.FuncJustifyHours:    {[]duckdb.TypeInfo{interval}, interval, justifyRow(true, false)},
		pgdef.FuncJustifyDays:     {[]duckdb.TypeInfo{interval}, interval, justifyRow(false, true)},
		pgdef.FuncJustifyInterval: {[]duckdb.TypeInfo{interval}, interval, justifyRow(true, true)},
	} {
		if err := duckdb.RegisterScalarUDF(conn, name, udf); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}

// InitcapASCII is Postgres's initcap under the C LC_CTYPE.
func InitcapASCII(s string) string {
	b := []byte(s)
	wasAlnum := false
	for i, c := range b {
		switch {
		case wasAlnum && c >= 'A' && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case !wasAlnum && c >= 'a' && c <= 'z':
			b[i] = c - ('a' - 'A')
		}
		wasAlnum = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return string(b)
}

const usecsPerDay = int64(86400_000_000)

var errIntervalRange = errors.New("interval out of range")

// justifyRow computes justify_hours (hours), justify_days (days) or
// justify_interval (both) as timestamp.c does.
func justifyRow(hours, days bool) func([]driver.Value) (any, error) {
	return func(v []driver.Value) (any, error) {
		iv, ok := v[0].(duckdb.Interval)
		if !ok {
			return nil, nil
		}
		month, day, t := int64(iv.Months), int64(iv.Days), iv.Micros
		if hours {
			whole := t / usecsPerDay // TMODULO: truncation toward zero
			t -= whole * usecsPerDay
			day += whole
		}
		if days {
			whole := day / 30
			day -= whole * 30
			month += whole
		}
		if days {
			// justify_days looks at the days alone, justify_interval at
			// the time too.
			time := t
			if !hours {
				time = 0
			}
			if month > 0 && (day < 0 || day == 0 && time < 0) {
				day += 30
				month--
			} else if month < 0 && (day > 0 || day == 0 && time > 0) {
				day -= 30
				month++
			}
		}
		if hours {
			day, t = justifySign(day, t)
		}
		if month > math.MaxInt32 || month < math.MinInt32 || day > math.MaxInt32 || day < math.MinInt32 {
			return nil, errIntervalRange
		}
		return duckdb.Interval{Months: int32(month), Days: int32(day), Micros: t}, nil
	}
}

// justifySign gives days and time the same sign.
func justifySign(day, t int64) (int64, int64) {
	if day > 0 && t < 0 {
		return day - 1, t + usecsPerDay
	}
	if day < 0 && t > 0 {
		return day + 1, t - usecsPerDay
	}
	return day, t
}

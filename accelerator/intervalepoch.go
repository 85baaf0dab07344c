package accelerator

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// pgdef.FuncIntervalEpochUS and pgdef.FuncIntervalEpoch compute Postgres's
// EXTRACT(epoch FROM interval) and date_part('epoch', interval) from a
// DuckDB INTERVAL:
//
//	pgaccel_interval_epoch_us(INTERVAL) -> HUGEINT (the numeric's value in microseconds)
//	pgaccel_interval_epoch(INTERVAL) -> DOUBLE
//
// as interval_part_common does: a year of months is 365.25 days, a month
// 30 days, a day 86400 seconds (DuckDB counts a year of months as 360
// days); the double adds, in doubles, the microseconds over a million to
// the years', months' and days' seconds, in that order. An overflow is an
// error (the statement then falls back).
const ()

// intervalSeconds is interval_part_common's secs_from_day_month.
func intervalSeconds(iv duckdb.Interval) (int64, error) {
	m, d := int64(iv.Months), int64(iv.Days)
	// (4·365.25·(m / 12) + 4·30·(m % 12) + 4·d) · (86400 / 4)
	quarterDays := 1461*(m/12) + 120*(m%12) + 4*d
	if quarterDays > math.MaxInt64/21600 || quarterDays < math.MinInt64/21600 {
		return 0, fmt.Errorf("%s: interval out of range", pgdef.FuncIntervalEpoch)
	}
	return quarterDays * 21600, nil
}

func intervalEpochUSRow(values []driver.Value) (any, error) {
	iv, ok := values[0].(duckdb.Interval)
	if !ok {
		return nil, nil
	}
	secs, err := intervalSeconds(iv)
	if err != nil {
		return nil, err
	}
	us := new(big.Int).Mul(big.NewInt(secs), big.NewInt(1000000))
	return us.Add(us, big.NewInt(iv.Micros)), nil
}

func intervalEpochRow(values []driver.Value) (any, error) {
	iv, ok := values[0].(duckdb.Interval)
	if !ok {
		return nil, nil
	}
	// interval_part_common's float8 epoch, in its order of operations.
	m := int64(iv.Months)
	result := float64(iv.Micros) / 1000000.0
	result += (365.25 * 86400) * float64(m/12)
	result += (30.0 * 86400) * float64(m%12)
	result += 86400.0 * float64(iv.Days)
	return result, nil
}

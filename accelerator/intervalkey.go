package accelerator

import "github.com/pgaccel/pgaccel/pgdef"

// pgdef.FuncIntervalKey orders and compares intervals as Postgres does:
//
//	pgaccel_interval_key(INTERVAL) -> HUGEINT
//
// is interval_cmp_value's 128-bit span, (months × 30 + days) × 86400000000
// + microseconds, so that two intervals compare (=, <, ORDER BY, ...) as
// their keys do: '1 mon -1 day' equals '29 days' and '1 mon -4 days
// 04:00:00' orders before '27 days 04:00:00'. DuckDB compares intervals
// by their fields carried into months and days with truncation, which
// orders intervals whose fields have mixed signs otherwise. A macro
// (DuckDB inlines it) over datepart, whose year, month, day, hour, minute
// and microseconds fields of an interval add up to its fields.

// intervalKeyMacro defines pgdef.FuncIntervalKey on a connection.
const intervalKeyMacro = `CREATE OR REPLACE MACRO ` + pgdef.FuncIntervalKey + `(i) AS
  ((datepart('year', i)::HUGEINT * 12 + datepart('month', i)) * 30 + datepart('day', i)) * 86400000000
  + datepart('hour', i)::HUGEINT * 3600000000 + datepart('minute', i)::HUGEINT * 60000000
  + datepart('microseconds', i)`

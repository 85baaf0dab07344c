package encode

import (
	"encoding/binary"
	"strconv"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// itm is Postgres's pg_itm: an interval split into fields, each carrying the
// sign of the month, day or time part it comes from.
type itm struct {
	year, mon int64
	mday      int64
	hour      int64
	min, sec  int64
	usec      int64
}

// splitInterval is interval2itm: C's truncating division.
func splitInterval(iv duckdb.Interval) itm {
	t := iv.Micros
	var r itm
	r.year = int64(iv.Months) / 12
	r.mon = int64(iv.Months) % 12
	r.mday = int64(iv.Days)
	r.hour = t / 3600000000
	t -= r.hour * 3600000000
	r.min = t / 60000000
	t -= r.min * 60000000
	r.sec = t / 1000000
	r.usec = t - r.sec*1000000
	return r
}

// appendInterval appends an interval from a duckdb.Interval, whose months,
// days and microseconds are Postgres's three fields.
//
// Binary is interval_send: int64 microseconds, int32 days, int32 months.
// Text is interval_out: EncodeInterval under IntervalStyle (postgres,
// postgres_verbose, sql_standard, iso_8601), reproduced field by field.
func appendInterval(dst []byte, c *column, v any) ([]byte, error) {
	iv, ok := v.(duckdb.Interval)
	if !ok {
		return nil, wrongValue(v, "interval")
	}
	if c.binary {
		dst = binary.BigEndian.AppendUint64(dst, uint64(iv.Micros))
		dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(iv.Months)), nil
	}
	r := splitInterval(iv)
	switch c.f.intervalStyle {
	case intervalSQLStandard:
		return appendIntervalSQL(dst, r), nil
	case intervalISO8601:
		return appendIntervalISO(dst, r), nil
	case intervalPostgresVerbose:
		return appendIntervalVerbose(dst, r), nil
	}
	return appendIntervalPostgres(dst, r), nil
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// appendIntervalSQL is the INTSTYLE_SQL_STANDARD case.
func appendIntervalSQL(dst []byte, r itm) []byte {
	hasNeg := r.year < 0 || r.mon < 0 || r.mday < 0 || r.hour < 0 || r.min < 0 || r.sec < 0 || r.usec < 0
	hasPos := r.year > 0 || r.mon > 0 || r.mday > 0 || r.hour > 0 || r.min > 0 || r.sec > 0 || r.usec > 0
	hasYM := r.year != 0 || r.mon != 0
	hasDT := r.mday != 0 || r.hour != 0 || r.min != 0 || r.sec != 0 || r.usec != 0
	standard := !(hasNeg && hasPos) && !(hasYM && hasDT)
	if hasNeg && standard {
		dst = append(dst, '-')
		r = itm{-r.year, -r.mon, -r.mday, -r.hour, -r.min, -r.sec, -r.usec}
	}
	switch {
	case !hasNeg && !hasPos:
		return append(dst, '0')
	case !standard:
		sign := func(neg bool) byte {
			if neg {
				return '-'
			}
			return '+'
		}
		dst = append(dst, sign(r.year < 0 || r.mon < 0))
		dst = strconv.AppendInt(dst, abs64(r.year), 10)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, abs64(r.mon), 10)
		dst = append(dst, ' ', sign(r.mday < 0))
		dst = strconv.AppendInt(dst, abs64(r.mday), 10)
		dst = append(dst, ' ', sign(r.hour < 0 || r.min < 0 || r.sec < 0 || r.usec < 0))
		dst = strconv.AppendInt(dst, abs64(r.hour), 10)
		dst = append(dst, ':')
		dst = appendPad2(dst, int(abs64(r.min)))
		dst = append(dst, ':')
		return appendSeconds(dst, int(abs64(r.sec)), int(abs64(r.usec)), true)
	case hasYM:
		dst = strconv.AppendInt(dst, r.year, 10)
		dst = append(dst, '-')
		return strconv.AppendInt(dst, r.mon, 10)
	case r.mday != 0:
		dst = strconv.AppendInt(dst, r.mday, 10)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, r.hour, 10)
	dst = append(dst, ':')
	dst = appendPad2(dst, int(abs64(r.min)))
	dst = append(dst, ':')
	return appendSeconds(dst, int(abs64(r.sec)), int(abs64(r.usec)), true)
}

// appendIntervalISO is the INTSTYLE_ISO_8601 case.
func appendIntervalISO(dst []byte, r itm) []byte {
	if r == (itm{}) {
		return append(dst, "PT0S"...)
	}
	part := func(dst []byte, v int64, unit byte) []byte {
		if v == 0 {
			return dst
		}
		return append(strconv.AppendInt(dst, v, 10), unit)
	}
	dst = append(dst, 'P')
	dst = part(dst, r.year, 'Y')
	dst = part(dst, r.mon, 'M')
	dst = part(dst, r.mday, 'D')
	if r.hour != 0 || r.min != 0 || r.sec != 0 || r.usec != 0 {
		dst = append(dst, 'T')
	}
	dst = part(dst, r.hour, 'H')
	dst = part(dst, r.min, 'M')
	if r.sec != 0 || r.usec != 0 {
		if r.sec < 0 || r.usec < 0 {
			dst = append(dst, '-')
		}
		dst = appendSeconds(dst, int(abs64(r.sec)), int(abs64(r.usec)), false)
		dst = append(dst, 'S')
	}
	return dst
}

// appendIntervalPostgres is the INTSTYLE_POSTGRES case.
func appendIntervalPostgres(dst []byte, r itm) []byte {
	isZero, isBefore := true, false
	part := func(dst []byte, v int64, unit string) []byte {
		if v == 0 {
			return dst
		}
		if !isZero {
			dst = append(dst, ' ')
		}
		if isBefore && v > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if v != 1 {
			dst = append(dst, 's')
		}
		isBefore = v < 0
		isZero = false
		return dst
	}
	dst = part(dst, r.year, "year")
	dst = part(dst, r.mon, "mon")
	dst = part(dst, r.mday, "day")
	if isZero || r.hour != 0 || r.min != 0 || r.sec != 0 || r.usec != 0 {
		minus := r.hour < 0 || r.min < 0 || r.sec < 0 || r.usec < 0
		if !isZero {
			dst = append(dst, ' ')
		}
		if minus {
			dst = append(dst, '-')
		} else if isBefore {
			dst = append(dst, '+')
		}
		dst = appendPadN(dst, abs64(r.hour), 2)
		dst = append(dst, ':')
		dst = appendPad2(dst, int(abs64(r.min)))
		dst = append(dst, ':')
		dst = appendSeconds(dst, int(abs64(r.sec)), int(abs64(r.usec)), true)
	}
	return dst
}

// appendIntervalVerbose is the INTSTYLE_POSTGRES_VERBOSE case.
func appendIntervalVerbose(dst []byte, r itm) []byte {
	isZero, isBefore := true, false
	part := func(dst []byte, v int64, unit string) []byte {
		if v == 0 {
			return dst
		}
		// The first non-zero field sets is_before; later fields are
		// printed relative to it.
		if isZero {
			isBefore = v < 0
			v = abs64(v)
		} else if isBefore {
			v = -v
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if v != 1 {
			dst = append(dst, 's')
		}
		isZero = false
		return dst
	}
	dst = append(dst, '@')
	dst = part(dst, r.year, "year")
	dst = part(dst, r.mon, "mon")
	dst = part(dst, r.mday, "day")
	dst = part(dst, r.hour, "hour")
	dst = part(dst, r.min, "min")
	if r.sec != 0 || r.usec != 0 {
		dst = append(dst, ' ')
		if r.sec < 0 || (r.sec == 0 && r.usec < 0) {
			if isZero {
				isBefore = true
			} else if !isBefore {
				dst = append(dst, '-')
			}
		} else if isBefore {
			dst = append(dst, '-')
		}
		dst = appendSeconds(dst, int(abs64(r.sec)), int(abs64(r.usec)), false)
		dst = append(dst, " sec"...)
		if abs64(r.sec) != 1 || r.usec != 0 {
			dst = append(dst, 's')
		}
		isZero = false
	}
	if isZero {
		dst = append(dst, " 0"...)
	}
	if isBefore {
		dst = append(dst, " ago"...)
	}
	return dst
}

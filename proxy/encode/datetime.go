package encode

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// pgEpochDays is the number of days from 1970-01-01 to 2000-01-01, the
// Postgres epoch of binary dates and timestamps.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86400 * 1000000
)

// Limits of Postgres dates and timestamps, relative to 2000-01-01.
const (
	pgMinDays   = -2451545             // 4714-11-24 BC, Julian day 0
	pgEndDays   = 2147483494 - 2451545 // 5874898-01-01, first invalid date
	pgMinMicros = -211813488000000000  // 4714-11-24 00:00:00 BC
	pgEndMicros = 9223371331200000000  // 294277-01-01 00:00:00, first invalid timestamp
	duckDateInf = math.MaxInt32        // DuckDB date 'infinity', days since 1970
	pgDateInf   = math.MaxInt32        // Postgres date 'infinity' (binary)
	pgDateNInf  = math.MinInt32        // Postgres date '-infinity' (binary)
	microsDay   = int64(24 * time.Hour / time.Microsecond)
)

var (
	dayNames   = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// floorDiv returns floor(a / b) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// appendDate appends a date from a DuckDB DATE (time.Time at UTC midnight;
// DuckDB's ±infinity arrive as the dates 2^31-1 days from 1970).
//
// Binary is int32 days since 2000-01-01 (±infinity: INT32_MAX/INT32_MIN).
// Text is date_out under DateStyle: ISO YYYY-MM-DD, SQL MM/DD/YYYY or
// DD/MM/YYYY, Postgres MM-DD-YYYY or DD-MM-YYYY, German DD.MM.YYYY; years
// zero-padded to 4 digits and " BC" after years before 1; "infinity" and
// "-infinity".
func appendDate(dst []byte, c *column, v any) ([]byte, error) {
	t, err := timeValue(v, "date")
	if err != nil {
		return nil, err
	}
	unixDays := floorDiv(t.Unix(), 86400)
	days := unixDays - pgEpochDays
	switch {
	case unixDays == duckDateInf:
		if c.binary {
			return binary.BigEndian.AppendUint32(dst, pgDateInf), nil
		}
		return append(dst, "infinity"...), nil
	case unixDays == -duckDateInf:
		if c.binary {
			return binary.BigEndian.AppendUint32(dst, uint32(pgDateNInf&math.MaxUint32)), nil
		}
		return append(dst, "-infinity"...), nil
	case days < pgMinDays || days >= pgEndDays:
		return nil, fmt.Errorf("%w: date %s is out of Postgres's range", ErrUnsupported, t.Format("2006-01-02"))
	}
	if c.binary {
		return binary.BigEndian.AppendUint32(dst, uint32(int32(days))), nil
	}
	y, m, d := t.UTC().Date()
	dst = appendDateFields(dst, c.f.dateStyle, c.f.dateOrder, y, int(m), d)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst, nil
}

// appendDateFields is EncodeDateOnly without the " BC" suffix.
func appendDateFields(dst []byte, style, order, year, mon, day int) []byte {
	switch style {
	case styleISO:
		dst = appendYear(dst, year)
		dst = append(dst, '-')
		dst = appendPad2(dst, mon)
		dst = append(dst, '-')
		dst = appendPad2(dst, day)
	case styleSQL, stylePostgres:
		sep := byte('/')
		if style == stylePostgres {
			sep = '-'
		}
		if order == orderDMY {
			dst = appendPad2(dst, day)
			dst = append(dst, sep)
			dst = appendPad2(dst, mon)
		} else {
			dst = appendPad2(dst, mon)
			dst = append(dst, sep)
			dst = appendPad2(dst, day)
		}
		dst = append(dst, sep)
		dst = appendYear(dst, year)
	case styleGerman:
		dst = appendPad2(dst, day)
		dst = append(dst, '.')
		dst = appendPad2(dst, mon)
		dst = append(dst, '.')
		dst = appendYear(dst, year)
	}
	return dst
}

// appendTime appends a time from a DuckDB TIME (time.Time on 0001-01-01).
// Binary is int64 microseconds since midnight; text is HH:MM:SS with
// decimals of the second, trailing zeros removed.
func appendTime(dst []byte, c *column, v any) ([]byte, error) {
	t, err := timeValue(v, "time")
	if err != nil {
		return nil, err
	}
	h, m, s := t.Clock()
	ns := t.Nanosecond()
	if ns%1000 != 0 {
		return nil, fmt.Errorf("%w: time with nanoseconds", ErrUnsupported)
	}
	us := ns / 1000
	if c.binary {
		micros := ((int64(h)*60+int64(m))*60+int64(s))*1000000 + int64(us)
		return binary.BigEndian.AppendUint64(dst, uint64(micros)), nil
	}
	dst = appendPad2(dst, h)
	dst = append(dst, ':')
	dst = appendPad2(dst, m)
	dst = append(dst, ':')
	return appendSeconds(dst, s, us, true), nil
}

// appendTimestamp appends a timestamp (DuckDB TIMESTAMP*, UTC wall clock)
// or timestamptz (DuckDB TIMESTAMPTZ, an instant printed in the session
// TimeZone).
//
// Binary is int64 microseconds since 2000-01-01 00:00 UTC (±infinity:
// INT64_MAX/INT64_MIN). Text is timestamp_out/timestamptz_out, EncodeDateTime
// under DateStyle; timestamptz adds the UTC offset (ISO: +HH, +HH:MM or
// +HH:MM:SS) or the zone abbreviation (other styles), and " BC" goes last.
func appendTimestamp(dst []byte, c *column, v any) ([]byte, error) {
	t, err := timeValue(v, "timestamp")
	if err != nil {
		return nil, err
	}
	unixMicros := t.UnixMicro()
	switch {
	case unixMicros == math.MaxInt64:
		if c.binary {
			return binary.BigEndian.AppendUint64(dst, math.MaxInt64), nil
		}
		return append(dst, "infinity"...), nil
	case unixMicros == -math.MaxInt64 || unixMicros == math.MinInt64:
		if c.binary {
			return binary.BigEndian.AppendUint64(dst, 1<<63), nil
		}
		return append(dst, "-infinity"...), nil
	}
	if t.Nanosecond()%1000 != 0 {
		return nil, fmt.Errorf("%w: timestamp with nanoseconds", ErrUnsupported)
	}
	// Out of Postgres's range; also keeps the subtraction below from overflowing.
	if unixMicros < pgMinMicros+pgEpochMicros || unixMicros-pgEpochMicros >= pgEndMicros {
		return nil, fmt.Errorf("%w: timestamp out of Postgres's range", ErrUnsupported)
	}
	if c.binary {
		return binary.BigEndian.AppendUint64(dst, uint64(unixMicros-pgEpochMicros)), nil
	}
	withZone := c.kind == kindTimestamptz
	if withZone {
		t = t.In(c.f.loc)
	} else {
		t = t.UTC()
	}
	year, mon, day := t.Date()
	h, m, s := t.Clock()
	us := t.Nanosecond() / 1000
	f := c.f
	switch f.dateStyle {
	case styleISO:
		dst = appendDateFields(dst, styleISO, 0, year, int(mon), day)
		dst = append(dst, ' ')
		dst = appendClock(dst, h, m, s, us)
		if withZone {
			_, off := t.Zone()
			dst = appendOffset(dst, off)
		}
	case styleSQL, styleGerman:
		dst = appendDateFields(dst, f.dateStyle, f.dateOrder, year, int(mon), day)
		dst = append(dst, ' ')
		dst = appendClock(dst, h, m, s, us)
		if withZone {
			dst = appendZoneName(dst, t)
		}
	case stylePostgres:
		dst = append(dst, dayNames[t.Weekday()]...)
		dst = append(dst, ' ')
		if f.dateOrder == orderDMY {
			dst = appendPad2(dst, day)
			dst = append(dst, ' ')
			dst = append(dst, monthNames[mon-1]...)
		} else {
			dst = append(dst, monthNames[mon-1]...)
			dst = append(dst, ' ')
			dst = appendPad2(dst, day)
		}
		dst = append(dst, ' ')
		dst = appendClock(dst, h, m, s, us)
		dst = append(dst, ' ')
		dst = appendYear(dst, year)
		if withZone {
			dst = appendZoneName(dst, t)
		}
	}
	if year <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst, nil
}

// appendClock appends HH:MM:SS[.ffffff].
func appendClock(dst []byte, h, m, s, us int) []byte {
	dst = appendPad2(dst, h)
	dst = append(dst, ':')
	dst = appendPad2(dst, m)
	dst = append(dst, ':')
	return appendSeconds(dst, s, us, true)
}

// appendZoneName appends " " and the zone abbreviation in effect at t
// (at most MAXTZLEN, 10, bytes), or the numeric offset if there is none.
func appendZoneName(dst []byte, t time.Time) []byte {
	name, off := t.Zone()
	dst = append(dst, ' ')
	if name == "" {
		return appendOffset(dst, off)
	}
	if len(name) > 10 {
		name = name[:10]
	}
	return append(dst, name...)
}

// appendOffset is EncodeTimezone: +HH, +HH:MM or +HH:MM:SS, east positive.
func appendOffset(dst []byte, off int) []byte {
	if off >= 0 {
		dst = append(dst, '+')
	} else {
		dst = append(dst, '-')
		off = -off
	}
	h, m, s := off/3600, off/60%60, off%60
	dst = appendPad2(dst, h)
	if m != 0 || s != 0 {
		dst = append(dst, ':')
		dst = appendPad2(dst, m)
	}
	if s != 0 {
		dst = append(dst, ':')
		dst = appendPad2(dst, s)
	}
	return dst
}

// appendYear appends a year as Postgres prints it: years before 1 as
// 1-year (the caller adds " BC"), zero-padded to at least 4 digits.
func appendYear(dst []byte, year int) []byte {
	if year <= 0 {
		year = 1 - year
	}
	return appendPadN(dst, int64(year), 4)
}

// appendPad2 appends n (0 <= n) with at least two digits.
func appendPad2(dst []byte, n int) []byte {
	if n < 100 {
		return append(dst, byte('0'+n/10), byte('0'+n%10))
	}
	return appendPadN(dst, int64(n), 2)
}

// appendPadN appends n >= 0 zero-padded to at least width digits, like
// Postgres's pg_ultostr_zeropad.
func appendPadN(dst []byte, n int64, width int) []byte {
	var buf [20]byte
	i := len(buf)
	for n >= 10 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	buf[i] = byte('0' + n)
	for len(buf)-i < width {
		dst = append(dst, '0')
		width--
	}
	return append(dst, buf[i:]...)
}

// appendSeconds is Postgres's AppendSeconds with precision 6: the seconds
// (two digits when fill is set) and, if us != 0, '.' and the microseconds
// without trailing zeros. Both arguments are absolute values.
func appendSeconds(dst []byte, sec int, us int, fill bool) []byte {
	if fill {
		dst = appendPad2(dst, sec)
	} else {
		dst = appendPadN(dst, int64(sec), 1)
	}
	if us == 0 {
		return dst
	}
	dst = append(dst, '.')
	div := 100000
	for us != 0 {
		dst = append(dst, byte('0'+us/div))
		us %= div
		div /= 10
	}
	return dst
}

package encode

import (
	"fmt"
	"math"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// scanner reads the fixed-format date and time fields accepted here.
type scanner struct {
	s string
	i int
}

// num reads between min and max digits, returning -1 if there are fewer.
func (p *scanner) num(minDigits, maxDigits int) int64 {
	start := p.i
	var n int64
	for p.i < len(p.s) && isDigit(p.s[p.i]) && p.i-start < maxDigits {
		n = n*10 + int64(p.s[p.i]-'0')
		p.i++
	}
	if p.i-start < minDigits {
		return -1
	}
	return n
}

func (p *scanner) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *scanner) rest() string { return p.s[p.i:] }

// date reads YYYY-MM-DD (a year of 4 to 7 digits, so the field order is
// unambiguous whatever the DateStyle) or, when the session's DateStyle
// order is MDY or DMY, the SQL, Postgres and German forms MM/DD/YYYY,
// DD/MM/YYYY, MM-DD-YYYY, DD-MM-YYYY and DD.MM.YYYY read in that order.
func (p *scanner) date(f *decodeCtx) (y, m, d int, ok bool) {
	var yy, mm, dd int64
	start := p.i
	if yy = p.num(4, 7); yy >= 1 && p.eat('-') {
		mm = p.num(2, 2)
		if !p.eat('-') {
			return 0, 0, 0, false
		}
		dd = p.num(2, 2)
	} else {
		p.i = start
		if !f.ok || f.dateOrder == orderYMD {
			return 0, 0, 0, false
		}
		a := p.num(2, 2)
		if p.i >= len(p.s) {
			return 0, 0, 0, false
		}
		sep := p.s[p.i]
		if a < 0 || (sep != '/' && sep != '-' && sep != '.') || !p.eat(sep) {
			return 0, 0, 0, false
		}
		b := p.num(2, 2)
		if !p.eat(sep) {
			return 0, 0, 0, false
		}
		if yy = p.num(4, 7); yy < 1 {
			return 0, 0, 0, false
		}
		mm, dd = a, b
		if f.dateOrder == orderDMY {
			mm, dd = b, a
		}
	}
	if mm < 1 || mm > 12 || dd < 1 || dd > 31 {
		return 0, 0, 0, false
	}
	// Reject days past the month's end (Postgres does).
	t := time.Date(int(yy), time.Month(mm), int(dd), 0, 0, 0, 0, time.UTC)
	if t.Day() != int(dd) {
		return 0, 0, 0, false
	}
	return int(yy), int(mm), int(dd), true
}

// clock reads HH:MM[:SS[.ffffff]] with HH 0-23, returning microseconds.
func (p *scanner) clock() (int64, bool) {
	h := p.num(2, 2)
	if h < 0 || h > 23 || !p.eat(':') {
		return 0, false
	}
	m := p.num(2, 2)
	if m < 0 || m > 59 {
		return 0, false
	}
	var sec, us int64
	if p.eat(':') {
		if sec = p.num(2, 2); sec < 0 || sec > 59 {
			return 0, false
		}
		if p.eat('.') {
			start := p.i
			frac := p.num(1, 6)
			if frac < 0 || (p.i < len(p.s) && isDigit(p.s[p.i])) {
				return 0, false // more than 6 decimals: Postgres rounds
			}
			for n := p.i - start; n < 6; n++ {
				frac *= 10
			}
			us = frac
		}
	}
	return ((h*60+m)*60+sec)*1000000 + us, true
}

// era reads an optional " BC" or " AD" suffix.
func era(rest string) (bc, ok bool) {
	switch strings.ToUpper(trimSpace(rest)) {
	case "":
		return false, true
	case "BC":
		return true, rest != "" && isSpace(rest[0])
	case "AD":
		return false, rest != "" && isSpace(rest[0])
	}
	return false, false
}

// parseDate is date_in for the forms scanner.date reads, with an optional
// BC or AD.
func parseDate(s string, f *decodeCtx) (any, error) {
	p := scanner{s: trimSpace(s)}
	y, m, d, ok := p.date(f)
	bc, ok2 := era(p.rest())
	if !ok || !ok2 {
		return nil, fmt.Errorf("%w: date not in a form decoded exactly", errBadInput)
	}
	if bc {
		y = 1 - y
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return dateFromDays(floorDiv(t.Unix(), 86400) - pgEpochDays)
}

// parseTime is time_in for HH:MM[:SS[.ffffff]]. 24:00:00, zones and more
// than 6 decimals are not decoded.
func parseTime(s string) (any, error) {
	p := scanner{s: trimSpace(s)}
	us, ok := p.clock()
	if !ok || p.rest() != "" {
		return nil, fmt.Errorf("%w: time not in a form decoded exactly", errBadInput)
	}
	return timeFromMicros(us)
}

// parseTimestamp is timestamp_in and timestamptz_in for
// DATE[( |T)HH:MM[:SS[.ffffff]]][ ][±HH[:MM[:SS]]|±HHMM|Z][ BC], DATE as
// scanner.date reads it.
// A timestamp with a zone, and a timestamptz without one at a local time
// that does not exist or is ambiguous in the session TimeZone, are not
// decoded.
func parseTimestamp(s string, withZone bool, f *decodeCtx) (any, error) {
	bad := fmt.Errorf("%w: timestamp not in a form decoded exactly", errBadInput)
	p := scanner{s: trimSpace(s)}
	y, m, d, ok := p.date(f)
	if !ok {
		return nil, bad
	}
	var us int64
	if p.eat('T') || (strings.HasPrefix(p.rest(), " ") && len(p.rest()) > 1 && isDigit(p.rest()[1]) && p.eat(' ')) {
		if us, ok = p.clock(); !ok {
			return nil, bad
		}
	}
	hasOffset := false
	offset := 0
	rest := p.rest()
	if r := strings.TrimLeft(rest, " "); r != "" && (r[0] == '+' || r[0] == '-') {
		q := scanner{s: r[1:]}
		h := q.num(2, 2)
		var mi, se int64
		switch {
		case h < 0 || h > 15:
			return nil, bad
		case q.eat(':'):
			if mi = q.num(2, 2); mi < 0 || mi > 59 {
				return nil, bad
			}
			if q.eat(':') {
				if se = q.num(2, 2); se < 0 || se > 59 {
					return nil, bad
				}
			}
		case q.i < len(q.s) && isDigit(q.s[q.i]):
			if mi = q.num(2, 2); mi < 0 || mi > 59 {
				return nil, bad
			}
		}
		offset = int((h*60+mi)*60 + se)
		if r[0] == '-' {
			offset = -offset
		}
		hasOffset = true
		rest = q.rest()
	} else if r != "" && (r[0] == 'Z' || r[0] == 'z') {
		// Z: UTC (ISO 8601's zone designator).
		hasOffset = true
		rest = r[1:]
	}
	bc, ok := era(rest)
	if !ok || (hasOffset && !withZone) {
		return nil, bad
	}
	if bc {
		y = 1 - y
	}
	wall := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Add(time.Duration(us) * time.Microsecond)
	var t time.Time
	switch {
	case !withZone:
		t = wall
	case hasOffset:
		t = wall.Add(-time.Duration(offset) * time.Second)
	default:
		if !f.ok || f.loc == nil {
			return nil, fmt.Errorf("%w: timestamptz without a zone needs the session TimeZone", errBadInput)
		}
		if t, ok = localInstant(wall, f.loc); !ok {
			return nil, fmt.Errorf("%w: the local time is skipped or repeated in %s", errBadInput, f.loc)
		}
	}
	return timestampFromMicros(t.UnixMicro() - pgEpochMicros)
}

// localInstant returns the instant whose wall clock in loc is wall (given
// in UTC), if there is exactly one.
func localInstant(wall time.Time, loc *time.Location) (time.Time, bool) {
	offsetAt := func(t time.Time) int {
		_, off := t.In(loc).Zone()
		return off
	}
	var found time.Time
	n := 0
	seen := map[int]bool{}
	for _, probe := range []time.Time{wall, wall.Add(-48 * time.Hour), wall.Add(48 * time.Hour)} {
		off := offsetAt(probe)
		if seen[off] {
			continue
		}
		seen[off] = true
		cand := wall.Add(-time.Duration(off) * time.Second)
		if offsetAt(cand) == off {
			found = cand
			n++
		}
	}
	return found, n == 1
}

// intervalUnits maps the units accepted in Postgres-style interval input
// to months, days or microseconds.
var intervalUnits = map[string]struct {
	name  string // the field, to refuse it twice
	field int    // 0 months, 1 days, 2 microseconds
	mult  int64
}{
	"year": {"year", 0, 12}, "years": {"year", 0, 12},
	"mon": {"month", 0, 1}, "mons": {"month", 0, 1}, "month": {"month", 0, 1}, "months": {"month", 0, 1},
	"day": {"day", 1, 1}, "days": {"day", 1, 1},
	"hour": {"hour", 2, 3600000000}, "hours": {"hour", 2, 3600000000},
	"min": {"minute", 2, 60000000}, "mins": {"minute", 2, 60000000},
	"minute": {"minute", 2, 60000000}, "minutes": {"minute", 2, 60000000},
	"sec": {"second", 2, 1000000}, "secs": {"second", 2, 1000000},
	"second": {"second", 2, 1000000}, "seconds": {"second", 2, 1000000},
}

// checked adds a*b to *sum, reporting overflow.
func checked(sum *int64, a, b int64) bool {
	if a != 0 && (b > math.MaxInt64/abs64(a) || b < -math.MaxInt64/abs64(a)) {
		return false
	}
	p := a * b
	if (p > 0 && *sum > math.MaxInt64-p) || (p < 0 && *sum < math.MinInt64-p) {
		return false
	}
	*sum += p
	return true
}

// parseInterval is interval_in for the forms Postgres prints: the
// postgres and postgres_verbose styles ("[@] 1 year -2 mons 3 days
// -04:05:06.789 [ago]", integer quantities except seconds, each unit
// once) and ISO 8601 with designators ("P1Y2M3DT4H5M6.5S"). The SQL
// standard forms, and any minus sign under IntervalStyle sql_standard
// (where a leading sign applies to later fields), are not decoded.
func parseInterval(s string, f *decodeCtx) (any, error) {
	bad := fmt.Errorf("%w: interval not in a form decoded exactly", errBadInput)
	v := trimSpace(s)
	if strings.HasPrefix(v, "P") {
		return parseISOInterval(v, bad)
	}
	if v == "0" || v == "@ 0" { // how postgres_verbose prints zero
		return duckdb.Interval{}, nil
	}
	if (!f.ok || f.intervalStyle == intervalSQLStandard) && strings.Contains(v, "-") {
		return nil, bad
	}
	fields := strings.FieldsFunc(v, func(r rune) bool { return r < 128 && isSpace(byte(r)) })
	if len(fields) > 0 && fields[0] == "@" {
		fields = fields[1:]
	}
	ago := len(fields) > 0 && strings.EqualFold(fields[len(fields)-1], "ago")
	if ago {
		fields = fields[:len(fields)-1]
	}
	if len(fields) == 0 {
		return nil, bad
	}
	var sums [3]int64 // months, days, microseconds
	used := map[string]bool{}
	for i := 0; i < len(fields); i++ {
		tok := fields[i]
		if strings.Contains(tok, ":") {
			if used["hour"] || used["minute"] || used["second"] {
				return nil, bad
			}
			used["hour"], used["minute"], used["second"] = true, true, true
			neg := tok[0] == '-'
			if tok[0] == '-' || tok[0] == '+' {
				tok = tok[1:]
			}
			h, rest, _ := strings.Cut(tok, ":")
			p := scanner{s: "00:" + rest}
			hours := (&scanner{s: h}).num(1, 18)
			us, ok := p.clock()
			if hours < 0 || len(h) == 0 || len(h) > 18 || !ok || p.rest() != "" || !isDigits(h) {
				return nil, bad
			}
			sign := int64(1)
			if neg {
				sign = -1
			}
			if !checked(&sums[2], sign*hours, 3600000000) || !checked(&sums[2], sign, us) {
				return nil, bad
			}
			continue
		}
		if i+1 >= len(fields) {
			return nil, bad
		}
		unit, ok := intervalUnits[strings.ToLower(fields[i+1])]
		if !ok || used[unit.name] {
			return nil, bad
		}
		used[unit.name] = true
		i++
		q, frac, hasFrac := strings.Cut(tok, ".")
		sign := int64(1)
		if q != "" && (q[0] == '-' || q[0] == '+') {
			if q[0] == '-' {
				sign = -1
			}
			q = q[1:]
		}
		if q == "" || !isDigits(q) || len(q) > 18 {
			return nil, bad
		}
		n := (&scanner{s: q}).num(1, 18)
		if hasFrac {
			// Only seconds keep a fraction exactly (microseconds).
			if unit.mult != 1000000 || frac == "" || len(frac) > 6 || !isDigits(frac) {
				return nil, bad
			}
			fus := (&scanner{s: frac + strings.Repeat("0", 6-len(frac))}).num(6, 6)
			if !checked(&sums[2], sign, fus) {
				return nil, bad
			}
		}
		if !checked(&sums[unit.field], sign*n, unit.mult) {
			return nil, bad
		}
	}
	if ago {
		for i := range sums {
			sums[i] = -sums[i]
		}
	}
	return makeInterval(sums, bad)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// makeInterval range-checks months and days.
func makeInterval(sums [3]int64, bad error) (any, error) {
	if sums[0] < math.MinInt32 || sums[0] > math.MaxInt32 || sums[1] < math.MinInt32 || sums[1] > math.MaxInt32 {
		return nil, bad
	}
	return duckdb.Interval{Months: int32(sums[0]), Days: int32(sums[1]), Micros: sums[2]}, nil
}

// parseISOInterval reads P[nY][nM][nD][T[nH][nM][n[.f]S]] with signed
// integers, a fraction only on seconds.
func parseISOInterval(v string, bad error) (any, error) {
	var sums [3]int64
	units := "YMD"
	mults := map[byte][2]int64{'Y': {0, 12}, 'M': {0, 1}, 'D': {1, 1}}
	rest := v[1:]
	if rest == "" {
		return nil, bad
	}
	inTime := false
	for rest != "" {
		if rest[0] == 'T' && !inTime {
			inTime, units = true, "HMS"
			mults = map[byte][2]int64{'H': {2, 3600000000}, 'M': {2, 60000000}, 'S': {2, 1000000}}
			rest = rest[1:]
			if rest == "" {
				return nil, bad
			}
			continue
		}
		i := 0
		if rest[0] == '-' || rest[0] == '+' {
			i++
		}
		for i < len(rest) && (isDigit(rest[i]) || rest[i] == '.') {
			i++
		}
		if i == 0 || i >= len(rest) {
			return nil, bad
		}
		num, unit := rest[:i], rest[i]
		pos := strings.IndexByte(units, unit)
		if pos < 0 {
			return nil, bad
		}
		units = units[pos+1:] // designators in order, each once
		m := mults[unit]
		sign := int64(1)
		if num[0] == '-' || num[0] == '+' {
			if num[0] == '-' {
				sign = -1
			}
			num = num[1:]
		}
		q, frac, hasFrac := strings.Cut(num, ".")
		if q == "" || !isDigits(q) || len(q) > 18 {
			return nil, bad
		}
		if hasFrac {
			if unit != 'S' || !inTime || frac == "" || len(frac) > 6 || !isDigits(frac) {
				return nil, bad
			}
			fus := (&scanner{s: frac + strings.Repeat("0", 6-len(frac))}).num(6, 6)
			if !checked(&sums[2], sign, fus) {
				return nil, bad
			}
		}
		if !checked(&sums[m[0]], sign*(&scanner{s: q}).num(1, 18), m[1]) {
			return nil, bad
		}
		rest = rest[i+1:]
	}
	return makeInterval(sums, bad)
}

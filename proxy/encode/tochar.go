package encode

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// pgdef.FuncToChar is Postgres's to_char(timestamp|timestamptz|date, text)
// as a DuckDB scalar function, for the planner's rewrite of to_char:
//
//	pgaccel_to_char(value, format, current_setting('TimeZone')) -> VARCHAR
//
// It prints the fields of formatting.c's DCH_to_char: HH HH12 HH24 MI SS MS
// US FF1-FF6 SSSS SSSSS, AM PM A.M. P.M. (and lower case), Y,YYY YYYY YYY
// YY Y IYYY IYY IY I, BC AD B.C. A.D., MONTH Month month MON Mon mon MM,
// DAY Day day DY Dy dy DDD IDDD DD D ID, WW IW W CC J Q RM rm, with the FM
// prefix and the TH/th suffixes; double-quoted text and other characters
// are copied. A format with time zone fields (TZ, TZH, TZM, OF), the TM
// prefix (which follows lc_time) or SP is refused with an error: the
// statement then falls back to the origin. ±infinity gives NULL, as in
// Postgres. A date is printed as a timestamptz at its local midnight,
// which is how Postgres resolves to_char(date, text).

// ToCharFunctions returns pgdef.FuncToChar's overloads (TIMESTAMP,
// TIMESTAMPTZ, DATE), for duckdb.RegisterScalarUDFSet.
func ToCharFunctions() ([]duckdb.ScalarFunc, error) {
	var out []duckdb.ScalarFunc
	for _, t := range []duckdb.Type{duckdb.TYPE_TIMESTAMP, duckdb.TYPE_TIMESTAMP_TZ, duckdb.TYPE_DATE} {
		f, err := newScalarFunc([]duckdb.Type{t, duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, toCharRow(t == duckdb.TYPE_TIMESTAMP_TZ))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// toCharRow is to_char(value, format, zone); zoned: value is an instant,
// printed in zone.
func toCharRow(zoned bool) func([]driver.Value) (any, error) {
	return func(values []driver.Value) (any, error) { return toChar(values, zoned) }
}

func toChar(values []driver.Value, zoned bool) (any, error) {
	t, ok := values[0].(time.Time)
	if !ok {
		return nil, fmt.Errorf("%s: a %T value", pgdef.FuncToChar, values[0])
	}
	layout, _ := values[1].(string)
	zone, _ := values[2].(string)
	if us := t.UnixMicro(); us == math.MaxInt64 || us == -math.MaxInt64 || us == math.MinInt64 {
		return nil, nil // ±infinity
	}
	if d := floorDiv(t.Unix(), 86400); d == duckDateInf || d == -duckDateInf {
		return nil, nil // date ±infinity
	}
	if zoned {
		loc, err := LoadLocation(zone)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pgdef.FuncToChar, err)
		}
		t = t.In(loc)
	} else {
		t = t.UTC()
	}
	items, err := parseToChar(layout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pgdef.FuncToChar, err)
	}
	return formatToChar(t, items), nil
}

// toCharItem is a parsed format element: a keyword (with its FM and TH
// flags) or literal text.
type toCharItem struct {
	kw      string
	literal string
	fm      bool
	th      int // 0, 1 (TH) or 2 (th)
}

// toCharKeywords are DCH_keywords, longest first among those sharing a
// prefix (the first match wins).
var toCharKeywords = []string{
	"A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
	"FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I",
	"J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.", "PM", "Q", "RM", "SSSSS", "SSSS", "SS",
	"TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
	"a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d",
	"ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw", "iyyy", "iyy", "iy", "i",
	"j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm", "sssss", "ssss", "ss",
	"tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
}

var errToCharFormat = errors.New("a to_char format element the acceleration does not print (time zone fields, TM, SP)")

// toCharCache holds parsed formats.
var toCharCache sync.Map // string -> []toCharItem

// parseToChar parses a format as formatting.c's parse_format does for
// DCH.
func parseToChar(f string) ([]toCharItem, error) {
	if v, ok := toCharCache.Load(f); ok {
		return v.([]toCharItem), nil
	}
	var items []toCharItem
	lit := func(s string) {
		if n := len(items); n > 0 && items[n-1].kw == "" {
			items[n-1].literal += s
			return
		}
		items = append(items, toCharItem{literal: s})
	}
	for i := 0; i < len(f); {
		rest := f[i:]
		fm := false
		if strings.HasPrefix(rest, "FM") || strings.HasPrefix(rest, "fm") {
			fm, rest = true, rest[2:]
		}
		if strings.HasPrefix(rest, "TM") || strings.HasPrefix(rest, "tm") {
			return nil, errToCharFormat
		}
		kw := ""
		for _, k := range toCharKeywords {
			if strings.HasPrefix(rest, k) {
				kw = k
				break
			}
		}
		if kw != "" {
			switch strings.ToUpper(kw) {
			case "TZ", "TZH", "TZM", "OF":
				return nil, errToCharFormat
			}
			it := toCharItem{kw: kw, fm: fm}
			rest = rest[len(kw):]
			switch {
			case strings.HasPrefix(rest, "TH"):
				it.th, rest = 1, rest[2:]
			case strings.HasPrefix(rest, "th"):
				it.th, rest = 2, rest[2:]
			}
			if strings.HasPrefix(rest, "SP") || strings.HasPrefix(rest, "sp") {
				return nil, errToCharFormat
			}
			items = append(items, it)
			i = len(f) - len(rest)
			continue
		}
		if fm {
			// FM before no keyword: Postgres drops it.
			i += 2
			continue
		}
		switch c := f[i]; {
		case c == '"':
			// Quoted text, with backslash escapes, up to the closing quote.
			var b strings.Builder
			j := i + 1
			for ; j < len(f) && f[j] != '"'; j++ {
				if f[j] == '\\' && j+1 < len(f) {
					j++
				}
				b.WriteByte(f[j])
			}
			lit(b.String())
			i = j + 1
		case c == '\\' && i+1 < len(f) && f[i+1] == '"':
			lit(`"`)
			i += 2
		default:
			// One character (all of a multibyte one) copied.
			n := 1
			for n < len(rest) && i+n < len(f) && f[i+n]&0xC0 == 0x80 {
				n++
			}
			lit(f[i : i+n])
			i += n
		}
	}
	toCharCache.Store(f, items)
	return items, nil
}

var (
	fullMonthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	fullDayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	romanMonth     = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
)

// formatToChar prints t (its wall clock fields) by items.
func formatToChar(t time.Time, items []toCharItem) string {
	var b strings.Builder
	year, mon, mday := t.Date()
	hour, min, sec := t.Clock()
	us := t.Nanosecond() / 1000
	wday := int(t.Weekday())
	yday := t.YearDay()
	adjYear := year // ADJUST_YEAR: 1 BC is year 1
	if year <= 0 {
		adjYear = -(year - 1)
	}
	num := func(it toCharItem, v, width int) {
		s := strconv.Itoa(v)
		if !it.fm && width > 0 {
			neg := v < 0
			if neg {
				s = s[1:]
			}
			for len(s) < width {
				s = "0" + s
			}
			if neg {
				s = "-" + s
			}
		}
		b.WriteString(s)
		if it.th != 0 {
			b.WriteString(ordinal(s, it.th == 1))
		}
	}
	word := func(it toCharItem, w string, c byte, pad int) {
		switch c {
		case 'U':
			w = strings.ToUpper(w)
		case 'L':
			w = strings.ToLower(w)
		}
		if !it.fm {
			for len(w) < pad {
				w += " "
			}
		}
		b.WriteString(w)
	}
	caseOf := func(kw string) byte {
		switch {
		case kw == strings.ToUpper(kw):
			return 'U'
		case kw == strings.ToLower(kw):
			return 'L'
		}
		return 'C'
	}
	isoYear, isoWeek := t.ISOWeek()
	if isoYear <= 0 {
		isoYear = -(isoYear - 1)
	}
	isoDow := wday
	if isoDow == 0 {
		isoDow = 7
	}
	for _, it := range items {
		if it.kw == "" {
			b.WriteString(it.literal)
			continue
		}
		switch kw := it.kw; strings.ToUpper(kw) {
		case "HH", "HH12":
			h := hour % 12
			if h == 0 {
				h = 12
			}
			num(it, h, 2)
		case "HH24":
			num(it, hour, 2)
		case "MI":
			num(it, min, 2)
		case "SS":
			num(it, sec, 2)
		case "MS":
			num(it, us/1000, 3)
		case "US":
			num(it, us, 6)
		case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6":
			n := int(kw[2] - '0')
			num(it, us/int(math.Pow10(6-n)), n)
		case "SSSS", "SSSSS":
			num(it, hour*3600+min*60+sec, 0)
		case "AM", "PM":
			s := "AM"
			if hour >= 12 {
				s = "PM"
			}
			word(it, s, caseOf(kw), 0)
		case "A.M.", "P.M.":
			s := "A.M."
			if hour >= 12 {
				s = "P.M."
			}
			word(it, s, caseOf(kw), 0)
		case "Y,YYY":
			s := strconv.Itoa(adjYear/1000) + "," + fmt.Sprintf("%03d", adjYear%1000)
			b.WriteString(s)
			if it.th != 0 {
				b.WriteString(ordinal(s, it.th == 1))
			}
		case "YYYY":
			num(it, adjYear, 4)
		case "YYY":
			num(it, adjYear%1000, 3)
		case "YY":
			num(it, adjYear%100, 2)
		case "Y":
			num(it, adjYear%10, 1)
		case "IYYY":
			num(it, isoYear, 4)
		case "IYY":
			num(it, isoYear%1000, 3)
		case "IY":
			num(it, isoYear%100, 2)
		case "I":
			num(it, isoYear%10, 1)
		case "BC", "AD":
			s := "AD"
			if year <= 0 {
				s = "BC"
			}
			word(it, s, caseOf(kw), 0)
		case "B.C.", "A.D.":
			s := "A.D."
			if year <= 0 {
				s = "B.C."
			}
			word(it, s, caseOf(kw), 0)
		case "MONTH":
			word(it, fullMonthNames[mon-1], caseOf(kw), 9)
		case "MON":
			word(it, fullMonthNames[mon-1][:3], caseOf(kw), 0)
		case "MM":
			num(it, int(mon), 2)
		case "DAY":
			word(it, fullDayNames[wday], caseOf(kw), 9)
		case "DY":
			word(it, fullDayNames[wday][:3], caseOf(kw), 0)
		case "DDD":
			num(it, yday, 3)
		case "IDDD":
			num(it, (isoWeek-1)*7+isoDow, 3)
		case "DD":
			num(it, mday, 2)
		case "D":
			num(it, wday+1, 0)
		case "ID":
			num(it, isoDow, 0)
		case "WW":
			num(it, (yday-1)/7+1, 2)
		case "IW":
			num(it, isoWeek, 2)
		case "W":
			num(it, (mday-1)/7+1, 0)
		case "CC":
			cc := (year + 99) / 100
			if year <= 0 {
				cc = -((99 - (year - 1)) / 100)
			}
			num(it, cc, 2)
		case "J":
			num(it, julianDay(year, int(mon), mday), 0)
		case "Q":
			num(it, (int(mon)-1)/3+1, 0)
		case "RM":
			w := romanMonth[mon-1]
			if kw == "rm" {
				w = strings.ToLower(w)
			}
			if !it.fm {
				for len(w) < 4 {
					w += " "
				}
			}
			b.WriteString(w)
		case "FX":
		}
	}
	return b.String()
}

// julianDay is date2j: the Julian day number of a proleptic Gregorian date
// (year 0 is 1 BC).
func julianDay(y, m, d int) int {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	julian := y*365 - 32167
	julian += y/4 - century + century/4
	julian += 7834*m/256 + d
	return julian
}

// ordinal is str_numth: the English ordinal suffix of the number s ends
// with.
func ordinal(s string, upper bool) string {
	suf := "th"
	if n := len(s); n > 0 {
		last := s[n-1]
		teen := n > 1 && s[n-2] == '1'
		switch {
		case teen:
		case last == '1':
			suf = "st"
		case last == '2':
			suf = "nd"
		case last == '3':
			suf = "rd"
		}
	}
	if upper {
		return strings.ToUpper(suf)
	}
	return suf
}

package encode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrUnsupported reports that a setting, a column type or a value cannot be
// encoded (or decoded) exactly as Postgres would. The caller routes the
// statement to the origin. Errors returned by this package wrap it with the
// column and the reason; test with errors.Is.
var ErrUnsupported = errors.New("encode: not reproducible exactly")

// Settings are the session settings that change how Postgres prints values.
// The zero value is not Postgres's default (ExtraFloatDigits 0, no time
// zone): use LoadSettings, which fills in the defaults.
type Settings struct {
	// TimeZone is the session TimeZone, used to print timestamptz values.
	// nil means unknown: timestamptz columns are then unsupported.
	TimeZone *time.Location
	// DateStyle as Postgres reports it, e.g. "ISO, MDY" or "German, DMY".
	// "" means "ISO, MDY".
	DateStyle string
	// IntervalStyle: "postgres", "postgres_verbose", "sql_standard" or
	// "iso_8601". "" means "postgres".
	IntervalStyle string
	// ExtraFloatDigits is extra_float_digits, -15 to 3 (Postgres's default
	// is 1: shortest round-trip output).
	ExtraFloatDigits int
	// ByteaOutput is "hex" or "escape". "" means "hex".
	ByteaOutput string

	printsDefaults bool // PrintsAsDefaults, set by LoadSettings
}

// Date styles and field orders, as Postgres's DateStyle and DateOrder.
const (
	styleISO = iota
	styleSQL
	stylePostgres
	styleGerman
)

const (
	orderMDY = iota
	orderDMY
	orderYMD
)

// Interval styles, as Postgres's IntervalStyle.
const (
	intervalPostgres = iota
	intervalPostgresVerbose
	intervalSQLStandard
	intervalISO8601
)

// format is the parsed, validated form of Settings that the encoders use.
type format struct {
	loc           *time.Location
	dateStyle     int
	dateOrder     int
	intervalStyle int
	efd           int
	byteaHex      bool
}

// LoadSettings builds Settings from the values Postgres reports in
// ParameterStatus (TimeZone, DateStyle, IntervalStyle, client_encoding,
// integer_datetimes) plus extra_float_digits and bytea_output, which
// Postgres does not report: the caller passes them when it knows them (from
// SET statements it saw). Keys are matched case-insensitively. Missing keys
// take Postgres's defaults: TimeZone "GMT", DateStyle "ISO, MDY",
// IntervalStyle "postgres", extra_float_digits "1", bytea_output "hex".
// A value the encoders cannot honour exactly returns ErrUnsupported.
func LoadSettings(params map[string]string) (*Settings, error) {
	get := func(name, def string) string {
		for k, v := range params {
			if strings.EqualFold(k, name) {
				return v
			}
		}
		return def
	}
	if enc := get("client_encoding", "UTF8"); !strings.EqualFold(enc, "UTF8") && !strings.EqualFold(enc, "UNICODE") {
		return nil, fmt.Errorf("client_encoding %q: %w: only UTF8 is encoded", enc, ErrUnsupported)
	}
	if v := get("integer_datetimes", "on"); v != "on" {
		return nil, fmt.Errorf("integer_datetimes %q: %w", v, ErrUnsupported)
	}
	loc, err := LoadLocation(get("TimeZone", "GMT"))
	if err != nil {
		return nil, err
	}
	s := &Settings{
		TimeZone:      loc,
		DateStyle:     get("DateStyle", "ISO, MDY"),
		IntervalStyle: get("IntervalStyle", "postgres"),
		ByteaOutput:   get("bytea_output", "hex"),
	}
	efd := strings.TrimSpace(get("extra_float_digits", "1"))
	s.ExtraFloatDigits, err = strconv.Atoi(efd)
	if err != nil {
		return nil, fmt.Errorf("extra_float_digits %q: %w", efd, ErrUnsupported)
	}
	f, err := s.format()
	if err != nil {
		return nil, err
	}
	s.printsDefaults = printsAsDefaults(f)
	return s, nil
}

// format validates s and parses its strings.
func (s *Settings) format() (format, error) {
	f := format{loc: s.TimeZone, efd: s.ExtraFloatDigits}
	var err error
	if f.dateStyle, f.dateOrder, err = parseDateStyle(s.DateStyle); err != nil {
		return f, err
	}
	switch strings.ToLower(strings.TrimSpace(s.IntervalStyle)) {
	case "", "postgres":
		f.intervalStyle = intervalPostgres
	case "postgres_verbose":
		f.intervalStyle = intervalPostgresVerbose
	case "sql_standard":
		f.intervalStyle = intervalSQLStandard
	case "iso_8601":
		f.intervalStyle = intervalISO8601
	default:
		return f, fmt.Errorf("IntervalStyle %q: %w", s.IntervalStyle, ErrUnsupported)
	}
	if f.efd < -15 || f.efd > 3 {
		return f, fmt.Errorf("extra_float_digits %d: %w: Postgres accepts -15 to 3", f.efd, ErrUnsupported)
	}
	switch strings.ToLower(strings.TrimSpace(s.ByteaOutput)) {
	case "", "hex":
		f.byteaHex = true
	case "escape":
	default:
		return f, fmt.Errorf("bytea_output %q: %w", s.ByteaOutput, ErrUnsupported)
	}
	return f, nil
}

// parseDateStyle parses a DateStyle value the way Postgres's check_datestyle
// does: a list of style and order keywords separated by commas or spaces.
func parseDateStyle(v string) (style, order int, err error) {
	style, order = styleISO, orderMDY
	haveOrder := false
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	for _, tok := range fields {
		switch strings.ToUpper(tok) {
		case "ISO":
			style = styleISO
		case "SQL":
			style = styleSQL
		case "POSTGRES":
			style = stylePostgres
		case "GERMAN":
			style = styleGerman
			if !haveOrder {
				order = orderDMY
			}
		case "YMD":
			order, haveOrder = orderYMD, true
		case "DMY", "EURO", "EUROPEAN":
			order, haveOrder = orderDMY, true
		case "MDY", "US", "NONEURO", "NONEUROPEAN":
			order, haveOrder = orderMDY, true
		case "DEFAULT":
		default:
			return 0, 0, fmt.Errorf("DateStyle %q: %w: unknown keyword %q", v, ErrUnsupported, tok)
		}
	}
	return style, order, nil
}

// locations caches loaded time zones by name; the tz files do not change
// while the process runs.
var locations sync.Map // string -> *time.Location

// LoadLocation loads a Postgres TimeZone value as Go time zone: an IANA name
// from the system tz database (which Debian's Postgres also uses), or a
// POSIX zone without daylight saving rules such as "<+05:30>-05:30" or
// "UTC+3" (what Postgres reports after SET TIME ZONE with a number or an
// interval). Anything else returns ErrUnsupported.
func LoadLocation(name string) (*time.Location, error) {
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := loadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, loc)
	return loc, nil
}

func loadLocation(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "localtime") {
		return nil, fmt.Errorf("TimeZone %q: %w", name, ErrUnsupported)
	}
	if loc, err := time.LoadLocation(name); err == nil {
		return loc, nil
	}
	if loc, ok := parsePOSIXZone(name); ok {
		return loc, nil
	}
	return nil, fmt.Errorf("TimeZone %q: %w: not in the tz database and not a fixed POSIX zone", name, ErrUnsupported)
}

// parsePOSIXZone parses "STD[+-]hh[:mm[:ss]]" where STD is 3 or more
// letters or <...>. POSIX offsets are west-positive.
func parsePOSIXZone(s string) (*time.Location, bool) {
	var abbr string
	if strings.HasPrefix(s, "<") {
		end := strings.IndexByte(s, '>')
		if end < 2 {
			return nil, false
		}
		abbr, s = s[1:end], s[end+1:]
	} else {
		n := 0
		for n < len(s) && (s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z') {
			n++
		}
		if n < 3 {
			return nil, false
		}
		abbr, s = s[:n], s[n:]
	}
	sign := 1
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 || parts[0] == "" {
		return nil, false
	}
	secs := 0
	mult := 3600
	for i, p := range parts {
		if p == "" || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return nil, false
		}
		n, _ := strconv.Atoi(p)
		if (i > 0 && n > 59) || (i == 0 && n > 167) {
			return nil, false
		}
		secs += n * mult
		mult /= 60
	}
	return time.FixedZone(abbr, -sign*secs), true
}

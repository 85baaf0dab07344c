package gen

import (
	"fmt"
	"strings"
)

// Settings are the session settings a statement runs under, the same on
// both sides.
type Settings struct {
	TimeZone         string
	DateStyle        string
	IntervalStyle    string
	ExtraFloatDigits string
	ByteaOutput      string
}

// Defaults are Postgres's defaults (TimeZone UTC as the harness sets it).
var Defaults = Settings{TimeZone: "UTC", DateStyle: "ISO, MDY", IntervalStyle: "postgres", ExtraFloatDigits: "1", ByteaOutput: "hex"}

// Time zones with DST changes on either hemisphere, historic offsets
// (Moscow's +04:31:19 of 1919, Kolkata's LMT), and abolished DST
// (Sao Paulo).
var timeZones = weighted[string]{{"UTC", 3}, {"America/Los_Angeles", 4}, {"Australia/Sydney", 3}, {"Asia/Kolkata", 2},
	{"Europe/Moscow", 2}, {"America/Sao_Paulo", 2}}

// settings picks a statement's settings: the time zone always, the
// output styles now and then.
func (b *builder) settings() Settings {
	s := Defaults
	s.TimeZone = pickW(b.r, timeZones)
	if b.r.chance(0.15) {
		s.DateStyle = pick(b.r, []string{"ISO, DMY", "SQL, DMY", "SQL, MDY", "Postgres, MDY", "German", "ISO, YMD"})
	}
	if b.r.chance(0.15) {
		s.IntervalStyle = pick(b.r, []string{"postgres_verbose", "sql_standard", "iso_8601"})
	}
	if b.r.chance(0.15) {
		s.ExtraFloatDigits = pick(b.r, []string{"0", "3", "-15", "2"})
	}
	if b.r.chance(0.05) {
		s.ByteaOutput = "escape"
	}
	return s
}

// SQL is one statement that sets every setting.
func (s Settings) SQL() string {
	return fmt.Sprintf("SET TimeZone = '%s'; SET DateStyle = '%s'; SET IntervalStyle = '%s'; SET extra_float_digits = %s; SET bytea_output = '%s'",
		s.TimeZone, s.DateStyle, s.IntervalStyle, s.ExtraFloatDigits, s.ByteaOutput)
}

// String shows the settings that differ from the defaults (but always
// the time zone), as a reproduction needs them.
func (s Settings) String() string {
	parts := []string{"TimeZone=" + s.TimeZone}
	if s.DateStyle != Defaults.DateStyle {
		parts = append(parts, "DateStyle="+s.DateStyle)
	}
	if s.IntervalStyle != Defaults.IntervalStyle {
		parts = append(parts, "IntervalStyle="+s.IntervalStyle)
	}
	if s.ExtraFloatDigits != Defaults.ExtraFloatDigits {
		parts = append(parts, "extra_float_digits="+s.ExtraFloatDigits)
	}
	if s.ByteaOutput != Defaults.ByteaOutput {
		parts = append(parts, "bytea_output="+s.ByteaOutput)
	}
	return strings.Join(parts, "; ")
}

// ParseSettings reads what String writes (and partial lists: the rest
// keep their defaults).
func ParseSettings(text string) (Settings, error) {
	s := Defaults
	for _, part := range strings.Split(text, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return s, fmt.Errorf("setting %q: want name=value", part)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "timezone":
			s.TimeZone = v
		case "datestyle":
			s.DateStyle = v
		case "intervalstyle":
			s.IntervalStyle = v
		case "extra_float_digits":
			s.ExtraFloatDigits = v
		case "bytea_output":
			s.ByteaOutput = v
		default:
			return s, fmt.Errorf("setting %q: not one the generator sets (TimeZone, DateStyle, IntervalStyle, extra_float_digits, bytea_output)", k)
		}
	}
	return s, nil
}

package proxy

import (
	"testing"
	"time"
)

func TestParseTimeout_PostgresUnits(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "50ms": 50 * time.Millisecond, "1s": time.Second, "90s": 90 * time.Second,
		"1min": time.Minute, "2h": 2 * time.Hour, "1d": 24 * time.Hour, "250": 250 * time.Millisecond,
		"500us": 500 * time.Microsecond, "-1": 0,
	} {
		got, err := parseTimeout(in)
		if err != nil || got != want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ms", "5 parsecs", "1.5s"} {
		if _, err := parseTimeout(in); err == nil {
			t.Errorf("parseTimeout(%q): want an error", in)
		}
	}
}

package catalog

import (
	"testing"
	"time"
)

func TestParseDuration_Forms(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{"1h30m", 90 * time.Minute, true},
		{"500ms", 500 * time.Millisecond, true},
		{"10m", 10 * time.Minute, true},
		{"1d", day, true},
		{"7d", 7 * day, true},
		{"30d", 30 * day, true},
		{"1d12h", day + 12*time.Hour, true},
		{" 2d ", 2 * day, true},
		{"0", 0, true},
		{"0s", 0, true},
		{"", 0, false},
		{"10", 0, false},
		{"ten minutes", 0, false},
		{"-5m", 0, false},
		{"1d-1h", 0, false},
		{"1.5d", 0, false},
		{"d", 0, false},
		{"1w", 0, false},
		{"99999999999999d", 0, false},
		{"106751d24h", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestFormatDuration_PrefersDays(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{30 * 24 * time.Hour, "30d"},
		{36 * time.Hour, "36h0m0s"},
		{10 * time.Second, "10s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.in); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package planner

import "testing"

func TestParseInterval(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want intervalFields
		ok   bool
	}{
		{"1 day", intervalFields{days: 1}, true},
		{"24 hours", intervalFields{micros: 86400e6}, true},
		{"1 mon 2 days 03:04:05.5", intervalFields{months: 1, days: 2, micros: (3*3600+4*60+5)*1e6 + 5e5}, true},
		{"@ 2 years ago", intervalFields{months: -24}, true},
		{"-1 days +25:00:00", intervalFields{days: -1, micros: 25 * 3600e6}, true},
		{"0", intervalFields{}, true},
		{"90 s", intervalFields{micros: 90e6}, true},
		{"3days", intervalFields{days: 3}, true},
		{"1.5 days", intervalFields{}, false},
		{"P1D", intervalFields{}, false},
		{"1-2", intervalFields{}, false},
		{"", intervalFields{}, false},
	} {
		got, ok := parseInterval(tc.in)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parseInterval(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIntervalCollision(t *testing.T) {
	for _, tc := range []struct {
		consts  []string
		collide bool
	}{
		{[]string{"1 day"}, false},
		{[]string{"1 day", "1 day"}, false},
		{[]string{"1 day", "2 days"}, false},
		{[]string{"1 day", "24 hours"}, true},
		{[]string{"1 month", "30 days"}, true},
		{[]string{"0", "-1 day"}, false},
		{[]string{"P1D", "1 day"}, true}, // unreadable beside another
		{[]string{"P1D"}, false},
	} {
		if got := intervalCollision(tc.consts) != ""; got != tc.collide {
			t.Errorf("intervalCollision(%q) = %v, want %v", tc.consts, got, tc.collide)
		}
	}
}

package accelerator

import (
	"database/sql/driver"
	"testing"

	"github.com/duckdb/duckdb-go/v2"
)

func TestJustify_AsPostgresDocuments(t *testing.T) {
	hour := int64(3600_000_000)
	tests := []struct {
		name        string
		hours, days bool
		in, want    duckdb.Interval
	}{
		{"justify_hours 27 hours", true, false, duckdb.Interval{Micros: 27 * hour}, duckdb.Interval{Days: 1, Micros: 3 * hour}},
		{"justify_days 35 days", false, true, duckdb.Interval{Days: 35}, duckdb.Interval{Months: 1, Days: 5}},
		{"justify_interval 1 mon -1 hour", true, true, duckdb.Interval{Months: 1, Micros: -hour}, duckdb.Interval{Days: 29, Micros: 23 * hour}},
		{"justify_hours -1 day 25 hours", true, false, duckdb.Interval{Days: -1, Micros: 25 * hour}, duckdb.Interval{Days: 0, Micros: hour}},
		{"justify_days 1 mon -40 days", false, true, duckdb.Interval{Months: 1, Days: -40}, duckdb.Interval{Days: -10}},
		{"justify_interval -1 mon 1 day", true, true, duckdb.Interval{Months: -1, Days: 1}, duckdb.Interval{Days: -29}},
	}
	for _, tt := range tests {
		got, err := justifyRow(tt.hours, tt.days)([]driver.Value{tt.in})
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestInitcapASCII(t *testing.T) {
	for in, want := range map[string]string{"hello wORLD": "Hello World", "o'neil mc2x": "O'Neil Mc2x", "élan vital": "éLan Vital", "": ""} {
		if got := InitcapASCII(in); got != want {
			t.Errorf("InitcapASCII(%q) = %q, want %q", in, got, want)
		}
	}
}

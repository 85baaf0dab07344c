package proxy

import (
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/planner"
)

// TestClockText: the relative-time values as Postgres gives them:
// microseconds, rounded half up to a precision (carrying into the
// seconds), the zone's wall clock and date for the types without a zone.
func TestClockText(t *testing.T) {
	syd, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 15, 59, 59, 999_999_900, time.UTC) // 02:59:59.9999999 on the 7th in Sydney
	for _, c := range []struct {
		clk  planner.Clock
		want string
	}{
		{planner.Clock{Type: planner.ClockTimestamptz, Precision: -1}, "2026-12-06 15:59:59.999999+00"},
		{planner.Clock{Type: planner.ClockTimestamptz, Precision: 0}, "2026-12-06 16:00:00+00"},
		{planner.Clock{Type: planner.ClockTimestamptz, Precision: 3}, "2026-12-06 16:00:00+00"},
		{planner.Clock{Type: planner.ClockTimestamp, Precision: -1}, "2026-12-07 02:59:59.999999"},
		{planner.Clock{Type: planner.ClockTimestamp, Precision: 5}, "2026-12-07 03:00:00"},
		{planner.Clock{Type: planner.ClockDate, Precision: -1}, "2026-12-07"},
		{planner.Clock{Type: planner.ClockTime, Precision: 2}, "03:00:00"},
	} {
		got, _, err := clockText(c.clk, at, syd)
		if err != nil || got != c.want {
			t.Errorf("%+v: %q (%v), want %q", c.clk, got, err, c.want)
		}
	}
	half := time.Date(2026, 1, 1, 0, 0, 0, 150_000, time.UTC)
	if got, _, _ := clockText(planner.Clock{Type: planner.ClockTimestamptz, Precision: 3}, half, time.UTC); got != "2026-01-01 00:00:00+00" {
		t.Errorf("0.00015 to 3 digits: %q", got)
	}
	if got, _, _ := clockText(planner.Clock{Type: planner.ClockTimestamptz, Precision: 4}, half, time.UTC); got != "2026-01-01 00:00:00.0002+00" {
		t.Errorf("0.00015 to 4 digits (half up): %q", got)
	}
}

package catalog

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationExample is shown with every malformed duration.
const durationExample = "write it like 90s, 10m, 1h30m or 7d"

var errDuration = errors.New("not a duration")

// ParseDuration parses a config duration: Go syntax ("90s", "1h30m",
// "500ms") optionally preceded by whole days ("1d", "7d", "1d12h"), as the
// spec writes retention periods and data windows. A bare "0" is zero.
// Negative durations are not accepted.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		return 0, errDuration
	}
	var days int64
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/int64(24*time.Hour) {
			return 0, errDuration
		}
		days, s = n, s[i+1:]
		if s == "" {
			return time.Duration(days) * 24 * time.Hour, nil
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			return 0, errDuration
		}
	}
	rest, err := time.ParseDuration(s)
	if err != nil {
		return 0, errDuration
	}
	total := time.Duration(days) * 24 * time.Hour
	if rest > math.MaxInt64-total {
		return 0, errDuration
	}
	return total + rest, nil
}

// formatDuration prints d the way a user would write it, preferring days.
func formatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}

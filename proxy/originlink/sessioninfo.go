package originlink

import "time"

// SessionInfo is what the planner and encoder need to know about the
// origin session that ParameterStatus does not report.
type SessionInfo struct {
	Valid            bool
	User             string
	SearchPath       []string
	TempTables       map[string]bool
	ExtraFloatDigits string
	ByteaOutput      string
	// StatementTimeout is statement_timeout (0: off), which the proxy
	// applies to what it answers itself (timeout.go).
	StatementTimeout time.Duration
	// RouteDetail says why pgaccel.route sends reads to the origin, ""
	// when it does not (route.go).
	RouteDetail string
	// CacheOff: pgaccel.cache = off, the session's accelerated answers
	// neither come from the results cache nor go into it.
	CacheOff bool
	// MaxStaleness is pgaccel.max_staleness (0: unset): reads of data
	// older than it go to the origin. MaxStalenessDetail says why every
	// read goes there when its value is not a duration ("" when it is).
	MaxStaleness       time.Duration
	MaxStalenessDetail string
	// Locale is lc_monetary, lc_numeric, lc_time and
	// timezone_abbreviations: what the origin formats answers with beyond
	// the encoder's settings (a caching dataset's answers are keyed by
	// it).
	Locale string
	// TextBytewise: the database's default collation compares text by
	// its bytes (C or POSIX, libc provider); text of no column's
	// collation is then ordered by the acceleration (planner.Session).
	TextBytewise bool
	// DefaultCollation is the database's default collation as
	// provider|locale|version (accelerator.EstablishedCollation), from
	// which textBytewise follows.
	DefaultCollation string
}

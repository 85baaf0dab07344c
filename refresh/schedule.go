package refresh

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/robfig/cron/v3"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// schedule is when a dataset refreshes on its own: every
// refresh_check_interval, at the times of refresh_cron, or never (load once,
// then on demand only). Jitter, when enabled, moves each interval refresh by
// up to ±refresh_jitter_max, delays the initial load by up to
// refresh_jitter_max, and delays each cron-triggered refresh by up to
// refresh_jitter_max.
type schedule struct {
	interval  time.Duration
	cron      cron.Schedule // nil without refresh_cron
	jitterMax time.Duration // 0 without jitter
	rnd       func(n int64) int64
}

func newSchedule(a *catalog.Acceleration, rnd func(int64) int64) schedule {
	s := schedule{interval: a.RefreshCheckInterval, rnd: rnd}
	if a.RefreshCron != "" {
		// Validated with the config; a failure here leaves no cron.
		if c, err := cron.ParseStandard(a.RefreshCron); err == nil {
			s.cron = c
		}
	}
	if a.RefreshJitterEnabled {
		s.jitterMax = a.RefreshJitterMax
		if s.jitterMax == 0 {
			s.jitterMax = s.interval / 10
		}
	}
	return s
}

// scheduled reports whether the dataset refreshes on its own.
func (s schedule) scheduled() bool { return s.interval > 0 || s.cron != nil }

// initialDelay is the delay of the initial load: a random value in
// [0, jitterMax].
func (s schedule) initialDelay() time.Duration {
	if s.jitterMax <= 0 {
		return 0
	}
	return time.Duration(s.rnd(int64(s.jitterMax) + 1))
}

// next returns when the refresh after one that ended at from is due (zero
// when none is scheduled), and when it starts: the same time for an interval
// schedule, which jitters the due time itself; for cron, the cron time is
// due and the start is jittered after it.
func (s schedule) next(from time.Time) (due, start time.Time) {
	switch {
	case s.interval > 0:
		d := s.interval
		if s.jitterMax > 0 {
			d += time.Duration(s.rnd(2*int64(s.jitterMax)+1)) - s.jitterMax
		}
		due = from.Add(d)
		return due, due
	case s.cron != nil:
		due = s.cron.Next(from)
		return due, due.Add(s.initialDelay())
	}
	return time.Time{}, time.Time{}
}

// Backoff bounds the waits between retries of a failed refresh or
// connection: the first retry waits First, later ones Fibonacci multiples
// of it (1, 2, 3, 5, 8 ... times First), never more than Max.
type Backoff struct {
	First, Max time.Duration
}

// DefaultBackoff is the spec's: from about one second to at most five
// minutes between attempts.
var DefaultBackoff = Backoff{First: time.Second, Max: retryCap}

// withDefaults fills the zero fields from DefaultBackoff.
func (b Backoff) withDefaults() Backoff {
	if b.First <= 0 {
		b.First = DefaultBackoff.First
	}
	if b.Max <= 0 {
		b.Max = max(DefaultBackoff.Max, b.First)
	}
	return b
}

// delay is the wait before retry number attempt (from 1): First times the
// attempt's Fibonacci number (1, 2, 3, 5, 8 ...), capped at Max, then
// randomized to between 75% and 125% of that (never above Max), so that
// datasets failing together do not retry together.
func (b Backoff) delay(attempt int, rnd func(int64) int64) time.Duration {
	a, c := int64(1), int64(2)
	for i := 1; i < attempt && time.Duration(a)*b.First < b.Max; i++ {
		a, c = c, a+c
	}
	d := min(time.Duration(a)*b.First, b.Max)
	spread := int64(d / 2)
	d = d*3/4 + time.Duration(rnd(spread+1))
	return min(d, b.Max)
}

// retryCap is the longest wait between retries by default.
const retryCap = 300 * time.Second

func defaultRand(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return rand.Int64N(n)
}

// Reasons a refresh fails, the reason label of
// dataset_acceleration_refresh_errors_total.
const (
	reasonConnection    = "connection"     // refused, reset, closed, unreachable
	reasonTimeout       = "timeout"        // network or statement timeout
	reasonOriginRestart = "origin_restart" // shutdown, crash recovery, starting up
	reasonSerialization = "serialization"  // serialization failure, deadlock
	reasonResources     = "resources"      // too many connections, out of memory or disk
	reasonAuth          = "auth"           // credentials or permissions refused
	reasonTLS           = "tls"            // certificate or handshake failure
	reasonSchema        = "schema"         // missing table, column or database
	reasonSQL           = "sql"            // refresh_sql or a filter the origin rejects
	reasonConfig        = "config"         // anything else the configuration must fix
	reasonData          = "data"           // a value or column the acceleration cannot load
	reasonCancelled     = "cancelled"      // superseded or shut down
	reasonOther         = "other"          // anything else, retried
)

// classify returns why err failed a refresh and whether retrying can help.
// Transient failures (the network, timeouts, the origin restarting,
// serialization failures, exhausted resources) are retried; failures only a
// configuration change fixes (credentials, TLS, a missing table or column,
// SQL the origin rejects) are not. Unknown failures are retried.
func classify(err error) (reason string, transient bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		code := pgErr.Code
		switch {
		case pgdef.IsShutdown(code):
			return reasonOriginRestart, true
		case code == pgdef.QueryCanceled || code == pgdef.IdleInTransactionTimeout || code == pgdef.LockNotAvailable:
			return reasonTimeout, true // statement, idle-in-transaction and lock timeouts
		case code == pgdef.SerializationFailure || code == pgdef.DeadlockDetected:
			return reasonSerialization, true
		case pgdef.IsConnection(code):
			return reasonConnection, true
		case pgdef.IsResources(code):
			return reasonResources, true
		case pgdef.IsAuthorization(code) || code == pgdef.InsufficientPrivilege:
			return reasonAuth, false
		case code == pgdef.InvalidCatalogName || code == pgdef.UndefinedTable || code == pgdef.UndefinedColumn || code == pgdef.InvalidSchemaName:
			return reasonSchema, false
		case pgdef.IsSyntaxOrAccess(code) || pgdef.IsData(code):
			return reasonSQL, false
		}
		return reasonOther, true
	}
	switch {
	case errors.Is(err, errTableNotFound) || errors.Is(err, errMissingColumn):
		return reasonSchema, false
	case errors.Is(err, errConfig):
		return reasonConfig, false
	case errors.Is(err, accelerator.ErrData):
		// The same table fails the same way: not retried before the next
		// scheduled or on-demand refresh.
		return reasonData, false
	case errors.Is(err, context.Canceled):
		return reasonCancelled, true
	case errors.Is(err, context.DeadlineExceeded):
		return reasonTimeout, true
	}
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		alertErr   tls.AlertError
	)
	if errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recordErr) || errors.As(err, &alertErr) ||
		strings.Contains(err.Error(), "tls: ") || strings.Contains(err.Error(), "server refused TLS connection") {
		return reasonTLS, false
	}
	if strings.Contains(err.Error(), "password authentication failed") || strings.Contains(err.Error(), "SASL") {
		return reasonAuth, false
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return reasonTimeout, true
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return reasonConnection, true
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return reasonConnection, true
	}
	return reasonOther, true
}

// sourceUnreachable reports whether a failure of this reason means the
// source could not be reached (rather than refused the refresh).
func sourceUnreachable(reason string) bool {
	switch reason {
	case reasonConnection, reasonTimeout, reasonOriginRestart, reasonResources:
		return true
	}
	return false
}

// errConfig marks failures that only a configuration change fixes.
var errConfig = errors.New("configuration error")

// errMissingColumn is returned when a column the dataset names is not in
// the origin table.
var errMissingColumn = errors.New("column not found at the origin")

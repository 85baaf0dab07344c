package proxy

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
)

// Relative time (planner/clock.go). A statement the acceleration answers
// reads now(), CURRENT_DATE and their kin as parameters the proxy binds:
//
//   - the transaction's start is when the statement that began it arrived
//     here: a statement arriving while the session is idle (no
//     transaction block open at its last ReadyForQuery) begins one (its
//     own, or the block its BEGIN opens); statement_timestamp() is when
//     the statement itself arrived;
//   - on the origin's clock: pgaccel's clock plus the offset
//     planner.OriginClock measured (half the round trip of its best probe
//     bounds the error), so that "the last 7 days" ends where the origin's
//     would;
//   - in the session's TimeZone for CURRENT_DATE, LOCALTIMESTAMP and
//     LOCALTIME, and rounded to CURRENT_TIMESTAMP(p)'s precision as
//     Postgres rounds.
//
// The bound: an answer is the origin's for the same instant; the instant
// differs from the one the origin would take by the clock offset's error
// plus the time between the client's message reaching pgaccel and
// reaching the origin (well under a millisecond on one network), and, in a
// transaction pgaccel began without the origin (localtx.go), the origin's
// own now() in it, should a later statement go there, is the time of that
// statement instead of the BEGIN.

// noteArrival records that a client's Query or Execute arrived at now.
func (ss *session) noteArrival(now time.Time) {
	ss.local.arrived, ss.local.timeRoute = now, routeOrigin
	if st := ss.state.TxStatus(); st != 'T' && st != 'E' {
		ss.local.txStart = now
	}
}

// originNow is the origin's clock at the local instant t.
func (ss *session) originNow(t time.Time) time.Time {
	if ss.accel != nil && ss.accel.Clock != nil {
		return t.Add(ss.accel.Clock.Offset())
	}
	return t
}

// errNoClock: the session's clock values cannot be given.
var errNoClock = errors.New("relative time: no session time zone")

// clockValue is the text (in Postgres's input form) and type OID of the
// relative-time value c for this statement.
func (ss *session) clockValue(c planner.Clock, loc *time.Location) (string, uint32, error) {
	at := ss.local.txStart
	if c.Statement || at.IsZero() {
		at = ss.local.arrived
	}
	if at.IsZero() {
		at = time.Now()
	}
	return clockText(c, ss.originNow(at), loc)
}

// clockText prints t as the relative-time value c, in loc.
func clockText(c planner.Clock, t time.Time, loc *time.Location) (string, uint32, error) {
	if loc == nil {
		return "", 0, errNoClock
	}
	// Postgres keeps microseconds (gettimeofday), and rounds them half up
	// to a precision (AdjustTimestampForTypmod; zone offsets are whole
	// seconds, so rounding the local time or the UTC instant agrees).
	us := t.UnixMicro()
	if c.Precision >= 0 && c.Precision < 6 {
		unit := int64(1)
		for range 6 - int(c.Precision) {
			unit *= 10
		}
		us = (us + unit/2) / unit * unit
	}
	t = time.UnixMicro(us)
	switch c.Type {
	case planner.ClockTimestamptz:
		return t.UTC().Format("2006-01-02 15:04:05.999999") + "+00", pgdef.OIDTimestamptz, nil
	case planner.ClockTimestamp:
		return t.In(loc).Format("2006-01-02 15:04:05.999999"), pgdef.OIDTimestamp, nil
	case planner.ClockDate:
		return t.In(loc).Format("2006-01-02"), pgdef.OIDDate, nil
	case planner.ClockTime:
		return t.In(loc).Format("15:04:05.999999"), pgdef.OIDTime, nil
	}
	return "", 0, errNoClock
}

// clockArg is the relative-time value c for this statement: its DuckDB
// argument, the placeholder that casts it ("CAST(? AS TIMESTAMPTZ)",
// encode.BindArg's) and its text.
func (ss *session) clockArg(c planner.Clock, s *encode.Settings) (arg any, placeholder, text string, err error) {
	text, oid, err := ss.clockValue(c, s.TimeZone)
	if err != nil {
		return nil, "", "", err
	}
	val, err := encode.DecodeParam(oid, 0, []byte(text), s)
	if err != nil {
		return nil, "", "", err
	}
	arg, placeholder, err = encode.BindArg(oid, val)
	return arg, placeholder, text, err
}

// bindClocks appends the DuckDB arguments and placeholders of d's clock
// values to those of the client's parameters ($n of the rewritten
// statement is placeholders[n-1]).
func (ss *session) bindClocks(d *planner.Decision, args []any, placeholders []string, s *encode.Settings) ([]any, []string, error) {
	for _, c := range d.Clocks {
		arg, ph, _, err := ss.clockArg(c, s)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, arg)
		placeholders = append(placeholders, strings.Replace(ph, "?", "$"+strconv.Itoa(len(args)), 1))
	}
	return args, placeholders, nil
}

// withClocks binds d's clock values for a statement without parameters of
// the client's (a simple Query): d.SQL gets their placeholders.
func (ss *session) withClocks(d *planner.Decision, s *encode.Settings) ([]any, bool) {
	if len(d.Clocks) == 0 {
		return nil, true
	}
	if d.ParamCount != 0 {
		return nil, false
	}
	args, placeholders, err := ss.bindClocks(d, nil, nil, s)
	if err != nil {
		return nil, false
	}
	sql, ok := planner.PlaceParams(d.SQL, placeholders)
	if !ok {
		return nil, false
	}
	d.SQL = sql
	return args, true
}

// clockLiterals writes d's clock values into d.SQL as constants (EXPLAIN,
// which DuckDB plans without parameters).
func (ss *session) clockLiterals(d *planner.Decision, s *encode.Settings) bool {
	if len(d.Clocks) == 0 {
		return true
	}
	lits := make([]string, len(d.Clocks))
	for i, c := range d.Clocks {
		_, ph, text, err := ss.clockArg(c, s)
		if err != nil {
			return false
		}
		lits[i] = strings.Replace(ph, "?", quoteLiteral(text), 1)
	}
	sql, ok := planner.SubstituteParams(d.SQL, func(n int) (string, bool) {
		if i := n - d.ParamCount - 1; i >= 0 && i < len(lits) {
			return lits[i], true
		}
		return "$" + strconv.Itoa(n), true
	})
	d.SQL = sql
	return ok
}

package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"

	"github.com/pgaccel/pgaccel/pgdef"
)

// statement_timeout on what the proxy answers itself. Postgres runs the
// timer of a simple Query from its arrival, and in the extended protocol
// from the arrival of the first Parse, Bind, Describe or Execute after the
// last completed Execute or Sync; it fires even while the backend waits for
// the client's next message (then the error is sent at once and everything
// up to the Sync is skipped). The origin times what it is sent. The proxy
// times what it keeps from the origin:
//
//   - A statement it runs on DuckDB is interrupted at the deadline (its
//     context is cancelled, which interrupts DuckDB) and the client gets
//     the error the origin would send, after the rows already sent.
//   - A statement whose messages it keeps (deferred.go) and whose deadline
//     passes while the client pauses gets the error when the client's next
//     message arrives: the client sees the same messages as from Postgres,
//     the error a pause later.
//   - An Execute whose Parse, Bind or Describe went to the origin in the
//     same stretch runs at the origin: the origin's timer is running for
//     it, and would fire, with an error of its own, while DuckDB runs it.
//
// When the proxy reports a statement's failure itself (timeout, cancel, or
// a DuckDB failure after rows were sent) and the origin's transaction
// would otherwise go on as if nothing had happened (a transaction block,
// or a stretch that also went to the origin), it fails the origin's
// transaction with a statement that raises the same error (failOrigin), so
// that the transaction is failed there as it would be in Postgres, and
// ReadyForQuery carries the status that follows.

// timeUnits are the units of Postgres's time settings in milliseconds
// ("": a bare number of milliseconds).
var timeUnits = map[string]time.Duration{
	"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second,
	"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// parseTimeout reads a time setting as Postgres shows it (SHOW,
// current_setting): an integer with a unit of us, ms, s, min, h or d, or
// a bare number of milliseconds; 0 is off.
func parseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || i == 0 && s[i] == '-') {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("time setting %q: %w", s, err)
	}
	u, ok := timeUnits[strings.TrimSpace(s[i:])]
	if !ok {
		return 0, fmt.Errorf("time setting %q: unknown unit", s)
	}
	if n <= 0 {
		return 0, nil
	}
	return time.Duration(n) * u, nil
}

// statementTimeout is Postgres's error for a statement that ran past
// statement_timeout.
func statementTimeout() *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: pgdef.SeverityError, SeverityUnlocalized: pgdef.SeverityError, Code: pgdef.QueryCanceled,
		Message: "canceling statement due to statement timeout"}
}

// localDeadline is when the extended-protocol statement being handled
// times out, zero for never.
func (ss *session) localDeadline() time.Time {
	if ss.acc.info.StatementTimeout <= 0 || ss.local.stmtStart.IsZero() {
		return time.Time{}
	}
	return ss.local.stmtStart.Add(ss.acc.info.StatementTimeout)
}

// startStatementTimer notes the arrival of a Parse, Bind, Describe or
// Execute: the statement's timer starts with the first of them. It reports
// whether the timer, running for messages the proxy kept, has expired: the
// statement has timed out while the client paused.
func (ss *session) startStatementTimer() bool {
	if ss.local.stmtStart.IsZero() {
		ss.local.stmtStart = time.Now()
		return false
	}
	return ss.keptTimerExpired()
}

// keptTimerExpired reports whether the statement timer runs for messages
// only the proxy has (the origin has been sent none of them, so its own
// timer is not running) and has expired.
func (ss *session) keptTimerExpired() bool {
	if ss.local.stmtStart.IsZero() || ss.local.originTimer || !ss.acc.info.Valid || ss.acc.infoDirty || ss.acc.info.StatementTimeout <= 0 {
		return false
	}
	return time.Since(ss.local.stmtStart) >= ss.acc.info.StatementTimeout
}

// stopStatementTimer ends the statement's timer: an Execute completed, or a
// Sync or Query arrived.
func (ss *session) stopStatementTimer() { ss.local.stmtStart = time.Time{} }

// noteOriginTimer follows the origin's statement timer through what the
// proxy sends it: a Parse, Bind or Describe starts it (if it is not
// running), an Execute, Sync or Query ends it (at its completion).
func (ss *session) noteOriginTimer(msg pgproto3.FrontendMessage) {
	switch msg.(type) {
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe:
		ss.local.originTimer = true
	case *pgproto3.Execute, *pgproto3.Sync, *pgproto3.Query:
		ss.local.originTimer = false
	}
}

// runLocal makes interrupt the cancel of the local query the client waits
// for now, until endRun: a CancelRequest calls it, and so does the
// statement timer at deadline (zero: no timeout).
func (ss *session) runLocal(interrupt context.CancelFunc, deadline time.Time) {
	ss.local.mu.Lock()
	defer ss.local.mu.Unlock()
	ss.stopRunLocked()
	run := ss.local.run
	ss.local.cancel, ss.local.canceled, ss.local.timedOut = interrupt, false, false
	if deadline.IsZero() {
		return
	}
	ss.local.timer = time.AfterFunc(time.Until(deadline), func() {
		ss.local.mu.Lock()
		defer ss.local.mu.Unlock()
		if ss.local.run == run && ss.local.cancel != nil {
			ss.local.timedOut = true
			ss.local.cancel()
		}
	})
}

// endRun ends what runLocal started: the local query is no longer waited
// for (a suspended portal's is not running), so a cancel goes to the
// origin backend, which ignores it when idle, as Postgres does.
func (ss *session) endRun() {
	ss.local.mu.Lock()
	defer ss.local.mu.Unlock()
	ss.stopRunLocked()
	ss.local.cancel = nil
}

// stopRunLocked stops the statement timer of the local run, if any, and
// starts a new run number, so that a timer already firing finds its run
// over. The caller holds local.mu.
func (ss *session) stopRunLocked() {
	if ss.local.timer != nil {
		ss.local.timer.Stop()
		ss.local.timer = nil
	}
	ss.local.run++
}

// localInterrupted returns the error of the last local query when it was
// interrupted, by the client's CancelRequest or by statement_timeout, and
// nil when it was not.
func (ss *session) localInterrupted() *pgproto3.ErrorResponse {
	ss.local.mu.Lock()
	defer ss.local.mu.Unlock()
	switch {
	case ss.local.timedOut:
		return statementTimeout()
	case ss.local.canceled:
		return queryCanceled()
	}
	return nil
}

// failQuery ends a simple Query the proxy answered with error e, after
// whatever outBuf holds (rows already encoded): in a transaction block the
// origin's transaction is failed first, so that ReadyForQuery says 'E' and
// the block behaves as in Postgres.
func (ss *session) failQuery(e *pgproto3.ErrorResponse) {
	if ss.state.TxStatus() == 'T' {
		if err := ss.failOrigin(e, true); err != nil {
			ss.log.Debug().Err(err).Msg("failing the origin transaction")
		}
	}
	if err := ss.finish(e, &pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()}); err != nil {
		ss.close()
	}
}

// failExecute ends an Execute (or the statement the client's next message
// belongs to) that the proxy answers with error e, after whatever outBuf
// holds, and skips the client's messages up to its Sync, as Postgres does.
// When the origin has part of the stretch or a transaction block is open,
// the origin fails too and skips to the same Sync, whose ReadyForQuery
// then comes from it; else the stretch stays the proxy's.
func (ss *session) failExecute(e *pgproto3.ErrorResponse) {
	ss.ext.localSkip = true
	if !ss.ext.stretchOrigin && ss.state.TxStatus() != 'T' {
		if err := ss.finish(e); err != nil {
			ss.close()
		}
		return
	}
	if err := ss.failOrigin(e, false); err != nil {
		// An earlier message of the stretch failed at the origin, which
		// skips this statement: so does its answer.
		ss.client.outBuf = ss.client.outBuf[:0]
		return
	}
	buf, err := e.Encode(ss.client.outBuf)
	if err == nil {
		err = ss.writeLocal(buf, false, false, 0)
	}
	ss.client.outBuf = buf[:0]
	if err != nil {
		ss.close()
	}
}

// requestFail counts failOrigin's requests (pgaccel_origin_requests_total).
const requestFail = "fail_transaction"

// failStatementName is the proxy's statement that fails the origin's
// transaction in the extended protocol.
const failStatementName = "_pgaccel_fail"

// errSkippedAtOrigin: the origin skipped the proxy's failing statement
// (an earlier message of the stretch failed there).
var errSkippedAtOrigin = errors.New("the origin skipped the statement")

// failOrigin makes the origin's transaction fail with a statement that
// raises e's code and message; its answers are kept from the client. In the
// simple protocol (a Query; it must not be sent inside an extended-protocol
// stretch, which it would commit) the origin's ReadyForQuery follows; in
// the extended protocol it is a Parse, Bind and Execute without a Sync, so
// the origin skips to the client's Sync, as the client's statement failed.
func (ss *session) failOrigin(e *pgproto3.ErrorResponse, simple bool) error {
	sql := fmt.Sprintf("DO $pgaccel$BEGIN RAISE EXCEPTION USING ERRCODE = '%s', MESSAGE = %s; END$pgaccel$",
		e.Code, quoteLiteral(e.Message))
	var msgs []pgproto3.BackendMessage
	var err error
	if simple {
		msgs, err = ss.privateRequest(requestFail, privateMsg{msg: &pgproto3.Query{String: sql}, kind: originlink.ItemQuery, hasKind: true})
	} else {
		msgs, err = ss.privateRequest(requestFail,
			// Closing a statement that does not exist is no error; one of
			// an earlier failure is still there (its Close was skipped).
			privateMsg{msg: &pgproto3.Close{ObjectType: 'S', Name: failStatementName}, kind: originlink.ItemClose, hasKind: true},
			privateMsg{msg: &pgproto3.Parse{Name: failStatementName, Query: sql}, kind: originlink.ItemParse, hasKind: true},
			privateMsg{msg: &pgproto3.Bind{DestinationPortal: failStatementName, PreparedStatement: failStatementName}, kind: originlink.ItemBind, hasKind: true},
			privateMsg{msg: &pgproto3.Execute{Portal: failStatementName}, kind: originlink.ItemExecute, hasKind: true},
			privateMsg{msg: &pgproto3.Flush{}},
		)
	}
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if _, ok := m.(*pgproto3.ErrorResponse); ok {
			return nil
		}
	}
	return errSkippedAtOrigin
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

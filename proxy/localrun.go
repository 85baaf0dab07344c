package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// localRun is the statement the session runs for its client: the local
// query the client waits for (runLocal), and the statement timer
// (timeout.go) and timings of the statement, local or at the origin.
//
// Goroutines: mu guards cancel, timer, run, canceled and timedOut, which
// a cancel request, the timer and shutdown touch from other goroutines.
// The rest is the client loop's.
type localRun struct {
	mu       sync.Mutex
	cancel   context.CancelFunc
	timer    *time.Timer
	run      uint64
	canceled bool
	timedOut bool

	// stmtStart is when the statement timer started, zero while it is
	// not running; originTimer: the origin's is running.
	stmtStart   time.Time
	originTimer bool
	// arrived is when the client's current Query or Execute arrived, and
	// timeRoute the route its time counts under if the origin answers it
	// (origin; fallback when the acceleration handed it over).
	arrived   time.Time
	timeRoute string
	// stat is the statistics entry of the current Query or Execute
	// (stats.go); nil when none is kept.
	stat *stmtstats.Entry
	// txStart is when the statement that began the session's current
	// transaction arrived: now() of the accelerated statements in it
	// (clock.go).
	txStart time.Time
}

// localResult is an accelerated result being sent to the client.
type localResult struct {
	rows *accelerator.Rows
	// ctx is the query's: cancelled when it is interrupted (a cancel,
	// statement_timeout), which stops sending rows DuckDB has ready.
	ctx     context.Context
	enc     *encode.Encoder
	sent    int64
	cancel  context.CancelFunc
	started time.Time
	// datasets the statement reads, for the metrics.
	datasets []string
	// internal: the proxy's answer about itself (see internal).
	internal bool
	// fingerprint of the statement, for the fallback memory.
	fingerprint uint64
	// peeked is true when the first row was read ahead (by emptyResult)
	// and not sent yet.
	peeked bool
	// flushed: sendRows wrote part of the answer to the client already
	// (it is too large for the results cache).
	flushed bool
	// cacheKey, cacheGens: where an Execute's whole answer goes in the
	// results cache, and the data generations it was computed at ("":
	// not kept).
	cacheKey  string
	cacheGens []uint64
	// point: the answer is a point index's (pointindex.go).
	point bool
	// verify, when set, is the answer's shadow verification sample: its
	// DataRows are hashed as they are sent (verify.go).
	verify *verifySample
}

// emptyResult reports whether r has no rows, reading its first row ahead
// (sendRows sends it). A failure counts as not empty: sendRows reports it.
func (r *localResult) emptyResult() bool {
	if r.peeked {
		return false
	}
	if r.rows.Next() {
		r.peeked = true
		return false
	}
	return r.rows.Err() == nil
}

func (r *localResult) close() {
	if r.rows != nil {
		r.rows.Close()
	}
	if r.cancel != nil {
		r.cancel()
	}
}

// cancelLocal interrupts a running local query, if any.
func (ss *session) cancelLocal() bool {
	ss.local.mu.Lock()
	defer ss.local.mu.Unlock()
	if ss.local.cancel != nil {
		ss.local.cancel()
		ss.local.canceled = true
		return true
	}
	return false
}

// queryCanceled is Postgres's error for a statement cancelled by request.
func queryCanceled() *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: pgdef.SeverityError, SeverityUnlocalized: pgdef.SeverityError, Code: pgdef.QueryCanceled, Message: "canceling statement due to user request"}
}

// columnsFor builds the encoder's target columns from the origin's row
// description and the client's result formats.
func columnsFor(rd *pgproto3.RowDescription, formats []int16, enums []uint32) ([]encode.Column, error) {
	if len(formats) > 1 && len(formats) != len(rd.Fields) {
		return nil, errors.New("result format count does not match the columns")
	}
	cols := make([]encode.Column, len(rd.Fields))
	for i, f := range rd.Fields {
		oid := f.DataTypeOID
		if slices.Contains(enums, oid) {
			oid = pgdef.OIDText // an enum: its label, in text as in binary (enum_out, enum_send)
		}
		cols[i] = encode.Column{TypeOID: oid, TypeMod: f.TypeModifier, Format: formatAt(formats, i)}
	}
	return cols, nil
}

// startLocal runs d on the engine and prepares the encoder for the origin's
// description of it, which describe returns (it may wait for the origin,
// which works on it while DuckDB runs the statement). Errors mean the
// statement must go to the origin instead; errOriginDescribe that it goes
// there as it is.
//
// The query is the one the client waits for (runLocal) until the caller's
// endRun: a CancelRequest interrupts it, and so does statement_timeout at
// deadline (zero: none).
//
// pre, when set, is the answer already at hand (from a point index):
// DuckDB is not asked.
func (ss *session) startLocal(d planner.Decision, deadline time.Time, describe func() (*pgproto3.RowDescription, error), formats []int16, args []any, s *encode.Settings, pre *accelerator.Rows) (*localResult, error) {
	ss.mustNotBlock("local query")
	ctx, cancel := context.WithCancel(ss.srv.baseCtx)
	ss.runLocal(cancel, deadline)
	rows, err := pre, error(nil)
	if pre == nil {
		rows, err = ss.accel.Engine.QueryIn(ctx, ss.state.Param("TimeZone"), d.SQL, args...)
	}
	if err != nil {
		cancel()
		if rd, derr := describe(); derr != nil || rd == nil {
			return nil, errOriginDescribe // the origin refuses it too, and says why
		}
		return nil, err
	}
	rd, err := describe()
	if err != nil || rd == nil {
		rows.Close()
		cancel()
		return nil, errOriginDescribe
	}
	cols, err := columnsFor(rd, formats, d.EnumTypes)
	if err != nil {
		rows.Close()
		cancel()
		return nil, err
	}
	rcols := rows.Columns()
	if len(rcols) != len(cols) {
		rows.Close()
		cancel()
		return nil, errors.New("the acceleration returns a different number of columns than the origin")
	}
	duckTypes := make([]string, len(rcols))
	for i, c := range rcols {
		duckTypes[i] = c.DuckType
	}
	enc, err := encode.NewEncoder(cols, duckTypes, s)
	if err != nil {
		rows.Close()
		cancel()
		return nil, err
	}
	return &localResult{rows: rows, ctx: ctx, enc: enc, cancel: cancel, started: time.Now(), datasets: d.Datasets, internal: internal(&d), point: pre != nil}, nil
}

// errOriginDescribe: the origin does not describe the statement (it refuses
// it, and will say why when it runs it) or it returns no rows; it goes to
// the origin as it is, not as a fallback of the acceleration.
var errOriginDescribe = errors.New("the origin does not describe the statement as a query")

// described is a describe function for a description already at hand.
func described(rd *pgproto3.RowDescription) func() (*pgproto3.RowDescription, error) {
	return func() (*pgproto3.RowDescription, error) { return rd, nil }
}

// errOriginSkipping: an earlier message of the stretch failed at the
// origin, which skips everything up to the next Sync; the statement is
// forwarded for the origin to skip, and nothing of the local answer is
// sent.
var errOriginSkipping = errors.New("the origin skips to the next Sync")

// errAfterOutput is a local failure after rows reached the client: the
// statement can no longer move to the origin.
type errAfterOutput struct{ err error }

func (e *errAfterOutput) Error() string { return e.err.Error() }

// localBufferLimit is how much of a local result is held before the first
// write; a failure within it can still fall back to the origin.
const localBufferLimit = 1 << 20

// sendRows encodes up to maxRows rows (0: all) of r and writes them after
// head (messages that precede the rows, e.g. a RowDescription). It reports
// whether the result is exhausted. Errors before anything was written are
// returned plainly (the caller falls back to the origin); later ones as
// *errAfterOutput.
func (ss *session) sendRows(r *localResult, head []pgproto3.BackendMessage, maxRows int64) (done bool, n int64, err error) {
	buf := ss.client.outBuf[:0]
	for _, m := range head {
		if buf, err = m.Encode(buf); err != nil {
			return false, 0, err
		}
	}
	wroteAny := false
	write := func() error {
		if !wroteAny && !ss.origin.pending.Idle() {
			// Streaming past the buffer: every earlier origin response
			// must be in first, and none of them an error that makes the
			// origin skip this statement.
			if !ss.drain() {
				return errOriginSkipping
			}
		}
		err := ss.writeClient(buf)
		buf = buf[:0]
		wroteAny = true
		r.flushed = true
		return err
	}
	for maxRows <= 0 || n < maxRows {
		more := r.peeked
		if more {
			r.peeked = false
		} else {
			more = r.rows.Next()
		}
		if !more {
			if err := r.rows.Err(); err != nil {
				if wroteAny {
					return false, n, &errAfterOutput{err}
				}
				return false, n, err
			}
			// The caller appends the completion message and flushes.
			ss.client.outBuf = buf
			return true, n, nil
		}
		if n&255 == 255 && r.ctx.Err() != nil {
			// Interrupted while sending a result DuckDB has ready (it
			// checks only while it computes): Postgres stops between rows.
			if wroteAny {
				return false, n, &errAfterOutput{r.ctx.Err()}
			}
			return false, n, r.ctx.Err()
		}
		vals := r.rows.Values()
		start := len(buf)
		buf = append(buf, 'D', 0, 0, 0, 0, byte(len(vals)>>8), byte(len(vals)))
		for i, v := range vals {
			lenAt := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			out, isNull, err := r.enc.AppendValue(buf, i, v)
			if err != nil {
				if wroteAny {
					return false, n, &errAfterOutput{err}
				}
				return false, n, err
			}
			if isNull {
				buf = append(buf[:lenAt], 0xff, 0xff, 0xff, 0xff)
				continue
			}
			buf = out
			putUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
		}
		if len(buf)-start-1 > maxRowBytes {
			// No Postgres row is that long (its limit is 1 GB); the
			// length would not even fit the message's length field.
			err := fmt.Errorf("a row of %d bytes, over the %d bytes of a Postgres row", len(buf)-start-1, maxRowBytes)
			buf = buf[:start]
			if wroteAny {
				return false, n, &errAfterOutput{err}
			}
			return false, n, err
		}
		putUint32(buf[start+1:], uint32(len(buf)-start-1))
		if r.verify != nil {
			r.verify.row(buf[start:])
		}
		n++
		r.sent++
		if len(buf) >= localBufferLimit {
			if err := write(); err != nil {
				if errors.Is(err, errOriginSkipping) {
					return false, n, err
				}
				return false, n, &errAfterOutput{err}
			}
		}
	}
	// The row limit was reached: the portal is suspended unless the result
	// happens to end exactly here, which Postgres also reports as suspended.
	ss.client.outBuf = buf
	return false, n, nil
}

// maxRowBytes bounds a DataRow the proxy encodes: Postgres's MaxAllocSize.
const maxRowBytes = 1<<30 - 1

func putUint32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// finish writes what sendRows left in the session's output buffer followed
// by tail, and flushes.
func (ss *session) finish(tail ...pgproto3.BackendMessage) error {
	buf := ss.client.outBuf
	for _, m := range tail {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			return err
		}
	}
	err := ss.writeOrdered(buf)
	if cap(buf) > 4*localBufferLimit {
		buf = nil
	}
	ss.client.outBuf = buf[:0]
	return err
}

func selectTag(n int64) *pgproto3.CommandComplete {
	return &pgproto3.CommandComplete{CommandTag: []byte("SELECT " + strconv.FormatInt(n, 10))}
}

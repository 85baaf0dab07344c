package originlink

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgaccel/pgaccel/pgdef"
)

// StandIn stands in for the origin connection of a session that
// has none and cannot open one (the origin is down). It answers what the
// session sends as a Postgres session answers a statement it cannot run:
// an ErrorResponse (SQLSTATE 08006, severity ERROR, so the session goes
// on; 25P02 in a failed transaction, see tx) for a Query or the first extended-protocol message of a stretch,
// nothing for the rest of the stretch (Postgres skips to the Sync), and
// ReadyForQuery at the Query's end and at the Sync, with status idle: the
// session holds no transaction at the origin. The session's relay reads
// these answers like the origin's, so ordering with the proxy's own
// answers, skipping after an error and the pending queue work unchanged.
//
// It is a net.Conn so that the session's origin relay runs on it as on a
// socket; Close ends the relay's read with net.ErrClosed.
type StandIn struct {
	message, hint string

	// tx is the transaction status its ReadyForQuery reports: 'I', or,
	// for a session in a transaction that is not at the origin
	// (localtx.go), 'T' until an error fails it, then 'E'.
	tx byte

	mu       sync.Mutex
	cond     *sync.Cond
	out      []byte // answers not yet read
	in       []byte // a partial message written
	skipping bool   // an error was answered: skip to the next Sync
	closed   bool
}

// NewStandIn is a stand-in whose errors carry message and hint.
func NewStandIn(message, hint string) *StandIn {
	u := &StandIn{message: message, hint: hint, tx: 'I'}
	u.cond = sync.NewCond(&u.mu)
	return u
}

// Write takes frontend messages and queues their answers.
func (u *StandIn) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return 0, net.ErrClosed
	}
	u.in = append(u.in, p...)
	for len(u.in) >= 5 {
		n := int(binary.BigEndian.Uint32(u.in[1:5]))
		if n < 4 || len(u.in) < 1+n {
			break
		}
		u.answer(u.in[0])
		u.in = u.in[1+n:]
	}
	if len(u.in) == 0 {
		u.in = nil
	}
	u.cond.Broadcast()
	return len(p), nil
}

// answer queues the answer to one message of type t; u.mu is held.
func (u *StandIn) answer(t byte) {
	errResp := func() {
		if u.tx == 'E' {
			// In a failed transaction, as Postgres answers there.
			u.out, _ = pgdef.AbortedTx().Encode(u.out)
			return
		}
		u.out, _ = pgdef.Error(pgdef.SeverityError, pgdef.ConnectionFailure, u.message, u.hint).Encode(u.out)
		if u.tx == 'T' {
			u.tx = 'E' // the error fails the transaction
		}
	}
	rfq := func() {
		u.out, _ = (&pgproto3.ReadyForQuery{TxStatus: u.tx}).Encode(u.out)
	}
	switch t {
	case 'Q', 'F':
		errResp()
		rfq()
	case 'S':
		u.skipping = false
		rfq()
	case 'P', 'B', 'D', 'E', 'C':
		if !u.skipping {
			u.skipping = true
			errResp()
		}
	}
	// Flush, Terminate and COPY messages need no answer (no COPY can have
	// started).
}

// Read returns queued answers, waiting for some.
func (u *StandIn) Read(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.out) == 0 && !u.closed {
		u.cond.Wait()
	}
	if len(u.out) == 0 {
		return 0, net.ErrClosed
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// Close ends the reads of the relay that reads it (net.ErrClosed).
func (u *StandIn) Close() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	u.cond.Broadcast()
	return nil
}

// Idle reports whether every answer has been read.
func (u *StandIn) Idle() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.out) == 0 && len(u.in) == 0
}

type standInAddr struct{}

func (standInAddr) Network() string { return "pgaccel" }
func (standInAddr) String() string  { return "unavailable origin" }

// The rest of net.Conn: no address, no deadline (nothing waits).
func (u *StandIn) LocalAddr() net.Addr              { return standInAddr{} }
func (u *StandIn) RemoteAddr() net.Addr             { return standInAddr{} }
func (u *StandIn) SetDeadline(time.Time) error      { return nil }
func (u *StandIn) SetReadDeadline(time.Time) error  { return nil }
func (u *StandIn) SetWriteDeadline(time.Time) error { return nil }

// SetTx sets the transaction status its ReadyForQuery reports.
func (u *StandIn) SetTx(status byte) {
	u.mu.Lock()
	u.tx = status
	u.mu.Unlock()
}

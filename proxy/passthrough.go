package proxy

import (
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"

	"github.com/pgaccel/pgaccel/pgdef"
)

// The pass-through relay: a session of a proxy without an acceleration
// (no datasets configured) has nothing to route, so after startup its
// messages are relayed without being decoded and encoded again. Each side
// is framed into messages (wire.FrameReader), each message's type is looked at,
// and the few whose content the proxy keeps track of are decoded with
// pgproto3: ParameterStatus (the session's parameters), ReadyForQuery (the
// transaction status) and ErrorResponse (a FATAL ends the session). Every
// run of whole messages a read brings is forwarded in one write, as it
// came. Handling each message on its own (decode, the queue of pending
// responses, locks, re-encode) cost the relay about 1.1 µs of user CPU per
// select-only pgbench transaction (2.2 against pgbouncer's 0.9), and with
// the relay a serial stage of every transaction, about a tenth of the
// throughput at 8 clients on a 2-core machine (bench/RESULTS.md).
//
// The proxy checks the framing of client messages (known type, length,
// server.max_message_bytes) and ends the session with a FATAL 08P01 or
// 54000 on a bad one, as before; the content of a well-framed message is
// the origin's to check, and a malformed one gets the origin's own error
// (08P01), exactly as a direct connection would.
//
// Sessions with an acceleration decode every message (relay.go): the
// routing hook needs them.

// passState is what the pass-through relay tracks. syncs and open are
// written by the client side and read by the origin side (and by shutdown).
type passState struct {
	// syncs counts the Query, Sync and FunctionCall messages relayed that
	// the origin has not answered with ReadyForQuery yet.
	syncs atomic.Int64
	// open is set while extended-protocol messages have been relayed after
	// the last Sync (their answers may still be due).
	open atomic.Bool
}

// idle reports whether the origin owes the client nothing.
func (p *passState) idle() bool {
	return p.syncs.Load() == 0 && !p.open.Load()
}

// frontendTypes are the message types a client may send after startup.
var frontendTypes = [256]bool{
	'Q': true, 'P': true, 'B': true, 'D': true, 'E': true, 'C': true, 'S': true,
	'H': true, 'F': true, 'd': true, 'c': true, 'f': true, 'X': true,
}

// passClient relays the client's whole messages buffered, in one write,
// then reads the client once. It reports whether the client side ended,
// and whether there was nothing to read (only in an event loop).
func (ss *session) passClient() (ended, idle bool) {
	fr := ss.client.fr
	start := fr.Mark()
	var failure error
	terminated := false
scan:
	for {
		m, err := fr.Next()
		if err != nil {
			failure = err
			break
		}
		if m == nil {
			break
		}
		switch t := m[0]; t {
		case 'Q', 'S', 'F':
			ss.pass.syncs.Add(1)
			ss.pass.open.Store(false)
		case 'P', 'B', 'D', 'E', 'C':
			if !ss.pass.open.Load() {
				ss.pass.open.Store(true)
			}
		case 'X':
			terminated = true
			if fr.Mark()-len(m) == start && ss.endsToPool() {
				// Nothing before it to relay: the origin connection
				// goes to the pool, and the origin is not told.
				ss.life.terminated.Store(true)
				ss.life.endToPool.Store(true)
				return true, false
			}
			break scan
		default:
			if !frontendTypes[t] {
				fr.Unread(len(m))
				failure = fmt.Errorf("unknown message type: %c", t)
				break scan
			}
		}
	}
	if fr.Mark() > start {
		if terminated {
			ss.life.terminated.Store(true)
		}
		if _, err := ss.origin.rw.Write(fr.Since(start)); err != nil {
			if !terminated {
				ss.originFailed(err)
			}
			return true, false
		}
	}
	if terminated {
		return true, false
	}
	return readMore(fr, failure, ss.clientReadFailed)
}

// readMore reads one side once more, unless framing what it had failed
// already; failed ends the side with the error that ended it.
func readMore(fr *wire.FrameReader, failure error, failed func(error)) (ended, idle bool) {
	if failure == nil {
		failure = fr.Fill()
		if failure == wire.ErrWouldBlock {
			return false, true
		}
	}
	if failure != nil {
		failed(failure)
		return true, false
	}
	return false, false
}

// passOrigin relays the origin's whole messages buffered, in one write to
// the client, then reads the origin once. It reports whether the origin
// side ended, and whether there was nothing to read (only in an event
// loop).
func (ss *session) passOrigin() (ended, idle bool) {
	fr := ss.origin.fr
	start := fr.Mark()
	var failure error
	closeAfter, shutdown := false, false
	for !closeAfter {
		m, err := fr.Next()
		if err != nil {
			failure = err
			break
		}
		if m == nil {
			break
		}
		switch m[0] {
		case 'S':
			var ps pgproto3.ParameterStatus
			if ps.Decode(m[5:]) == nil {
				ss.state.setParam(ps.Name, ps.Value)
			}
		case 'Z':
			if len(m) > 5 {
				ss.state.setTxStatus(m[5])
			}
			n := ss.pass.syncs.Add(-1)
			if n < 0 {
				// Not an answer to anything relayed (no such origin).
				ss.pass.syncs.CompareAndSwap(n, 0)
			}
			if n <= 0 && !ss.pass.open.Load() && ss.life.shuttingDown.Load() {
				shutdown, closeAfter = true, true
			}
		case 'E':
			var e pgproto3.ErrorResponse
			if e.Decode(m[5:]) == nil && (e.Severity == "FATAL" || e.Severity == "PANIC") {
				closeAfter = true
			}
		}
	}
	if fr.Mark() > start {
		ss.client.writeMu.Lock()
		_, err := ss.client.w.Write(fr.Since(start))
		ss.client.writeMu.Unlock()
		if err != nil {
			ss.log.Debug().Err(err).Msg("client write failed")
			ss.close()
			return true, false
		}
	}
	if shutdown {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
	}
	if closeAfter {
		ss.close()
		return true, false
	}
	return readMore(fr, failure, ss.originReadFailed)
}

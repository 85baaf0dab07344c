package proxy

import (
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// clientSide is the session's client: its socket as negotiation left it
// (clientConn: conn, startup, raw, w, fr, be) and the write path to it.
//
// Goroutines: the client loop reads the client (be, fr) and alone touches
// startupMsg, pid and secret after the start. Both the client loop (local
// answers, errors, notices) and the origin relay (relayed answers) write
// to the client: they hold writeMu for it, and the fields below it are
// guarded by writeMu, except pendingOut and rawOut, which only the side
// relaying the origin's answers touches (the origin relay, or the event
// loop's thread in its turn).
type clientSide struct {
	clientConn
	// startupMsg is the client's StartupMessage, decoded.
	startupMsg *pgproto3.StartupMessage
	// pid and secret are the BackendKeyData the client was given.
	pid    uint32
	secret []byte

	// writeMu serializes writes to the client.
	writeMu sync.Mutex
	// held: an answer of the proxy's own waits in be's buffer
	// (writeLocal).
	held bool
	// fatalSent: the session's one FATAL went out.
	fatalSent bool
	// outBuf and answerBuf are reused buffers of the write path.
	outBuf    []byte
	answerBuf []byte

	// pendingOut counts relayed bytes not yet flushed to the client (the
	// origin side's); rawOut holds the frame relayed as it came (Send
	// takes a pointer to it).
	pendingOut int
	rawOut     rawFrame
}

// writeOrdered writes encoded messages of the proxy's own to the client
// after every origin response still pending before them: at once when
// nothing is pending, else queued for the origin relay to write in turn
// (dropped if the origin skips to the next Sync, as it would skip the
// statement they answer).
func (ss *session) writeOrdered(buf []byte) error {
	return ss.writeLocal(buf, false, ss.ext.answerCheck, ss.ext.answerSince)
}

// writeLocal is writeOrdered with pushLocal's skippable and check: the
// answer goes to the client now when nothing is pending at the origin,
// else into the pending queue (or nowhere, when the origin skips it).
func (ss *session) writeLocal(buf []byte, skippable, check bool, since uint64) error {
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	outcome, seq := ss.origin.pending.PushLocal(buf, skippable, check, since)
	ss.ext.answerSeq = seq
	if outcome != originlink.LocalWriteNow {
		return nil
	}
	if !ss.evl.onLoop && ss.client.fr.Buffered() > 0 {
		// The client's next message is here already (a pipeline: Bind,
		// Describe, Execute, Sync): the answer waits in the client
		// writer's buffer, which every later write to the client flushes
		// first, and goes out with the others in one write once the
		// client pauses (flushHeld).
		ss.client.rawOut = buf // Send copies it into the buffer
		ss.client.be.Send(&ss.client.rawOut)
		ss.client.rawOut = nil
		ss.client.held = true
		return nil
	}
	return ss.writeAfterRelayed(buf)
}

// flushHeld writes the answers writeLocal left in the client writer's
// buffer; the client loop calls it once the client has paused.
func (ss *session) flushHeld() error {
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	if !ss.client.held {
		return nil
	}
	ss.client.held = false
	return ss.client.be.Flush()
}

// writeQueuedLocal writes the answers of the proxy's own that have reached
// the head of the pending queue; the origin relay calls it when a response
// it settles leaves one there.
func (ss *session) writeQueuedLocal() error {
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	return ss.writeAfterRelayed(ss.origin.pending.TakeLocal()...)
}

// writeClient writes encoded messages to the client after anything the
// origin relay still holds in its buffer, keeping the order. Nothing may be
// pending at the origin (see writeOrdered).
func (ss *session) writeClient(buf []byte) error {
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	return ss.writeAfterRelayed(buf)
}

// heldJoinLimit is the most writeAfterRelayed copies into the client
// writer's buffer to send it with the answers held there.
const heldJoinLimit = 64 << 10

// writeAfterRelayed writes bufs to the client after what the origin relay
// holds in its buffer. The caller holds writeMu.
func (ss *session) writeAfterRelayed(bufs ...[]byte) error {
	if len(bufs) == 0 {
		return nil
	}
	if ss.client.held {
		// Answers wait in the client writer's buffer: small ones join
		// them there, so that everything goes out in one write.
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		if n <= heldJoinLimit {
			for _, b := range bufs {
				ss.client.rawOut = b // Send copies it into the buffer
				ss.client.be.Send(&ss.client.rawOut)
			}
			ss.client.rawOut = nil
			ss.client.held = false
			return ss.client.be.Flush()
		}
	}
	ss.client.held = false
	if err := ss.client.be.Flush(); err != nil {
		return err
	}
	for _, b := range bufs {
		if _, err := ss.client.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

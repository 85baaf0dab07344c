package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// Sessions with an acceleration on an event loop. A session whose
// statements go to the origin costs the proxy what a pass-through one does
// only if it is relayed the same way: on an event loop (wire.Loop),
// not on two goroutines, whose every message costs a park and a wake-up
// through the runtime's scheduler. With one dataset configured, every
// pgbench statement passes the routing hook, and on goroutines that made
// origin-bound traffic 15-25 % slower than pass-through (bench/RESULTS.md).
//
// So such a session runs on a loop too, with every message decoded and
// routed as on goroutines (relayOne), as long as what it is asked to do
// cannot wait: the loop must never block, and it reads the origin's
// answers itself, so a wait for them there would never end. Before a
// message is handled on the loop, loopSafe (client) or originLoopSafe
// (origin) says whether it is one of those:
//
//   - client messages of statements the planner's fast path sends to the
//     origin whatever the session (Quick), with the origin connection up
//     and, at the start of an extended-protocol stretch, nothing owed by
//     the origin (beginStretch would wait for it);
//   - origin messages other than a FATAL, and no failed read (detach may
//     probe the origin).
//
// Anything else (an accelerated statement, which runs on DuckDB; one that
// needs the session info or the planner's full analysis, which may ask the
// origin; a connection to open) is handed, decoded already, to goroutines
// (carry), which handle it first and carry on as before. A session on
// goroutines goes back to a loop (promote) at the start of a client
// message when the origin owes it nothing and the last promoteAfter client
// messages would all have been loop-safe, so that a session mixing
// accelerated reads and origin statements does not go back and forth on
// every statement.
//
// Every call that may wait checks ss.onLoop first (mustNotBlock) and panics
// there: a mistake in loopSafe then ends the one session (the loop
// recovers), and shows in tests, instead of stopping every session of the
// loop.

// promoteAfter is how many loop-safe client messages in a row a session on
// goroutines handles before it goes back to an event loop.
const promoteAfter = 64

// loopMessageBudget is how many messages a session with an acceleration
// may relay per event before the loop hands it to goroutines (a result of
// many rows): the decoding counterpart of wire.ReadBudget.
const loopMessageBudget = 1024

// carried is a message decoded on one side and handed to the other mode
// (loop or goroutines) to handle: it stays valid while nothing more is
// read from that side, and the new mode handles it before it reads. raw
// is an origin message's frame as it came (nil: not kept).
type carried[M any] struct {
	set bool
	msg M
	raw []byte
	err error
}

func (c *carried[M]) put(msg M, raw []byte, err error) {
	*c = carried[M]{set: true, msg: msg, raw: raw, err: err}
}

// take returns the message carried over and clears it; ok is false when
// there is none.
func (c *carried[M]) take() (m carried[M], ok bool) {
	m, ok = *c, c.set
	*c = carried[M]{}
	return m, ok
}

// receiveClient returns the client message carried over, or the next one.
// A Parse the same, byte for byte, as the last one is not decoded again:
// the message handed out is a copy of the last one's decoding (valid, as
// pgproto3's own, until the next receive).
func (ss *session) receiveClient() (pgproto3.FrontendMessage, error) {
	if c, ok := ss.evl.carryC.take(); ok {
		return c.msg, c.err
	}
	if ss.ext.lastParse.raw != nil {
		raw, err := ss.client.fr.PeekOf(&parseType, len(ss.ext.lastParse.raw))
		if errors.Is(err, wire.ErrWouldBlock) {
			return nil, err
		}
		if raw != nil && bytes.Equal(raw, ss.ext.lastParse.raw) {
			ss.client.fr.Skip(len(raw))
			ss.ext.parseScratch = ss.ext.lastParse.msg
			return &ss.ext.parseScratch, nil
		}
	}
	msg, err := ss.client.be.Receive()
	if p, ok := msg.(*pgproto3.Parse); ok && err == nil {
		ss.ext.lastParse.save(p, ss.client.fr.LastFrame())
	}
	return msg, err
}

// parseType is the Parse's type, for peekOf.
var parseType = [256]bool{'P': true}

// savedParse is a Parse as it came (raw) and decoded (msg).
type savedParse struct {
	raw []byte
	msg pgproto3.Parse
}

// maxSavedParse bounds the Parse kept by savedParse.
const maxSavedParse = 8 << 10

func (s *savedParse) save(p *pgproto3.Parse, raw []byte) {
	if raw == nil || len(raw) > maxSavedParse {
		s.raw = nil
		return
	}
	if bytes.Equal(raw, s.raw) {
		return
	}
	s.raw = append(s.raw[:0], raw...)
	s.msg = pgproto3.Parse{Name: p.Name, Query: p.Query, ParameterOIDs: slices.Clone(p.ParameterOIDs)}
}

// errBlockingOnLoop is the panic of a call that may wait, made on an event
// loop (see mustNotBlock).
var errBlockingOnLoop = errors.New("pgaccel bug: a call that may wait was made on an event loop")

// mustNotBlock panics when the session is being relayed by an event loop:
// what calls it may wait (for the origin, DuckDB or a connection).
func (ss *session) mustNotBlock(what string) {
	if ss.evl.onLoop {
		panic(fmt.Errorf("%w: %s", errBlockingOnLoop, what))
	}
}

// loopSafe reports whether the client message msg (or the error that came
// instead) can be handled on an event loop: nothing it leads to waits. It
// changes nothing.
func (ss *session) loopSafe(msg pgproto3.FrontendMessage, err error) bool {
	if err != nil {
		// An undecodable message is forwarded through beginStretch, which
		// may wait; a failed read ends the session, which does not.
		return ss.client.fr.LastFrame() == nil
	}
	if _, ok := msg.(*pgproto3.Terminate); ok {
		return true
	}
	if ss.origin.state != linkLive || ss.origin.broken.Load() || ss.origin.releasing.Load() {
		return false // needOrigin would open a connection, or drop one
	}
	if ss.origin.tent != nil {
		return false // the stretch's Sync waits for the origin (settleSets)
	}
	if ss.ext.localSkip {
		return true // dropped, or the Sync that ends the skip
	}
	// An extended-protocol message that starts a stretch waits there for
	// everything before to be answered (beginStretch), and reads the
	// session info first unless its statement is origin-only (accelerate).
	opens := !ss.ext.segmentOpen && !ss.origin.pending.Idle()
	needsInfo := !ss.ext.segmentOpen && (ss.acc.infoDirty || !ss.acc.info.Valid)
	switch m := msg.(type) {
	case *pgproto3.Query:
		if ss.ext.segmentOpen {
			return false // planned uninformed (toOriginUninformed)
		}
		_, ok := ss.quick(asOwnStatement(m.String))
		return ok
	case *pgproto3.Parse:
		if opens {
			return false
		}
		_, ok := ss.quick(asOwnStatement(m.Query))
		return ok
	case *pgproto3.Bind:
		return !opens && ss.ext.stmts[m.PreparedStatement].originOnly()
	case *pgproto3.Describe:
		if opens {
			return false
		}
		if m.ObjectType == 'S' {
			return ss.ext.stmts[m.Name].originOnly()
		}
		return ss.portalOriginOnly(m.Name)
	case *pgproto3.Execute:
		if opens {
			return false
		}
		p := ss.ext.portals[m.Portal]
		if p == nil || p.stmt == nil {
			return !needsInfo // the origin reports it
		}
		return p.active == nil && p.stmt.originOnly()
	case *pgproto3.Close:
		return !opens && !needsInfo
	case *pgproto3.Sync, *pgproto3.Flush, *pgproto3.FunctionCall,
		*pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		return true
	}
	return false
}

// originLoopSafe reports whether the origin message msg (or the error
// that came instead) can be handled on an event loop.
func (ss *session) originLoopSafe(msg pgproto3.BackendMessage, err error) bool {
	if err != nil {
		return false // originReadFailed may detach, which probes the origin
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && (e.Severity == "FATAL" || e.Severity == "PANIC") {
		return false // likewise
	}
	if head, ok := ss.origin.pending.Head(); ok && head.Private != nil {
		return false // a request of the goroutines' (none is made on a loop)
	}
	return true
}

// noteLoopSafe counts, on goroutines, the client messages in a row that a
// loop could have handled (promote).
func (ss *session) noteLoopSafe(msg pgproto3.FrontendMessage, err error) {
	if ss.client.raw == nil || ss.origin.raw == nil || ss.srv.noLoops() {
		return
	}
	if ss.loopSafe(msg, err) {
		ss.evl.loopRun++
	} else {
		ss.evl.loopRun = 0
	}
}

// promote hands a session on goroutines to an event loop before msg, the
// client message just received, when that pays (see promoteAfter): the
// origin relay is stopped with a read deadline (as releaseIdle does) and
// the loop handles msg first. It returns only when the loop has handed
// the session back (ended false: the goroutines go on) or the session
// ended there (true); handled reports whether msg went to the loop.
func (ss *session) promote(msg pgproto3.FrontendMessage) (handled, ended bool) {
	if ss.evl.loopRun < promoteAfter || ss.origin.done == nil || !ss.origin.pending.Idle() {
		return false, false
	}
	l := ss.srv.loopFor(ss) // plain sockets, a live link
	if l == nil {
		return false, false
	}
	ss.evl.loopRun = 0
	ss.evl.promoting.Store(true)
	_ = ss.origin.raw.SetReadDeadline(time.Now())
	<-ss.origin.done
	ss.origin.done = nil
	ss.evl.promoting.Store(false)
	_ = ss.origin.raw.SetReadDeadline(time.Time{})
	if ss.isClosed() || ss.origin.broken.Load() {
		// The relay ended for another reason, and saw to it (closed the
		// session, or detached it from the link): the goroutines go on.
		return false, false
	}
	ss.evl.carryC.put(msg, nil, nil)
	ss.srv.metrics.loopEvent(wire.EventPromoted)
	return true, ss.serveOnLoop(l)
}

// serveOnLoop hands the session to l (wire.Loop.Serve) from the client
// goroutine, which holds the link (enterLink) or is about to, and reports
// whether the session ended there. While a loop has the session, the loop
// takes turns with the idle timer itself (looped tells the timer to ask it
// for the session back instead: releaseIdle). When it comes back, the
// origin relay runs again before the timer may take its turn (a release
// waits for that relay to stop).
func (ss *session) serveOnLoop(l *wire.Loop) (ended bool) {
	ss.evl.looped.Store(true)
	held := ss.origin.idleTimer != nil && ss.origin.use.Load() == 1
	if held {
		ss.origin.use.Store(0)
	}
	ended = l.Serve(loopConn{ss})
	if !ended && !ss.life.endToPool.Load() {
		if err := ss.origin.raw.FlushHeld(); err != nil {
			ss.originFailed(err)
			ended = true
		} else {
			ss.restartOriginRelay()
		}
	}
	ss.evl.looped.Store(false)
	if held {
		ss.enterLink()
	}
	return ended || ss.isClosed()
}

// restartOriginRelay starts the origin relay if the link has a connection
// and none runs.
func (ss *session) restartOriginRelay() {
	if ss.origin.state != linkNone && ss.origin.done == nil {
		ss.startOriginRelay()
	}
}

// promotionStop reports whether err is the read deadline promote set to
// stop the origin relay.
func (ss *session) promotionStop(err error) bool {
	return ss.evl.promoting.Load() && errors.Is(err, os.ErrDeadlineExceeded)
}

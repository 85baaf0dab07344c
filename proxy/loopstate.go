package proxy

import (
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// loopState is a session's life on an event loop (wire.Loop,
// handoff.go, lane.go).
//
// Goroutines: loop, looped, wantGoroutines and promoting are atomics any
// goroutine reads. onLoop is set while the loop's thread relays the
// session (only that thread reads it then); handOff, carryC and carryO
// pass a message the thread took to the goroutines; loopRun is the client
// loop's.
type loopState struct {
	loop atomic.Pointer[wire.Loop]
	// handOff: a message the loop took must be handled on goroutines,
	// carried over in carryC or carryO.
	onLoop, handOff bool
	carryC          carried[pgproto3.FrontendMessage]
	carryO          carried[pgproto3.BackendMessage]
	// looped is set from the session's hand-over to a loop to its return;
	// wantGoroutines asks the loop to hand it back (releaseIdle).
	looped         atomic.Bool
	wantGoroutines atomic.Bool
	// loopRun counts loop-safe client messages in a row on goroutines;
	// promoting marks the read deadline that stops the origin relay for a
	// hand-over.
	loopRun   int
	promoting atomic.Bool
}

// loopConn is the session as an event loop relays it (wire.Conn). The
// loop calls it on its own thread, but Closed, Close and WantsGoroutines.
type loopConn struct{ ss *session }

var _ wire.Conn = loopConn{}

func (c loopConn) Sockets() (client, origin *wire.RawIO) { return c.ss.client.raw, c.ss.origin.raw }

func (c loopConn) RelayOne(fromOrigin bool) (ended, idle bool) { return c.ss.relayOne(fromOrigin) }

// ReadBudget: a pass-through session reads up to wire.FrameBufSize bytes
// a step; one with an acceleration takes one message (handoff.go).
func (c loopConn) ReadBudget() int {
	if c.ss.pass == nil {
		return loopMessageBudget
	}
	return wire.ReadBudget
}

func (c loopConn) SetOnLoop(on bool)    { c.ss.evl.onLoop = on }
func (c loopConn) SetLoop(l *wire.Loop) { c.ss.evl.loop.Store(l) }
func (c loopConn) HandOff() bool        { return c.ss.evl.handOff }

func (c loopConn) ClearHandOff() {
	c.ss.evl.handOff = false
	c.ss.evl.loopRun = 0
}

func (c loopConn) EndsToPool() bool      { return c.ss.life.endToPool.Load() }
func (c loopConn) WantsGoroutines() bool { return c.ss.evl.wantGoroutines.Swap(false) }
func (c loopConn) Closed() bool          { return c.ss.isClosed() }
func (c loopConn) Close()                { c.ss.close() }

func (c loopConn) LoopEvent(what string, clientErr, originErr error) {
	ss := c.ss
	ss.srv.metrics.loopEvent(what)
	if what == wire.EventTaken {
		return
	}
	ss.log.Debug().Str("reason", what).Msg("event loop hands the session to goroutines")
	if (clientErr != nil || originErr != nil) && !ss.isClosed() {
		ss.log.Warn().AnErr("client", clientErr).AnErr("origin", originErr).Msg("could not hand the session from the event loop to goroutines; closing it")
	}
}

func (c loopConn) Panicked(r any) {
	c.ss.srv.sessionPanicked(r, c.ss.log)
	c.ss.close()
}

package proxy

import (
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgproto3"
)

// loopState is a session's life on an event loop (loop_linux.go,
// handoff.go, lane.go).
//
// Goroutines: loop, looped, wantGoroutines and promoting are atomics any
// goroutine reads. onLoop is set while the loop's thread relays the
// session (only that thread reads it then); handOff, carryC and carryO
// pass a message the thread took to the goroutines; loopRun is the client
// loop's.
type loopState struct {
	loop atomic.Pointer[eventLoop]
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

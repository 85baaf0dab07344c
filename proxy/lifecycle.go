package proxy

import (
	"sync"
	"sync/atomic"
)

// lifecycle is how a session ends (session.go close).
//
// Goroutines: any; the atomics and Onces are what they share.
type lifecycle struct {
	closeOnce  sync.Once
	closedInit sync.Once
	closed     chan struct{}
	closing    atomic.Bool // set by close, before closed is closed
	// shuttingDown: the server is shutting down; terminated: the client
	// sent Terminate.
	shuttingDown atomic.Bool
	terminated   atomic.Bool
	// endToPool is set at the client's Terminate when the origin
	// connection goes to the pool instead of ending (endsToPool).
	endToPool atomic.Bool
}

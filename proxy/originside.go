package proxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// originSide is the session's link to the origin (link.go): the
// connection, the replies it still owes (pending), what a new connection
// must replay, and the idle release.
//
// Goroutines: the link (state, conn, fe, fr, rw, raw) is changed only by
// the client loop while no origin relay runs; mu guards conn, raw, pid and
// key for the goroutines that close or cancel. The origin relay reads
// through fe and fr while it runs and closes done when it ends. broken,
// use, releasing, used, idleArmed and unreplayable are atomics shared
// with the origin relay and the idle timer. pending is the queue both
// loops use (its own lock). Everything else is the client loop's.
type originSide struct {
	conn net.Conn
	fe   *pgproto3.Frontend
	// fr frames what the origin sends; fe reads through it (wire.FrameReader).
	fr *wire.FrameReader
	// state is the link's state (link.go).
	state linkState
	rw    io.ReadWriter // the origin connection's I/O (installOrigin)
	// raw is the socket's raw I/O (nil for TLS); once the session is on
	// an event loop its socket is written through it only (wire.Loop).
	raw *wire.RawIO
	mu  sync.Mutex
	// done is closed when the current link's origin relay ends.
	done chan struct{}
	// pid and key are the origin backend's BackendKeyData (for cancels).
	pid uint32
	key []byte
	// broken: the origin connection broke while the session owed the
	// client nothing from it (canDetach); the client loop drops the link
	// at its next need of the origin.
	broken atomic.Bool

	// Idle release (link.go): idleTimer is nil without
	// auth.origin_idle_timeout; releasing marks the connection it closes.
	// used is when the client loop last handled a message (since
	// monoStart); idleArmed: the idle timer is armed (leaveLink).
	idleTimer *time.Timer
	use       atomic.Int32
	releasing atomic.Bool
	used      atomic.Int64
	idleArmed atomic.Bool

	// clientKey is the ClientKey of the client's SCRAM login with
	// auth.mode proxy (memory only, never logged), verifier the verifier
	// it was recovered with; nil in auth.mode origin.
	clientKey []byte
	verifier  auth.Verifier
	// loginKey keys the session's start in the login cache (originlink.Logins);
	// pristine: nothing the session sent may have changed its settings.
	loginKey string
	pristine bool

	// replaySets are the SET statements to run on a new origin
	// connection; pendingSet is the one being sent; unreplayable says why
	// the session's origin state cannot be rebuilt ("" when it can).
	replaySets []string
	pendingSet string
	// pendingDiscard: pendingSet is a DISCARD, which replaces all before it.
	pendingDiscard bool
	unreplayable   atomic.Pointer[string]
	// tent holds the SETs of the extended-protocol stretch under way,
	// kept for replay only if it succeeds (stretchsets.go).
	tent *stretchSets

	// pending is the queue of responses the origin still owes.
	pending *originlink.Pending
	// pendingBytes counts bytes written to the origin not yet flushed;
	// rawIn holds the frame relayed as it came (Send takes a pointer).
	pendingBytes int
	rawIn        rawFrame
	// queryCapture, when set, sees the origin's answer to the Query being
	// forwarded (describeCapturer).
	queryCapture func(pgproto3.BackendMessage)
	// committed and undone are how the statements since the last
	// ReadyForQuery ended, for read-your-writes (noteReady): a COMMIT
	// completed; the last to end was a ROLLBACK or an error (its
	// transaction wrote nothing). The origin relay's only.
	committed, undone bool
	// tagRows sums the rows of the CommandComplete tags since the last
	// timed item completed (stats.go). The origin relay's only.
	tagRows int64
}

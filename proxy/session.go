package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/rs/zerolog"
)

// flushThreshold is how many bytes of relayed messages may wait in a write
// buffer before they are written even though more are coming.
const flushThreshold = 64 << 10

// SessionState is what the routing hook may read about a session. The
// parameters are the origin's ParameterStatus values as last reported
// (TimeZone, DateStyle, IntervalStyle, search_path is not reported by
// Postgres before 18 and is tracked by the planner from SET statements).
type SessionState struct {
	User     string
	Database string

	mu       sync.RWMutex
	params   map[string]string
	gen      uint64 // counts ParameterStatus changes
	txStatus byte
}

// Param returns the value of a ParameterStatus parameter, "" if unknown.
func (st *SessionState) Param(name string) string {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.params[name]
}

// Params returns a copy of all ParameterStatus parameters.
func (st *SessionState) Params() map[string]string {
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := make(map[string]string, len(st.params))
	for k, v := range st.params {
		out[k] = v
	}
	return out
}

// TxStatus is the transaction status of the last ReadyForQuery the origin
// sent: 'I' idle, 'T' in a transaction, 'E' in a failed transaction.
func (st *SessionState) TxStatus() byte {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.txStatus
}

func (st *SessionState) setParam(name, value string) {
	st.mu.Lock()
	if st.params[name] != value {
		st.params[name] = value
		st.gen++
	}
	st.mu.Unlock()
}

// generation changes whenever a parameter does.
func (st *SessionState) generation() uint64 {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.gen
}

func (st *SessionState) setTxStatus(s byte) {
	st.mu.Lock()
	st.txStatus = s
	st.mu.Unlock()
}

// session is one client connection and its origin connection.
type session struct {
	srv     *Server
	log     zerolog.Logger
	startup *pgproto3.StartupMessage
	// startupRaw is the StartupMessage as the client sent it.
	startupRaw []byte
	state      SessionState

	client net.Conn
	be     *pgproto3.Backend
	// cfr and ofr frame what the client and the origin send; be and fe
	// read through them (frames.go).
	cfr, ofr *frameReader
	// pass is the pass-through relay's state, nil when the session has an
	// acceleration (passthrough.go); clientW and originRW are the sockets
	// it writes to.
	pass    *passState
	clientW io.Writer
	// writeMu serializes writes to the client: the origin relay and the
	// client loop (errors, shutdown notices) both write.
	writeMu sync.Mutex

	origin net.Conn
	fe     *pgproto3.Frontend
	// The origin link (link.go), changed only by the client loop while no
	// origin relay runs; linkMu guards origin, originIO, originPID and
	// originKey for the goroutines that close or cancel.
	link       linkState
	originRW   io.ReadWriter // the origin connection's I/O (installOrigin)
	linkMu     sync.Mutex
	originDone chan struct{} // closed when the current link's origin relay ends
	// broken: the origin connection broke while the session owed the
	// client nothing from it (canDetach); the client loop drops the link
	// at its next need of the origin.
	broken atomic.Bool
	// Idle release (link.go): idleTimer is nil without
	// auth.origin_idle_timeout; releasing marks the connection it closes.
	idleTimer *time.Timer
	linkUse   atomic.Int32
	releasing atomic.Bool
	// linkUsed is when the client loop last handled a message (since
	// monoStart); idleArmed: the idle timer is armed (leaveLink).
	linkUsed  atomic.Int64
	idleArmed atomic.Bool
	// clientKey is the ClientKey of the client's SCRAM login with
	// auth.mode proxy (memory only, never logged), verifier the verifier
	// it was recovered with; nil in auth.mode origin.
	clientKey []byte
	verifier  auth.Verifier
	// replaySets are the SET statements to run on a new origin
	// connection; pendingSet is the one being sent; unreplayable says why
	// the session's origin state cannot be rebuilt ("" when it can).
	replaySets []string
	pendingSet string
	// pendingDiscard: pendingSet is a DISCARD, which replaces all before it.
	pendingDiscard bool
	unreplayable   atomic.Pointer[string]
	// queryCapture, when set, sees the origin's answer to the Query being
	// forwarded (describeCapturer).
	queryCapture func(pgproto3.BackendMessage)
	// revalidation is a stale answer of a caching dataset served, to ask
	// the origin for again once the session is idle (caching_session.go);
	// cachingDirty the caching datasets its transaction may have written.
	revalidation *revalidation
	cachingDirty dirtyCaching
	// loginKey keys the session's start in the login cache (logins.go);
	// pristine: nothing the session sent may have changed its settings.
	loginKey string
	pristine bool
	// tent holds the SETs of the extended-protocol stretch under way,
	// kept for replay only if it succeeds (stretchsets.go).
	tent *stretchSets

	// clientIO and originIO are the sockets' raw I/O (nil for TLS); once a
	// session is handed to an event loop, its sockets are closed and
	// written through these only (loop.go).
	clientIO, originIO *rawIO
	loop               atomic.Pointer[eventLoop]
	// A session with an acceleration on an event loop (handoff.go):
	// onLoop is set while the loop's thread relays it (only that thread
	// reads it then), handOff when a message it took must be handled on
	// goroutines, carried over in carryC or carryO; looped from the
	// session's hand-over to a loop to its return; wantGoroutines asks the
	// loop to hand it back (releaseIdle). loopRun counts loop-safe client
	// messages in a row on goroutines; promoting marks the read deadline
	// that stops the origin relay for a hand-over.
	onLoop, handOff bool
	carryC          carried[pgproto3.FrontendMessage]
	carryO          carried[pgproto3.BackendMessage]
	looped          atomic.Bool
	wantGoroutines  atomic.Bool
	loopRun         int
	promoting       atomic.Bool
	// pendingOut counts relayed bytes not yet flushed to the client (the
	// origin side's).
	pendingOut int

	pid    uint32
	secret []byte
	// stripe is the stripe of the metrics the session counts in
	// (stripes.go).
	stripe uint8
	// verifyRand draws the statements shadow verification samples
	// (verify.go), made at the first draw.
	verifyRand *rand.Rand
	originPID  uint32
	originKey  []byte

	// pending is the queue of responses the origin still owes.
	pending *pendingQueue
	// segmentWrote is set by the client loop when a statement that writes
	// is sent after the last Sync; txWrote by the origin loop when a
	// ReadyForQuery shows a transaction that has written.
	segmentWrote bool
	txWrote      atomic.Bool
	pendingBytes int

	// Acceleration state, used only by the client loop.
	accel        *Accel
	info         sessionInfo
	infoDirty    bool
	infoPrepared bool
	changedInTx  bool
	segmentOpen  bool // extended-protocol messages since the last Sync
	// virtualBegin is the BEGIN of a transaction the session is in that
	// is not at the origin (localtx.go); "" when there is none.
	virtualBegin string
	localSkip    bool // a local error: skip client messages to the next Sync
	// answerCheck: the Execute being answered locally was decided with
	// statement setup of its stretch still pending at the origin, when
	// the pending queue had seen answerSince failures; its answer is
	// dropped if one of them fails (writeOrdered).
	answerCheck bool
	answerSince uint64
	// arrived is when the client's current Query or Execute arrived, and
	// timeRoute the route its time counts under if the origin answers it
	// (origin; fallback when the acceleration handed it over).
	arrived   time.Time
	timeRoute string
	// txStart is when the statement that began the session's current
	// transaction arrived: now() of the accelerated statements in it
	// (clock.go).
	txStart time.Time
	// lastRoute is how the last statement was routed, for SHOW
	// pgaccel.last_route (route.go).
	lastRoute routeNote
	// rawIn and rawOut hold the frame relayed as it came, to the origin
	// and to the client (Send takes a pointer to them).
	rawIn, rawOut rawFrame
	// held: an answer of the proxy's own waits in be's buffer
	// (writeLocal); guarded by writeMu.
	held bool
	// planMemo: a deferred Bind's plan, for its Execute (planFresh).
	planMemo  planMemo
	quickMemo quickMemo
	lastCount lastCounters
	// lastParse is the client's last Parse, as it came and decoded, so
	// that the same Parse again (drivers prepare the unnamed statement
	// for every execution) is taken without decoding (receiveClient);
	// parseScratch is the copy handed out.
	lastParse    savedParse
	parseScratch pgproto3.Parse
	answerBuf    []byte
	descMu       sync.Mutex // guards the descriptions in stmts and portals
	// staleStmt, stalePortal: the origin may hold an unnamed statement or
	// portal the client no longer has (closeStaleUnnamed).
	staleStmt   bool
	stalePortal bool
	// answerSeq is the position of the last local answer (journal.go).
	answerSeq    uint64
	journal      []journalEntry
	failuresSeen uint64
	// stretchOrigin: something of the current extended-protocol stretch
	// went to the origin, so its Sync must too (see deferred.go).
	stretchOrigin  bool
	stmts          map[string]*stmtInfo
	portals        map[string]*portalInfo
	infoGen        uint64 // counts session info reads
	settingsValid  bool
	settingsGen    uint64 // SessionState generation the settings were built for
	settingsInfo   uint64 // infoGen the settings were built for
	cachedSettings *encode.Settings
	outBuf         []byte
	pointKey       []byte // a point read's key (pointindex.go), reused
	// stmtStart is when the statement timer started (timeout.go), zero
	// while it is not running; originTimer: the origin's is running.
	stmtStart   time.Time
	originTimer bool
	// localMu guards the local query the client waits for (runLocal):
	// its cancel, its timeout timer, and how it was interrupted.
	localMu      sync.Mutex
	localCancel  context.CancelFunc
	localTimer   *time.Timer
	localRun     uint64
	canceled     bool
	timedOut     bool
	shuttingDown atomic.Bool
	terminated   atomic.Bool
	// endToPool is set at the client's Terminate when the origin
	// connection goes to the pool instead of ending (endsToPool).
	endToPool  atomic.Bool
	fatalSent  bool // guarded by writeMu
	closeOnce  sync.Once
	closedInit sync.Once
	closed     chan struct{}
	closing    atomic.Bool // set by close, before closed is closed
}

func newSession(s *Server, cs clientSide, startup *pgproto3.StartupMessage, log zerolog.Logger) *session {
	ss := &session{
		srv:        s,
		startup:    startup,
		startupRaw: cs.startup,
		client:     cs.conn,
		clientIO:   cs.raw,
		be:         cs.be,
		cfr:        cs.fr,
		pending:    newPendingQueue(),
		stripe:     newStripe(),
		accel:      s.cfg.Accel,
		stmts:      make(map[string]*stmtInfo),
		portals:    make(map[string]*portalInfo),
		log:        log.With().Str("user", startup.Parameters["user"]).Logger(),
	}
	ss.state.User = startup.Parameters["user"]
	ss.state.Database = startup.Parameters["database"]
	if ss.state.Database == "" {
		ss.state.Database = ss.state.User
	}
	ss.state.params = make(map[string]string)
	if ss.accel != nil && s.cfg.Origin != nil && ss.state.Database != originDatabase(s.cfg.Origin) {
		// The datasets are tables of origin.dsn's database: in another
		// database a table of the same name is another table, so the
		// session is relayed without acceleration.
		ss.log.Debug().Str("database", ss.state.Database).Msg("session in another database than origin.dsn's: relayed without acceleration")
		ss.accel = nil
	}
	ss.clientW = cs.w
	if ss.accel == nil {
		ss.pass = &passState{}
	} else if m := s.metrics; m != nil {
		stripe := ss.stripe
		ss.pending.observe = func(route string, started time.Time) { m.observe(stripe, route, started) }
	}
	return ss
}

// originDatabase is the database origin.dsn connects to (Postgres takes the
// user's name when none is given).
func originDatabase(c *pgconn.Config) string {
	if c.Database != "" {
		return c.Database
	}
	return c.User
}

// run takes the session through origin connect, authentication and relay.
func (ss *session) run() {
	defer ss.close()
	defer ss.srv.unregister(ss)

	if err := ss.start(); err != nil {
		if !errors.Is(err, errHandled) {
			ss.log.Debug().Err(err).Msg("origin connect or authentication failed")
		}
		return
	}
	ss.srv.metrics.sessionDelta(1)
	defer ss.srv.metrics.sessionDelta(-1)
	ss.log = ss.log.With().Uint32("session", ss.pid).Logger()
	_ = ss.client.SetDeadline(time.Time{})
	if ss.link == linkLive {
		_ = ss.origin.SetDeadline(time.Time{})
	}
	ss.log.Debug().Msg("session started")

	if ss.srv.isClosing() {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		return
	}
	if ss.idleTimer != nil && ss.link == linkLive {
		ss.linkUsed.Store(int64(time.Since(monoStart)))
		ss.armIdle(ss.srv.cfg.Auth.OriginIdleTimeout)
	}
	if l := ss.srv.loopFor(ss); l != nil && ss.serveOnLoop(l) {
		ss.log.Debug().Msg("session ended")
		return
	}
	if !ss.endToPool.Load() {
		ss.restartOriginRelay()
		ss.relayClient()
	}
	ss.closePortals()
	if ss.endToPool.Load() {
		ss.poolAtEnd()
		return
	}
	ss.close()
	if ss.originDone != nil {
		<-ss.originDone
	}
	ss.log.Debug().Msg("session ended")
}

// poolAtEnd leaves the origin connection of a session whose client left
// with it idle to the pool (endsToPool), under the client loop's turn, which
// keeps the idle release (releaseIdle) out; the loop (serveOnLoop) may
// hold that turn already.
func (ss *session) poolAtEnd() {
	take := ss.idleTimer != nil && ss.linkUse.Load() != 1
	if take {
		ss.enterLink()
	}
	ss.poolOrigin()
	if take {
		ss.linkUse.Store(0)
	}
	ss.log.Debug().Msg("session ended; its origin connection went to the pool")
}

// originFailed reports a lost origin connection to the client.
func (ss *session) originFailed(err error) {
	ss.log.Warn().Err(err).Msg("lost the origin connection")
	ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("lost the connection to the origin: %v", err), "")
	ss.close()
}

// fatal sends a FATAL ErrorResponse to the client. The session closes after.
func (ss *session) fatal(code, message, hint string) {
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	// A session ends with one FATAL, like a Postgres backend: the first
	// reason is the one the client hears.
	if ss.isClosed() || ss.fatalSent {
		return
	}
	ss.fatalSent = true
	if ss.clientIO != nil {
		ss.clientIO.setWriteDeadline(time.Now().Add(5 * time.Second))
	} else {
		_ = ss.client.SetWriteDeadline(time.Now().Add(5 * time.Second))
	}
	ss.be.Send(pgError(severityFatal, code, message, hint))
	_ = ss.be.Flush()
}

// fatalFrom sends the client the origin's own FATAL ErrorResponse, as
// fatal sends one of the proxy's.
func (ss *session) fatalFrom(resp *pgproto3.ErrorResponse) {
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	if ss.isClosed() || ss.fatalSent {
		return
	}
	ss.fatalSent = true
	ss.be.Send(resp)
	_ = ss.be.Flush()
}

// isClosed reports whether the session has closed (or is closing) its
// connections. An atomic load: the event loop asks after every event.
func (ss *session) isClosed() bool {
	return ss.closing.Load()
}

// closed is closed when the session has closed its connections.
func (ss *session) closedCh() chan struct{} {
	ss.closedInit.Do(func() { ss.closed = make(chan struct{}) })
	return ss.closed
}

func (ss *session) close() {
	ss.closeOnce.Do(func() {
		ss.closing.Store(true)
		close(ss.closedCh())
		if ss.idleTimer != nil {
			ss.idleTimer.Stop()
		}
		ss.pending.close()
		closeConn(ss.client, ss.clientIO)
		ss.closeOrigin()
		if l := ss.loop.Load(); l != nil {
			// The loop cannot see a closed descriptor: it is told.
			l.kick(ss)
		}
	})
}

// closeConn closes a session socket through its raw I/O when it has one
// (which owns the socket in loop mode).
func closeConn(c net.Conn, raw *rawIO) {
	if raw != nil {
		_ = raw.Close()
		return
	}
	_ = c.Close()
}

// cancelQuery cancels whatever the session is running: a local query, or
// its origin backend's.
func (ss *session) cancelQuery() {
	if ss.cancelLocal() {
		return
	}
	ss.linkMu.Lock()
	pid, key := ss.originPID, ss.originKey
	ss.linkMu.Unlock()
	if key == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ss.srv.cfg.DialTimeout)
	defer cancel()
	if err := ss.srv.cancelOrigin(ctx, pid, key); err != nil {
		ss.log.Warn().Err(err).Msg("cancel of the origin query failed")
	}
}

// beginShutdown closes the session now if it is idle, else after its
// current statement (see relayOrigin).
func (ss *session) beginShutdown() {
	ss.shuttingDown.Store(true)
	if ss.idle() {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		ss.close()
	}
}

// idle reports whether the origin owes the session nothing.
func (ss *session) idle() bool {
	if ss.pass != nil {
		return ss.pass.idle()
	}
	return ss.pending.idle()
}

// forceClose cancels a statement still running after the grace period and
// closes the session.
func (ss *session) forceClose() {
	if !ss.idle() {
		ss.cancelQuery()
	}
	ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
	ss.close()
}

// closePortals forgets every portal and releases their local results: the
// transaction that held them ended, or the session did. It runs on the
// client loop's goroutine.
func (ss *session) closePortals() {
	if p, ok := ss.portals[""]; ok && len(ss.portals) == 1 {
		// The usual case (a driver's unnamed portal), without ranging
		// over the map, which costs more than the rest of a stretch's
		// start.
		p.release()
		delete(ss.portals, "")
		return
	}
	for name, p := range ss.portals {
		p.release()
		delete(ss.portals, name)
	}
}

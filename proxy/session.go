package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
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

// session is one client connection and its origin connection, composed
// of named parts, each declared in its own file with the goroutines that
// may touch it:
//
//	client  clientSide   clientside.go   the client's socket and the write path to it
//	origin  originSide   originside.go   the origin connection (the link), its replay and pending replies
//	ext     extState     extstate.go     the extended protocol's statements, portals and stretch
//	local   localRun     localrun.go     the local query the client waits for, and the statement timer
//	evl     loopState    loopstate.go    the session's life on an event loop
//	acc     accelState   accelstate.go   routing: the session info, settings and memos the planner reads
//	life    lifecycle    lifecycle.go    closing and the end of the session
//
// Three goroutines share a session: the client loop (reads the client,
// plans, answers locally, writes to the origin), the origin relay (reads
// the origin, writes to the client) and, for a session on an event loop,
// the loop's thread, which takes the client loop's and the origin relay's
// turns. What a part's fields may be touched by is said in its type.
type session struct {
	srv *Server
	log zerolog.Logger
	// state is what the routing hook may read (its own lock).
	state SessionState
	// stripe is the stripe of the metrics the session counts in
	// (stripes.go).
	stripe uint8
	// accel is the acceleration, nil for a session relayed without one;
	// pass is the pass-through relay's state when it is nil
	// (passthrough.go).
	accel *Accel
	pass  *passState
	// txWrote is set by the origin relay when a ReadyForQuery shows a
	// transaction that has written; the client loop reads it.
	txWrote atomic.Bool

	client clientSide
	origin originSide
	ext    extState
	local  localRun
	evl    loopState
	acc    accelState
	life   lifecycle
}

func newSession(s *Server, cs clientConn, startup *pgproto3.StartupMessage, log zerolog.Logger) *session {
	ss := &session{
		srv:    s,
		client: clientSide{clientConn: cs, startupMsg: startup},
		origin: originSide{pending: originlink.NewPending()},
		ext:    extState{stmts: make(map[string]*stmtInfo), portals: make(map[string]*portalInfo)},
		stripe: newStripe(),
		accel:  s.cfg.Accel,
		log:    log.With().Str("user", startup.Parameters["user"]).Logger(),
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
	if ss.accel == nil {
		ss.pass = &passState{}
	} else {
		m, stripe := s.metrics, ss.stripe
		ss.origin.pending.Observe = func(it *originlink.Item) {
			var d time.Duration
			if !it.Started.IsZero() {
				d = time.Since(it.Started)
				m.observeDuration(stripe, it.Route, d)
			}
			ss.statObserve(it, d)
		}
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
	ss.log = ss.log.With().Uint32("session", ss.client.pid).Logger()
	_ = ss.client.conn.SetDeadline(time.Time{})
	if ss.origin.state == linkLive {
		_ = ss.origin.conn.SetDeadline(time.Time{})
	}
	ss.log.Debug().Msg("session started")

	if ss.srv.isClosing() {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		return
	}
	if ss.origin.idleTimer != nil && ss.origin.state == linkLive {
		ss.origin.used.Store(int64(time.Since(monoStart)))
		ss.armIdle(ss.srv.cfg.Auth.OriginIdleTimeout)
	}
	if l := ss.srv.loopFor(ss); l != nil && ss.serveOnLoop(l) {
		ss.log.Debug().Msg("session ended")
		return
	}
	if !ss.life.endToPool.Load() {
		ss.restartOriginRelay()
		ss.relayClient()
	}
	ss.closePortals()
	if ss.life.endToPool.Load() {
		ss.poolAtEnd()
		return
	}
	ss.close()
	if ss.origin.done != nil {
		<-ss.origin.done
	}
	ss.log.Debug().Msg("session ended")
}

// poolAtEnd leaves the origin connection of a session whose client left
// with it idle to the pool (endsToPool), under the client loop's turn, which
// keeps the idle release (releaseIdle) out; the loop (serveOnLoop) may
// hold that turn already.
func (ss *session) poolAtEnd() {
	take := ss.origin.idleTimer != nil && ss.origin.use.Load() != 1
	if take {
		ss.enterLink()
	}
	ss.poolOrigin()
	if take {
		ss.origin.use.Store(0)
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
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	// A session ends with one FATAL, like a Postgres backend: the first
	// reason is the one the client hears.
	if ss.isClosed() || ss.client.fatalSent {
		return
	}
	ss.client.fatalSent = true
	if ss.client.raw != nil {
		ss.client.raw.SetWriteDeadline(time.Now().Add(5 * time.Second))
	} else {
		_ = ss.client.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	}
	ss.client.be.Send(pgdef.Error(pgdef.SeverityFatal, code, message, hint))
	_ = ss.client.be.Flush()
}

// fatalFrom sends the client the origin's own FATAL ErrorResponse, as
// fatal sends one of the proxy's.
func (ss *session) fatalFrom(resp *pgproto3.ErrorResponse) {
	ss.client.writeMu.Lock()
	defer ss.client.writeMu.Unlock()
	if ss.isClosed() || ss.client.fatalSent {
		return
	}
	ss.client.fatalSent = true
	ss.client.be.Send(resp)
	_ = ss.client.be.Flush()
}

// isClosed reports whether the session has closed (or is closing) its
// connections. An atomic load: the event loop asks after every event.
func (ss *session) isClosed() bool {
	return ss.life.closing.Load()
}

// closed is closed when the session has closed its connections.
func (ss *session) closedCh() chan struct{} {
	ss.life.closedInit.Do(func() { ss.life.closed = make(chan struct{}) })
	return ss.life.closed
}

func (ss *session) close() {
	ss.life.closeOnce.Do(func() {
		ss.life.closing.Store(true)
		close(ss.closedCh())
		if ss.origin.idleTimer != nil {
			ss.origin.idleTimer.Stop()
		}
		ss.origin.pending.Close()
		closeConn(ss.client.conn, ss.client.raw)
		ss.closeOrigin()
		if l := ss.evl.loop.Load(); l != nil {
			// The loop cannot see a closed descriptor: it is told.
			l.Kick(loopConn{ss})
		}
	})
}

// closeConn closes a session socket through its raw I/O when it has one
// (which owns the socket in loop mode).
func closeConn(c net.Conn, raw *wire.RawIO) {
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
	ss.origin.mu.Lock()
	pid, key := ss.origin.pid, ss.origin.key
	ss.origin.mu.Unlock()
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
	ss.life.shuttingDown.Store(true)
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
	return ss.origin.pending.Idle()
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
	if p, ok := ss.ext.portals[""]; ok && len(ss.ext.portals) == 1 {
		// The usual case (a driver's unnamed portal), without ranging
		// over the map, which costs more than the rest of a stretch's
		// start.
		p.release()
		delete(ss.ext.portals, "")
		return
	}
	for name, p := range ss.ext.portals {
		p.release()
		delete(ss.ext.portals, name)
	}
}

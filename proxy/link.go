package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// The origin link of a session with an acceleration.
//
// A session's origin connection is not tied to its life. With auth.mode
// proxy a login whose (database, role, startup parameters) were seen
// before starts with none (linkNone): the statements the acceleration
// answers need nothing of the origin, and the first message that must go
// there opens the connection (needOrigin), logging in with the ClientKey
// of the client's own login and setting up again what the session set up
// on an earlier one (replay). When the origin connection breaks while the
// session owes nothing to it and holds no transaction there (the origin
// restarted, or went down), the session does not end: it drops the link
// and goes on (detach). When a connection cannot be opened, an
// originlink.StandIn stands in for the stretch: every statement that needs
// the origin gets an ERROR 08006 and the session stays usable.
//
// With auth.mode origin the proxy cannot log in again (the password went
// by in the relayed exchange): a session whose link broke keeps answering
// from the acceleration while the origin is down, and once the origin
// answers again, the first statement that needs it ends the session with
// FATAL 08006, so that the client (its pool) reconnects.
type linkState uint8

const (
	linkLive    linkState = iota // a connection to the origin
	linkNone                     // none: the next message for the origin opens one
	linkStandIn                  // an originlink.StandIn answers (the origin could not be reached)
)

// loginOriginWait bounds the wait for the origin of a login that can start
// without it (proxyLogin); for originlink.StallMemo after one timed out,
// such logins do not wait at all.
const loginOriginWait = 2 * time.Second

// installOrigin makes c the session's origin connection, read and
// written through orw (wire.FastIO's, or c) and read through fr (nil: a new
// one); it runs on the client loop (or at startup) while no origin relay
// runs.
func (ss *session) installOrigin(c net.Conn, orw io.ReadWriter, fr *wire.FrameReader, state linkState) {
	if orw == nil {
		orw = wire.FastIO(c)
	}
	if fr == nil {
		fr = wire.NewFrameReader(orw, false)
	}
	ss.origin.mu.Lock()
	ss.origin.conn = c
	ss.origin.raw, _ = orw.(*wire.RawIO)
	ss.origin.mu.Unlock()
	ss.origin.fr = fr
	ss.origin.fe = pgproto3.NewFrontend(ss.origin.fr, orw)
	ss.origin.rw = orw
	ss.origin.state = state
}

// startOriginRelay runs the origin relay of the current link.
func (ss *session) startOriginRelay() {
	done := make(chan struct{})
	ss.origin.done = done
	go func() {
		defer close(done)
		ss.relayOrigin()
	}()
}

// dropLink ends the current link and waits for its relay: the session
// then has no origin connection.
func (ss *session) dropLink() {
	ss.mustNotBlock("drop the origin link")
	ss.closeOrigin()
	if ss.origin.done != nil {
		<-ss.origin.done
		ss.origin.done = nil
	}
	ss.unlink()
}

// originConn is the origin link's Go connection now: an event loop hands
// a socket back as a new one (wire.RawIO.ToGoroutine).
func (ss *session) originConn() net.Conn {
	if ss.origin.raw != nil {
		return ss.origin.raw.GoConn()
	}
	return ss.origin.conn
}

// closeOrigin closes the current origin connection (any goroutine).
func (ss *session) closeOrigin() {
	ss.origin.mu.Lock()
	defer ss.origin.mu.Unlock()
	if ss.origin.conn != nil {
		closeConn(ss.origin.conn, ss.origin.raw)
	}
}

// unlink leaves the session without an origin connection, whose relay has
// ended (the connection was closed, or handed to the pool).
func (ss *session) unlink() {
	ss.origin.broken.Store(false)
	ss.origin.releasing.Store(false)
	ss.installNone()
	ss.origin.mu.Lock()
	ss.origin.pid, ss.origin.key = 0, nil
	ss.origin.mu.Unlock()
	// Nothing of the session's statements is left at the origin.
	ss.acc.infoPrepared = false
	ss.ext.staleStmt, ss.ext.stalePortal = false, false
	ss.ext.stretchOrigin = false
}

// canDetach reports, on the origin relay, whether a broken origin link
// may leave the session running: it owes the client nothing from the
// origin and holds no transaction there.
func (ss *session) canDetach() bool {
	if ss.accel == nil || ss.isClosed() || ss.life.terminated.Load() || ss.life.shuttingDown.Load() {
		return false
	}
	if _, pending := ss.origin.pending.Head(); pending {
		return false
	}
	return ss.state.TxStatus() == 'I'
}

// detach runs on the origin relay when the origin connection broke (with
// the origin's FATAL, when it sent one) and canDetach allowed the session
// to go on: the client loop drops the link at its next need of the origin
// (needOrigin). It reports false when the session ends instead: its state
// at the origin cannot be set up again, or the origin still accepts
// sessions while it ended the connection with FATAL 57P01 (or, in
// auth.mode origin, where no new connection can be logged in, in any way):
// the backend was terminated on purpose (pg_terminate_backend), which
// ends the client's session as it would without pgaccel.
func (ss *session) detach(cause error, fatal *pgproto3.ErrorResponse) bool {
	ss.mustNotBlock("detach")
	end := ""
	switch {
	case ss.origin.unreplayable.Load() != nil && ss.origin.clientKey != nil:
		end = "the session's origin state cannot be set up again (" + *ss.origin.unreplayable.Load() + ")"
	case ss.origin.clientKey == nil || fatal != nil && fatal.Code == pgdef.AdminShutdown:
		// auth.mode origin, or an origin backend terminated on purpose:
		// only an outage lets the session go on.
		ctx, cancel := context.WithTimeout(ss.srv.baseCtx, ss.srv.cfg.DialTimeout)
		accepting := ss.srv.originAccepting(ctx, ss.client.startup)
		cancel()
		if accepting {
			end = "the origin ended the connection and still accepts sessions"
		}
	}
	if end != "" {
		ss.log.Info().Err(cause).Str("why", end).Msg("the origin connection broke; ending the session")
		return false
	}
	ss.log.Info().Err(cause).Msg("the origin connection broke while the session was idle; the session goes on without it")
	ss.srv.metrics.link(linkDetached)
	ss.origin.broken.Store(true)
	ss.closeOrigin()
	return true
}

// needOrigin makes sure a connection (or the stand-in) takes the next
// message for the origin. It runs on the client loop before anything is
// sent there, and reports false when the session must end (it has told
// the client why).
func (ss *session) needOrigin() bool {
	switch ss.settleLink() {
	case linkLive, linkStandIn:
		return true
	}
	return ss.connectLink()
}

// settleLink drops a link that has ended (a broken connection, or a
// stand-in whose stretch is answered) once nothing is pending on it, and
// returns the link's state: linkNone means nothing of the session is at
// any origin.
func (ss *session) settleLink() linkState {
	switch ss.origin.state {
	case linkLive:
		if ss.origin.broken.Load() && ss.origin.pending.Idle() {
			ss.dropLink()
		}
	case linkStandIn:
		// Kept while no session may try the origin again, so that the
		// planner knows it is down (point reads: originDown).
		if ss.origin.pending.Idle() && !ss.ext.stretchOrigin && ss.srv.health.RetryDue() {
			ss.dropLink()
		}
	}
	return ss.origin.state
}

// originDown reports whether the origin cannot answer the session now,
// trying it (at most once per originlink.RetryEvery for all sessions) when the
// session has no connection: a read by a dataset's key that
// runtime.point_reads: origin sends there is then answered by the
// acceleration (planSession's OriginDown).
func (ss *session) originDown() bool {
	if ss.settleLink() == linkLive {
		return false
	}
	if ss.origin.state == linkNone && ss.origin.pending.Idle() && !ss.connectLink() {
		return true // the session ends
	}
	return ss.origin.state == linkStandIn
}

// connectLink opens a connection to the origin for a session that has
// none, or puts the stand-in in its place.
func (ss *session) connectLink() bool {
	ss.mustNotBlock("connect to the origin")
	if ss.acc.virtualBegin != "" && ss.state.TxStatus() == 'E' {
		// A failed transaction that is not at the origin (localtx.go):
		// statements get 25P02 until it ends; none reaches the origin.
		ss.standIn(nil) // answers 25P02 in status 'E'
		return true
	}
	if !ss.srv.health.RetryDue() {
		ss.standIn(ss.srv.health.LastError())
		return true
	}
	if ss.origin.clientKey == nil {
		// auth.mode origin: no credential to log in again with.
		ctx, cancel := context.WithTimeout(ss.srv.baseCtx, ss.srv.cfg.DialTimeout)
		accepting := ss.srv.originAccepting(ctx, ss.client.startup)
		cancel()
		if !accepting {
			ss.standIn(ss.srv.health.LastError())
			return true
		}
		ss.fatal(pgdef.ConnectionFailure, "the connection to the origin was lost and pgaccel cannot log in again for this session",
			"Connect again. With auth.mode: proxy, pgaccel reopens origin connections itself.")
		ss.close()
		return false
	}
	for ol := ss.srv.pool.Take(ss.origin.loginKey, ss.appName()); ol != nil; ol = ss.srv.pool.Take(ss.origin.loginKey, ss.appName()) {
		// A connection another session of this login key released.
		if err := ss.useOriginLogin(ol); err != nil {
			ss.log.Debug().Err(err).Msg("a pooled origin connection failed; trying another")
			_ = ol.Conn.Close()
			ss.unlink()
			continue
		}
		ss.srv.metrics.link(linkReused)
		ss.startOriginRelay()
		ss.sendStretchSets()
		return true
	}
	ctx, cancel := context.WithTimeout(ss.srv.baseCtx, startupTimeout)
	defer cancel()
	ol, err := ss.srv.loginOrigin(ctx, ss.client.startup, ss.origin.clientKey, ss.origin.verifier)
	var oe *originError
	switch {
	case err == nil:
	case errors.As(err, &oe), errors.Is(err, auth.ErrResalted), errors.Is(err, errOriginAuth):
		// The origin refused the role now (its password changed, it was
		// dropped or set NOLOGIN): the session ends as a login would.
		ss.log.Info().Err(err).Msg("the origin refused to log the session in again")
		if oe != nil {
			ss.fatalFrom(oe.resp)
		} else {
			ss.fatal(pgdef.InvalidPassword, fmt.Sprintf("password authentication failed for user %q", ss.state.User),
				"The role's password changed at the origin since this session logged in.")
		}
		ss.close()
		return false
	default:
		ss.srv.health.Down(err)
		ss.standIn(err)
		return true
	}
	ss.srv.health.Up()
	if err := ss.useOriginLogin(ol); err != nil {
		ss.log.Warn().Err(err).Msg("setting the session up again at the origin failed")
		ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("could not set the session up again at the origin: %v", err), "Connect again.")
		ss.close()
		return false
	}
	ss.srv.metrics.link(linkReconnected)
	ss.startOriginRelay()
	ss.sendStretchSets()
	return true
}

// useOriginLogin makes ol the session's live origin connection and sets
// the session up on it (replay); its relay is not started yet.
func (ss *session) useOriginLogin(ol *originlink.Login) error {
	ss.installOrigin(ol.Conn, ol.RW, ol.FR, linkLive)
	ss.origin.fe = ol.FE
	ss.origin.mu.Lock()
	ss.origin.pid, ss.origin.key = ol.PID, ol.Key
	ss.origin.mu.Unlock()
	return ss.replay(ol)
}

// installNone leaves the session with no origin connection: a closed
// originlink.StandIn, since nothing may be sent without needOrigin.
func (ss *session) installNone() {
	none := originlink.NewStandIn("", "")
	_ = none.Close()
	ss.installOrigin(none, none, nil, linkNone)
}

// standIn puts an originlink.StandIn in place of the origin connection.
func (ss *session) standIn(cause error) {
	msg := "the origin is unavailable"
	if cause != nil {
		msg = fmt.Sprintf("the origin is unavailable: %v", cause)
	}
	hint := "This statement needs the origin Postgres. Statements over accelerated datasets are still answered; pgaccel reconnects when the origin is back."
	if ss.origin.clientKey == nil {
		hint = "This statement needs the origin Postgres. Statements over accelerated datasets are still answered; connect again when the origin is back."
	}
	u := originlink.NewStandIn(msg, hint)
	if ss.acc.virtualBegin != "" {
		u.SetTx(ss.state.TxStatus()) // in a transaction not at the origin
	}
	ss.installOrigin(u, u, nil, linkStandIn)
	ss.srv.metrics.link(linkStandInEvent)
	ss.startOriginRelay()
}

// Idle release. With auth.mode proxy and auth.origin_idle_timeout, a
// session's origin connection that has answered everything, holds no
// transaction and carries only state the session can set up again is
// released once the session has sent nothing for that long: reset
// (DISCARD ALL) into the pool (originlink.Pool), where the next session of the
// same login key that needs the origin takes it, or closed; the session's
// next statement for the origin takes a pooled connection or opens one
// (needOrigin, replay). So
// many sessions that write now and then hold backends only while they use
// them. The client loop and the timer take turns through origin.use: 0 idle
// (the client loop waits for the client), 1 the client loop handles a
// message, 2 the timer closes the connection.

// enterLink is called by the client loop before it handles a message.
func (ss *session) enterLink() {
	if ss.origin.idleTimer == nil {
		return
	}
	for !ss.origin.use.CompareAndSwap(0, 1) {
		time.Sleep(20 * time.Microsecond) // a release is closing the connection
	}
}

// leaveLink is called by the client loop after it handled a message. It
// notes the time rather than resetting the timer, which would cost a
// timer-heap update per message: the timer, armed once, looks at the
// time when it fires and waits out the rest (releaseIdle).
func (ss *session) leaveLink() {
	if ss.origin.idleTimer == nil {
		return
	}
	live := ss.origin.state == linkLive // read while the turn is still the client loop's
	if live {
		ss.origin.used.Store(int64(time.Since(monoStart)))
	}
	ss.origin.use.Store(0)
	if live && !ss.origin.idleArmed.Load() && ss.origin.idleArmed.CompareAndSwap(false, true) {
		ss.origin.idleTimer.Reset(ss.srv.cfg.Auth.OriginIdleTimeout)
	}
}

// monoStart is the base of origin.used's monotonic times.
var monoStart = time.Now()

// armIdle arms the idle timer for d.
func (ss *session) armIdle(d time.Duration) {
	ss.origin.idleArmed.Store(true)
	ss.origin.idleTimer.Reset(d)
}

// releaseIdle runs on the session's idle timer. It leaves the timer
// unarmed (idleArmed false) only while the session holds no origin
// connection to release, and says so before the client loop may take its
// turn (origin.use), so that the leaveLink after the link comes back arms it.
func (ss *session) releaseIdle() {
	timeout := ss.srv.cfg.Auth.OriginIdleTimeout
	if idle := time.Since(monoStart) - time.Duration(ss.origin.used.Load()); idle < timeout {
		ss.armIdle(timeout - idle) // used since it was armed: wait out the rest
		return
	}
	if ss.evl.looped.Load() {
		// An event loop relays the session: it hands it back to the
		// client goroutine first, which then takes turns with the timer.
		if l := ss.evl.loop.Load(); l != nil {
			ss.evl.wantGoroutines.Store(true)
			l.Kick(loopConn{ss})
		}
		ss.armIdle(10 * time.Millisecond)
		return
	}
	if ss.isClosed() {
		return
	}
	if !ss.origin.use.CompareAndSwap(0, 2) {
		ss.armIdle(timeout) // the client loop is handling a message: look again later
		return
	}
	defer ss.origin.use.Store(0)
	if ss.origin.state != linkLive || ss.origin.broken.Load() || ss.life.endToPool.Load() {
		// No connection, or the session ended and pools it itself.
		ss.origin.idleArmed.Store(false)
		return
	}
	if !ss.origin.pending.Idle() || ss.ext.stretchOrigin || ss.state.TxStatus() != 'I' || ss.origin.unreplayable.Load() != nil {
		ss.armIdle(timeout) // in use: look again later
		return
	}
	ss.origin.idleArmed.Store(false)
	ss.poolOrigin()
}

// poolOrigin takes the session's idle origin connection from it and puts
// it in the pool, reset (resetForPool), or closes it when it cannot be
// pooled. It runs where the client loop cannot run (releaseIdle holds
// its turn; the session's end).
func (ss *session) poolOrigin() {
	conn := ss.originConn()
	if ss.origin.done != nil {
		// Stop the origin relay without closing the connection: a read
		// deadline in the past ends its wait (originReadFailed:
		// releasing).
		ss.origin.releasing.Store(true)
		_ = conn.SetReadDeadline(time.Now())
		<-ss.origin.done
		ss.origin.done = nil
	}
	// Only a plain socket is pooled: after a read deadline, a TLS
	// connection's state is not promised to be sound.
	clean := ss.origin.fr.Buffered() == 0 && ss.origin.raw != nil
	_ = conn.SetReadDeadline(time.Time{})
	ol := &originlink.Login{Conn: conn, RW: ss.origin.rw, Params: ss.state.Params(), PID: ss.origin.pid, Key: ss.origin.key, Status: 'I'}
	ol.FR = wire.NewFrameReader(ol.RW, false)
	ol.FE = pgproto3.NewFrontend(ol.FR, ol.RW)
	ss.unlink()
	ss.srv.metrics.link(linkReleased)
	if !clean || ss.srv.cfg.Auth == nil || !originlink.ResetForPool(ol) {
		_ = ol.Conn.Close()
		return
	}
	ss.srv.pool.Put(ss.origin.loginKey, ol)
}

// endsToPool reports, at the client's Terminate, whether the session's
// origin connection goes to the pool for the next session of its login
// key instead of ending with it, as pgbouncer's server connections do: with
// auth.mode proxy (pgaccel can log that session in itself), a pool
// (auth.origin_idle_timeout above 0), and a live link that owes the client
// nothing and holds no transaction. DISCARD ALL (resetForPool) then leaves
// nothing of this session on it. It runs on the client loop.
func (ss *session) endsToPool() bool {
	if ss.origin.clientKey == nil || ss.srv.pool.IdleFor <= 0 || ss.origin.state != linkLive || ss.origin.raw == nil ||
		ss.origin.broken.Load() || ss.origin.releasing.Load() || ss.life.shuttingDown.Load() || ss.srv.isClosing() ||
		ss.state.TxStatus() != 'I' {
		return false
	}
	if ss.pass != nil {
		return ss.pass.idle()
	}
	return ss.origin.pending.Idle() && !ss.ext.stretchOrigin
}

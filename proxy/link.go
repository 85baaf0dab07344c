package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
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
// unavailableOrigin stands in for the stretch: every statement that needs
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
	linkStandIn                  // an unavailableOrigin answers (the origin could not be reached)
)

// originRetryEvery is how long after a failed connect to the origin no
// session tries again; in between, statements that need the origin fail
// at once.
const originRetryEvery = time.Second

// loginOriginWait bounds the wait for the origin of a login that can start
// without it (proxyLogin); for originStallMemo after one timed out, such
// logins do not wait at all.
const (
	loginOriginWait = 2 * time.Second
	originStallMemo = 5 * time.Second
)

// installOrigin makes c the session's origin connection, read and
// written through orw (fastIO's, or c) and read through fr (nil: a new
// one); it runs on the client loop (or at startup) while no origin relay
// runs.
func (ss *session) installOrigin(c net.Conn, orw io.ReadWriter, fr *frameReader, state linkState) {
	if orw == nil {
		orw = fastIO(c)
	}
	if fr == nil {
		fr = newFrameReader(orw, false)
	}
	ss.linkMu.Lock()
	ss.origin = c
	ss.originIO, _ = orw.(*rawIO)
	ss.linkMu.Unlock()
	ss.ofr = fr
	ss.fe = pgproto3.NewFrontend(ss.ofr, orw)
	ss.originRW = orw
	ss.link = state
}

// startOriginRelay runs the origin relay of the current link.
func (ss *session) startOriginRelay() {
	done := make(chan struct{})
	ss.originDone = done
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
	if ss.originDone != nil {
		<-ss.originDone
		ss.originDone = nil
	}
	ss.unlink()
}

// originConn is the origin link's Go connection now: an event loop hands
// a socket back as a new one (rawIO.toGoroutine).
func (ss *session) originConn() net.Conn {
	if ss.originIO != nil {
		return ss.originIO.goConn()
	}
	return ss.origin
}

// closeOrigin closes the current origin connection (any goroutine).
func (ss *session) closeOrigin() {
	ss.linkMu.Lock()
	defer ss.linkMu.Unlock()
	if ss.origin != nil {
		closeConn(ss.origin, ss.originIO)
	}
}

// unlink leaves the session without an origin connection, whose relay has
// ended (the connection was closed, or handed to the pool).
func (ss *session) unlink() {
	ss.broken.Store(false)
	ss.releasing.Store(false)
	ss.installNone()
	ss.linkMu.Lock()
	ss.originPID, ss.originKey = 0, nil
	ss.linkMu.Unlock()
	// Nothing of the session's statements is left at the origin.
	ss.infoPrepared = false
	ss.staleStmt, ss.stalePortal = false, false
	ss.stretchOrigin = false
}

// canDetach reports, on the origin relay, whether a broken origin link
// may leave the session running: it owes the client nothing from the
// origin and holds no transaction there.
func (ss *session) canDetach() bool {
	if ss.accel == nil || ss.isClosed() || ss.terminated.Load() || ss.shuttingDown.Load() {
		return false
	}
	if _, pending := ss.pending.head(); pending {
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
	case ss.unreplayable.Load() != nil && ss.clientKey != nil:
		end = "the session's origin state cannot be set up again (" + *ss.unreplayable.Load() + ")"
	case ss.clientKey == nil || fatal != nil && fatal.Code == pgdef.AdminShutdown:
		// auth.mode origin, or an origin backend terminated on purpose:
		// only an outage lets the session go on.
		ctx, cancel := context.WithTimeout(ss.srv.baseCtx, ss.srv.cfg.DialTimeout)
		accepting := ss.srv.originAccepting(ctx, ss.startupRaw)
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
	ss.broken.Store(true)
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
	switch ss.link {
	case linkLive:
		if ss.broken.Load() && ss.pending.idle() {
			ss.dropLink()
		}
	case linkStandIn:
		// Kept while no session may try the origin again, so that the
		// planner knows it is down (point reads: originDown).
		if ss.pending.idle() && !ss.stretchOrigin && ss.srv.originRetryDue() {
			ss.dropLink()
		}
	}
	return ss.link
}

// originDown reports whether the origin cannot answer the session now,
// trying it (at most once per originRetryEvery for all sessions) when the
// session has no connection: a read by a dataset's key that
// runtime.point_reads: origin sends there is then answered by the
// acceleration (planSession's OriginDown).
func (ss *session) originDown() bool {
	if ss.settleLink() == linkLive {
		return false
	}
	if ss.link == linkNone && ss.pending.idle() && !ss.connectLink() {
		return true // the session ends
	}
	return ss.link == linkStandIn
}

// connectLink opens a connection to the origin for a session that has
// none, or puts the stand-in in its place.
func (ss *session) connectLink() bool {
	ss.mustNotBlock("connect to the origin")
	if ss.virtualBegin != "" && ss.state.TxStatus() == 'E' {
		// A failed transaction that is not at the origin (localtx.go):
		// statements get 25P02 until it ends; none reaches the origin.
		ss.standIn(nil) // answers 25P02 in status 'E'
		return true
	}
	if !ss.srv.originRetryDue() {
		ss.standIn(ss.srv.lastOriginError())
		return true
	}
	if ss.clientKey == nil {
		// auth.mode origin: no credential to log in again with.
		ctx, cancel := context.WithTimeout(ss.srv.baseCtx, ss.srv.cfg.DialTimeout)
		accepting := ss.srv.originAccepting(ctx, ss.startupRaw)
		cancel()
		if !accepting {
			ss.standIn(ss.srv.lastOriginError())
			return true
		}
		ss.fatal(pgdef.ConnectionFailure, "the connection to the origin was lost and pgaccel cannot log in again for this session",
			"Connect again. With auth.mode: proxy, pgaccel reopens origin connections itself.")
		ss.close()
		return false
	}
	for ol := ss.srv.pool.take(ss.loginKey, ss.appName()); ol != nil; ol = ss.srv.pool.take(ss.loginKey, ss.appName()) {
		// A connection another session of this login key released.
		if err := ss.useOriginLogin(ol); err != nil {
			ss.log.Debug().Err(err).Msg("a pooled origin connection failed; trying another")
			_ = ol.conn.Close()
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
	ol, err := ss.srv.loginOrigin(ctx, ss.startupRaw, ss.clientKey, ss.verifier)
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
		ss.srv.originDown(err)
		ss.standIn(err)
		return true
	}
	ss.srv.originUp()
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
func (ss *session) useOriginLogin(ol *originLogin) error {
	ss.installOrigin(ol.conn, ol.rw, ol.fr, linkLive)
	ss.fe = ol.fe
	ss.linkMu.Lock()
	ss.originPID, ss.originKey = ol.pid, ol.key
	ss.linkMu.Unlock()
	return ss.replay(ol)
}

// installNone leaves the session with no origin connection: a closed
// unavailableOrigin, since nothing may be sent without needOrigin.
func (ss *session) installNone() {
	none := newUnavailableOrigin("", "")
	_ = none.Close()
	ss.installOrigin(none, none, nil, linkNone)
}

// standIn puts an unavailableOrigin in place of the origin connection.
func (ss *session) standIn(cause error) {
	msg := "the origin is unavailable"
	if cause != nil {
		msg = fmt.Sprintf("the origin is unavailable: %v", cause)
	}
	hint := "This statement needs the origin Postgres. Statements over accelerated datasets are still answered; pgaccel reconnects when the origin is back."
	if ss.clientKey == nil {
		hint = "This statement needs the origin Postgres. Statements over accelerated datasets are still answered; connect again when the origin is back."
	}
	u := newUnavailableOrigin(msg, hint)
	if ss.virtualBegin != "" {
		u.tx = ss.state.TxStatus() // in a transaction not at the origin
	}
	ss.installOrigin(u, u, nil, linkStandIn)
	ss.srv.metrics.link(linkStandInEvent)
	ss.startOriginRelay()
}

// replay sets up on a new origin connection what the session set up on
// the earlier ones: the settings it changed with SET, and the statements
// it prepared there. Their answers are kept from the client; a
// ParameterStatus whose value differs from what the client has is passed
// on.
func (ss *session) replay(ol *originLogin) error {
	var msgs []pgproto3.FrontendMessage
	for _, sql := range ss.replaySets {
		msgs = append(msgs, &pgproto3.Query{String: sql})
	}
	names := slices.Sorted(maps.Keys(ss.stmts))
	parses := 0
	for _, name := range names {
		st := ss.stmts[name]
		if st == nil || st.local || !st.atOrigin || name == "" {
			continue
		}
		msgs = append(msgs, &pgproto3.Parse{Name: name, Query: st.sql, ParameterOIDs: st.paramOIDs})
		parses++
	}
	if parses > 0 {
		msgs = append(msgs, &pgproto3.Sync{})
	}
	if ss.virtualBegin != "" {
		// The transaction the session is in (localtx.go) starts at the
		// origin before the statement that needs it.
		msgs = append(msgs, &pgproto3.Query{String: ss.virtualBegin})
	}
	params := maps.Clone(ol.params)
	if len(msgs) > 0 {
		_ = ss.origin.SetDeadline(time.Now().Add(startupTimeout))
		defer func() { _ = ss.origin.SetDeadline(time.Time{}) }()
		for _, m := range msgs {
			ss.fe.Send(m)
		}
		if err := ss.fe.Flush(); err != nil {
			return err
		}
		begins := 0
		if ss.virtualBegin != "" {
			begins = 1
		}
		for want := len(ss.replaySets) + min(parses, 1) + begins; want > 0; {
			msg, err := ss.fe.Receive()
			if err != nil {
				return err
			}
			switch m := msg.(type) {
			case *pgproto3.ReadyForQuery:
				want--
				wantTx := byte('I')
				if want == 0 && begins > 0 {
					wantTx = 'T' // after the BEGIN
				}
				if m.TxStatus != wantTx {
					return fmt.Errorf("transaction status %q after setup", m.TxStatus)
				}
			case *pgproto3.ParameterStatus:
				params[m.Name] = m.Value
			case *pgproto3.ErrorResponse:
				// As on the first connection, where the client saw it.
				ss.log.Debug().Str("code", m.Code).Msg("a replayed statement failed at the origin")
			}
		}
	}
	ss.virtualBegin = "" // the transaction is the origin's now
	old := ss.clientParams()
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	sent := false
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if v := params[name]; old[name] != v {
			ss.state.setParam(name, v)
			ss.be.Send(&pgproto3.ParameterStatus{Name: name, Value: v})
			sent = true
		}
	}
	if sent {
		return ss.be.Flush()
	}
	return nil
}

// noteReplay records what a statement bound for the origin sets up there,
// for replay on a later connection: a SET (or RESET, DISCARD) outside a
// transaction block is replayed once it has reached a live origin
// (pendingSet, commitSet). State that cannot be rebuilt (a setting
// changed inside a transaction block, temporary tables, LISTEN, cursors
// WITH HOLD, SQL PREPARE, DO and CALL, which may change anything) marks the
// session unreplayable, so that losing its link ends it as before.
func (ss *session) noteReplay(sql string, d planner.Decision, stateCall *string) {
	if ss.clientKey == nil {
		// auth.mode origin: nothing is replayed (a broken link ends the
		// session once the origin is back), and no login is cached.
		return
	}
	ss.pendingSet, ss.pendingDiscard = "", false
	switch d.Kind {
	case planner.KindSet, planner.KindReset, planner.KindDiscard:
		ss.pristine = false
		if transactionScoped(sql) {
			return // SET LOCAL and SET TRANSACTION end with the transaction
		}
		if ss.state.TxStatus() != 'I' {
			ss.markUnreplayable("a setting changed inside a transaction block")
			return
		}
		ss.pendingSet, ss.pendingDiscard = sql, d.Kind == planner.KindDiscard
	case planner.KindDDL:
		if d.SetsSearchPath {
			ss.markUnreplayable("temporary tables or schemas created in the session")
		}
	case planner.KindDeclare:
		// A cursor without HOLD ends with its transaction (DECLARE
		// outside a transaction block is an error): only one WITH HOLD
		// stays at the origin (psycopg's and Django's server-side
		// cursors are without).
		if d.HoldCursor {
			ss.pristine = false
			ss.markUnreplayable("a cursor declared WITH HOLD")
		}
	case planner.KindMulti:
		if steps, ok := planner.SessionReset(sql); ok {
			// A pool's reset (asyncpg's) takes state away: what it
			// leaves is set up again by replaying its RESET ALL (after
			// the SETs before it: SET ROLE outlives RESET ALL).
			ss.pristine = false
			switch {
			case !strings.ContainsRune(steps, rune(planner.ResetAll)):
			case ss.state.TxStatus() != 'I':
				ss.markUnreplayable("a setting changed inside a transaction block")
			default:
				ss.pendingSet = resetAll
			}
			return
		}
		ss.pristine = false
		ss.markUnreplayable("statements that may leave session state at the origin (" + d.Kind.String() + ")")
	case planner.KindListen, planner.KindPrepare, planner.KindCall, planner.KindDo,
		planner.KindOther:
		ss.pristine = false
		ss.markUnreplayable("statements that may leave session state at the origin (" + d.Kind.String() + ")")
	default:
		fn := ""
		if stateCall != nil {
			fn = *stateCall
		} else {
			fn = sessionStateCall(sql)
		}
		if fn != "" {
			ss.pristine = false
			ss.markUnreplayable("a call of " + fn + ", whose effect lasts for the session")
		}
	}
}

// resetAll is the replayed RESET ALL of a pool's reset that ran at the
// origin.
const resetAll = "RESET ALL"

// sessionStateCall names a function sql calls whose effect outlives the
// statement and the transaction (a session-level advisory lock, a
// set_config that is not local, a sequence's currval), "" when it calls
// none. It reads the text,
// so it also finds them in comments and strings: it errs towards ending a
// session whose link breaks, as before, rather than losing a lock silently.
func sessionStateCall(sql string) string {
	// One pass over the text (it runs for every statement of a new text
	// a session with an acceleration sends): at each byte that may start
	// a name, the names that start with it. The first name of the list
	// found anywhere is the one reported.
	found := len(sessionStateFns)
	for i := 0; i+1 < len(sql); i++ {
		// Each name's first two letters: pg, se, db, ne.
		c, c2 := sql[i]|0x20, sql[i+1]|0x20
		if !(c == 'p' && c2 == 'g' || c == 's' && c2 == 'e' || c == 'd' && c2 == 'b' || c == 'n' && c2 == 'e') {
			continue
		}
		for k, fn := range sessionStateFns[:found] {
			if fn[0] == c && len(sql)-i >= len(fn) && foldPrefix(sql[i:], fn) {
				found = k
				break
			}
		}
		if found == 0 {
			break
		}
	}
	if found == len(sessionStateFns) {
		return ""
	}
	return sessionStateFns[found]
}

// foldPrefix reports whether s starts with lower (lower-case ASCII) in
// any case: strings.EqualFold of that many bytes, without its Unicode
// folding, which cannot match an ASCII name in as many bytes.
func foldPrefix(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// sessionStateFns are the functions sessionStateCall looks for. nextval
// and setval: currval and lastval read what they left in the session.
var sessionStateFns = []string{"pg_advisory_lock", "pg_try_advisory_lock", "set_config", "dblink_connect", "nextval", "setval"}

// markUnreplayable records why the session's origin state cannot be set up
// again (read by the origin relay: detach).
func (ss *session) markUnreplayable(why string) {
	if ss.unreplayable.Load() == nil {
		ss.unreplayable.Store(&why)
	}
}

// commitSet records the SET being sent once it goes to a live origin;
// one sent in an extended-protocol stretch (inStretch: its Execute) holds
// only if the stretch succeeds (stretchsets.go).
func (ss *session) commitSet(inStretch bool) {
	if ss.pendingSet == "" {
		return
	}
	if ss.link == linkLive {
		switch {
		case ss.pendingDiscard:
			ss.replaySets = append(ss.replaySets[:0], ss.pendingSet)
		case inStretch:
			t := ss.tentative()
			t.sqls = append(t.sqls, ss.pendingSet)
		default:
			ss.keepSet(ss.pendingSet)
		}
	}
	ss.pendingSet = ""
}

// endLocalSkip ends the skip after a local error at the stretch's Sync:
// the stretch failed.
func (ss *session) endLocalSkip() {
	ss.localSkip = false
	if ss.tent != nil {
		ss.tent.failed = true
	}
}

// keepSet adds a SET the session ran (at the origin, or answered itself:
// localcmd.go) to those a new origin connection gets.
func (ss *session) keepSet(sql string) {
	// The same statement again replaces its earlier run (drivers and
	// pools that set up each checkout alike).
	ss.replaySets = slices.DeleteFunc(ss.replaySets, func(q string) bool { return q == sql })
	if len(ss.replaySets) >= 256 {
		ss.markUnreplayable("too many settings to replay")
		return
	}
	ss.replaySets = append(ss.replaySets, sql)
}

// transactionScoped reports whether a SET statement's effect ends with its
// transaction (SET LOCAL, SET TRANSACTION).
func transactionScoped(sql string) bool {
	f := strings.Fields(strings.ToLower(sql))
	return len(f) >= 2 && f[0] == "set" && (f[1] == "local" || strings.HasPrefix(f[1], "transaction"))
}

// originLogin is a connection to the origin logged in as a session's role
// (loginOrigin): what it said at startup.
type originLogin struct {
	conn   net.Conn
	rw     io.ReadWriter
	fr     *frameReader
	fe     *pgproto3.Frontend
	params map[string]string
	pid    uint32
	key    []byte
	status byte
}

// errOriginAuth is an origin that asks for a password pgaccel cannot give.
var errOriginAuth = errors.New("the origin asks for a cleartext or md5 password, which pgaccel cannot answer with a ClientKey; use scram-sha-256 (or trust) for connections from pgaccel")

// loginOrigin opens a connection to the origin and logs in with startup
// (the client's StartupMessage as it came) and, when the origin asks for
// SCRAM-SHA-256, the ClientKey recovered from the client's login.
// ErrorResponses of the origin come back as *originError.
func (s *Server) loginOrigin(ctx context.Context, startup, clientKey []byte, v auth.Verifier) (*originLogin, error) {
	// The whole login, not only the connect, within DialTimeout: an
	// origin that accepts the connection and then answers nothing (a
	// frozen host) is not waited for longer than one that is unreachable.
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	oc, err := s.dialOrigin(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = oc.Close()
		}
	}()
	if dl, has := ctx.Deadline(); has {
		_ = oc.SetDeadline(dl)
	}
	orw := fastIO(oc)
	fr := newFrameReader(orw, false)
	fe := pgproto3.NewFrontend(fr, orw)
	fe.Send(rawFrame(startup))
	if err := fe.Flush(); err != nil {
		return nil, err
	}
	var ex *auth.ClientExchange
	ol := &originLogin{conn: oc, rw: orw, fr: fr, fe: fe, params: map[string]string{}}
	for {
		msg, err := fe.Receive()
		if err != nil {
			return nil, err
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationOk:
		case *pgproto3.AuthenticationSASL:
			if !slices.Contains(m.AuthMechanisms, "SCRAM-SHA-256") || clientKey == nil {
				return nil, errOriginAuth
			}
			ex = auth.NewClientExchange(clientKey, v)
			first, err := ex.First()
			if err != nil {
				return nil, err
			}
			fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: first})
			if err := fe.Flush(); err != nil {
				return nil, err
			}
		case *pgproto3.AuthenticationSASLContinue:
			if ex == nil {
				return nil, errOriginAuth
			}
			final, err := ex.Final(m.Data)
			if err != nil {
				return nil, err
			}
			fe.Send(&pgproto3.SASLResponse{Data: final})
			if err := fe.Flush(); err != nil {
				return nil, err
			}
		case *pgproto3.AuthenticationSASLFinal:
			if ex == nil {
				return nil, errOriginAuth
			}
			if err := ex.Verify(m.Data); err != nil {
				return nil, err
			}
		case *pgproto3.AuthenticationCleartextPassword, *pgproto3.AuthenticationMD5Password,
			*pgproto3.AuthenticationGSS, *pgproto3.AuthenticationGSSContinue:
			return nil, errOriginAuth
		case *pgproto3.ParameterStatus:
			ol.params[m.Name] = m.Value
		case *pgproto3.BackendKeyData:
			ol.pid, ol.key = m.ProcessID, slices.Clone(m.SecretKey)
		case *pgproto3.ReadyForQuery:
			ol.status = m.TxStatus
			_ = oc.SetDeadline(time.Time{})
			ok = true
			return ol, nil
		case *pgproto3.ErrorResponse:
			return nil, &originError{resp: copyBackendMessage(m).(*pgproto3.ErrorResponse)}
		case *pgproto3.NoticeResponse, *pgproto3.NegotiateProtocolVersion:
		default:
			return nil, fmt.Errorf("unexpected message %T from the origin during login", msg)
		}
	}
}

// originHealth is what sessions know of the origin's reachability: after
// a failed connect no session dials again for originRetryEvery.
type originHealth struct {
	mu        sync.Mutex
	failedAt  time.Time
	err       error
	stalledAt time.Time // originStalls
}

// originRetryDue reports whether a session may try to connect now: an
// originRetryEvery after a failed connect, or a DialTimeout after one the
// origin did not answer in time (a partition, a frozen host), so that
// while it hangs one session in that long waits for it, not every
// session's statement that needs it.
func (s *Server) originRetryDue() bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	after := originRetryEvery
	if isTimeout(s.health.err) {
		after = max(after, s.cfg.DialTimeout)
	}
	return s.health.err == nil || time.Since(s.health.failedAt) >= after
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout())
}

func (s *Server) lastOriginError() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.err
}

func (s *Server) originDown(err error) {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.failedAt, s.health.err = time.Now(), err
}

func (s *Server) originUp() {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.err = nil
	s.health.stalledAt = time.Time{}
}

// originStalls records a login the origin did not answer in
// loginOriginWait (it may be slow rather than down: statements that need
// it still try it).
func (s *Server) originStalls() {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.stalledAt = time.Now()
}

// originStalled reports whether a login timed out within originStallMemo,
// or a connect failed within originRetryEvery.
func (s *Server) originStalled() bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return !s.health.stalledAt.IsZero() && time.Since(s.health.stalledAt) < originStallMemo ||
		s.health.err != nil && time.Since(s.health.failedAt) < originRetryEvery
}

// originAccepting reports whether the origin accepts sessions now: it
// answers the client's StartupMessage with an authentication request (or
// a refusal other than "shutting down" or "starting up"). The probe
// connection is closed before anything is authenticated.
func (s *Server) originAccepting(ctx context.Context, startup []byte) bool {
	c, err := s.dialOrigin(ctx)
	if err != nil {
		s.originDown(err)
		return false
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	fe := pgproto3.NewFrontend(c, c)
	fe.Send(rawFrame(startup))
	if err := fe.Flush(); err != nil {
		s.originDown(err)
		return false
	}
	msg, err := fe.Receive()
	if err != nil {
		s.originDown(err)
		return false
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && planner.UnreachableCode(e.Code) {
		s.originDown(fmt.Errorf("%s", e.Message))
		return false
	}
	s.originUp()
	return true
}

// Idle release. With auth.mode proxy and auth.origin_idle_timeout, a
// session's origin connection that has answered everything, holds no
// transaction and carries only state the session can set up again is
// released once the session has sent nothing for that long: reset
// (DISCARD ALL) into the pool (pool.go), where the next session of the
// same login key that needs the origin takes it, or closed; the session's
// next statement for the origin takes a pooled connection or opens one
// (needOrigin, replay). So
// many sessions that write now and then hold backends only while they use
// them. The client loop and the timer take turns through linkUse: 0 idle
// (the client loop waits for the client), 1 the client loop handles a
// message, 2 the timer closes the connection.

// enterLink is called by the client loop before it handles a message.
func (ss *session) enterLink() {
	if ss.idleTimer == nil {
		return
	}
	for !ss.linkUse.CompareAndSwap(0, 1) {
		time.Sleep(20 * time.Microsecond) // a release is closing the connection
	}
}

// leaveLink is called by the client loop after it handled a message. It
// notes the time rather than resetting the timer, which would cost a
// timer-heap update per message: the timer, armed once, looks at the
// time when it fires and waits out the rest (releaseIdle).
func (ss *session) leaveLink() {
	if ss.idleTimer == nil {
		return
	}
	live := ss.link == linkLive // read while the turn is still the client loop's
	if live {
		ss.linkUsed.Store(int64(time.Since(monoStart)))
	}
	ss.linkUse.Store(0)
	if live && !ss.idleArmed.Load() && ss.idleArmed.CompareAndSwap(false, true) {
		ss.idleTimer.Reset(ss.srv.cfg.Auth.OriginIdleTimeout)
	}
}

// monoStart is the base of linkUsed's monotonic times.
var monoStart = time.Now()

// armIdle arms the idle timer for d.
func (ss *session) armIdle(d time.Duration) {
	ss.idleArmed.Store(true)
	ss.idleTimer.Reset(d)
}

// releaseIdle runs on the session's idle timer. It leaves the timer
// unarmed (idleArmed false) only while the session holds no origin
// connection to release, and says so before the client loop may take its
// turn (linkUse), so that the leaveLink after the link comes back arms it.
func (ss *session) releaseIdle() {
	timeout := ss.srv.cfg.Auth.OriginIdleTimeout
	if idle := time.Since(monoStart) - time.Duration(ss.linkUsed.Load()); idle < timeout {
		ss.armIdle(timeout - idle) // used since it was armed: wait out the rest
		return
	}
	if ss.looped.Load() {
		// An event loop relays the session: it hands it back to the
		// client goroutine first, which then takes turns with the timer.
		if l := ss.loop.Load(); l != nil {
			ss.wantGoroutines.Store(true)
			l.kick(ss)
		}
		ss.armIdle(10 * time.Millisecond)
		return
	}
	if ss.isClosed() {
		return
	}
	if !ss.linkUse.CompareAndSwap(0, 2) {
		ss.armIdle(timeout) // the client loop is handling a message: look again later
		return
	}
	defer ss.linkUse.Store(0)
	if ss.link != linkLive || ss.broken.Load() || ss.endToPool.Load() {
		// No connection, or the session ended and pools it itself.
		ss.idleArmed.Store(false)
		return
	}
	if !ss.pending.idle() || ss.stretchOrigin || ss.state.TxStatus() != 'I' || ss.unreplayable.Load() != nil {
		ss.armIdle(timeout) // in use: look again later
		return
	}
	ss.idleArmed.Store(false)
	ss.poolOrigin()
}

// poolOrigin takes the session's idle origin connection from it and puts
// it in the pool, reset (resetForPool), or closes it when it cannot be
// pooled. It runs where the client loop cannot run (releaseIdle holds
// its turn; the session's end).
func (ss *session) poolOrigin() {
	conn := ss.originConn()
	if ss.originDone != nil {
		// Stop the origin relay without closing the connection: a read
		// deadline in the past ends its wait (originReadFailed:
		// releasing).
		ss.releasing.Store(true)
		_ = conn.SetReadDeadline(time.Now())
		<-ss.originDone
		ss.originDone = nil
	}
	// Only a plain socket is pooled: after a read deadline, a TLS
	// connection's state is not promised to be sound.
	clean := ss.ofr.buffered() == 0 && ss.originIO != nil
	_ = conn.SetReadDeadline(time.Time{})
	ol := &originLogin{conn: conn, rw: ss.originRW, params: ss.state.Params(), pid: ss.originPID, key: ss.originKey, status: 'I'}
	ol.fr = newFrameReader(ol.rw, false)
	ol.fe = pgproto3.NewFrontend(ol.fr, ol.rw)
	ss.unlink()
	ss.srv.metrics.link(linkReleased)
	if !clean || ss.srv.cfg.Auth == nil || !resetForPool(ol) {
		_ = ol.conn.Close()
		return
	}
	ss.srv.pool.put(ss.loginKey, ol)
}

// endsToPool reports, at the client's Terminate, whether the session's
// origin connection goes to the pool for the next session of its login
// key instead of ending with it, as pgbouncer's server connections do: with
// auth.mode proxy (pgaccel can log that session in itself), a pool
// (auth.origin_idle_timeout above 0), and a live link that owes the client
// nothing and holds no transaction. DISCARD ALL (resetForPool) then leaves
// nothing of this session on it. It runs on the client loop.
func (ss *session) endsToPool() bool {
	if ss.clientKey == nil || ss.srv.pool.idleFor <= 0 || ss.link != linkLive || ss.originIO == nil ||
		ss.broken.Load() || ss.releasing.Load() || ss.shuttingDown.Load() || ss.srv.isClosing() ||
		ss.state.TxStatus() != 'I' {
		return false
	}
	if ss.pass != nil {
		return ss.pass.idle()
	}
	return ss.pending.idle() && !ss.stretchOrigin
}

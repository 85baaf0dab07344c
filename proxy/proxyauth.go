package proxy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// ProxyAuth makes the proxy authenticate clients itself (auth.mode
// proxy): SCRAM-SHA-256 against the role's verifier as the origin stores
// it (auth.Cache), then origin connections logged in with the ClientKey
// the client's proof revealed (link.go).
type ProxyAuth struct {
	Verifiers *auth.Cache
	// LoginsPath, when set, keeps what sessions start with (their
	// ParameterStatus set and session info, no secret) on disk, mode
	// 0600, so that logins work after a restart during an outage.
	LoginsPath string
	// FreshFor is how long what a login key's sessions start with is used
	// without asking the origin (auth.cache_ttl): a login after that opens
	// an origin connection and takes the origin's ParameterStatus again,
	// unless the origin cannot be reached.
	FreshFor time.Duration
	// OriginIdleTimeout, when set, closes a session's origin connection
	// once the session has been idle that long (link.go: idle release).
	OriginIdleTimeout time.Duration
}

// start authenticates the client and opens the session's origin link: the
// origin's own exchange relayed (auth.mode origin), or pgaccel's
// (proxyLogin).
func (ss *session) start() error {
	if ss.srv.cfg.Auth == nil || ss.client.startupMsg.Parameters["replication"] != "" {
		return ss.relayLogin()
	}
	return ss.proxyLogin()
}

// relayLogin relays the origin's own authentication exchange and startup.
func (ss *session) relayLogin() error {
	if err := ss.connectOrigin(ss.srv.baseCtx); err != nil {
		return err
	}
	return ss.finishStartup()
}

// proxyLogin verifies the client's SCRAM-SHA-256 proof against the role's
// verifier. A role with an md5 verifier, or none (trust, an expired
// password), is the origin's to authenticate: its exchange is relayed as
// in auth.mode origin. A role the origin does not know gets an exchange
// that fails at the proof, as a wrong password does; so does one whose
// verifier is not kept while the origin cannot be reached.
func (ss *session) proxyLogin() error {
	ctx, cancel := context.WithTimeout(ss.srv.baseCtx, startupTimeout)
	defer cancel()
	a := ss.srv.cfg.Auth
	db, user := ss.state.Database, ss.state.User
	e, stale, err := a.Verifiers.Get(ctx, db, user)
	if err != nil {
		ss.srv.metrics.originFailed()
		var pe *pgconn.PgError
		if errors.As(err, &pe) && !planner.Unreachable(err) {
			ss.log.Warn().Err(err).Msg("the lookup of the role's verifier failed at the origin")
			ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("cannot verify the login at the origin: %s", pe.Message),
				"With auth.mode: proxy, a superuser runs the SQL `pgaccel setup-sql -c pgaccel.yaml` prints, once, at the origin.")
			return errHandled
		}
		// No verifier of this role is kept, and the origin cannot say
		// whether it exists: the login is refused as an unknown role's
		// is, after a mock exchange, so that an outage does not tell
		// which roles logged in lately (those that have a verifier
		// kept) from the rest. The log says why.
		ss.log.Warn().Err(err).Str("role", user).Msg("login refused: no verifier of the role is kept and the origin cannot be reached to fetch it")
		e = auth.Entry{}
	}
	if e.Found && e.Verifier.Kind != auth.SCRAM {
		return ss.relayLogin()
	}
	v := e.Verifier
	if !e.Found {
		v = auth.Verifier{}
	}
	ex := auth.NewExchange(v, ss.srv.mockSecret)
	clientKey, err := ss.scramWithClient(ex)
	if errors.Is(err, auth.ErrFailed) {
		if e.Found && !stale {
			// The password may have changed at the origin: the next login
			// is checked against the verifier it has now.
			_, _, _ = a.Verifiers.Refetch(ctx, db, user)
		}
		ss.srv.metrics.link(linkLoginRefused)
		ss.fatalFrom(passwordFailed(user))
		return errHandled
	}
	if err != nil {
		return err
	}
	ss.origin.clientKey, ss.origin.verifier = clientKey, v
	if a.OriginIdleTimeout > 0 && ss.accel != nil {
		// Armed once the session has started (run), and after each
		// message (leaveLink).
		ss.origin.idleTimer = time.AfterFunc(time.Hour, ss.releaseIdle)
		ss.origin.idleTimer.Stop()
	}
	ss.origin.loginKey = originlink.LoginKeyOf(ss.client.startupMsg.Parameters)
	ss.origin.pristine = true
	if !e.CanConnect && stale {
		ss.fatal(pgdef.InsufficientPrivilege, fmt.Sprintf("permission denied for database %q", db), "")
		return errHandled
	}
	ls, saved := ss.srv.logins.Get(ss.origin.loginKey)
	saved = saved && ls.Info.Valid && ss.accel != nil && e.CanConnect
	if saved && (time.Since(ls.Observed) < a.FreshFor || stale || ss.srv.health.Stalled()) {
		// Seen before: the session starts without the origin, and opens
		// a connection there when a statement needs one. So it does too
		// when the origin has just failed to answer (the verifier's
		// lookup, or another login).
		return ss.startWithout(ls)
	}
	leader := false
	if ss.accel != nil && e.CanConnect && !stale {
		// The first login of the key that needs the origin goes there;
		// the others of a burst wait for it and start without it.
		wait, first := ss.srv.flights.join(ss.origin.loginKey)
		if first {
			leader = true
			defer ss.srv.flights.finish(ss.origin.loginKey)
		} else {
			if !await(wait, ctx.Done()) {
				ss.log.Debug().Msg("the first login of the same role and settings did not end in time; this one logs in at the origin")
			}
			if ls, ok := ss.srv.logins.Get(ss.origin.loginKey); ok && ls.Info.Valid && time.Since(ls.Observed) < a.FreshFor {
				return ss.startWithout(ls)
			}
		}
	}
	if e.CanConnect {
		if ol := ss.srv.pool.Take(ss.origin.loginKey, ss.appName()); ol != nil {
			// An origin connection a session of this login key left
			// (endsToPool, releaseIdle): the session starts on it,
			// without a login at the origin.
			ss.srv.metrics.link(linkReused)
			if leader {
				ss.readInfoAtLogin(ol)
			}
			return ss.startOn(ol)
		}
	}
	lctx := ctx
	if saved {
		// A session that can start without the origin waits for it only
		// briefly: an origin that does not answer (a partition, a frozen
		// host) holds the connection rather than refusing it.
		var cancelWait context.CancelFunc
		lctx, cancelWait = context.WithTimeout(ctx, loginOriginWait)
		defer cancelWait()
	}
	ol, err := ss.srv.loginOrigin(lctx, ss.client.startup, clientKey, v)
	var oe *originError
	switch {
	case err != nil && saved && lctx.Err() != nil && ctx.Err() == nil:
		ss.srv.health.Stalls()
		ss.log.Info().Err(err).Msg("the origin has not answered the login in time; the session starts without it")
		return ss.startWithout(ls)
	case err == nil:
	case errors.As(err, &oe):
		// The origin refused the session (no such database, too many
		// connections, ...): its error, as it sent it.
		ss.fatalFrom(oe.resp)
		return errHandled
	case errors.Is(err, auth.ErrResalted):
		_, _, _ = a.Verifiers.Refetch(ctx, db, user)
		ss.fatalFrom(passwordFailed(user))
		return errHandled
	case errors.Is(err, errOriginAuth):
		ss.fatal(pgdef.FeatureNotSupported, "pgaccel cannot log in to the origin as this role: "+err.Error(), "")
		return errHandled
	default:
		ss.srv.health.Down(err)
		ls, ok := ss.srv.logins.Get(ss.origin.loginKey)
		if !ok {
			// A login of startup parameters not seen before, which start
			// sessions as seen ones do (loginCache.similar).
			ls, ok = ss.srv.logins.Similar(ss.client.startupMsg.Parameters)
		}
		if ok && ss.accel != nil && e.CanConnect {
			ss.log.Info().Err(err).Msg("the origin cannot be reached; the session starts without it")
			return ss.startWithout(ls)
		}
		ss.srv.metrics.originFailed()
		ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("cannot connect to the origin at %s: %v", ss.srv.originAddr(), err),
			"New sessions of a role and settings pgaccel has not seen a session of need the origin. Check that the origin Postgres named by origin.dsn is running and reachable from pgaccel.")
		return errHandled
	}
	ss.srv.health.Up()
	ss.srv.metrics.link(linkLogin)
	if leader {
		ss.readInfoAtLogin(ol)
	}
	return ss.startOn(ol)
}

// readInfoAtLogin reads the session info on ol, the origin connection of
// a login that leads its key's flight (keyFlights), so that the logins
// waiting for it start without the origin, with it.
func (ss *session) readInfoAtLogin(ol *originlink.Login) {
	info, err := readLoginInfo(ol, ss.srv.cfg.DialTimeout)
	if err != nil {
		ss.log.Debug().Err(err).Msg("session info at login failed; it is read before the first accelerated statement")
		return
	}
	ss.acc.info = info
	ss.acc.infoGen++
}

// startOn starts the session on origin connection ol, logged in for it
// or taken from the pool, and greets the client with its parameters.
func (ss *session) startOn(ol *originlink.Login) error {
	ss.installOrigin(ol.Conn, ol.RW, ol.FR, linkLive)
	ss.origin.fe = ol.FE
	ss.origin.pid, ss.origin.key = ol.PID, ol.Key
	if ss.accel != nil {
		ss.srv.logins.PutParams(ss.origin.loginKey, ol.Params)
		if ss.acc.info.Valid && ss.origin.pristine && ss.origin.loginKey != "" {
			ss.srv.logins.PutInfo(ss.origin.loginKey, ss.acc.info)
		}
	}
	return ss.greet(ol.Params, ol.Status)
}

// scramWithClient runs the SCRAM-SHA-256 exchange with the client and
// returns the ClientKey its proof revealed.
func (ss *session) scramWithClient(ex *auth.Exchange) ([]byte, error) {
	ss.client.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := ss.client.be.Flush(); err != nil {
		return nil, err
	}
	if err := ss.client.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return nil, err
	}
	msg, err := ss.client.be.Receive()
	if err != nil {
		return nil, fmt.Errorf("receive SASL response: %w", err) // psql closes to ask for a password
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		ss.fatal(pgdef.ProtocolViolation, fmt.Sprintf("expected SASL response, got message type %T", msg), "")
		return nil, errHandled
	}
	if init.AuthMechanism != "SCRAM-SHA-256" {
		ss.fatal(pgdef.ProtocolViolation, "client selected an invalid SASL authentication mechanism",
			"pgaccel offers SCRAM-SHA-256 only: channel binding (SCRAM-SHA-256-PLUS) cannot pass through a proxy. Connect with channel_binding=disable or prefer.")
		return nil, errHandled
	}
	serverFirst, err := ex.First(init.Data)
	if err != nil {
		hint := ""
		if errors.Is(err, auth.ErrChannelBinding) {
			hint = "Connect with channel_binding=disable or prefer: channel binding cannot pass through a proxy."
		}
		ss.fatal(pgdef.ProtocolViolation, "malformed SCRAM message: "+err.Error(), hint)
		return nil, errHandled
	}
	ss.client.be.Send(&pgproto3.AuthenticationSASLContinue{Data: serverFirst})
	if err := ss.client.be.Flush(); err != nil {
		return nil, err
	}
	if err := ss.client.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return nil, err
	}
	if msg, err = ss.client.be.Receive(); err != nil {
		return nil, fmt.Errorf("receive SASL response: %w", err)
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		ss.fatal(pgdef.ProtocolViolation, fmt.Sprintf("expected SASL response, got message type %T", msg), "")
		return nil, errHandled
	}
	serverFinal, clientKey, err := ex.Final(resp.Data)
	if err != nil {
		if errors.Is(err, auth.ErrFailed) {
			return nil, err
		}
		ss.fatal(pgdef.ProtocolViolation, "malformed SCRAM message: "+err.Error(), "")
		return nil, errHandled
	}
	ss.client.be.Send(&pgproto3.AuthenticationSASLFinal{Data: serverFinal})
	return clientKey, nil
}

// appName is the application_name the session logged in with ("" for
// none), as Postgres sets it from the startup packet.
func (ss *session) appName() string {
	return ss.client.startupMsg.Parameters["application_name"]
}

// startWithout completes a login without the origin, from what an earlier
// session of the same login key started with.
func (ss *session) startWithout(ls originlink.LoginState) error {
	params := ls.Params
	if v, ok := ss.client.startupMsg.Parameters["application_name"]; ok && originlink.PlainAppName(v) {
		params["application_name"] = v
	} else if !ok {
		params["application_name"] = ""
	}
	ss.installNone()
	ss.acc.info = ls.Info.SessionInfo()
	ss.acc.infoGen++
	ss.srv.metrics.link(linkLoginWithout)
	return ss.greet(params, 'I')
}

// greet sends the client the end of a login pgaccel authenticated:
// AuthenticationOk, the ParameterStatus set, the proxy's own
// BackendKeyData and ReadyForQuery.
func (ss *session) greet(params map[string]string, status byte) error {
	ss.client.be.Send(&pgproto3.AuthenticationOk{})
	for _, name := range slices.Sorted(maps.Keys(params)) {
		ss.state.setParam(name, params[name])
		ss.client.be.Send(&pgproto3.ParameterStatus{Name: name, Value: params[name]})
	}
	if !ss.srv.register(ss) {
		ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
		return errHandled
	}
	ss.client.be.Send(&pgproto3.BackendKeyData{ProcessID: ss.client.pid, SecretKey: ss.client.secret})
	ss.state.setTxStatus(status)
	ss.client.be.Send(&pgproto3.ReadyForQuery{TxStatus: status})
	return ss.client.be.Flush()
}

// newMockSecret seeds the salts of mock exchanges: random per process, so
// an unknown role's salt is stable within a run (as a real one is) and
// tells nothing across runs.
func newMockSecret() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

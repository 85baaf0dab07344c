package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/pgdef"
)

// startupTimeout bounds negotiation and authentication, as Postgres's
// authentication_timeout does.
const startupTimeout = 60 * time.Second

// handle runs one client connection from its first byte to its close.
func (s *Server) handle(conn net.Conn) {
	defer func() {
		if r := recover(); r != nil {
			s.sessionPanicked(r, s.log.With().Str("client", conn.RemoteAddr().String()).Logger())
			conn.Close()
		}
	}()
	log := s.log.With().Str("client", conn.RemoteAddr().String()).Logger()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
		_ = tc.SetKeepAlive(true)
	}
	_ = conn.SetDeadline(time.Now().Add(startupTimeout))

	cs, startup, err := s.negotiate(conn)
	if err != nil {
		if !errors.Is(err, errHandled) {
			log.Debug().Err(err).Msg("startup failed")
		}
		cs.conn.Close()
		return
	}
	s.waitAttached()
	ss := newSession(s, cs, startup, log)
	ss.run()
}

// waitAttached waits, at most attachWait, until the stored accelerations
// are attached (Config.Attached); at once when they are.
func (s *Server) waitAttached() {
	g := s.cfg.Attached
	if g == nil {
		return
	}
	select {
	case <-g:
		return
	default:
	}
	t := time.NewTimer(attachWait)
	defer t.Stop()
	select {
	case <-g:
	case <-t.C:
	case <-s.baseCtx.Done():
	}
}

// sessionPanicked reports a panic recovered from a session, on its
// goroutine or on an event loop.
func (s *Server) sessionPanicked(r any, log zerolog.Logger) {
	s.metrics.panicked()
	if s.panicHook != nil {
		s.panicHook(r)
	}
	log.Error().Str("panic", fmt.Sprint(r)).Str("stack", string(debug.Stack())).Msg("session panicked; closing it")
}

// errHandled marks a startup that ended as it should (a cancel request, or
// an error already reported to the client).
var errHandled = errors.New("handled")

// clientConn is a client connection as negotiation leaves it.
type clientConn struct {
	conn net.Conn
	// startup is the client's StartupMessage as it came, for the origin.
	startup []byte
	raw     *wire.RawIO // the socket's raw I/O, nil for TLS
	w       io.Writer   // raw, or conn for TLS
	fr      *wire.FrameReader
	be      *pgproto3.Backend // reads through fr
}

func newClientConn(conn net.Conn) clientConn {
	rw := wire.FastIO(conn)
	cs := clientConn{conn: conn, w: rw, fr: wire.NewFrameReader(rw, true)}
	cs.raw, _ = rw.(*wire.RawIO)
	cs.be = pgproto3.NewBackend(cs.fr, rw)
	return cs
}

// Startup-phase packet codes and limits, as Postgres has them.
const (
	cancelRequestCode    = 80877102
	gssEncRequestCode    = 80877104
	maxStartupPacketBody = 10000 // MAX_STARTUP_PACKET_LENGTH
)

// negotiate answers SSLRequest and GSSENCRequest packets until a
// StartupMessage or CancelRequest arrives. Every failure is what Postgres
// does with the same bytes (ProcessStartupPacket), which the startup
// transcript tests check against the origin: a packet that cannot be read
// (bad length, the client gone, Terminate where the StartupMessage would
// be) and a CancelRequest are answered with silence and a close; a second
// SSLRequest or GSSENCRequest with the FATAL for an unknown protocol; and
// a StartupMessage Postgres would refuse (protocol major version other
// than 3, a bad layout) is sent to the origin as it came, whose answer
// (in the protocol version it asked for) goes back as the origin sent it
// (rejectByOrigin). Refusals of a well-formed protocol 3 StartupMessage
// (no user, no such database, a bad option) are the origin's too: the
// session relays its error (connectOrigin).
func (s *Server) negotiate(conn net.Conn) (clientConn, *pgproto3.StartupMessage, error) {
	cs := newClientConn(conn)
	sslDone, gssDone := false, false
	for {
		pkt, err := readStartupPacket(cs.fr)
		if err != nil {
			return cs, nil, fmt.Errorf("receive startup: %w", err)
		}
		code := binary.BigEndian.Uint32(pkt[4:8])
		switch {
		case code == sslRequestCode && !sslDone:
			sslDone = true
			if s.cfg.TLS == nil {
				if _, err := cs.conn.Write([]byte{'N'}); err != nil {
					return cs, nil, err
				}
				continue
			}
			if _, err := cs.conn.Write([]byte{'S'}); err != nil {
				return cs, nil, err
			}
			tc := tls.Server(cs.conn, s.cfg.TLS)
			if err := tc.Handshake(); err != nil {
				return cs, nil, fmt.Errorf("TLS handshake: %w", err)
			}
			// Bytes the client sent before the handshake were plaintext
			// and are dropped with the old reader (CVE-2021-23214).
			cs = newClientConn(tc)
		case code == gssEncRequestCode && !gssDone:
			gssDone = true
			if _, err := cs.conn.Write([]byte{'N'}); err != nil {
				return cs, nil, err
			}
		case code == cancelRequestCode:
			if len(pkt) >= 12 {
				s.handleCancel(binary.BigEndian.Uint32(pkt[8:12]), pkt[12:])
			}
			return cs, nil, errHandled
		case code == sslRequestCode || code == gssEncRequestCode:
			// A second one is taken as a StartupMessage of protocol
			// 1234.5679 or 1234.5680, as Postgres takes it.
			cs.be.Send(&pgproto3.ErrorResponse{Severity: pgdef.SeverityFatal, SeverityUnlocalized: pgdef.SeverityFatal, Code: pgdef.FeatureNotSupported,
				Message: fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", code>>16, code&0xffff)})
			_ = cs.be.Flush()
			return cs, nil, errHandled
		default:
			m, ok := parseStartup(pkt)
			if !ok {
				s.rejectByOrigin(cs, pkt)
				return cs, nil, errHandled
			}
			cs.startup = pkt
			cs.be.SetMaxBodyLen(s.cfg.MaxMessageBytes)
			// Typed messages from here on.
			cs.fr.Typed(s.cfg.MaxMessageBytes)
			return cs, m, nil
		}
	}
}

// errStartupLength: a startup packet's length is one Postgres does not
// read (it logs "invalid length of startup packet" and closes).
var errStartupLength = errors.New("invalid length of startup packet")

// readStartupPacket reads one untyped startup-phase packet, length word
// included.
func readStartupPacket(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:])))
	if n-4 < 4 || n-4 > maxStartupPacketBody {
		return nil, fmt.Errorf("%w: %d", errStartupLength, n)
	}
	pkt := make([]byte, n)
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(r, pkt[4:]); err != nil {
		return nil, err
	}
	return pkt, nil
}

// parseStartup decodes a StartupMessage the way Postgres does: protocol
// major version 3 (any minor version: the origin answers a newer one with
// NegotiateProtocolVersion), name/value pairs up to an empty name, which
// must be the packet's last byte; a later pair of the same name wins. It
// reports false for a packet Postgres refuses for its version or layout.
func parseStartup(pkt []byte) (*pgproto3.StartupMessage, bool) {
	version := binary.BigEndian.Uint32(pkt[4:8])
	if version>>16 != 3 {
		return nil, false
	}
	b := pkt[8:]
	cstring := func(at int) string {
		if i := bytes.IndexByte(b[at:], 0); i >= 0 {
			return string(b[at : at+i])
		}
		return string(b[at:])
	}
	m := &pgproto3.StartupMessage{ProtocolVersion: version, Parameters: map[string]string{}}
	off := 0
	for off < len(b) {
		name := cstring(off)
		if name == "" {
			break
		}
		valOff := off + len(name) + 1
		if valOff >= len(b) {
			break
		}
		val := cstring(valOff)
		m.Parameters[name] = val
		off = valOff + len(val) + 1
	}
	return m, off == len(b)-1
}

// rejectByOrigin sends a startup packet Postgres refuses to the origin as
// it came and relays the origin's answer as it came (for a protocol 2
// client, a protocol 2 error), until the origin closes the connection.
func (s *Server) rejectByOrigin(cs clientConn, pkt []byte) {
	ctx, cancel := context.WithTimeout(s.baseCtx, startupTimeout)
	defer cancel()
	oc, err := s.dialOrigin(ctx)
	if err != nil {
		s.metrics.originFailed()
		cs.be.Send(pgdef.Error(pgdef.SeverityFatal, pgdef.ConnectionFailure, fmt.Sprintf("cannot connect to the origin at %s: %v", s.originAddr(), err), ""))
		_ = cs.be.Flush()
		return
	}
	defer oc.Close()
	_ = oc.SetDeadline(time.Now().Add(startupTimeout))
	if _, err := oc.Write(pkt); err != nil {
		return
	}
	_, _ = io.Copy(cs.conn, oc)
}

// handleCancel maps a client's CancelRequest to the origin backend of the
// session it names. Unknown keys are ignored, as Postgres ignores them.
func (s *Server) handleCancel(pid uint32, secret []byte) {
	ss := s.lookupForCancel(pid, secret)
	if ss == nil {
		s.log.Debug().Uint32("pid", pid).Msg("cancel request for unknown session")
		return
	}
	ss.cancelQuery()
}

// connectOrigin dials the origin, sends the client's StartupMessage and
// relays authentication until the origin accepts or refuses the client.
// On return without error the origin has sent AuthenticationOk.
func (ss *session) connectOrigin(ctx context.Context) error {
	oc, err := ss.srv.dialOrigin(ctx)
	if err != nil {
		ss.srv.metrics.originFailed()
		ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("cannot connect to the origin at %s: %v", ss.srv.originAddr(), err),
			"New sessions need the origin to authenticate. Check that the origin Postgres named by origin.dsn is running and reachable from pgaccel.")
		return fmt.Errorf("dial origin: %w", err)
	}
	ss.installOrigin(oc, nil, nil, linkLive)
	_ = oc.SetDeadline(time.Now().Add(startupTimeout))
	// As the client sent it: pgproto3 would encode only what it decoded.
	ss.origin.fe.Send(rawFrame(ss.client.startup))
	if err := ss.origin.fe.Flush(); err != nil {
		ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("lost the connection to the origin during startup: %v", err), "")
		return err
	}

	for {
		msg, err := ss.origin.fe.Receive()
		if err != nil {
			ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("lost the connection to the origin during authentication: %v", err), "")
			return fmt.Errorf("receive auth: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationOk:
			ss.client.be.Send(m)
			_ = ss.client.be.SetAuthType(pgproto3.AuthTypeOk)
			return nil
		case *pgproto3.AuthenticationCleartextPassword:
			if err := ss.relayAuthStep(m, pgproto3.AuthTypeCleartextPassword); err != nil {
				return err
			}
		case *pgproto3.AuthenticationMD5Password:
			if err := ss.relayAuthStep(m, pgproto3.AuthTypeMD5Password); err != nil {
				return err
			}
		case *pgproto3.AuthenticationSASL:
			mechs := slices.DeleteFunc(slices.Clone(m.AuthMechanisms), func(s string) bool { return s == "SCRAM-SHA-256-PLUS" })
			if len(mechs) == 0 {
				ss.fatal(pgdef.FeatureNotSupported, "the origin only offers SCRAM-SHA-256-PLUS (channel binding), which cannot pass through a proxy",
					"Allow SCRAM-SHA-256 without channel binding for connections from pgaccel, and connect with channel_binding=disable or prefer.")
				return errHandled
			}
			if err := ss.relayAuthStep(&pgproto3.AuthenticationSASL{AuthMechanisms: mechs}, pgproto3.AuthTypeSASL); err != nil {
				return err
			}
		case *pgproto3.AuthenticationSASLContinue:
			if err := ss.relayAuthStep(m, pgproto3.AuthTypeSASLContinue); err != nil {
				return err
			}
		case *pgproto3.AuthenticationSASLFinal:
			// No answer from the client; AuthenticationOk follows.
			ss.client.be.Send(m)
		case *pgproto3.NegotiateProtocolVersion:
			ss.client.be.Send(m)
		case *pgproto3.ErrorResponse:
			// The origin refused the client: wrong password, no such
			// database, too many connections. Relay it verbatim.
			ss.client.be.Send(m)
			_ = ss.client.be.Flush()
			return errHandled
		case *pgproto3.AuthenticationGSS, *pgproto3.AuthenticationGSSContinue:
			ss.fatal(pgdef.FeatureNotSupported, "GSSAPI authentication cannot be relayed by pgaccel",
				"Use scram-sha-256 or md5 for connections from pgaccel in the origin's pg_hba.conf.")
			return errHandled
		default:
			ss.fatal(pgdef.ProtocolViolation, fmt.Sprintf("unexpected message %T from the origin during authentication", msg), "")
			return fmt.Errorf("unexpected auth message %T", msg)
		}
	}
}

// relayAuthStep sends an authentication request to the client and relays
// its one answer to the origin.
func (ss *session) relayAuthStep(req pgproto3.BackendMessage, authType uint32) error {
	ss.client.be.Send(req)
	if err := ss.client.be.Flush(); err != nil {
		return fmt.Errorf("send auth request: %w", err)
	}
	if err := ss.client.be.SetAuthType(authType); err != nil {
		return err
	}
	msg, err := ss.client.be.Receive()
	if err != nil {
		// Clients such as psql close the connection to ask for a password
		// and reconnect; that is not an error worth reporting.
		return fmt.Errorf("receive auth answer: %w", err)
	}
	switch msg.(type) {
	case *pgproto3.PasswordMessage, *pgproto3.SASLInitialResponse, *pgproto3.SASLResponse:
	default:
		ss.fatal(pgdef.ProtocolViolation, fmt.Sprintf("expected a password response, got %T", msg), "")
		return errHandled
	}
	ss.origin.fe.Send(msg)
	if err := ss.origin.fe.Flush(); err != nil {
		ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("lost the connection to the origin during authentication: %v", err), "")
		return err
	}
	return nil
}

// finishStartup relays what the origin sends between AuthenticationOk and
// the first ReadyForQuery, swapping in the proxy's own secret key in
// BackendKeyData (register).
func (ss *session) finishStartup() error {
	sentKey := false
	for {
		msg, err := ss.origin.fe.Receive()
		if err != nil {
			ss.fatal(pgdef.ConnectionFailure, fmt.Sprintf("lost the connection to the origin during startup: %v", err), "")
			return fmt.Errorf("receive startup: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.ParameterStatus:
			ss.state.setParam(m.Name, m.Value)
			ss.client.be.Send(m)
		case *pgproto3.BackendKeyData:
			ss.origin.pid = m.ProcessID
			ss.origin.key = slices.Clone(m.SecretKey)
			if !ss.srv.register(ss) {
				ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
				return errHandled
			}
			sentKey = true
			ss.client.be.Send(&pgproto3.BackendKeyData{ProcessID: ss.client.pid, SecretKey: ss.client.secret})
		case *pgproto3.ReadyForQuery:
			if !sentKey {
				// An origin that sends no key (some poolers) still gets
				// a proxy session; cancels then cannot reach it.
				if !ss.srv.register(ss) {
					ss.fatal(pgdef.AdminShutdown, "terminating connection due to administrator command", "")
					return errHandled
				}
				ss.client.be.Send(&pgproto3.BackendKeyData{ProcessID: ss.client.pid, SecretKey: ss.client.secret})
			}
			ss.state.setTxStatus(m.TxStatus)
			ss.client.be.Send(m)
			return ss.client.be.Flush()
		case *pgproto3.ErrorResponse:
			ss.client.be.Send(m)
			_ = ss.client.be.Flush()
			return errHandled
		default:
			ss.client.be.Send(msg)
		}
	}
}

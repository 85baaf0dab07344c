package proxy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// errOriginAuth is an origin that asks for a password pgaccel cannot give.
var errOriginAuth = errors.New("the origin asks for a cleartext or md5 password, which pgaccel cannot answer with a ClientKey; use scram-sha-256 (or trust) for connections from pgaccel")

// loginOrigin opens a connection to the origin and logs in with startup
// (the client's StartupMessage as it came) and, when the origin asks for
// SCRAM-SHA-256, the ClientKey recovered from the client's login.
// ErrorResponses of the origin come back as *originError.
func (s *Server) loginOrigin(ctx context.Context, startup, clientKey []byte, v auth.Verifier) (*originlink.Login, error) {
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
	orw := wire.FastIO(oc)
	fr := wire.NewFrameReader(orw, false)
	fe := pgproto3.NewFrontend(fr, orw)
	fe.Send(rawFrame(startup))
	if err := fe.Flush(); err != nil {
		return nil, err
	}
	var ex *auth.ClientExchange
	ol := &originlink.Login{Conn: oc, RW: orw, FR: fr, FE: fe, Params: map[string]string{}}
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
			ol.Params[m.Name] = m.Value
		case *pgproto3.BackendKeyData:
			ol.PID, ol.Key = m.ProcessID, slices.Clone(m.SecretKey)
		case *pgproto3.ReadyForQuery:
			ol.Status = m.TxStatus
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

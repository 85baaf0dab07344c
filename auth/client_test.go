package auth

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// originLogin logs in to the test Postgres as role with clientKey over the
// wire protocol, returning the first error.
func originLogin(ctx context.Context, t *testing.T, role string, clientKey []byte, v Verifier) error {
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fe := pgproto3.NewFrontend(conn, conn)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": role, "database": srv.Database}})
	if err := fe.Flush(); err != nil {
		return err
	}
	ex := NewClientExchange(clientKey, v)
	for {
		msg, err := fe.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationSASL:
			first, err := ex.First()
			if err != nil {
				return err
			}
			fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: Mechanism, Data: first})
			fe.Flush()
		case *pgproto3.AuthenticationSASLContinue:
			final, err := ex.Final(m.Data)
			if err != nil {
				return err
			}
			fe.Send(&pgproto3.SASLResponse{Data: final})
			fe.Flush()
		case *pgproto3.AuthenticationSASLFinal:
			if err := ex.Verify(m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return &pgconn.PgError{Code: m.Code, Message: m.Message}
		case *pgproto3.ReadyForQuery:
			return nil
		}
	}
}

// TestClientExchange_LogsInToPostgresWithTheClientKey: the ClientKey a
// client's login yields opens an origin session as that role, without
// the password; after the password is set again (re-salted), it does not.
func TestClientExchange_LogsInToPostgresWithTheClientKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lookup := roleAndLookup(ctx, t, "auth_passthrough", "pass-pw", "auth_lookup4")
	e, err := Lookup(ctx, lookup, "auth_passthrough", srv.Database)
	if err != nil || e.Verifier.Kind != SCRAM {
		t.Fatalf("lookup: %+v %v", e, err)
	}
	// A client logs in to the proxy's exchange; the proxy keeps its key.
	addr, keys := fakeServer(t, e.Verifier)
	conn, err := pgconn.Connect(ctx, "postgres://auth_passthrough:pass-pw@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	key := <-keys
	if err := originLogin(ctx, t, "auth_passthrough", key, e.Verifier); err != nil {
		t.Fatalf("origin login with the ClientKey: %v", err)
	}
	wrong := append([]byte(nil), key...)
	wrong[0] ^= 1
	if err := originLogin(ctx, t, "auth_passthrough", wrong, e.Verifier); err == nil {
		t.Fatal("a wrong key logged in")
	}
	if err := srv.Exec(ctx, "ALTER ROLE auth_passthrough PASSWORD 'pass-pw'"); err != nil {
		t.Fatal(err)
	}
	if err := originLogin(ctx, t, "auth_passthrough", key, e.Verifier); !errors.Is(err, ErrResalted) {
		t.Fatalf("after the password was set again: %v, want ErrResalted", err)
	}
}

// FuzzClientExchange: no server message makes the client side panic.
func FuzzClientExchange(f *testing.F) {
	f.Add([]byte("r=NONCEabc,s=c2FsdA==,i=4096"), []byte("v=AAAA"))
	f.Add([]byte("r=,s=,i="), []byte(""))
	v := Verifier{Kind: SCRAM, Iterations: 4096, Salt: []byte("salt"), StoredKey: make([]byte, 32), ServerKey: make([]byte, 32)}
	f.Fuzz(func(t *testing.T, serverFirst, serverFinal []byte) {
		ex := NewClientExchange(make([]byte, 32), v)
		if _, err := ex.First(); err != nil {
			t.Fatal(err)
		}
		msg := []byte(string(serverFirst))
		if len(msg) > 2 && string(msg[:2]) == "r=" {
			msg = append([]byte("r="+ex.nonce), msg[2:]...)
		}
		if _, err := ex.Final(msg); err == nil {
			_ = ex.Verify(serverFinal)
		}
	})
}

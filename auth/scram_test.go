package auth

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// scramVerifier builds the verifier Postgres stores for password.
func scramVerifier(t testing.TB, password string, salt []byte, iter int) (Verifier, []byte) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, 32)
	if err != nil {
		t.Fatal(err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return Verifier{Kind: SCRAM, Iterations: iter, Salt: salt, StoredKey: stored[:], ServerKey: hmacSHA256(salted, "Server Key")}, clientKey
}

// fakeServer accepts one client and authenticates it with an Exchange
// over v, as the proxy will; it reports the ClientKey (nil on failure).
func fakeServer(t *testing.T, v Verifier) (addr string, keys <-chan []byte) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	out := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			out <- nil
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		be := pgproto3.NewBackend(conn, conn)
		var key []byte
		defer func() { out <- key }()
		for {
			msg, err := be.ReceiveStartupMessage()
			if err != nil {
				return
			}
			if _, ok := msg.(*pgproto3.SSLRequest); ok {
				conn.Write([]byte("N"))
				continue
			}
			break
		}
		fail := func(code, msg string) {
			be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: code, Message: msg})
			be.Flush()
		}
		ex := NewExchange(v, []byte("mock"))
		be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{Mechanism}})
		be.Flush()
		be.SetAuthType(pgproto3.AuthTypeSASL)
		m, err := be.Receive()
		initial, ok := m.(*pgproto3.SASLInitialResponse)
		if err != nil || !ok || initial.AuthMechanism != Mechanism {
			fail("08P01", "expected SASLInitialResponse")
			return
		}
		first, err := ex.First(initial.Data)
		if err != nil {
			fail("08P01", err.Error())
			return
		}
		be.Send(&pgproto3.AuthenticationSASLContinue{Data: first})
		be.Flush()
		be.SetAuthType(pgproto3.AuthTypeSASLContinue)
		m, err = be.Receive()
		resp, ok := m.(*pgproto3.SASLResponse)
		if err != nil || !ok {
			fail("08P01", "expected SASLResponse")
			return
		}
		final, clientKey, err := ex.Final(resp.Data)
		if errors.Is(err, ErrFailed) {
			fail("28P01", `password authentication failed for user "alice"`)
			return
		} else if err != nil {
			fail("08P01", err.Error())
			return
		}
		be.Send(&pgproto3.AuthenticationSASLFinal{Data: final})
		be.Send(&pgproto3.AuthenticationOk{})
		be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 2}})
		be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		be.Flush()
		key = clientKey
		be.Receive() // Terminate
	}()
	return ln.Addr().String(), out
}

// TestExchange_WithPgxsClient runs pgx's own SCRAM client against the
// exchange: the right password logs in (and pgx checks the server's
// signature), yielding the ClientKey the password derives; a wrong one is
// 28P01; an unknown role's mock exchange fails the same way.
func TestExchange_WithPgxsClient(t *testing.T) {
	v, wantKey := scramVerifier(t, "alice-secret", []byte("0123456789abcdef"), 4096)
	for _, c := range []struct {
		name, password string
		v              Verifier
		ok             bool
	}{
		{"right password", "alice-secret", v, true},
		{"wrong password", "alice-wrong", v, false},
		{"unknown role", "alice-secret", Verifier{}, false},
		{"md5 role", "alice-secret", Verifier{Kind: MD5, MD5: strings.Repeat("0", 32)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			addr, keys := fakeServer(t, c.v)
			conn, err := pgconn.Connect(ctx, "postgres://alice:"+c.password+"@"+addr+"/db?sslmode=disable")
			if c.ok {
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				conn.Close(ctx)
				if key := <-keys; !hmac.Equal(key, wantKey) {
					t.Fatalf("ClientKey %x, want %x", key, wantKey)
				}
				return
			}
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
				t.Fatalf("connect: %v, want 28P01", err)
			}
			if key := <-keys; key != nil {
				t.Fatalf("a failed exchange gave a ClientKey")
			}
		})
	}
}

// TestExchange_PostgresVerifier logs in with pgx against the exchange
// over the verifier a real Postgres computed for a password (read through
// the lookup function): what the origin would accept, the proxy accepts.
func TestExchange_PostgresVerifier(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lookup := roleAndLookup(ctx, t, "auth_scram_user", "pw-from-postgres", "auth_lookup2")
	e, err := Lookup(ctx, lookup, "auth_scram_user", srv.Database)
	if err != nil || e.Verifier.Kind != SCRAM {
		t.Fatalf("lookup: %+v, %v", e, err)
	}
	addr, keys := fakeServer(t, e.Verifier)
	conn, err := pgconn.Connect(ctx, "postgres://alice:pw-from-postgres@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatalf("connect with Postgres's verifier: %v", err)
	}
	conn.Close(ctx)
	if <-keys == nil {
		t.Fatal("no ClientKey")
	}
}

// TestExchange_RefusesChannelBindingAndJunk: a client that requires
// channel binding is told so; malformed messages are errors.
func TestExchange_RefusesChannelBindingAndJunk(t *testing.T) {
	v, _ := scramVerifier(t, "x", []byte("salt"), 4096)
	if _, err := NewExchange(v, nil).First([]byte("p=tls-server-end-point,,n=,r=abc")); !errors.Is(err, ErrChannelBinding) {
		t.Fatalf("channel binding: %v", err)
	}
	for _, m := range []string{"", "n", "n,,", "n,a=admin,n=,r=abc", "n,,n=,r=", "n,,r=abc", "x,,n=,r=abc", "n,,m=ext,n=,r=abc", "n,,n=,r=a,b"} {
		if _, err := NewExchange(v, nil).First([]byte(m)); err == nil && m != "n,,n=,r=a,b" {
			t.Errorf("First(%q): no error", m)
		}
	}
	ex := NewExchange(v, nil)
	if _, _, err := ex.Final([]byte("c=biws,r=x,p=AAAA")); err == nil {
		t.Error("Final before First: no error")
	}
	if _, err := ex.First([]byte("n,,n=,r=abc")); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"", "c=biws", "c=biws,r=wrong,p=" + strings.Repeat("A", 44), "c=eSws,r=" + ex.nonce + ",p=" + strings.Repeat("A", 44)} {
		if _, _, err := ex.Final([]byte(m)); err == nil || errors.Is(err, ErrFailed) {
			t.Errorf("Final(%q): %v, want a malformed-message error", m, err)
		}
	}
}

// FuzzExchange: no message makes the exchange panic, and no proof
// passes against a verifier whose keys nobody knows.
func FuzzExchange(f *testing.F) {
	f.Add([]byte("n,,n=,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Add([]byte("y,,n=user,r=0123"), []byte("c=eSws,r=0123x,p="+strings.Repeat("A", 43)+"="))
	f.Add([]byte("p=x,,n=,r=a"), []byte(""))
	v := Verifier{Kind: SCRAM, Iterations: 4096, Salt: []byte("salt"), StoredKey: make([]byte, 32), ServerKey: make([]byte, 32)}
	f.Fuzz(func(t *testing.T, first, final []byte) {
		ex := NewExchange(v, nil)
		if _, err := ex.First(first); err != nil {
			return
		}
		// The nonce is random: splice it in where the fuzzer wrote r=.
		msg := strings.Replace(string(final), "r=", "r="+ex.nonce, 1)
		if _, key, err := ex.Final([]byte(msg)); err == nil || key != nil {
			t.Fatalf("a proof passed: %q", msg)
		}
	})
}

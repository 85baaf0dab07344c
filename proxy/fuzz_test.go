package proxy

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/rs/zerolog"
)

// fakeOrigin accepts every startup and answers every Query and Sync with
// ReadyForQuery. It exists only so the fuzzer can reach the relay phase
// quickly; the integration tests use a real Postgres.
func fakeOrigin(t testing.TB) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				be := pgproto3.NewBackend(c, c)
				if _, err := be.ReceiveStartupMessage(); err != nil {
					return
				}
				be.Send(&pgproto3.AuthenticationOk{})
				be.Send(&pgproto3.ParameterStatus{Name: "TimeZone", Value: "UTC"})
				be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}})
				be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
				_ = be.Flush()
				for {
					msg, err := be.Receive()
					if err != nil {
						return
					}
					switch msg.(type) {
					case *pgproto3.Query, *pgproto3.Sync:
						be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
						_ = be.Flush()
					case *pgproto3.Terminate:
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln
}

func startupBytes(params map[string]string) []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params}).Encode(nil)
	return b
}

// FuzzSession feeds arbitrary client bytes through negotiation, startup
// and the relay. The proxy must never panic, whatever the bytes.
func FuzzSession(f *testing.F) {
	start := startupBytes(map[string]string{"user": "u", "database": "d"})
	var ssl [8]byte
	binary.BigEndian.PutUint32(ssl[:4], 8)
	binary.BigEndian.PutUint32(ssl[4:], 80877103)
	cancel, _ := (&pgproto3.CancelRequest{ProcessID: 7, SecretKey: []byte{1, 2, 3, 4}}).Encode(nil)
	q, _ := (&pgproto3.Query{String: "SELECT 1"}).Encode(nil)
	parse, _ := (&pgproto3.Parse{Name: "s", Query: "SELECT $1", ParameterOIDs: []uint32{23}}).Encode(nil)
	bind, _ := (&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("1")}}).Encode(nil)
	exec, _ := (&pgproto3.Execute{}).Encode(nil)
	sync, _ := (&pgproto3.Sync{}).Encode(nil)
	copyData, _ := (&pgproto3.CopyData{Data: []byte("1\t2\n")}).Encode(nil)
	term, _ := (&pgproto3.Terminate{}).Encode(nil)
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	f.Add(start)
	f.Add(cat(ssl[:], start, q, term))
	f.Add(cancel)
	f.Add(cat(start, parse, bind, exec, sync, q))
	f.Add(cat(start, copyData, q, []byte{'~', 0, 0, 0, 4}))
	f.Add(cat(start, []byte{'Q', 0xff, 0xff, 0xff, 0xff}))
	f.Add([]byte{0, 0, 0, 8, 0, 3, 0, 0})

	f.Fuzz(runOne)
}

var (
	fuzzSrv *Server
	fuzzLn  net.Listener
)

// runOne sends data as a client connection's bytes, half-closes, and waits
// for the proxy to end the session.
func runOne(t *testing.T, data []byte) {
	if fuzzSrv == nil {
		ln := fakeOrigin(t)
		fuzzSrv = NewServer(Config{
			Origin:          &pgconn.Config{Host: "127.0.0.1", Port: uint16(ln.Addr().(*net.TCPAddr).Port)},
			MaxMessageBytes: 1 << 16,
			Logger:          zerolog.Nop(),
		})
		var err error
		if fuzzLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	srv := fuzzSrv
	srv.panicHook = func(r any) { t.Errorf("session panicked: %v", r) }
	client, err := net.Dial("tcp", fuzzLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := fuzzLn.Accept()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.handle(server)
	}()
	_ = client.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = client.Write(data)
	_ = client.(*net.TCPConn).CloseWrite()
	_, _ = io.Copy(io.Discard, client)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("session did not end after the client hung up")
	}
}

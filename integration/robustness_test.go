package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy"
)

// rawClient is a hand-driven protocol client for what drivers never send.
type rawClient struct {
	conn net.Conn
	fe   *pgproto3.Frontend
}

func dialRaw(t *testing.T, p *testProxy, user string) *rawClient {
	t.Helper()
	return dialRawAddr(t, p.ln.Addr().String(), user)
}

// dialRawAddr is dialRaw to the proxy listening at addr.
func dialRawAddr(t *testing.T, addr, user string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	rc := &rawClient{conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	rc.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user, "database": origin.Database}})
	if err := rc.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := rc.fe.Receive()
		if err != nil {
			t.Fatalf("startup: %v", err)
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationOk:
		case *pgproto3.ReadyForQuery:
			return rc
		case *pgproto3.ErrorResponse:
			t.Fatalf("startup error: %s", m.Message)
		}
	}
}

// until reads messages until one of type T arrives, returning all of them.
func (rc *rawClient) readAll(t *testing.T) []pgproto3.BackendMessage {
	t.Helper()
	var out []pgproto3.BackendMessage
	for {
		msg, err := rc.fe.Receive()
		if err != nil {
			return out
		}
		// Messages are only valid until the next Receive: keep a copy.
		buf, _ := msg.Encode(nil)
		out = append(out, decodeCopy(t, buf))
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return out
		}
	}
}

func decodeCopy(t *testing.T, buf []byte) pgproto3.BackendMessage {
	fe := pgproto3.NewFrontend(strings.NewReader(string(buf)), io.Discard)
	m, err := fe.Receive()
	if err != nil {
		t.Fatalf("decode copy: %v", err)
	}
	return m
}

func TestProxy_OversizedMessage(t *testing.T) {
	p := startProxy(t, func(c *proxy.Config) { c.MaxMessageBytes = 1 << 20 })
	ctx := ctxT(t)
	c := connect(t, p.DSN(appUser, appPass))
	_, err := c.Exec(ctx, "SELECT '"+strings.Repeat("x", 2<<20)+"'")
	if err == nil {
		t.Fatal("2 MiB query passed a 1 MiB limit")
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "54000" || !strings.Contains(pe.Message, "exceeds the limit") {
		// pgx may report the write or the close first; the error must
		// at least not be a crash of the proxy.
		t.Logf("oversized message error: %v", err)
	}
	// Deterministic: a header announcing 2 MiB gets 54000 before any body.
	rc := dialRaw(t, p, "trustuser")
	if _, err := rc.conn.Write([]byte{'Q', 0, 0x20, 0, 0}); err != nil {
		t.Fatal(err)
	}
	var code string
	for {
		msg, err := rc.fe.Receive()
		if err != nil {
			break
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			code = e.Code
		}
	}
	if code != "54000" {
		t.Fatalf("oversized header: got code %q, want 54000", code)
	}
	// The proxy is still serving.
	c2 := connect(t, p.DSN(appUser, appPass))
	if _, err := c2.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

// Malformed client messages. A message the proxy cannot frame (unknown
// type, impossible length) ends the session with a FATAL 08P01 from the
// proxy. A well-framed message with a malformed body is relayed as it is,
// in a pass-through session and in one with an acceleration (whose decoder
// refuses it): the origin answers it with its own 08P01 ERROR and the
// session goes on, as on a direct connection.
func TestProxy_MalformedMessages(t *testing.T) {
	p := startProxy(t, nil)
	framing := map[string][]byte{
		"unknown type":    {'~', 0, 0, 0, 4},
		"negative length": {'Q', 0xff, 0xff, 0xff, 0xf0},
	}
	// The Bind is followed by a Sync, to which an extended-protocol error
	// skips.
	body := map[string][]byte{
		"bind too short":    {'B', 0, 0, 0, 6, 0, 1, 'S', 0, 0, 0, 4},
		"query without nul": {'Q', 0, 0, 0, 7, 'a', 'b', 'c'},
	}
	query, _ := (&pgproto3.Query{String: "SELECT 42"}).Encode(nil)
	fatalThenClose := func(t *testing.T, rc *rawClient, raw []byte) {
		t.Helper()
		if _, err := rc.conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		var gotErr *pgproto3.ErrorResponse
		for {
			msg, err := rc.fe.Receive()
			if err != nil {
				break
			}
			if e, ok := msg.(*pgproto3.ErrorResponse); ok {
				gotErr = &pgproto3.ErrorResponse{Severity: e.Severity, Code: e.Code, Message: e.Message}
			}
		}
		if gotErr == nil || gotErr.Code != "08P01" || gotErr.Severity != "FATAL" {
			t.Fatalf("want a FATAL 08P01 ErrorResponse then close, got %+v", gotErr)
		}
	}
	for name, raw := range framing {
		t.Run(name, func(t *testing.T) {
			fatalThenClose(t, dialRaw(t, p, "trustuser"), raw)
		})
	}
	originError := func(t *testing.T, rc *rawClient, raw []byte) {
		t.Helper()
		if _, err := rc.conn.Write(raw); err != nil {
			t.Fatal(err)
		}
		var gotErr *pgproto3.ErrorResponse
		for _, m := range rc.readAll(t) {
			if e, ok := m.(*pgproto3.ErrorResponse); ok {
				gotErr = e
			}
		}
		if gotErr == nil || gotErr.Code != "08P01" || gotErr.Severity != "ERROR" {
			t.Fatalf("want the origin's 08P01 ERROR, got %+v", gotErr)
		}
		if _, err := rc.conn.Write(query); err != nil {
			t.Fatal(err)
		}
		answer := ""
		for _, m := range rc.readAll(t) {
			if d, ok := m.(*pgproto3.DataRow); ok {
				answer = string(d.Values[0])
			}
		}
		if answer != "42" {
			t.Fatalf("after the error: got %q, want 42", answer)
		}
	}
	for name, raw := range body {
		t.Run("pass-through "+name, func(t *testing.T) {
			originError(t, dialRaw(t, p, "trustuser"), raw)
		})
	}
	mustExec(t, "CREATE TABLE IF NOT EXISTS robust_accel (id int PRIMARY KEY)")
	a := startApp(t, "  - from: postgres:public.robust_accel\n")
	for name, raw := range body {
		t.Run("accelerated "+name, func(t *testing.T) {
			originError(t, dialRawAddr(t, a.Addr(), "trustuser"), raw)
		})
	}
	// Garbage instead of a startup packet.
	conn, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], 8)
	binary.BigEndian.PutUint32(hdr[4:], 12345678)
	_, _ = conn.Write(hdr[:])
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, _ := io.ReadAll(conn)
	if len(resp) == 0 || resp[0] != 'E' {
		t.Fatalf("bad startup packet: want an ErrorResponse, got %q", resp)
	}
	// Still serving.
	c := connect(t, p.DSN(appUser, appPass))
	if _, err := c.Exec(ctxT(t), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}

func TestProxy_FunctionCall(t *testing.T) {
	p := startProxy(t, nil)
	// int4pl(int4, int4) is OID 177 in every Postgres.
	call := func(rc *rawClient) []byte {
		rc.fe.Send(&pgproto3.FunctionCall{Function: 177, ArgFormatCodes: []uint16{1}, Arguments: [][]byte{{0, 0, 0, 40}, {0, 0, 0, 2}}, ResultFormatCode: 1})
		if err := rc.fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var result []byte
		for _, m := range rc.readAll(t) {
			if r, ok := m.(*pgproto3.FunctionCallResponse); ok {
				result = r.Result
			}
		}
		return result
	}
	got := call(dialRaw(t, p, "trustuser"))
	if len(got) != 4 || binary.BigEndian.Uint32(got) != 42 {
		t.Fatalf("int4pl(40, 2) through the proxy = %v", got)
	}
}

func TestProxy_GracefulShutdown(t *testing.T) {
	p := startProxy(t, func(c *proxy.Config) { c.ShutdownGrace = 20 * time.Second })
	ctx := ctxT(t)
	busy := connect(t, p.DSN(appUser, appPass))
	idle := connect(t, p.DSN(appUser, appPass))
	res := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "SELECT pg_sleep(1.5)")
		res <- err
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-res; err != nil {
		t.Fatalf("in-flight statement did not finish: %v", err)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatal("shutdown waited for the full grace period")
	}
	if _, err := idle.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("idle session still open after shutdown")
	}
	if _, err := net.DialTimeout("tcp", p.ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still accepting after shutdown")
	}
}

func TestProxy_ShutdownCancelsAfterGrace(t *testing.T) {
	p := startProxy(t, func(c *proxy.Config) { c.ShutdownGrace = 500 * time.Millisecond })
	ctx := ctxT(t)
	busy := connect(t, p.DSN(appUser, appPass))
	res := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "SELECT pg_sleep(60)")
		res <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if err := p.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	select {
	case err := <-res:
		if err == nil {
			t.Fatal("60 s statement finished during a 0.5 s grace")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("statement still running after shutdown")
	}
	// The origin backend was cancelled, not left sleeping.
	d := connect(t, origin.SuperDSN())
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := d.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND state = 'active'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("origin backend still sleeping after shutdown")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package proxy

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// pipeLogin is an originLogin over one end of a pipe whose other end is
// drained (what the pool writes on closing: Terminate).
func pipeLogin(t *testing.T) (*originLogin, <-chan struct{}) {
	t.Helper()
	a, b := net.Pipe()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, b)
		close(closed)
	}()
	fr := wire.NewFrameReader(a, false)
	return &originLogin{conn: a, rw: a, fr: fr, fe: pgproto3.NewFrontend(fr, a), params: map[string]string{"application_name": ""}}, closed
}

// TestOriginPool: connections are taken by key, the most recent first;
// one left unused for idleFor is closed; a full pool closes what it is
// given; closeAll empties it.
func TestOriginPool(t *testing.T) {
	p := &originPool{idleFor: 100 * time.Millisecond}
	a, _ := pipeLogin(t)
	b, _ := pipeLogin(t)
	p.put("k", a)
	p.put("k", b)
	if p.take("other", "") != nil {
		t.Fatal("took another key's connection")
	}
	if got := p.take("k", ""); got != b {
		t.Fatal("not the most recent first")
	}
	if got := p.take("k", ""); got != a {
		t.Fatal("second take")
	}
	if p.take("k", "") != nil || p.size() != 0 {
		t.Fatal("pool not empty")
	}

	c, closedC := pipeLogin(t)
	p.put("k", c)
	waitClosed(t, closedC, "an idle pooled connection was not closed after idleFor")
	if p.size() != 0 || p.take("k", "") != nil {
		t.Fatal("an expired connection is still pooled")
	}

	big := &originPool{idleFor: time.Minute}
	for range poolMaxIdle {
		ol, _ := pipeLogin(t)
		big.put("k", ol)
	}
	extra, closedExtra := pipeLogin(t)
	big.put("k", extra)
	waitClosed(t, closedExtra, "a full pool kept a connection")
	if big.size() != poolMaxIdle {
		t.Fatalf("size %d", big.size())
	}
	big.closeAll()
	if big.size() != 0 {
		t.Fatal("closeAll left connections")
	}
	// A session that ends after the shutdown closed the pool closes its
	// connection itself.
	late, closedLate := pipeLogin(t)
	big.put("k", late)
	waitClosed(t, closedLate, "a closed pool kept a connection")
	if big.size() != 0 {
		t.Fatal("a closed pool took a connection")
	}
}

// waitClosed fails the test with msg unless closed is closed within 5s.
func waitClosed(t *testing.T, closed <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

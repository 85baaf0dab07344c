package originlink

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/wire"
)

// pipeLogin is an Login over one end of a pipe whose other end is
// drained (what the pool writes on closing: Terminate).
func pipeLogin(t *testing.T) (*Login, <-chan struct{}) {
	t.Helper()
	a, b := net.Pipe()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, b)
		close(closed)
	}()
	fr := wire.NewFrameReader(a, false)
	return &Login{Conn: a, RW: a, FR: fr, FE: pgproto3.NewFrontend(fr, a), Params: map[string]string{"application_name": ""}}, closed
}

// TestOriginPool: connections are taken by key, the most recent first;
// one left unused for idleFor is closed; a full pool closes what it is
// given; closeAll empties it.
func TestOriginPool(t *testing.T) {
	p := &Pool{IdleFor: 100 * time.Millisecond}
	a, _ := pipeLogin(t)
	b, _ := pipeLogin(t)
	p.Put("k", a)
	p.Put("k", b)
	if p.Take("other", "") != nil {
		t.Fatal("took another key's connection")
	}
	if got := p.Take("k", ""); got != b {
		t.Fatal("not the most recent first")
	}
	if got := p.Take("k", ""); got != a {
		t.Fatal("second take")
	}
	if p.Take("k", "") != nil || p.Size() != 0 {
		t.Fatal("pool not empty")
	}

	c, closedC := pipeLogin(t)
	p.Put("k", c)
	waitClosed(t, closedC, "an idle pooled connection was not closed after idleFor")
	if p.Size() != 0 || p.Take("k", "") != nil {
		t.Fatal("an expired connection is still pooled")
	}

	big := &Pool{IdleFor: time.Minute}
	for range poolMaxIdle {
		ol, _ := pipeLogin(t)
		big.Put("k", ol)
	}
	extra, closedExtra := pipeLogin(t)
	big.Put("k", extra)
	waitClosed(t, closedExtra, "a full pool kept a connection")
	if big.Size() != poolMaxIdle {
		t.Fatalf("size %d", big.Size())
	}
	big.CloseAll()
	if big.Size() != 0 {
		t.Fatal("closeAll left connections")
	}
	// A session that ends after the shutdown closed the pool closes its
	// connection itself.
	late, closedLate := pipeLogin(t)
	big.Put("k", late)
	waitClosed(t, closedLate, "a closed pool kept a connection")
	if big.Size() != 0 {
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

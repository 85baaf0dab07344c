package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	other := <-accepted
	if other == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { dialed.Close(); other.Close() })
	return dialed, other
}

// In loop mode reads and writes never wait: an empty socket says
// ErrWouldBlock (after a short read, without asking the kernel again until
// the loop says the socket is readable), and a write the socket cannot
// take is held and written first once the socket is back with goroutines,
// in order with what follows.
func TestRawIO_LoopModeNeverWaits(t *testing.T) {
	a, peer := tcpPair(t)
	r := FastIO(a).(*RawIO)
	if err := r.ToLoop(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := r.Read(buf); err != ErrWouldBlock {
		t.Fatalf("read of an empty socket: %v, want ErrWouldBlock", err)
	}
	if _, err := peer.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	n, err := r.Read(buf)
	for err == ErrWouldBlock && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		n, err = r.Read(buf)
	}
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("read %q, %v; want ping", buf[:n], err)
	}
	if _, err := peer.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := r.Read(buf); err != ErrWouldBlock {
		t.Fatalf("read after a short read: %v, want ErrWouldBlock until readable", err)
	}
	r.Readable()
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "more" {
		t.Fatalf("read after readable: %q, %v; want more", buf[:n], err)
	}

	// The peer does not read: writes fill the socket, then are held.
	chunk := make([]byte, 64<<10)
	var sent []byte
	for i := 0; !r.IsBlocked(); i++ {
		if i > 4096 {
			t.Fatal("256 MiB written to a socket nobody reads")
		}
		for j := range chunk {
			chunk[j] = byte(i + j)
		}
		if _, err := r.Write(chunk); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, chunk...)
	}
	tail := []byte("after the held bytes")
	if _, err := r.Write(tail); err != nil {
		t.Fatal(err)
	}
	sent = append(sent, tail...)

	if err := r.ToGoroutine(); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(sent))))
		got <- b
	}()
	if err := r.FlushHeld(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, sent) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(b), len(sent))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v, want net.ErrClosed", err)
	}
}

// The relay's socket reads and writes allocate nothing, and a read waits
// for data the peer has not sent yet.
func TestRawIO_ReadWriteWithoutAllocations(t *testing.T) {
	dialed, other := tcpPair(t)
	a, b := FastIO(dialed), FastIO(other)
	if _, ok := a.(*RawIO); !ok {
		t.Fatalf("FastIO of a TCP connection is %T, want *RawIO", a)
	}
	msg := []byte("hello, origin")
	buf := make([]byte, 64)
	roundTrip := func() {
		if _, err := a.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(b, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
		if string(buf[:len(msg)]) != string(msg) {
			t.Fatalf("read %q, want %q", buf[:len(msg)], msg)
		}
	}
	roundTrip()
	if allocs := testing.AllocsPerRun(200, roundTrip); allocs != 0 {
		t.Errorf("a write and a read allocate %.1f times, want 0", allocs)
	}

	// A read blocks until the peer writes, then returns what it wrote.
	got := make(chan string, 1)
	go func() {
		n, err := b.Read(buf)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	if _, err := a.Write([]byte("later")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "later" {
		t.Fatalf("read %q, want %q", s, "later")
	}
	dialed.Close()
	if _, err := b.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
}

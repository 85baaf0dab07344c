package proxy

import (
	"io"
	"net"
	"testing"
)

// The relay's socket reads and writes allocate nothing, and a read waits
// for data the peer has not sent yet.
func TestRawIO_ReadWriteWithoutAllocations(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	other, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer other.Close()

	a, b := fastIO(dialed), fastIO(other)
	if _, ok := a.(*rawIO); !ok {
		t.Fatalf("fastIO of a TCP connection is %T, want *rawIO", a)
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

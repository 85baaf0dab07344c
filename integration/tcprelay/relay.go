// Package tcprelay is a loopback TCP relay for tests that need a network
// path to fail part-way: it forwards every connection to a target, counts
// the bytes each way, and can be told to stop forwarding after a number of
// bytes in one direction (the transfer then hangs, as it does when a peer
// or a network stops answering), or to hold the answer to one request
// (HoldResponseTo: the target receives and applies the request, the client
// never hears back), until Release cuts the held connections.
package tcprelay

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Relay forwards connections accepted on Addr to a target address.
type Relay struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	// stall budgets: bytes still forwarded in each direction before the
	// relay holds (-1: no limit).
	upLeft, downLeft int64
	// holdOn: client-to-target bytes whose connection's target-to-client
	// traffic is held from then on (HoldResponseTo), nil for none.
	holdOn      []byte
	held        chan struct{} // closed by Release
	stalled     chan struct{} // closed when a direction first holds
	stalledOnce *sync.Once

	up, down atomic.Int64
	wg       sync.WaitGroup
}

// Start listens on a free loopback port and relays to target.
func Start(target string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{ln: ln, target: target, conns: map[net.Conn]struct{}{}, upLeft: -1, downLeft: -1}
	r.reset()
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

func (r *Relay) reset() {
	r.held = make(chan struct{})
	r.stalled = make(chan struct{})
	r.stalledOnce = new(sync.Once)
}

// Addr is the relay's host:port.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Bytes are the bytes forwarded so far: up (client to target) and down.
func (r *Relay) Bytes() (up, down int64) { return r.up.Load(), r.down.Load() }

// StallUpAfter holds client-to-target traffic once n more bytes went
// through; StallDownAfter the same for target-to-client traffic.
func (r *Relay) StallUpAfter(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.upLeft = n
}

func (r *Relay) StallDownAfter(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.downLeft = n
}

// HoldResponseTo holds the target-to-client traffic of the next
// connection whose client-to-target traffic carries pattern (a request
// line, say "PUT /bucket/metadata.json"): the request goes through whole,
// the target answers it, and the answer is held until Release, as when a
// network loses the way back. Only that connection holds; others, new
// ones too, go on. Stalled is closed once the answer's first bytes are
// held.
func (r *Relay) HoldResponseTo(pattern []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.holdOn = bytes.Clone(pattern)
}

// Stalled is closed once a direction holds.
func (r *Relay) Stalled() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stalled
}

// Release cuts every open connection (held or not) and forwards freely
// from then on.
func (r *Relay) Release() {
	r.mu.Lock()
	close(r.held)
	r.reset()
	r.upLeft, r.downLeft, r.holdOn = -1, -1, nil
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
}

// Close stops the relay and cuts its connections, held ones too.
func (r *Relay) Close() error {
	err := r.ln.Close()
	r.Release()
	r.wg.Wait()
	return err
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		t, err := net.Dial("tcp", r.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		r.mu.Lock()
		r.conns[c], r.conns[t] = struct{}{}, struct{}{}
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			var both sync.WaitGroup
			both.Add(2)
			l := &link{}
			go func() { defer both.Done(); r.pipe(t, c, true, l) }()
			go func() { defer both.Done(); r.pipe(c, t, false, l) }()
			both.Wait()
			_ = c.Close()
			_ = t.Close()
			r.mu.Lock()
			delete(r.conns, c)
			delete(r.conns, t)
			r.mu.Unlock()
		}()
	}
}

// link is one relayed connection's state.
type link struct {
	// holdDown: its target-to-client traffic is held (HoldResponseTo).
	holdDown atomic.Bool
	// tail: the last client-to-target bytes, for a pattern that spans two
	// reads.
	tail []byte
}

// pipe copies src to dst in one direction, holding when the budget of
// that direction runs out (or, target to client, when l holds). At src's
// end it half-closes dst; on an error it cuts both (the other direction
// then ends too).
func (r *Relay) pipe(dst, src net.Conn, up bool, l *link) {
	cut := func() { _ = dst.Close(); _ = src.Close() }
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p := buf[:n]
		if up && n > 0 {
			r.watchFor(l, p)
		}
		for len(p) > 0 {
			var allow int64
			var held chan struct{}
			if !up && l.holdDown.Load() {
				held = r.hold()
			} else {
				allow, held = r.take(int64(len(p)), up)
			}
			if allow == 0 {
				<-held // until Release, which cuts the connection
				cut()
				return
			}
			if _, werr := dst.Write(p[:allow]); werr != nil {
				cut()
				return
			}
			if up {
				r.up.Add(allow)
			} else {
				r.down.Add(allow)
			}
			p = p[allow:]
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
				_ = tc.CloseWrite()
				return
			}
			cut()
			return
		}
	}
}

// watchFor arms l's hold when the client-to-target bytes p (with the
// ones before) carry the pattern of HoldResponseTo, before p is forwarded:
// the answer cannot slip through first.
func (r *Relay) watchFor(l *link, p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holdOn == nil {
		l.tail = nil
		return
	}
	seen := append(l.tail, p...)
	if bytes.Contains(seen, r.holdOn) {
		r.holdOn, l.tail = nil, nil
		l.holdDown.Store(true)
		return
	}
	keep := min(len(seen), len(r.holdOn)-1)
	l.tail = bytes.Clone(seen[len(seen)-keep:])
}

// hold marks the relay stalled and returns the channel Release closes.
func (r *Relay) hold() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stalledOnce.Do(func() { close(r.stalled) })
	return r.held
}

// take grants up to n bytes of a direction's budget; with none left it
// marks the relay stalled and returns the channel Release closes.
func (r *Relay) take(n int64, up bool) (int64, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	left := &r.downLeft
	if up {
		left = &r.upLeft
	}
	if *left < 0 {
		return n, nil
	}
	if *left == 0 {
		r.stalledOnce.Do(func() { close(r.stalled) })
		return 0, r.held
	}
	g := min(n, *left)
	*left -= g
	return g, nil
}

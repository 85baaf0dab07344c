package originlink

import (
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Pool keeps origin connections that sessions released (idle
// release, link.go) or left when they ended idle (endsToPool) for the next
// session of the same login key (database, role, startup parameters) that
// needs the origin: it takes one instead of logging in, at its login or
// its first statement that needs the origin, and sets its own state up on
// it (replay). A connection
// enters the pool reset (DISCARD ALL: no prepared statement, temporary
// table, setting, lock or LISTEN of the session that used it) and leaves
// it after idleFor unused, or when the pool holds poolMaxIdle.
type Pool struct {
	mu      sync.Mutex
	idle    map[string][]*pooledConn
	n       int
	IdleFor time.Duration
	Gauge   prometheus.Gauge // pgaccel_origin_pool_connections; nil: none
	closed  bool             // closeAll ran: the server is shutting down
}

// resize changes the pool's size by d; p.mu is held.
func (p *Pool) resize(d int) {
	p.n += d
	if p.Gauge != nil {
		p.Gauge.Set(float64(p.n))
	}
}

// poolMaxIdle bounds the connections the pool keeps, over all keys.
const poolMaxIdle = 64

// pooledConn is an origin connection at rest: logged in, reset, idle.
type pooledConn struct {
	ol    *Login
	timer *time.Timer
}

// put keeps ol for key, or closes it when the pool is full.
func (p *Pool) Put(key string, ol *Login) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n >= poolMaxIdle || p.IdleFor <= 0 || p.closed {
		_ = ol.Conn.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*pooledConn{}
	}
	pc := &pooledConn{ol: ol}
	pc.timer = time.AfterFunc(p.IdleFor, func() { p.expire(key, pc) })
	p.idle[key] = append(p.idle[key], pc)
	p.resize(1)
}

// take returns a pooled connection of key, the most recently used first
// (its backend's caches are warmest), or nil, with application_name set to
// appName, the value the taking session logged in with: the key leaves a
// plain application_name out (loginKeyOf), so the connection may carry the
// one of the session that left it. One the origin has closed meanwhile (it
// restarted, or ended the backend), or that cannot take the name, is
// closed and passed over.
func (p *Pool) Take(key, appName string) *Login {
	for {
		ol := p.pop(key)
		if ol == nil {
			return nil
		}
		if connAlive(ol.Conn) && ol.SetAppName(appName) == nil {
			return ol
		}
		_ = ol.Conn.Close()
	}
}

// connAlive reports whether an idle connection is still open with nothing
// to read: a peek that would wait. End of file, an error, or bytes the
// origin sent unasked (a FATAL as it ended the backend) mean it is not.
func connAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, errno := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errno == syscall.EAGAIN
		return true // never wait
	})
	return err == nil && alive
}

// pop takes the most recently pooled connection of key, or nil.
func (p *Pool) pop(key string) *Login {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[key]
	if len(list) == 0 {
		return nil
	}
	pc := list[len(list)-1]
	p.idle[key] = list[:len(list)-1]
	if len(p.idle[key]) == 0 {
		delete(p.idle, key)
	}
	p.resize(-1)
	pc.timer.Stop()
	return pc.ol
}

// expire closes pc if it is still in the pool.
func (p *Pool) expire(key string, pc *pooledConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[key]
	for i, c := range list {
		if c == pc {
			p.idle[key] = append(list[:i:i], list[i+1:]...)
			if len(p.idle[key]) == 0 {
				delete(p.idle, key)
			}
			p.resize(-1)
			SendTerminate(pc.ol)
			return
		}
	}
}

// closeAll closes every pooled connection (Server.Shutdown).
func (p *Pool) CloseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true // a session that ends after this closes its own
	for key, list := range p.idle {
		for _, pc := range list {
			pc.timer.Stop()
			SendTerminate(pc.ol)
		}
		delete(p.idle, key)
	}
	p.resize(-p.n)
}

// size is how many connections the pool holds.
func (p *Pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

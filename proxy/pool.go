package proxy

import (
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/prometheus/client_golang/prometheus"
)

// originPool keeps origin connections that sessions released (idle
// release, link.go) or left when they ended idle (endsToPool) for the next
// session of the same login key (database, role, startup parameters) that
// needs the origin: it takes one instead of logging in, at its login or
// its first statement that needs the origin, and sets its own state up on
// it (replay). A connection
// enters the pool reset (DISCARD ALL: no prepared statement, temporary
// table, setting, lock or LISTEN of the session that used it) and leaves
// it after idleFor unused, or when the pool holds poolMaxIdle.
type originPool struct {
	mu      sync.Mutex
	idle    map[string][]*pooledConn
	n       int
	idleFor time.Duration
	gauge   prometheus.Gauge // pgaccel_origin_pool_connections; nil: none
	closed  bool             // closeAll ran: the server is shutting down
}

// resize changes the pool's size by d; p.mu is held.
func (p *originPool) resize(d int) {
	p.n += d
	if p.gauge != nil {
		p.gauge.Set(float64(p.n))
	}
}

// poolMaxIdle bounds the connections the pool keeps, over all keys.
const poolMaxIdle = 64

// pooledConn is an origin connection at rest: logged in, reset, idle.
type pooledConn struct {
	ol    *originLogin
	timer *time.Timer
}

// put keeps ol for key, or closes it when the pool is full.
func (p *originPool) put(key string, ol *originLogin) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n >= poolMaxIdle || p.idleFor <= 0 || p.closed {
		_ = ol.conn.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*pooledConn{}
	}
	pc := &pooledConn{ol: ol}
	pc.timer = time.AfterFunc(p.idleFor, func() { p.expire(key, pc) })
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
func (p *originPool) take(key, appName string) *originLogin {
	for {
		ol := p.pop(key)
		if ol == nil {
			return nil
		}
		if connAlive(ol.conn) && ol.setAppName(appName) == nil {
			return ol
		}
		_ = ol.conn.Close()
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
func (p *originPool) pop(key string) *originLogin {
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
func (p *originPool) expire(key string, pc *pooledConn) {
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
			sendTerminate(pc.ol)
			return
		}
	}
}

// closeAll closes every pooled connection (Server.Shutdown).
func (p *originPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true // a session that ends after this closes its own
	for key, list := range p.idle {
		for _, pc := range list {
			pc.timer.Stop()
			sendTerminate(pc.ol)
		}
		delete(p.idle, key)
	}
	p.resize(-p.n)
}

// size is how many connections the pool holds.
func (p *originPool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// sendTerminate ends a connection cleanly, so the origin logs no broken
// client.
func sendTerminate(ol *originLogin) {
	_ = ol.conn.SetDeadline(time.Now().Add(time.Second))
	ol.fe.Send(&pgproto3.Terminate{})
	_ = ol.fe.Flush()
	_ = ol.conn.Close()
}

// setAppName sets application_name on the connection to v (take). A
// bound parameter, so v needs no quoting.
func (ol *originLogin) setAppName(v string) error {
	if got, ok := ol.params["application_name"]; (ok && got == v) || !originlink.PlainAppName(v) {
		return nil // the same, or another one is in the key
	}
	return ol.exchange(&pgproto3.Parse{Query: "SELECT pg_catalog.set_config('application_name', $1, false)"},
		&pgproto3.Bind{Parameters: [][]byte{[]byte(v)}}, &pgproto3.Execute{}, &pgproto3.Sync{})
}

// resetForPool makes a released connection fit for another session of its
// login key: DISCARD ALL, answered with ReadyForQuery idle. It reports
// false (and closes the connection) when the origin does not answer so.
func resetForPool(ol *originLogin) bool {
	if err := ol.exchange(&pgproto3.Query{String: "DISCARD ALL"}); err != nil {
		_ = ol.conn.Close()
		return false
	}
	return true
}

// exchange sends msgs, which end in one ReadyForQuery, on an idle pooled
// or released connection and reads the answers up to it, within 5s: an
// ErrorResponse, or a status other than idle, is an error. The
// ParameterStatus values the origin reports update ol.params.
func (ol *originLogin) exchange(msgs ...pgproto3.FrontendMessage) error {
	_ = ol.conn.SetDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = ol.conn.SetDeadline(time.Time{}) }()
	for _, m := range msgs {
		ol.fe.Send(m)
	}
	if err := ol.fe.Flush(); err != nil {
		return err
	}
	var failed error
	for {
		msg, err := ol.fe.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.ParameterStatus:
			ol.params[m.Name] = m.Value
		case *pgproto3.ErrorResponse:
			failed = fmt.Errorf("origin: %s (SQLSTATE %s)", m.Message, m.Code)
		case *pgproto3.ReadyForQuery:
			if failed == nil && m.TxStatus != 'I' {
				failed = fmt.Errorf("transaction status %q, want idle", m.TxStatus)
			}
			return failed
		}
	}
}

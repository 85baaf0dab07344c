package proxy

import (
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// originPool keeps origin connections that sessions released (idle
// release, link.go) for the next session of the same login key (database,
// role, startup parameters) that needs the origin: it takes one instead
// of logging in, and sets its own state up on it (replay). A connection
// enters the pool reset (DISCARD ALL: no prepared statement, temporary
// table, setting, lock or LISTEN of the session that used it) and leaves
// it after idleFor unused, or when the pool holds poolMaxIdle.
type originPool struct {
	mu      sync.Mutex
	idle    map[string][]*pooledConn
	n       int
	idleFor time.Duration
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
	if p.n >= poolMaxIdle || p.idleFor <= 0 {
		_ = ol.conn.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*pooledConn{}
	}
	pc := &pooledConn{ol: ol}
	pc.timer = time.AfterFunc(p.idleFor, func() { p.expire(key, pc) })
	p.idle[key] = append(p.idle[key], pc)
	p.n++
}

// take returns a pooled connection of key, the most recently used first
// (its backend's caches are warmest), or nil.
func (p *originPool) take(key string) *originLogin {
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
	p.n--
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
			p.n--
			sendTerminate(pc.ol)
			return
		}
	}
}

// closeAll closes every pooled connection (Server.Shutdown).
func (p *originPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, list := range p.idle {
		for _, pc := range list {
			pc.timer.Stop()
			sendTerminate(pc.ol)
		}
		delete(p.idle, key)
	}
	p.n = 0
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

// resetForPool makes a released connection fit for another session of its
// login key: DISCARD ALL, answered with ReadyForQuery idle; the
// ParameterStatus values it reports update ol.params. It reports false
// (and closes the connection) when the origin does not answer so.
func resetForPool(ol *originLogin) bool {
	_ = ol.conn.SetDeadline(time.Now().Add(5 * time.Second))
	ol.fe.Send(&pgproto3.Query{String: "DISCARD ALL"})
	if err := ol.fe.Flush(); err != nil {
		_ = ol.conn.Close()
		return false
	}
	ok := false
	for {
		msg, err := ol.fe.Receive()
		if err != nil {
			_ = ol.conn.Close()
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.ParameterStatus:
			ol.params[m.Name] = m.Value
		case *pgproto3.CommandComplete:
			ok = true
		case *pgproto3.ErrorResponse:
			ok = false
		case *pgproto3.ReadyForQuery:
			if !ok || m.TxStatus != 'I' {
				_ = ol.conn.Close()
				return false
			}
			_ = ol.conn.SetDeadline(time.Time{})
			return true
		}
	}
}

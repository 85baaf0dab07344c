package proxy

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/pgaccel/pgaccel/proxy/wire"
	"github.com/rs/zerolog"
)

// Config is what a Server needs; cmd/pgaccel builds it from catalog.Config.
type Config struct {
	// Origin is the parsed origin.dsn. Only its host, port and TLS settings
	// are used for client sessions: users authenticate as themselves.
	Origin *pgconn.Config
	// TLS, when set, lets clients upgrade with SSLRequest.
	TLS *tls.Config
	// MaxMessageBytes bounds a single client message body (0: 64 MiB).
	MaxMessageBytes int
	// ShutdownGrace is how long Shutdown lets busy statements finish.
	ShutdownGrace time.Duration
	// DialTimeout bounds the connect to the origin (0: 10s).
	DialTimeout time.Duration
	// Accel, when set, lets the session answer reads from the
	// acceleration; nil relays everything to the origin.
	Accel *Accel
	// Metrics receives query counts and timings; nil disables them.
	Metrics *Metrics
	// Auth, when set, makes the proxy authenticate clients itself
	// (auth.mode proxy); nil relays every login to the origin.
	Auth *ProxyAuth
	// EventLoops is how many event loops relay sessions (wire.Loop,
	// handoff.go), as server.event_loops says: nil picks one per two
	// CPUs the Go runtime uses (GOMAXPROCS/2, at least one), 0 relays
	// every session on goroutines.
	EventLoops *int
	// Attached, when set, is closed once the stored accelerations are
	// attached after start (refresh.Runner.WaitAttached). A session
	// opened before then waits for it, at most attachWait, before its
	// login: a pgaccel restarted during an outage has nothing else to
	// answer with, and one restarted with the origin up answers the
	// first sessions' reads from the acceleration too.
	Attached <-chan struct{}
	Logger   zerolog.Logger
}

// attachWait bounds how long a new session waits for Config.Attached.
const attachWait = 5 * time.Second

// defaultMaxMessageBytes bounds a client message when the config does not.
const defaultMaxMessageBytes = 64 << 20

// Server accepts client connections and runs one session per client.
type Server struct {
	cfg Config
	log zerolog.Logger

	mu sync.Mutex
	ln net.Listener
	// sessions holds every session past authentication under the key its
	// client was given: a process id (the origin backend's, see register)
	// and the proxy's own secret.
	sessions map[cancelKey]*session
	closing  bool

	nextPID atomic.Uint32
	wg      sync.WaitGroup
	baseCtx context.Context
	cancel  context.CancelFunc
	stopped chan struct{}

	describes describeCache
	// underived holds the description shapes (derivedKey) whose
	// description the planner got wrong (checkDerived); underivedCount
	// counts them, and past maxUnderived none is added.
	underived      sync.Map
	underivedCount atomic.Int64
	metrics        *Metrics

	// With Auth: the login cache (originlink.Logins), the seed of mock SCRAM
	// salts, and what sessions know of the origin's reachability.
	logins     originlink.Logins
	mockSecret []byte
	health     originlink.Health
	pool       originlink.Pool
	flights    keyFlights // logins that need the origin (flights.go)
	describing keyFlights // descriptions asked of the origin by sessions without a connection

	loopsOnce sync.Once
	loops     []*wire.Loop
	nextLoop  atomic.Uint32

	// panicHook, when set (by tests), sees every recovered session panic.
	panicHook func(any)
}

// NewServer returns a Server that is not yet listening.
func NewServer(cfg Config) *Server {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = defaultMaxMessageBytes
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		sessions: make(map[cancelKey]*session),
		baseCtx:  ctx,
		cancel:   cancel,
		stopped:  make(chan struct{}),
		metrics:  cfg.Metrics,
	}
	s.health.DialTimeout = cfg.DialTimeout
	if cfg.Auth != nil {
		s.mockSecret = newMockSecret()
		s.logins.Path = cfg.Auth.LoginsPath
		s.pool.IdleFor = cfg.Auth.OriginIdleTimeout
		if cfg.Metrics != nil {
			s.pool.Gauge = cfg.Metrics.pooled
		}
		if err := s.logins.Load(); err != nil {
			s.log.Warn().Err(err).Msg("the saved session starts cannot be read; starting without them")
		}
	}
	// The proxy's own process ids (for sessions whose origin sends no
	// BackendKeyData) start away from 0 and above every Linux pid
	// (at most 2^22), so they never look like an origin backend's.
	var b [4]byte
	_, _ = rand.Read(b[:])
	s.nextPID.Store(binary.BigEndian.Uint32(b[:])&0x3fffffff | 0x40000000)
	return s
}

// Serve accepts connections on ln until Shutdown is called or ln fails.
// It returns nil after a Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return errors.New("serve: server is shut down")
	}
	s.ln = ln
	s.mu.Unlock()
	s.log.Info().Str("addr", ln.Addr().String()).Msg("accepting connections")

	var tempDelay time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				tempDelay = min(max(2*tempDelay, 5*time.Millisecond), time.Second)
				s.log.Warn().Err(err).Dur("retry_in", tempDelay).Msg("accept failed")
				time.Sleep(tempDelay)
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		tempDelay = 0
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(conn)
		}()
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Shutdown stops accepting, closes idle sessions at once, lets busy ones
// finish their statement until the grace period ends, then cancels their
// origin queries and closes everything. It returns when every session
// goroutine has exited or ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		if s.ln != nil {
			_ = s.ln.Close()
		}
	}
	sessions := s.sessionList()
	s.mu.Unlock()

	for _, ss := range sessions {
		ss.beginShutdown()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		s.stopLoops()
		// Sessions that were releasing a connection have ended too.
		s.pool.CloseAll()
		close(done)
	}()

	grace := time.NewTimer(s.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	s.mu.Lock()
	sessions = s.sessionList()
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.forceClose()
	}
	s.cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loopFor picks the event loop for a session, or nil when it must run on
// goroutines: a socket is TLS, loops are off, or it has an acceleration
// and no origin connection (handoff.go).
func (s *Server) loopFor(ss *session) *wire.Loop {
	if ss.client.raw == nil || ss.origin.raw == nil || ss.pass == nil && (ss.origin.state != linkLive || ss.origin.broken.Load()) {
		return nil
	}
	loops := s.eventLoops()
	if len(loops) == 0 {
		return nil
	}
	return loops[int(s.nextLoop.Add(1))%len(loops)]
}

// noLoops reports whether sessions always run on goroutines.
func (s *Server) noLoops() bool { return len(s.eventLoops()) == 0 }

// eventLoops starts the event loops on first use, and returns them.
func (s *Server) eventLoops() []*wire.Loop {
	s.loopsOnce.Do(func() {
		var n int
		if s.cfg.EventLoops != nil {
			n = *s.cfg.EventLoops
		} else {
			// One per two CPUs: two loops on 2 CPUs cost 20 % more CPU
			// per transaction than one and relayed pgbench -S at 8
			// clients no faster (bench/passthrough, 5 rounds).
			n = max(1, runtime.GOMAXPROCS(0)/2)
		}
		for range n {
			l, err := wire.NewLoop()
			if err != nil {
				s.log.Warn().Err(err).Msg("no event loop; sessions run on goroutines")
				return
			}
			s.loops = append(s.loops, l)
		}
	})
	return s.loops
}

// stopLoops ends the event loops once their sessions have.
func (s *Server) stopLoops() {
	s.loopsOnce.Do(func() {}) // no loop starts after this
	for _, l := range s.loops {
		l.Stop()
	}
}

func (s *Server) sessionList() []*session {
	out := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// cancelKey is what a client's CancelRequest names a session by.
type cancelKey struct {
	pid    uint32
	secret [4]byte
}

// register gives ss the key its client gets in BackendKeyData: the process
// id of its origin backend when the origin sent one (origin.key set), so
// that pg_backend_pid(), pg_stat_activity and the driver agree, else one of
// the proxy's own; and always a secret of the proxy's own, so that cancels
// come to the proxy and are mapped (handleCancel).
func (s *Server) register(ss *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	for {
		var k cancelKey
		_, _ = rand.Read(k.secret[:])
		if ss.origin.key != nil && s.cfg.Auth == nil {
			k.pid = ss.origin.pid
		} else {
			k.pid = s.nextPID.Add(1)&0x3fffffff | 0x40000000
		}
		if _, taken := s.sessions[k]; !taken {
			ss.client.pid, ss.client.secret = k.pid, k.secret[:]
			s.sessions[k] = ss
			return true
		}
	}
}

func (s *Server) unregister(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var k cancelKey
	k.pid = ss.client.pid
	copy(k.secret[:], ss.client.secret)
	if s.sessions[k] == ss {
		delete(s.sessions, k)
	}
}

// lookupForCancel finds the session a CancelRequest names by its process
// id and secret. Two sessions may share a process id (an origin backend
// that ended and whose pid was reused while the proxy's session was still
// closing); the pair tells them apart. A wrong secret is no match.
func (s *Server) lookupForCancel(pid uint32, secret []byte) *session {
	if len(secret) != 4 {
		return nil
	}
	k := cancelKey{pid: pid}
	copy(k.secret[:], secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[k]
}

// SessionCount returns the number of sessions past authentication.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
)

// originHealth is what sessions know of the origin's reachability: after
// a failed connect no session dials again for originRetryEvery.
type originHealth struct {
	mu        sync.Mutex
	failedAt  time.Time
	err       error
	stalledAt time.Time // originStalls
}

// originRetryDue reports whether a session may try to connect now: an
// originRetryEvery after a failed connect, or a DialTimeout after one the
// origin did not answer in time (a partition, a frozen host), so that
// while it hangs one session in that long waits for it, not every
// session's statement that needs it.
func (s *Server) originRetryDue() bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	after := originRetryEvery
	if isTimeout(s.health.err) {
		after = max(after, s.cfg.DialTimeout)
	}
	return s.health.err == nil || time.Since(s.health.failedAt) >= after
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout())
}

func (s *Server) lastOriginError() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.err
}

func (s *Server) originDown(err error) {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.failedAt, s.health.err = time.Now(), err
}

func (s *Server) originUp() {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.err = nil
	s.health.stalledAt = time.Time{}
}

// originStalls records a login the origin did not answer in
// loginOriginWait (it may be slow rather than down: statements that need
// it still try it).
func (s *Server) originStalls() {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.stalledAt = time.Now()
}

// originStalled reports whether a login timed out within originStallMemo,
// or a connect failed within originRetryEvery.
func (s *Server) originStalled() bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return !s.health.stalledAt.IsZero() && time.Since(s.health.stalledAt) < originStallMemo ||
		s.health.err != nil && time.Since(s.health.failedAt) < originRetryEvery
}

// originAccepting reports whether the origin accepts sessions now: it
// answers the client's StartupMessage with an authentication request (or
// a refusal other than "shutting down" or "starting up"). The probe
// connection is closed before anything is authenticated.
func (s *Server) originAccepting(ctx context.Context, startup []byte) bool {
	c, err := s.dialOrigin(ctx)
	if err != nil {
		s.originDown(err)
		return false
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	fe := pgproto3.NewFrontend(c, c)
	fe.Send(rawFrame(startup))
	if err := fe.Flush(); err != nil {
		s.originDown(err)
		return false
	}
	msg, err := fe.Receive()
	if err != nil {
		s.originDown(err)
		return false
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && planner.UnreachableCode(e.Code) {
		s.originDown(fmt.Errorf("%s", e.Message))
		return false
	}
	s.originUp()
	return true
}

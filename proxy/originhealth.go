package proxy

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
)

// originAccepting reports whether the origin accepts sessions now: it
// answers the client's StartupMessage with an authentication request (or
// a refusal other than "shutting down" or "starting up"). The probe
// connection is closed before anything is authenticated.
func (s *Server) originAccepting(ctx context.Context, startup []byte) bool {
	c, err := s.dialOrigin(ctx)
	if err != nil {
		s.health.Down(err)
		return false
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	fe := pgproto3.NewFrontend(c, c)
	fe.Send(rawFrame(startup))
	if err := fe.Flush(); err != nil {
		s.health.Down(err)
		return false
	}
	msg, err := fe.Receive()
	if err != nil {
		s.health.Down(err)
		return false
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); ok && planner.UnreachableCode(e.Code) {
		s.health.Down(fmt.Errorf("%s", e.Message))
		return false
	}
	s.health.Up()
	return true
}

package proxy

import "github.com/jackc/pgx/v5/pgproto3"

// Route is where a client message is served.
type Route uint8

const (
	// RouteOrigin forwards the message to the origin Postgres unchanged.
	RouteOrigin Route = iota
)

// String names the route for logs and metric labels.
func (r Route) String() string {
	switch r {
	case RouteOrigin:
		return "origin"
	default:
		return "unknown"
	}
}

// Router is the single routing hook every client message passes through
// after authentication. Implementations must be safe for concurrent use by
// many sessions; the message is only valid for the duration of the call.
type Router interface {
	Route(s *SessionState, msg pgproto3.FrontendMessage) Route
}

// OriginRouter sends everything to the origin.
type OriginRouter struct{}

var _ Router = OriginRouter{}

// Route implements Router.
func (OriginRouter) Route(*SessionState, pgproto3.FrontendMessage) Route { return RouteOrigin }

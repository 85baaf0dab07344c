// Package proxy is pgaccel's PostgreSQL wire-protocol front end.
//
// A Server accepts client connections on server.listen and gives each one a
// session owned by its own goroutines. The connection lifecycle has these
// phases:
//
//  1. Negotiation. The first packet may be an SSLRequest (answered 'S' and
//     upgraded to TLS when server.tls is configured, else 'N'), a
//     GSSENCRequest (always 'N'), a CancelRequest (mapped to the origin
//     backend of the session whose key it carries, then the connection is
//     closed) or a StartupMessage.
//  2. Origin connect. The proxy dials the origin host and port from
//     origin.dsn (TLS when its sslmode asks for it) and sends it the client's
//     StartupMessage unchanged: user, database, options and all other
//     parameters. An unreachable origin is reported to the client as a FATAL
//     ErrorResponse with SQLSTATE 08001 and only that client is closed.
//  3. Authentication relay. Every authentication message of the origin is
//     relayed to the client and every answer back, so the origin decides who
//     gets in (trust, cleartext, md5, SCRAM-SHA-256). SCRAM-SHA-256-PLUS is
//     removed from the origin's offer: channel binding cannot survive a proxy.
//  4. Session start. The origin's ParameterStatus messages are relayed and
//     copied into the session; its BackendKeyData is kept for cancels and the
//     client gets the proxy's own key; ReadyForQuery is relayed.
//  5. Relay. Each client message is decoded with pgproto3, passed through
//     the single routing hook (Router) and, for RouteOrigin, re-encoded to
//     the origin. A second goroutine relays every origin message to the
//     client, tracking ParameterStatus and the transaction status carried by
//     ReadyForQuery. Messages larger than server.max_message_bytes, and
//     malformed ones, end the session with an ErrorResponse (08P01).
//  6. Shutdown. On Server.Shutdown the listener closes; idle sessions are
//     closed with 57P01 at once, busy ones when their statement finishes or,
//     after the grace period, after a cancel of their origin backend.
//
// proxy may import catalog, planner and accelerator; it must never import
// refresh or admin.
package proxy

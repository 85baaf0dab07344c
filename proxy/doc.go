// Package proxy is pgaccel's PostgreSQL wire-protocol front end.
//
// A Server accepts client connections on server.listen and gives each one a
// session owned by its own goroutines.
//
// # Layers
//
// From the bytes up:
//
//   - proxy/wire: framing (FrameReader), raw socket I/O (RawIO) and the
//     epoll event loops (Loop) that relay many sessions on one thread,
//     each session as a wire.Conn (loopstate.go's loopConn).
//   - proxy/encode: DuckDB values written as Postgres would write them
//     (text and binary), byte for byte.
//   - proxy/resultcache: the results cache and the caching datasets' TTL
//     and stale-while-revalidate policy (no SQL, no sockets).
//   - the origin link: proxy/originlink (the replies the origin owes:
//     Pending; the stand-in for an origin that is down: StandIn; the
//     session info: SessionInfo; the login cache: Logins; a logged-in
//     connection: Login; the pool of them: Pool; the origin's
//     reachability: Health), and in this package
//     originside.go (the session's part), link.go (install, need, detach,
//     idle release), replay.go, originlogin.go (the dial and login),
//     originhealth.go (a probe of the origin), private.go (the proxy's own
//     requests), flights.go.
//   - the session (session.go), composed of named parts, one file each:
//     clientside.go, originside.go, extstate.go, localrun.go,
//     loopstate.go, accelstate.go, lifecycle.go. Each part's type says
//     which goroutines may touch it.
//   - the handlers: relay.go (the client loop and its dispatch),
//     originrelay.go, query.go (Query), extended.go (Parse, Bind, Close,
//     Sync), execute.go (Execute), deferred.go, describecache.go,
//     localcmd.go, localtx.go, caching_session.go, pointindex.go, route.go,
//     passthrough.go (sessions without an Accel), handoff.go and lane.go
//     (sessions with one on an event loop).
//   - consistency.go: read-your-writes (the fences a commit leaves, checked
//     before a read is answered here) and max_staleness.
//   - stats.go: each Query's and Execute's statement statistics entry
//     (stmtstats), noted on arrival and timed on the route it takes;
//     ownshow.go: the proxy's own statements (SHOW pgaccel.statements,
//     stats, datasets, advice; EXPLAIN (pgaccel), the dry run).
//   - the planner seam (accel.go): the Planner, Engine and Privileges
//     interfaces. What runs where, and every reading of SQL text, is the
//     planner's (planner/sqltext.go for what the proxy asks besides plans);
//     the proxy scans no SQL itself.
//
// # Lifecycle
//
//  1. Negotiation (startup.go): SSLRequest, GSSENCRequest, CancelRequest or
//     StartupMessage; every startup-phase failure is what Postgres does with
//     the same bytes.
//  2. Origin connect (session.go, originlogin.go): the client's
//     StartupMessage goes to the origin from origin.dsn as it came; an
//     unreachable origin is a FATAL 08006 for that client only.
//  3. Authentication: relayed to the origin (auth.mode origin), or
//     pgaccel's own SCRAM-SHA-256 against the role's verifier (auth.mode
//     proxy: proxyauth.go).
//  4. Session start: ParameterStatus copied, BackendKeyData with the origin
//     backend's pid and a secret of the proxy's own (server.go: cancels).
//  5. Relay (relay.go, originrelay.go; passthrough.go without an Accel):
//     each client message is routed; reads the planner sends to the
//     acceleration are answered locally (query.go, execute.go), everything
//     else goes to the origin, and the origin relay writes its answers in
//     the order the client expects (pending.go). See Relay below.
//  6. The origin link (link.go): a session outlives its origin connection,
//     which it may open late, replay, detach, release when idle or stand in
//     for while the origin is down. See The origin link below.
//  7. Shutdown (server.go): idle sessions closed with 57P01 at once, busy
//     ones when their statement ends or after the grace period.
//
// # Negotiation
//
// Negotiation. The first packet may be an SSLRequest (answered 'S' and
// upgraded to TLS when server.tls is configured, else 'N'), a
// GSSENCRequest (always 'N'), a CancelRequest (mapped to the origin
// backend of the session whose key it carries, then the connection is
// closed) or a StartupMessage. Every startup-phase failure is what
// Postgres does with the same bytes: silence and a close for a packet
// it cannot read (bad length, a client gone, Terminate instead of a
// StartupMessage) and for cancels; a StartupMessage Postgres refuses
// for its protocol version or layout goes to the origin as it came,
// whose answer goes back as it came (startup.go).
//
// # Origin connect and authentication
//
// Origin connect. The proxy dials the origin host and port from
// origin.dsn (TLS when its sslmode asks for it) and sends it the client's
// StartupMessage as it came: user, database, options and all other
// parameters (and the origin's refusal of them, relayed). An unreachable origin is reported to the client as a FATAL
// ErrorResponse with SQLSTATE 08006 and only that client is closed.
//
// Authentication relay. Every authentication message of the origin is
// relayed to the client and every answer back, so the origin decides who
// gets in (trust, cleartext, md5, SCRAM-SHA-256). SCRAM-SHA-256-PLUS is
// removed from the origin's offer: channel binding cannot survive a proxy.
//
// # Session start
//
// Session start. The origin's ParameterStatus messages are relayed and
// copied into the session; its BackendKeyData is kept for cancels. The
// client's BackendKeyData carries the process id of its origin backend
// (a session is tied to one for its life), so pg_backend_pid(),
// pg_stat_activity and pg_terminate_backend(pid) agree with what the
// driver reports, and a secret key of the proxy's own: a CancelRequest
// comes to the proxy, which finds the session by the (pid, key) pair
// and cancels its local query or, with the origin's key, its origin
// backend's. An origin that sends no BackendKeyData (some poolers)
// leaves no backend pid to give: the client then gets a process id of
// the proxy's own (2^30 and up, above any Linux pid), which names no
// origin backend, and cancels reach only the session's local queries.
// ReadyForQuery is relayed.
//
// # Relay
//
// Relay. With an Accel, each client message is decoded with pgproto3
// and passed through the routing hook (accelerate). With an Accel configured, a Query
// or an Execute whose statement the planner routes to the acceleration
// is answered locally (query.go, execute.go); so are, once the origin
// has described a statement text, the unnamed statement's Parse, the
// Bind of a described statement, the Describe, Execute and Close of
// such a portal and a Sync that ends a stretch the origin saw nothing
// of (deferred.go: kept Parses and Binds are sent when something needs
// them at the origin). Everything else is re-encoded to the origin. A
// second goroutine relays every origin message to the client, tracking
// ParameterStatus, the transaction status carried by ReadyForQuery, and
// the queue of responses the origin still owes (pending.go). The
// proxy's own answers take their place in that queue: written at once
// when nothing is pending, else by the origin relay in turn, and
// dropped when an earlier message fails (Postgres would skip theirs).
// Where the answer depends on more than statement setup still pending
// (an earlier statement of the stretch may have changed the session),
// the client loop asks the origin for everything it owes with Flush
// (never Sync, which would end the client's implicit transaction) and
// waits. The session's statements and portals follow the client's view
// of Postgres, including what Postgres skips after an error
// (journal.go). The proxy's own requests to the origin (session info,
// descriptions: private.go) are answered into the queue and never reach
// the client. The session's statement_timeout (read with the session
// info) bounds what the proxy answers itself as Postgres bounds a
// statement: DuckDB is interrupted at the deadline, a statement whose
// kept messages outlive it while the client pauses fails at the next
// one, and the client gets the origin's 57014 error; a statement the
// proxy fails itself (timeout, cancel, a DuckDB failure after rows)
// fails the origin's transaction too where it would otherwise go on
// (timeout.go). Origin messages reach the client as the origin sent
// them (wire.FrameReader.LastFrame). Messages larger than
// server.max_message_bytes end the session with 54000, ones that
// cannot be framed with 08P01; a well-framed one pgproto3 cannot
// decode goes to the origin as it came, for Postgres's own error.
// Without an Accel there is nothing to route: the pass-through relay
// (passthrough.go) frames each side into messages (wire.FrameReader), decodes
// with pgproto3 only the ones it tracks (ParameterStatus, ReadyForQuery,
// ErrorResponse) and forwards each read's run of whole messages as it
// came, in one write. A session on plain sockets is relayed by an event
// loop (wire.Loop): one locked OS thread polls the sockets of many
// sessions with epoll and runs the same relay steps the goroutines run,
// so a read costs one read and one write. The loop owns those sockets (wire.RawIO.ToLoop) and never waits for
// one: a write the socket cannot take, or a session that keeps it busy,
// is handed back to goroutines with the bytes not yet written. Sessions
// with an Accel run on a loop too while their statements go to the
// origin (handoff.go): a message that may wait is handed, decoded, to
// goroutines, and a run of loop-safe messages brings the session back.
// There, a round trip of pure origin SELECTs (and a simple Query of a
// plain write, BEGIN, COMMIT or ROLLBACK) takes the origin lane
// (lane.go): taken from the buffer undecoded, forwarded in one write,
// with the effects the decoded path would have; the origin's usual
// answers are relayed in runs (originRun). The fast path's decisions
// are kept per session by number shape (route.go, quickMemo).
// With on_zero_results: use_source, an accelerated answer whose first
// row does not come is replaced by the origin's answer to the
// planner's FallbackSQL (the simple Query's text is swapped; in the
// extended protocol the proxy runs it under its own statement name with
// the portal's parameters).
//
// # The origin link
//
// The origin link (link.go). With auth.mode proxy (ProxyAuth), phases
// 2 to 4 are pgaccel's own (proxyauth.go): the client's SCRAM-SHA-256
// proof is checked against the role's verifier (auth.Cache), and the
// session starts either on an origin connection logged in with the
// ClientKey the proof revealed, or, when a session of the same login
// key (database, role, startup parameters: originlink.Logins) started
// recently, or the origin cannot be reached, with no origin
// connection at all: the ParameterStatus set and session info of
// that earlier session, pgaccel's own process id. needOrigin, before
// anything is sent to the origin, opens a connection when there is
// none and sets the session up again on it (replay: its SETs outside
// transaction blocks, its named statements), or, when the origin
// cannot be reached, puts an originlink.StandIn in its place
// (originlink.StandIn), which answers like a session whose statements fail
// with ERROR 08006, so ordering, skipping and the pending queue work
// as with the origin. An origin connection that breaks (or ends with a
// FATAL) while the session owes the client nothing from it and holds
// no transaction there is dropped, and the session goes on (detach).
// In auth.mode origin the link breaks alike, but cannot be logged in
// again: the session ends at its first statement for the origin once
// the origin accepts sessions again. A session with no connection
// answers a BEGIN, and the COMMIT or ROLLBACK of such a transaction,
// itself; the BEGIN is sent, with the replay, before the first
// statement of the transaction that needs the origin (localtx.go).
// It answers pings, the SETs whose value it can check (which join the
// replay) and DISCARD ALL of a session that set nothing too, in
// either protocol (localcmd.go); a SET of an extended-protocol
// stretch, answered here or at the origin, joins the replay only if
// the stretch succeeds, and one answered here is sent, within the
// stretch, to an origin connection the stretch opens
// (stretchsets.go). While the origin cannot describe a
// new text, an accelerated statement takes the descriptions kept
// for a text of its description shape (describeCache.shaped; the
// planner's DescriptionShape), and with the stand-in as its link a
// session keeps named statements and answers their Close itself, as
// with no link.
// An origin that holds connections without answering (a partition, a
// frozen host) is waited for briefly where a cached answer can serve:
// the verifier's lookup (auth.Cache: 2s), the planner's catalog and
// privilege lookups (1s), the origin login of a session that can
// start without it (2s; then, for 5s, none); an origin login as a
// whole within the connect timeout (10s), after which sessions try
// the origin once per that timeout. A statement already sent on a
// live connection to it waits, as it would without pgaccel.
//
// # Shutdown
//
// On Server.Shutdown the listener closes; idle sessions are
// closed with 57P01 at once, busy ones when their statement finishes or,
// after the grace period, after a cancel of their origin backend.
//
// # Security review of auth.mode proxy
//
// What is held, where, for how long:
//
//   - Passwords: never. SCRAM never sends one; md5 and trust roles are
//     relayed to the origin as in auth.mode origin.
//   - Verifiers (SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey, what
//     pg_authid.rolpassword holds): in memory per (database, role) in
//     auth.Cache, replaced when a lookup answers (every cache_ttl, and after
//     a failed proof), served up to max_stale past expiry while the origin
//     cannot be reached. With auth.persist, also in
//     runtime.data_dir/auth-verifiers.json (mode 0600, written atomically; a
//     file others may read is refused at start). md5 verifiers are never
//     written: an md5 hash logs in by itself.
//   - ClientKeys: in the session's memory only (originSide.clientKey), from
//     the login to the session's end; never logged, never written, never
//     sent anywhere but into a SCRAM exchange with the origin (as the proof
//     the client would have sent). A verifier changed at the origin
//     (another salt) makes the key useless: the next reconnection fails and
//     ends the session with 28P01.
//   - What sessions start with (auth-logins.json with auth.persist): the
//     origin's ParameterStatus values and the session info (current_user,
//     search path, extra_float_digits, bytea_output, statement_timeout) per
//     login key, which includes the startup parameters (so an `options`
//     value is stored). No password, verifier, key or query.
//   - What reads need from the origin (auth-lookups.json with
//     auth.persist, app/lookups.go): the planner's cached answers about
//     relation names on search paths and roles' SELECT privilege and row
//     level security on the datasets' tables, each with the expiry it was
//     fetched with, so that after a restart it serves no longer than
//     max_stale past that expiry, and only while the origin cannot be
//     reached; written within a second of an answer to a new question (a
//     role's first read, a new search path), every 30 s when answers are
//     only refreshed, and at shutdown. It names
//     roles, schemas and tables; no secret.
//   - Logs: roles and databases, never verifiers (Verifier.String hides
//     them), keys, passwords or parameter values.
//   - Pooled origin connections (originlink.Pool): logged in as their role, kept
//     in memory up to auth.origin_idle_timeout after a session released or
//     left them, for the next session of the same database, role and
//     startup parameters, which has proved the role's password to pgaccel
//     first. DISCARD ALL runs before one enters the pool, so nothing of a
//     session (settings, SET ROLE and SET SESSION AUTHORIZATION, prepared
//     statements, cursors, temporary tables, LISTEN, advisory locks) is
//     there for the next. A role set NOLOGIN, expired or dropped at the
//     origin is refused by pgaccel's own check once its verifier is
//     fetched again (within cache_ttl), not by the origin, since a pooled
//     connection does not log in again.
//
// What someone who reads the data directory gets: the verifiers (and
// which roles may read which datasets, and the settings their logins
// start with). A
// verifier does not log in to Postgres nor to pgaccel by itself (a SCRAM
// login needs the ClientKey, which the verifier holds only as its SHA-256,
// the StoredKey); it allows an offline dictionary attack on the password
// (4096 PBKDF2-SHA-256 iterations per guess by Postgres's default, as for
// someone who reads pg_authid), and, with the ServerKey, impersonating the
// origin to a client that trusts it. That is what pg_authid gives; keep
// the data directory as private as the origin's. Someone who reads the
// process's memory gets live sessions' ClientKeys, which log in as those
// roles until their passwords change.
//
// Other choices: a role the origin does not know gets a mock exchange
// whose salt is derived from a per-process secret (stable within a run, as
// a real role's is), failing at the proof with the message a wrong
// password gets. So does a role whose verifier is not kept while the
// origin cannot be reached (the log says why): an 08006 there would tell
// the roles that logged in lately, whose verifiers are kept, from the
// rest. The lookup function is SECURITY DEFINER with a fixed
// search_path, schema-qualified, EXECUTE granted only to origin.dsn's
// user; lookups run on pgaccel's catalog connections, never a client's.
// Channel binding (SCRAM-SHA-256-PLUS) is not offered: a proxy that ends
// TLS itself cannot bind the client's channel to the origin's.
//
// proxy may import catalog, planner, accelerator, auth, pgdef and its own
// subpackages (encode, resultcache); it must never import refresh or
// admin (internal/importrules checks it).
package proxy

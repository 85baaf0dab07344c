// Package originlink is what a session keeps of its connection to the
// origin, apart from the session. For now:
//
//   - Pending, the queue of the replies the origin still owes, which both
//     the client loop and the origin relay use, and which lets the proxy
//     answer a statement itself in the order the client expects;
//   - StandIn, which answers in the origin's place while it cannot be
//     reached, as a session whose statements fail with 08006;
//   - SessionInfo, what the planner and encoder need to know of the origin
//     session that ParameterStatus does not report;
//   - Logins, per login key what sessions of it started with, so that a
//     login can complete without the origin (auth.mode proxy);
//   - Login, a connection to the origin logged in as a session's role, and
//     Pool, the idle ones sessions left, reset, for the next session of
//     their login key;
//   - Health, what sessions know of the origin's reachability.
//
// The proxy redesign moves the rest of the link here: the connection's
// install, detach, replay and idle release, and the dial and login.
//
// originlink imports only auth, pgdef and proxy/wire of pgaccel's
// (internal/importrules checks it).
package originlink

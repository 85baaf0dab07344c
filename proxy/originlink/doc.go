// Package originlink is what a session keeps of its connection to the
// origin, apart from the session: for now the queue of the replies the
// origin still owes (Pending), which both the client loop and the origin
// relay use, and which lets the proxy answer a statement itself in the
// order the client expects.
//
// The proxy redesign moves the rest of the link here:
// the connection's install, detach, replay and idle release, the stand-in
// for an origin that is down, the pool of origin connections, the login
// cache and the origin's health.
//
// originlink imports only auth, pgdef and proxy/wire of pgaccel's
// (internal/importrules checks it).
package originlink

// Package wire is the bytes and sockets of pgaccel's proxy: framing the
// Postgres protocol (FrameReader), reading and writing sockets with raw
// system calls (RawIO), and event loops (Loop, Linux only) that relay many
// sessions on one locked OS thread with epoll.
//
// It knows nothing of sessions, routing or Postgres semantics beyond the
// message framing: a Loop drives a Conn, which runs the relay step the
// session's goroutines run too, and reports what happened through it.
//
//	frames.go      FrameReader: whole messages from the buffer (the relays
//	               forward runs of them in one write), and io.Reader for
//	               pgproto3, keeping each message's raw bytes (LastFrame)
//	rawio.go       RawIO: raw reads and writes, deadlines, and the hand-over
//	               of a socket between the Go runtime and a Loop
//	conn.go        Conn, the session as a Loop sees it; the loop events
//	loop_linux.go  Loop: epoll, the yield to Go's scheduler, hand-overs
//
// wire imports nothing of pgaccel's (internal/importrules checks it).
package wire

//go:build !linux

package wire

import "errors"

// Loop is Linux-only (epoll); elsewhere sessions always run on
// goroutines.
type Loop struct{}

// NewLoop fails: event loops need Linux.
func NewLoop() (*Loop, error) {
	return nil, errors.New("event loops need Linux")
}

// Serve never takes a session.
func (l *Loop) Serve(Conn) bool { return false }

// Kick does nothing.
func (l *Loop) Kick(Conn) {}

// Stop does nothing.
func (l *Loop) Stop() {}

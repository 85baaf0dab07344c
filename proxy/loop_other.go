//go:build !linux

package proxy

import "errors"

// eventLoop is Linux-only (epoll); elsewhere sessions always run on
// goroutines.
type eventLoop struct{}

func newEventLoop() (*eventLoop, error) {
	return nil, errors.New("event loops need Linux")
}

func (l *eventLoop) serve(*session) bool { return false }
func (l *eventLoop) kick(*session)       {}
func (l *eventLoop) stop()               {}

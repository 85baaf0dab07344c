//go:build linux

package wire

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// An event loop relays sessions (plain sockets; with an acceleration, while
// their statements go to the origin: handoff.go) on one locked OS thread
// with epoll, the way pgbouncer does, instead of two goroutines per
// session. With goroutines, every
// message costs a read that finds nothing (Go reads before it waits), a
// park and a wake-up through the runtime's poller and scheduler; on a
// 2-core machine that made pgaccel's pass-through about a tenth slower
// than pgbouncer at 8 clients (bench/RESULTS.md).
//
// The loop owns a session's sockets outright: RawIO.ToLoop duplicates each
// descriptor and closes the Go connection, which takes it out of the
// runtime's poller (left there, the runtime's poller thread woke on every
// message too, which cost more than the loop saved). The loop runs the
// same relay steps (Conn.RelayOne) the goroutines do. A loop never waits for a
// socket: a write the socket cannot take whole, or a session that keeps
// the loop busy (a client streaming a COPY), hands the session back to
// goroutines (demote), which write the held bytes first and carry on as
// before.

const loopWakeToken = -1

// Loop is an event loop: one locked OS thread that relays many sessions
// (Conn) with epoll.
type Loop struct {
	epfd int
	evfd int

	mu      sync.Mutex
	adds    []*loopSession
	kicks   []Conn
	stopped bool
	exited  bool // the loop has returned and closed its descriptors

	// Used by the loop's thread only.
	byToken   map[int32]*loopSession // the client socket's token; the origin's is token+1
	bySession map[Conn]*loopSession
	next      int32
}

type loopSession struct {
	c     Conn
	token int32
	// done receives true when the session ended in the loop, false when
	// it was handed back to goroutines.
	done chan bool
}

// NewLoop starts an event loop; Stop ends it.
func NewLoop() (*Loop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	r1, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		syscall.Close(epfd)
		return nil, fmt.Errorf("eventfd2: %w", errno)
	}
	evfd := int(r1)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: loopWakeToken}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(evfd)
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	l := &Loop{
		epfd:      epfd,
		evfd:      evfd,
		byToken:   make(map[int32]*loopSession),
		bySession: make(map[Conn]*loopSession),
	}
	go l.run()
	return l, nil
}

// Serve hands c to the loop and waits until the session has ended there
// (true) or was handed back to goroutines (false), which then relay it.
// It runs on the session's goroutine, before any relay goroutine starts.
func (l *Loop) Serve(c Conn) bool {
	client, origin := c.Sockets()
	if err := origin.ToLoop(); err != nil {
		return false
	}
	if err := client.ToLoop(); err != nil {
		if origin.ToGoroutine() != nil {
			c.Close()
			return true
		}
		return false
	}
	ls := &loopSession{c: c, done: make(chan bool, 1)}
	// Set before the loop can see the session: a close from now on kicks
	// the loop; one before finds the sockets closed when the loop
	// registers them.
	c.SetLoop(l)
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		c.SetLoop(nil)
		c.Close()
		return true
	}
	l.adds = append(l.adds, ls)
	l.wakeLocked()
	l.mu.Unlock()
	return <-ls.done
}

// Kick asks the loop to look at c: its sockets were closed by another
// goroutine, which the loop cannot see (a closed descriptor leaves epoll
// without an event), or it asks to be handed back (WantsGoroutines).
func (l *Loop) Kick(c Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exited {
		return
	}
	l.kicks = append(l.kicks, c)
	l.wakeLocked()
}

// Stop ends the loop once it has no sessions left.
func (l *Loop) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if !l.exited {
		l.wakeLocked()
	}
}

// wakeLocked makes the loop drain its queues; l.mu is held, which keeps
// the eventfd open (run closes it under l.mu).
func (l *Loop) wakeLocked() {
	one := [8]byte{1}
	_, _ = syscall.Write(l.evfd, one[:])
}

// The loop's goroutine never parks, so to Go's scheduler it is one
// goroutine running for ever: after 10 ms sysmon preempts it or, while it
// waits in epoll_pwait, takes its P away, and every such retake sets sysmon
// polling every 20 µs again (golang/go#18236). With pgbench's TPC-B at one
// client that was 1.6 sysmon wake-ups and as many context switches more per
// transaction than pgbouncer, about 25 µs of CPU. The loop yields every
// loopYieldEvery instead (runtime.Gosched), which sysmon takes for progress.
// A busy loop gets there between its short waits. Once a wait has lasted
// over loopTimedWaitAfter (traffic with gaps), waits are bounded so that
// the yield still comes in time, for loopIdleAfter after that wait and
// after the last event. Busy waits are not bounded: arming the timer cost
// about 1.5 µs per wait on this VM, 3 µs per select-only transaction.
const (
	loopYieldEvery     = 5 * time.Millisecond
	loopTimedWaitAfter = time.Millisecond
	loopIdleAfter      = 100 * time.Millisecond
)

func (l *Loop) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := make([]syscall.EpollEvent, 128)
	lastYield := time.Now()
	lastEvent := lastYield
	var lastLongWait time.Time
	for {
		now := time.Now()
		if now.Sub(lastYield) >= loopYieldEvery {
			runtime.Gosched()
			lastYield = now
		}
		timeout := -1
		if now.Sub(lastLongWait) < loopIdleAfter && now.Sub(lastEvent) < loopIdleAfter {
			due := loopYieldEvery - now.Sub(lastYield)
			timeout = max(1, int((due+time.Millisecond-1)/time.Millisecond))
		}
		n := epollWait(l.epfd, events, timeout)
		after := time.Now()
		if after.Sub(now) > loopTimedWaitAfter {
			lastLongWait = after
		}
		if n > 0 {
			lastEvent = after
		}
		for i := 0; i < n; i++ {
			tok := events[i].Fd
			if tok == loopWakeToken {
				if l.drain() {
					l.mu.Lock()
					l.exited = true
					syscall.Close(l.epfd)
					syscall.Close(l.evfd)
					l.mu.Unlock()
					return
				}
				continue
			}
			if ls := l.byToken[tok&^1]; ls != nil {
				l.dispatch(ls, tok&1 == 1)
			}
		}
	}
}

// epollWait returns the number of events, 0 on EINTR or timeout (ms; -1
// waits until there is one). It goes through the runtime's syscall
// bookkeeping, so that its P can run other goroutines while it waits.
// (Polling raw first, to skip that bookkeeping when events are waiting,
// cost a system call per wake-up at one client and gained nothing at 8;
// waiting raw keeps the P, and every P when there are as many loops.)
func epollWait(epfd int, events []syscall.EpollEvent, timeout int) int {
	r1, _, errno := syscall.Syscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(timeout), 0, 0)
	if errno != 0 {
		return 0
	}
	return int(r1)
}

// drain takes new sessions and kicks; it reports whether the loop is
// stopped and empty.
func (l *Loop) drain() bool {
	var buf [8]byte
	_, _ = syscall.Read(l.evfd, buf[:])
	l.mu.Lock()
	adds, kicks, stopped := l.adds, l.kicks, l.stopped
	l.adds, l.kicks = nil, nil
	l.mu.Unlock()
	for _, ls := range adds {
		l.add(ls)
	}
	for _, c := range kicks {
		ls := l.bySession[c]
		switch {
		case ls == nil:
		case c.Closed():
			l.finish(ls, true)
		case c.WantsGoroutines():
			l.demote(ls, EventReleased)
		}
	}
	return stopped && len(l.bySession) == 0
}

// add registers a new session's sockets and relays what its frame readers
// have buffered already (it would raise no event).
func (l *Loop) add(ls *loopSession) {
	l.next += 2
	for l.byToken[l.next] != nil || l.next < 0 {
		l.next = (l.next + 2) & 0x3ffffffe
	}
	ls.token = l.next
	l.byToken[ls.token] = ls
	l.bySession[ls.c] = ls
	ls.c.LoopEvent(EventTaken, nil, nil)
	client, origin := ls.c.Sockets()
	if err := l.register(client, ls.token); err != nil {
		l.finish(ls, true)
		return
	}
	if err := l.register(origin, ls.token+1); err != nil {
		l.finish(ls, true)
		return
	}
	if l.dispatch(ls, true) {
		l.dispatch(ls, false)
	}
}

func (l *Loop) register(r *RawIO, token int32) error {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if r.fd < 0 {
		return errors.New("socket closed")
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: token}
	return syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, r.fd, &ev)
}

func (l *Loop) unregister(r *RawIO) {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if r.fd >= 0 {
		_ = syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, r.fd, nil)
	}
}

// dispatch relays what one of the session's sockets has to say, and
// reports whether the session is still in the loop.
func (l *Loop) dispatch(ls *loopSession, fromOrigin bool) (stays bool) {
	c := ls.c
	c.SetOnLoop(true)
	defer func() {
		if r := recover(); r != nil {
			c.Panicked(r)
			l.finish(ls, true)
			stays = false
		}
		if stays {
			c.SetOnLoop(false)
		}
		// Else finish cleared it before the session's goroutine took it
		// back: written here, after that, it would race with the
		// goroutine's reads.
	}()
	client, origin := c.Sockets()
	if fromOrigin {
		origin.Readable()
	} else {
		client.Readable()
	}
	ended, idle, blocked := false, false, false
	for range c.ReadBudget() {
		ended, idle = c.RelayOne(fromOrigin)
		blocked = client.IsBlocked() || origin.IsBlocked()
		if ended || idle || blocked || c.HandOff() {
			break
		}
	}
	switch {
	case ended && c.EndsToPool() && !c.Closed():
		// The session's goroutine pools its origin connection.
		l.demote(ls, EventPooled)
		return false
	case ended || c.Closed():
		c.Close()
		l.finish(ls, true)
		return false
	case c.HandOff():
		c.ClearHandOff()
		l.demote(ls, EventHandedOff)
		return false
	case blocked:
		l.demote(ls, EventWriteBlocked)
		return false
	case !idle:
		l.demote(ls, EventBusy)
		return false
	}
	return true
}

// demote hands a session back to goroutines.
func (l *Loop) demote(ls *loopSession, why string) {
	c := ls.c
	client, origin := c.Sockets()
	l.unregister(client)
	l.unregister(origin)
	errC := client.ToGoroutine()
	errO := origin.ToGoroutine()
	c.LoopEvent(why, errC, errO)
	if errC != nil || errO != nil {
		c.Close()
		l.finish(ls, true)
		return
	}
	// Its closes no longer concern the loop.
	c.SetLoop(nil)
	l.finish(ls, false)
}

// finish takes a session out of the loop and tells its goroutine.
func (l *Loop) finish(ls *loopSession, ended bool) {
	ls.c.SetOnLoop(false)
	if l.bySession[ls.c] != ls {
		return
	}
	if ended {
		client, origin := ls.c.Sockets()
		l.unregister(client)
		l.unregister(origin)
	}
	delete(l.byToken, ls.token)
	delete(l.bySession, ls.c)
	ls.done <- ended
}

package wire

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Socket I/O for the relay's hot path. Go's net.Conn enters the runtime's
// syscall bookkeeping for every read and write, which wakes the sysmon
// thread out of deep sleep each time the proxy goes idle between round
// trips: on a 2-core machine that was a fifth of the proxy's CPU per
// transaction (golang/go#18236). The sockets are non-blocking, so each
// read and write returns at once: issuing them with RawSyscall inside
// syscall.RawConn's readiness loop is safe and skips that cost. Deadlines
// and Close from another goroutine keep working through RawConn.
//
// Measured with bench/passthrough (select-only, 1 client): CPU per
// transaction 33 µs -> 25 µs, context switches 2.8 -> 2.1.

// RawIO reads and writes a TCP or unix socket with raw system calls.
//
// A closure handed to RawConn escapes to the heap, so one made per call
// allocated on every read and write (over half of a pass-through
// session's garbage). The callbacks are made once, and each call's buffer
// and outcome live in the struct, guarded by one mutex per direction:
// reads come from one goroutine, but writes may come from two (both are
// serialized by the session's write lock today; the mutex keeps RawIO
// correct without relying on that).
//
// A session handed to an event loop (loop.go) has its socket taken from
// the Go runtime: RawIO then holds a descriptor of its own that only the
// loop polls, reads and writes never wait (ErrWouldBlock), and bytes a
// write could not place are held until the session is handed back to
// goroutines, which write them first.
type RawIO struct {
	rc     syscall.RawConn
	conn   net.Conn
	rd, wr rawOp

	// loop is set while an event loop owns the socket.
	loop atomic.Bool
	// lmu guards the loop's descriptor against a close while a loop read
	// or write uses it, the bytes held back, and the switch between the
	// modes. It is never held while waiting for the socket.
	lmu  sync.Mutex
	fd   int    // the loop's descriptor; -1 once closed or handed back
	held []byte // written later, before anything else
	// blocked is set while bytes are held: a loop-mode write could not
	// place everything.
	blocked atomic.Bool
	// drained is set by a loop-mode read that got less than it asked for:
	// the socket is empty, and the next read of this event would only
	// find that out again (a system call per message). The loop clears it
	// when epoll reports the socket readable. Only the loop's thread
	// touches it.
	drained bool
}

// rawOp is one direction's call in progress: its buffer, how much of it
// was done, the error, and the callback, made once.
type rawOp struct {
	mu    sync.Mutex
	buf   []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

// do has RawConn call o's callback with p until it is done; o.mu is held.
func (r *RawIO) do(o *rawOp, write bool, p []byte) (int, error) {
	o.buf, o.n, o.errno = p, 0, 0
	var err error
	if write {
		err = r.rc.Write(o.fn)
	} else {
		err = r.rc.Read(o.fn)
	}
	n := o.n
	if err == nil && o.errno != 0 {
		err = o.errno
	}
	o.buf = nil
	return n, err
}

// FastIO returns c's socket wrapped for raw reads and writes, or c itself
// when it is not a plain socket (TLS).
func FastIO(c net.Conn) io.ReadWriter {
	switch c.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return c
	}
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		return c
	}
	r := &RawIO{rc: rc, conn: c, fd: -1}
	r.rd.fn, r.wr.fn = r.readOnce, r.writeSome
	return r
}

// rawRW reads (recvfrom) or writes (sendto) a socket. recvfrom and sendto
// go to the socket directly, where read and write pass through the file
// layer first (a tenth of a microsecond per call, measured with perf);
// MSG_NOSIGNAL makes a write to a closed peer EPIPE, not SIGPIPE.
func rawRW(trap, fd uintptr, p []byte) (int, syscall.Errno) {
	flags := uintptr(0)
	if trap == syscall.SYS_SENDTO {
		flags = syscall.MSG_NOSIGNAL
	}
	r1, _, e := syscall.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), flags, 0, 0)
	return int(r1), e
}

// readOnce is Read's callback: false asks RawConn to wait for readability.
func (r *RawIO) readOnce(fd uintptr) bool {
	o := &r.rd
	for {
		n, errno := rawRW(syscall.SYS_RECVFROM, fd, o.buf)
		switch errno {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			o.n = n
		default:
			o.errno = errno
		}
		return true
	}
}

// Read implements io.Reader. In loop mode it returns ErrWouldBlock when
// the socket has nothing to read.
func (r *RawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.loop.Load() {
		r.lmu.Lock()
		defer r.lmu.Unlock()
		return r.loopRead(p)
	}
	r.rd.mu.Lock()
	n, err := r.do(&r.rd, false, p)
	r.rd.mu.Unlock()
	if err == nil && n == 0 {
		err = io.EOF
	}
	return n, err
}

// writeSome is Write's callback: it writes what the socket takes, and
// returns false (wait for writability) when it takes no more.
func (r *RawIO) writeSome(fd uintptr) bool {
	o := &r.wr
	for o.n < len(o.buf) {
		m, e := rawRW(syscall.SYS_SENDTO, fd, o.buf[o.n:])
		switch e {
		case 0:
			o.n += m
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			o.errno = e
			return true
		}
	}
	return true
}

// Write implements io.Writer. In loop mode it never waits: what the
// socket does not take is held (see RawIO).
func (r *RawIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.loop.Load() {
		r.lmu.Lock()
		defer r.lmu.Unlock()
		if err := r.loopWrite(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	// Held bytes go first; the write lock keeps other writers behind.
	r.wr.mu.Lock()
	defer r.wr.mu.Unlock()
	if err := r.writeHeldLocked(); err != nil {
		return 0, err
	}
	return r.do(&r.wr, true, p)
}

// writeHeldLocked writes what loop mode held back; r.wr.mu is held.
func (r *RawIO) writeHeldLocked() error {
	if !r.blocked.Load() {
		return nil
	}
	r.lmu.Lock()
	held := r.held
	r.held = nil
	r.blocked.Store(false)
	r.lmu.Unlock()
	_, err := r.do(&r.wr, true, held)
	return err
}

// FlushHeld writes what loop mode held back, waiting as long as the socket
// needs: the first thing a session's goroutines do after a loop hands it
// back.
func (r *RawIO) FlushHeld() error {
	r.wr.mu.Lock()
	defer r.wr.mu.Unlock()
	return r.writeHeldLocked()
}

// Close closes the socket, in either mode.
func (r *RawIO) Close() error {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if !r.loop.Load() {
		return r.conn.Close()
	}
	if r.fd < 0 {
		return nil
	}
	// The loop's registration goes with the descriptor.
	err := syscall.Close(r.fd)
	r.fd = -1
	return err
}

// ErrWouldBlock is a loop-mode read's "nothing to read now".
var ErrWouldBlock = errors.New("would block")

// loopRead reads once from the loop's descriptor; r.lmu is held.
func (r *RawIO) loopRead(p []byte) (int, error) {
	if r.fd < 0 {
		return 0, net.ErrClosed
	}
	if r.drained {
		return 0, ErrWouldBlock
	}
	for {
		n, errno := rawRW(syscall.SYS_RECVFROM, uintptr(r.fd), p)
		switch errno {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			r.drained = n < len(p)
			return n, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, ErrWouldBlock
		default:
			return 0, errno
		}
	}
}

// loopWrite writes p to the loop's descriptor, holding what the socket
// does not take; r.lmu is held.
func (r *RawIO) loopWrite(p []byte) error {
	if r.fd < 0 {
		return net.ErrClosed
	}
	if len(r.held) > 0 {
		r.held = append(r.held, p...)
		return nil
	}
	for len(p) > 0 {
		n, errno := rawRW(syscall.SYS_SENDTO, uintptr(r.fd), p)
		switch errno {
		case 0:
			p = p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			r.held = append(r.held, p...)
			r.blocked.Store(true)
			return nil
		default:
			return errno
		}
	}
	return nil
}

// Readable clears drained: epoll says there is something to read.
func (r *RawIO) Readable() {
	r.drained = false
}

// IsBlocked reports whether a write held bytes back.
func (r *RawIO) IsBlocked() bool {
	return r.blocked.Load()
}

// ToLoop takes the socket from the Go runtime: a descriptor of RawIO's
// own, and the Go connection closed (which removes it from the runtime's
// poller). No read or write may be in progress.
func (r *RawIO) ToLoop() error {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	fd := -1
	var dupErr error
	if err := r.rc.Control(func(s uintptr) {
		fd, dupErr = dupCloexec(int(s))
	}); err != nil {
		return err
	}
	if dupErr != nil {
		return dupErr
	}
	if err := r.conn.Close(); err != nil {
		syscall.Close(fd)
		return err
	}
	r.fd = fd
	r.loop.Store(true)
	return nil
}

// ToGoroutine gives the socket back to the Go runtime. No read or write
// of the loop may be in progress; held bytes stay held, written before
// anything else. On failure the socket is closed.
func (r *RawIO) ToGoroutine() error {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if r.fd < 0 {
		return net.ErrClosed
	}
	f := os.NewFile(uintptr(r.fd), "pgaccel-socket")
	c, err := net.FileConn(f) // a descriptor of its own
	f.Close()
	r.fd = -1
	if err != nil {
		return err
	}
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		c.Close()
		return err
	}
	r.conn, r.rc = c, rc
	r.loop.Store(false)
	return nil
}

func dupCloexec(fd int) (int, error) {
	r1, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r1), nil
}

// GoConn returns the Go connection of the socket now: a loop hands the
// socket back as a new one (ToGoroutine).
func (r *RawIO) GoConn() net.Conn {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	return r.conn
}

// SetReadDeadline sets the Go connection's read deadline; loop-mode reads
// never wait, so there it does nothing.
func (r *RawIO) SetReadDeadline(t time.Time) error {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if r.loop.Load() {
		return nil
	}
	return r.conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the Go connection's write deadline; loop-mode
// writes never wait, so there it does nothing.
func (r *RawIO) SetWriteDeadline(t time.Time) {
	r.lmu.Lock()
	defer r.lmu.Unlock()
	if !r.loop.Load() {
		_ = r.conn.SetWriteDeadline(t)
	}
}

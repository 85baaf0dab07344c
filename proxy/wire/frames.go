package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5/pgproto3"
)

// FrameReader splits one side's bytes into protocol messages. Every byte
// read from a session socket after the first packet passes through one:
//
//   - As an io.Reader under pgproto3 (startup, authentication, and the
//     acceleration's relay), it hands out at most the rest of the current
//     message, so pgproto3's own buffer never holds bytes of a message it
//     has not been asked for: whoever reads next, pgproto3 or next, starts
//     at a message boundary.
//   - next returns whole messages (type, length, body) straight from its
//     buffer, undecoded, for the pass-through relay (passthrough.go), which
//     forwards runs of them in one write.
//
// A message that does not fit grows the buffer to its size; max bounds a
// message body for next (pgproto3 applies its own limit).
type FrameReader struct {
	r      io.Reader
	buf    []byte
	rp, wp int
	max    int
	// untyped: messages have no type byte (the startup packet).
	untyped bool
	// rem is what Read has yet to hand out of the current message.
	rem int
	// msgStart and msgLen place the message Read hands out (or handed
	// out last) in buf; kept tells that it stays whole there (it is at
	// most FrameKeepSize), so that lastFrame can return its raw bytes.
	msgStart, msgLen int
	kept             bool
}

// FrameKeepSize bounds the messages Read keeps whole in the buffer for
// lastFrame; larger ones pass through in pieces.
const FrameKeepSize = 1 << 20

// FrameBufSize is a frame reader's buffer size: a read takes up to this
// much, and messages up to it need no other buffer.
const FrameBufSize = 16 << 10

// frameShrinkSize: a buffer grown beyond this for a large message is
// replaced by a new one of FrameBufSize once it is empty.
const frameShrinkSize = 1 << 20

// NewFrameReader frames what r reads; untyped: the startup packet comes
// first (messages without a type byte until Typed).
func NewFrameReader(r io.Reader, untyped bool) *FrameReader {
	return &FrameReader{r: r, buf: make([]byte, FrameBufSize), untyped: untyped}
}

func (f *FrameReader) headerLen() int {
	if f.untyped {
		return 4
	}
	return 5
}

// frameLen returns the length of the message that starts at f.rp, from
// its header (which must be buffered), or an error for an impossible one.
func (f *FrameReader) frameLen() (int, error) { return f.frameLenAt(f.rp) }

// frameLenAt is frameLen for a message that starts at buf[at].
func (f *FrameReader) frameLenAt(at int) (int, error) {
	if f.untyped {
		n := int(int32(binary.BigEndian.Uint32(f.buf[at:])))
		if n < 4 {
			return 0, fmt.Errorf("invalid length of startup packet: %d", n)
		}
		return n, nil
	}
	n := int(int32(binary.BigEndian.Uint32(f.buf[at+1:])))
	if n < 4 {
		return 0, fmt.Errorf("invalid message length %d for message type %q", n, f.buf[at])
	}
	if f.max > 0 && n-4 > f.max {
		return 0, &pgproto3.ExceededMaxBodyLenErr{MaxExpectedBodyLen: f.max, ActualBodyLen: n - 4}
	}
	return 1 + n, nil
}

// Buffered reports how many bytes are read but not yet handed out.
func (f *FrameReader) Buffered() int { return f.wp - f.rp }

// Next returns the next whole message in the buffer, or nil when the
// buffer holds none (fill reads more). It never reads the socket. The
// message is valid until the next fill; messages returned one after
// another lie next to each other in the buffer.
func (f *FrameReader) Next() ([]byte, error) {
	h := f.headerLen()
	if f.wp-f.rp < h {
		return nil, nil
	}
	n, err := f.frameLen()
	if err != nil {
		return nil, err
	}
	if f.wp-f.rp < n {
		return nil, nil
	}
	m := f.buf[f.rp : f.rp+n : f.rp+n]
	f.rp += n
	return m, nil
}

// PeekOf returns the next message without taking it, when its type is
// one of types and it is at most max bytes long, reading the socket until
// it is buffered whole; nil (and no error) when it is another message,
// pgproto3 is in the middle of one, or the header is impossible (pgproto3
// reports it). Its error is the read's (ErrWouldBlock in an event loop);
// pgproto3 meets any other again on its own read. skip takes the message.
// It stays valid until the next fill.
func (f *FrameReader) PeekOf(types *[256]bool, max int) ([]byte, error) {
	if f.rem != 0 || f.untyped {
		return nil, nil
	}
	for {
		if f.wp-f.rp >= 5 {
			if !types[f.buf[f.rp]] {
				return nil, nil
			}
			n, err := f.frameLen()
			if err != nil || n > max {
				return nil, nil
			}
			if f.wp-f.rp >= n {
				return f.buf[f.rp : f.rp+n : f.rp+n], nil
			}
		}
		if err := f.Fill(); err != nil {
			if err == ErrWouldBlock {
				return nil, err
			}
			return nil, nil
		}
	}
}

// Skip takes the n bytes of a message PeekOf returned.
func (f *FrameReader) Skip(n int) {
	f.rp += n
	f.msgLen = 0 // lastFrame is pgproto3's: this one is not
}

// Fill reads the socket once, after making room for the rest of a partial
// message at the front of the buffer (growing it for a message larger
// than the buffer). A message Read keeps whole (kept) is the partial one
// from its start, even the part already handed out.
func (f *FrameReader) Fill() error {
	from := f.rp
	if f.rem > 0 && f.kept {
		from = f.msgStart
	}
	if from == f.wp {
		f.rp, f.wp = 0, 0
		if len(f.buf) > frameShrinkSize {
			// A large message has gone; do not keep its buffer.
			f.buf = make([]byte, FrameBufSize)
		}
	} else {
		need := f.headerLen()
		if f.wp-from >= need {
			if n, err := f.frameLenAt(from); err == nil {
				need = n
			}
		}
		switch {
		case need > len(f.buf):
			nb := make([]byte, need)
			f.wp = copy(nb, f.buf[from:f.wp])
			f.buf = nb
			f.rp -= from
			f.msgStart -= from
		case len(f.buf)-from < need:
			f.wp = copy(f.buf, f.buf[from:f.wp])
			f.rp -= from
			f.msgStart -= from
		}
	}
	n, err := f.r.Read(f.buf[f.wp:])
	f.wp += n
	if err == io.EOF && f.wp > f.rp {
		err = io.ErrUnexpectedEOF
	}
	if n > 0 && err != nil && err != ErrWouldBlock {
		// Bytes and an error together: the bytes first; the error comes
		// again from the next read.
		return nil
	}
	return err
}

// LastFrame returns the raw bytes (type, length, body) of the message Read
// has just handed out whole, or nil when there is none: it was larger than
// FrameKeepSize, it is not complete, or nothing of it was read. They stay
// valid until the next Read. The relays forward these bytes rather than
// an encoding of pgproto3's decoding, which may refuse what Postgres sends
// (a ParameterDescription of more than 65535 parameters) or fail to decode
// what Postgres accepts.
func (f *FrameReader) LastFrame() []byte {
	if f.rem != 0 || !f.kept || f.msgLen == 0 {
		return nil
	}
	return f.buf[f.msgStart : f.msgStart+f.msgLen : f.msgStart+f.msgLen]
}

// Read hands out bytes of the current message only (io.Reader, for
// pgproto3). At a message boundary it first buffers the next header, to
// learn the message's length.
func (f *FrameReader) Read(p []byte) (int, error) {
	if f.rem == 0 {
		f.msgLen, f.kept = 0, false
		for f.wp-f.rp < f.headerLen() {
			if err := f.Fill(); err != nil {
				if f.wp > f.rp && err != ErrWouldBlock && !errors.Is(err, os.ErrDeadlineExceeded) {
					// A short header at EOF: let pgproto3 see it. (A
					// deadline stops a relay that reads on later.)
					break
				}
				return 0, err
			}
		}
		f.msgStart = f.rp
		if f.wp-f.rp >= f.headerLen() {
			n, err := f.frameLen()
			if err != nil {
				// pgproto3 reports the bad header itself.
				n = f.wp - f.rp
			} else {
				f.msgLen, f.kept = n, n <= FrameKeepSize
			}
			f.rem = n
		} else {
			f.rem = f.wp - f.rp
		}
	}
	if f.rp == f.wp {
		if err := f.Fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p[:min(len(p), f.rem, f.wp-f.rp)], f.buf[f.rp:])
	f.rp += n
	f.rem -= n
	return n, nil
}

// The relays' direct access to the buffer: they forward runs of whole
// messages from it in one write, without copying them out.

// Pending returns the bytes read but not yet handed out, valid until the
// next Fill.
func (f *FrameReader) Pending() []byte { return f.buf[f.rp:f.wp] }

// PendingFrameLen is the length of the message that starts off bytes into
// Pending, whose header (5 bytes) must be there, or an error for an
// impossible one.
func (f *FrameReader) PendingFrameLen(off int) (int, error) { return f.frameLenAt(f.rp + off) }

// Mark is the position of the next byte to hand out; Since returns the
// bytes handed out from mark on (Next's messages: they lie next to each
// other), valid until the next Fill.
func (f *FrameReader) Mark() int { return f.rp }

// Since: see Mark.
func (f *FrameReader) Since(mark int) []byte { return f.buf[mark:f.rp] }

// Unread gives back the last n bytes Next handed out.
func (f *FrameReader) Unread(n int) { f.rp -= n }

// Discard drops what is buffered (tests and benchmarks replay a buffer).
func (f *FrameReader) Discard() { f.rp, f.wp = 0, 0 }

// InMessage reports whether Read is in the middle of a message.
func (f *FrameReader) InMessage() bool { return f.rem != 0 }

// Max is the largest message body accepted (0: no bound).
func (f *FrameReader) Max() int { return f.max }

// Typed ends the startup phase: messages have a type byte from now on,
// and bodies of at most max bytes (0: no bound).
func (f *FrameReader) Typed(max int) { f.untyped, f.max = false, max }

package refresh

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// copyReadBuffer is the read buffer of a COPY stream's socket.
const copyReadBuffer = 1 << 20

// copyStream is the payload of a `COPY ... TO STDOUT` running on a
// connection taken over from pgconn: the CopyData bytes back to back, read
// straight from the socket with the message framing stripped. Reading it
// through pgconn.CopyTo would cost a message decode and a Write per row.
// Engine.Load reads it from a goroutine of its own (see the accelerator's
// readahead), so its waits for the network are not on DuckDB's threads.
type copyStream struct {
	conn      net.Conn
	ctx       context.Context
	stop      func() bool // unregisters the ctx watcher
	br        *bufio.Reader
	remaining int   // unread bytes of the current CopyData message
	err       error // sticky: io.EOF after ReadyForQuery, or why the COPY failed
	hdr       [5]byte
	// paced is the socket's pacing reader, nil on a TLS connection.
	paced *pacedReader
}

// startCopy sends query (a COPY ... TO STDOUT) on conn, which it takes over:
// conn is unusable afterwards and the stream's Close closes it. Cancelling
// ctx fails the stream.
func startCopy(ctx context.Context, conn *pgconn.PgConn, query string) (*copyStream, error) {
	if err := conn.SyncConn(ctx); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("start copy: %w", err)
	}
	hc, err := conn.Hijack()
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("start copy: %w", err)
	}
	s := &copyStream{conn: hc.Conn, ctx: ctx}
	var src io.Reader = hc.Conn
	if _, isTLS := hc.Conn.(*tls.Conn); !isTLS {
		s.paced = &pacedReader{r: hc.Conn}
		src = s.paced
	}
	s.br = bufio.NewReaderSize(src, copyReadBuffer)
	// A cancelled ctx unblocks the socket read through the deadline.
	s.stop = context.AfterFunc(ctx, func() { _ = hc.Conn.SetDeadline(time.Unix(1, 0)) })
	msg, err := (&pgproto3.Query{String: query}).Encode(nil)
	if err == nil {
		_, err = hc.Conn.Write(msg)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("start copy: %w", s.wrap(err))
	}
	return s, nil
}

// Read implements io.Reader. It returns as many payload bytes as are at
// hand, across message boundaries, and blocks only when it has none.
func (s *copyStream) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if s.remaining == 0 {
			if s.err != nil || total > 0 && s.br.Buffered() < len(s.hdr) {
				break
			}
			if err := s.nextMessage(); err != nil {
				s.err = err
				break
			}
			continue
		}
		m := min(len(p), s.remaining)
		if total > 0 {
			if m = min(m, s.br.Buffered()); m == 0 {
				break
			}
		}
		n, err := s.br.Read(p[:m])
		total += n
		p = p[n:]
		s.remaining -= n
		if err != nil {
			s.err = s.readError(err)
			break
		}
	}
	if total > 0 {
		return total, nil
	}
	return 0, s.err
}

// nextMessage reads messages up to the next CopyData with a payload; it
// returns io.EOF at the end of the COPY and the origin's error if it fails.
func (s *copyStream) nextMessage() error {
	for {
		if _, err := io.ReadFull(s.br, s.hdr[:]); err != nil {
			return s.readError(err)
		}
		typ := s.hdr[0]
		n := int(binary.BigEndian.Uint32(s.hdr[1:])) - 4
		if n < 0 {
			return fmt.Errorf("read copy: message %q has length %d", typ, n+4)
		}
		if typ == 'd' {
			if n > 0 {
				s.remaining = n
				return nil
			}
			continue
		}
		if err := s.control(typ, n); err != nil {
			return err
		}
	}
}

// Close closes the connection; a COPY still running at the origin ends
// when its backend fails to send.
func (s *copyStream) Close() error {
	s.stop()
	return s.conn.Close()
}

// pacedReader pauses briefly after a short read from the socket, so that
// the next read finds more data. The origin sends 8 KiB at a time; reading
// each as soon as it arrives costs a wake-up of this goroutine and a round
// through Go's scheduler per 8 KiB, a noticeable part of a refresh's CPU
// when the origin is the slower side.
//
// It reads plain sockets only. A read of a TLS connection returns at most
// one TLS record (16 KiB) however much has arrived, so every read is short
// and pausing after each one limited a refresh over TLS to about 6 MiB/s
// (one 16 KiB read every 2.5 ms); the TLS layer's own reads of the socket
// already take whatever has arrived.
type pacedReader struct {
	r io.Reader
	// reads and pauses count the socket reads and the pauses after them
	// (the pacing test reads them).
	reads, pauses int64
}

// Pacing: a read of less than pacedShort bytes is followed by a pause of
// pacedPause (about 100-200 KiB of COPY data at the origin's pace).
const (
	pacedShort = 64 << 10
	pacedPause = 500 * time.Microsecond
)

func (p *pacedReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.reads++
	if err == nil && n < pacedShort && len(b) >= pacedShort {
		p.pauses++
		time.Sleep(pacedPause)
	}
	return n, err
}

// control handles a message other than CopyData: nil to go on, io.EOF at
// the end of the COPY, or the error that ended it.
func (s *copyStream) control(typ byte, n int) error {
	br := s.br
	switch typ {
	case 'E': // ErrorResponse: the COPY failed
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return s.readError(err)
		}
		var msg pgproto3.ErrorResponse
		if err := msg.Decode(body); err != nil {
			return fmt.Errorf("read copy: decode error response: %w", err)
		}
		return pgconn.ErrorResponseToPgError(&msg)
	case 'Z': // ReadyForQuery: the COPY is over
		if _, err := br.Discard(n); err != nil {
			return s.readError(err)
		}
		return io.EOF
	case 'H', 'c', 'C', 'N', 'S', 'A', 'K':
		// CopyOutResponse, CopyDone, CommandComplete, notices, parameter
		// status, notifications: nothing to pass on.
		if _, err := br.Discard(n); err != nil {
			return s.readError(err)
		}
		return nil
	}
	return fmt.Errorf("read copy: unexpected message %q", typ)
}

// readError describes a failed socket read; one caused by ctx is reported
// as ctx's error.
func (s *copyStream) readError(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read copy: %w", s.wrap(err))
}

// wrap reports a failure caused by ctx as ctx's error.
func (s *copyStream) wrap(err error) error {
	if cerr := s.ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%w)", cerr, err)
	}
	return err
}

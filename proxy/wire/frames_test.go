package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// chunkedReader returns data in pieces of the given sizes, with a "would
// block" between pieces, as a socket in an event loop does.
type chunkedReader struct {
	data   []byte
	sizes  []byte
	i      int
	paused bool
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	if c.paused {
		c.paused = false
		return 0, ErrWouldBlock
	}
	c.paused = true
	n := len(c.data)
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)]) + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func msgs(t testing.TB, ms ...pgproto3.Message) []byte {
	var out []byte
	for _, m := range ms {
		var err error
		if out, err = m.Encode(out); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// next returns whole messages, one after another in the buffer, however
// the bytes arrive; fill grows the buffer for a message larger than it.
func TestFrameReader_Next(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3*FrameBufSize+17)
	data := msgs(t,
		&pgproto3.Query{String: "SELECT 1"},
		&pgproto3.Parse{Query: string(big)},
		&pgproto3.Sync{},
		&pgproto3.CopyData{Data: big[:FrameBufSize-5]},
		&pgproto3.Terminate{},
	)
	for _, sizes := range [][]byte{nil, {0}, {6, 200}, {255}} {
		fr := NewFrameReader(&chunkedReader{data: data, sizes: sizes}, false)
		var got []byte
		var types []byte
		for {
			m, err := fr.Next()
			if err != nil {
				t.Fatal(err)
			}
			if m != nil {
				if n := int(binary.BigEndian.Uint32(m[1:])); n+1 != len(m) {
					t.Fatalf("frame of %d bytes says %d", len(m), n+1)
				}
				got = append(got, m...)
				types = append(types, m[0])
				continue
			}
			if err := fr.Fill(); errors.Is(err, io.EOF) {
				break
			} else if err != nil && err != ErrWouldBlock {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, data) || string(types) != "QPSdX" {
			t.Fatalf("sizes %v: got types %q, %d of %d bytes", sizes, types, len(got), len(data))
		}
		if len(fr.buf) > frameShrinkSize {
			t.Fatalf("buffer of %d bytes kept", len(fr.buf))
		}
	}
}

// Under pgproto3, Read hands out one message at a time: pgproto3 decodes
// the same messages, and its buffer is empty between them.
func TestFrameReader_ReadUnderPgproto3(t *testing.T) {
	startup := msgs(t, &pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}})
	rest := msgs(t, &pgproto3.Query{String: "SELECT 1"}, &pgproto3.Sync{}, &pgproto3.Terminate{})
	fr := NewFrameReader(&chunkedReader{data: append(startup, rest...), sizes: []byte{2, 40}}, true)
	be := pgproto3.NewBackend(fr, io.Discard)
	for {
		m, err := be.ReceiveStartupMessage()
		if err == ErrWouldBlock {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*pgproto3.StartupMessage); !ok {
			t.Fatalf("got %T", m)
		}
		break
	}
	fr.untyped = false
	var got []string
	for len(got) < 3 {
		m, err := be.Receive()
		if err == ErrWouldBlock {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if fr.rem != 0 {
			t.Fatalf("after %T, %d bytes of it are still to hand out", m, fr.rem)
		}
		switch m.(type) {
		case *pgproto3.Query:
			got = append(got, "Q")
		case *pgproto3.Sync:
			got = append(got, "S")
		case *pgproto3.Terminate:
			got = append(got, "X")
		}
	}
	if len(got) != 3 || got[0] != "Q" || got[1] != "S" || got[2] != "X" {
		t.Fatalf("got %v", got)
	}
}

// lastFrame returns the raw bytes of each message pgproto3 has just
// received through the reader, however they arrive: also a message larger
// than the buffer, and one pgproto3 cannot encode again (a
// ParameterDescription of 65,536 parameters, as Postgres sends it with a
// wrapped count); none for a message larger than FrameKeepSize.
func TestFrameReader_LastFrame(t *testing.T) {
	oids := make([]byte, 2, 2+4*65536) // count 0: 65536 wrapped
	for range 65536 {
		oids = append(oids, 0, 0, 0, 25)
	}
	wrapped := append([]byte{'t', 0, 0, 0, 0}, oids...)
	binary.BigEndian.PutUint32(wrapped[1:], uint32(len(wrapped)-1))
	huge := msgs(t, &pgproto3.DataRow{Values: [][]byte{bytes.Repeat([]byte("h"), FrameKeepSize)}})
	frames := [][]byte{
		msgs(t, &pgproto3.ParseComplete{}),
		msgs(t, &pgproto3.DataRow{Values: [][]byte{[]byte("1"), nil, bytes.Repeat([]byte("x"), 3*FrameBufSize)}}),
		wrapped,
		huge,
		msgs(t, &pgproto3.ReadyForQuery{TxStatus: 'I'}),
	}
	for _, sizes := range [][]byte{nil, {0}, {4, 200}} {
		fr := NewFrameReader(&chunkedReader{data: bytes.Join(frames, nil), sizes: sizes}, false)
		fe := pgproto3.NewFrontend(fr, io.Discard)
		for i, want := range frames {
			var m pgproto3.BackendMessage
			var err error
			for m, err = fe.Receive(); err == ErrWouldBlock; m, err = fe.Receive() {
			}
			if err != nil {
				t.Fatalf("sizes %v, message %d: %v", sizes, i, err)
			}
			got := fr.LastFrame()
			if len(want) > FrameKeepSize {
				if got != nil {
					t.Fatalf("sizes %v: %T of %d bytes kept whole", sizes, m, len(want))
				}
				continue
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("sizes %v, %T: lastFrame %d bytes, want %d", sizes, m, len(got), len(want))
			}
		}
	}
}

func TestFrameReader_BadHeaders(t *testing.T) {
	fr := NewFrameReader(bytes.NewReader([]byte{'Q', 0xff, 0xff, 0xff, 0xf0}), false)
	if err := fr.Fill(); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Next(); err == nil {
		t.Fatal("negative length accepted")
	}
	fr = NewFrameReader(bytes.NewReader([]byte{'Q', 0, 0x20, 0, 0}), false)
	fr.max = 1 << 16
	if err := fr.Fill(); err != nil {
		t.Fatal(err)
	}
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if _, err := fr.Next(); !errors.As(err, &tooBig) || tooBig.ActualBodyLen != 2<<20-4 {
		t.Fatalf("oversized message: %v", err)
	}
}

// FuzzFrameReader: whatever the bytes and however they arrive, next never
// panics and returns well-formed frames that are the input's bytes in
// order; Read returns the input's bytes and never crosses a frame.
func FuzzFrameReader(f *testing.F) {
	f.Add(msgs(f, &pgproto3.Query{String: "SELECT 1"}, &pgproto3.Sync{}), []byte{3})
	f.Add([]byte{'Q', 0xff, 0xff, 0xff, 0xff}, []byte{})
	f.Add([]byte{'d', 0, 0, 0x40, 0, 1, 2, 3}, []byte{0, 1})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		fr := NewFrameReader(&chunkedReader{data: bytes.Clone(data), sizes: sizes}, false)
		fr.max = 1 << 20
		var got []byte
		for {
			m, err := fr.Next()
			if err != nil {
				break
			}
			if m != nil {
				if n := int(binary.BigEndian.Uint32(m[1:])); n+1 != len(m) {
					t.Fatalf("frame of %d bytes says %d", len(m), n+1)
				}
				got = append(got, m...)
				continue
			}
			if err := fr.Fill(); err != nil && err != ErrWouldBlock {
				break
			}
		}
		if !bytes.HasPrefix(data, got) {
			t.Fatal("frames are not the input's bytes")
		}

		fr = NewFrameReader(&chunkedReader{data: bytes.Clone(data), sizes: sizes}, false)
		got = got[:0]
		p := make([]byte, 64)
		for {
			n, err := fr.Read(p)
			got = append(got, p[:n]...)
			if fr.rem < 0 {
				t.Fatalf("read past the frame: rem %d", fr.rem)
			}
			if err != nil && err != ErrWouldBlock {
				break
			}
		}
		if !bytes.HasPrefix(data, got) {
			t.Fatal("Read returned other bytes than the input's")
		}
	})
}

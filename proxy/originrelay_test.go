package proxy

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/proxy/wire"
)

// onceReader returns its data in one read, then "would block" for ever.
type onceReader struct{ data []byte }

func (o *onceReader) Read(p []byte) (int, error) {
	if len(o.data) == 0 {
		return 0, wire.ErrWouldBlock
	}
	n := copy(p, o.data)
	o.data = o.data[n:]
	return n, nil
}

// countingWriter counts the writes a relay makes.
type countingWriter struct {
	writes int
	bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// The origin's answer that one read brings reaches the client in one write,
// on both relays: with an acceleration (decoded messages, flushed when
// nothing more is buffered: pgproto3 now holds one message at most, the
// frame reader the rest) and pass-through.
func TestOriginRelay_OneWritePerRead(t *testing.T) {
	answer := []pgproto3.Message{&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("n"), DataTypeOID: 23, DataTypeSize: 4, TypeModifier: -1}}}}
	for i := range 50 {
		answer = append(answer, &pgproto3.DataRow{Values: [][]byte{[]byte(fmt.Sprint(i))}})
	}
	answer = append(answer, &pgproto3.CommandComplete{CommandTag: []byte("SELECT 50")}, &pgproto3.ReadyForQuery{TxStatus: 'I'})
	data := encodeAll(t, answer...)
	for _, accel := range []bool{true, false} {
		out := &countingWriter{}
		ss := journalSession()
		ss.log = zerolog.Nop()
		ss.state.params = map[string]string{}
		ss.origin.fr = wire.NewFrameReader(&onceReader{data: data}, false)
		ss.origin.fe = pgproto3.NewFrontend(ss.origin.fr, io.Discard)
		ss.client.be = pgproto3.NewBackend(bytes.NewReader(nil), out)
		ss.client.w = out
		if accel {
			ss.accel = &Accel{}
			ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemQuery})
		} else {
			ss.pass = &passState{}
			ss.pass.syncs.Store(1)
		}
		for {
			ended, idle := ss.relayOne(true)
			if ended {
				t.Fatalf("accel %v: the relay ended", accel)
			}
			if idle {
				break
			}
		}
		if !bytes.Equal(out.Bytes(), data) || out.writes != 1 {
			t.Errorf("accel %v: %d writes of %d bytes, want 1 of the %d read", accel, out.writes, out.Len(), len(data))
		}
	}
}

func TestCompletes(t *testing.T) {
	cases := []struct {
		msg                  pgproto3.BackendMessage
		head                 originlink.ItemKind
		done, failed, async_ bool
	}{
		{&pgproto3.ParseComplete{}, originlink.ItemParse, true, false, false},
		{&pgproto3.ParameterDescription{}, originlink.ItemDescribeStatement, false, false, false},
		{&pgproto3.RowDescription{}, originlink.ItemDescribeStatement, true, false, false},
		{&pgproto3.RowDescription{}, originlink.ItemQuery, false, false, false},
		{&pgproto3.CommandComplete{}, originlink.ItemQuery, false, false, false},
		{&pgproto3.CommandComplete{}, originlink.ItemExecute, true, false, false},
		{&pgproto3.PortalSuspended{}, originlink.ItemExecute, true, false, false},
		{&pgproto3.ReadyForQuery{}, originlink.ItemQuery, true, false, false},
		{&pgproto3.ErrorResponse{}, originlink.ItemQuery, false, false, false},
		{&pgproto3.ErrorResponse{}, originlink.ItemBind, false, true, false},
		{&pgproto3.NoticeResponse{}, originlink.ItemBind, false, false, true},
		{&pgproto3.NotificationResponse{}, originlink.ItemSync, false, false, true},
	}
	for _, c := range cases {
		done, failed, async := completes(c.msg, c.head, true)
		if done != c.done || failed != c.failed || async != c.async_ {
			t.Errorf("%T with head %v: got %v %v %v", c.msg, c.head, done, failed, async)
		}
	}
}

package originlink

import (
	"errors"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestUnavailableOrigin_AnswersLikeAFailingSession: a Query gets an error
// and ReadyForQuery; an extended-protocol stretch gets one error, nothing
// for the rest, and ReadyForQuery at its Sync; Flush nothing; a message
// split across writes is answered once whole; Close ends reads.
func TestUnavailableOrigin_AnswersLikeAFailingSession(t *testing.T) {
	u := NewStandIn("the origin is unavailable", "hint")
	fe := pgproto3.NewFrontend(u, u)
	send := func(msgs ...pgproto3.FrontendMessage) {
		t.Helper()
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				got = "E " + m.Severity + " " + m.Code
			case *pgproto3.ReadyForQuery:
				got = "Z " + string(m.TxStatus)
			default:
				t.Fatalf("unexpected %T", msg)
			}
			if got != w {
				t.Fatalf("got %q, want %q", got, w)
			}
		}
		if !u.Idle() {
			t.Fatal("answers left over")
		}
	}
	send(&pgproto3.Query{String: "INSERT INTO t VALUES (1)"})
	expect("E ERROR 08006", "Z I")
	send(&pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Flush{})
	expect("E ERROR 08006")
	send(&pgproto3.Close{ObjectType: 'S'}, &pgproto3.Sync{})
	expect("Z I")

	// A message written in two pieces.
	buf, err := (&pgproto3.Query{String: "SELECT 2"}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Write(buf[:3]); err != nil {
		t.Fatal(err)
	}
	if u.Idle() {
		t.Fatal("a partial message is not idle")
	}
	if _, err := u.Write(buf[3:]); err != nil {
		t.Fatal(err)
	}
	expect("E ERROR 08006", "Z I")

	_ = u.Close()
	if _, err := u.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
	if _, err := u.Write(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
}

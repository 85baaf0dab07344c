package proxy

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
	u := newUnavailableOrigin("the origin is unavailable", "hint")
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
		if !u.idle() {
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
	if u.idle() {
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

// TestLoginKeyOf: startup parameters key a login, except an
// application_name Postgres reports as it came.
func TestLoginKeyOf(t *testing.T) {
	base := map[string]string{"user": "u", "database": "d"}
	with := func(k, v string) map[string]string {
		m := map[string]string{"user": "u", "database": "d"}
		m[k] = v
		return m
	}
	if loginKeyOf(base) != loginKeyOf(with("application_name", "psql")) {
		t.Error("a plain application_name changed the key")
	}
	if loginKeyOf(base) == loginKeyOf(with("application_name", "caf\u00e9")) {
		t.Error("a non-ASCII application_name (which Postgres escapes) did not change the key")
	}
	if loginKeyOf(base) == loginKeyOf(with("options", "-c search_path=x")) {
		t.Error("options did not change the key")
	}
	if loginKeyOf(base) == loginKeyOf(map[string]string{"user": "u", "database": "e"}) {
		t.Error("the database did not change the key")
	}
}

package proxy

import (
	"errors"
	"net"
	"strings"
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

// TestTransactionScoped: SET LOCAL and SET TRANSACTION end with their
// transaction; other SETs are session state.
func TestTransactionScoped(t *testing.T) {
	for sql, want := range map[string]bool{
		"SET LOCAL statement_timeout = 0":              true,
		"set transaction isolation level serializable": true,
		"SET TimeZone = 'UTC'":                         false,
		"SET SESSION search_path = x":                  false,
		"RESET ALL":                                    false,
	} {
		if got := transactionScoped(sql); got != want {
			t.Errorf("transactionScoped(%q) = %v", sql, got)
		}
	}
}

// TestSessionStateCall: session-level advisory locks and set_config make a
// session's origin state one that cannot be set up again; transaction-level
// locks do not.
func TestSessionStateCall(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT pg_advisory_lock(1)":                   "pg_advisory_lock",
		"select PG_TRY_ADVISORY_LOCK_SHARED(2)":        "pg_try_advisory_lock",
		"SELECT pg_advisory_xact_lock(1)":              "",
		"SELECT pg_try_advisory_xact_lock(1), 1":       "",
		"SELECT set_config('search_path', 'x', false)": "set_config",
		"SELECT * FROM t WHERE id = 1":                 "",
		// The first of the list, wherever it is in the text.
		"SELECT setval('s', 1), pg_advisory_lock(1)": "pg_advisory_lock",
		"SELECT NextVal('s')":                        "nextval",
		"/* dblink_connect */ SELECT 1":              "dblink_connect",
		"SELECT 'setva'":                             "",
		"":                                           "",
	} {
		if got := sessionStateCall(sql); got != want {
			t.Errorf("sessionStateCall(%q) = %q, want %q", sql, got, want)
		}
	}
}

// TestSessionStateCall_AsAPlainSearch: the one-pass search finds what a
// case-insensitive search for each name in turn finds, Unicode folds
// (ſ for s, K for k) included.
func TestSessionStateCall_AsAPlainSearch(t *testing.T) {
	plain := func(sql string) string {
		for _, fn := range sessionStateFns {
			for i := 0; i+len(fn) <= len(sql); i++ {
				if strings.EqualFold(sql[i:i+len(fn)], fn) {
					return fn
				}
			}
		}
		return ""
	}
	texts := []string{"SELECT ſetval('s', 1)", "select SETVAL('s', 1)", "SELECT nextvaL", "nextva", "pg_advisory_loc",
		"SELECT 1 /* Set_Config */", "dblink_connectpg_advisory_lock", "PG_TRY_ADVISORY_LOCK(1); setval", "séLECT"}
	for _, a := range texts {
		for _, b := range texts {
			sql := a + " " + b
			if got, want := sessionStateCall(sql), plain(sql); got != want {
				t.Errorf("sessionStateCall(%q) = %q, a plain search %q", sql, got, want)
			}
		}
	}
}

func TestEmptyQueryAndSelectOne(t *testing.T) {
	for sql, want := range map[string]bool{
		"": true, " ;; ": true, "-- ping": true, "-- a\n/* b /* nested */ c */;\n": true, "/* open": false,
		"SELECT 1": false, "-- x\nSELECT 1": false, ";x": false,
	} {
		if got := emptyQuery(sql); got != want {
			t.Errorf("emptyQuery(%q) = %v", sql, got)
		}
	}
	for sql, want := range map[string]bool{
		"SELECT 1": true, "select 1;": true, " Select\n1 ; ": true, "SELECT 1;;": false, "SELECT 10": false,
		"SELECT 1 AS a": false, "SELECT1": false, "SELECT 1, 2": false, "SELECT '1'": false, "-- x\nSELECT 1": false,
	} {
		if got := isSelectOne(sql); got != want {
			t.Errorf("isSelectOne(%q) = %v", sql, got)
		}
	}
}

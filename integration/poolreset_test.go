package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// asyncpgReset is what asyncpg's pool sends when it takes a connection
// back (Connection.reset, asyncpg 0.27).
const asyncpgReset = "SELECT pg_advisory_unlock_all();\nCLOSE ALL;\nUNLISTEN *;\nRESET ALL;"

// queryTrace sends sql as a simple Query and returns every message up to
// the ReadyForQuery, each with its fields.
func queryTrace(ctx context.Context, c *pgconn.PgConn, sql string) ([]string, error) {
	fe := c.Frontend()
	fe.Send(&pgproto3.Query{String: sql})
	if err := fe.Flush(); err != nil {
		return nil, err
	}
	var out []string
	for {
		msg, err := c.ReceiveMessage(ctx)
		if err != nil {
			return out, err
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			out = append(out, "ErrorResponse "+m.Code+" "+m.Message)
		case *pgproto3.DataRow:
			out = append(out, fmt.Sprintf("DataRow %q nil=%v", m.Values, m.Values[0] == nil))
		case *pgproto3.ReadyForQuery:
			return append(out, "ReadyForQuery "+string(m.TxStatus)), nil
		default:
			out = append(out, fmt.Sprintf("%T %+v", msg, msg))
		}
	}
}

// TestSessions_PoolResetWithoutTheOrigin: the reset asyncpg's pool sends
// when it takes a connection back is answered by pgaccel, message for
// message as the origin answers it, in a session with no origin
// connection and nothing to reset, so pooled asyncpg connections hold no
// origin backend (before, as several statements, it went to the origin
// and left the session's origin state unreplayable: held for good); its
// statements one at a time in the extended protocol too. After a SET it
// goes to the origin, which reports what RESET ALL changes.
func TestSessions_PoolResetWithoutTheOrigin(t *testing.T) {
	a, dsn := startShortLinkApp(t)
	ctx := ctxT(t)
	direct, err := pgconn.Connect(ctx, origin.DSN(sessUser, sessPass))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	same := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", what, got, want)
		}
	}
	for _, sql := range []string{asyncpgReset, "RESET ALL", "SELECT pg_catalog.pg_advisory_unlock_all()", "CLOSE ALL; UNLISTEN *"} {
		want, err := queryTrace(ctx, direct, sql)
		if err != nil {
			t.Fatal(err)
		}
		got, err := queryTrace(ctx, c, sql)
		if err != nil {
			t.Fatal(err)
		}
		same(sql, got, want)
	}
	for _, sql := range []string{"SELECT pg_advisory_unlock_all()", "CLOSE ALL", "UNLISTEN *", "RESET ALL"} {
		want, err := stretchTrace(ctx, direct, sql)
		if err != nil {
			t.Fatal(err)
		}
		got, err := stretchTrace(ctx, c, sql)
		if err != nil {
			t.Fatal(err)
		}
		same("extended "+sql, got, want)
	}
	// The one backend is the direct connection's.
	if n := heldBackends(t, a); n != 1 {
		t.Errorf("a session that only reset holds %d origin backends", n-1)
	}
	// Several statements in one Parse: the origin's 42601.
	got, err := stretchTrace(ctx, c, "CLOSE ALL; RESET ALL")
	if err != nil || !slices.Equal(got, []string{"ErrorResponse", "ReadyForQuery I"}) {
		t.Errorf("extended reset of two statements: %q %v", got, err)
	}

	// With a setting changed, RESET ALL changes it back: the origin's.
	for _, conn := range []*pgconn.PgConn{direct, c} {
		if _, err := queryTrace(ctx, conn, "SET application_name = 'changed'"); err != nil {
			t.Fatal(err)
		}
	}
	want, err := queryTrace(ctx, direct, asyncpgReset)
	if err != nil {
		t.Fatal(err)
	}
	got, err = queryTrace(ctx, c, asyncpgReset)
	if err != nil {
		t.Fatal(err)
	}
	same("reset after a SET", got, want)
	if !slices.ContainsFunc(want, func(s string) bool { return strings.Contains(s, "application_name") }) {
		t.Errorf("the origin reported no application_name after RESET ALL: %q", want)
	}
}

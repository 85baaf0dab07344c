package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// stretchTrace sends one extended-protocol stretch, each statement parsed,
// bound and executed unnamed, then a Sync, and returns what comes back up
// to the ReadyForQuery, a line a message (an error without its code: the
// origin's and pgaccel's failing statements differ).
func stretchTrace(ctx context.Context, c *pgconn.PgConn, stmts ...string) ([]string, error) {
	fe := c.Frontend()
	for _, s := range stmts {
		fe.Send(&pgproto3.Parse{Query: s})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{})
	}
	fe.Send(&pgproto3.Sync{})
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
		case *pgproto3.ParameterStatus:
			out = append(out, "ParameterStatus "+m.Name+"="+m.Value)
		case *pgproto3.ErrorResponse:
			out = append(out, "ErrorResponse")
		case *pgproto3.CommandComplete:
			out = append(out, "CommandComplete "+string(m.CommandTag))
		case *pgproto3.ReadyForQuery:
			return append(out, "ReadyForQuery "+string(m.TxStatus)), nil
		default:
			out = append(out, fmt.Sprintf("%T", msg)[len("*pgproto3."):])
		}
	}
}

// TestSessions_SetInAFailedStretch: a SET that pgaccel answers itself in
// an extended-protocol stretch (no origin connection) is undone when a
// later statement of the stretch fails, as Postgres rolls back the
// stretch's implicit transaction, and kept when none fails; the client
// sees the same messages as from the origin, and the origin connection the
// session opens later gets the settings Postgres would have.
func TestSessions_SetInAFailedStretch(t *testing.T) {
	a, dsn := startShortLinkApp(t)
	ctx := ctxT(t)

	const (
		set = "SET application_name = 'in-stretch'"
		// Fails at its Parse at the origin (the literal is no int).
		failing = "SELECT v FROM sess_orders WHERE id = 'x'"
	)
	// Postgres, directly.
	directConn := connect(t, origin.DSN(sessUser, sessPass))
	direct := directConn.PgConn()
	wantFailed, err := stretchTrace(ctx, direct, set, failing)
	if err != nil {
		t.Fatal(err)
	}
	wantApp := direct.ParameterStatus("application_name")
	wantKept, err := stretchTrace(ctx, direct, "SET application_name = 'kept'", "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("origin: failed stretch %q (application_name %q); kept %q", wantFailed, wantApp, wantKept)
	if err := directConn.Close(ctx); err != nil {
		t.Fatal(err)
	}

	check := func(c *pgconn.PgConn, failing string) {
		t.Helper()
		got, err := stretchTrace(ctx, c, set, failing)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, wantFailed) {
			t.Errorf("failed stretch (%s): %q, want the origin's %q", failing, got, wantFailed)
		}
		if got := c.ParameterStatus("application_name"); got != wantApp {
			t.Errorf("application_name after the failed stretch (%s): %q, want %q", failing, got, wantApp)
		}
		got, err = stretchTrace(ctx, c, "SET application_name = 'kept'", "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, wantKept) {
			t.Errorf("stretch that succeeds: %q, want the origin's %q", got, wantKept)
		}
		if got := c.ParameterStatus("application_name"); got != "kept" {
			t.Errorf("application_name after the stretch that succeeded: %q, want kept", got)
		}
		// Failed again, now after a kept SET (with an origin connection
		// the first failure opened, if it is still there, the SET runs
		// there): not kept for replay either.
		if _, err := stretchTrace(ctx, c, set, failing); err != nil {
			t.Fatal(err)
		}
		if got := c.ParameterStatus("application_name"); got != "kept" {
			t.Errorf("application_name after the second failed stretch: %q, want kept", got)
		}
	}

	// With the origin up: the failing statement opens an origin
	// connection in the middle of the stretch, which gets the SET inside
	// the stretch and rolls it back with it.
	local := connect(t, dsn)
	pgtest.WaitFor(t, "no origin backend", func() bool { return heldBackends(t, a) == 0 })
	check(local.PgConn(), failing)

	// The same with a statement only the origin can answer (a catalog
	// query), which opens the connection as it goes there.
	catalog := connect(t, dsn)
	pgtest.WaitFor(t, "no origin backend", func() bool { return heldBackends(t, a) == 0 })
	check(catalog.PgConn(), "SELECT nope FROM pg_catalog.pg_class")

	// During an outage, a statement that needs the origin fails (08006)
	// at its Parse, as the failing one above does at the origin.
	resume := origin.PauseDuring(t)
	out := connect(t, dsn)
	check(out.PgConn(), "SELECT count(*) FROM pg_catalog.pg_class")
	if got, err := readAll(ctx, out); err != nil || got != wantReads {
		t.Errorf("reads after the stretches: %q %v", got, err)
	}
	if err := resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The origin connection a statement opens now has what Postgres
	// would: the SET that failed with its stretch is not replayed.
	for i, c := range []*pgconn.PgConn{local.PgConn(), catalog.PgConn(), out.PgConn()} {
		pgtest.WaitFor(t, "the origin back", func() bool {
			_, err := c.Exec(ctx, "SELECT 1 FROM pg_catalog.pg_class LIMIT 1").ReadAll()
			return err == nil
		})
		res, err := c.Exec(ctx, "SELECT current_setting('application_name') FROM pg_catalog.pg_class LIMIT 1").ReadAll()
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if got := string(res[0].Rows[0][0]); got != "kept" {
			t.Errorf("session %d: application_name at the origin %q, want kept", i, got)
		}
	}
}

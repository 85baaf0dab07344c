package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// transcript records what a client saw, so that a session run directly
// against the origin and the same session run through the proxy can be
// compared byte for byte.
type transcript struct{ b strings.Builder }

func (tr *transcript) printf(format string, args ...any) { fmt.Fprintf(&tr.b, format+"\n", args...) }

func (tr *transcript) String() string { return tr.b.String() }

// result appends a pgconn result: its columns, its rows as raw bytes, its
// command tag or error.
func (tr *transcript) result(label string, r *pgconn.Result) {
	tr.printf("-- %s", label)
	for _, f := range r.FieldDescriptions {
		tr.printf("col %q type=%d mod=%d size=%d fmt=%d tbl=%d att=%d", f.Name, f.DataTypeOID, f.TypeModifier, f.DataTypeSize, f.Format, f.TableOID, f.TableAttributeNumber)
	}
	for _, row := range r.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				vals[i] = "NULL"
			} else if len(v) > 120 {
				vals[i] = fmt.Sprintf("%q...(%d bytes, fnv %x)", v[:40], len(v), sumBytes(v))
			} else {
				vals[i] = fmt.Sprintf("%q", v)
			}
		}
		tr.printf("row %s", strings.Join(vals, " | "))
	}
	if r.Err != nil {
		tr.err(r.Err)
		return
	}
	tr.printf("tag %s", r.CommandTag.String())
}

// err appends an error, with the SQLSTATE when it is a Postgres error.
func (tr *transcript) err(err error) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		tr.printf("error %s %s: %s (detail %q hint %q pos %d)", pe.Severity, pe.Code, pe.Message, pe.Detail, pe.Hint, pe.Position)
		return
	}
	tr.printf("error %v", err)
}

// differential runs session once directly on the origin and once through
// the proxy and fails the test when the two transcripts differ.
func differential(t *testing.T, p *testProxy, user, password string, session func(t *testing.T, c *pgx.Conn, tr *transcript)) {
	t.Helper()
	run := func(dsn string) string {
		c := connect(t, dsn)
		var tr transcript
		session(t, c, &tr)
		return tr.String()
	}
	direct := run(origin.DSN(user, password))
	proxied := run(p.DSN(user, password))
	if direct != proxied {
		t.Fatalf("proxy transcript differs from the origin's\n--- direct\n%s\n--- proxy\n%s", direct, proxied)
	}
	if strings.TrimSpace(direct) == "" {
		t.Fatal("empty transcript: the session recorded nothing")
	}
}

// simple runs sql with the simple query protocol and records every result.
func simple(ctx context.Context, c *pgx.Conn, tr *transcript, sql string) {
	results, err := c.PgConn().Exec(ctx, sql).ReadAll()
	for i, r := range results {
		tr.result(fmt.Sprintf("simple %q #%d", sql, i), r)
	}
	if err != nil {
		tr.err(err)
	}
	tr.printf("txstatus %c", c.PgConn().TxStatus())
}

// extended runs sql with Parse/Bind/Execute and records the result.
func extended(ctx context.Context, c *pgx.Conn, tr *transcript, sql string, params [][]byte, resultFormats []int16) {
	r := c.PgConn().ExecParams(ctx, sql, params, nil, nil, resultFormats).Read()
	tr.result(fmt.Sprintf("extended %q", sql), r)
	tr.printf("txstatus %c", c.PgConn().TxStatus())
}

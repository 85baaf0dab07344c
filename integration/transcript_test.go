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
	differentialDSN(t, origin.DSN(user, password), p.DSN(user, password), session)
}

// differentialDSN runs session on a connection to each DSN and compares.
func differentialDSN(t *testing.T, directDSN, proxyDSN string, session func(t *testing.T, c *pgx.Conn, tr *transcript)) {
	t.Helper()
	run := func(dsn string) string {
		c := connect(t, dsn)
		var tr transcript
		session(t, c, &tr)
		return tr.String()
	}
	direct := run(directDSN)
	proxied := run(proxyDSN)
	if direct != proxied {
		t.Fatalf("proxy transcript differs from the origin's:\n%s", lineDiff(direct, proxied))
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

// lineDiff shows the first lines where two transcripts differ, with the
// label of the step they belong to.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	label := ""
	shown := 0
	for i := 0; i < max(len(al), len(bl)) && shown < 8; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if strings.HasPrefix(x, "-- ") {
			label = x
		}
		if x != y {
			fmt.Fprintf(&out, "%s\n  direct: %s\n  proxy:  %s\n", label, x, y)
			shown++
		}
	}
	return out.String()
}

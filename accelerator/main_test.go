package accelerator

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }

// openEngine opens an engine with its data dir in a test temp dir.
func openEngine(t testing.TB, dir string) *Engine {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	log := zerolog.Nop()
	if os.Getenv("PGACCEL_TEST_LOG") != "" {
		log = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
	}
	e, err := Open(Options{DataDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// testDataset is a dataset of the origin table public.<table>.
func testDataset(name, table, mode string) *catalog.Dataset {
	return &catalog.Dataset{
		From: "postgres:public." + table, Schema: "public", Table: table, Name: name,
		Acceleration: catalog.Acceleration{Enabled: true, Engine: catalog.EngineDuckDB, Mode: mode, RefreshMode: catalog.RefreshFull},
	}
}

// originExec runs sql on the test origin.
func originExec(t testing.TB, sql string) {
	t.Helper()
	if err := srv.Exec(context.Background(), sql); err != nil {
		t.Fatalf("origin: %v\n%s", err, sql)
	}
}

// originConn connects to the test origin as the superuser.
func originConn(t testing.TB) *pgconn.PgConn {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), srv.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// originColumns reads the column specs of public.<table>, as the refresh
// package does.
func originColumns(t testing.TB, table string) []ColumnSpec {
	t.Helper()
	c := originConn(t)
	res := c.ExecParams(context.Background(), `
		SELECT a.attname, COALESCE(NULLIF(t.typbasetype, 0), a.atttypid),
		       CASE WHEN t.typbasetype <> 0 THEN t.typtypmod ELSE a.atttypmod END,
		       format_type(a.atttypid, a.atttypmod),
		       CASE WHEN bt.typcategory = 'A' THEN bt.typelem ELSE 0 END
		FROM pg_attribute a
		JOIN pg_type t ON t.oid = a.atttypid
		JOIN pg_type bt ON bt.oid = COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)
		WHERE a.attrelid = ('public.' || quote_ident($1))::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, [][]byte{[]byte(table)}, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var cols []ColumnSpec
	for _, r := range res.Rows {
		oid, _ := strconv.ParseUint(string(r[1]), 10, 32)
		mod, _ := strconv.ParseInt(string(r[2]), 10, 32)
		elem, _ := strconv.ParseUint(string(r[4]), 10, 32)
		cols = append(cols, ColumnSpec{Name: string(r[0]), TypeOID: uint32(oid), TypeMod: int32(mod), TypeName: string(r[3]), ElemOID: uint32(elem)})
	}
	return cols
}

// copyQuery returns the binary COPY of sql as a stream that fails like the
// origin does when the COPY fails.
func copyQuery(ctx context.Context, t testing.TB, sql string) io.Reader {
	t.Helper()
	c, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		defer c.Close(context.Background())
		_, err := c.CopyTo(ctx, pw, fmt.Sprintf("COPY (%s) TO STDOUT (FORMAT binary)", sql))
		pw.CloseWithError(err)
	}()
	return pr
}

// loadOrigin loads public.<table> into ds.
func loadOrigin(t testing.TB, e *Engine, ds *catalog.Dataset) LoadStats {
	t.Helper()
	ctx := context.Background()
	cols := originColumns(t, ds.Table)
	stats, err := e.Load(ctx, ds, cols, copyQuery(ctx, t, "SELECT * FROM public."+ds.Table))
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// queryInt runs a query returning one integer.
func queryInt(t testing.TB, e *Engine, sql string) int64 {
	t.Helper()
	rows, err := e.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", sql, rows.Err())
	}
	switch v := rows.Values()[0].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	default:
		t.Fatalf("%s: got %T", sql, v)
	}
	return 0
}

// duckRows runs a query on the engine and returns its rows' values.
func duckRows(t testing.TB, e *Engine, sql string) [][]any {
	t.Helper()
	rows, err := e.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		out = append(out, append([]any(nil), rows.Values()...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

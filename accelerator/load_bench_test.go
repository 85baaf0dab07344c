package accelerator

import (
	"bufio"
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/catalog"
)

// The load benchmarks compare ways of getting a binary COPY stream into
// DuckDB on a lineitem-shaped table (TPC-H's widest: bigint, int, numeric,
// char, date, varchar). PGACCEL_BENCH_ROWS sets its size (default 1000000).
//
//	go test ./accelerator -run '^$' -bench BenchmarkLoad -benchtime 1x
//
// The results are in doc.go.

// benchRows is the size of the benchmark table.
func benchRows(b *testing.B) int {
	n := 1000000
	if s := os.Getenv("PGACCEL_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("PGACCEL_BENCH_ROWS=%q is not a positive number", s)
		}
		n = v
	}
	return n
}

// ensureLineitem creates public.bench_lineitem with n rows unless it has
// them already.
func ensureLineitem(b *testing.B, n int) {
	b.Helper()
	c := originConn(b)
	res := c.ExecParams(context.Background(), "SELECT count(*) FROM bench_lineitem", nil, nil, nil, nil).Read()
	if res.Err == nil && string(res.Rows[0][0]) == strconv.Itoa(n) {
		return
	}
	start := time.Now()
	originExec(b, fmt.Sprintf(`DROP TABLE IF EXISTS bench_lineitem;
		CREATE TABLE bench_lineitem (
			l_orderkey bigint NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL,
			l_linenumber integer NOT NULL, l_quantity numeric(15,2) NOT NULL,
			l_extendedprice numeric(15,2) NOT NULL, l_discount numeric(15,2) NOT NULL,
			l_tax numeric(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL,
			l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL,
			l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL, l_comment varchar(44) NOT NULL);
		INSERT INTO bench_lineitem
		SELECT g / 4, (g * 7919) %% 200000, (g * 104729) %% 10000, g %% 7 + 1,
		       (g %% 50) + 1, ((g * 31) %% 10000000) / 100.0 + 900, (g %% 11) / 100.0, (g %% 9) / 100.0,
		       (ARRAY['A','N','R'])[(g %% 3 + 1)::int], (ARRAY['F','O'])[(g %% 2 + 1)::int],
		       date '1992-01-01' + (g %% 2500)::int, date '1992-01-01' + (g %% 2480)::int + 30, date '1992-01-01' + (g %% 2490)::int + 10,
		       (ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[(g %% 4 + 1)::int],
		       (ARRAY['AIR','MAIL','SHIP','TRUCK','RAIL','REG AIR','FOB'])[(g %% 7 + 1)::int],
		       left(md5(g::text), 10 + (g %% 33)::int)
		FROM generate_series(1::bigint, %d) g`, n))
	originExec(b, "VACUUM ANALYZE bench_lineitem")
	b.Logf("generated %d rows in %v", n, time.Since(start).Round(time.Millisecond))
}

// copyBinary streams the binary COPY of query to w through a buffer, so
// that the per-row CopyData messages do not each cost a pipe hand-off.
func copyBinary(ctx context.Context, b *testing.B, w io.Writer, query string) (int64, error) {
	c, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	bw := bufio.NewWriterSize(w, 1<<20)
	tag, err := c.CopyTo(ctx, bw, "COPY ("+query+") TO STDOUT (FORMAT binary)")
	if err == nil {
		err = bw.Flush()
	}
	return tag.RowsAffected(), err
}

// pipeCopy returns a reader of the binary COPY of query.
func pipeCopy(ctx context.Context, b *testing.B, query string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := copyBinary(ctx, b, pw, query)
		pw.CloseWithError(err)
	}()
	return pr
}

// reportRate reports rows/s, wall and CPU seconds of this process since
// cpu0 (CPU time is what the other processes on a shared machine do not
// disturb).
func reportRate(b *testing.B, rows int, d time.Duration, cpu0 time.Duration) {
	b.ReportMetric(float64(rows)/d.Seconds(), "rows/s")
	b.ReportMetric(d.Seconds(), "s/load")
	b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s/load")
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkLoad(b *testing.B) {
	n := benchRows(b)
	ensureLineitem(b, n)
	ctx := context.Background()
	const q = "SELECT * FROM bench_lineitem"

	b.Run("copy-to-discard", func(b *testing.B) {
		for b.Loop() {
			start, cpu0 := time.Now(), cpuTime()
			rows, err := copyBinary(ctx, b, io.Discard, q)
			if err != nil || rows != int64(n) {
				b.Fatal(rows, err)
			}
			reportRate(b, n, time.Since(start), cpu0)
		}
	})

	b.Run("chunk-table-function", func(b *testing.B) {
		e := openEngine(b, "")
		ds := testDataset("bench_lineitem", "bench_lineitem", catalog.ModeMemory)
		cols := originColumns(b, "bench_lineitem")
		for b.Loop() {
			start, cpu0 := time.Now(), cpuTime()
			stats, err := e.Load(ctx, ds, cols, pipeCopy(ctx, b, q))
			if err != nil || stats.Rows != int64(n) {
				b.Fatal(stats, err)
			}
			reportRate(b, n, time.Since(start), cpu0)
		}
	})

	b.Run("appender-append-row", func(b *testing.B) {
		e := openEngine(b, "")
		ds := testDataset("bench_lineitem", "bench_lineitem", catalog.ModeMemory)
		cols := originColumns(b, "bench_lineitem")
		if _, err := e.attach(ctx, ds); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			start, cpu0 := time.Now(), cpuTime()
			rows, err := appendRowLoad(ctx, e, ds, cols, pipeCopy(ctx, b, q))
			if err != nil || rows != int64(n) {
				b.Fatal(rows, err)
			}
			reportRate(b, n, time.Since(start), cpu0)
		}
	})
}

// appendRowLoad is the row-by-row alternative to Load: each row decoded
// into []driver.Value and handed to Appender.AppendRow. Scalar types only.
func appendRowLoad(ctx context.Context, e *Engine, ds *catalog.Dataset, cols []ColumnSpec, r io.Reader) (int64, error) {
	src, defs, err := newCopySource(ctx, cols, r, 1, false)
	if err != nil {
		return 0, err
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ref := tableRef(ds.Name, "append_row")
	if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TABLE "+ref+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return 0, err
	}
	var rows int64
	err = conn.Raw(func(dc any) error {
		app, err := duckdb.NewAppender(dc.(driver.Conn), DatabaseName(ds.Name), "main", "append_row")
		if err != nil {
			return err
		}
		if err := src.tr.readHeader(); err != nil {
			return err
		}
		vals := make([]driver.Value, len(src.outs))
		spans := make([]int32, 2*len(cols))
		for {
			tuple, ok, err := src.tr.next(spans)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			for j, o := range src.outs {
				var field []byte
				if off := spans[2*o.field]; off >= 0 {
					field = tuple[off : off+spans[2*o.field+1]]
				}
				vals[j], err = rowValue(o.typ, field)
				if err != nil {
					return err
				}
			}
			if err := app.AppendRow(vals...); err != nil {
				return err
			}
			rows++
		}
		return app.Close()
	})
	runtime.KeepAlive(src)
	return rows, err
}

// rowValue decodes a field for AppendRow (the target table's types, so
// dates as time.Time).
func rowValue(t colType, b []byte) (driver.Value, error) {
	if b == nil {
		return nil, nil
	}
	switch t.kind {
	case kindInt4:
		return decodeInt4(b)
	case kindInt8:
		return decodeInt8(b)
	case kindNumeric:
		v, _, err := decodeNumeric(b, int(t.scale))
		return v, err
	case kindBpchar:
		return string(trimSpaces(b)), nil
	case kindText:
		return string(b), nil
	case kindDate:
		d, err := decodeDate(b)
		return time.Unix(int64(d)*86400, 0).UTC(), err
	}
	return nil, fmt.Errorf("appendRowLoad: %s not supported", t.duck)
}

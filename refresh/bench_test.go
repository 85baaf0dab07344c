package refresh

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// BenchmarkFullRefresh loads a generated lineitem-shaped table (TPC-H's
// widest: bigint, int, numeric(15,2), char, date, varchar) with a full
// refresh, and in the same run times a plain binary COPY of the same table
// into io.Discard through pgconn. It reports rows/s, the ratio of the two
// times, the process's peak RSS above its RSS before the refresh, how long
// the compaction after the load took (it runs in the background, after the
// refresh is done) and DuckDB's table memory after it.
//
//	PGACCEL_BENCH_ROWS=6000000 go test ./refresh -run '^$' -bench BenchmarkFullRefresh -benchtime 1x
//
// PGACCEL_BENCH_ROWS is the table's size (default 1000000; TPC-H SF1 is
// 6001215), PGACCEL_BENCH_MODE the acceleration mode (memory or file).
func BenchmarkFullRefresh(b *testing.B) {
	n := 1000000
	if s := os.Getenv("PGACCEL_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("PGACCEL_BENCH_ROWS=%q is not a positive number", s)
		}
		n = v
	}
	mode := "memory"
	if m := os.Getenv("PGACCEL_BENCH_MODE"); m != "" {
		mode = m
	}
	ensureLineitem(b, n)
	ctx := context.Background()
	cfg := parseConfig(b, "", b.TempDir(), dataset("bench_lineitem", mode, ""))
	h := newHarness(b, cfg)

	for b.Loop() {
		copyTime := plainCopy(ctx, b, n)

		idle := rss(b, "VmRSS")
		resetPeakRSS(b)
		cpu0 := cpuTime()
		start := time.Now()
		if err := h.run.Refresh(ctx, "bench_lineitem"); err != nil {
			b.Fatal(err)
		}
		refreshTime := time.Since(start)
		cpu := cpuTime() - cpu0
		peak := rss(b, "VmHWM")
		// The background compaction after the load (waited for here so
		// that it does not overlap the next iteration's plain COPY).
		start = time.Now()
		if err := h.eng.Compact(ctx, "bench_lineitem"); err != nil {
			b.Fatal(err)
		}
		compactTime := time.Since(start)
		table := duckQuery(b, h.eng, "SELECT sum(memory_usage_bytes) FROM duckdb_memory() WHERE tag IN ('IN_MEMORY_TABLE', 'BASE_TABLE')")[0][0]
		if st := h.state(b, "bench_lineitem"); st.Rows != int64(n) {
			b.Fatalf("refresh loaded %d rows, want %d", st.Rows, n)
		}
		b.ReportMetric(float64(n)/refreshTime.Seconds(), "rows/s")
		b.ReportMetric(refreshTime.Seconds(), "refresh-s")
		b.ReportMetric(copyTime.Seconds(), "copy-s")
		b.ReportMetric(refreshTime.Seconds()/copyTime.Seconds(), "ratio")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(peak-idle)/(1<<20), "peak-MiB-above-idle")
		b.ReportMetric(compactTime.Seconds(), "compact-s")
		if v, ok := table.(*big.Int); ok {
			b.ReportMetric(float64(v.Int64())/(1<<20), "duckdb-MiB-after-compact")
		}
	}
}

// plainCopy times `COPY bench_lineitem TO STDOUT (FORMAT binary)` into
// io.Discard.
func plainCopy(ctx context.Context, b *testing.B, n int) time.Duration {
	c, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	start := time.Now()
	tag, err := c.CopyTo(ctx, io.Discard, "COPY bench_lineitem TO STDOUT (FORMAT binary)")
	if err != nil || tag.RowsAffected() != int64(n) {
		b.Fatal(tag, err)
	}
	return time.Since(start)
}

// ensureLineitem creates public.bench_lineitem with n rows unless it has
// them already.
func ensureLineitem(b *testing.B, n int) {
	b.Helper()
	if rows := originQuery(b, "SELECT count(*) FROM pg_class WHERE relname = 'bench_lineitem'"); *rows[0][0] == "1" {
		if rows := originQuery(b, "SELECT count(*) FROM bench_lineitem"); *rows[0][0] == strconv.Itoa(n) {
			return
		}
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
		SELECT g / 4, (g * 7919) %% 200000, (g * 104729) %% 10000, (g %% 7 + 1)::int,
		       (g %% 50) + 1, ((g * 31) %% 10000000) / 100.0 + 900, (g %% 11) / 100.0, (g %% 9) / 100.0,
		       (ARRAY['A','N','R'])[(g %% 3 + 1)::int], (ARRAY['F','O'])[(g %% 2 + 1)::int],
		       date '1992-01-01' + (g %% 2500)::int, date '1992-01-01' + (g %% 2480)::int + 30,
		       date '1992-01-01' + (g %% 2490)::int + 10,
		       (ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[(g %% 4 + 1)::int],
		       (ARRAY['AIR','MAIL','SHIP','TRUCK','RAIL','REG AIR','FOB'])[(g %% 7 + 1)::int],
		       left(md5(g::text), 10 + (g %% 33)::int)
		FROM generate_series(1::bigint, %d) g`, n))
	originExec(b, "VACUUM ANALYZE bench_lineitem")
	b.Logf("generated %d rows in %v", n, time.Since(start).Round(time.Millisecond))
}

// rss reads a size from /proc/self/status (VmRSS: now, VmHWM: peak since
// resetPeakRSS) in bytes.
func rss(b *testing.B, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			kb, err := strconv.ParseInt(string(bytes.Fields(v)[0]), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// resetPeakRSS resets VmHWM to the current RSS.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset peak RSS: %v", err)
	}
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

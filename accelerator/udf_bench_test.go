package accelerator

import (
	"context"
	"testing"
)

// BenchmarkUDF_PerRow measures what a per-row function call across cgo
// costs DuckDB: one query over a million rows without a pgaccel function,
// and the same with one in each row (a scalar numeric text check and
// json text read as numeric), so `go test -bench UDF` prints ns per row
// for each.
func BenchmarkUDF_PerRow(b *testing.B) {
	e := openEngine(b, "")
	ctx := context.Background()
	const rows = 1_000_000
	for _, q := range []struct{ name, sql string }{
		{"native", "SELECT sum(CAST(i AS DECIMAL(18,2)) * 2) FROM range(1000000) t(i)"},
		{"numeric_scale", "SELECT sum(length(pgaccel_numeric_scale(CAST(CAST(i AS DECIMAL(18,2)) * 2 AS VARCHAR), 2))) FROM range(1000000) t(i)"},
		{"numeric_in", "SELECT sum(pgaccel_numeric_in(CAST(i AS VARCHAR) || '.25')) FROM range(1000000) t(i)"},
		{"native_cast", "SELECT sum(CAST(CAST(i AS VARCHAR) || '.25' AS DECIMAL(38,24))) FROM range(1000000) t(i)"},
	} {
		b.Run(q.name, func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				var out any
				if err := e.db.QueryRowContext(ctx, q.sql).Scan(&out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
		})
	}
}

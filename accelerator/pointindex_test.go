package accelerator

import (
	"context"
	"runtime"
	"testing"
)

// pointSource is a pgbench_accounts-shaped row source of n rows for the
// point index: aid, bid, abalance, an 84-character filler.
const pointSource = `(SELECT i::INTEGER AS aid, (i // 100000 + 1)::INTEGER AS bid, 0::INTEGER AS abalance,
	repeat(' ', 84) AS filler FROM range(1, 100001) t(i))`

// TestPointIndex_KeysAndRows: rows are found by their key, absent keys and
// keys of another kind find nothing, and a duplicate key is refused.
func TestPointIndex_KeysAndRows(t *testing.T) {
	e := openEngine(t, t.TempDir())
	ctx := context.Background()
	ix, err := e.buildPointIndex(ctx, pointSource, []string{"aid", "bid", "abalance", "filler"}, []string{"aid"}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	key := func(v any) []byte {
		b, ok := AppendPointKey(nil, v)
		if !ok {
			t.Fatalf("no key of %T", v)
		}
		return b
	}
	for _, tc := range []struct {
		key  any
		rows int
	}{{int64(1), 1}, {int32(100000), 1}, {int16(77), 1}, {int64(0), 0}, {int64(100001), 0}, {"1", 0}} {
		r, ok := ix.Rows([]string{"filler", "aid"}, key(tc.key))
		if !ok {
			t.Fatalf("%v: no answer", tc.key)
		}
		n := 0
		for r.Next() {
			n++
			if got := r.Values()[1]; got != int32(toInt(tc.key)) {
				t.Fatalf("%v: row of aid %v", tc.key, got)
			}
		}
		if n != tc.rows || r.Err() != nil || r.Close() != nil {
			t.Fatalf("%v: %d rows (%v), want %d", tc.key, n, r.Err(), tc.rows)
		}
	}
	if _, ok := ix.Rows([]string{"nope"}, key(int64(1))); ok {
		t.Fatal("a column the index lacks answered")
	}
	if _, err := e.buildPointIndex(ctx, pointSource, []string{"aid", "bid"}, []string{"bid"}, 1<<30); err == nil {
		t.Fatal("a key that is not unique was indexed")
	}
	if _, err := e.buildPointIndex(ctx, pointSource, []string{"aid", "bid"}, []string{"aid"}, 1<<10); err != ErrPointIndexTooLarge {
		t.Fatalf("over the budget: %v", err)
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	}
	return -1
}

// BenchmarkPointIndex_Build builds the index of 100,000 pgbench_accounts
// rows and reports its estimated size and the heap it holds, per row:
//
//	go test ./accelerator -run '^$' -bench BenchmarkPointIndex_Build -benchtime 3x
func BenchmarkPointIndex_Build(b *testing.B) {
	e := openEngine(b, b.TempDir())
	ctx := context.Background()
	var ix *PointIndex
	var before, after runtime.MemStats
	for b.Loop() {
		ix = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if ix, err = e.buildPointIndex(ctx, pointSource, []string{"aid", "bid", "abalance", "filler"}, []string{"aid"}, 1<<30); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(ix.bytes)/float64(len(ix.rows)), "est-B/row")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(ix.rows)), "heap-B/row")
	runtime.KeepAlive(ix)
}

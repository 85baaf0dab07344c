package accelerator

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

func int8b(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// BenchmarkApplier_Batch applies batches of a change stream's shape (half
// inserts of new keys, a third updates of stored rows, the rest deletes)
// to a table of rows rows, one Apply and Commit per batch, as a change
// stream's flush does: the cost of a batch, and whether it grows with the
// table.
func BenchmarkApplier_Batch(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		for _, batch := range []int{50, 500, 5000} {
			b.Run(fmt.Sprintf("rows=%d/batch=%d", rows, batch), func(b *testing.B) { benchApply(b, rows, batch) })
		}
	}
}

func benchApply(b *testing.B, rows, batch int) {
	table := fmt.Sprintf("apply_bench_%d", rows)
	originExec(b, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id bigint PRIMARY KEY, v int, payload text, updated_at timestamptz);
		INSERT INTO %[1]s SELECT g, g, md5(g::text) || md5(g::text), now() FROM generate_series(1, %[2]d) g;`, table, rows))
	e := openEngine(b, b.TempDir())
	ds := testDataset(table, table, catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	if _, err := e.LoadWith(ctx, ds, originColumns(b, table), copyQuery(ctx, b, "SELECT * FROM "+table), LoadOptions{PrimaryKey: []string{"id"}, Replication: &Replication{LSN: 1}}); err != nil {
		b.Fatal(err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	rnd := rand.New(rand.NewSource(1))
	live := make([]int64, 0, rows*2)
	for i := 1; i <= rows; i++ {
		live = append(live, int64(i))
	}
	next := int64(rows + 1)
	payload := []byte(strings.Repeat("p", 64))
	ts := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMicro()))
	lsn := uint64(2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		changes := make([]Change, 0, batch)
		seen := map[int64]bool{}
		for len(changes) < batch {
			switch r := rnd.Intn(100); {
			case r < 50:
				id := next
				next++
				live = append(live, id)
				changes = append(changes, Change{Row: [][]byte{int8b(id), int4(int32(id)), payload, ts}})
				seen[id] = true
			default:
				j := rnd.Intn(len(live))
				id := live[j]
				if seen[id] {
					continue
				}
				seen[id] = true
				if r < 85 {
					changes = append(changes, Change{Row: [][]byte{int8b(id), int4(int32(r)), payload, ts}})
				} else {
					live[j] = live[len(live)-1]
					live = live[:len(live)-1]
					changes = append(changes, Change{Delete: true, Key: [][]byte{int8b(id)}})
				}
			}
		}
		if err := a.Apply(ctx, false, changes); err != nil {
			b.Fatal(err)
		}
		if _, err := a.Commit(ctx, Replication{LSN: lsn}, time.Now()); err != nil {
			b.Fatal(err)
		}
		lsn++
	}
	b.StopTimer()
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "changes/s")
}

package accelerator

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestApplier_StorageStaysBoundedUnderRewrites: a changes dataset whose
// every row is updated 30 times (DELETE + INSERT per batch, with the key
// index on the table) keeps its file within a small factor of the live
// rows: the dead share is measured after compactions and the table is
// rewritten past it. Without the rewrite the file grows with every
// round (DuckDB does not reclaim deleted rows of a table with an ART
// index). The rows and the stream position stay exact across rewrites.
func TestApplier_StorageStaysBoundedUnderRewrites(t *testing.T) {
	const rows = 20000
	originExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS rewrite_t;
		CREATE TABLE rewrite_t (id int PRIMARY KEY, v text, n int);
		INSERT INTO rewrite_t SELECT g, md5(g::text) || md5((g + 1)::text), g FROM generate_series(1, %d) g;`, rows))
	e := openEngine(t, t.TempDir())
	ds := testDataset("rewrite_t", "rewrite_t", catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	cols := originColumns(t, "rewrite_t")
	cols[0].Key = true // indexed, as refresh marks a one-column primary key
	if _, err := e.LoadWith(ctx, ds, cols, copyQuery(ctx, t, "SELECT * FROM rewrite_t"), LoadOptions{PrimaryKey: []string{"id"},
		Replication: &Replication{Slot: "s", Publication: "p", SystemID: "42", LSN: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Compact(ctx, "rewrite_t"); err != nil {
		t.Fatal(err)
	}
	fresh, err := e.Storage(ctx, "rewrite_t")
	if err != nil || fresh.FileBytes == 0 || fresh.LiveRows != rows || fresh.StoredRows != rows {
		t.Fatalf("after the load: %+v, %v", fresh, err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const rounds, batch = 30, 2000
	lsn := uint64(1)
	var most StorageStats
	var sizes []int64
	for r := 1; r <= rounds; r++ {
		for lo := 1; lo <= rows; lo += batch {
			changes := make([]Change, 0, batch)
			for id := lo; id < lo+batch; id++ {
				changes = append(changes, Change{Row: [][]byte{int4(int32(id)), []byte(fmt.Sprintf("round %d row %d %032d", r, id, id)), int4(int32(r))}})
			}
			if err := a.Apply(ctx, false, changes); err != nil {
				t.Fatal(err)
			}
			lsn++
			if _, err := a.Commit(ctx, Replication{Slot: "s", Publication: "p", SystemID: "42", LSN: lsn}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		// What the background compaction does, now (it may be running
		// too; both hold the dataset's load lock).
		if err := e.Reclaim(ctx, "rewrite_t"); err != nil {
			t.Fatal(err)
		}
		st, err := e.Storage(ctx, "rewrite_t")
		if err != nil {
			t.Fatal(err)
		}
		if st.FileBytes > most.FileBytes {
			most = st
		}
		sizes = append(sizes, st.FileBytes)
	}
	end, err := e.Storage(ctx, "rewrite_t")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("file after the load %d bytes; after %d rounds %d (largest after a round %d); rows %d live of %d stored; %d rewrites",
		fresh.FileBytes, rounds, end.FileBytes, most.FileBytes, end.LiveRows, end.StoredRows, end.Rewrites)
	if end.Rewrites == 0 {
		t.Error("the table was never rewritten")
	}
	checkBound(t, sizes, compactedSize(t, e, "rewrite_t"))
	if d := end.DeadShare(); d >= rewriteDeadShare {
		t.Errorf("dead share %.2f after a reclaim, want below %.2f", d, rewriteDeadShare)
	}
	if n := queryInt(t, e, fmt.Sprintf("SELECT count(*) FROM %s WHERE n = %d AND v LIKE 'round %d row %%'", e.TableRef("rewrite_t"), rounds, rounds)); n != rows {
		t.Errorf("%d rows of the last round, want %d", n, rows)
	}
	info, err := e.Stored(ctx, "rewrite_t")
	if err != nil || info == nil || info.Replication == nil || info.Replication.LSN != lsn || info.Rows != rows {
		t.Fatalf("stored = %+v, %v; want LSN %d and %d rows", info, err, lsn, rows)
	}
	if got := duckRows(t, e, "SELECT index_name FROM duckdb_indexes() WHERE table_name = 'rewrite_t'"); len(got) != 0 {
		t.Errorf("indexes after rewrites: %v", got)
	}
}

// TestRetention_StorageStaysBounded: a sliding window (an append of new
// rows, then a retention pass deleting the oldest, 40 times over) keeps
// its file within a small factor of the window's size: the rows the
// retention passes delete are reclaimed by rewrites.
func TestRetention_StorageStaysBounded(t *testing.T) {
	const window, step, rounds = 20000, 2000, 40
	originExec(t, `DROP TABLE IF EXISTS window_t; CREATE TABLE window_t (id int PRIMARY KEY, v text);`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("window_t", "window_t", catalog.ModeFile)
	ctx := context.Background()
	cols := originColumns(t, "window_t")
	cols[0].Key = true
	rowsOf := func(lo, hi int) string {
		return fmt.Sprintf("SELECT g, md5(g::text) || md5((g * 7)::text) FROM generate_series(%d, %d) g", lo, hi)
	}
	if _, err := e.LoadWith(ctx, ds, cols, copyQuery(ctx, t, rowsOf(1, window)), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Reclaim(ctx, "window_t"); err != nil {
		t.Fatal(err)
	}
	fresh, err := e.Storage(ctx, "window_t")
	if err != nil {
		t.Fatal(err)
	}
	var most int64
	var sizes []int64
	last := window
	for r := 0; r < rounds; r++ {
		if _, err := e.LoadWith(ctx, ds, cols, copyQuery(ctx, t, rowsOf(last+1, last+step)),
			LoadOptions{Append: &AppendMerge{}}); err != nil {
			t.Fatal(err)
		}
		last += step
		if _, _, err := e.DeleteWhere(ctx, "window_t", []string{fmt.Sprintf("id <= %d", last-window)}); err != nil {
			t.Fatal(err)
		}
		if err := e.Reclaim(ctx, "window_t"); err != nil {
			t.Fatal(err)
		}
		st, err := e.Storage(ctx, "window_t")
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, st.FileBytes)
		sizes = append(sizes, st.FileBytes)
	}
	end, _ := e.Storage(ctx, "window_t")
	t.Logf("file after the load %d bytes; at most %d over %d rounds, %d at the end; %d live of %d stored; %d rewrites",
		fresh.FileBytes, most, rounds, end.FileBytes, end.LiveRows, end.StoredRows, end.Rewrites)
	if end.LiveRows != window || end.Rewrites == 0 {
		t.Errorf("%d live rows (want %d), %d rewrites", end.LiveRows, window, end.Rewrites)
	}
	checkBound(t, sizes, compactedSize(t, e, "window_t"))
	if n := queryInt(t, e, fmt.Sprintf("SELECT min(id) FROM %s", e.TableRef("window_t"))); n != int64(last-window+1) {
		t.Errorf("oldest row %d, want %d", n, last-window+1)
	}
}

// compactedSize is the size of a fresh copy of the dataset's database
// (COPY FROM DATABASE): what its rows need.
func compactedSize(t *testing.T, e *Engine, dataset string) int64 {
	t.Helper()
	path, _, err := e.SnapshotTo(context.Background(), dataset)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// checkBound checks the file sizes after each round against a fresh
// copy's: none above 1.75 times, at most a tenth above 1.5 times. (A
// rewrite inside the file kept it at about twice; DuckDB does not always
// write the same rows to as few blocks, which at 20,000 rows, five blocks,
// can make a fresh file 1.6 times another: see installNext.)
func checkBound(t *testing.T, sizes []int64, compacted int64) {
	t.Helper()
	over := 0
	for i, s := range sizes {
		r := float64(s) / float64(compacted)
		if r > 1.75 {
			t.Errorf("round %d: the file is %d bytes, %.2f times a fresh copy's %d", i, s, r, compacted)
		}
		if r > 1.5 {
			over++
		}
	}
	if over*10 > len(sizes) {
		t.Errorf("the file was above 1.5 times a fresh copy's %d bytes after %d of %d rounds: %v", compacted, over, len(sizes), sizes)
	}
}

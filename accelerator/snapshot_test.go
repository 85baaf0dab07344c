package accelerator

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// A snapshot is a whole copy of a file-mode dataset's database, made while
// readers go on: put where another engine's dataset lives, it serves the
// same rows with the same checkpoint (last refresh, columns, refresh_sql).
func TestSnapshotTo_RestoresElsewhere(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS snap_t;
		CREATE TABLE snap_t (id int PRIMARY KEY, s text, n numeric(10,2));
		INSERT INTO snap_t SELECT g, 'v' || g, g * 1.5 FROM generate_series(1, 20000) g;`)
	ds := testDataset("snap_t", "snap_t", catalog.ModeFile)
	ds.Acceleration.RefreshSQL = "SELECT * FROM snap_t"
	ctx := context.Background()
	e := openEngine(t, "")
	if _, err := e.Attach(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.SnapshotTo(ctx, "snap_t"); err == nil {
		t.Fatal("a snapshot of a dataset never loaded was made")
	}
	loadOrigin(t, e, ds)
	var reads atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("snap_t")); n != 20000 {
				t.Errorf("count during the snapshot = %d", n)
				return
			}
			reads.Add(1)
		}
	}()
	path, info, err := e.SnapshotTo(ctx, "snap_t")
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	if info.Rows != 20000 || len(info.Columns) != 3 {
		t.Fatalf("info %+v", info)
	}

	other := openEngine(t, "")
	dst, err := other.FilePath("snap_t")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := other.Attach(ctx, ds)
	if err != nil || got == nil {
		t.Fatalf("attach the restored file: %v, %v", got, err)
	}
	if got.Rows != info.Rows || !got.LastRefresh.Equal(info.LastRefresh) || got.RefreshSQL != ds.Acceleration.RefreshSQL {
		t.Errorf("restored checkpoint %+v, snapshot's %+v", got, info)
	}
	if n := queryInt(t, other, "SELECT sum(id)::BIGINT FROM "+other.TableRef("snap_t")+" WHERE s LIKE 'v%'"); n != 20000*20001/2 {
		t.Errorf("restored rows: sum %d", n)
	}
	// Loaded into an attached dataset, empty first and then loaded, while
	// readers read: they see all the rows or, before the first, none.
	third := openEngine(t, "")
	if _, err := third.Attach(ctx, ds); err != nil {
		t.Fatal(err)
	}
	incoming := filepath.Join(third.opts.DataDir, SnapshotDir, "in.duckdb")
	if err := os.MkdirAll(filepath.Dir(incoming), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(incoming, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := third.ReplaceFrom(ctx, "snap_t", incoming)
		if err != nil || got.Rows != 20000 || !got.LastRefresh.Equal(info.LastRefresh) {
			t.Fatalf("ReplaceFrom: %+v, %v", got, err)
		}
		if n := queryInt(t, third, "SELECT count(*) FROM "+third.TableRef("snap_t")+" WHERE id = 777"); n != 1 {
			t.Fatalf("after ReplaceFrom: %d rows of id 777", n)
		}
	}
	if _, err := third.ReplaceFrom(ctx, "snap_t", filepath.Join(third.opts.DataDir, SnapshotDir, "missing.duckdb")); err == nil {
		t.Fatal("ReplaceFrom a missing file succeeded")
	}
	if n := queryInt(t, third, "SELECT count(*) FROM "+third.TableRef("snap_t")); n != 20000 {
		t.Fatalf("after a failed ReplaceFrom: %d rows", n)
	}
	mem := openEngine(t, "")
	if _, err := mem.Attach(ctx, testDataset("snap_m", "snap_t", catalog.ModeMemory)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mem.SnapshotTo(ctx, "snap_m"); err == nil {
		t.Error("a snapshot of a memory-mode dataset was made")
	}
	t.Logf("%d reads during the snapshot", reads.Load())
}

// A process killed while it made, uploaded or downloaded a snapshot leaves
// files in the data dir; the next start removes them and keeps the rest.
func TestOpen_RemovesSnapshotLeftovers(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "orders.duckdb")
	left := []string{
		filepath.Join(dir, "orders.duckdb.download-1733000000"),
		filepath.Join(dir, SnapshotDir, "orders_1733000000.duckdb"),
		filepath.Join(dir, SnapshotDir, "orders_1733000000.duckdb.wal"),
		filepath.Join(dir, SnapshotDir, "orders_1.incoming.download-2"),
	}
	if err := os.MkdirAll(filepath.Join(dir, SnapshotDir), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(left, keep) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	openEngine(t, dir)
	for _, p := range left {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the dataset's file went: %v", err)
	}
}

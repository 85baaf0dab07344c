package accelerator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestFiles_FullLoadsWriteNewGenerations: in mode file each full load
// writes the next generation of the dataset's file and removes the one
// before, so the file holds one copy of the rows (not the new table beside
// the old one's free blocks); a reader in the middle of a query over the
// old file finishes it; a restart takes the newest whole file and removes
// what an interrupted one left.
func TestFiles_FullLoadsWriteNewGenerations(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS gen_t;
		CREATE TABLE gen_t (id int PRIMARY KEY, v text);
		INSERT INTO gen_t SELECT g, md5(g::text) || md5((g * 3)::text) FROM generate_series(1, 50000) g;`)
	dir := t.TempDir()
	e := openEngine(t, dir)
	ds := testDataset("gen_t", "gen_t", catalog.ModeFile)
	ctx := context.Background()
	cols := originColumns(t, "gen_t")
	cols[0].Key, cols[0].KeyPart = true, 1
	load := func(sql string) {
		t.Helper()
		if _, err := e.LoadWith(ctx, ds, cols, copyQuery(ctx, t, sql), LoadOptions{PrimaryKey: []string{"id"}}); err != nil {
			t.Fatal(err)
		}
	}
	files := func() []string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(dir, "gen_t*"))
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		sort.Strings(m)
		return m
	}
	load("SELECT * FROM gen_t")
	// A reader holds the current file open across the next loads.
	rows, err := e.Query(ctx, "SELECT id, v FROM "+e.TableRef("gen_t")+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		load(fmt.Sprintf("SELECT id, v || '%d' FROM gen_t", i))
	}
	read := 0
	for rows.Next() {
		if v := rows.Values()[1].(string); len(v) != 64 {
			t.Fatalf("a reader of the first file read %q", v)
		}
		read++
	}
	if err := rows.Err(); err != nil || read != 50000 {
		t.Fatalf("the reader of the first file read %d rows: %v", read, err)
	}
	rows.Close()
	// Written beside the table it replaced, the last load would have
	// left that table's blocks free in the file: the file holds none.
	if got := duckRows(t, e, "SELECT free_blocks FROM pragma_database_size() WHERE database_name = 'ds_gen_t'"); fmt.Sprint(got) != "[[0]]" {
		t.Errorf("free blocks after 6 loads: %v", got)
	}
	if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("gen_t")+" WHERE v LIKE '%5'"); n != 50000 {
		t.Errorf("%d rows of the last load", n)
	}
	if got := duckRows(t, e, "SELECT index_name FROM duckdb_indexes() WHERE table_name = 'gen_t'"); fmt.Sprint(got) != "[[_pgaccel_key]]" {
		t.Errorf("indexes: %v", got)
	}
	if err := e.Close(); err != nil { // after the background compactions
		t.Fatal(err)
	}
	// One file: the sixth load's generation, or a later one when the
	// compaction after a load rewrote a file DuckDB wrote to more blocks
	// than the rows need (installNext).
	var gen int
	if got := files(); len(got) != 1 {
		t.Fatalf("files after 6 loads: %v", got)
	} else if _, err := fmt.Sscanf(got[0], "gen_t.g%d.duckdb", &gen); err != nil || gen < 6 || got[0] != fmt.Sprintf("gen_t.g%d.duckdb", gen) {
		t.Fatalf("files after 6 loads: %v", got)
	}
	current := fmt.Sprintf("gen_t.g%d.duckdb", gen)
	// What a crash leaves: an older generation not yet removed, and a
	// next one being written.
	for _, p := range []string{"gen_t.duckdb", fmt.Sprintf("gen_t.g%d.duckdb.new", gen+1), fmt.Sprintf("gen_t.g%d.duckdb.new.wal", gen+1)} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e2 := openEngine(t, dir)
	info, err := e2.Attach(ctx, ds)
	if err != nil || info == nil || info.Rows != 50000 {
		t.Fatalf("after the restart: %+v, %v", info, err)
	}
	if got := fmt.Sprint(files()); got != "["+current+"]" {
		t.Errorf("files after the restart: %s, want %s", got, current)
	}
	if path, _ := e2.FilePath("gen_t"); filepath.Base(path) != current {
		t.Errorf("FilePath = %s", path)
	}
	if n := queryInt(t, e2, "SELECT count(*) FROM "+e2.TableRef("gen_t")+" WHERE v LIKE '%5'"); n != 50000 {
		t.Errorf("%d rows of the last load after the restart", n)
	}
}

// TestFiles_NormBoundedByEstimate: without a bytes-per-row norm (after a
// restart), a rewrite's copy sets it, bounded by what the rows were
// estimated to need before the copy: a copy DuckDB wrote large does not
// become the norm the next rewrite is measured against.
func TestFiles_NormBoundedByEstimate(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS norm_t;
		CREATE TABLE norm_t (id int PRIMARY KEY, v text);
		INSERT INTO norm_t SELECT g, md5(g::text) FROM generate_series(1, 5000) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("norm_t", "norm_t", catalog.ModeFile)
	ctx := context.Background()
	if _, err := e.LoadWith(ctx, ds, originColumns(t, "norm_t"), copyQuery(ctx, t, "SELECT * FROM norm_t"), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := e.handle("norm_t")
	if err != nil {
		t.Fatal(err)
	}
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	h.fileMu.Lock()
	h.bytesPerRow = 0 // as after a restart
	h.fileMu.Unlock()
	conn, err := e.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const estimate = 50_000 // far below the real file: the copy is "large"
	if err := e.rewriteFile(ctx, conn, h, "norm_t", 5000, estimate); err != nil {
		t.Fatal(err)
	}
	h.fileMu.Lock()
	per := h.bytesPerRow
	h.fileMu.Unlock()
	if want := estimate * 1.1 / 5000; per <= 0 || per > want+1e-9 {
		t.Errorf("bytes per row after the rewrite: %.2f, want at most %.2f (the estimate's)", per, want)
	}
}

package integration

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/admin"
	"github.com/pgaccel/pgaccel/catalog"
)

// TestStorage_ChangesDatasetStaysBounded: a changes dataset (mode file)
// whose every row the origin updates 25 times, through real logical
// replication, keeps its file within a small factor of its size after
// the first load: the deleted row versions the applies leave are
// reclaimed by rewrites of its file (accelerator/rewrite.go, files.go),
// which status and metrics report. Without them the file grows with every
// round. Answers stay
// the origin's throughout.
func TestStorage_ChangesDatasetStaysBounded(t *testing.T) {
	const table, rows, rounds = "cdc_rewrite", 4000, 25
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table); mustExec(t, "DROP TABLE IF EXISTS "+table) })
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (id int PRIMARY KEY, v text, n int);
		INSERT INTO %[1]s SELECT g, md5(g::text) || md5((g + 1)::text), 0 FROM generate_series(1, %[2]d) g;
		GRANT SELECT ON %[1]s TO app;`, table, rows))
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	v.waitEqual(t, table, "after the load", replicationOf(a, table), lagZero(a, table))
	if err := a.Engine.Reclaim(ctxT(t), table); err != nil {
		t.Fatal(err)
	}
	// Measured by the engine (status gives a measurement up to 5 s old).
	storage := func() accelerator.StorageStats {
		s, err := a.Engine.Storage(ctxT(t), table)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := storage()
	if first.FileBytes == 0 || first.LiveRows != rows {
		t.Fatalf("storage after the load: %+v", first)
	}
	most := first.FileBytes
	for r := 1; r <= rounds; r++ {
		// Each round in four transactions, as an application's writes.
		for part := 0; part < 4; part++ {
			mustExec(t, fmt.Sprintf("UPDATE %s SET n = %d, v = md5(v) || '-%d' WHERE id %% 4 = %d", table, r, r, part))
		}
		if r%5 == 0 {
			v.waitEqual(t, table, fmt.Sprintf("after round %d", r), replicationOf(a, table), lagZero(a, table))
			most = max(most, storage().FileBytes)
		}
	}
	// Whatever the background compaction has not reached yet.
	if err := a.Engine.Reclaim(ctxT(t), table); err != nil {
		t.Fatal(err)
	}
	end := storage()
	t.Logf("file %d bytes after the load, at most %d while updated, %d at the end; %d live of %d stored rows; %d rewrites",
		first.FileBytes, most, end.FileBytes, end.LiveRows, end.StoredRows, end.Rewrites)
	if end.Rewrites == 0 {
		t.Error("the file was never rewritten")
	}
	if most > 4*first.FileBytes || end.FileBytes > 4*first.FileBytes {
		t.Errorf("the file reached %d bytes (%d at the end), more than 4 times its %d after the load", most, end.FileBytes, first.FileBytes)
	}
	if end.LiveRows != rows || end.DeadShare() >= 0.2 {
		t.Errorf("after a reclaim: %d live rows (want %d), dead share %.2f", end.LiveRows, rows, end.DeadShare())
	}
	// Status and metrics say so. Status measures at most every 5 s
	// (app/storage.go): the rounds may take less.
	var st map[string]any
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		d := datasetStatus(t, a.AdminAddr(), "", table)
		st, _ = d["storage"].(map[string]any)
		if st != nil && st["rewrites"].(float64) >= 1 || time.Now().After(deadline) {
			break
		}
	}
	if st == nil || st["file_bytes"].(float64) <= 0 || st["live_rows"].(float64) != rows || st["rewrites"].(float64) < 1 {
		t.Errorf("status storage = %v", st)
	}
	_, body := adminGet(t, a.AdminAddr(), "/metrics", "")
	for _, m := range []string{`pgaccel_dataset_file_bytes{dataset="` + table + `"}`, `pgaccel_dataset_dead_share{dataset="` + table + `"}`,
		`pgaccel_dataset_rewrites_total{dataset="` + table + `"}`, "pgaccel_duckdb_memory_bytes ", "pgaccel_duckdb_memory_limit_bytes ", "pgaccel_memory_bytes "} {
		if !strings.Contains(body, m) {
			t.Errorf("metrics lack %s", m)
		}
	}
	// The accounted memory, also as JSON.
	code, mem := adminGet(t, a.AdminAddr(), "/v1/memory", "")
	var m admin.MemoryStatus
	if err := json.Unmarshal([]byte(mem), &m); code != 200 || err != nil || m.DuckDBLimitBytes < catalog.MinDuckDBMemory || m.DuckDBBytes <= 0 ||
		m.TotalBytes != m.DuckDBBytes+m.PointIndexBytes+m.ResultsCacheBytes || m.ProcessRSSBytes <= 0 {
		t.Errorf("GET /v1/memory: %d %s (%v)", code, mem, err)
	}
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, "pgaccel_duckdb_memory_limit_bytes "); ok {
			if f, err := strconv.ParseFloat(v, 64); err != nil || f < catalog.MinDuckDBMemory {
				t.Errorf("pgaccel_duckdb_memory_limit_bytes = %q, want DuckDB's limit in bytes", v)
			}
		}
	}
	// The answers after all of it are the origin's.
	mustExec(t, fmt.Sprintf("UPDATE %s SET n = -1 WHERE id = 7", table))
	v.waitEqual(t, table, "at the end", replicationOf(a, table), lagZero(a, table))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if diff, accelerated, err := v.compare(ctxT(t), "SELECT n, count(*), md5(string_agg(v, ',' ORDER BY id)) FROM "+table+" GROUP BY n ORDER BY n", true, 0); err == nil && diff == "" && accelerated {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Error("the aggregate over the rewritten table is not the origin's, or not accelerated")
}

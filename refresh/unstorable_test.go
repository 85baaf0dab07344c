package refresh

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestRefresh_UnstorableValuesLeaveColumnsOut: a table with numeric NaN
// becomes ready, the column is left out with its reason in the state and a
// warning, and an append that meets such a value merges (the column stays
// out) instead of replacing the table.
func TestRefresh_UnstorableValuesLeaveColumnsOut(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS nan_r;
		CREATE TABLE nan_r (id int PRIMARY KEY, amount numeric(12,2), at timestamptz);
		INSERT INTO nan_r SELECT g, g * 1.5, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 100) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.nan_r
    time_column: at
    acceleration:
      refresh_mode: append
      primary_key: [id]
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "nan_r"); err != nil {
		t.Fatal(err)
	}
	if st := h.state(t, "nan_r"); !columnAccelerated(st, "amount") {
		t.Fatalf("amount is not accelerated after a load without NaN: %+v", st.Columns)
	}
	originExec(t, `INSERT INTO nan_r VALUES (101, 'NaN', timestamptz '2026-01-01 02:00:00+00')`)
	if err := h.run.Refresh(ctx, "nan_r"); err != nil {
		t.Fatalf("append with a NaN: %v", err)
	}
	st := h.state(t, "nan_r")
	if st.Status != catalog.StatusReady || st.Rows != 101 || duckCount(t, h.eng, "nan_r") != 101 {
		t.Fatalf("after the append: status %s, %d rows (%d in DuckDB), want ready with 101", st.Status, st.Rows, duckCount(t, h.eng, "nan_r"))
	}
	if columnAccelerated(st, "amount") || !strings.Contains(notAccelerated(st, "amount"), "numeric NaN") {
		t.Fatalf("amount after the append: %+v", st.Columns)
	}
	if len(h.logs.matching("column amount is not accelerated", "numeric NaN")) != 1 {
		t.Errorf("want one warning naming the column, got %v", h.logs.matching("amount"))
	}
	// The NaN row goes away, but the NULL an append stored in its place
	// stays: the column stays out until a full load.
	originExec(t, `DELETE FROM nan_r WHERE id = 101;
		INSERT INTO nan_r VALUES (102, 3.25, timestamptz '2026-01-01 03:00:00+00')`)
	if err := h.run.Refresh(ctx, "nan_r"); err != nil {
		t.Fatal(err)
	}
	if st := h.state(t, "nan_r"); columnAccelerated(st, "amount") {
		t.Fatalf("amount is accelerated again after an append: %+v", st.Columns)
	}
}

// TestRefresh_SQLASCIIText: a SQL_ASCII origin database's text is bytes
// (maybe not UTF-8; length counts bytes): a column with a byte beyond ASCII
// is left out and the ASCII columns serve.
func TestRefresh_SQLASCIIText(t *testing.T) {
	originExec(t, `DROP DATABASE IF EXISTS ascii_db`)
	originExec(t, `CREATE DATABASE ascii_db ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`)
	t.Cleanup(func() { _ = srv.Exec(context.Background(), `DROP DATABASE IF EXISTS ascii_db WITH (FORCE)`) })
	dsn := strings.Replace(srv.SuperDSN(), "/"+srv.Database+"?", "/ascii_db?", 1)
	conn, err := connectOrigin(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(context.Background(), `CREATE TABLE latin (id int PRIMARY KEY, name text, code text);
		INSERT INTO latin VALUES (1, convert_from('\x636166e9', 'SQL_ASCII'), 'a'), (2, 'plain', 'b')`).ReadAll()
	conn.Close(context.Background())
	if err != nil {
		t.Fatalf("create the latin table: %v", err)
	}
	cfg := parseConfig(t, dsn, t.TempDir(), dataset("latin", "memory", ""))
	h := newHarness(t, cfg)
	if err := h.run.Refresh(context.Background(), "latin"); err != nil {
		t.Fatal(err)
	}
	st := h.state(t, "latin")
	if columnAccelerated(st, "name") || !strings.Contains(notAccelerated(st, "name"), "SQL_ASCII") || !columnAccelerated(st, "code") {
		t.Fatalf("columns = %+v, want name left out (not ASCII), code accelerated", st.Columns)
	}
}

func columnAccelerated(st catalog.DatasetState, name string) bool {
	for _, c := range st.Columns {
		if c.Name == name {
			return c.Accelerated
		}
	}
	return false
}

func notAccelerated(st catalog.DatasetState, name string) string {
	for _, c := range st.Columns {
		if c.Name == name {
			return c.NotAccelerated
		}
	}
	return ""
}

// TestRefresh_ProgressIsLogged: a running refresh logs rows, rate and,
// against the origin's estimate, the share done and the time left.
func TestRefresh_ProgressIsLogged(t *testing.T) {
	cfg := parseConfig(t, "", t.TempDir(), dataset("nan_r", "memory", ""))
	h := newHarness(t, cfg, Options{ProgressEvery: time.Millisecond})
	w := &watch{}
	w.rows.Store(250)
	w.estimate.Store(1000)
	stop := h.run.logProgress(h.run.log, w)
	deadline := time.Now().Add(10 * time.Second)
	for len(h.logs.matching("refresh in progress")) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	lines := h.logs.matching("refresh in progress", `"rows":250`, `"rows_estimated":1000`, `"percent":25`, `"remaining"`, `"rows_per_second"`)
	if len(lines) == 0 {
		t.Fatalf("no progress line with rows, estimate, percent and time left: %v", h.logs.matching("progress"))
	}
	n := len(h.logs.matching("refresh in progress"))
	time.Sleep(10 * time.Millisecond)
	if m := len(h.logs.matching("refresh in progress")); m != n {
		t.Errorf("progress logged after stop: %d lines, then %d", n, m)
	}
}

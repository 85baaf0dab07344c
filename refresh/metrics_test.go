package refresh

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gaugeValue reads a gauge.
func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// TestMetrics_RowsAreTheRowsHeld: dataset_acceleration_rows is what the
// acceleration holds after an append refresh (the stored rows with the new
// ones merged in by primary key) and after a retention pass, not the rows
// the last refresh read.
func TestMetrics_RowsAreTheRowsHeld(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS mrows_t;
		CREATE TABLE mrows_t (id int PRIMARY KEY, v text, updated_at timestamp);
		INSERT INTO mrows_t SELECT g, 'v' || g, timestamp '2026-01-01' + g * interval '1 second' FROM generate_series(1, 1000) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.mrows_t
    time_column: updated_at
    acceleration:
      refresh_mode: append
      refresh_append_overlap: 10s
      primary_key: id
      retention_sql: DELETE FROM mrows_t WHERE v = 'gone'
`)
	reg := prometheus.NewRegistry()
	h := newHarness(t, cfg, Options{Metrics: NewMetrics(reg)})
	ctx := context.Background()
	rows := func() float64 { return gaugeValue(t, h.run.metrics.rows.WithLabelValues("mrows_t")) }
	if err := h.run.Refresh(ctx, "mrows_t"); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 1000 {
		t.Fatalf("after the first load: dataset_acceleration_rows = %v, want 1000", n)
	}
	// Two rows change, one is new: the append reads them (and the rows in
	// the overlap) and the acceleration holds 1001.
	originExec(t, `UPDATE mrows_t SET v = 'changed', updated_at = timestamp '2026-02-01' WHERE id IN (5, 999);
		INSERT INTO mrows_t VALUES (1001, 'new', timestamp '2026-02-01 00:00:01')`)
	if err := h.run.Refresh(ctx, "mrows_t"); err != nil {
		t.Fatal(err)
	}
	if n, held := rows(), duckCount(t, h.eng, "mrows_t"); n != float64(held) || held != 1001 {
		t.Errorf("after an append: dataset_acceleration_rows = %v, the acceleration holds %d (want 1001)", n, held)
	}
	if st := h.state(t, "mrows_t"); st.Rows != 1001 {
		t.Errorf("state rows = %d, want 1001", st.Rows)
	}
	// A row marked gone is read, then evicted by retention_sql.
	originExec(t, `UPDATE mrows_t SET v = 'gone', updated_at = timestamp '2026-02-01 00:00:02' WHERE id = 7`)
	if err := h.run.Refresh(ctx, "mrows_t"); err != nil {
		t.Fatal(err)
	}
	if err := h.run.RetainNow(ctx, "mrows_t"); err != nil {
		t.Fatal(err)
	}
	if n, held := rows(), duckCount(t, h.eng, "mrows_t"); n != float64(held) || held != 1000 {
		t.Errorf("after retention: dataset_acceleration_rows = %v, the acceleration holds %d (want 1000)", n, held)
	}
}

package refresh

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// sorted rows of a DuckDB query, each row as fmt's %v of its values.
func duckRows(t testing.TB, h *harness, sql string) []string {
	t.Helper()
	var out []string
	for _, r := range duckQuery(t, h.eng, sql) {
		out = append(out, strings.TrimSuffix(fmt.Sprintln(r...), "\n"))
	}
	return out
}

func TestAppend_OverlapBringsLateRowsWithoutDuplicates(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS app_t;
		CREATE TABLE app_t (id int, v text, at timestamptz);
		INSERT INTO app_t SELECT g, 'v' || g, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 100) g;
		-- two identical rows: both are kept, neither is repeated
		INSERT INTO app_t VALUES (500, 'twin', timestamptz '2026-01-01 01:30:00+00'), (500, 'twin', timestamptz '2026-01-01 01:30:00+00');`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.app_t
    time_column: at
    acceleration:
      refresh_mode: append
      refresh_append_overlap: 30m
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "app_t"); err != nil {
		t.Fatal(err)
	}
	if n := duckCount(t, h.eng, "app_t"); n != 102 {
		t.Fatalf("first load: %d rows, want 102", n)
	}
	// max(at) is 01:40. New rows after it, a late row 20 minutes before it
	// (inside the overlap) and one 2 hours before (outside it).
	originExec(t, `INSERT INTO app_t VALUES
		(101, 'new', timestamptz '2026-01-01 01:41:00+00'),
		(102, 'new', timestamptz '2026-01-01 01:45:00+00'),
		(103, 'late', timestamptz '2026-01-01 01:20:00+00'),
		(104, 'too late', timestamptz '2025-12-31 23:40:00+00')`)
	if err := h.run.Refresh(ctx, "app_t"); err != nil {
		t.Fatal(err)
	}
	if err := h.run.Refresh(ctx, "app_t"); err != nil { // idempotent
		t.Fatal(err)
	}
	got := duckRows(t, h, "SELECT id, count(*) FROM "+h.eng.TableRef("app_t")+" GROUP BY id HAVING count(*) > 1 OR id > 100 ORDER BY id")
	want := []string{"101 1", "102 1", "103 1", "500 2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("rows by id = %v, want %v (104 is older than the overlap, by design)", got, want)
	}
	st := h.state(t, "app_t")
	if st.Rows != 105 || st.Status != catalog.StatusReady {
		t.Errorf("state = %+v, want 105 rows", st)
	}
}

func TestAppend_PrimaryKeyNewestVersionWins(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS pk_t;
		CREATE TABLE pk_t (id int PRIMARY KEY, v text, updated_at timestamp);
		INSERT INTO pk_t SELECT g, 'v' || g, timestamp '2026-01-01' + g * interval '1 second' FROM generate_series(1, 1000) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.pk_t
    time_column: updated_at
    acceleration:
      refresh_mode: append
      refresh_append_overlap: 10s
      primary_key: id
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "pk_t"); err != nil {
		t.Fatal(err)
	}
	originExec(t, `UPDATE pk_t SET v = 'changed', updated_at = timestamp '2026-02-01' WHERE id IN (5, 999);
		INSERT INTO pk_t VALUES (1001, 'new', timestamp '2026-02-01 00:00:01')`)
	if err := h.run.Refresh(ctx, "pk_t"); err != nil {
		t.Fatal(err)
	}
	got := duckRows(t, h, "SELECT id, v FROM "+h.eng.TableRef("pk_t")+" WHERE id IN (5, 999, 1000, 1001) ORDER BY id")
	want := []string{"5 changed", "999 changed", "1000 v1000", "1001 new"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("rows = %v, want %v", got, want)
	}
	if n := duckCount(t, h.eng, "pk_t"); n != 1001 {
		t.Errorf("count = %d, want 1001 (one row per key)", n)
	}
	if info, err := h.eng.Stored(ctx, "pk_t"); err != nil || info == nil || strings.Join(info.PrimaryKey, ",") != "id" {
		t.Errorf("checkpoint primary key = %+v, %v", info, err)
	}
}

func TestAppend_DateColumnComparesFromTheStartOfTheDay(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS day_t;
		CREATE TABLE day_t (id int, d date, d_month date);
		INSERT INTO day_t SELECT g, date '2026-01-01' + (g / 10), date_trunc('month', date '2026-01-01' + (g / 10))::date FROM generate_series(0, 99) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.day_t
    time_column: d
    time_format: date
    time_partition_column: d_month
    time_partition_format: date
    acceleration:
      refresh_mode: append
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "day_t"); err != nil {
		t.Fatal(err)
	}
	// More rows of the last day (2026-01-10) and of the next: the last day
	// is read again (>= its start) and its 10 stored rows are not repeated.
	originExec(t, `INSERT INTO day_t VALUES (100, '2026-01-10', '2026-01-01'), (101, '2026-01-11', '2026-01-01')`)
	if err := h.run.Refresh(ctx, "day_t"); err != nil {
		t.Fatal(err)
	}
	if n := duckCount(t, h.eng, "day_t"); n != 102 {
		t.Errorf("count = %d, want 102", n)
	}
	got := duckRows(t, h, "SELECT count(*), count(DISTINCT id) FROM "+h.eng.TableRef("day_t")+" WHERE d = DATE '2026-01-10'")
	if got[0] != "11 11" {
		t.Errorf("rows of 2026-01-10 = %v, want 11 distinct", got)
	}
	// The plan of the next append: d >= 2026-01-11, and the partition of
	// the newest stored row before that day.
	all := []string{}
	tableCols := []string{"id", "d", "d_month"}
	_ = tableCols
	st, _ := h.eng.Stored(ctx, "day_t")
	plan, err := appendBounds(ctx, h.eng, cfg.Datasets[0], st.Specs, st.Specs)
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, plan.origin...)
	want := `"d" >= '2026-01-11'::date AND "d_month" >= '2026-01-01'::date`
	if got := strings.Join(all, " AND "); got != want {
		t.Errorf("append filter = %s, want %s", got, want)
	}
}

func TestAppend_UnixSecondsAndDataWindow(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS unix_t;
		CREATE TABLE unix_t (id int, ts bigint);
		INSERT INTO unix_t SELECT g, floor(extract(epoch from now()))::bigint - g * 3600 FROM generate_series(1, 48) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.unix_t
    time_column: ts
    time_format: unix_seconds
    acceleration:
      refresh_mode: append
      refresh_data_window: 1d
      refresh_append_overlap: 2h
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "unix_t"); err != nil {
		t.Fatal(err)
	}
	// The window bounds the first load: the 23 rows less than a day old
	// (24 hours ago is on the edge and excluded).
	if n := duckCount(t, h.eng, "unix_t"); n != 23 {
		t.Errorf("first load = %d rows, want 23", n)
	}
	originExec(t, `INSERT INTO unix_t VALUES (0, floor(extract(epoch from now()))::bigint)`)
	if err := h.run.Refresh(ctx, "unix_t"); err != nil {
		t.Fatal(err)
	}
	if n := duckCount(t, h.eng, "unix_t"); n != 24 {
		t.Errorf("after append = %d rows, want 24", n)
	}
}

func TestRetention_PeriodAndSQL(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS ret_t;
		CREATE TABLE ret_t (id int PRIMARY KEY, status text, at timestamptz);
		INSERT INTO ret_t SELECT g, CASE WHEN g % 4 = 0 THEN 'archived' ELSE 'live' END,
			timestamptz '2026-11-30 12:00:00+00' - (g - 0.5) * interval '1 day' FROM generate_series(1, 20) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.ret_t
    time_column: at
    acceleration:
      refresh_mode: append
      primary_key: id
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_period: 10d
      retention_sql: DELETE FROM ret_t WHERE status = 'archived'
`)
	clock := NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	h := newHarness(t, cfg, Options{Clock: clock})
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "ret_t"); err != nil {
		t.Fatal(err)
	}
	// Loaded rows are filtered before they are published: ids 1..10 are
	// younger than 10 days, and 4 and 8 are archived.
	ids := func() string {
		return strings.Join(duckRows(t, h, "SELECT id FROM "+h.eng.TableRef("ret_t")+" ORDER BY id"), ",")
	}
	if got := ids(); got != "1,2,3,5,6,7,9,10" {
		t.Errorf("after load: ids %s", got)
	}
	// Two days later, the retention pass evicts ids 9 and 10.
	clock.Advance(2 * 24 * time.Hour)
	if err := h.run.RetainNow(ctx, "ret_t"); err != nil {
		t.Fatal(err)
	}
	if got := ids(); got != "1,2,3,5,6,7" {
		t.Errorf("after a pass two days later: ids %s", got)
	}
	if st := h.state(t, "ret_t"); st.Rows != 6 {
		t.Errorf("state rows = %d, want 6", st.Rows)
	}
	// A row archived at the origin comes back in the append and is evicted
	// with its older version.
	originExec(t, `UPDATE ret_t SET status = 'archived', at = timestamptz '2026-12-01 00:00:00+00' WHERE id = 2`)
	if err := h.run.Refresh(ctx, "ret_t"); err != nil {
		t.Fatal(err)
	}
	if got := ids(); got != "1,3,5,6,7" {
		t.Errorf("after archiving 2: ids %s", got)
	}
	if len(h.logs.matching("[retention] pass done", `"deleted":2`)) != 1 {
		t.Errorf("no log of the retention pass: %v", h.logs.matching("[retention]"))
	}
}

func TestRetention_RefusalsAreLoggedAndScheduleNothing(t *testing.T) {
	for _, n := range []string{"refuse_1", "refuse_2", "refuse_3", "refuse_4"} {
		originExec(t, "DROP TABLE IF EXISTS "+n+"; CREATE TABLE "+n+" (id int, at timestamptz);")
	}
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.refuse_1
    name: no_policy
    acceleration:
      retention_check_enabled: true
      retention_check_interval: 1h
  - from: postgres:public.refuse_2
    name: no_time_column
    acceleration:
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_period: 1d
  - from: postgres:public.refuse_3
    name: no_interval
    time_column: at
    acceleration:
      retention_check_enabled: true
      retention_period: 1d
  - from: postgres:public.refuse_4
    name: disabled_quietly
    acceleration:
      retention_check_enabled: false
      retention_period: 1d
`)
	clock := NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	h := newHarness(t, cfg, Options{Clock: clock})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.run.Start(ctx)
	for _, name := range []string{"no_policy", "no_time_column", "no_interval", "disabled_quietly"} {
		if err := h.run.WaitReady(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []struct{ dataset, missing string }{
		{"no_policy", "retention_period or retention_sql"},
		{"no_time_column", "time_column"},
		{"no_interval", "retention_check_interval"},
	} {
		deadline := time.Now().Add(10 * time.Second)
		for len(h.logs.matching(`"level":"error"`, "[retention] dataset "+want.dataset+":", `"missing":"`+want.missing+`"`)) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: want one [retention] error naming %s, got %v", want.dataset, want.missing, h.logs.matching("[retention]", want.dataset))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if lines := h.logs.matching("disabled_quietly", "[retention]"); len(lines) > 0 {
		t.Errorf("retention_check_enabled: false logged %v", lines)
	}
	// No retention timers: no dataset has a schedule either, so no timer
	// at all waits.
	time.Sleep(100 * time.Millisecond)
	if p := clock.Pending(); len(p) != 0 {
		t.Errorf("timers pending: %v", p)
	}
}

func TestAppend_UnixMillisAndISO8601(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS ms_t, iso_t;
		CREATE TABLE ms_t (id int, ms bigint);
		INSERT INTO ms_t SELECT g, 1767225600000 + g * 1000 FROM generate_series(1, 50) g;
		CREATE TABLE iso_t (id int, at text);
		INSERT INTO iso_t SELECT g, to_char((timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM generate_series(1, 50) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.ms_t
    time_column: ms
    time_format: unix_millis
    acceleration:
      refresh_mode: append
      refresh_append_overlap: 10s
  - from: postgres:public.iso_t
    time_column: at
    time_format: iso8601
    acceleration:
      refresh_mode: append
      refresh_append_overlap: 10m
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	for _, n := range []string{"ms_t", "iso_t"} {
		if err := h.run.Refresh(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	originExec(t, `INSERT INTO ms_t VALUES (51, 1767225600000 + 51000), (52, 1767225600000 + 45500);
		INSERT INTO iso_t VALUES (51, '2026-01-01T00:51:00Z'), (52, '2026-01-01T00:45:30Z'), (53, '2026-01-01T00:30:00Z');`)
	for _, n := range []string{"ms_t", "iso_t"} {
		if err := h.run.Refresh(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// ms: 51 is new, 52 is 4.5 s before the stored max (inside the 10 s
	// overlap). iso: 51 new, 52 inside the 10 min overlap, 53 outside it.
	if got := strings.Join(duckRows(t, h, "SELECT count(*), count(DISTINCT id) FROM "+h.eng.TableRef("ms_t")), ""); got != "52 52" {
		t.Errorf("ms_t: %s, want 52 distinct rows", got)
	}
	if got := strings.Join(duckRows(t, h, "SELECT count(*), count(DISTINCT id) FROM "+h.eng.TableRef("iso_t")), ""); got != "52 52" {
		t.Errorf("iso_t: %s, want 52 distinct rows (53 is older than the overlap)", got)
	}
}

// TestAppend_FullReloadDropsRowsTheSourceNoLongerHas: an append refresh
// keeps rows deleted at the origin; RefreshFull replaces the acceleration
// with the origin's rows, and later refreshes append again.
func TestAppend_FullReloadDropsRowsTheSourceNoLongerHas(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS reload_t;
		CREATE TABLE reload_t (id int PRIMARY KEY, at timestamptz);
		INSERT INTO reload_t SELECT g, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 50) g;`)
	cfg := parseConfig(t, "", t.TempDir(), `  - from: postgres:public.reload_t
    time_column: at
    acceleration:
      refresh_mode: append
      primary_key: id
`)
	h := newHarness(t, cfg)
	ctx := context.Background()
	if err := h.run.Refresh(ctx, "reload_t"); err != nil {
		t.Fatal(err)
	}
	originExec(t, "DELETE FROM reload_t WHERE id % 2 = 0")
	if err := h.run.Refresh(ctx, "reload_t"); err != nil {
		t.Fatal(err)
	}
	if n := duckCount(t, h.eng, "reload_t"); n != 50 {
		t.Fatalf("after an append: %d rows, want the 50 it held", n)
	}
	if err := h.run.RefreshFull(ctx, "reload_t"); err != nil {
		t.Fatal(err)
	}
	if n, st := duckCount(t, h.eng, "reload_t"), h.state(t, "reload_t"); n != 25 || st.Rows != 25 {
		t.Fatalf("after a full reload: %d rows (state %d), want 25", n, st.Rows)
	}
	originExec(t, "INSERT INTO reload_t VALUES (100, timestamptz '2026-02-01 00:00:00+00')")
	if err := h.run.Refresh(ctx, "reload_t"); err != nil {
		t.Fatal(err)
	}
	if n := duckCount(t, h.eng, "reload_t"); n != 26 {
		t.Errorf("an append after the full reload: %d rows, want 26", n)
	}
	if len(h.logs.matching(`"mode":"full"`, "refresh done")) != 1 || len(h.logs.matching(`"mode":"append"`, "refresh done")) != 3 {
		t.Errorf("refresh modes logged: %v", h.logs.matching("refresh done"))
	}
}

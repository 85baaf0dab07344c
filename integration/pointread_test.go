package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/integration/corpora"
)

// pointReadSchema has one table per kind of subset an acceleration can hold
// of its table: refresh_sql's filter and column list, a data window,
// retention_sql and retention_period. Rows 1-10 of each are outside the
// subset, rows 11-20 inside.
const pointReadSchema = `
DROP TABLE IF EXISTS pr_sql, pr_window, pr_rsql, pr_rperiod;
CREATE TABLE pr_sql (id int PRIMARY KEY, kind text, at timestamptz, secret text);
CREATE TABLE pr_window (id int PRIMARY KEY, kind text, at timestamptz);
CREATE TABLE pr_rsql (id int PRIMARY KEY, kind text, at timestamptz);
CREATE TABLE pr_rperiod (id int PRIMARY KEY, kind text, at timestamptz);
INSERT INTO pr_sql SELECT g, CASE WHEN g <= 10 THEN 'hidden' ELSE 'shown' END, now(), 's' || g FROM generate_series(1, 20) g;
INSERT INTO pr_window SELECT g, 'k' || g, CASE WHEN g <= 10 THEN now() - interval '3 days' ELSE now() - interval '1 hour' END FROM generate_series(1, 20) g;
INSERT INTO pr_rsql SELECT g, CASE WHEN g <= 10 THEN 'evicted' ELSE 'kept' END, now() FROM generate_series(1, 20) g;
INSERT INTO pr_rperiod SELECT g, 'k' || g, CASE WHEN g <= 10 THEN now() - interval '3 days' WHEN g = 20 THEN NULL ELSE now() - interval '1 hour' END FROM generate_series(1, 20) g;
GRANT SELECT ON pr_sql, pr_window, pr_rsql, pr_rperiod TO app;
`

const pointReadDatasets = `  - from: postgres:public.pr_sql
    acceleration:
      refresh_sql: SELECT id, kind, at FROM pr_sql WHERE kind <> 'hidden'
  - from: postgres:public.pr_window
    time_column: at
    acceleration:
      refresh_data_window: 1d
  - from: postgres:public.pr_rsql
    acceleration:
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_sql: DELETE FROM pr_rsql WHERE kind = 'evicted'
  - from: postgres:public.pr_rperiod
    time_column: at
    acceleration:
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_period: 1d
`

// TestPointReads_ReadTheSubsetTheAccelerationHolds: with point_reads:
// origin a read by primary key goes to the origin, and with point_reads:
// acceleration to DuckDB; both answer the same rows, so a row that
// refresh_sql, the data window or retention leaves out of the acceleration
// never comes back from the origin. Simple and extended protocol.
func TestPointReads_ReadTheSubsetTheAccelerationHolds(t *testing.T) {
	mustExec(t, pointReadSchema)
	viaOrigin := startAppRuntime(t, "", "", pointReadDatasets, true)
	viaAccel := startApp(t, pointReadDatasets)
	o := connect(t, appDSN(viaOrigin, appUser, appPass))
	a := connect(t, appDSN(viaAccel, appUser, appPass))
	so := connectSimple(t, appDSN(viaOrigin, appUser, appPass))
	sa := connectSimple(t, appDSN(viaAccel, appUser, appPass))
	for _, table := range []string{"pr_sql", "pr_window", "pr_rsql", "pr_rperiod"} {
		queries := []struct {
			sql  string
			args []any
		}{
			{fmt.Sprintf("SELECT id, kind FROM %s WHERE id = $1", table), []any{5}},
			{fmt.Sprintf("SELECT id, kind FROM %s WHERE id = $1", table), []any{15}},
			{fmt.Sprintf("SELECT t.kind FROM public.%s t WHERE t.id = 3", table), nil},
			{fmt.Sprintf("SELECT count(*) FROM %s WHERE id = 12", table), nil},
			{fmt.Sprintf("SELECT id FROM %s WHERE id IN (1, 2, 11, 12, 20) ORDER BY id", table), nil},
		}
		for _, q := range queries {
			for _, pair := range []struct {
				name           string
				origin, accel  *pgx.Conn
				inlineLiterals bool
			}{{"extended", o, a, false}, {"simple", so, sa, true}} {
				sql, args := q.sql, q.args
				if pair.inlineLiterals {
					sql, args = corpora.Inline(sql, args), nil
				}
				var got, want []string
				r := routeOf(t, viaOrigin, func() { got = mustQuery(t, pair.origin, sql, args...) })
				ra := routeOf(t, viaAccel, func() { want = mustQuery(t, pair.accel, sql, args...) })
				if r != org || ra != acc {
					t.Errorf("%s (%s): routes %s and %s, want origin (point read) and accelerated", sql, pair.name, r, ra)
				}
				if strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("%s (%s): point read at the origin %q, the acceleration %q", sql, pair.name, got, want)
				}
			}
		}
	}
	// A column the acceleration does not hold (refresh_sql leaves it out):
	// no point read, it goes to the origin as it is.
	if got := mustQuery(t, o, "SELECT secret FROM pr_sql WHERE id = 5"); strings.Join(got, ",") != "s5" {
		t.Errorf("a column outside refresh_sql: %q", got)
	}
	if n := originRequests(t, viaOrigin)["point_read"]; n == 0 {
		t.Errorf("no point_read requests counted: %v", originRequests(t, viaOrigin))
	}
}

// pointZeroSchema: rows 1-5 are outside refresh_sql's subset (hidden), rows
// 6-10 are evicted by retention_sql (evicted), rows 11-20 are in every
// subset (shown).
const pointZeroSchema = `
DROP TABLE IF EXISTS pz_sub_us, pz_sub_us_ret, pz_ret_us, pz_retoff_us, pz_sub_ret, pz_us;
CREATE TABLE pz_sub_us (id int PRIMARY KEY, kind text);
INSERT INTO pz_sub_us SELECT g, CASE WHEN g <= 5 THEN 'hidden' WHEN g <= 10 THEN 'evicted' ELSE 'shown' END FROM generate_series(1, 20) g;
CREATE TABLE pz_sub_us_ret AS SELECT * FROM pz_sub_us;
CREATE TABLE pz_ret_us AS SELECT * FROM pz_sub_us;
CREATE TABLE pz_retoff_us AS SELECT * FROM pz_sub_us;
CREATE TABLE pz_sub_ret AS SELECT * FROM pz_sub_us;
CREATE TABLE pz_us AS SELECT * FROM pz_sub_us;
ALTER TABLE pz_sub_us_ret ADD PRIMARY KEY (id);
ALTER TABLE pz_ret_us ADD PRIMARY KEY (id);
ALTER TABLE pz_retoff_us ADD PRIMARY KEY (id);
ALTER TABLE pz_sub_ret ADD PRIMARY KEY (id);
ALTER TABLE pz_us ADD PRIMARY KEY (id);
GRANT SELECT ON pz_sub_us, pz_sub_us_ret, pz_ret_us, pz_retoff_us, pz_sub_ret, pz_us TO app;
`

// TestPointReads_AnswerWhatTheAccelerationAndFallbackWould: with the
// default point_reads: origin, a read by primary key answers what the
// accelerated route followed by on_zero_results would: the subset the
// acceleration holds (refresh_sql, retention with its checks enabled), and
// when that answer is empty, with use_source, the source less the rows the
// retention policy evicts. Every combination of a refresh_sql subset,
// use_source and retention (checked or not), rows inside and outside the
// subset, simple and extended protocol; the expected answers are the
// origin's, over the subset and then the fallback's rows, and the same
// datasets with point_reads: acceleration must agree.
func TestPointReads_AnswerWhatTheAccelerationAndFallbackWould(t *testing.T) {
	mustExec(t, pointZeroSchema)
	t.Cleanup(func() {
		mustExec(t, "DROP TABLE IF EXISTS pz_sub_us, pz_sub_us_ret, pz_ret_us, pz_retoff_us, pz_sub_ret, pz_us")
	})
	const (
		subset  = "kind <> 'hidden'"
		retains = "(NOT (kind = 'evicted') OR (kind = 'evicted') IS NULL)"
	)
	tables := []struct {
		name, config string
		// subset: the rows the acceleration holds ("" all); fallback: the
		// rows use_source reads back ("-": no use_source).
		subset, fallback string
		// atOrigin: point reads stay point reads at the origin.
		atOrigin bool
	}{
		{"pz_sub_us", `
      refresh_sql: SELECT * FROM pz_sub_us WHERE kind <> 'hidden'
      on_zero_results: use_source`, subset, "", false},
		{"pz_sub_us_ret", `
      refresh_sql: SELECT * FROM pz_sub_us_ret WHERE kind <> 'hidden'
      on_zero_results: use_source
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_sql: DELETE FROM pz_sub_us_ret WHERE kind = 'evicted'`, subset + " AND " + retains, retains, false},
		{"pz_ret_us", `
      on_zero_results: use_source
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_sql: DELETE FROM pz_ret_us WHERE kind = 'evicted'`, retains, retains, true},
		{"pz_retoff_us", `
      on_zero_results: use_source
      retention_sql: DELETE FROM pz_retoff_us WHERE kind = 'evicted'`, "", retains, false},
		{"pz_sub_ret", `
      refresh_sql: SELECT * FROM pz_sub_ret WHERE kind <> 'hidden'
      retention_check_enabled: true
      retention_check_interval: 1h
      retention_sql: DELETE FROM pz_sub_ret WHERE kind = 'evicted'`, subset + " AND " + retains, "-", true},
		{"pz_us", `
      on_zero_results: use_source`, "", "", true},
	}
	var datasets strings.Builder
	for _, tb := range tables {
		fmt.Fprintf(&datasets, "  - from: postgres:public.%s\n    acceleration:%s\n", tb.name, tb.config)
	}
	viaOrigin := startAppRuntime(t, "", "", datasets.String(), true)
	viaAccel := startApp(t, datasets.String())
	direct := connect(t, origin.DSN(appUser, appPass))
	conns := []struct {
		name           string
		origin, accel  *pgx.Conn
		inlineLiterals bool
	}{
		{"extended", connect(t, appDSN(viaOrigin, appUser, appPass)), connect(t, appDSN(viaAccel, appUser, appPass)), false},
		{"simple", connectSimple(t, appDSN(viaOrigin, appUser, appPass)), connectSimple(t, appDSN(viaAccel, appUser, appPass)), true},
	}
	// expected is the origin's answer to sql over table's subset, and,
	// with use_source, over its fallback's rows when that is empty.
	expected := func(tb string, sql, pred string, args []any) []string {
		from := "FROM " + tb
		if pred != "" {
			from = fmt.Sprintf("FROM (SELECT * FROM %s WHERE %s) %s", tb, pred, tb)
		}
		return mustQuery(t, direct, strings.Replace(sql, "FROM "+tb, from, 1), args...)
	}
	for _, tb := range tables {
		queries := []struct {
			sql  string
			args []any
		}{
			{"SELECT id, kind FROM %s WHERE id = $1", []any{3}},  // hidden
			{"SELECT id, kind FROM %s WHERE id = $1", []any{8}},  // evicted
			{"SELECT id, kind FROM %s WHERE id = $1", []any{15}}, // shown
			{"SELECT id, kind FROM %s WHERE id = $1", []any{99}}, // absent
			{"SELECT id FROM %s WHERE id IN (3, 8, 15) ORDER BY id", nil},
			{"SELECT count(*) FROM %s WHERE id = 3", nil},
			{"SELECT 'none' FROM %s WHERE id = $1 HAVING count(*) = 0", []any{8}},
		}
		for _, q := range queries {
			sql := fmt.Sprintf(q.sql, tb.name)
			want := expected(tb.name, sql, tb.subset, q.args)
			if len(want) == 0 && tb.fallback != "-" {
				want = expected(tb.name, sql, tb.fallback, q.args)
			}
			for _, c := range conns {
				sql, args := sql, q.args
				if c.inlineLiterals {
					sql, args = corpora.Inline(sql, args), nil
				}
				var got, accel []string
				r := routeOf(t, viaOrigin, func() { got = mustQuery(t, c.origin, sql, args...) })
				ra := routeOf(t, viaAccel, func() { accel = mustQuery(t, c.accel, sql, args...) })
				if strings.Join(got, "|") != strings.Join(want, "|") || strings.Join(accel, "|") != strings.Join(want, "|") {
					t.Errorf("%s (%s) %v: point_reads: origin %q, acceleration %q, want %q", sql, c.name, args, got, accel, want)
				}
				if (r == org) != tb.atOrigin || ra == org {
					t.Errorf("%s (%s) %v: routes %s with point_reads: origin and %s with acceleration", sql, c.name, args, r, ra)
				}
			}
		}
	}
	// The case, spelled out: a key outside refresh_sql's subset.
	if got := mustQuery(t, conns[0].origin, "SELECT id, kind FROM pz_sub_us WHERE id = $1", 3); strings.Join(got, "|") != "3hidden" {
		t.Errorf("a key outside the subset with use_source: %q, want the source's row", got)
	}
}

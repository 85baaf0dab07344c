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

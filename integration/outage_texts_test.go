package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestSessions_NewTextsThroughOutage: statements whose text was never
// seen before the origin stopped, but whose shape was (the same statement
// with other values in its WHERE clause, as a dashboard's filters or
// Grafana's time ranges make them), are answered from the acceleration
// during the outage, through psql and pgx (simple and extended protocol).
func TestSessions_NewTextsThroughOutage(t *testing.T) {
	setupProxyAuth(t)
	for _, mode := range []string{"origin", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			a, _ := startSessionsApp(t, mode, "origin", t.TempDir(), "60s", true)
			dsn := appDSN(a, sessUser, sessPass)
			ctx := ctxT(t)
			ps := startPsql(t, dsn)
			ext := connect(t, dsn)
			simple := connectSimple(t, dsn)
			countOver := func(q interface {
				QueryRow(context.Context, string, ...any) pgx.Row
			}, sql string) (int64, error) {
				var n int64
				err := q.QueryRow(ctx, sql).Scan(&n)
				return n, err
			}
			if got := ps.run("SELECT count(*) FROM sess_orders WHERE id > 100 AND v <> 'x'"); got != "100" {
				t.Fatalf("psql before the outage: %q", got)
			}
			for _, q := range []*pgx.Conn{ext, simple} {
				if n, err := countOver(q, "SELECT count(*) FROM sess_orders WHERE id > 100 AND v <> 'x'"); err != nil || n != 100 {
					t.Fatalf("before the outage: %d %v", n, err)
				}
			}
			resume := origin.PauseDuring(t)
			if got := ps.run("SELECT count(*) FROM sess_orders WHERE id > 150 AND v <> 'y'"); got != "50" {
				t.Errorf("psql, a new text during the outage: %q", got)
			}
			for name, q := range map[string]*pgx.Conn{"extended": ext, "simple": simple} {
				for i, over := range []int{160, 170} {
					sql := fmt.Sprintf("SELECT count(*) FROM sess_orders WHERE id > %d AND v <> 'z%d'", over, i)
					if n, err := countOver(q, sql); err != nil || n != int64(200-over) {
						t.Errorf("%s, a new text during the outage: %d %v", name, n, err)
					}
				}
			}
			// pgjdbc-style: a named statement prepared during the outage.
			named := ext.PgConn()
			if _, err := named.Prepare(ctx, "S_new", "SELECT count(*) FROM sess_orders WHERE id > 190 AND v <> 'q'", nil); err != nil {
				t.Errorf("prepare during the outage: %v", err)
			} else if res := named.ExecPrepared(ctx, "S_new", nil, nil, nil).Read(); res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "10" {
				t.Errorf("a named statement during the outage: %v %v", res.Rows, res.Err)
			}
			// A text of a shape never described: ERROR 08006, and the
			// sessions go on.
			if _, err := countOver(ext, "SELECT count(*) + 1 FROM sess_orders WHERE id > 5"); pgErrCode(err) != "08006" {
				t.Errorf("a new shape during the outage: %v, want 08006", err)
			}
			if got := ps.run("SELECT count(*), 2 FROM sess_orders"); !strings.Contains(got, "origin is unavailable") {
				t.Errorf("psql, a new shape during the outage: %q", got)
			}
			if got := ps.run("SELECT count(*) FROM sess_orders WHERE id > 199 AND v <> ''"); got != "1" {
				t.Errorf("psql after the failed one: %q", got)
			}
			if n, err := countOver(ext, "SELECT count(*) FROM sess_orders WHERE id > 198 AND v <> 'a'"); err != nil || n != 2 {
				t.Errorf("extended after the failed one: %d %v", n, err)
			}

			if err := resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			waitOriginBack(t)
			if mode == "origin" {
				return // its sessions cannot log in again (TestSessions_PsqlAndPointReadsThroughOutage)
			}
			// The origin returns: the statement prepared during the outage
			// is set up there when a transaction that wrote runs it.
			time.Sleep(originRetry)
			tx, err := ext.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO sess_writes (note) VALUES ('texts')"); err != nil {
				t.Fatal(err)
			}
			if res := named.ExecPrepared(ctx, "S_new", nil, nil, nil).Read(); res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "10" {
				t.Errorf("the named statement at the origin: %v %v", res.Rows, res.Err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := countOver(ext, "SELECT count(*) FROM sess_orders WHERE id > 160 AND v <> 'z0'"); err != nil || n != 40 {
				t.Errorf("after the origin returned: %d %v", n, err)
			}
		})
	}
}

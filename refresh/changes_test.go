package refresh

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// changesDataset is the YAML of a changes dataset of public.<table>.
func changesDataset(table, mode string) string {
	return fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      mode: %s\n      refresh_mode: changes\n      primary_key: [id]\n", table, mode)
}

// rowsText renders rows as one line per row.
func rowsText(rows [][]*string) string {
	var b strings.Builder
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte('|')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(*v)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// duckText is rowsText for DuckDB rows (values printed with %v).
func duckText(rows [][]any) string {
	var b strings.Builder
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte('|')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				fmt.Fprint(&b, v)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// waitEqual waits until the acceleration's rows (duckSQL) equal the
// origin's (originSQL), and fails with both after a minute.
func waitEqual(t *testing.T, h *harness, originSQL, duckSQL string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		want := rowsText(originQuery(t, originSQL))
		got := duckText(duckQuery(t, h.eng, duckSQL))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the acceleration does not follow the origin:\norigin:\n%s\nacceleration:\n%s", want, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestChanges_FollowsTheOrigin: a changes dataset loads from its slot's
// snapshot, becomes ready, and then follows inserts, updates (of key
// columns too), deletes, an update that leaves a TOASTed value unchanged,
// a rolled-back transaction, a large transaction and TRUNCATE.
func TestChanges_FollowsTheOrigin(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS cdc_t;
		CREATE TABLE cdc_t (id int PRIMARY KEY, name text, big text, n numeric(10,2));
		ALTER TABLE cdc_t ALTER COLUMN big SET STORAGE EXTERNAL;
		INSERT INTO cdc_t SELECT g, 'n' || g, repeat(md5(g::text), 300), g * 1.5 FROM generate_series(1, 100) g;`)
	cfg := parseConfig(t, "", t.TempDir(), changesDataset("cdc_t", "file"))
	h := newHarness(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "cdc_t"); err != nil {
		t.Fatal(err)
	}
	if st := h.state(t, "cdc_t"); !st.Loaded || st.Status != catalog.StatusReady || st.Rows != 100 {
		t.Fatalf("after the initial load: %+v", st)
	}
	const originSQL = "SELECT id, name, md5(big), n::text FROM cdc_t ORDER BY id"
	duckSQL := "SELECT id, name, md5(big), n::VARCHAR FROM " + h.eng.TableRef("cdc_t") + " ORDER BY id"
	waitEqual(t, h, originSQL, duckSQL)

	originExec(t, `INSERT INTO cdc_t VALUES (101, 'new', 'small', 1.25);
		UPDATE cdc_t SET name = 'renamed' WHERE id = 5;
		UPDATE cdc_t SET n = n + 1 WHERE id BETWEEN 10 AND 20;
		UPDATE cdc_t SET id = 1000 WHERE id = 7;
		DELETE FROM cdc_t WHERE id IN (2, 3);
		BEGIN; UPDATE cdc_t SET name = 'rolled back' WHERE id = 1; ROLLBACK;
		BEGIN; INSERT INTO cdc_t VALUES (102, 'a', 'x', 0); UPDATE cdc_t SET name = 'b' WHERE id = 102; DELETE FROM cdc_t WHERE id = 102; INSERT INTO cdc_t VALUES (102, 'c', 'y', 1); COMMIT;`)
	waitEqual(t, h, originSQL, duckSQL)

	// A transaction larger than one batch.
	originExec(t, `INSERT INTO cdc_t SELECT g, 'bulk', 'b', 0 FROM generate_series(2000, 47000) g;
		UPDATE cdc_t SET name = 'bulk2' WHERE id BETWEEN 2000 AND 30000;`)
	waitEqual(t, h, "SELECT count(*), count(*) FILTER (WHERE name = 'bulk2'), sum(id) FROM cdc_t",
		"SELECT count(*), count(*) FILTER (WHERE name = 'bulk2'), sum(id) FROM "+h.eng.TableRef("cdc_t"))
	originExec(t, `DELETE FROM cdc_t WHERE id >= 2000`)
	waitEqual(t, h, originSQL, duckSQL)

	originExec(t, `TRUNCATE cdc_t; INSERT INTO cdc_t VALUES (1, 'after truncate', 'z', 2)`)
	waitEqual(t, h, originSQL, duckSQL)
	if st, ok := h.run.Replication("cdc_t"); !ok || st.Transactions == 0 || st.Rebuilds != 1 {
		t.Errorf("replication status = %+v", st)
	}
}

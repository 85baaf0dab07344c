package refresh

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
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
		var got string
		if rows, err := h.eng.Query(context.Background(), duckSQL); err != nil {
			got = err.Error() // a column not added yet
		} else {
			var vals [][]any
			for rows.Next() {
				vals = append(vals, append([]any(nil), rows.Values()...))
			}
			rows.Close()
			got = duckText(vals)
		}
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

// TestChanges_ResumesAndRebuilds: a restart resumes from the stored
// position (changes made while pgaccel was down are applied, none twice);
// a slot dropped while it was down makes it rebuild; an on-demand refresh
// rebuilds; a slot no dataset uses any more shows as an orphan and drops.
func TestChanges_ResumesAndRebuilds(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS cdc_r;
		CREATE TABLE cdc_r (id int PRIMARY KEY, v int);
		INSERT INTO cdc_r SELECT g, g FROM generate_series(1, 50) g;`)
	dir := t.TempDir()
	const originSQL = "SELECT id, v FROM cdc_r ORDER BY id"
	start := func() (*harness, context.CancelFunc) {
		cfg := parseConfig(t, "", dir, changesDataset("cdc_r", "file"))
		h := newHarness(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		h.run.Start(ctx)
		if err := h.run.WaitReady(ctx, "cdc_r"); err != nil {
			t.Fatal(err)
		}
		return h, cancel
	}
	duck := func(h *harness) string { return "SELECT id, v FROM " + h.eng.TableRef("cdc_r") + " ORDER BY id" }
	h, cancel := start()
	originExec(t, `UPDATE cdc_r SET v = v + 100 WHERE id <= 10`)
	waitEqual(t, h, originSQL, duck(h))
	rs, _ := h.run.Replication("cdc_r")
	cancel()
	h.close(t)

	// Changes while down: applied after the restart, from the stored
	// position, without a rebuild.
	originExec(t, `UPDATE cdc_r SET v = v + 1000 WHERE id <= 20; DELETE FROM cdc_r WHERE id > 45; INSERT INTO cdc_r VALUES (99, 99)`)
	h, cancel = start()
	waitEqual(t, h, originSQL, duck(h))
	if st, _ := h.run.Replication("cdc_r"); st.Rebuilds != 0 {
		t.Errorf("a restart with the slot in place rebuilt: %+v", st)
	}
	if len(h.logs.matching("resuming the change stream from the stored position")) != 1 {
		t.Errorf("no resume logged: %v", h.logs.matching("cdc_r"))
	}
	cancel()
	h.close(t)

	// The slot dropped while down: a rebuild from a new snapshot.
	originExec(t, "SELECT pg_drop_replication_slot('"+rs.Slot+"')")
	originExec(t, `UPDATE cdc_r SET v = -v`)
	h, cancel = start()
	defer cancel()
	waitEqual(t, h, originSQL, duck(h))
	if st, _ := h.run.Replication("cdc_r"); st.Rebuilds != 1 {
		t.Errorf("after the slot was dropped: %+v, want one rebuild", st)
	}
	if len(h.logs.matching("rebuilding the acceleration", "is gone")) != 1 {
		t.Errorf("the rebuild's reason is not logged: %v", h.logs.matching("rebuild"))
	}

	// An on-demand refresh rebuilds, and the stream goes on after it.
	if err := h.run.Trigger("cdc_r"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for st, _ := h.run.Replication("cdc_r"); st.Rebuilds < 2; st, _ = h.run.Replication("cdc_r") {
		if time.Now().After(deadline) {
			t.Fatalf("no rebuild after an on-demand refresh: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	originExec(t, `INSERT INTO cdc_r VALUES (100, 100)`)
	waitEqual(t, h, originSQL, duck(h))
	// Refresh waits for the rebuild it asks for.
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	defer rcancel()
	if err := h.run.Refresh(rctx, "cdc_r"); err != nil {
		t.Fatalf("Refresh of a changes dataset: %v", err)
	}
	if st, _ := h.run.Replication("cdc_r"); st.Rebuilds != 3 {
		t.Errorf("after Refresh: %+v, want a third rebuild", st)
	}

	// A slot of this instance that no dataset uses.
	orphan := strings.Replace(rs.Slot, "cdc_r", "gone_dataset", 1)
	originExec(t, "SELECT pg_create_logical_replication_slot('"+orphan+"', 'pgoutput')")
	slots, err := h.run.Slots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range slots {
		if s.Name == orphan {
			found = s.Orphan()
		}
		if s.Name == rs.Slot && (s.Orphan() || s.Dataset != "cdc_r") {
			t.Errorf("the dataset's own slot: %+v", s)
		}
	}
	if !found {
		t.Errorf("the orphan slot %s is not listed as one: %+v", orphan, slots)
	}
	if err := h.run.DropSlot(context.Background(), rs.Slot); err == nil {
		t.Error("the dataset's own slot was dropped")
	}
	if err := h.run.DropSlot(context.Background(), orphan); err != nil {
		t.Error(err)
	}
}

// TestChanges_SchemaReplicaIdentityAndRetention: a nullable column added at
// the origin joins the acceleration; a retyped column rebuilds; a table
// with REPLICA IDENTITY FULL and no primary key follows by primary_key;
// retention also evicts rows the stream brings.
func TestChanges_SchemaReplicaIdentityAndRetention(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS cdc_s, cdc_full, cdc_ret;
		CREATE TABLE cdc_s (id int PRIMARY KEY, v text);
		INSERT INTO cdc_s VALUES (1, 'a'), (2, 'b');
		CREATE TABLE cdc_full (id int, v text);
		ALTER TABLE cdc_full REPLICA IDENTITY FULL;
		INSERT INTO cdc_full VALUES (1, 'a'), (2, 'b');
		CREATE TABLE cdc_ret (id int PRIMARY KEY, status text);
		INSERT INTO cdc_ret VALUES (1, 'live'), (2, 'archived');`)
	cfg := parseConfig(t, "", t.TempDir(), changesDataset("cdc_s", "file")+changesDataset("cdc_full", "memory")+
		changesDataset("cdc_ret", "memory")+`      retention_check_enabled: true
      retention_check_interval: 1h
      retention_sql: DELETE FROM cdc_ret WHERE status = 'archived'
`)
	h := newHarness(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.run.Start(ctx)
	for _, ds := range []string{"cdc_s", "cdc_full", "cdc_ret"} {
		if err := h.run.WaitReady(ctx, ds); err != nil {
			t.Fatal(err)
		}
	}
	// A column added: it joins, its existing rows NULL.
	originExec(t, `ALTER TABLE cdc_s ADD COLUMN note text; INSERT INTO cdc_s VALUES (3, 'c', 'with a note'); UPDATE cdc_s SET v = 'a2' WHERE id = 1`)
	waitEqual(t, h, "SELECT id, v, note FROM cdc_s ORDER BY id", "SELECT id, v, note FROM "+h.eng.TableRef("cdc_s")+" ORDER BY id")
	if st, _ := h.run.Replication("cdc_s"); st.Rebuilds != 1 {
		t.Errorf("an added column rebuilt the dataset: %+v", st)
	}
	// The registry learns the columns just after the commit that makes
	// the rows visible (flush): wait for it.
	colsDeadline := time.Now().Add(10 * time.Second)
	for cols := h.state(t, "cdc_s").Columns; len(cols) != 3 || cols[2].Name != "note" || !cols[2].Accelerated; cols = h.state(t, "cdc_s").Columns {
		if time.Now().After(colsDeadline) {
			t.Errorf("columns after the added one: %+v", cols)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A retyped column: a rebuild.
	originExec(t, `ALTER TABLE cdc_s ALTER COLUMN v TYPE varchar(10); INSERT INTO cdc_s VALUES (4, 'd', NULL)`)
	waitEqual(t, h, "SELECT id, v, note FROM cdc_s ORDER BY id", "SELECT id, v, note FROM "+h.eng.TableRef("cdc_s")+" ORDER BY id")
	deadline := time.Now().Add(time.Minute)
	for st, _ := h.run.Replication("cdc_s"); st.Rebuilds < 2; st, _ = h.run.Replication("cdc_s") {
		if time.Now().After(deadline) {
			t.Fatalf("a retyped column did not rebuild: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}

	originExec(t, `UPDATE cdc_full SET v = 'b2' WHERE id = 2; DELETE FROM cdc_full WHERE id = 1; INSERT INTO cdc_full VALUES (3, 'c')`)
	waitEqual(t, h, "SELECT id, v FROM cdc_full ORDER BY id", "SELECT id, v FROM "+h.eng.TableRef("cdc_full")+" ORDER BY id")

	// Retention: the archived row is not loaded, and a row the stream
	// brings as archived is evicted too.
	originExec(t, `INSERT INTO cdc_ret VALUES (3, 'archived'), (4, 'live'); UPDATE cdc_ret SET status = 'archived' WHERE id = 1`)
	waitEqual(t, h, "SELECT id, status FROM cdc_ret WHERE status <> 'archived' ORDER BY id", "SELECT id, status FROM "+h.eng.TableRef("cdc_ret")+" ORDER BY id")
}

// TestChanges_CompositeKey: a dataset keyed by two columns follows
// inserts, updates of either key column (also to a key another row held
// before in the same transaction), deletes, a TOASTed value left unchanged
// by a key change, and a text key.
func TestChanges_CompositeKey(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS cdc_ck;
		CREATE TABLE cdc_ck (tenant text, id int, v int, big text, PRIMARY KEY (tenant, id));
		ALTER TABLE cdc_ck ALTER COLUMN big SET STORAGE EXTERNAL;
		INSERT INTO cdc_ck SELECT 't' || (g % 3), g, g, repeat(md5(g::text), 200) FROM generate_series(1, 60) g;`)
	ds := strings.Replace(changesDataset("cdc_ck", "file"), "primary_key: [id]", "primary_key: [tenant, id]", 1)
	cfg := parseConfig(t, "", t.TempDir(), ds)
	h := newHarness(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "cdc_ck"); err != nil {
		t.Fatal(err)
	}
	const originSQL = "SELECT tenant, id, v, md5(big) FROM cdc_ck ORDER BY tenant, id"
	duckSQL := "SELECT tenant, id, v, md5(big) FROM " + h.eng.TableRef("cdc_ck") + " ORDER BY tenant, id"
	waitEqual(t, h, originSQL, duckSQL)
	originExec(t, `INSERT INTO cdc_ck VALUES ('t9', 1, 1, 'new');
		UPDATE cdc_ck SET tenant = 'moved' WHERE id = 3;
		UPDATE cdc_ck SET id = id + 1000 WHERE tenant = 't1' AND id < 20;
		UPDATE cdc_ck SET v = -v WHERE tenant = 't2';
		DELETE FROM cdc_ck WHERE tenant = 't0' AND id > 40;
		BEGIN;
		DELETE FROM cdc_ck WHERE tenant = 't2' AND id = 5;
		UPDATE cdc_ck SET id = 5 WHERE tenant = 't2' AND id = 8;
		COMMIT;`)
	waitEqual(t, h, originSQL, duckSQL)
	// The status's row count follows the applied batch, a moment after
	// its rows are visible.
	pgtest.WaitFor(t, "the status's row count 53", func() bool { return h.state(t, "cdc_ck").Rows == 53 })
}

// TestChanges_BusyStreamStillReadsItsSlot: the slot's state (and the
// table's identity) is read every 10 s however busy the stream; every
// batch reports the position, which once kept the 10 s check from ever
// coming round while commits kept coming.
func TestChanges_BusyStreamStillReadsItsSlot(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS cdc_busy;
		CREATE TABLE cdc_busy (id bigserial PRIMARY KEY, v int);`)
	cfg := parseConfig(t, "", t.TempDir(), changesDataset("cdc_busy", "file"))
	h := newHarness(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.run.Start(ctx)
	if err := h.run.WaitReady(ctx, "cdc_busy"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				_ = srv.Exec(context.Background(), "INSERT INTO cdc_busy (v) SELECT g FROM generate_series(1, 50) g")
			}
		}
	}()
	defer func() { close(stop); <-done }()
	time.Sleep(500 * time.Millisecond)
	first, _ := h.run.Replication("cdc_busy")
	deadline := time.Now().Add(25 * time.Second)
	for {
		st, _ := h.run.Replication("cdc_busy")
		if st.RetainedBytes != first.RetainedBytes && st.Transactions > first.Transactions {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot's retained WAL was not read again in 25 s of a busy stream: first %+v, now %+v", first, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

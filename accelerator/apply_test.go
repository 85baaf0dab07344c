package accelerator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

func int4(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// TestApplier_AppliesChangesWithTheirPosition applies puts, deletes, an
// update whose TOASTed column is unchanged, a key change and a TRUNCATE,
// and checks the rows, the row count and the checkpoint's position.
func TestApplier_AppliesChangesWithTheirPosition(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS apply_t;
		CREATE TABLE apply_t (id int PRIMARY KEY, name text, note text);
		INSERT INTO apply_t SELECT g, 'n' || g, 'note ' || g FROM generate_series(1, 5) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("apply_t", "apply_t", catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	cols := originColumns(t, "apply_t")
	repl := &Replication{Slot: "s", Publication: "p", SystemID: "42", LSN: 100}
	if _, err := e.LoadWith(ctx, ds, cols, copyQuery(ctx, t, "SELECT * FROM apply_t"), LoadOptions{PrimaryKey: []string{"id"}, Replication: repl}); err != nil {
		t.Fatal(err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	put := func(id int32, name string, unchangedNote bool, src int32) Change {
		c := Change{Row: [][]byte{int4(id), []byte(name), []byte("new note")}}
		if unchangedNote {
			c.Row[2] = nil
			c.Unchanged = []bool{false, false, true}
			c.Src = [][]byte{int4(src)}
		}
		return c
	}
	del := func(id int32) Change { return Change{Delete: true, Key: [][]byte{int4(id)}} }
	changes := []Change{put(6, "six", false, 0), del(2), put(3, "three", true, 3), put(10, "ten", true, 4), del(4), put(5, "five", false, 0)}
	if err := a.Apply(ctx, false, changes); err != nil {
		t.Fatal(err)
	}
	// Uncommitted: readers see the old rows.
	if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("apply_t")+" WHERE name LIKE 'n%'"); n != 5 {
		t.Errorf("before the commit, %d old rows visible, want 5", n)
	}
	st, err := a.Commit(ctx, Replication{Slot: "s", Publication: "p", SystemID: "42", LSN: 200}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(duckRows(t, e, "SELECT id, name, note FROM "+e.TableRef("apply_t")+" ORDER BY id"))
	want := "[[1 n1 note 1] [3 three note 3] [5 five new note] [6 six new note] [10 ten note 4]]"
	if got != want {
		t.Errorf("rows = %s\nwant   %s", got, want)
	}
	if st.Rows != 5 || st.Inserted != 4 || st.Deleted != 4 {
		t.Errorf("stats = %+v, want 5 rows, 4 inserted, 4 deleted", st)
	}
	info, err := e.Stored(ctx, "apply_t")
	if err != nil || info == nil || info.Replication == nil || info.Replication.LSN != 200 || info.Rows != 5 {
		t.Fatalf("stored = %+v, %v; want LSN 200 and 5 rows", info, err)
	}
	// A TRUNCATE and a put after it, in a batch of their own.
	if err := a.Apply(ctx, true, []Change{put(7, "seven", false, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, Replication{LSN: 300}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(duckRows(t, e, "SELECT id, name FROM "+e.TableRef("apply_t"))); got != "[[7 seven]]" {
		t.Errorf("after a truncate: %s", got)
	}
	// A rolled-back apply changes nothing.
	if err := a.Apply(ctx, false, []Change{del(7)}); err != nil {
		t.Fatal(err)
	}
	a.Rollback()
	if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("apply_t")); n != 1 {
		t.Errorf("after a rollback: %d rows, want 1", n)
	}
}

// TestApplier_TruncateThenLongStrings: strings longer than DuckDB's inline
// size survive later applies (they must be copied out of the staging
// tables).
func TestApplier_TruncateThenLongStrings(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS apply_s;
		CREATE TABLE apply_s (id int PRIMARY KEY, name text);
		INSERT INTO apply_s SELECT g, 'a fairly long name ' || g FROM generate_series(1, 3) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("apply_s", "apply_s", catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	if _, err := e.LoadWith(ctx, ds, originColumns(t, "apply_s"), copyQuery(ctx, t, "SELECT * FROM apply_s"), LoadOptions{PrimaryKey: []string{"id"}, Replication: &Replication{LSN: 1}}); err != nil {
		t.Fatal(err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	put := func(id int32, name string) Change { return Change{Row: [][]byte{int4(id), []byte(name)}} }
	for i, step := range []struct {
		truncate bool
		changes  []Change
		want     string
	}{
		{true, []Change{put(1, "after truncate, long")}, "[[1 after truncate, long]]"},
		{false, []Change{put(2, "second long string value")}, "[[1 after truncate, long] [2 second long string value]]"},
		{false, []Change{put(3, "third long string value!")}, "[[1 after truncate, long] [2 second long string value] [3 third long string value!]]"},
	} {
		if err := a.Apply(ctx, step.truncate, step.changes); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Commit(ctx, Replication{LSN: uint64(10 + i)}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(duckRows(t, e, "SELECT id, name FROM "+e.TableRef("apply_s")+" ORDER BY id")); got != step.want {
			t.Errorf("step %d: %s, want %s", i, got, step.want)
		}
	}
}

// TestApplier_SeveralAppliesInOneTransaction: a large origin transaction
// applies in several batches before one commit; every string survives.
func TestApplier_SeveralAppliesInOneTransaction(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS apply_m;
		CREATE TABLE apply_m (id int PRIMARY KEY, name text);`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("apply_m", "apply_m", catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	if _, err := e.LoadWith(ctx, ds, originColumns(t, "apply_m"), copyQuery(ctx, t, "SELECT * FROM apply_m"), LoadOptions{PrimaryKey: []string{"id"}, Replication: &Replication{LSN: 1}}); err != nil {
		t.Fatal(err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	name := func(id int) string { return fmt.Sprintf("a long enough name for row %d", id) }
	for round := 0; round < 3; round++ {
		for batch := 0; batch < 4; batch++ {
			var cs []Change
			for i := 0; i < 3000; i++ {
				id := round*100000 + batch*3000 + i
				cs = append(cs, Change{Row: [][]byte{int4(int32(id)), []byte(name(id))}})
			}
			if err := a.Apply(ctx, false, cs); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Commit(ctx, Replication{LSN: uint64(10 + round)}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := a.Apply(ctx, true, []Change{{Row: [][]byte{int4(1), []byte(name(1))}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Commit(ctx, Replication{LSN: uint64(20 + round)}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(duckRows(t, e, "SELECT id, name FROM "+e.TableRef("apply_m"))); got != "[[1 "+name(1)+"]]" {
			t.Fatalf("round %d: %s", round, got)
		}
	}
}

// TestApplier_PreparedQueriesSeeApplies: a query text the engine keeps
// prepared reads what later applies committed.
func TestApplier_PreparedQueriesSeeApplies(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS apply_p;
		CREATE TABLE apply_p (id int PRIMARY KEY, name text, big text, n numeric(10,2));
		INSERT INTO apply_p SELECT g, 'n' || g, repeat(md5(g::text), 300), g FROM generate_series(1, 100) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("apply_p", "apply_p", catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	if _, err := e.LoadWith(ctx, ds, originColumns(t, "apply_p"), copyQuery(ctx, t, "SELECT * FROM apply_p"), LoadOptions{PrimaryKey: []string{"id"}, Replication: &Replication{LSN: 1}}); err != nil {
		t.Fatal(err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	q := "SELECT id, name, md5(big), n::VARCHAR FROM " + e.TableRef("apply_p") + " ORDER BY id"
	// The planner names tables bare, not quoted.
	bare := "SELECT id, name, md5(big), n::VARCHAR FROM ds_apply_p.main.apply_p apply_p ORDER BY id NULLS LAST"
	for range 3 {
		duckRows(t, e, q)
		duckRows(t, e, bare)
	}
	// Readers keep running the prepared text while the apply runs.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if rows, err := e.Query(ctx, q); err == nil {
				for rows.Next() {
				}
				rows.Close()
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	dec := []byte{0, 1, 0, 0, 0, 0, 0, 2, 0, 2}
	if err := a.Apply(ctx, true, []Change{{Row: [][]byte{int4(1), []byte("after truncate"), []byte("z"), dec}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, Replication{LSN: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	<-done
	t.Logf("fresh text: %v", duckRows(t, e, q+" LIMIT 10"))
	for i := range 3 {
		for _, q := range []string{q, bare} {
			if got := fmt.Sprint(duckRows(t, e, q)); got != "[[1 after truncate fbade9e36a3f36d3d676c1b808451dd7 2.00]]" {
				t.Errorf("query %d after the apply: %s: %s", i, q, got)
			}
		}
	}
}

// TestDeleteWhere_PreparedQueriesSeeIt: a retention delete does not leave
// the engine's prepared statements reading freed strings.
func TestDeleteWhere_PreparedQueriesSeeIt(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS del_p;
		CREATE TABLE del_p (id int PRIMARY KEY, name text, big text);
		INSERT INTO del_p SELECT g, 'a name longer than twelve ' || g, repeat(md5(g::text), 300) FROM generate_series(1, 100) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("del_p", "del_p", catalog.ModeFile)
	ctx := context.Background()
	loadOrigin(t, e, ds)
	q := "SELECT id, name, md5(big) FROM " + e.TableRef("del_p") + " ORDER BY id"
	for range 3 {
		duckRows(t, e, q)
	}
	if _, _, err := e.DeleteWhere(ctx, "del_p", []string{"id > 1"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if got := fmt.Sprint(duckRows(t, e, q)); got != "[[1 a name longer than twelve 1 274ac1408de09eb8759f17b0b7000fbf]]" {
			t.Errorf("query %d after the delete: %s", i, got)
		}
	}
}

// TestQuery_NoStatementKeptOverRowsChangedInPlace: DuckDB crashes (or
// returns garbage) running a statement that ran twice before after
// another connection deleted rows it reads (see markInPlace); a dataset
// whose rows change in place (changes, append, retention) never has its
// statements kept, a dataset only ever swapped does.
func TestQuery_NoStatementKeptOverRowsChangedInPlace(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS keep_p;
		CREATE TABLE keep_p (id int PRIMARY KEY, name text);
		INSERT INTO keep_p SELECT g, 'n' || g FROM generate_series(1, 10) g;`)
	for _, mode := range []string{catalog.RefreshFull, catalog.RefreshChanges} {
		e := openEngine(t, t.TempDir())
		ds := testDataset("keep_p", "keep_p", catalog.ModeFile)
		ds.Acceleration.RefreshMode = mode
		ds.Acceleration.PrimaryKey = []string{"id"}
		ctx := context.Background()
		if _, err := e.LoadWith(ctx, ds, originColumns(t, "keep_p"), copyQuery(ctx, t, "SELECT * FROM keep_p"), LoadOptions{PrimaryKey: []string{"id"}, Replication: &Replication{LSN: 1}}); err != nil {
			t.Fatal(err)
		}
		before := e.prepares.Load()
		for range 5 {
			duckRows(t, e, "SELECT id, name FROM ds_keep_p.main.keep_p keep_p ORDER BY id NULLS LAST")
		}
		n := e.prepares.Load() - before
		if mode == catalog.RefreshChanges && n != 5 {
			t.Errorf("refresh_mode %s: %d prepares for 5 runs of one text, want 5 (none kept)", mode, n)
		}
		if mode == catalog.RefreshFull && n >= 5 {
			t.Errorf("refresh_mode %s: %d prepares for 5 runs of one text, want it kept", mode, n)
		}
	}
}

// TestApplier_UnstorableKeyIsADataError: a key value the key column's
// DuckDB type cannot hold (time 24:00:00) cannot be left out like another
// column's (the key would no longer find its row): the apply fails as a
// data error and nothing of it is committed.
func TestApplier_UnstorableKeyIsADataError(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS apply_k;
		CREATE TABLE apply_k (t time PRIMARY KEY, v int);
		INSERT INTO apply_k VALUES ('01:00', 1), ('02:00', 2);`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("apply_k", "apply_k", catalog.ModeFile)
	ds.Acceleration.PrimaryKey = []string{"t"}
	ctx := context.Background()
	if _, err := e.LoadWith(ctx, ds, originColumns(t, "apply_k"), copyQuery(ctx, t, "SELECT * FROM apply_k"), LoadOptions{PrimaryKey: []string{"t"}, Replication: &Replication{LSN: 1}}); err != nil {
		t.Fatal(err)
	}
	a, err := e.NewApplier(ctx, ds, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	midnight := binary.BigEndian.AppendUint64(nil, uint64(24*3600*1_000_000))
	err = a.Apply(ctx, false, []Change{{Row: [][]byte{midnight, int4(3)}}})
	if !errors.Is(err, ErrData) {
		t.Fatalf("apply of key 24:00:00: %v, want a data error", err)
	}
	if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("apply_k")); n != 2 {
		t.Errorf("%d rows after the failed apply, want 2", n)
	}
}

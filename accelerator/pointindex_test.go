package accelerator

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// pointSource is a pgbench_accounts-shaped row source of n rows for the
// point index: aid, bid, abalance, an 84-character filler.
const pointSource = `(SELECT i::INTEGER AS aid, (i // 100000 + 1)::INTEGER AS bid, 0::INTEGER AS abalance,
	repeat(' ', 84) AS filler FROM range(1, 100001) t(i))`

// TestPointIndex_KeysAndRows: rows are found by their key, absent keys and
// keys of another kind find nothing, and a duplicate key is refused.
func TestPointIndex_KeysAndRows(t *testing.T) {
	e := openEngine(t, t.TempDir())
	ctx := context.Background()
	ix, err := e.buildPointIndex(ctx, pointSource, []string{"aid", "bid", "abalance", "filler"}, []string{"aid"}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	key := func(v any) []byte {
		b, ok := AppendPointKey(nil, v)
		if !ok {
			t.Fatalf("no key of %T", v)
		}
		return b
	}
	for _, tc := range []struct {
		key  any
		rows int
	}{{int64(1), 1}, {int32(100000), 1}, {int16(77), 1}, {int64(0), 0}, {int64(100001), 0}, {"1", 0}} {
		r, ok := ix.Rows([]string{"filler", "aid"}, key(tc.key))
		if !ok {
			t.Fatalf("%v: no answer", tc.key)
		}
		n := 0
		for r.Next() {
			n++
			if got := r.Values()[1]; got != int32(toInt(tc.key)) {
				t.Fatalf("%v: row of aid %v", tc.key, got)
			}
		}
		if n != tc.rows || r.Err() != nil || r.Close() != nil {
			t.Fatalf("%v: %d rows (%v), want %d", tc.key, n, r.Err(), tc.rows)
		}
	}
	if _, ok := ix.Rows([]string{"nope"}, key(int64(1))); ok {
		t.Fatal("a column the index lacks answered")
	}
	if _, err := e.buildPointIndex(ctx, pointSource, []string{"aid", "bid"}, []string{"bid"}, 1<<30); err == nil {
		t.Fatal("a key that is not unique was indexed")
	}
	if _, err := e.buildPointIndex(ctx, pointSource, []string{"aid", "bid"}, []string{"aid"}, 1<<10); err != ErrPointIndexTooLarge {
		t.Fatalf("over the budget: %v", err)
	}
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	}
	return -1
}

// BenchmarkPointIndex_Build builds the index of 100,000 pgbench_accounts
// rows and reports its estimated size and the heap it holds, per row:
//
//	go test ./accelerator -run '^$' -bench BenchmarkPointIndex_Build -benchtime 3x
func BenchmarkPointIndex_Build(b *testing.B) {
	e := openEngine(b, b.TempDir())
	ctx := context.Background()
	var ix *PointIndex
	var before, after runtime.MemStats
	for b.Loop() {
		ix = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if ix, err = e.buildPointIndex(ctx, pointSource, []string{"aid", "bid", "abalance", "filler"}, []string{"aid"}, 1<<30); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(ix.bytes)/float64(len(ix.rows)), "est-B/row")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(ix.rows)), "heap-B/row")
	runtime.KeepAlive(ix)
}

// TestPointIndex_FollowedEqualsRebuilt: an index that followed change
// batches (updates, deletes, inserts, a put evicted by retention, a key
// deleted and put again) holds exactly what a fresh build of the same
// table holds, value for value; a TRUNCATE drops it.
func TestPointIndex_FollowedEqualsRebuilt(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS follow_t;
		CREATE TABLE follow_t (id bigint PRIMARY KEY, v text, n float8, u uuid);
		INSERT INTO follow_t SELECT g, 'v' || g, g / 4.0, md5(g::text)::uuid FROM generate_series(1, 500) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("follow_t", "follow_t", catalog.ModeMemory)
	ds.Acceleration.PrimaryKey = []string{"id"}
	ctx := context.Background()
	cols := originColumns(t, "follow_t")
	cols[0].Key, cols[0].KeyPart = true, 1
	if _, err := e.LoadWith(ctx, ds, cols, copyQuery(ctx, t, "SELECT * FROM follow_t"), LoadOptions{PrimaryKey: []string{"id"},
		Replication: &Replication{LSN: 1}}); err != nil {
		t.Fatal(err)
	}
	var gen atomic.Uint64
	infos := []catalog.ColumnInfo{{Name: "id", Accelerated: true, KeyPart: 1}, {Name: "v", Accelerated: true}, {Name: "n", Accelerated: true}, {Name: "u", Accelerated: true}}
	p := e.NewPointIndexes(ctx, PointIndexOptions{MaxBytes: 1 << 30,
		State:      func(string) ([]catalog.ColumnInfo, uint64, bool) { return infos, gen.Load(), true },
		Generation: func(string) uint64 { return gen.Load() }})
	key := func(id int64) []byte { b, _ := AppendPointKey(nil, id); return b }
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := p.Rows("follow_t", []string{"id"}, key(1)); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never built")
		}
		time.Sleep(5 * time.Millisecond)
	}
	evict := false
	a, err := e.NewApplier(ctx, ds, ApplyOptions{Retention: func(time.Time) []string {
		if evict {
			return []string{"id = 9000"}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	i8 := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	num := func(f float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)) }
	uid := make([]byte, 16)
	put := func(id int64, v string) Change {
		uid[15] = byte(id)
		return Change{Row: [][]byte{i8(id), []byte(v), num(1.25), append([]byte(nil), uid...)}}
	}
	del := func(id int64) Change { return Change{Delete: true, Key: [][]byte{i8(id)}} }
	lsn := uint64(1)
	commit := func(changes ...Change) {
		t.Helper()
		if err := a.Apply(ctx, false, changes); err != nil {
			t.Fatal(err)
		}
		lsn++
		if _, err := a.Commit(ctx, Replication{LSN: lsn}, time.Now()); err != nil {
			t.Fatal(err)
		}
		gen.Add(1) // what refresh publishes after the commit
	}
	commit(put(2, "two"), del(3), put(600, "new"), del(4), put(4, "back"))
	commit(put(2, "two again"), del(600), put(700, "x"))
	evict = true
	commit(put(9000, "evicted"), put(5, "five"))
	evict = false
	st, _ := p.Status("follow_t")
	if !st.Current || st.Follows != 3 || st.Builds != 1 {
		t.Fatalf("status after the batches: %+v", st)
	}
	followed := p.slots["follow_t"].ix
	defer func() {
		// A reload removed the dataset: its index and status go, and the
		// budget it used is free again.
		p.Forget("follow_t")
		if _, ok := p.Status("follow_t"); ok || p.Bytes() != 0 {
			t.Errorf("after Forget: status kept %v, %d bytes held", ok, p.Bytes())
		}
	}()
	fresh, err := e.buildPointIndex(ctx, e.TableRef("follow_t"), followed.names, followed.key, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.byKey) != len(followed.byKey) {
		t.Fatalf("%d keys followed, %d in a fresh build", len(followed.byKey), len(fresh.byKey))
	}
	for k, i := range fresh.byKey {
		j, ok := followed.byKey[k]
		if !ok || !reflect.DeepEqual(fresh.rows[i], followed.rows[j]) {
			t.Errorf("key %x: followed %v (%v), fresh %v", k, followed.rows[j], ok, fresh.rows[i])
		}
	}
	// A TRUNCATE cannot be followed: the index goes.
	if err := a.Apply(ctx, true, []Change{put(1, "only")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx, Replication{LSN: lsn + 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	gen.Add(1)
	if st, _ := p.Status("follow_t"); st.Current || st.Rows != 0 {
		t.Fatalf("after a truncate: %+v", st)
	}
}

// TestPointIndex_FollowsMergesAndRetention: an append dataset's index
// follows its merges (rows replacing their keys' older versions, new keys,
// a retention delete in the same merge) and its retention passes, and
// holds what a fresh build holds; an append without a primary_key that
// adds a key the index holds drops it (the key is no longer unique).
func TestPointIndex_FollowsMergesAndRetention(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS follow_m;
		CREATE TABLE follow_m (id int PRIMARY KEY, v text, ts int);
		INSERT INTO follow_m SELECT g, 'v' || g, g FROM generate_series(1, 500) g;`)
	e := openEngine(t, t.TempDir())
	ds := testDataset("follow_m", "follow_m", catalog.ModeFile)
	ctx := context.Background()
	cols := originColumns(t, "follow_m")
	cols[0].Key, cols[0].KeyPart = true, 1
	rowsOf := func(q string) io.Reader { return copyQuery(ctx, t, q) }
	if _, err := e.LoadWith(ctx, ds, cols, rowsOf("SELECT * FROM follow_m"), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	var gen atomic.Uint64
	infos := []catalog.ColumnInfo{{Name: "id", Accelerated: true, KeyPart: 1}, {Name: "v", Accelerated: true}, {Name: "ts", Accelerated: true}}
	p := e.NewPointIndexes(ctx, PointIndexOptions{MaxBytes: 1 << 30,
		State:      func(string) ([]catalog.ColumnInfo, uint64, bool) { return infos, gen.Load(), true },
		Generation: func(string) uint64 { return gen.Load() }})
	key := func(id int32) []byte { b, _ := AppendPointKey(nil, id); return b }
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := p.Rows("follow_m", []string{"id"}, key(1)); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never built")
		}
	}
	same := func(what string, follows uint64) {
		t.Helper()
		st, _ := p.Status("follow_m")
		if !st.Current || st.Follows != follows || st.Builds != 1 {
			t.Fatalf("after %s: %+v", what, st)
		}
		followed := p.slots["follow_m"].ix
		fresh, err := e.buildPointIndex(ctx, e.TableRef("follow_m"), followed.names, followed.key, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if len(fresh.byKey) != len(followed.byKey) {
			t.Fatalf("after %s: %d keys followed, %d in a fresh build", what, len(followed.byKey), len(fresh.byKey))
		}
		for k, i := range fresh.byKey {
			if j, ok := followed.byKey[k]; !ok || !reflect.DeepEqual(fresh.rows[i], followed.rows[j]) {
				t.Errorf("after %s: key %x: followed %v (%v), fresh %v", what, k, followed.rows[j], ok, fresh.rows[i])
			}
		}
	}
	merge := &AppendMerge{TimeColumn: "ts", PrimaryKey: []string{"id"}}
	// New versions of keys 1-10 (one older than stored: kept out), new
	// keys 501-520, and a retention delete of ids 400-450 in the merge.
	if _, err := e.LoadWith(ctx, ds, cols, rowsOf(`SELECT g, 'new' || g, CASE WHEN g = 3 THEN 0 ELSE g + 1000 END FROM generate_series(1, 10) g
		UNION ALL SELECT g, 'v' || g, g FROM generate_series(501, 520) g`),
		LoadOptions{Append: merge, Delete: []string{"id BETWEEN 400 AND 450"}}); err != nil {
		t.Fatal(err)
	}
	gen.Add(1) // what refresh publishes after the load
	same("a merge", 1)
	if deleted, _, err := e.DeleteWhere(ctx, "follow_m", []string{"id > 515"}); err != nil || deleted != 5 {
		t.Fatalf("retention pass: %d deleted, %v", deleted, err)
	}
	gen.Add(1)
	same("a retention pass", 2)
	if r, ok := p.Rows("follow_m", []string{"id", "v"}, key(2)); !ok || r == nil {
		t.Fatal("the followed index does not answer")
	}
	// An append without a primary_key adding a second row of key 5.
	if _, err := e.LoadWith(ctx, ds, cols, rowsOf("SELECT 5, 'again', 9999"), LoadOptions{Append: &AppendMerge{}}); err != nil {
		t.Fatal(err)
	}
	gen.Add(1)
	if st, _ := p.Status("follow_m"); st.Current {
		t.Fatalf("after a second row of a key: %+v", st)
	}
}

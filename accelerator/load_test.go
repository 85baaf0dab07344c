package accelerator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

func TestLoad_LoadsRowsAndReportsColumns(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS smoke;
		CREATE TABLE smoke (id int PRIMARY KEY, name text, price numeric(12,2), pt point, at timestamptz);
		INSERT INTO smoke SELECT g, 'n' || g, g * 1.5, point(g, g), '2024-01-01'::timestamptz + g * interval '1 hour'
		FROM generate_series(1, 5000) g;`)
	e := openEngine(t, "")
	ds := testDataset("smoke", "smoke", catalog.ModeMemory)
	stats := loadOrigin(t, e, ds)
	if stats.Rows != 5000 || stats.Bytes == 0 {
		t.Errorf("stats = %+v, want 5000 rows and some bytes", stats)
	}
	var accel []string
	for _, c := range stats.Columns {
		if c.Accelerated {
			accel = append(accel, c.Name)
		}
	}
	if got := strings.Join(accel, ","); got != "id,name,price,at" {
		t.Errorf("accelerated columns = %s, want id,name,price,at (point is not supported)", got)
	}
	if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("smoke")); n != 5000 {
		t.Errorf("count = %d, want 5000", n)
	}
	if n := queryInt(t, e, "SELECT sum(price * 100)::BIGINT FROM "+e.TableRef("smoke")); n != 1875375000 {
		t.Errorf("sum(price*100) = %d, want 1875375000", n)
	}
	rows, err := e.Query(context.Background(), "SELECT name, \"at\" FROM "+e.TableRef("smoke")+" WHERE id = ?", int32(7))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if cols := rows.Columns(); cols[0].DuckType != "VARCHAR" || cols[1].DuckType != "TIMESTAMPTZ" {
		t.Errorf("columns = %+v", cols)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	v := rows.Values()
	if v[0] != "n7" || !v[1].(time.Time).Equal(time.Date(2024, 1, 1, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("row = %v", v)
	}
}

// TestLoad_UnstorableValuesLeaveTheColumnOut loads values Postgres holds
// and the columns' DuckDB types cannot: the load succeeds, the column is
// left out of the acceleration with the reason (column, row, value), and
// the other columns keep their values.
func TestLoad_UnstorableValuesLeaveTheColumnOut(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS unstorable_t;
		CREATE TABLE unstorable_t (id int, amount numeric(10,2), nums numeric(6,2)[], ints int[], zero int[],
			tm time, tms time[], ts timestamp, ok text);
		INSERT INTO unstorable_t VALUES
			(1, 1.5, '{1.25}', '{1,2}', '{1}', '12:00', '{12:00}', '2024-01-01', 'a'),
			(2, 'NaN', '{2.5,NaN}', '{{1,2},{3,4}}', '[0:1]={7,8}', '24:00', '{01:00,24:00}', '294270-01-01', 'b'),
			(3, 'NaN', '{NaN}', '{3}', '{3}', '13:00', '{}', 'infinity', 'c'),
			(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);`)
	e := openEngine(t, "")
	ds := testDataset("unstorable_t", "unstorable_t", catalog.ModeMemory)
	ctx := context.Background()
	st, err := e.Load(ctx, ds, originColumns(t, "unstorable_t"), copyQuery(ctx, t, "SELECT * FROM unstorable_t"))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if st.Rows != 4 {
		t.Errorf("rows = %d, want 4", st.Rows)
	}
	want := map[string]string{
		"amount": "row 2 holds numeric NaN",
		"nums":   "row 2 holds element 2: numeric NaN",
		"ints":   "row 2 holds a 2-dimensional array",
		"zero":   "row 2 holds an array with lower bound 0",
		"tm":     "row 2 holds time 24:00:00",
		"tms":    "row 2 holds element 2: time 24:00:00",
		"ts":     "row 2 holds a timestamp after 294246 AD",
	}
	for _, c := range st.Columns {
		w, out := want[c.Name]
		if c.Accelerated == out || out && !strings.HasPrefix(c.NotAccelerated, w) {
			t.Errorf("column %s: accelerated %v (%q), want left out: %v (%q)", c.Name, c.Accelerated, c.NotAccelerated, out, w)
		}
	}
	rows := duckRows(t, e, "SELECT id, ok FROM "+e.TableRef("unstorable_t")+" ORDER BY id")
	if got := fmt.Sprint(rows); got != "[[1 a] [2 b] [3 c] [4 <nil>]]" {
		t.Errorf("accelerated columns = %s", got)
	}
	// The checkpoint keeps the reasons: a restart serves the same columns.
	info, err := e.Stored(ctx, "unstorable_t")
	if err != nil || info == nil {
		t.Fatalf("stored: %v %v", info, err)
	}
	for i, c := range info.Columns {
		if !reflect.DeepEqual(c, st.Columns[i]) {
			t.Errorf("stored column %+v, loaded %+v", c, st.Columns[i])
		}
	}
	// A later load without such values accelerates the columns again.
	originExec(t, `DELETE FROM unstorable_t WHERE id = 2`)
	// Rows 3 still holds NaNs.
	st, err = e.Load(ctx, ds, originColumns(t, "unstorable_t"), copyQuery(ctx, t, "SELECT * FROM unstorable_t"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Columns {
		if out := c.Name == "amount" || c.Name == "nums"; c.Accelerated == out {
			t.Errorf("after the reload column %s: accelerated %v (%q)", c.Name, c.Accelerated, c.NotAccelerated)
		}
	}
}

// TestLoad_DataErrorsAreMarked: a value the decoder rejects fails the load
// with ErrData, naming the column and the row.
func TestLoad_DataErrorsAreMarked(t *testing.T) {
	// A stream that claims an int4 column but sends 2-byte values.
	var b bytes.Buffer
	b.WriteString("PGCOPY\n\xff\r\n\x00")
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	b.Write([]byte{0, 1, 0, 0, 0, 2, 0, 7})
	b.Write([]byte{0xff, 0xff})
	e := openEngine(t, "")
	ds := testDataset("bad_t", "bad_t", catalog.ModeMemory)
	_, err := e.Load(context.Background(), ds, []ColumnSpec{{Name: "n", TypeOID: 23, TypeMod: -1, TypeName: "integer"}}, &b)
	if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "column n, row 1") {
		t.Fatalf("err = %v, want ErrData naming column n, row 1", err)
	}
}

// failingReader returns the first n bytes of r, then err.
type failingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	n, err := f.r.Read(p)
	f.n -= int64(n)
	return n, err
}

func TestLoad_FailureKeepsThePreviousTable(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS keep_t;
		CREATE TABLE keep_t (id int, s text);
		INSERT INTO keep_t SELECT g, repeat('x', 50) FROM generate_series(1, 100000) g;`)
	ctx := context.Background()
	for _, mode := range []string{catalog.ModeMemory, catalog.ModeFile} {
		t.Run(mode, func(t *testing.T) {
			e := openEngine(t, "")
			ds := testDataset("keep_t", "keep_t", mode)
			loadOrigin(t, e, ds)
			cols := originColumns(t, "keep_t")
			cases := []struct {
				name string
				r    func() io.Reader
				is   error
			}{
				{"stream breaks", func() io.Reader {
					return &failingReader{r: copyQuery(ctx, t, "SELECT * FROM keep_t"), n: 1 << 20, err: io.ErrClosedPipe}
				}, io.ErrClosedPipe},
				{"stream ends early", func() io.Reader {
					return &failingReader{r: copyQuery(ctx, t, "SELECT * FROM keep_t"), n: 1 << 20, err: io.EOF}
				}, errTruncated},
				{"not a copy stream", func() io.Reader { return strings.NewReader("hello") }, nil},
			}
			for _, c := range cases {
				_, err := e.Load(ctx, ds, cols, c.r())
				if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
					t.Errorf("%s: err = %v, want %v", c.name, err, c.is)
				}
				if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("keep_t")); n != 100000 {
					t.Errorf("%s: count after failed load = %d, want 100000", c.name, n)
				}
				if n := queryInt(t, e, "SELECT count(*) FROM duckdb_tables() WHERE table_name = '"+loadTable+"'"); n != 0 {
					t.Errorf("%s: the failed load's table was left behind", c.name)
				}
			}

			cctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(20*time.Millisecond, cancel)
			slow := &slowReader{r: copyQuery(ctx, t, "SELECT * FROM keep_t")}
			_, err := e.Load(cctx, ds, cols, slow)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled load: err = %v, want context.Canceled", err)
			}
			if n := queryInt(t, e, "SELECT count(*) FROM "+e.TableRef("keep_t")); n != 100000 {
				t.Errorf("count after cancelled load = %d, want 100000", n)
			}
		})
	}
}

// slowReader reads 4 KiB at a time with a pause, so that a load outlives a
// short deadline.
type slowReader struct{ r io.Reader }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.r.Read(p[:min(len(p), 4096)])
}

func TestSwap_ReadersSeeTheOldOrTheNewTableNeverAMix(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS swap_t;
		CREATE TABLE swap_t (id bigint, v double precision, s text);
		INSERT INTO swap_t SELECT g, g / 3.0, 'row ' || g FROM generate_series(1, 1000000) g;`)
	e := openEngine(t, "")
	ds := testDataset("swap_t", "swap_t", catalog.ModeMemory)
	loadOrigin(t, e, ds)
	originExec(t, `INSERT INTO swap_t SELECT g, g / 3.0, 'row ' || g FROM generate_series(1000001, 1000500) g`)

	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg      sync.WaitGroup
		reads   atomic.Int64
		sawNew  atomic.Bool
		badMu   sync.Mutex
		badSeen []int64
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				rows, err := e.Query(ctx, "SELECT count(*) FROM "+e.TableRef("swap_t"))
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("reader: %v", err)
					}
					return
				}
				for rows.Next() {
					n := rows.Values()[0].(int64)
					switch n {
					case 1000000:
					case 1000500:
						sawNew.Store(true)
					default:
						badMu.Lock()
						badSeen = append(badSeen, n)
						badMu.Unlock()
					}
				}
				rows.Close()
				reads.Add(1)
				time.Sleep(time.Millisecond) // leave the load some CPU
			}
		}()
	}
	loadOrigin(t, e, ds)
	time.Sleep(50 * time.Millisecond)
	cancel()
	wg.Wait()
	if len(badSeen) > 0 {
		t.Errorf("readers saw counts %v, want only 1000000 or 1000500", badSeen)
	}
	if !sawNew.Load() {
		t.Error("no reader saw the new table")
	}
	t.Logf("%d reads during the load", reads.Load())
}

func TestAttach_FileModeServesAfterRestart(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS file_t;
		CREATE TABLE file_t (id int, s varchar(20), c char(5), p box);
		INSERT INTO file_t SELECT g, 'v' || g, 'ab', box(point(0,0), point(1,1)) FROM generate_series(1, 1000) g;`)
	dir := t.TempDir()
	ds := testDataset("file_t", "file_t", catalog.ModeFile)
	ds.Acceleration.RefreshSQL = "SELECT * FROM file_t"
	ctx := context.Background()

	e1 := openEngine(t, dir)
	existing, err := e1.Attach(ctx, ds)
	if err != nil || existing != nil {
		t.Fatalf("first Attach = %v, %v; want nil, nil", existing, err)
	}
	stats := loadOrigin(t, e1, ds)
	if err := e1.Close(); err != nil {
		t.Fatal(err)
	}

	e2 := openEngine(t, dir)
	info, err := e2.Attach(ctx, ds)
	if err != nil || info == nil {
		t.Fatalf("Attach after restart = %v, %v; want the stored info", info, err)
	}
	if info.Rows != 1000 || info.RefreshSQL != ds.Acceleration.RefreshSQL || !info.LastRefresh.Equal(stats.Completed.Truncate(time.Microsecond)) {
		t.Errorf("info = %+v, want 1000 rows, the refresh_sql and last refresh %v", info, stats.Completed)
	}
	if len(info.Columns) != 4 || !info.Columns[2].Accelerated || info.Columns[3].Accelerated || info.Columns[1].TypeName != "character varying(20)" {
		t.Errorf("columns = %+v", info.Columns)
	}
	if n := queryInt(t, e2, "SELECT count(*) FROM "+e2.TableRef("file_t")+" WHERE c = 'ab'"); n != 1000 {
		t.Errorf("count after restart = %d, want 1000 (char(5) stored without its padding)", n)
	}
}

func TestQuery_RefusesWritesAndSeveralStatements(t *testing.T) {
	e := openEngine(t, "")
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE x (a int)", "SELECT 1; SELECT 2", "ATTACH ':memory:' AS y"} {
		if r, err := e.Query(ctx, q); err == nil {
			r.Close()
			t.Errorf("Query(%q) succeeded", q)
		}
	}
	if n := queryInt(t, e, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'x'"); n != 0 {
		t.Error("a refused statement ran")
	}
}

func TestQuery_CancelInterruptsDuckDB(t *testing.T) {
	e := openEngine(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r, err := e.Query(ctx, "SELECT count(*) FROM range(100000000000) a")
	if err == nil {
		r.Close()
		t.Fatal("query finished")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestLoad_CompactEveryLoadsInSlices(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS slice_t;
		CREATE TABLE slice_t (id int, s text, n numeric(10,2));
		INSERT INTO slice_t SELECT g, 'row ' || g, g / 100.0 FROM generate_series(1, 200000) g;`)
	e, err := Open(Options{DataDir: t.TempDir(), CompactEvery: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ds := testDataset("slice_t", "slice_t", catalog.ModeMemory)
	for range 2 {
		stats := loadOrigin(t, e, ds)
		if stats.Rows != 200000 || stats.Bytes < 4<<20 {
			t.Fatalf("stats = %+v, want 200000 rows in several slices", stats)
		}
	}
	if err := e.Compact(context.Background(), "slice_t"); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, e, "SELECT count(DISTINCT id) FROM "+e.TableRef("slice_t")); n != 200000 {
		t.Errorf("distinct ids = %d, want 200000", n)
	}
	if n := queryInt(t, e, "SELECT sum(n * 100)::BIGINT FROM "+e.TableRef("slice_t")+" WHERE s = 'row ' || id"); n != 20000100000 {
		t.Errorf("sum = %d, want 20000100000", n)
	}
}

func TestQuery_CannotReachFilesOutsideTheDataDir(t *testing.T) {
	e := openEngine(t, "")
	for _, q := range []string{"SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_text('/etc/hostname')"} {
		if r, err := e.Query(context.Background(), q); err == nil {
			r.Close()
			t.Errorf("Query(%q) succeeded", q)
		}
	}
}

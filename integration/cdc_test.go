package integration

import (
	"context"
	"crypto/md5"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Differential tests of refresh_mode: changes: a random workload runs at
// the harness origin while pgaccel follows it by logical replication, and
// the acceleration, read through the proxy by a query the test asserts was
// answered from it, must equal the origin's table row for row, column for
// column. The workload's seed is logged; PGACCEL_CDC_SEED replays one.

// cdcSeed returns PGACCEL_CDC_SEED, else a new seed, and logs it.
func cdcSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano() % 1_000_000_000
	if v := os.Getenv("PGACCEL_CDC_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("PGACCEL_CDC_SEED=%q is not an integer", v)
		}
		seed = n
	}
	t.Logf("workload seed %d (replay with PGACCEL_CDC_SEED=%d)", seed, seed)
	return seed
}

// changesDatasetYAML is the datasets entry of a file-mode changes dataset
// of public.<table> keyed by id.
func changesDatasetYAML(table string) string {
	return fmt.Sprintf("  - from: postgres:public.%s\n    acceleration:\n      mode: file\n      refresh_mode: changes\n      primary_key: [id]\n", table)
}

// createCDCTable (re)creates the workload's table: a bigint key, columns
// of the common types, and text and bytea columns stored out of line
// uncompressed (STORAGE EXTERNAL), so that their large values are TOASTed
// and an UPDATE that leaves them alone sends them as unchanged.
func createCDCTable(t testing.TB, table, identity string) {
	t.Helper()
	mustExec(t, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
		CREATE TABLE %[1]s (
			id bigint PRIMARY KEY,
			k int NOT NULL,
			name text,
			big text,
			blob bytea,
			n numeric(14, 2),
			f float8,
			flag bool,
			ts timestamptz,
			d date,
			j jsonb,
			u uuid);
		ALTER TABLE %[1]s ALTER COLUMN big SET STORAGE EXTERNAL, ALTER COLUMN blob SET STORAGE EXTERNAL, REPLICA IDENTITY %[2]s;
		GRANT SELECT ON %[1]s TO app;`, table, identity))
}

// dropCDCSlots drops the replication slots and publications pgaccel made
// for the datasets (any instance id), ending the walsenders that hold
// them first: the harness origin has room for 10 slots only.
func dropCDCSlots(t testing.TB, datasets ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, origin.SuperDSN())
	if err != nil {
		t.Errorf("drop slots: %v", err)
		return
	}
	defer c.Close(context.Background())
	for _, ds := range datasets {
		like := []byte(`pgaccel\_%\_` + strings.ReplaceAll(ds, "_", `\_`))
		for {
			res := c.ExecParams(ctx, `SELECT count(pg_terminate_backend(active_pid)) FROM pg_replication_slots WHERE slot_name LIKE $1 AND active_pid IS NOT NULL`, [][]byte{like}, nil, nil, nil).Read()
			if res.Err == nil {
				res = c.ExecParams(ctx, `SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots WHERE slot_name LIKE $1`, [][]byte{like}, nil, nil, nil).Read()
			}
			if res.Err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Errorf("drop the replication slots of %s: %v", ds, res.Err)
				return
			}
			time.Sleep(100 * time.Millisecond) // the walsender is still exiting
		}
		res := c.ExecParams(ctx, `SELECT pubname FROM pg_publication WHERE pubname LIKE $1`, [][]byte{like}, nil, nil, nil).Read()
		if res.Err != nil {
			t.Errorf("list publications: %v", res.Err)
			continue
		}
		for _, r := range res.Rows {
			if _, err := c.Exec(ctx, `DROP PUBLICATION IF EXISTS "`+string(r[0])+`"`).ReadAll(); err != nil {
				t.Errorf("drop publication %s: %v", r[0], err)
			}
		}
	}
}

// cdcWriter generates a random workload on one table for one writer. The
// keys it uses are first, first+stride, ... so that writers on disjoint
// key sets run concurrently without conflicts; it tracks which of its keys
// exist (and which rows hold TOASTed values), so every statement it makes
// succeeds.
type cdcWriter struct {
	table         string
	rnd           *rand.Rand
	first, stride int64
	next          int64
	live          []int64
	pos           map[int64]int
	toast         map[int64]bool
	// extra: the table has the nullable column extra (added by the test).
	extra bool
	// big makes the large transaction op likely (the crash tests).
	big bool
}

func newCDCWriter(table string, seed, first, stride int64) *cdcWriter {
	return &cdcWriter{table: table, rnd: rand.New(rand.NewSource(seed)), first: first, stride: stride, next: first,
		pos: map[int64]int{}, toast: map[int64]bool{}}
}

// cdcState is what a rolled-back transaction restores.
type cdcState struct {
	next  int64
	live  []int64
	toast map[int64]bool
}

func (w *cdcWriter) save() cdcState {
	toast := make(map[int64]bool, len(w.toast))
	for k, v := range w.toast {
		toast[k] = v
	}
	return cdcState{next: w.next, live: slices.Clone(w.live), toast: toast}
}

func (w *cdcWriter) restore(s cdcState) {
	w.next, w.live, w.toast = s.next, s.live, s.toast
	clear(w.pos)
	for i, id := range w.live {
		w.pos[id] = i
	}
}

func (w *cdcWriter) fresh() int64 {
	id := w.next
	w.next += w.stride
	return id
}

func (w *cdcWriter) add(id int64, toasted bool) {
	if _, ok := w.pos[id]; !ok {
		w.pos[id] = len(w.live)
		w.live = append(w.live, id)
	}
	if toasted {
		w.toast[id] = true
	} else {
		delete(w.toast, id)
	}
}

func (w *cdcWriter) remove(id int64) {
	i, ok := w.pos[id]
	if !ok {
		return
	}
	last := w.live[len(w.live)-1]
	w.live[i] = last
	w.pos[last] = i
	w.live = w.live[:len(w.live)-1]
	delete(w.pos, id)
	delete(w.toast, id)
}

// pick returns a random existing key, preferring rows with TOASTed values
// when toasted is set.
func (w *cdcWriter) pick(toasted bool) (int64, bool) {
	if len(w.live) == 0 {
		return 0, false
	}
	id := w.live[w.rnd.Intn(len(w.live))]
	for i := 0; toasted && !w.toast[id] && i < 8; i++ {
		id = w.live[w.rnd.Intn(len(w.live))]
	}
	return id, true
}

// picks returns up to n distinct existing keys.
func (w *cdcWriter) picks(n int, toasted bool) []int64 {
	var out []int64
	for i := 0; i < n; i++ {
		id, ok := w.pick(toasted)
		if ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func sqlLit(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func idList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ", ")
}

// Random values of each column, as SQL literals.

func (w *cdcWriter) nameLit() string {
	names := []string{"NULL", "''", "'plain'", `'quote '' and "double" and \ back'`, "'unicode 日本語 ✓ €'",
		"E'tab\\tand newline\\n'", "'trailing  '"}
	if w.rnd.Intn(3) == 0 {
		return names[w.rnd.Intn(len(names))]
	}
	return sqlLit(fmt.Sprintf("name %d %x", w.rnd.Intn(1000), w.rnd.Int63()))
}

// bigLit is a text value of 3.2 to 6.4 kB: TOASTed.
func (w *cdcWriter) bigLit() string {
	return fmt.Sprintf("repeat(md5('%d'), %d)", w.rnd.Int63(), 100+w.rnd.Intn(100))
}

// blobLit is a bytea value of 2.4 to 4 kB: TOASTed.
func (w *cdcWriter) blobLit() string {
	return fmt.Sprintf("decode(repeat(md5('%d'), %d), 'hex')", w.rnd.Int63(), 150+w.rnd.Intn(100))
}

func (w *cdcWriter) numLit() string {
	if w.rnd.Intn(8) == 0 {
		return "NULL"
	}
	v := w.rnd.Int63n(2_000_000_000_000) - 1_000_000_000_000
	return fmt.Sprintf("%d.%02d", v/100, abs64(v%100))
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func (w *cdcWriter) floatLit() string {
	switch w.rnd.Intn(12) {
	case 0:
		return "NULL"
	case 1:
		return "'NaN'"
	case 2:
		return "'-Infinity'"
	case 3:
		return "'-0'"
	case 4:
		return "1e-300"
	}
	return "'" + strconv.FormatFloat(w.rnd.NormFloat64()*math.Pow(10, float64(w.rnd.Intn(12))), 'g', -1, 64) + "'"
}

func (w *cdcWriter) tsLit() string {
	if w.rnd.Intn(10) == 0 {
		return "NULL"
	}
	at := time.Unix(946684800+w.rnd.Int63n(1_000_000_000), int64(w.rnd.Intn(1_000_000))*1000).UTC()
	return "'" + at.Format("2006-01-02 15:04:05.000000+00") + "'"
}

func (w *cdcWriter) dateLit() string {
	switch w.rnd.Intn(15) {
	case 0:
		return "NULL"
	case 1:
		return "'infinity'"
	}
	return "'" + time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, w.rnd.Intn(20000)).Format("2006-01-02") + "'"
}

func (w *cdcWriter) jsonLit() string {
	switch w.rnd.Intn(5) {
	case 0:
		return "NULL"
	case 1:
		return `'[1, 2.50, {"x": null, "y": [true, false]}]'`
	case 2:
		return `'"ü string"'`
	}
	return fmt.Sprintf(`'{"a": %d, "s": "v%d", "n": {"k": %d.5}}'`, w.rnd.Intn(100), w.rnd.Intn(1000), w.rnd.Intn(10))
}

func (w *cdcWriter) uuidLit() string {
	if w.rnd.Intn(6) == 0 {
		return "NULL"
	}
	var b [16]byte
	w.rnd.Read(b[:])
	return fmt.Sprintf("'%x-%x-%x-%x-%x'", b[0:4], b[4:8], b[8:10], b[10:12], b[12:16])
}

func (w *cdcWriter) boolLit() string {
	return []string{"true", "false", "NULL"}[w.rnd.Intn(3)]
}

// columns is the insert column list.
func (w *cdcWriter) columns() string {
	c := "id, k, name, big, blob, n, f, flag, ts, d, j, u"
	if w.extra {
		c += ", extra"
	}
	return c
}

// row is a VALUES tuple for a new row id; toasted rows get large big and
// blob values.
func (w *cdcWriter) row(id int64, toasted bool) string {
	big, blob := "NULL", "NULL"
	if toasted {
		big, blob = w.bigLit(), w.blobLit()
		if w.rnd.Intn(4) == 0 {
			blob = "NULL"
		}
	} else if w.rnd.Intn(2) == 0 {
		big, blob = "'small'", `'\x0001ff'`
	}
	v := fmt.Sprintf("(%d, %d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s", id, w.rnd.Intn(1000)-500, w.nameLit(), big, blob,
		w.numLit(), w.floatLit(), w.boolLit(), w.tsLit(), w.dateLit(), w.jsonLit(), w.uuidLit())
	if w.extra {
		v += ", " + w.extraLit()
	}
	return v + ")"
}

func (w *cdcWriter) extraLit() string {
	if w.rnd.Intn(3) == 0 {
		return "NULL"
	}
	return sqlLit(fmt.Sprintf("extra %d", w.rnd.Intn(1000)))
}

func (w *cdcWriter) insert(n int, toasted bool) string {
	rows := make([]string, n)
	for i := range rows {
		id := w.fresh()
		rows[i] = w.row(id, toasted)
		w.add(id, toasted)
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s;\n", w.table, w.columns(), strings.Join(rows, ", "))
}

// setNonKey is a SET list that leaves id, big and blob alone.
func (w *cdcWriter) setNonKey() string {
	sets := []string{"k = k + 1"}
	for _, s := range []string{"name = " + w.nameLit(), "n = " + w.numLit(), "f = " + w.floatLit(), "flag = " + w.boolLit(),
		"ts = " + w.tsLit(), "d = " + w.dateLit(), "j = " + w.jsonLit(), "u = " + w.uuidLit()} {
		if w.rnd.Intn(3) == 0 {
			sets = append(sets, s)
		}
	}
	if w.extra && w.rnd.Intn(2) == 0 {
		sets = append(sets, "extra = "+w.extraLit())
	}
	return strings.Join(sets, ", ")
}

// op returns one random statement (or a few) and records its effect.
func (w *cdcWriter) op() string {
	t := w.table
	switch r := w.rnd.Intn(100); {
	case r < 18:
		return w.insert(1+w.rnd.Intn(20), false)
	case r < 26:
		return w.insert(1+w.rnd.Intn(4), true)
	case r < 42: // non-key columns; TOASTed values untouched
		ids := w.picks(1+w.rnd.Intn(10), w.rnd.Intn(2) == 0)
		if len(ids) == 0 {
			return w.insert(3, true)
		}
		return fmt.Sprintf("UPDATE %s SET %s WHERE id IN (%s);\n", t, w.setNonKey(), idList(ids))
	case r < 47: // the TOASTed values themselves
		id, ok := w.pick(true)
		if !ok {
			return w.insert(2, true)
		}
		switch w.rnd.Intn(4) {
		case 0:
			w.add(id, false)
			return fmt.Sprintf("UPDATE %s SET big = 'now small', blob = NULL WHERE id = %d;\n", t, id)
		case 1:
			w.add(id, true)
			return fmt.Sprintf("UPDATE %s SET big = %s WHERE id = %d;\n", t, w.bigLit(), id)
		case 2:
			w.add(id, true)
			return fmt.Sprintf("UPDATE %s SET blob = %s, name = %s WHERE id = %d;\n", t, w.blobLit(), w.nameLit(), id)
		default:
			w.add(id, true)
			return fmt.Sprintf("UPDATE %s SET big = %s, blob = %s WHERE id = %d;\n", t, w.bigLit(), w.blobLit(), id)
		}
	case r < 55: // the key moves; TOASTed values untouched
		id, ok := w.pick(w.rnd.Intn(2) == 0)
		if !ok {
			return w.insert(2, false)
		}
		to, toasted := w.fresh(), w.toast[id]
		w.remove(id)
		w.add(to, toasted)
		set := fmt.Sprintf("id = %d", to)
		if w.rnd.Intn(2) == 0 {
			set += ", " + w.setNonKey()
		}
		return fmt.Sprintf("UPDATE %s SET %s WHERE id = %d;\n", t, set, id)
	case r < 59: // two rows swap keys in one transaction
		ids := w.picks(2, true)
		if len(ids) < 2 {
			return w.insert(2, true)
		}
		a, b := ids[0], ids[1]
		ta, tb := w.toast[a], w.toast[b]
		w.add(a, tb)
		w.add(b, ta)
		return fmt.Sprintf("UPDATE %[1]s SET id = -id WHERE id IN (%[2]d, %[3]d);\nUPDATE %[1]s SET id = %[2]d WHERE id = -%[3]d;\nUPDATE %[1]s SET id = %[3]d, k = k + 7 WHERE id = -%[2]d;\n", t, a, b)
	case r < 70:
		ids := w.picks(1+w.rnd.Intn(8), false)
		if len(ids) == 0 {
			return w.insert(5, false)
		}
		for _, id := range ids {
			w.remove(id)
		}
		return fmt.Sprintf("DELETE FROM %s WHERE id IN (%s);\n", t, idList(ids))
	case r < 75: // deleted and inserted again under the same key
		id, ok := w.pick(true)
		if !ok {
			return w.insert(2, true)
		}
		toasted := w.rnd.Intn(2) == 0
		w.add(id, toasted)
		return fmt.Sprintf("DELETE FROM %s WHERE id = %d;\nINSERT INTO %s (%s) VALUES %s;\n", t, id, t, w.columns(), w.row(id, toasted))
	case r < 80: // inserted, updated and maybe deleted in one transaction
		id := w.fresh()
		s := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s;\nUPDATE %s SET %s WHERE id = %d;\n", t, w.columns(), w.row(id, true), t, w.setNonKey(), id)
		if w.rnd.Intn(2) == 0 {
			return s + fmt.Sprintf("DELETE FROM %s WHERE id = %d;\n", t, id)
		}
		w.add(id, true)
		return s
	case r < 85: // a non-key update, then the key moves, then another update
		id, ok := w.pick(true)
		if !ok {
			return w.insert(2, true)
		}
		to, toasted := w.fresh(), w.toast[id]
		w.remove(id)
		w.add(to, toasted)
		return fmt.Sprintf("UPDATE %[1]s SET %[2]s WHERE id = %[3]d;\nUPDATE %[1]s SET id = %[4]d WHERE id = %[3]d;\nUPDATE %[1]s SET %[5]s WHERE id = %[4]d;\n",
			t, w.setNonKey(), id, to, w.setNonKey())
	case r < 90: // many rows (about 200), TOASTed ones among them
		m := max(5, len(w.live)/200)
		return fmt.Sprintf("UPDATE %s SET k = k + 1, flag = NOT flag WHERE (id - %d) %% %d = 0 AND id %% %d = %d;\n", t, w.first, w.stride, m, w.rnd.Intn(m))
	case r < 91 && w.big: // a transaction larger than a batch of the stream
		return w.large(20000 + w.rnd.Intn(10000))
	default:
		return w.insert(1+w.rnd.Intn(5), w.rnd.Intn(3) == 0)
	}
}

// bulkInsert inserts n rows in one statement.
func (w *cdcWriter) bulkInsert(n int) string {
	first := w.next
	for i := 0; i < n; i++ {
		w.add(w.fresh(), false)
	}
	return fmt.Sprintf("INSERT INTO %s (id, k, name, n, f, ts, j) SELECT %d + g * %d, g %% 1000, 'bulk ' || g, g * 0.25, g / 7.0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', jsonb_build_object('g', g) FROM generate_series(0, %d) g;\n",
		w.table, first, w.stride, n-1)
}

// large inserts n rows, updates every row of the writer (TOASTed values
// untouched) and deletes a few.
func (w *cdcWriter) large(n int) string {
	s := w.bulkInsert(n)
	s += fmt.Sprintf("UPDATE %s SET k = k + 1000000, name = name || ' (bulk)' WHERE (id - %d) %% %d = 0;\n", w.table, w.first, w.stride)
	ids := w.picks(50, false)
	for _, id := range ids {
		w.remove(id)
	}
	if len(ids) > 0 {
		s += fmt.Sprintf("DELETE FROM %s WHERE id IN (%s);\n", w.table, idList(ids))
	}
	return s
}

// txn returns a random transaction: a few ops, sometimes in a savepoint
// that is rolled back, sometimes rolled back whole.
func (w *cdcWriter) txn() string {
	saved := w.save()
	var b strings.Builder
	b.WriteString("BEGIN;\n")
	for i, n := 0, 1+w.rnd.Intn(6); i < n; i++ {
		if w.rnd.Intn(10) == 0 {
			sp := w.save()
			b.WriteString("SAVEPOINT s;\n")
			b.WriteString(w.op())
			b.WriteString(w.op())
			if w.rnd.Intn(2) == 0 {
				b.WriteString("ROLLBACK TO SAVEPOINT s;\n")
				w.restore(sp)
			} else {
				b.WriteString("RELEASE SAVEPOINT s;\n")
			}
			continue
		}
		b.WriteString(w.op())
	}
	if w.rnd.Intn(10) == 0 {
		b.WriteString("ROLLBACK;\n")
		w.restore(saved)
	} else {
		b.WriteString("COMMIT;\n")
	}
	return b.String()
}

// truncated records a TRUNCATE of the table.
func (w *cdcWriter) truncated() {
	w.live, w.toast = nil, map[int64]bool{}
	clear(w.pos)
}

// originSession is a superuser connection to the origin for a workload.
func originSession(t testing.TB) *pgconn.PgConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, origin.SuperDSN())
	if err != nil {
		t.Fatalf("connect to the origin: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// execSQL runs a multi-statement script; a failure names the script.
func execSQL(ctx context.Context, c *pgconn.PgConn, sql string) error {
	if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
		if len(sql) > 2000 {
			sql = sql[:2000] + "..."
		}
		return fmt.Errorf("%w\nin:\n%s", err, sql)
	}
	return nil
}

// runWriters runs rounds random transactions of each writer, each on its
// own origin connection, concurrently.
func runWriters(t *testing.T, rounds int, writers ...*cdcWriter) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(writers))
	for _, w := range writers {
		c := originSession(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for i := 0; i < rounds; i++ {
				if err := execSQL(ctx, c, w.txn()); err != nil {
					errs <- fmt.Errorf("workload on %s: %w", w.table, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// renderRows renders a result's rows one per line, the first column (the
// key) first; binary values in hex.
func renderRows(r *pgconn.Result) []string {
	out := make([]string, len(r.Rows))
	for i, row := range r.Rows {
		var b strings.Builder
		for j, v := range row {
			if j > 0 {
				b.WriteString(" | ")
			}
			switch {
			case v == nil:
				b.WriteString("NULL")
			case r.FieldDescriptions[j].Format == 1:
				fmt.Fprintf(&b, "%x", v)
			default:
				b.WriteString(strconv.Quote(string(v)))
			}
		}
		out[i] = b.String()
	}
	return out
}

// shortRow abbreviates the long values of a rendered row for a message.
func shortRow(s string) string {
	parts := strings.Split(s, " | ")
	for i, p := range parts {
		if len(p) > 80 {
			parts[i] = fmt.Sprintf("%s...(%d bytes, md5 %x)", p[:30], len(p), md5.Sum([]byte(p)))
		}
	}
	return strings.Join(parts, " | ")
}

// rowsDiff describes how got differs from want (rows rendered by
// renderRows, ordered by key), "" when they are equal.
func rowsDiff(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	key := func(s string) string { k, _, _ := strings.Cut(s, " | "); return k }
	wm, gm := map[string][]string{}, map[string][]string{}
	for _, r := range want {
		wm[key(r)] = append(wm[key(r)], r)
	}
	for _, r := range got {
		gm[key(r)] = append(gm[key(r)], r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "origin has %d rows, pgaccel %d\n", len(want), len(got))
	shown := 0
	var keys []string
	for k := range wm {
		keys = append(keys, k)
	}
	for k := range gm {
		if _, ok := wm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var lost, extra, doubled, changed int
	for _, k := range keys {
		w, g := wm[k], gm[k]
		if slices.Equal(w, g) {
			continue
		}
		switch {
		case len(g) == 0:
			lost++
		case len(w) == 0:
			extra++
		case len(g) > len(w):
			doubled++
		default:
			changed++
		}
		if shown < 10 {
			shown++
			fmt.Fprintf(&b, "key %s:\n", k)
			for _, r := range w {
				fmt.Fprintf(&b, "  origin:  %s\n", shortRow(r))
			}
			for _, r := range g {
				fmt.Fprintf(&b, "  pgaccel: %s\n", shortRow(r))
			}
		}
	}
	fmt.Fprintf(&b, "keys lost %d, extra %d, doubled %d, with other values %d", lost, extra, doubled, changed)
	return b.String()
}

// cdcView compares a table at the origin with what pgaccel answers for it.
type cdcView struct {
	origin, proxy *pgconn.PgConn
	// accelerated reports the number of statements pgaccel answered from
	// an acceleration so far; routes the statements by route and reason.
	accelerated func() float64
	routes      func() map[string]float64
	// fresh: waitEqual polls with a new statement text each time
	// (freshText), so that it checks the acceleration's data whatever
	// DuckDB kept prepared.
	fresh bool
}

func newCDCView(t *testing.T, proxyDSN string, accelerated func() float64, routes func() map[string]float64) *cdcView {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := pgconn.Connect(ctx, origin.DSN(appUser, appPass))
	if err != nil {
		t.Fatalf("connect to the origin: %v", err)
	}
	t.Cleanup(func() { o.Close(context.Background()) })
	p, err := pgconn.Connect(ctx, proxyDSN)
	if err != nil {
		t.Fatalf("connect through pgaccel: %v", err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return &cdcView{origin: o, proxy: p, accelerated: accelerated, routes: routes}
}

func appAccelerated(t *testing.T, a *app.App) func() float64 {
	return func() float64 { return routeCounts(t, a)[acc] }
}

func appRoutes(t *testing.T, a *app.App) func() map[string]float64 {
	return func() map[string]float64 {
		return metricSums(t, a.Metrics, "pgaccel_statements_total", "route", "reason")
	}
}

// routeReasons renders the statements counted by route and reason.
func (v *cdcView) routeReasons() string {
	m := v.routes()
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%v", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// query runs sql on c: with the simple protocol, or with the extended
// protocol and results in format.
func query(ctx context.Context, c *pgconn.PgConn, sql string, extended bool, format int16) ([]string, error) {
	if !extended {
		res, err := c.Exec(ctx, sql).ReadAll()
		if err != nil {
			return nil, err
		}
		return renderRows(res[len(res)-1]), nil
	}
	r := c.ExecParams(ctx, sql, nil, nil, nil, []int16{format}).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	return renderRows(r), nil
}

// compare runs sql at the origin and through pgaccel and returns the
// difference ("" when none) and whether pgaccel answered from the
// acceleration.
func (v *cdcView) compare(ctx context.Context, sql string, extended bool, format int16) (diff string, accelerated bool, err error) {
	want, err := query(ctx, v.origin, sql, extended, format)
	if err != nil {
		return "", false, fmt.Errorf("at the origin: %s: %w", sql, err)
	}
	before := v.accelerated()
	got, err := query(ctx, v.proxy, sql, extended, format)
	if err != nil {
		return "", false, fmt.Errorf("through pgaccel: %s: %w", sql, err)
	}
	return rowsDiff(want, got), v.accelerated() > before, nil
}

// waitEqual waits until pgaccel answers SELECT * FROM table ORDER BY id
// from the acceleration exactly as the origin does (and extra holds), then
// checks it again with the extended protocol in text and binary. After
// the deadline it fails with the last difference and status.
func (v *cdcView) waitEqual(t *testing.T, table, why string, status func() string, extra func() bool) {
	t.Helper()
	sql := "SELECT * FROM " + table + " ORDER BY id"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	deadline := time.Now().Add(90 * time.Second)
	knownBefore := v.routes()[org+"|"+plannerKnownFallback]
	for {
		q := sql
		if v.fresh {
			q = freshText(table)
		}
		diff, accelerated, err := v.compare(ctx, q, false, 0)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if diff == "" && accelerated && (extra == nil || extra()) {
			break
		}
		if time.Now().After(deadline) {
			route := "the acceleration"
			if !accelerated {
				route = "the origin (not the acceleration)"
			}
			// The same rows asked with a text DuckDB has not seen before
			// tell a stale prepared statement from stale data.
			hint := ""
			if fdiff, facc, err := v.compare(ctx, freshText(table), false, 0); err == nil && fdiff == "" && facc && !v.fresh {
				hint = "\nthe same query with a statement text never run before IS answered right from the acceleration: the kept DuckDB statement of the repeated text was prepared before the changes and returns stale results"
			}
			if !accelerated && v.routes()[org+"|"+plannerKnownFallback] > knownBefore {
				hint += "\nthe statement goes to the origin as a known fallback: DuckDB failed on its fingerprint once (as when the acceleration lacked a column just added at the origin) and the planner never accelerates it again"
			}
			t.Fatalf("%s: after 90 s pgaccel still answers %s differently from the origin, from %s:\n%s%s\nstream status: %s\nstatements by route|reason so far: %s", why, table, route, diff, hint, status(), v.routeReasons())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, format := range []int16{0, 1} {
		q := sql
		if v.fresh {
			q = freshText(table)
		}
		diff, accelerated, err := v.compare(ctx, q, true, format)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if diff != "" || !accelerated {
			t.Fatalf("%s: equal in the simple protocol, but not in the extended protocol with format %d (accelerated %v):\n%s", why, format, accelerated, diff)
		}
	}
}

// plannerKnownFallback is the reason of statements sent to the origin
// because DuckDB failed on their fingerprint before.
const plannerKnownFallback = "known_fallback"

var freshTexts atomic.Int64

// freshText is SELECT * FROM table ORDER BY id with a condition that holds
// for every row and makes a statement text DuckDB has never seen.
func freshText(table string) string {
	return fmt.Sprintf("SELECT * FROM %s WHERE id <> %d ORDER BY id", table, -1_000_000_000_000-freshTexts.Add(1))
}

// readAcrossDDL runs ddl at the origin and then reads the table through
// pgaccel before any change reaches the stream: the answer must be the
// origin's table as it was before ddl, or as it is after.
func (v *cdcView) readAcrossDDL(t *testing.T, table, ddl, why string) {
	t.Helper()
	ctx := ctxT(t)
	sql := "SELECT * FROM " + table + " ORDER BY id"
	before, err := query(ctx, v.origin, sql, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, ddl)
	after, err := query(ctx, v.origin, sql, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := v.accelerated()
	got, err := query(ctx, v.proxy, sql, false, 0)
	if err != nil {
		t.Fatalf("%s: right after %s: through pgaccel: %v", why, ddl, err)
	}
	if rowsDiff(before, got) != "" && rowsDiff(after, got) != "" {
		t.Fatalf("%s: right after %s, before any change, SELECT * through pgaccel (accelerated %v) is neither the table before nor after it:\nagainst after: %s",
			why, ddl, v.accelerated() > n, rowsDiff(after, got))
	}
}

// replicationOf describes a dataset's stream, for failure messages.
func replicationOf(a *app.App, name string) func() string {
	return func() string {
		rs, ok := a.Runner.Replication(name)
		st, _ := a.Registry.State(name)
		if !ok {
			return fmt.Sprintf("no stream; dataset status %v error %q", st.Status, st.Error)
		}
		return fmt.Sprintf("%+v; dataset status %v rows %d error %q", rs, st.Status, st.Rows, st.Error)
	}
}

// lagZero reports whether the dataset's stream has nothing committed at
// the origin waiting.
func lagZero(a *app.App, name string) func() bool {
	return func() bool {
		rs, ok := a.Runner.Replication(name)
		return ok && rs.LagMs == 0 && rs.Streaming
	}
}

// toastedRows counts the rows of table with a value stored out of line
// (in its TOAST table), to check that the workload TOASTs what it means to.
func toastedRows(t *testing.T, table string) int {
	t.Helper()
	var n int
	c := originConn(t)
	var toast string
	if err := c.QueryRow(context.Background(), "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = $1::regclass", table).Scan(&toast); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(context.Background(), "SELECT count(DISTINCT chunk_id) FROM "+toast).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCDC_DifferentialWorkload runs a random workload at the origin on two
// tables (one with the default replica identity, one with REPLICA IDENTITY
// FULL) while pgaccel follows them with refresh_mode: changes, and after
// each phase waits until both accelerations answer SELECT * exactly as the
// origin: concurrent random transactions (inserts, updates of non-key and
// key columns, key swaps, deletes, delete and insert again, savepoints,
// rolled-back transactions, updates leaving TOASTed text and bytea
// untouched), TRUNCATE, a transaction larger than a batch (visible at once,
// never in part), a large rolled-back transaction, a nullable column
// added (it joins without a rebuild), more random transactions, and then
// schema changes that rebuild (a column with a default, a dropped column).
func TestCDC_DifferentialWorkload(t *testing.T) {
	seed := cdcSeed(t)
	tables := []string{"cdc_w", "cdc_wf"}
	dropCDCSlots(t, tables...)
	t.Cleanup(func() { dropCDCSlots(t, tables...) })
	createCDCTable(t, "cdc_w", "DEFAULT")
	createCDCTable(t, "cdc_wf", "FULL")
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS cdc_w, cdc_wf") })

	// Writers: three on cdc_w, two on cdc_wf, on disjoint keys.
	writers := map[string][]*cdcWriter{}
	for i, table := range tables {
		n := int64(3 - i)
		for j := int64(0); j < n; j++ {
			writers[table] = append(writers[table], newCDCWriter(table, seed*10+int64(i)*5+j, j+1, n))
		}
	}
	all := append(slices.Clone(writers["cdc_w"]), writers["cdc_wf"]...)
	// The rows before pgaccel starts: loaded from the slot's snapshot.
	setup := originSession(t)
	ctx := ctxT(t)
	for _, w := range all {
		if err := execSQL(ctx, setup, w.insert(150, false)+w.insert(40, true)); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range tables {
		if n := toastedRows(t, table); n < 40 {
			t.Fatalf("%s: only %d values stored out of line: the workload does not TOAST", table, n)
		}
	}

	a := startAppRuntime(t, "", "", changesDatasetYAML("cdc_w")+changesDatasetYAML("cdc_wf"), true)
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	// Each comparison is a new statement text, so that it checks what the
	// acceleration holds (repeated texts: TestCDC_RepeatedQueryAfterChanges).
	v.fresh = true
	// Ready means caught up: equal at once.
	for _, table := range tables {
		diff, accelerated, err := v.compare(ctx, "SELECT * FROM "+table+" ORDER BY id", false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" || !accelerated {
			t.Fatalf("%s when pgaccel is ready (accelerated %v): %s\nstream: %s", table, accelerated, diff, replicationOf(a, table)())
		}
	}
	waitAll := func(why string) {
		t.Helper()
		for _, table := range tables {
			v.waitEqual(t, table, fmt.Sprintf("seed %d: %s", seed, why), replicationOf(a, table), lagZero(a, table))
		}
	}

	runWriters(t, 60, all...)
	waitAll("after concurrent random transactions")

	// TRUNCATE: alone, with rows inserted after it in its transaction,
	// and between inserts.
	for _, table := range tables {
		ws := writers[table]
		for _, w := range ws {
			w.truncated()
		}
		script := "TRUNCATE " + table + ";\n" + ws[0].insert(30, true) + "BEGIN;\n" + ws[0].insert(10, false)
		ws[0].truncated()
		script += "TRUNCATE " + table + ";\n" + ws[0].insert(25, true) + ws[0].op() + "COMMIT;\n"
		if err := execSQL(ctx, setup, script); err != nil {
			t.Fatal(err)
		}
	}
	waitAll("after TRUNCATE")
	runWriters(t, 20, all...)
	waitAll("after random transactions following TRUNCATE")

	// A transaction larger than a batch (changesMaxRows is 20000) on both
	// tables: visible at once, never in part.
	const sig = "SELECT count(*), coalesce(sum(k), 0) FROM "
	before := map[string]string{}
	for _, table := range tables {
		r, err := query(ctx, v.origin, sig+table, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		before[table] = r[0]
	}
	bulk := "BEGIN;\n" + writers["cdc_w"][0].large(25000) + writers["cdc_wf"][0].large(21000) + "COMMIT;\n"
	if err := execSQL(ctx, setup, bulk); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		r, err := query(ctx, v.origin, sig+table, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		after := r[0]
		deadline := time.Now().Add(90 * time.Second)
		seen := map[string]bool{}
		for {
			n := v.accelerated()
			r, err := query(ctx, v.proxy, sig+table, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			if v.accelerated() == n {
				t.Fatalf("%s through pgaccel was not answered from the acceleration", sig+table)
			}
			seen[r[0]] = true
			if r[0] != before[table] && r[0] != after {
				t.Fatalf("seed %d: %s shows part of a large transaction: %s (before %s, after %s)", seed, table, r[0], before[table], after)
			}
			if r[0] == after {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("seed %d: %s: the large transaction is not applied after 90 s: %s, want %s\nstream: %s", seed, table, r[0], after, replicationOf(a, table)())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitAll("after a large transaction")

	// A large transaction rolled back, and one that rolls back to a
	// savepoint after most of its changes.
	for _, table := range tables {
		w := writers[table][0]
		saved := w.save()
		script := "BEGIN;\n" + w.large(22000) + "ROLLBACK;\n"
		w.restore(saved)
		script += "BEGIN;\n" + w.insert(5, true) + "SAVEPOINT big;\n"
		saved = w.save()
		script += w.large(21000) + "ROLLBACK TO SAVEPOINT big;\n"
		w.restore(saved)
		script += w.op() + "COMMIT;\n"
		if err := execSQL(ctx, setup, script); err != nil {
			t.Fatal(err)
		}
	}
	waitAll("after rolled-back large transactions")

	// A nullable column without a default joins the acceleration. The
	// stream hears of it with the next change of the table; until then a
	// read through pgaccel is the table before the ALTER or after it.
	rebuilds := map[string]int64{}
	for _, table := range tables {
		rs, _ := a.Runner.Replication(table)
		rebuilds[table] = rs.Rebuilds
		ddl := "ALTER TABLE " + table + " ADD COLUMN extra text"
		v.readAcrossDDL(t, table, ddl, fmt.Sprintf("seed %d", seed))
		for _, w := range writers[table] {
			w.extra = true
		}
	}
	runWriters(t, 30, all...)
	waitAll("after a column was added")
	for _, table := range tables {
		if rs, _ := a.Runner.Replication(table); rs.Rebuilds != rebuilds[table] {
			t.Errorf("seed %d: %s: a nullable column without default rebuilt the dataset (%d rebuilds, %d before)", seed, table, rs.Rebuilds, rebuilds[table])
		}
	}
	// Rows of the table before the column was added, changed afterwards
	// only in their other columns (TOASTed values untouched).
	if err := execSQL(ctx, setup, "UPDATE cdc_w SET k = k - 1 WHERE extra IS NULL; UPDATE cdc_wf SET name = 'later' WHERE extra IS NULL AND id % 2 = 0"); err != nil {
		t.Fatal(err)
	}
	waitAll("after updates of rows from before the column was added")

	// Schema changes the stream cannot follow rebuild the dataset.
	for _, change := range []struct{ ddl, why string }{
		{"ALTER TABLE cdc_w ADD COLUMN with_default int NOT NULL DEFAULT 7", "a column with a default"},
		{"ALTER TABLE cdc_w DROP COLUMN name", "a dropped column"},
	} {
		rs, _ := a.Runner.Replication("cdc_w")
		v.readAcrossDDL(t, "cdc_w", change.ddl, fmt.Sprintf("seed %d", seed))
		if err := execSQL(ctx, setup, "UPDATE cdc_w SET k = k + 1 WHERE id % 3 = 0"); err != nil {
			t.Fatal(err)
		}
		// Compared once rebuilt and caught up (a statement run while the
		// acceleration lacks the change goes to the origin, and is then
		// remembered there: TestCDC_AddedColumnIsAcceleratedAfterwards).
		pgtest.WaitFor(t, "the rebuild after "+change.why, func() bool {
			now, _ := a.Runner.Replication("cdc_w")
			st, _ := a.Registry.State("cdc_w")
			return now.Rebuilds > rs.Rebuilds && now.LagMs == 0 && now.Streaming && st.Status == catalog.StatusReady
		})
		v.waitEqual(t, "cdc_w", fmt.Sprintf("seed %d: after %s", seed, change.why), replicationOf(a, "cdc_w"), lagZero(a, "cdc_w"))
	}
}

// TestCDC_RepeatedQueryAfterChanges: a client repeats the same query (the
// engine keeps its DuckDB statement prepared) while the stream applies
// changes that take values past what the table held at its load (keys and
// integers out of their old range, long strings); the repeated text must
// answer the new rows exactly, as a text never run before does.
func TestCDC_RepeatedQueryAfterChanges(t *testing.T) {
	const table = "cdc_repeat"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table) })
	mustExec(t, `DROP TABLE IF EXISTS cdc_repeat;
		CREATE TABLE cdc_repeat (id bigint PRIMARY KEY, k int, s text);
		INSERT INTO cdc_repeat SELECT g, g, 's' || g FROM generate_series(1, 10) g;
		GRANT SELECT ON cdc_repeat TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS cdc_repeat") })
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	ctx := ctxT(t)
	const sql = "SELECT * FROM cdc_repeat ORDER BY id"
	for i := 0; i < 3; i++ {
		if diff, accelerated, err := v.compare(ctx, sql, false, 0); err != nil || diff != "" || !accelerated {
			t.Fatalf("before the changes: accelerated %v, %v\n%s", accelerated, err, diff)
		}
	}
	mustExec(t, `INSERT INTO cdc_repeat SELECT g, g * 1000, repeat('long ', 100) || g FROM generate_series(100000, 100020) g;
		UPDATE cdc_repeat SET k = k + 70000, s = repeat('x', 300) WHERE id <= 5;`)
	// Applied: a new statement text reads the new rows.
	v.fresh = true
	v.waitEqual(t, table, "the changes with new statement texts", replicationOf(a, table), lagZero(a, table))
	for _, extended := range []bool{false, true} {
		diff, accelerated, err := v.compare(ctx, sql, extended, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" || !accelerated {
			t.Errorf("%s (extended protocol %v), run 3 times before the changes and answered from the acceleration (%v), does not return the rows the acceleration holds now, which a new statement text returns:\n%s",
				sql, extended, accelerated, diff)
		}
	}
}

// TestCDC_AddedColumnIsAcceleratedAfterwards: a SELECT * run right after
// a column was added at the origin (before the stream hears of it) may go
// to the origin; once the next change brought the column into the
// acceleration, the same query is answered from the acceleration again.
func TestCDC_AddedColumnIsAcceleratedAfterwards(t *testing.T) {
	const table = "cdc_addcol"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table) })
	mustExec(t, `DROP TABLE IF EXISTS cdc_addcol;
		CREATE TABLE cdc_addcol (id bigint PRIMARY KEY, v int);
		INSERT INTO cdc_addcol SELECT g, g FROM generate_series(1, 10) g;
		GRANT SELECT ON cdc_addcol TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS cdc_addcol") })
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	ctx := ctxT(t)
	const sql = "SELECT * FROM cdc_addcol ORDER BY id"
	if diff, accelerated, err := v.compare(ctx, sql, false, 0); err != nil || diff != "" || !accelerated {
		t.Fatalf("before the column: accelerated %v, %v\n%s", accelerated, err, diff)
	}
	v.readAcrossDDL(t, table, "ALTER TABLE cdc_addcol ADD COLUMN extra text", "ADD COLUMN")
	mustExec(t, "UPDATE cdc_addcol SET extra = 'x' || id WHERE id <= 3")
	pgtest.WaitFor(t, "the column in the acceleration", func() bool {
		st, _ := a.Registry.State(table)
		for _, c := range st.Columns {
			if c.Name == "extra" && c.Accelerated {
				return lagZero(a, table)()
			}
		}
		return false
	})
	v.waitEqual(t, table, "after the column joined the acceleration", replicationOf(a, table), nil)
}

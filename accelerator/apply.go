package accelerator

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// Applying a change stream (refresh_mode: changes). The refresh side reads
// the origin's logical replication stream, coalesces each batch per key
// and hands the Applier its final changes: a key is deleted, or put (its
// new row, with maybe some columns unchanged: TOASTed values the stream
// does not send, which keep the stored row's value). Values are in the
// types' binary send format, as in a binary COPY, so they are decoded by
// the load's own decoders.
//
// An Applier owns one DuckDB transaction at a time on the dataset's table:
// Apply adds batches to it (a large origin transaction may take several),
// AddColumn adds a column the origin's table gained, and Commit writes the
// checkpoint, with the stream's new position, and commits, so readers see
// whole origin transactions only and a restart resumes where the data
// stands. One batch is applied set-based:
//
//  1. the puts are staged (a binary COPY stream of them through the
//     load's table function) with, per row, which columns are unchanged
//     and the key of the stored row they come from;
//  2. the rows to insert are resolved: the staged values, the stored ones
//     for unchanged columns (read before anything is deleted);
//  3. a TRUNCATE deletes every row; the deleted keys and the put keys are
//     deleted (one DELETE);
//  4. the resolved rows are inserted, less those the retention policy
//     evicts.

// Change is one key's final change in a batch.
type Change struct {
	// Delete removes the row of Key; otherwise the change puts Row.
	Delete bool
	// Key holds the key columns' values (the dataset's primary_key order)
	// of a delete.
	Key [][]byte
	// Row holds a put's value of every column of the dataset, in the
	// order of the columns it was loaded with (nil: NULL).
	Row [][]byte
	// Unchanged marks, for a put, the columns whose value is the stored
	// row's at Src: values the origin did not send (unchanged TOAST).
	Unchanged []bool
	// Src is the key of the stored row that unchanged columns come from
	// (a key-changing update's old key, else the row's own key).
	Src [][]byte
}

// ApplyStats is what a committed apply did.
type ApplyStats struct {
	Inserted, Deleted int64
	Rows              int64 // rows in the table after the commit
	// Columns are the dataset's columns, a column left out because a
	// change held a value its DuckDB type cannot hold marked so.
	Columns []catalog.ColumnInfo
	// ColumnsChanged is true when this commit left a column out.
	ColumnsChanged bool
}

// ApplyOptions tune an Applier.
type ApplyOptions struct {
	// Retention holds DuckDB predicates of the rows the retention policy
	// evicts: put rows matching one are not inserted.
	Retention func(now time.Time) []string
	// ASCIIOnly: see LoadOptions.ASCIIOnly.
	ASCIIOnly bool
}

// Applier applies a changes dataset's change stream to its acceleration.
// It is used by one goroutine.
type Applier struct {
	e    *Engine
	h    *dsHandle
	ds   *catalog.Dataset
	opts ApplyOptions

	specs   []ColumnSpec
	columns []catalog.ColumnInfo
	keys    []int // positions in specs of the primary_key columns
	rows    int64
	// heldAsIs: see HeldAsIs.
	heldAsIs []string

	conn    *sql.Conn
	tx      *sql.Tx
	stats   ApplyStats
	changed bool
	// sinceCompact counts the rows inserted and deleted since the last
	// compaction.
	sinceCompact int64
	// delta: the keys the open transaction deleted and put, for the
	// point index (pointdelta.go).
	delta pointDelta
	// spoils: the open transaction made a change that a rewrite of the
	// file in the background cannot catch up with by key (a TRUNCATE).
	spoils bool
}

// An Applier compacts the dataset (and rewrites its table when deleted
// rows pile up, rewrite.go) after inserting and deleting a tenth of its
// rows, at least compactMinChanges and at most compactMaxChanges rows.
const (
	compactMinChanges = 2_000
	compactMaxChanges = 500_000
)

// compactAfter is how many rows an Applier of a table of rows rows inserts
// and deletes between compactions.
func compactAfter(rows int64) int64 { return min(max(rows/10, compactMinChanges), compactMaxChanges) }

// ErrNotLoaded is returned by NewApplier for a dataset without a stored
// acceleration to apply changes to.
var ErrNotLoaded = errors.New("has no acceleration to apply changes to")

// NewApplier returns an Applier over the dataset's stored acceleration.
func (e *Engine) NewApplier(ctx context.Context, ds *catalog.Dataset, opts ApplyOptions) (*Applier, error) {
	h, err := e.attach(ctx, ds)
	if err != nil {
		return nil, err
	}
	e.markInPlace(h)
	info, err := e.storedInfo(ctx, ds.Name)
	if err != nil {
		return nil, err
	}
	if info == nil {
		return nil, fmt.Errorf("dataset %s %w", ds.Name, ErrNotLoaded)
	}
	a := &Applier{e: e, h: h, ds: ds, opts: opts, specs: info.Specs, columns: slices.Clone(info.Columns), rows: info.Rows}
	for _, k := range ds.Acceleration.PrimaryKey {
		i := slices.IndexFunc(a.specs, func(c ColumnSpec) bool { return c.Name == k })
		if i < 0 || !a.columns[i].Accelerated {
			return nil, dataError{fmt.Errorf("primary_key column %q is not a column the acceleration holds", k)}
		}
		a.keys = append(a.keys, i)
	}
	if len(a.keys) == 0 {
		return nil, dataError{errors.New("a changes dataset needs primary_key")}
	}
	return a, nil
}

// Specs are the columns the acceleration holds, in the order a Change's
// Row gives them.
func (a *Applier) Specs() []ColumnSpec { return a.specs }

// HeldAsIs names the columns the changes applied so far left out for
// values their DuckDB type cannot hold (a numeric of another display scale
// in a column held at one, NaN, a two-dimensional array, ...) that a load
// holding them as Postgres sends them (ColumnSpec.NumericText,
// ColumnSpec.ArrayBinary) would keep.
func (a *Applier) HeldAsIs() []string { return a.heldAsIs }

// begin starts the DuckDB transaction of the next commit, holding the
// dataset's load lock until Commit or Rollback.
func (a *Applier) begin(ctx context.Context) error {
	if a.tx != nil {
		return nil
	}
	a.h.loadMu.Lock()
	conn, err := a.e.db.Conn(ctx)
	if err != nil {
		a.h.loadMu.Unlock()
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		a.h.loadMu.Unlock()
		return fmt.Errorf("begin apply: %w", err)
	}
	a.conn, a.tx, a.stats = conn, tx, ApplyStats{}
	return nil
}

// Apply applies one batch of final changes (truncate first) in the open
// transaction, beginning one if none is open.
func (a *Applier) Apply(ctx context.Context, truncate bool, changes []Change) (err error) {
	if err := a.begin(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			a.Rollback()
		}
	}()
	target := tableRef(a.ds.Name, a.ds.Name)
	var puts []Change
	for _, c := range changes {
		if !c.Delete {
			puts = append(puts, c)
		}
	}
	if len(puts) > 0 {
		// Resolved before anything is deleted: unchanged columns come
		// from the stored rows, also those a delete below removes.
		resolve, err := a.stagePuts(ctx, puts)
		if err != nil {
			return err
		}
		if _, err := a.exec(ctx, resolve); err != nil {
			return err
		}
	}
	if truncate {
		n, err := a.exec(ctx, "DELETE FROM "+target)
		if err != nil {
			return err
		}
		a.stats.Deleted += n
		a.rows -= n
	}
	// The deleted keys and the put keys go in one DELETE: it scans the
	// table (DuckDB joins, its index serves point lookups only), once.
	if len(changes) > 0 {
		if err := a.stageKeys(ctx, changes); err != nil {
			return err
		}
		n, err := a.exec(ctx, "DELETE FROM "+target+" AS t USING "+stageDelRef+" AS d WHERE "+a.keyMatch("t", "d", ""))
		if err != nil {
			return err
		}
		a.stats.Deleted += n
		a.rows -= n
		if err := a.trackKeys(ctx, truncate); err != nil {
			return err
		}
	}
	if len(puts) > 0 {
		if a.opts.Retention != nil {
			if preds := a.opts.Retention(time.Now()); len(preds) > 0 {
				if _, err := a.exec(ctx, "DELETE FROM "+resolvedRef+" AS "+quoteIdent(a.ds.Name)+" WHERE "+orPredicates(preds)); err != nil {
					return fmt.Errorf("apply retention to the changed rows: %w", err)
				}
			}
		}
		n, err := a.exec(ctx, "INSERT INTO "+target+" SELECT * FROM "+resolvedRef)
		if err != nil {
			return err
		}
		a.stats.Inserted += n
		a.rows += n
	}
	a.notePointDelta(truncate, changes)
	if truncate {
		a.spoils = true
	}
	return nil
}

// trackKeys records the batch's staged keys in changedTable while a
// rewrite of the file copies in the background (rewrite.go), in the
// transaction that changes their rows, for it to catch up with.
func (a *Applier) trackKeys(ctx context.Context, truncate bool) error {
	if t := a.h.track; t == nil || t.spoiled || truncate {
		return nil
	}
	changed := tableRef(a.ds.Name, changedTable)
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + changed + " AS SELECT * FROM " + stageDelRef + " LIMIT 0",
		"INSERT INTO " + changed + " BY NAME SELECT * FROM " + stageDelRef,
	} {
		if _, err := a.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// Staging tables of an apply, temporary to the apply's connection.
const (
	stageRef    = `temp.main."_pgaccel_stage"`
	stageDelRef = `temp.main."_pgaccel_stage_del"`
	resolvedRef = `temp.main."_pgaccel_resolved"`
	maskColumn  = "_pgaccel_unchanged"
)

// srcColumn names the staged column of the i-th key column of a put's Src.
func srcColumn(i int) string { return fmt.Sprintf("_pgaccel_src_%d", i) }

// stagePuts stages the puts and returns the statement that resolves them
// into resolvedRef: every accelerated column, from the stored row at Src
// where the put leaves it unchanged.
func (a *Applier) stagePuts(ctx context.Context, puts []Change) (string, error) {
	specs := slices.Clone(a.specs)
	for i, k := range a.keys {
		s := a.specs[k]
		s.Name, s.Key, s.Unique, s.KeyPart = srcColumn(i), false, false, 0
		specs = append(specs, s)
	}
	specs = append(specs, ColumnSpec{Name: maskColumn, TypeOID: pgdef.OIDText, TypeMod: -1, TypeName: "text"})
	var b copyBuilder
	b.start()
	fields := make([][]byte, len(specs))
	anyUnchanged := false
	for _, p := range puts {
		if len(p.Row) != len(a.specs) {
			return "", fmt.Errorf("a change has %d columns, the acceleration %d", len(p.Row), len(a.specs))
		}
		copy(fields, p.Row)
		var mask []byte
		for i, u := range p.Unchanged {
			if u {
				if mask == nil {
					mask = bytes.Repeat([]byte{'.'}, len(a.specs))
				}
				mask[i] = 'u'
				fields[i] = nil
			}
		}
		for i := range a.keys {
			fields[len(a.specs)+i] = nil
			if mask != nil && i < len(p.Src) {
				fields[len(a.specs)+i] = p.Src[i]
			}
		}
		fields[len(fields)-1] = mask
		anyUnchanged = anyUnchanged || mask != nil
		b.row(fields)
	}
	cols := make([]int, len(specs))
	for i := range cols {
		cols[i] = -1 // the Src and mask columns
		if i < len(a.specs) {
			cols[i] = i
		}
	}
	if err := a.load(ctx, stageRef, specs, cols, b.finish()); err != nil {
		return "", fmt.Errorf("stage changed rows: %w", err)
	}
	target := tableRef(a.ds.Name, a.ds.Name)
	var sel []string
	for i, c := range a.columns {
		if !a.inTable(i) {
			continue
		}
		col := quoteIdent(c.Name)
		if anyUnchanged {
			sel = append(sel, fmt.Sprintf("CASE WHEN substr(s.%s, %d, 1) = 'u' THEN t.%s ELSE s.%s END AS %s", quoteIdent(maskColumn), i+1, col, col, col))
		} else {
			sel = append(sel, "s."+col)
		}
	}
	q := "CREATE OR REPLACE TEMP TABLE \"_pgaccel_resolved\" AS SELECT " + strings.Join(sel, ", ") + " FROM " + stageRef + " AS s"
	if anyUnchanged {
		q += " LEFT JOIN " + target + " AS t ON " + a.keyMatch("t", "s", "src")
	}
	return q, nil
}

// stageKeys stages the keys of changes (a delete's Key, a put's key
// columns of Row) in stageDelRef.
func (a *Applier) stageKeys(ctx context.Context, changes []Change) error {
	specs := make([]ColumnSpec, len(a.keys))
	for i, k := range a.keys {
		specs[i] = a.specs[k]
		specs[i].Key, specs[i].Unique, specs[i].KeyPart = false, false, 0
	}
	var b copyBuilder
	b.start()
	key := make([][]byte, len(a.keys))
	for _, c := range changes {
		if !c.Delete {
			for i, k := range a.keys {
				key[i] = c.Row[k]
				if k < len(c.Unchanged) && c.Unchanged[k] && i < len(c.Src) {
					key[i] = c.Src[i] // an unchanged (TOASTed) key is its stored value
				}
			}
			b.row(key)
			continue
		}
		if len(c.Key) != len(a.keys) {
			return fmt.Errorf("a delete has %d key columns, the acceleration %d", len(c.Key), len(a.keys))
		}
		b.row(c.Key)
	}
	if err := a.load(ctx, stageDelRef, specs, a.keys, b.finish()); err != nil {
		return fmt.Errorf("stage deleted keys: %w", err)
	}
	return nil
}

// load (re)creates the temporary table ref with the accelerated columns of
// specs and loads stream into it; cols gives, per field of specs, the
// dataset column it holds (-1: none). Columns a value left out (an
// unstorable value: NULL stands in) are left out of the dataset's
// acceleration too; a key value left out is a data error, since the key
// would no longer find its row.
func (a *Applier) load(ctx context.Context, ref string, specs []ColumnSpec, cols []int, stream []byte) error {
	src, defs, err := newCopySource(ctx, specs, bytes.NewReader(stream), 1, a.opts.ASCIIOnly)
	if err != nil {
		return err
	}
	name := ref[strings.LastIndexByte(ref, '.')+1:]
	if _, err := a.tx.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE "+name+" ("+strings.Join(defs, ", ")+")"); err != nil {
		return err
	}
	if err := a.e.insertAll(ctx, a.tx, src, ref); err != nil {
		return err
	}
	src.markLeftOut()
	held := src.heldAsIs()
	for i, c := range src.columns {
		j := cols[i]
		if j < 0 || c.Accelerated || !a.columns[j].Accelerated {
			continue
		}
		if slices.Contains(held, c.Name) {
			a.heldAsIs = append(a.heldAsIs, c.Name)
		}
		if slices.Contains(a.keys, j) {
			return dataError{fmt.Errorf("primary_key column %q: %s", a.columns[j].Name, c.NotAccelerated)}
		}
		a.columns[j].Accelerated, a.columns[j].NotAccelerated = false, c.NotAccelerated
		a.changed = true
	}
	return nil
}

// inTable reports whether column i is in the table: its type has a DuckDB
// type (a column left out for a value it held is still there, with NULLs).
func (a *Applier) inTable(i int) bool {
	_, ok := resolveType(a.specs[i])
	return ok
}

// keyMatch is the join condition of the key columns of l and r; with
// prefix "src", r's are the staged Src columns.
func (a *Applier) keyMatch(l, r, prefix string) string {
	parts := make([]string, len(a.keys))
	for i, k := range a.keys {
		rc := quoteIdent(a.specs[k].Name)
		if prefix == "src" {
			rc = quoteIdent(srcColumn(i))
		}
		parts[i] = l + "." + quoteIdent(a.specs[k].Name) + " = " + r + "." + rc
	}
	return strings.Join(parts, " AND ")
}

func (a *Applier) exec(ctx context.Context, q string) (int64, error) {
	res, err := a.tx.ExecContext(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("apply changes: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// AddColumn adds c, a column the origin's table gained (nullable, without
// a default: its existing rows hold NULL), to the acceleration in the open
// transaction. A column of a type the acceleration cannot hold is recorded
// as not accelerated.
func (a *Applier) AddColumn(ctx context.Context, c ColumnSpec) error {
	if err := a.begin(ctx); err != nil {
		return err
	}
	t, ok := resolveType(c)
	if ok {
		if _, err := a.exec(ctx, "ALTER TABLE "+tableRef(a.ds.Name, a.ds.Name)+" ADD COLUMN "+quoteIdent(c.Name)+" "+t.duck); err != nil {
			a.Rollback()
			return err
		}
	}
	a.specs = append(a.specs, c)
	a.columns = append(a.columns, columnInfo(c, ok))
	a.changed = true
	return nil
}

// SetEnumLabels records that the enum of column name now has labels (in
// their sort order), which keep every label it had (ALTER TYPE ... ADD
// VALUE): the next Commit writes them to the checkpoint.
func (a *Applier) SetEnumLabels(name string, labels []string) {
	for i := range a.specs {
		if a.specs[i].Name == name && len(a.specs[i].EnumLabels) > 0 {
			a.specs[i].EnumLabels = slices.Clone(labels)
			a.columns[i].EnumLabels = slices.Clone(labels)
			a.changed = true
		}
	}
}

// Commit writes the checkpoint (repl's position, at as the last refresh,
// the row count and columns) and commits what Apply applied since the last
// Commit; with nothing applied it only moves the position.
func (a *Applier) Commit(ctx context.Context, repl Replication, at time.Time) (ApplyStats, error) {
	if err := a.begin(ctx); err != nil {
		return ApplyStats{}, err
	}
	delta := a.delta
	a.delta.reset()
	cols, err := json.Marshal(a.stored())
	if err == nil {
		var rb []byte
		if rb, err = json.Marshal(repl); err == nil {
			_, err = a.tx.ExecContext(ctx, "UPDATE "+tableRef(a.ds.Name, checkpointTable)+
				" SET last_refresh = ?, row_count = ?, columns = ?, replication = ?", at, a.rows, string(cols), string(rb))
		}
	}
	if err == nil {
		err = a.tx.Commit()
	}
	if t := a.h.track; err == nil && t != nil && (a.spoils || a.changed) {
		t.spoiled = true // a rewrite in the background cannot follow
	}
	a.spoils = false
	if err == nil && (a.stats.Inserted > 0 || a.stats.Deleted > 0 || a.changed) {
		// Updates are deletes and inserts: now and then a checkpoint
		// compresses the inserted rows and frees the deleted ones.
		if a.sinceCompact += a.stats.Inserted + a.stats.Deleted; a.sinceCompact >= compactAfter(a.rows) || a.h.walLarge() {
			a.sinceCompact = 0
			defer a.e.compactLater(a.h, a.ds.Name) // after end releases the load lock
		}
	}
	if err == nil && (a.stats.Inserted > 0 || a.stats.Deleted > 0 || a.changed) {
		// Before the load lock goes: no other write comes between the
		// commit and the point index's reading of it.
		if l := a.e.points.Load(); l != nil {
			if a.changed {
				delta.lost = true // columns changed: the index's are stale
			}
			(*l).applied(a.ds.Name, &delta)
		}
	}
	stats := a.stats
	a.end()
	if err != nil {
		return ApplyStats{}, fmt.Errorf("commit applied changes: %w", err)
	}
	stats.Rows, stats.Columns, stats.ColumnsChanged = a.rows, slices.Clone(a.columns), a.changed
	a.changed = false
	return stats, nil
}

// stored is the checkpoint's view of the columns.
func (a *Applier) stored() []storedColumn {
	out := make([]storedColumn, len(a.specs))
	for i, c := range a.specs {
		out[i] = storedColumn{ColumnSpec: c, Accelerated: a.columns[i].Accelerated, NotAccelerated: a.columns[i].NotAccelerated}
	}
	return out
}

// Rollback discards what Apply applied since the last Commit. The row
// count and columns are read again from the checkpoint.
func (a *Applier) Rollback() {
	if a.tx == nil {
		return
	}
	_ = a.tx.Rollback()
	a.delta.reset()
	a.spoils = false
	a.end()
	if info, err := a.e.storedInfo(context.Background(), a.ds.Name); err == nil && info != nil {
		a.rows, a.specs, a.columns = info.Rows, info.Specs, slices.Clone(info.Columns)
	}
	a.changed = false
}

func (a *Applier) end() {
	a.conn.Close()
	a.conn, a.tx = nil, nil
	a.h.loadMu.Unlock()
}

// Close rolls back an open transaction.
func (a *Applier) Close() { a.Rollback() }

// copyBuilder encodes rows as a binary COPY stream (PostgreSQL's
// "PGCOPY" format, which copybinary.go reads).
type copyBuilder struct{ buf []byte }

func (b *copyBuilder) start() {
	b.buf = append(b.buf[:0], "PGCOPY\n\xff\r\n\x00"...)
	b.buf = binary.BigEndian.AppendUint32(b.buf, 0) // flags
	b.buf = binary.BigEndian.AppendUint32(b.buf, 0) // header extension
}

// row appends a tuple; a nil field is NULL.
func (b *copyBuilder) row(fields [][]byte) {
	b.buf = binary.BigEndian.AppendUint16(b.buf, uint16(len(fields)))
	for _, f := range fields {
		if f == nil {
			b.buf = binary.BigEndian.AppendUint32(b.buf, 0xffffffff)
			continue
		}
		b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(len(f)))
		b.buf = append(b.buf, f...)
	}
}

func (b *copyBuilder) finish() []byte {
	return binary.BigEndian.AppendUint16(b.buf, 0xffff)
}

package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// Rewriting a dataset whose deleted rows and free blocks pile up. A change
// stream's applies, append merges and retention passes delete rows and
// insert others in place. DuckDB reclaims deleted rows only when its
// vacuum can merge row groups at a checkpoint, which it does not do while
// an ART index is on the table (duckdb issue 19468) and does poorly for
// deletes spread over the table: measured with DuckDB 1.5.6 on 200,000
// rows rewritten 20 times in batches, the file grew from 8.8 to 148.5 MiB
// with the index and DuckDB's memory with it; with random deletes over 2
// million rows the file doubled with or without it. DuckDB's experimental
// vacuum_rebuild_indexes did not bound the random case and made each
// checkpoint 8 times slower. So tables that change in place carry no ART
// index (keyIndex), and:
//
//   - mode file: after a compaction (compact.go) pgaccel compares the
//     file with what its live rows need (the bytes per row of the last
//     rewrite, or the blocks in use less the dead rows' share). Past
//     rewriteFileFactor it writes the live rows, in key order, and the
//     checkpoint to the next generation of the file and swaps it in
//     (files.go): a rewrite inside the file would leave it about twice
//     the rows' size, DuckDB truncating a file only from its end.
//   - mode memory: past a dead share of rewriteDeadShare (the rows the
//     row groups still store, pragma_storage_info, that count(*) no
//     longer sees) the table is rewritten: CREATE TABLE AS SELECT of the
//     live rows, then, in one transaction, the old table dropped and the
//     new one renamed, and a checkpoint that frees the old blocks.
//
// A table rewrite, and a file rewrite asked for by Reclaim, run under the
// dataset's load lock, between two applies or loads: the checkpoint row,
// and so a change stream's position, is copied unchanged, and readers read
// the old rows until the swap and the new ones after it, never waiting.
//
// The file rewrite after a background compaction holds the load lock only
// at its two ends, so that a change stream's applies go on while it copies
// (under the lock, copying 200,000 rows held every apply back for 230–330
// ms, and doubled the apply lag's p99 at 2,000 changes a second):
//
//  1. under the lock, it opens the next generation and a transaction on
//     the current one; DuckDB takes the transaction's snapshot of it at
//     its first read, there;
//  2. without the lock, it copies the rows of that snapshot and
//     checkpoints the new file, while an Applier that commits records the
//     keys it deleted and put in changedTable, in the same transaction as
//     the rows and the stream's position;
//  3. under the lock again, it catches up: the rows of the recorded keys
//     are deleted from the copy and copied again from the current table,
//     the checkpoint row (with the stream's position) is copied, and the
//     new file is installed.
//
// Any other write in between (a load, a merge, a retention pass, a
// TRUNCATE or a new column in the stream) cannot be caught up with by key:
// it marks the rewrite spoiled (lockLoad), which then drops its copy, and
// the next rewrite of the dataset holds the lock throughout.

const (
	// rewriteDeadShare is the dead share past which a table is
	// rewritten: its stored rows are then at most 1/(1-0.2) = 1.25
	// times the live ones.
	rewriteDeadShare = 0.2
	// rewriteMinDead is the fewest dead rows worth a rewrite.
	rewriteMinDead = 1000
	// rewriteFileFactor: a file-mode dataset's file is rewritten when it
	// passes this many times what its live rows need, and by at least
	// rewriteFileMinWaste bytes.
	rewriteFileFactor   = 1.25
	rewriteFileMinWaste = 256 << 10
)

// StorageStats describe how a dataset's table is stored.
type StorageStats struct {
	// FileBytes is the size of a file-mode dataset's database file and
	// its write-ahead log; 0 in mode memory.
	FileBytes int64
	// LiveRows are the rows a query sees; StoredRows those the table's
	// row groups hold, deleted ones not yet reclaimed included.
	LiveRows, StoredRows int64
	// Rewrites counts the rewrites of the table since the process
	// started, the last at LastRewrite.
	Rewrites    int64
	LastRewrite time.Time
	// RewritesDropped counts the file rewrites in the background dropped
	// because a write they cannot catch up with came while they copied.
	RewritesDropped int64
}

// DeadShare is the share of the stored rows that are deleted.
func (s StorageStats) DeadShare() float64 {
	if s.StoredRows <= 0 || s.LiveRows >= s.StoredRows {
		return 0
	}
	return 1 - float64(s.LiveRows)/float64(s.StoredRows)
}

// Storage measures how the dataset's table is stored now.
func (e *Engine) Storage(ctx context.Context, dataset string) (StorageStats, error) {
	h, err := e.handle(dataset)
	if err != nil {
		return StorageStats{}, err
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return StorageStats{}, err
	}
	defer conn.Close()
	return e.storage(ctx, conn, h, dataset)
}

func (e *Engine) storage(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset string) (StorageStats, error) {
	var s StorageStats
	s.Rewrites, s.LastRewrite, s.RewritesDropped = h.rewriteStats()
	if path := h.file(); path != "" {
		for _, p := range []string{path, path + ".wal"} {
			if fi, err := os.Stat(p); err == nil {
				s.FileBytes += fi.Size()
			}
		}
	}
	ref := tableRef(dataset, dataset)
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+ref).Scan(&s.LiveRows); err != nil {
		return s, fmt.Errorf("storage of %s: %w", dataset, err)
	}
	// The first column's data segments (not its validity's, column_path
	// [0, 0]) count every stored row once.
	if err := conn.QueryRowContext(ctx, "SELECT coalesce(sum(count), 0)::BIGINT FROM pragma_storage_info(?) WHERE column_id = 0 AND column_path = '[0]'",
		DatabaseName(dataset)+".main."+dataset).Scan(&s.StoredRows); err != nil {
		return s, fmt.Errorf("storage of %s: %w", dataset, err)
	}
	return s, nil
}

// rewriteIfDead rewrites the dataset's table when its dead share passes
// rewriteDeadShare; in mode file, it writes the next generation of the
// file (files.go) when the file passes rewriteFileFactor times what its
// live rows need. The caller holds the dataset's load lock. With
// background, a file rewrite may be begun only: it returns the rest,
// which the caller runs after releasing the lock.
func (e *Engine) rewriteIfDead(ctx context.Context, h *dsHandle, dataset string, background bool) (later func(context.Context) error, err error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if h.inPlace.Load() && !h.indexDropped.Load() {
		// Rows that change in place are not indexed by DuckDB (see
		// keyIndex); a file of an earlier version, or a full load before
		// the first change, may have the index.
		if _, err := conn.ExecContext(ctx, "DROP INDEX IF EXISTS "+quoteIdent(DatabaseName(dataset))+".main."+quoteIdent(keyIndexName)); err != nil {
			return nil, err
		}
		h.indexDropped.Store(true)
	}
	before, err := e.storage(ctx, conn, h, dataset)
	if err != nil {
		return nil, err
	}
	due := before.DeadShare() >= rewriteDeadShare && before.StoredRows-before.LiveRows >= rewriteMinDead
	needed := int64(0)
	if h.mode == catalog.ModeFile {
		if needed, err = e.neededBytes(ctx, conn, h, dataset, before); err != nil {
			return nil, err
		}
		due = due || float64(before.FileBytes) > rewriteFileFactor*float64(needed) && before.FileBytes-needed >= rewriteFileMinWaste
	}
	if !due {
		return nil, nil
	}
	if h.track != nil {
		return nil, nil // a rewrite in the background is copying
	}
	if h.mode == catalog.ModeFile && background && h.inPlace.Load() && !h.underLock {
		t, err := e.beginRewriteFile(ctx, h, dataset, before, needed)
		if err != nil || t == nil {
			return nil, err
		}
		return func(ctx context.Context) error { return e.finishRewriteFile(ctx, h, dataset, t) }, nil
	}
	h.underLock = false
	start := time.Now()
	what := "table"
	if h.mode == catalog.ModeFile {
		what = "file"
		// A copy DuckDB wrote to more blocks than the rows need (see
		// installNext) is written once more.
		for attempt := 1; attempt <= 2; attempt++ {
			if err = e.rewriteFile(ctx, conn, h, dataset, before.LiveRows, needed); err != nil || needed == 0 {
				break
			}
			if fi, serr := os.Stat(h.file()); serr != nil || float64(fi.Size()) <= rewriteFileFactor*float64(needed) {
				break
			}
		}
	} else if err = e.rewrite(ctx, conn, dataset, h.inPlace.Load()); err == nil {
		if _, cerr := conn.ExecContext(ctx, "CHECKPOINT "+quoteIdent(DatabaseName(dataset))); cerr != nil {
			// The blocks are freed at the next checkpoint instead.
			e.log.Debug().Err(cerr).Str("dataset", dataset).Msg("checkpoint after rewrite skipped")
		}
	}
	if err != nil {
		return nil, err
	}
	e.logRewrite(ctx, conn, h, dataset, what, before, needed, start)
	return nil, nil
}

// logRewrite counts and logs a rewrite begun at start.
func (e *Engine) logRewrite(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset, what string, before StorageStats, needed int64, start time.Time) {
	h.rewritten(time.Now())
	after, _ := e.storage(ctx, conn, h, dataset)
	e.log.Info().Str("dataset", dataset).Str("rewrote", what).Int64("live_rows", before.LiveRows).Int64("stored_rows", before.StoredRows).
		Float64("dead_share", before.DeadShare()).Int64("file_bytes_before", before.FileBytes).Int64("needed_bytes", needed).
		Int64("file_bytes", after.FileBytes).Dur("took", time.Since(start)).Msg("rewrote the acceleration to reclaim its deleted rows and free space")
}

// changedTable holds, in a dataset's database, the keys that a change
// stream's commits deleted or put while a rewrite in the background
// copies the table (the Applier's staged keys, by column name).
const changedTable = "_pgaccel_changed"

// rewriteTrack is a file rewrite in the background (see the top of this
// file), from its beginning under the load lock to its end under it.
type rewriteTrack struct {
	// spoiled: a write came that the rewrite cannot catch up with by
	// key. Set under the load lock.
	spoiled bool
	// done is closed when the rewrite has ended (installed or dropped).
	done chan struct{}

	conn   *sql.Conn
	tx     *sql.Tx // holds the snapshot the copy reads
	nf     nextFile
	info   *TableInfo
	rows   int64 // the snapshot's rows
	before StorageStats
	needed int64
	start  time.Time
}

// beginRewriteFile opens the next generation and the snapshot a rewrite
// in the background copies, and marks the rewrite in progress (h.track).
// The caller holds the load lock; nil, nil: nothing stored.
func (e *Engine) beginRewriteFile(ctx context.Context, h *dsHandle, dataset string, before StorageStats, needed int64) (*rewriteTrack, error) {
	info, err := e.storedInfo(ctx, dataset)
	if err != nil || info == nil {
		return nil, err
	}
	t := &rewriteTrack{info: info, before: before, needed: needed, start: time.Now(), done: make(chan struct{})}
	if t.conn, err = e.db.Conn(ctx); err != nil {
		return nil, err
	}
	fail := func(err error) (*rewriteTrack, error) {
		if t.tx != nil {
			_ = t.tx.Rollback()
		}
		e.dropNext(t.conn, dataset, t.nf)
		t.conn.Close()
		return nil, err
	}
	if _, err := t.conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+tableRef(dataset, changedTable)); err != nil {
		return fail(err)
	}
	if t.nf, err = e.openNext(ctx, t.conn, h, dataset, needed, true); err != nil {
		return fail(err)
	}
	if t.tx, err = t.conn.BeginTx(ctx, nil); err != nil {
		return fail(err)
	}
	// DuckDB takes the transaction's snapshot of the dataset's database
	// at this first read of it, while no write can come between.
	if err := t.tx.QueryRowContext(ctx, "SELECT count(*) FROM "+tableRef(dataset, dataset)).Scan(&t.rows); err != nil {
		return fail(err)
	}
	h.track = t
	return t, nil
}

// finishRewriteFile copies the snapshot's rows to the next generation
// without the load lock, and then, under it, catches up with the keys
// changed since and installs the new file; a spoiled rewrite is dropped.
func (e *Engine) finishRewriteFile(ctx context.Context, h *dsHandle, dataset string, t *rewriteTrack) (err error) {
	defer t.conn.Close()
	installed := false
	defer func() {
		if !installed {
			e.dropNext(t.conn, dataset, t.nf)
		}
	}()
	_, err = t.tx.ExecContext(ctx, "CREATE TABLE "+t.nf.ref(dataset)+" AS "+copySelect(t.info, dataset, t.rows))
	if err == nil {
		err = t.tx.Commit()
	} else {
		_ = t.tx.Rollback()
	}
	if err == nil {
		// Most of the new file's writing, before the lock.
		_, err = t.conn.ExecContext(ctx, "CHECKPOINT "+quoteIdent(t.nf.alias))
	}
	if f := e.rewriteCopied.Load(); f != nil {
		(*f)()
	}
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	h.track = nil
	defer close(t.done)
	defer func() {
		if !installed {
			if _, derr := t.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+tableRef(dataset, changedTable)); derr != nil {
				e.log.Warn().Err(derr).Str("dataset", dataset).Msg("cannot drop the keys a rewrite recorded")
			}
		}
	}()
	if err != nil {
		return fmt.Errorf("rewrite the file of %s: %w", dataset, err)
	}
	if t.spoiled {
		h.underLock = true
		h.rewriteMu.Lock()
		h.rewritesDropped++
		h.rewriteMu.Unlock()
		e.log.Debug().Str("dataset", dataset).Msg("a write the rewrite cannot catch up with came while it copied; the next rewrite holds the load lock")
		return nil
	}
	lockedAt := time.Now()
	rows, err := e.catchUp(ctx, h, dataset, t)
	if err == nil {
		err = e.installNext(ctx, t.conn, h, dataset, t.nf, rows, t.needed)
	}
	if err != nil {
		return fmt.Errorf("rewrite the file of %s: %w", dataset, err)
	}
	installed = true
	e.log.Debug().Str("dataset", dataset).Dur("locked", time.Since(lockedAt)).Msg("caught up with the changes made while the file was rewritten")
	e.logRewrite(ctx, t.conn, h, dataset, "file", t.before, t.needed, t.start)
	return nil
}

// catchUp brings the copy in the next generation up to the current table:
// the rows of the keys recorded in changedTable, deleted from the copy and
// copied again (a key deleted since has no row to copy), and the
// checkpoint row. It returns the copy's rows. The caller holds the load
// lock.
func (e *Engine) catchUp(ctx context.Context, h *dsHandle, dataset string, t *rewriteTrack) (rows int64, err error) {
	var keys []string
	crs, err := t.conn.QueryContext(ctx, "SELECT column_name FROM duckdb_columns() WHERE database_name = ? AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
		DatabaseName(dataset), changedTable)
	if err != nil {
		return 0, err
	}
	for crs.Next() {
		var k string
		if err := crs.Scan(&k); err != nil {
			crs.Close()
			return 0, err
		}
		keys = append(keys, quoteIdent(k))
	}
	if err := crs.Close(); err != nil {
		return 0, err
	}
	tx, err := t.conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var stmts []string
	if len(keys) > 0 {
		match := make([]string, len(keys))
		for i, k := range keys {
			match[i] = "t." + k + " = c." + k
		}
		on := strings.Join(match, " AND ")
		changed := "(SELECT DISTINCT " + strings.Join(keys, ", ") + " FROM " + tableRef(dataset, changedTable) + ")"
		stmts = append(stmts,
			"DELETE FROM "+t.nf.ref(dataset)+" AS t USING "+changed+" AS c WHERE "+on,
			"INSERT INTO "+t.nf.ref(dataset)+" SELECT t.* FROM "+tableRef(dataset, dataset)+" AS t SEMI JOIN "+changed+" AS c ON "+on)
	}
	stmts = append(stmts, "CREATE TABLE "+t.nf.ref(checkpointTable)+" AS SELECT * FROM "+tableRef(dataset, checkpointTable))
	if q := keyIndexSQL(t.nf.ref(dataset), t.info.storedColumns(), h.inPlace.Load()); q != "" {
		stmts = append(stmts, q)
	}
	for _, q := range stmts {
		if _, err = tx.ExecContext(ctx, q); err != nil {
			return 0, err
		}
	}
	if err = tx.QueryRowContext(ctx, "SELECT count(*) FROM "+t.nf.ref(dataset)).Scan(&rows); err != nil {
		return 0, err
	}
	return rows, tx.Commit()
}

// neededBytes estimates the file a fresh copy of the dataset would take:
// the bytes per live row of the last file rewrite, or, before one, the
// blocks in use less the deleted rows' share of them.
func (e *Engine) neededBytes(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset string, st StorageStats) (int64, error) {
	h.fileMu.Lock()
	perRow := h.bytesPerRow
	h.fileMu.Unlock()
	if perRow > 0 {
		return int64(perRow * float64(st.LiveRows)), nil
	}
	var blockSize, used int64
	if err := conn.QueryRowContext(ctx, "SELECT block_size, used_blocks FROM pragma_database_size() WHERE database_name = ?",
		DatabaseName(dataset)).Scan(&blockSize, &used); err != nil {
		return 0, fmt.Errorf("storage of %s: %w", dataset, err)
	}
	return int64(float64(blockSize*used) * (1 - st.DeadShare())), nil
}

// rewrite replaces the dataset's table by a copy of its live rows.
func (e *Engine) rewrite(ctx context.Context, conn *sql.Conn, dataset string, inPlace bool) (err error) {
	info, err := e.storedInfo(ctx, dataset)
	if err != nil {
		return err
	}
	if info == nil {
		return nil // nothing stored (yet)
	}
	load := tableRef(dataset, loadTable)
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+load)
			err = fmt.Errorf("rewrite the table of %s: %w", dataset, err)
		}
	}()
	for _, q := range []string{"DROP TABLE IF EXISTS " + load, "CREATE TABLE " + load + " AS SELECT * FROM " + tableRef(dataset, dataset)} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	stmts := []string{
		"DROP TABLE " + tableRef(dataset, dataset),
		"ALTER TABLE " + load + " RENAME TO " + quoteIdent(dataset),
	}
	if q := keyIndexSQL(tableRef(dataset, dataset), info.storedColumns(), inPlace); q != "" {
		stmts = append(stmts, q)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	e.catalogChanged()
	return nil
}

// Reclaim compacts the dataset now and rewrites its table when its dead
// share passes rewriteDeadShare, as the background compaction after
// applies, merges and retention passes does (tests, and an operator's
// on-demand request); it holds the load lock throughout.
func (e *Engine) Reclaim(ctx context.Context, dataset string) error {
	h, err := e.handle(dataset)
	if err != nil {
		return fmt.Errorf("reclaim dataset %s: %w", dataset, err)
	}
	if err := h.lockIdle(ctx); err != nil {
		return fmt.Errorf("reclaim dataset %s: %w", dataset, err)
	}
	err, rerr, _ := e.reclaimLocked(ctx, h, dataset, false)
	h.loadMu.Unlock()
	if err != nil {
		return fmt.Errorf("reclaim dataset %s: %w", dataset, err)
	}
	return rerr
}

// lockIdle takes the dataset's load lock once no rewrite in the
// background is copying (DuckDB was seen to refuse a checkpoint of the
// dataset while the copy's transaction was open, "other write transactions
// active").
func (h *dsHandle) lockIdle(ctx context.Context) error {
	for {
		h.loadMu.Lock()
		t := h.track
		if t == nil {
			return nil
		}
		h.loadMu.Unlock()
		select {
		case <-t.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// reclaimLocked checkpoints the dataset (err) and then, rows deleted in
// place being reclaimed by a rewrite once they are a large enough share,
// rewrites its table if due (rerr), or, with background, may begin a
// rewrite of its file whose rest (later) the caller runs after releasing
// the lock. The caller holds h.loadMu.
func (e *Engine) reclaimLocked(ctx context.Context, h *dsHandle, dataset string, background bool) (err, rerr error, later func(context.Context) error) {
	if err := e.compact(ctx, dataset); err != nil {
		return err, nil, nil
	}
	later, rerr = e.rewriteIfDead(ctx, h, dataset, background)
	return nil, rerr, later
}

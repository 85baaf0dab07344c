package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"os"
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
// Both run under the dataset's load lock, between two applies or loads:
// the checkpoint row, and so a change stream's position, is copied
// unchanged, and readers read the old rows until the swap and the new
// ones after it, never waiting.

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
	s.Rewrites, s.LastRewrite = h.rewriteStats()
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
// live rows need. The caller holds the dataset's load lock.
func (e *Engine) rewriteIfDead(ctx context.Context, h *dsHandle, dataset string) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if h.inPlace.Load() && !h.indexDropped.Load() {
		// Rows that change in place are not indexed by DuckDB (see
		// keyIndex); a file of an earlier version, or a full load before
		// the first change, may have the index.
		if _, err := conn.ExecContext(ctx, "DROP INDEX IF EXISTS "+quoteIdent(DatabaseName(dataset))+".main."+quoteIdent(keyIndexName)); err != nil {
			return err
		}
		h.indexDropped.Store(true)
	}
	before, err := e.storage(ctx, conn, h, dataset)
	if err != nil {
		return err
	}
	due := before.DeadShare() >= rewriteDeadShare && before.StoredRows-before.LiveRows >= rewriteMinDead
	needed := int64(0)
	if h.mode == catalog.ModeFile {
		if needed, err = e.neededBytes(ctx, conn, h, dataset, before); err != nil {
			return err
		}
		due = due || float64(before.FileBytes) > rewriteFileFactor*float64(needed) && before.FileBytes-needed >= rewriteFileMinWaste
	}
	if !due {
		return nil
	}
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
		return err
	}
	h.rewritten(time.Now())
	after, _ := e.storage(ctx, conn, h, dataset)
	e.log.Info().Str("dataset", dataset).Str("rewrote", what).Int64("live_rows", before.LiveRows).Int64("stored_rows", before.StoredRows).
		Float64("dead_share", before.DeadShare()).Int64("file_bytes_before", before.FileBytes).Int64("needed_bytes", needed).
		Int64("file_bytes", after.FileBytes).Dur("took", time.Since(start)).Msg("rewrote the acceleration to reclaim its deleted rows and free space")
	return nil
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
// on-demand request).
func (e *Engine) Reclaim(ctx context.Context, dataset string) error {
	h, err := e.handle(dataset)
	if err != nil {
		return fmt.Errorf("reclaim dataset %s: %w", dataset, err)
	}
	h.loadMu.Lock()
	err, rerr := e.reclaimLocked(ctx, h, dataset)
	h.loadMu.Unlock()
	if err != nil {
		return fmt.Errorf("reclaim dataset %s: %w", dataset, err)
	}
	return rerr
}

// reclaimLocked checkpoints the dataset (err) and then, rows deleted in
// place being reclaimed by a rewrite once they are a large enough share,
// rewrites its table if due (rerr). The caller holds h.loadMu.
func (e *Engine) reclaimLocked(ctx context.Context, h *dsHandle, dataset string) (err, rerr error) {
	if err := e.compact(ctx, dataset); err != nil {
		return err, nil
	}
	return nil, e.rewriteIfDead(ctx, h, dataset)
}

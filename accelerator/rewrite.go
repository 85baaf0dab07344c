package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"
)

// Rewriting a table whose deleted rows pile up. A change stream's applies,
// append merges and retention passes delete rows and insert others in
// place. DuckDB reclaims deleted rows only when its vacuum can merge row
// groups at a checkpoint, which it does not do while an ART index is on
// the table (duckdb issue 19468; the _pgaccel_key index is) and does
// poorly for deletes spread over the table: measured with DuckDB 1.5.6 on
// 200,000 rows rewritten 20 times in batches, the file grew from 8.8 to
// 148.5 MiB with the index and DuckDB's memory with it; with random
// deletes over 2 million rows the file doubled with or without it.
// DuckDB's experimental vacuum_rebuild_indexes did not bound the random
// case and made each checkpoint 8 times slower.
//
// So, after a compaction (compact.go) pgaccel measures the table's dead
// share: the rows its row groups still store (pragma_storage_info) that
// count(*) no longer sees. Past rewriteDeadShare it rewrites the table:
// CREATE TABLE AS SELECT of the live rows, then, in one transaction, the
// old table dropped, the new one renamed and its key index built again,
// and a checkpoint that frees the old blocks for reuse. It runs under the
// dataset's load lock, between two applies or loads: the checkpoint row,
// and so a change stream's position, is untouched, and readers read the
// old table until the commit and the new one after it, never waiting.

const (
	// rewriteDeadShare is the dead share past which a table is
	// rewritten: its stored rows are then at most 1/(1-0.2) = 1.25
	// times the live ones.
	rewriteDeadShare = 0.2
	// rewriteMinDead is the fewest dead rows worth a rewrite.
	rewriteMinDead = 1000
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
	if h.path != "" {
		for _, p := range []string{h.path, h.path + ".wal"} {
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
// rewriteDeadShare. The caller holds the dataset's load lock.
func (e *Engine) rewriteIfDead(ctx context.Context, h *dsHandle, dataset string) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	before, err := e.storage(ctx, conn, h, dataset)
	if err != nil {
		return err
	}
	if before.DeadShare() < rewriteDeadShare || before.StoredRows-before.LiveRows < rewriteMinDead {
		return nil
	}
	start := time.Now()
	if err := e.rewrite(ctx, conn, dataset); err != nil {
		return err
	}
	h.rewritten(time.Now())
	if _, err := conn.ExecContext(ctx, "CHECKPOINT "+quoteIdent(DatabaseName(dataset))); err != nil {
		// The blocks are freed at the next checkpoint instead.
		e.log.Debug().Err(err).Str("dataset", dataset).Msg("checkpoint after rewrite skipped")
	}
	after, _ := e.storage(ctx, conn, h, dataset)
	e.log.Info().Str("dataset", dataset).Int64("live_rows", before.LiveRows).Int64("stored_rows", before.StoredRows).
		Float64("dead_share", before.DeadShare()).Int64("file_bytes_before", before.FileBytes).Int64("file_bytes", after.FileBytes).
		Dur("took", time.Since(start)).Msg("rewrote the acceleration's table to reclaim its deleted rows")
	return nil
}

// rewrite replaces the dataset's table by a copy of its live rows.
func (e *Engine) rewrite(ctx context.Context, conn *sql.Conn, dataset string) (err error) {
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
	cols := make([]storedColumn, len(info.Specs))
	for i, s := range info.Specs {
		cols[i] = storedColumn{ColumnSpec: s, Accelerated: info.Columns[i].Accelerated}
	}
	stmts := []string{
		"DROP TABLE " + tableRef(dataset, dataset),
		"ALTER TABLE " + load + " RENAME TO " + quoteIdent(dataset),
	}
	if col, ok := keyIndex(cols); ok {
		stmts = append(stmts, "CREATE INDEX "+quoteIdent(keyIndexName)+" ON "+tableRef(dataset, dataset)+" ("+quoteIdent(col)+")")
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

package accelerator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// SnapshotDir is the directory, under the data dir, where snapshot copies
// are written before they are uploaded (DuckDB may write only in the data
// dir: lockDown).
const SnapshotDir = ".snapshots"

// FilePath is where a file-mode dataset's database lives: its current
// file when it is attached, else the newest that Attach would take (files.go),
// so that a snapshot can be put there before the dataset is attached.
func (e *Engine) FilePath(dataset string) (string, error) {
	if h, err := e.handle(dataset); err == nil && h.mode == catalog.ModeFile {
		return h.file(), nil
	}
	dir, err := filepath.Abs(e.dataDir())
	if err != nil {
		return "", fmt.Errorf("data dir: %w", err)
	}
	path, _, _ := newestFile(dir, dataset)
	return path, nil
}

// removeSnapshotLeftovers removes what a process killed while it made,
// uploaded or downloaded a snapshot left in the data dir: the SnapshotDir's
// files and downloads (<name>.duckdb.download-<n>) never renamed into
// place. Neither is ever served; a failure is logged.
func (e *Engine) removeSnapshotLeftovers() {
	dir := e.dataDir()
	left, _ := filepath.Glob(filepath.Join(dir, "*.duckdb.download-*"))
	snaps, _ := filepath.Glob(filepath.Join(dir, SnapshotDir, "*"))
	for _, p := range append(left, snaps...) {
		if err := os.RemoveAll(p); err != nil {
			e.log.Warn().Err(err).Str("path", p).Msg("could not remove a snapshot left over by an earlier run")
			continue
		}
		e.log.Info().Str("path", p).Msg("removed a snapshot file left over by an earlier run")
	}
}

// SnapshotTo writes a consistent copy of a file-mode dataset's database
// (its table and checkpoint) to a new file in the data dir's SnapshotDir
// and returns the file and what it holds. The copy is one read
// transaction (COPY FROM DATABASE), so readers go on meanwhile; loads,
// change batches and retention deletes of the dataset wait for it. The
// caller removes the file.
func (e *Engine) SnapshotTo(ctx context.Context, dataset string) (path string, info *TableInfo, err error) {
	h, err := e.handle(dataset)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot of %s: %w", dataset, err)
	}
	if h.mode != catalog.ModeFile {
		return "", nil, fmt.Errorf("snapshot of %s: acceleration.mode is %s; snapshots are of file-mode datasets", dataset, h.mode)
	}
	dir, err := filepath.Abs(filepath.Join(e.dataDir(), SnapshotDir))
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", nil, fmt.Errorf("snapshot of %s: %w", dataset, err)
	}
	path = filepath.Join(dir, fmt.Sprintf("%s_%d.duckdb", dataset, time.Now().UnixNano()))
	alias := quoteIdent("pgaccel_snapshot_" + dataset)
	// A read: a rewrite in the background goes on (its table of changed
	// keys, if any, is copied too, and dropped by an Attach of the copy).
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	info, err = e.storedInfo(ctx, dataset)
	if err == nil && info == nil {
		err = errors.New("the dataset has not been loaded")
	}
	if err != nil {
		return "", nil, fmt.Errorf("snapshot of %s: %w", dataset, err)
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot of %s: %w", dataset, err)
	}
	defer conn.Close()
	fail := func(err error) (string, *TableInfo, error) {
		os.Remove(path)
		os.Remove(path + ".wal")
		return "", nil, fmt.Errorf("snapshot of %s: %w", dataset, err)
	}
	if _, err := conn.ExecContext(ctx, "ATTACH "+quoteLiteral(path)+" AS "+alias); err != nil {
		return fail(err)
	}
	_, err = conn.ExecContext(ctx, "COPY FROM DATABASE "+quoteIdent(DatabaseName(dataset))+" TO "+alias)
	if err == nil {
		_, err = conn.ExecContext(ctx, "CHECKPOINT "+alias)
	}
	// Detached whatever happened: the file is closed, and whole.
	if _, derr := conn.ExecContext(context.WithoutCancel(ctx), "DETACH "+alias); err == nil {
		err = derr
	}
	if err != nil {
		return fail(err)
	}
	return path, info, nil
}

// ReplaceFrom replaces a file-mode dataset's table and checkpoint by those
// of the DuckDB file at path (a snapshot, in the data dir), in one
// transaction: readers see the old rows until the commit and the new ones
// after it. It returns what the dataset then holds.
func (e *Engine) ReplaceFrom(ctx context.Context, dataset, path string) (*TableInfo, error) {
	h, err := e.handle(dataset)
	if err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	if h.mode != catalog.ModeFile {
		return nil, fmt.Errorf("load snapshot of %s: acceleration.mode is %s; snapshots are of file-mode datasets", dataset, h.mode)
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	defer conn.Close()
	alias := "pgaccel_incoming_" + dataset
	if _, err := conn.ExecContext(ctx, "ATTACH "+quoteLiteral(path)+" AS "+quoteIdent(alias)+" (READ_ONLY)"); err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "DETACH "+quoteIdent(alias))
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables()
		WHERE database_name = ? AND schema_name = 'main' AND table_name IN (?, ?)`, alias, dataset, checkpointTable).Scan(&n); err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	if n != 2 {
		return nil, fmt.Errorf("load snapshot of %s: the file holds no table %s with its checkpoint", dataset, dataset)
	}
	src := func(table string) string { return quoteIdent(alias) + ".main." + quoteIdent(table) }
	h.lockLoad()
	defer h.loadMu.Unlock()
	load := tableRef(dataset, loadTable)
	for _, q := range []string{"DROP TABLE IF EXISTS " + load, "CREATE TABLE " + load + " AS SELECT * FROM " + src(dataset)} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	for _, q := range []string{
		"DROP TABLE IF EXISTS " + tableRef(dataset, dataset),
		"ALTER TABLE " + load + " RENAME TO " + quoteIdent(dataset),
		"DROP TABLE IF EXISTS " + tableRef(dataset, checkpointTable),
		"CREATE TABLE " + tableRef(dataset, checkpointTable) + " AS SELECT * FROM " + src(checkpointTable),
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	e.catalogChanged()
	info, err := e.storedInfo(ctx, dataset)
	if err == nil && info == nil {
		err = errors.New("its checkpoint cannot be read")
	}
	if err != nil {
		return nil, fmt.Errorf("load snapshot of %s: %w", dataset, err)
	}
	if q := keyIndexSQL(tableRef(dataset, dataset), info.storedColumns(), h.inPlace.Load()); q != "" {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			e.log.Warn().Err(err).Str("dataset", dataset).Msg("index on the primary key of a loaded snapshot")
		}
	}
	e.compactLater(h, dataset)
	return info, nil
}

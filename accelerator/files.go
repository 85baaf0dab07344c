package accelerator

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
)

// File generations of a file-mode dataset. DuckDB frees the blocks of
// deleted rows and dropped tables inside its file, for reuse, but shrinks
// the file only when the free blocks are at its end; and a checkpoint
// writes a table's new blocks before it frees its old ones. So a table
// rewritten in its file, or a full load beside the table it replaces,
// leaves the file about twice the size its rows need, for good (measured
// with DuckDB 1.5.6: a table rewrite at 20 % dead rows kept a 6.5 MiB
// table in a 13–15 MiB file).
//
// Instead the dataset's rows move to a new file: the next generation,
// written beside the current one under another name, checkpointed,
// closed, renamed into place and attached under the dataset's database
// name with ATTACH OR REPLACE. Readers in the middle of a query keep the
// old database until they finish (DuckDB detaches it when its last
// transaction ends); the next ones read the new file; none waits. The old
// file is then removed (on Linux a removed open file stays readable).
//
// Names, in the data dir:
//
//	<name>.duckdb          generation 0, what the first attach creates
//	<name>.g<N>.duckdb     generation N ≥ 1, always whole (renamed only
//	                       after its checkpoint and close)
//	<name>.g<N>.duckdb.new generation N being written by a load or a
//	                       rewrite under the load lock; removed by Attach
//	<name>.g<N>.duckdb.rw  the same, written by a rewrite in the
//	                       background (rewrite.go)
//
// Attach takes the highest generation and removes the others, so a crash
// at any step leaves either the old file or the new one in use, never a
// part.

// genPath is the file of the dataset's generation gen in dir.
func genPath(dir, dataset string, gen int) string {
	if gen == 0 {
		return filepath.Join(dir, dataset+".duckdb")
	}
	return filepath.Join(dir, dataset+".g"+strconv.Itoa(gen)+".duckdb")
}

// generations lists the dataset's whole files in dir, by generation, and
// the leftovers of generations never finished.
func generations(dir, dataset string) (whole map[int]string, partial []string) {
	whole = map[int]string{}
	if _, err := os.Stat(genPath(dir, dataset, 0)); err == nil {
		whole[0] = genPath(dir, dataset, 0)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, dataset+".g*.duckdb*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), dataset+".g")
		num, suffix, ok := strings.Cut(rest, ".duckdb")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 1 {
			continue
		}
		switch suffix {
		case "":
			whole[n] = m
		case ".new", ".new.wal", ".rw", ".rw.wal":
			partial = append(partial, m)
		}
	}
	return whole, partial
}

// newestFile returns the dataset's newest whole file in dir, its
// generation, and the files of the other generations (with their WALs)
// and unfinished ones, which the caller may remove.
func newestFile(dir, dataset string) (path string, gen int, stale []string) {
	whole, partial := generations(dir, dataset)
	gen = -1
	for g := range whole {
		gen = max(gen, g)
	}
	if gen < 0 {
		return genPath(dir, dataset, 0), 0, partial
	}
	for g, p := range whole {
		if g != gen {
			stale = append(stale, p, p+".wal")
		}
	}
	return whole[gen], gen, append(stale, partial...)
}

// file is the dataset's current database file (mode file).
func (h *dsHandle) file() string {
	h.fileMu.Lock()
	defer h.fileMu.Unlock()
	return h.path
}

// walLarge reports whether a file-mode dataset's WAL has passed
// walCompactShare of its file (and walCompactMin): the changes it holds
// are worth a compaction, which writes them into the file, compressed.
// Wide rows fill the WAL long before compactAfter's count of changes.
func (h *dsHandle) walLarge() bool {
	if h.mode != catalog.ModeFile {
		return false
	}
	path := h.file()
	wal, err := os.Stat(path + ".wal")
	if err != nil || wal.Size() < walCompactMin {
		return false
	}
	db, err := os.Stat(path)
	return err == nil && float64(wal.Size()) > walCompactShare*float64(db.Size())
}

const (
	walCompactShare = 0.08
	walCompactMin   = 1 << 20
)

// A file expected below smallFileBytes is written in blocks of
// smallBlockSize (DuckDB's smallest) instead of 256 KiB (openNext).
const (
	smallFileBytes = 4 << 20
	smallBlockSize = 16 << 10
)

// rowGroupRows is DuckDB's row group size (122,880 rows).
const rowGroupRows = 122_880

// nextFile is a generation of a dataset's file being written beside the
// current one: its path and the DuckDB name it is attached under. A load,
// or a rewrite under the load lock, writes "<gen>.new" as
// pgaccel_next_<name>; a rewrite in the background (rewrite.go), which a
// load may overtake, writes "<gen>.rw" as pgaccel_rw_<name>.
type nextFile struct {
	path, alias string
}

// ref quotes table in the next generation's database.
func (n nextFile) ref(table string) string {
	return quoteIdent(n.alias) + ".main." + quoteIdent(table)
}

// openNext creates the dataset's next generation file and attaches it.
// The caller holds the dataset's load lock (when background, only to
// open it), and then either installs it (installNext) or drops it
// (dropNext).
//
// expected is the size the file should have (0: unknown). A file expected
// below smallFileBytes gets DuckDB's smallest block size: with 256 KiB
// blocks, each append of a few rows adds blocks that are a large share of
// a small file (a 1 MiB window of rows was 1.5–1.8 MiB after each merge).
// DuckDB records the block size in the file; a restart reads it from there.
func (e *Engine) openNext(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset string, expected int64, background bool) (nextFile, error) {
	h.fileMu.Lock()
	nf := nextFile{genPath(filepath.Dir(h.path), dataset, h.gen+1) + ".new", "pgaccel_next_" + dataset}
	h.fileMu.Unlock()
	if background {
		nf = nextFile{strings.TrimSuffix(nf.path, ".new") + ".rw", "pgaccel_rw_" + dataset}
	}
	for _, p := range []string{nf.path, nf.path + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nextFile{}, err
		}
	}
	opts := ""
	if expected > 0 && expected < smallFileBytes {
		opts = fmt.Sprintf(" (BLOCK_SIZE %d)", smallBlockSize)
	}
	if _, err := conn.ExecContext(ctx, "ATTACH "+quoteLiteral(nf.path)+" AS "+quoteIdent(nf.alias)+opts); err != nil {
		return nextFile{}, fmt.Errorf("create the next file: %w", err)
	}
	return nf, nil
}

// dropNext detaches and removes a next generation that is not installed.
func (e *Engine) dropNext(conn *sql.Conn, dataset string, nf nextFile) {
	if nf.path == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "DETACH DATABASE IF EXISTS "+quoteIdent(nf.alias)); err != nil {
		e.log.Warn().Err(err).Str("dataset", dataset).Msg("cannot detach an unfinished acceleration file")
	}
	for _, p := range []string{nf.path, nf.path + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.log.Warn().Err(err).Str("path", p).Msg("cannot remove an unfinished acceleration file")
		}
	}
}

// installNext makes the written next generation the dataset's database:
// it is checkpointed and closed, renamed to its generation's name, and
// attached under the dataset's database name in place of the current
// one, whose file is removed. On error before the attach, the current
// file stays; the caller drops the next one.
//
// rows are the rows it holds. A rewrite's file sets the bytes per row that
// the next rewrite is measured against (rewrite.go), or lowers them: DuckDB
// does not always write the same rows to as few blocks (measured with
// 1.5.6: 1 in 8 copies of 20,000 rows took 1.8 instead of 1.0 MiB), and a
// copy that came out large must not become the norm: the compaction after
// it writes the rows again. They may rise by a tenth per new file, as rows
// grow wider. expected (0: none) is what the rows were estimated to need
// before the copy: it bounds the norm the same way, which matters when
// there is none yet (after a restart a large copy became the norm, and the
// file then grew to 1.85 times a fresh copy before the next rewrite).
func (e *Engine) installNext(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset string, nf nextFile, rows, expected int64) error {
	alias := quoteIdent(nf.alias)
	if _, err := conn.ExecContext(ctx, "CHECKPOINT "+alias); err != nil {
		return fmt.Errorf("checkpoint the next file: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "DETACH "+alias); err != nil {
		return fmt.Errorf("close the next file: %w", err)
	}
	// The generation after the current one: a load may have installed
	// one since a background rewrite opened its file (the rewrite then
	// drops its file instead).
	h.fileMu.Lock()
	final := genPath(filepath.Dir(h.path), dataset, h.gen+1)
	h.fileMu.Unlock()
	if err := os.Rename(nf.path, final); err != nil {
		return err
	}
	syncDir(filepath.Dir(final))
	// From here the new generation is what a restart attaches.
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ATTACH OR REPLACE "+quoteLiteral(final)+" AS "+quoteIdent(DatabaseName(dataset))); err != nil {
		// The current file is still attached and holds the same rows,
		// but a restart would take the new one: take it now or never.
		if rerr := os.Rename(final, nf.path); rerr != nil {
			if rerr := os.Remove(final); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				e.log.Error().Err(rerr).Str("dataset", dataset).Str("path", final).
					Msg("an acceleration file failed to attach and cannot be removed; remove it before a restart")
			}
		}
		return fmt.Errorf("attach the next file: %w", err)
	}
	h.fileMu.Lock()
	old := h.path
	h.path, h.gen = final, h.gen+1
	if fi, err := os.Stat(final); err == nil && rows > 0 {
		per := float64(fi.Size()) / float64(rows)
		if h.bytesPerRow > 0 {
			per = min(per, h.bytesPerRow*1.1)
		}
		if expected > 0 {
			per = min(per, float64(expected)*1.1/float64(rows))
		}
		h.bytesPerRow = per
	}
	h.fileMu.Unlock()
	for _, p := range []string{old, old + ".wal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.log.Warn().Err(err).Str("path", p).Msg("cannot remove the acceleration's previous file")
		}
	}
	e.catalogChanged()
	return nil
}

// syncDir makes a rename in dir durable; a failure only weakens that.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// rewriteFile writes the dataset's live rows and its checkpoint to the
// next generation and installs it, under the dataset's load lock (see
// rewriteFileBackground for the rewrite that holds it only at its ends).
// liveRows are the rows the table holds (count(*)).
func (e *Engine) rewriteFile(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset string, liveRows, expected int64) (err error) {
	info, err := e.storedInfo(ctx, dataset)
	if err != nil || info == nil {
		return err // nothing stored (yet)
	}
	nf, err := e.openNext(ctx, conn, h, dataset, expected, false)
	if err != nil {
		return err
	}
	installed := false
	defer func() {
		if !installed {
			e.dropNext(conn, dataset, nf)
		}
	}()
	stmts := []string{
		"CREATE TABLE " + nf.ref(dataset) + " AS " + copySelect(info, dataset, liveRows),
		"CREATE TABLE " + nf.ref(checkpointTable) + " AS SELECT * FROM " + tableRef(dataset, checkpointTable),
	}
	if q := keyIndexSQL(nf.ref(dataset), info.storedColumns(), h.inPlace.Load()); q != "" {
		stmts = append(stmts, q)
	}
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := e.installNext(ctx, conn, h, dataset, nf, liveRows, expected); err != nil {
		return err
	}
	installed = true
	return nil
}

// copySelect is the query of the rows a rewrite copies to the next
// generation: all of them, in key order when the table has a key and more
// than one row group, so that DuckDB's zone maps prune a lookup by key to
// a row group (a table of one row group is read whole anyway, and sorting
// wide rows is what a rewrite spends most on).
func copySelect(info *TableInfo, dataset string, liveRows int64) string {
	var order []string
	for i, s := range info.Specs {
		if s.KeyPart > 0 && info.Columns[i].Accelerated {
			order = append(order, quoteIdent(s.Name))
		}
	}
	sel := "SELECT * FROM " + tableRef(dataset, dataset)
	if len(order) > 0 && liveRows > rowGroupRows {
		sel += " ORDER BY " + strings.Join(order, ", ")
	}
	return sel
}

// swapFile completes a full load written to the next generation (table
// nf.ref(dataset)): the key index, the checkpoint, and the install.
// Readers see the old file's rows until the install and the new ones
// after it.
func (e *Engine) swapFile(ctx context.Context, conn *sql.Conn, h *dsHandle, dataset string, cp checkpoint, nf nextFile) error {
	if q := keyIndexSQL(nf.ref(dataset), cp.columns, h.inPlace.Load()); q != "" {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("swap: %w", err)
		}
	}
	if err := writeCheckpoint(ctx, conn, nf.ref(checkpointTable), cp); err != nil {
		return err
	}
	if err := e.installNext(ctx, conn, h, dataset, nf, cp.rows, 0); err != nil {
		return fmt.Errorf("swap: %w", err)
	}
	return nil
}

package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// LoadStats describes a completed load.
type LoadStats struct {
	Rows     int64         // rows read from the stream
	Total    int64         // rows in the table once published (Rows less deletions, or the merged table)
	Deleted  int64         // loaded rows removed by LoadOptions.Delete
	Bytes    int64         // bytes of COPY stream read
	Duration time.Duration // from the start of Load to the swap's commit
	// Columns are all the columns passed to Load, marked accelerated or not.
	Columns []catalog.ColumnInfo
	// Completed is when the swap committed; the checkpoint's last refresh.
	Completed time.Time
	// HeldAsIs names the columns left out for values their DuckDB type
	// cannot hold that a load holding them as Postgres sends them would
	// keep: numerics a DECIMAL cannot hold (mixed display scales where
	// none is declared, NaN, ±Infinity, more than 38 digits;
	// ColumnSpec.NumericText) and arrays a LIST cannot (more dimensions,
	// lower bounds other than 1; ColumnSpec.ArrayBinary).
	HeldAsIs []string
	// Merged: the rows were merged into the stored ones (an append);
	// false when they replaced them.
	Merged bool
}

// Load replaces a dataset's table with the rows of a binary COPY stream.
//
// copyStream is the output of `COPY (...) TO STDOUT (FORMAT binary)`, header
// included, whose columns are cols in order. The columns DuckDBType accepts
// are decoded straight into DuckDB vectors, 2048 rows at a time, and
// inserted into a new table by one INSERT that pulls the stream through a
// table function; the rest are skipped. The new table is then swapped in
// with the checkpoint in one transaction (see swap), so concurrent readers
// see the old table until the commit and never an empty or partial one.
//
// On any error, including ctx being cancelled and the stream failing or
// ending before its trailer, the old table and checkpoint stay as they were
// and the new table is dropped. Loads of one dataset run one at a time; the
// dataset is attached first if it is not yet.
func (e *Engine) Load(ctx context.Context, ds *catalog.Dataset, cols []ColumnSpec, copyStream io.Reader) (LoadStats, error) {
	return e.LoadWith(ctx, ds, cols, copyStream, LoadOptions{})
}

// LoadOptions change how LoadWith publishes the rows it loaded.
type LoadOptions struct {
	// Delete holds DuckDB predicates over the loaded columns: rows for
	// which any is true are removed before the rows are published (the
	// retention policy, so that evicted rows never show).
	Delete []string
	// Append merges the loaded rows into the current table instead of
	// replacing it. Without a current table, or when its columns differ
	// from cols, the load replaces it as usual.
	Append *AppendMerge
	// PrimaryKey is recorded in the checkpoint.
	PrimaryKey []string
	// Progress, when set, counts the rows read so far.
	Progress *atomic.Int64
	// Replication, for a changes dataset, is the stream's position the
	// loaded rows are consistent with (the slot's consistent point): it is
	// written in the checkpoint in the swap's transaction.
	Replication *Replication
	// ASCIIOnly leaves out the text columns that hold a byte beyond
	// ASCII, for an origin database whose server_encoding is SQL_ASCII:
	// there Postgres takes each byte for a character (length, substr,
	// ordering) and sends the bytes unconverted, maybe not even UTF-8,
	// where DuckDB reads UTF-8 text.
	ASCIIOnly bool
}

// AppendMerge says how an append refresh's rows join the current table.
type AppendMerge struct {
	// TimeColumn orders versions of a row: with PrimaryKey, the newest
	// version of each key wins.
	TimeColumn string
	// PrimaryKey identifies a row. Without it, rows are compared whole.
	PrimaryKey []string
	// Overlap is a DuckDB predicate on the current table that selects the
	// rows the load may bring again (time_column past the load's lower
	// bound). Without PrimaryKey, loaded rows that equal one of these are
	// not added again (as a multiset: n equal rows at the origin stay n).
	Overlap string
}

// LoadWith is Load with options: deletions before publishing (retention)
// and append merges.
func (e *Engine) LoadWith(ctx context.Context, ds *catalog.Dataset, cols []ColumnSpec, copyStream io.Reader, opts LoadOptions) (LoadStats, error) {
	start := time.Now()
	stats, err := e.load(ctx, ds, cols, copyStream, opts)
	stats.Duration = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("load dataset %s: %w", ds.Name, err)
	}
	e.log.Debug().Str("dataset", ds.Name).Int64("rows", stats.Rows).Int64("bytes", stats.Bytes).
		Dur("duration", stats.Duration).Msg("loaded acceleration")
	return stats, nil
}

func (e *Engine) load(ctx context.Context, ds *catalog.Dataset, cols []ColumnSpec, copyStream io.Reader, opts LoadOptions) (stats LoadStats, err error) {
	h, err := e.attach(ctx, ds)
	if err != nil {
		return stats, err
	}
	ra := newReadahead(ctx, copyStream)
	defer ra.Close()
	src, defs, err := newCopySource(ctx, cols, ra, e.loadThreads, opts.ASCIIOnly)
	if err != nil {
		return stats, err
	}
	src.progress = opts.Progress
	stats.Columns = src.columns

	h.lockLoad()
	defer h.loadMu.Unlock()

	conn, err := e.db.Conn(ctx)
	if err != nil {
		return stats, err
	}
	defer conn.Close()

	// A full load in mode file writes the next generation of the file
	// (files.go): the current file keeps only the rows it serves.
	loadRef, next, installed := tableRef(ds.Name, loadTable), nextFile{}, false
	fresh := h.mode == catalog.ModeFile && opts.Append == nil
	if fresh {
		// The size of the current file, when it holds rows, guides the
		// next one's.
		var expected int64
		if h.fileMu.Lock(); h.bytesPerRow > 0 {
			if fi, serr := os.Stat(h.path); serr == nil {
				expected = fi.Size()
			}
		}
		h.fileMu.Unlock()
		if next, err = e.openNext(ctx, conn, h, ds.Name, expected, false); err != nil {
			return stats, err
		}
		loadRef = next.ref(ds.Name)
	}
	defer func() {
		if fresh {
			if !installed {
				e.dropNext(conn, ds.Name, next)
			}
			return
		}
		if err == nil {
			return
		}
		// The load table must go even when ctx is what failed.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, derr := conn.ExecContext(cctx, "DROP TABLE IF EXISTS "+loadRef); derr != nil {
			e.log.Warn().Err(derr).Str("dataset", ds.Name).Msg("cannot drop the table of a failed load")
		}
	}()

	if !fresh {
		if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+loadRef); err != nil {
			return stats, fmt.Errorf("drop leftover load table: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE "+loadRef+" ("+strings.Join(defs, ", ")+")"); err != nil {
		// Columns DuckDB cannot hold side by side ("a" and "A").
		return stats, fmt.Errorf("create load table: %w", dataError{err})
	}

	if src.maxThreads > 1 {
		// A parallel insert needs this; it is per connection, and the
		// connection goes back to the pool after the load.
		if _, err := conn.ExecContext(ctx, "SET preserve_insertion_order = false"); err != nil {
			return stats, err
		}
		defer func() {
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "RESET preserve_insertion_order"); rerr != nil {
				e.log.Warn().Err(rerr).Msg("cannot reset preserve_insertion_order after a load")
			}
		}()
	}

	id := e.addSource(src)
	defer e.removeSource(id)
	insert := insertSQL(src, loadRef, id)

	// In mode memory, inserted rows stay uncompressed until a checkpoint:
	// with Options.CompactEvery the stream is inserted in slices, each
	// compacted before the next.
	var slice int64
	if h.mode == catalog.ModeMemory && e.opts.CompactEvery > 0 {
		slice = e.opts.CompactEvery
	}
	for {
		src.startSlice(slice)
		_, err = conn.ExecContext(ctx, insert)
		var (
			done   bool
			srcErr error
		)
		stats.Rows, stats.Bytes, done, srcErr = src.result()
		if srcErr != nil { // the typed cause of what DuckDB reports as text
			return stats, srcErr
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return stats, cerr
			}
			return stats, fmt.Errorf("insert rows: %w", err)
		}
		if done {
			break
		}
		if slice == 0 {
			return stats, errTruncated
		}
		if cerr := e.compact(ctx, ds.Name); cerr != nil {
			// Readers with open transactions prevent it; the load goes on
			// uncompressed.
			e.log.Debug().Err(cerr).Str("dataset", ds.Name).Msg("compaction during load skipped")
		}
	}

	src.markLeftOut()
	stats.HeldAsIs = src.heldAsIs()
	if err := valueScales(ctx, conn, loadRef, cols, stats.Columns); err != nil {
		return stats, err
	}
	merge := false
	if opts.Append != nil {
		var current []catalog.ColumnInfo
		if current, merge, err = e.canMerge(ctx, conn, ds.Name, cols); err != nil {
			return stats, err
		}
		for i, c := range current {
			if merge && !c.Accelerated && stats.Columns[i].Accelerated {
				stats.Columns[i] = c
			}
			if merge && i < len(cols) {
				// The merged table holds the stored values too.
				mergeValueScale(&cols[i], &stats.Columns[i], c)
			}
		}
	}
	if len(opts.Delete) > 0 && !merge { // a merge deletes after merging, so that new versions replace old ones first
		res, err := conn.ExecContext(ctx, "DELETE FROM "+loadRef+" AS "+quoteIdent(ds.Name)+" WHERE "+orPredicates(opts.Delete))
		if err != nil {
			return stats, fmt.Errorf("apply retention to the loaded rows: %w", err)
		}
		if stats.Deleted, err = res.RowsAffected(); err != nil {
			return stats, err
		}
	}
	stats.Total = stats.Rows - stats.Deleted
	stored := make([]storedColumn, len(cols))
	for i, c := range cols {
		stored[i] = storedColumn{ColumnSpec: c, Accelerated: stats.Columns[i].Accelerated, NotAccelerated: stats.Columns[i].NotAccelerated}
	}
	cp := checkpoint{
		dataset:     ds.Name,
		rows:        stats.Total,
		columns:     stored,
		refreshSQL:  ds.Acceleration.RefreshSQL,
		primaryKey:  opts.PrimaryKey,
		replication: opts.Replication,
	}
	stats.Merged = merge
	if merge {
		e.markInPlace(h)
		stats.Total, stats.Deleted, stats.Completed, err = e.merge(ctx, conn, ds.Name, cp, opts.Append, opts.Delete)
	} else {
		stats.Completed = time.Now()
		cp.lastRefresh = stats.Completed
		if fresh {
			err = e.swapFile(ctx, conn, h, ds.Name, cp, next)
			installed = err == nil
		} else {
			err = e.swap(ctx, conn, ds.Name, cp, h.inPlace.Load())
		}
	}
	if err != nil {
		return stats, err
	}
	e.compactLater(h, ds.Name)
	return stats, nil
}

// insertSQL is the INSERT that pulls the stream of src, added under id,
// into table (a quoted reference) through the copy function.
func insertSQL(src *copySource, table string, id int64) string {
	exprs := make([]string, len(src.outs))
	for i, o := range src.outs {
		exprs[i] = stageExpr(o.typ, quoteIdent(o.stageName))
	}
	return fmt.Sprintf("INSERT INTO %s SELECT %s FROM %s(%d)", table, strings.Join(exprs, ", "), pgdef.FuncCopy, id)
}

// execer is a connection or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertAll inserts every row of src's stream into table with one INSERT
// on conn.
func (e *Engine) insertAll(ctx context.Context, conn execer, src *copySource, table string) error {
	id := e.addSource(src)
	defer e.removeSource(id)
	_, err := conn.ExecContext(ctx, insertSQL(src, table, id))
	_, _, done, srcErr := src.result()
	switch {
	case srcErr != nil:
		return srcErr
	case err != nil:
		return fmt.Errorf("insert rows: %w", err)
	case !done:
		return errTruncated
	}
	return nil
}

// registerCopyFunction registers the table function through which an INSERT
// pulls a load's COPY stream: pgaccel_copy(id) reads the source added
// under id.
func (e *Engine) registerCopyFunction(ctx context.Context) error {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return duckdb.RegisterTableUDF(conn, pgdef.FuncCopy, duckdb.ParallelChunkTableFunction{
		Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{mustTypeInfo(duckdb.TYPE_BIGINT)}},
		BindArguments: func(_ map[string]any, args ...any) (duckdb.ParallelChunkTableSource, error) {
			id, _ := args[0].(int64)
			e.mu.Lock()
			src, ok := e.sources[id]
			e.mu.Unlock()
			if !ok {
				return nil, fmt.Errorf("%s(%d): no such load", pgdef.FuncCopy, id)
			}
			return src, nil
		},
	})
}

func (e *Engine) addSource(src *copySource) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextID++
	e.sources[e.nextID] = src
	return e.nextID
}

func (e *Engine) removeSource(id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.sources, id)
}

func mustTypeInfo(t duckdb.Type) duckdb.TypeInfo {
	ti, err := duckdb.NewTypeInfo(t)
	if err != nil {
		panic(err)
	}
	return ti
}

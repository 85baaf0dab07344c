package accelerator

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/catalog"
)

// Options configure an Engine.
type Options struct {
	// DataDir holds the files of file-mode datasets (<DataDir>/<name>.duckdb);
	// it is created on the first file-mode Attach.
	DataDir string
	// MemoryLimit is DuckDB's memory_limit, e.g. "2GB"; "" keeps DuckDB's
	// default (80% of RAM).
	MemoryLimit string
	// TempDirectory is where DuckDB spills what exceeds MemoryLimit; ""
	// is <DataDir>/duckdb_tmp.
	TempDirectory string
	// Threads is DuckDB's thread count; 0 keeps DuckDB's default (one per core).
	Threads int
	// CompactEvery, when positive, makes a mode-memory load compact its
	// table every that many bytes of COPY stream (see compact.go), which
	// bounds the load's peak memory to about that much uncompressed data
	// plus the compressed rest, at a cost: each compaction pauses the
	// stream (on lineitem, 256 MiB slices doubled the load's time). 0
	// compacts only after the load, in the background: the peak is the
	// uncompressed table (about 170 bytes per lineitem row).
	CompactEvery int64
	// Functions are scalar function sets (overloads by name) other
	// packages provide for the rewritten statements, registered at Open:
	// the proxy's Postgres-exact text output (pgdef.FuncText).
	Functions map[string][]duckdb.ScalarFunc
	Logger    zerolog.Logger
}

// Engine is the embedded DuckDB that holds every dataset's acceleration.
// Each dataset lives in its own attached database, "ds_<name>", with its
// table main."<name>" and, for bookkeeping, main."_pgaccel_checkpoint". It is
// safe for concurrent use.
type Engine struct {
	opts Options
	log  zerolog.Logger
	db   *sql.DB

	mu       sync.Mutex
	datasets map[string]*dsHandle // by dataset name
	sources  map[int64]*copySource
	nextID   int64
	closed   bool

	// loadThreads is how many DuckDB threads decode and insert one load.
	loadThreads int

	// The query pool (querypool.go).
	qmu     sync.Mutex
	idle    []*queryConn
	qclosed bool
	epoch   atomic.Uint64
	// inPlaceDBs: the lower-cased database names of the datasets whose
	// rows change in place (markInPlace).
	inPlaceDBs atomic.Pointer[[]string]
	// prepares counts the statements prepared (tests).
	prepares atomic.Int64

	// points learns of the rows each change batch changed
	// (NewPointIndexes), so that point indexes follow them.
	points atomic.Pointer[pointListener]

	closing chan struct{}  // closed by Close
	wg      sync.WaitGroup // background compactions

	// rewriteCopied, in tests, is called when a rewrite in the
	// background has copied the rows, before it takes the load lock.
	rewriteCopied atomic.Pointer[func()]
}

// dsHandle is the engine's view of one attached dataset.
type dsHandle struct {
	mode   string     // catalog.ModeMemory or catalog.ModeFile
	loadMu sync.Mutex // one load (and swap) at a time per dataset
	// File mode: the database file and its generation (files.go),
	// changed under loadMu and fileMu, read under either.
	fileMu sync.Mutex
	path   string
	gen    int
	// bytesPerRow: the file's bytes per live row after its last rewrite
	// (rewrite.go), 0 before one.
	bytesPerRow float64
	// inPlace: the dataset's rows change in place (a change stream's
	// applies, append merges, retention deletes), not only by a swap of
	// its table. No statement over it is kept prepared (markInPlace).
	inPlace atomic.Bool
	// indexDropped: the key index of a dataset that changes in place
	// was dropped (rewrite.go) and no table since has one.
	indexDropped atomic.Bool
	// compactWaiting: a background compaction waits for loadMu
	// (compactLater).
	compactWaiting atomic.Bool
	// track: the rewrite of the file in the background in progress
	// (rewrite.go), nil when none; set, read and marked under loadMu.
	// underLock: the last one was spoiled by a write it cannot catch up
	// with, so the next rewrite holds the lock throughout.
	track     *rewriteTrack
	underLock bool
	// The rewrites of its table (rewrite.go).
	rewriteMu   sync.Mutex
	rewrites    int64
	lastRewrite time.Time
	// rewritesDropped: see StorageStats.RewritesDropped.
	rewritesDropped int64
}

// lockLoad takes the dataset's load lock for a write that a rewrite in
// the background cannot catch up with (a load, a merge, a retention pass,
// a snapshot's load): that rewrite, if one is copying, is dropped when it
// comes back for the lock (rewrite.go). A change stream's Applier takes
// loadMu itself and tells the rewrite which keys it changed.
func (h *dsHandle) lockLoad() {
	h.loadMu.Lock()
	if h.track != nil {
		h.track.spoiled = true
	}
}

func (h *dsHandle) rewritten(at time.Time) {
	h.rewriteMu.Lock()
	defer h.rewriteMu.Unlock()
	h.rewrites++
	h.lastRewrite = at
}

func (h *dsHandle) rewriteStats() (rewrites int64, last time.Time, dropped int64) {
	h.rewriteMu.Lock()
	defer h.rewriteMu.Unlock()
	return h.rewrites, h.lastRewrite, h.rewritesDropped
}

// TableInfo describes a dataset's stored acceleration: what Attach finds in
// a file from an earlier run.
type TableInfo struct {
	// Columns are the origin's columns at the last refresh, each marked
	// accelerated or not.
	Columns []catalog.ColumnInfo
	// Specs are the same columns as the refresh read them from the origin.
	Specs       []ColumnSpec
	LastRefresh time.Time // when that refresh completed
	Rows        int64
	RefreshSQL  string   // acceleration.refresh_sql at that refresh
	PrimaryKey  []string // acceleration.primary_key at that refresh
	// Replication is where a changes dataset's stream stood at the last
	// applied transaction; nil for the other modes.
	Replication *Replication
}

// maxLoadThreads bounds the threads of one load: beyond a few, the single
// COPY stream is the limit.
const maxLoadThreads = 4

// pgdef.FuncCopy is the table function a load reads the COPY stream through.

// Open starts an in-process DuckDB. Close releases it.
func Open(opts Options) (*Engine, error) {
	q := url.Values{}
	if opts.MemoryLimit != "" {
		q.Set("memory_limit", opts.MemoryLimit)
	}
	if opts.Threads > 0 {
		q.Set("threads", strconv.Itoa(opts.Threads))
	}
	tmp := opts.TempDirectory
	if tmp == "" {
		dir := opts.DataDir
		if dir == "" {
			dir = catalog.DefaultDataDir
		}
		tmp = filepath.Join(dir, "duckdb_tmp")
	}
	q.Set("temp_directory", tmp)
	// DuckDB's allocator keeps what a task freed until its peak passes
	// allocator_flush_threshold (128 MiB by default): after a load, a
	// rewrite or a large query the process stayed that much larger. The
	// background thread returns freed memory to the system between tasks.
	q.Set("allocator_flush_threshold", "32MiB")
	q.Set("allocator_background_threads", "true")
	dsn := ""
	if len(q) > 0 {
		dsn = "?" + q.Encode()
	}
	connector, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	e := &Engine{
		opts:     opts,
		log:      opts.Logger,
		db:       sql.OpenDB(connector),
		datasets: make(map[string]*dsHandle),
		sources:  make(map[int64]*copySource),
		closing:  make(chan struct{}),
	}
	if err := e.lockDown(); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	e.removeSnapshotLeftovers()
	var threads int
	if err := e.db.QueryRow("SELECT current_setting('threads')").Scan(&threads); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	e.loadThreads = min(max(threads, 1), maxLoadThreads)
	if err := e.registerCopyFunction(context.Background()); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	if err := e.registerNumericFunctions(context.Background()); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	if err := e.registerFunctions(context.Background(), opts.Functions); err != nil {
		e.db.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	return e, nil
}

// registerFunctions registers Options.Functions.
func (e *Engine) registerFunctions(ctx context.Context, sets map[string][]duckdb.ScalarFunc) error {
	if len(sets) == 0 {
		return nil
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for name, fs := range sets {
		if err := duckdb.RegisterScalarUDFSet(conn, name, fs...); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}

// Close closes DuckDB, after waiting for background compactions and, up to
// closeWait, for the connections loads and queries still use. File-mode
// datasets are checkpointed to their files. Loads and queries still running
// after that fail.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.closing)
	e.mu.Unlock()
	e.wg.Wait() // background compactions
	e.closeIdle()
	e.waitConnsReleased(closeWait)
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("close duckdb: %w", err)
	}
	return nil
}

// closeWait bounds how long Close waits for the connections that queries
// and loads still use.
const closeWait = 10 * time.Second

// waitConnsReleased waits, for up to max, until no connection is in use.
// DuckDB stays open while one is, after db.Close has returned, and
// checkpoints the file-mode datasets and removes their WALs only when the
// last one closes: an engine opened next over the same directory (a
// restart in the same process, a test) could then find a WAL that is
// being removed ("Cannot open file ….duckdb.wal"). Close returns with the
// files closed instead.
func (e *Engine) waitConnsReleased(max time.Duration) {
	deadline := time.Now().Add(max)
	for e.db.Stats().InUse > 0 {
		if time.Now().After(deadline) {
			e.log.Warn().Int("connections", e.db.Stats().InUse).Msg("closing DuckDB with connections still in use")
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockDown turns off DuckDB's access to files and the network except for the
// data dir: queries that reach Query must not read the proxy host's files
// (read_csv('/etc/passwd')), write them (COPY ... TO) or attach databases
// other than the datasets'.
func (e *Engine) lockDown() error {
	dir, err := filepath.Abs(e.dataDir())
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, stmt := range []string{
		"SET allowed_directories = [" + quoteLiteral(dir) + "]",
		"SET enable_external_access = false",
		// Postgres divides integers as integers; DuckDB gives a double
		// unless told otherwise (it then truncates toward zero, like
		// Postgres).
		"SET GLOBAL integer_division = true",
	} {
		if _, err := e.db.Exec(stmt); err != nil {
			return err
		}
	}
	return nil
}

// dataDir is Options.DataDir or its default.
func (e *Engine) dataDir() string {
	if e.opts.DataDir == "" {
		return catalog.DefaultDataDir
	}
	return e.opts.DataDir
}

// DatabaseName is the DuckDB catalog that holds a dataset: "ds_<name>".
func DatabaseName(dataset string) string {
	return "ds_" + dataset
}

// TableRef returns the quoted DuckDB name of a dataset's table, e.g.
// "ds_orders"."main"."orders"; the planner rewrites references to the origin
// table to it.
func (e *Engine) TableRef(dataset string) string {
	return tableRef(dataset, dataset)
}

// tableRef quotes table in the main schema of dataset's database.
func tableRef(dataset, table string) string {
	return quoteIdent(DatabaseName(dataset)) + ".main." + quoteIdent(table)
}

// Attach attaches the dataset's database: ':memory:' in mode memory,
// <DataDir>/<name>.duckdb in mode file (created if missing). In file mode
// it returns what the file already holds, so that it can serve at once after
// a restart; existing is nil when there is nothing (always in memory mode).
// Attaching an attached dataset again only returns its info.
func (e *Engine) Attach(ctx context.Context, ds *catalog.Dataset) (existing *TableInfo, err error) {
	h, err := e.attach(ctx, ds)
	if err != nil {
		return nil, fmt.Errorf("attach dataset %s: %w", ds.Name, err)
	}
	if h.mode != catalog.ModeFile {
		return e.storedInfo(ctx, ds.Name)
	}
	h.lockLoad() // leftovers of an interrupted load or rewrite are dropped before use
	defer h.loadMu.Unlock()
	for _, table := range []string{loadTable, changedTable} {
		if _, err := e.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+tableRef(ds.Name, table)); err != nil {
			return nil, fmt.Errorf("attach dataset %s: drop leftover table: %w", ds.Name, err)
		}
	}
	info, err := e.storedInfo(ctx, ds.Name)
	if err != nil {
		return nil, fmt.Errorf("attach dataset %s: %w", ds.Name, err)
	}
	return info, nil
}

// attach attaches ds's database once and returns its handle.
func (e *Engine) attach(ctx context.Context, ds *catalog.Dataset) (*dsHandle, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	if h, ok := e.datasets[ds.Name]; ok {
		return h, nil
	}
	if ds.Acceleration.Engine != "" && ds.Acceleration.Engine != catalog.EngineDuckDB {
		return nil, fmt.Errorf("acceleration.engine %q is not supported", ds.Acceleration.Engine)
	}
	h := &dsHandle{mode: ds.Acceleration.Mode}
	a := ds.Acceleration
	h.inPlace.Store(a.RefreshMode == catalog.RefreshChanges || a.RefreshMode == catalog.RefreshAppend || a.RetentionCheckEnabled)
	var stmt string
	switch h.mode {
	case catalog.ModeFile:
		dir, err := filepath.Abs(e.dataDir())
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		var stale []string
		h.path, h.gen, stale = newestFile(dir, ds.Name)
		for _, p := range stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				e.log.Warn().Err(err).Str("path", p).Msg("cannot remove an earlier or unfinished acceleration file")
			} else if err == nil {
				e.log.Info().Str("path", p).Msg("removed an earlier or unfinished acceleration file")
			}
		}
		stmt = fmt.Sprintf("ATTACH %s AS %s", quoteLiteral(h.path), quoteIdent(DatabaseName(ds.Name)))
	case catalog.ModeMemory, "":
		h.mode = catalog.ModeMemory
		// COMPRESS applies DuckDB's storage compression to the in-memory
		// database, as for files: a third of the memory for typical tables.
		stmt = fmt.Sprintf("ATTACH ':memory:' AS %s (COMPRESS)", quoteIdent(DatabaseName(ds.Name)))

	default:
		return nil, fmt.Errorf("acceleration.mode %q is not supported", h.mode)
	}
	if _, err := e.db.ExecContext(ctx, stmt); err != nil {
		return nil, err
	}
	e.datasets[ds.Name] = h
	if h.inPlace.Load() {
		e.publishInPlaceLocked()
	}
	e.catalogChanged()
	e.log.Debug().Str("dataset", ds.Name).Str("mode", h.mode).Msg("attached acceleration database")
	return h, nil
}

// handle returns the attached dataset's handle.
func (e *Engine) handle(name string) (*dsHandle, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	h, ok := e.datasets[name]
	if !ok {
		return nil, fmt.Errorf("dataset %s is not attached", name)
	}
	return h, nil
}

// errClosed is returned by an Engine after Close.
var errClosed = errors.New("accelerator engine is closed")

// quoteIdent quotes a DuckDB identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteLiteral quotes a DuckDB string literal.
func quoteLiteral(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

// Detach forgets a dataset a reload removed (or changes in a way its
// database cannot follow: another mode): its database is detached, so a
// memory one's rows are freed; a file one's file stays, for the dataset
// should it come back. A load of it in progress is waited for (its
// refresh task is stopped first). Statements over it still running may
// fail; the proxy sends those to the origin.
func (e *Engine) Detach(ctx context.Context, name string) error {
	e.mu.Lock()
	h, ok := e.datasets[name]
	if ok {
		delete(e.datasets, name)
		e.publishInPlaceLocked()
		e.catalogChanged()
	}
	closed := e.closed
	e.mu.Unlock()
	if !ok || closed {
		return nil
	}
	h.lockLoad()
	defer h.loadMu.Unlock()
	if _, err := e.db.ExecContext(ctx, "DETACH DATABASE IF EXISTS "+quoteIdent(DatabaseName(name))); err != nil {
		return fmt.Errorf("detach dataset %s: %w", name, err)
	}
	e.log.Info().Str("dataset", name).Msg("detached the acceleration of a dataset removed from the configuration")
	return nil
}

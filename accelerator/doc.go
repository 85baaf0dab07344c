// Package accelerator owns the embedded DuckDB engine (duckdb-go, database/sql
// driver "duckdb", no build tags): per-dataset databases, bulk loads from the
// origin's binary COPY stream and atomic swaps; the writes that change a
// dataset's rows in place (append merges, change streams, retention
// deletes); the file generations, compactions and rewrites that keep its
// storage near what its live rows need; copies to and from the snapshot
// store; the scalar functions and macros the planner's rewritten statements
// call; point indexes; and the read-only queries whose rows the proxy
// encodes as Postgres results.
//
// accelerator may import catalog and pgdef only; it must never import proxy,
// planner, refresh or snapshot.
//
// # Layout
//
// One in-memory DuckDB instance (Open) attaches one database per dataset
// (Attach), named "ds_<name>" (DatabaseName):
//
//   - mode memory: ATTACH ':memory:' AS "ds_<name>" (COMPRESS);
//   - mode file: ATTACH '<data_dir>/<name>.duckdb' AS "ds_<name>" (or its
//     newest generation), which survives restarts; full loads, and
//     rewrites of a file grown well past what its live rows need, write
//     the next generation, <name>.g<N>.duckdb, and swap it in (files.go,
//     rewrite.go).
//
// Each holds the dataset's table main."<name>" (TableRef), and
// main."_pgaccel_checkpoint", one row written or updated in the same
// transaction as every change to the table (a swap, a merge, a change
// batch's commit, a retention delete): format (3), dataset, last_refresh,
// row_count, the columns (JSON of ColumnSpec plus Accelerated and
// NotAccelerated), refresh_sql, primary_key and, for a changes dataset,
// the stream's position (Replication). After a restart Attach returns it
// as TableInfo, so the dataset serves at once. A load writes into
// main."_pgaccel_load" first (dropped on failure, and by Attach if a crash
// left it, as is a background rewrite's main."_pgaccel_changed"); in mode
// file a full load writes the next generation's file instead (files.go).
// When the origin's primary key is a single column of an indexable type
// (ColumnSpec.Key) and the dataset's rows are replaced whole (not changed
// in place: see keyIndex), the swap also creates the index "_pgaccel_key"
// on it, after the rename (DuckDB cannot rename a table that has an
// index).
//
// Open turns off DuckDB's access to files and the network outside the data
// dir (enable_external_access=false, allowed_directories=[data dir]): a
// query that reaches Query cannot read_csv('/etc/passwd'), COPY TO a file or
// ATTACH another database.
//
// # Files
//
//	apply.go          Applier: a change stream's batches (deletes, puts with
//	                  unchanged TOAST values) in one DuckDB transaction,
//	                  committed with the stream's position
//	arrayfuncs.go     pgaccel_array_contains: Postgres's @> and <@ of arrays
//	collkey.go        libc collation keys and case mapping (strxfrm_l, towupper_l)
//	compact.go        compaction (CHECKPOINT) after and during loads, and after
//	                  writes in place
//	copybinary.go     binary COPY framing and the types' binary send formats
//	engine.go         Options, Open, Close, Attach, TableRef, the dataset
//	                  handles; the lock-down of DuckDB's file and network access
//	files.go          file generations: a new file written beside, swapped in
//	icu.go            ICU collation keys and case mapping, ICU loaded at run time
//	intervalepoch.go  EXTRACT(epoch FROM interval) as Postgres computes it
//	intervalkey.go    pgaccel_interval_key: intervals ordered as Postgres orders them
//	jsonfuncs.go      Postgres's json and jsonb operators over the stored text
//	load.go           Load, LoadWith: load table, INSERT ... FROM pgaccel_copy(id),
//	                  then a swap or an append merge; LoadOptions, AppendMerge
//	memory.go         the machine's memory and DuckDB's use of it
//	numericavg.go     avg of integers and numerics, exact
//	numericin.go      text cast to numeric as numeric_in reads it, with its scale
//	numericscale.go   registration of the scalar functions the planner's
//	                  rewrites call; numeric text's scale, division, rounding,
//	                  conversion to integers and sort keys
//	numericstddev.go  stddev and variance of numerics, exact
//	numerictext.go    macros over numerics held as text (ColumnSpec.NumericText)
//	pgfuncs.go        Postgres functions DuckDB lacks: initcap (ASCII),
//	                  justify_*, timestamptz subtraction
//	pointdelta.go     point indexes that follow change batches, merges and
//	                  retention deletes key by key
//	pointindex.go     point indexes: a dataset's rows in memory by primary key
//	query.go          Query, QueryIn, Explain and Rows, with the Go type of each
//	                  DuckDB type
//	querypool.go      the queries' connections and their prepared statements
//	readahead.go      reads a load's stream ahead of DuckDB's threads
//	replication.go    Replication: a change stream's position in the checkpoint
//	rewrite.go        rewrites of tables whose deleted rows pile up; StorageStats,
//	                  Reclaim
//	snapshot.go       SnapshotTo, ReplaceFrom, FilePath: a file-mode dataset's
//	                  copy for the snapshot store, and one swapped in from it
//	source.go         the table function that decodes a stream into DataChunks;
//	                  ErrData
//	swap.go           the swap transaction and the checkpoint row; append merges
//	                  (merge) and retention deletes (DeleteWhere)
//	types.go          ColumnSpec; Postgres → DuckDB type mapping (DuckDBType),
//	                  staging types
//	writers.go        per-type decoders writing into DuckDB vectors
//
// # Writes besides loads
//
// A load replaces a table whole. The other writes change its rows in place,
// each in one DuckDB transaction with the checkpoint, under the dataset's
// load lock, so readers see the rows before or after it, never part of it:
//
//   - an append merge (LoadOptions.Append, swap.go): the loaded rows join
//     the stored ones, by primary key and time column or as a multiset;
//   - a change stream (Applier, apply.go): refresh_mode changes hands it
//     each batch's final change per key, and Commit writes the stream's
//     position (Replication) with the rows;
//   - a retention delete (DeleteWhere, or LoadOptions.Delete before a load
//     is published).
//
// Tables whose rows change in place carry no key index (keyIndex). They are
// compacted in the background after these writes (compact.go); past a
// share of deleted rows, or a file size well beyond what the live rows
// need, the table is rewritten (mode memory) or the file is rewritten into
// its next generation (mode file; rewrite.go, files.go). Point indexes
// follow these writes by key (pointdelta.go). SnapshotTo copies a file-mode
// dataset's database for the snapshot store; ReplaceFrom swaps a downloaded
// snapshot in.
//
// # Type mapping
//
//	Postgres                   DuckDB            kept exactly because
//	bool                       BOOLEAN
//	int2, int4, int8           SMALLINT, INTEGER, BIGINT
//	float4, float8             FLOAT, DOUBLE     IEEE bits: NaN, ±Infinity, -0
//	numeric(p,s), p <= 38      DECIMAL(p,s)
//	numeric (no typmod)        DECIMAL(38,s)     s: the display scale its values share
//	                                             (HeldScale)
//	any other numeric          VARCHAR           numeric_out's text (pgdef.NumericText):
//	                                             mixed display scales, NaN, ±Infinity,
//	                                             more than 38 digits (NumericText; a load
//	                                             that meets such a value in a DECIMAL
//	                                             column leaves it out and says so in
//	                                             LoadStats.HeldAsIs, and refresh loads
//	                                             again with NumericText; numerictext.go)
//	enum                       VARCHAR           the label; the planner orders by
//	                                             ColumnSpec.EnumLabels (planner/enums.go)
//	text, varchar(n), name     VARCHAR
//	char(n), bpchar            VARCHAR           trailing spaces removed (Postgres ignores
//	                                             them in comparisons; the encoder pads)
//	json                       VARCHAR           the exact text
//	jsonb                      VARCHAR           Postgres's canonical jsonb text
//	bytea                      BLOB
//	date                       DATE              ±infinity kept (4713 BC .. 5874897 AD fit)
//	time                       TIME              µs; 24:00:00: the column is left out (*)
//	timestamp, timestamptz     TIMESTAMP, TIMESTAMPTZ  µs instants; ±infinity kept; values
//	                                             after 294246 AD: the column is left out (*)
//	interval                   INTERVAL          months, days, µs kept apart
//	uuid                       UUID
//	inet, cidr                 VARCHAR           inet_out's text (pgdef.InetText); compared
//	                                             for equality only (planner/inetrules.go)
//	T[] of any type above      T[] (LIST)        (but inet and cidr) one dimension, lower
//	                                             bound 1; other arrays, and elements the
//	                                             element type cannot hold: the column is
//	                                             left out (*), but for bool, integer, text
//	                                             and numeric elements, held as
//	                                             array_send's form (BLOB; ArrayBinary,
//	                                             printed by pgdef.ArrayText); so is
//	                                             every inet[] and cidr[]
//	anything else              not accelerated   (timetz, bit, ranges, geometric, money,
//	                                             macaddr, arrays of enums, composites, ...)
//
// Domains are loaded as their base type. Not accelerated columns are left
// out of the table and reported with catalog.ColumnInfo.Accelerated=false
// and the reason in NotAccelerated.
//
// (*) Values the column's DuckDB type cannot hold. Postgres accepts them,
// and a load that meets one goes on: the
// value is stored as NULL, the column is marked not accelerated, with the
// first such value's row in NotAccelerated ("row 5 holds time 24:00:00,
// which DuckDB gives back as 00:00:00"), and statements that read the
// column go to the origin, so answers stay exact. (Numerics are the
// exception: held as their text instead, see above.) The next load that meets no such value
// accelerates the column again; an append merge keeps it out (its NULLs
// stay) until a full load replaces the table. The checkpoint keeps the
// reasons, so a restart serves the same columns. Values the decoder
// rejects outright (a malformed stream) fail the load with ErrData, which
// the refresh does not retry: loading the same table fails the same way.
// In a database whose server_encoding is SQL_ASCII, Postgres takes each
// byte of text for a character and sends it unconverted (maybe not even
// UTF-8), while DuckDB reads UTF-8: with LoadOptions.ASCIIOnly, set for such
// origins, a text value with a byte beyond ASCII leaves its column out.
// Every other server encoding is converted to the UTF-8 the load asks for,
// and its functions count characters as DuckDB does.
// DuckDB matches identifiers case-insensitively, so a table with columns
// "a" and "A" fails to load.
//
// # Load path and measurements
//
// Load reads the stream on a goroutine of its own in 1 MiB blocks
// (readahead.go), frames and decodes it itself (copybinary.go), and pulls
// it into DuckDB through a table function: one statement
//
//	INSERT INTO "ds_x".main."_pgaccel_load" SELECT <exprs> FROM pgaccel_copy(<id>)
//
// makes DuckDB call copySource.FillChunk on up to 4 of its threads. Each call
// takes the next 2048 tuples off the stream under a lock (framing and one
// memcpy), then decodes them into its DataChunk with duckdb.SetChunkValue
// (typed generics, no boxing except for LIST values); DuckDB inserts the
// chunks in parallel (preserve_insertion_order is turned off for the load's
// connection, so rows are not kept in the origin's order). Times and
// timestamps are staged as BIGINT µs and converted by the INSERT's
// expressions, because duckdb-go cannot write ±infinity or 24:00:00 through
// time.Time. Go holds a few blocks and a chunk of tuples per thread, never
// the table.
//
// Measured on this project's 2-core machine (shared: other jobs' load makes
// single runs vary by up to ±30%), PostgreSQL 15 on the same machine, a
// lineitem-shaped table: bigint, 3 int, 4 numeric(15,2), 2 char(1), 3 date,
// char(25), char(10), varchar(44); md5 text comments, 10-42 characters.
//
//	load approaches, 2M rows read with pgconn.CopyTo through an io.Pipe
//	(accelerator BenchmarkLoad)               wall     rows/s    process CPU
//	COPY TO STDOUT into io.Discard            1.64 s   1.22M/s   0.69 s
//	Appender.AppendRow, []driver.Value/row    2.56 s   0.78M/s   2.69 s
//	chunk table function, 1 thread (*)        3.2 s    0.62M/s   3.7 s
//	chunk table function, 2 threads           1.99 s   1.01M/s   2.56 s
//
//	(*) DuckDB's calling thread spins in duckdb_execute_pending while a
//	    worker runs the single-threaded pipeline, and without read-ahead
//	    every wait for the pipe costs the locked DuckDB thread two context
//	    switches. The parallel source gives the calling thread work.
//
//	full refresh (refresh BenchmarkFullRefresh: the COPY read off the socket
//	by refresh's copyStream; ratio = refresh time / plain binary COPY into
//	io.Discard through pgconn, same run)
//	                              rows/s   ratio   process CPU  peak RSS above idle
//	2M rows, memory               1.16M/s  1.0-1.09  1.9 s      190-320 MiB
//	6M rows, memory, first load   1.09M/s  1.09    6.2 s        970 MiB
//	6M rows, memory, busy machine 0.82M/s  1.45    7.2 s        950 MiB
//	6M rows, memory,
//	  CompactEvery 256 MiB        0.51M/s  1.99    11.7 s       480 MiB
//	6M rows, file                 0.68M/s  1.53    10.1 s       420-430 MiB
//
// Arrow (build tag duckdb_arrow) was not tried: what remains is DuckDB's own
// insert, its statistics, and the cgo call per string of SetChunkValue,
// which Arrow would trade for builder appends and a tag on every build.
//
// # Memory
//
// In mode memory DuckDB keeps inserted rows uncompressed until a checkpoint
// (about 170 bytes per lineitem row), so a load peaks at the table's
// uncompressed size. After the swap a background compaction (compact.go, a
// CHECKPOINT of the dataset's database, which is attached with COMPRESS)
// brings the table to its compressed size: 6M lineitem rows from 970 MiB to
// 166 MiB, in about 1.3 s of CPU per 2M rows. Options.CompactEvery compacts
// during the load too, bounding the peak at the price shown above. In mode
// file DuckDB compresses row groups as it writes them: bounded memory, more
// CPU during the load.

package accelerator

// Package refresh schedules and runs dataset refreshes: intervals, cron,
// jitter, on-demand requests, retries with backoff, and the refresh modes of
// the data-refresh spec (full, append, changes, caching, snapshot, and
// disabled), plus retention checks and acceleration snapshots.
//
// refresh may import catalog, accelerator, snapshot and pgdef only; it must
// never import proxy or planner.
//
// # Refresh modes (acceleration.refresh_mode)
//
// Each mode is one type (modes.go: fullMode, appendMode, changesMode,
// cachingMode, snapshotMode, disabledMode) that says how a dataset of it
// lives, what one refresh of it does, whether a full reload applies and
// whether stored data waits for the source; modeOf picks a dataset's.
//
//   - full, the default: each refresh reads the table through a binary COPY
//     and swaps the new table in (see "A full refresh").
//   - append: each refresh reads the rows past the stored ones by
//     time_column and merges them in (timefmt.go; see "Append refreshes").
//     TriggerFull and RefreshFull ask for a full reload.
//   - changes: no schedule; logical replication keeps the acceleration in
//     step with the origin (see "Change data capture").
//   - caching (caching.go): nothing is loaded and the dataset is ready at
//     registration. The proxy answers its reads from the origin and keeps
//     the answers in the results cache for refresh_check_interval. No
//     schedule runs; an on-demand refresh moves the dataset's data
//     generation, which drops the answers kept, and succeeds at once.
//   - snapshot (snapshots.go): the source is never read. Each refresh, on
//     the refresh_check_interval schedule (default 1m) and at start, polls
//     the snapshot store's metadata and swaps in a strictly newer current
//     snapshot (see "Snapshots").
//   - disabled: the acceleration is attached (a file-mode dataset serves
//     what its file holds) and nothing refreshes it; on-demand refreshes
//     are refused (ErrNoOnDemand).
//
// caching and snapshot datasets have no full reload (ErrNoFullReload).
//
// # The scheduler (runner.go: the Runner, its tasks and on-demand
// refreshes; scheduler.go: each dataset's loop; schedule.go: when;
// execution.go: one refresh and its outcome; retention.go)
//
// A Runner has one goroutine per enabled dataset:
//
//  1. Attach the dataset's acceleration. A file-mode dataset whose file holds
//     a table and a checkpoint (last refresh, rows, columns, refresh_sql,
//     primary key) is published at once: Loaded, status ready. An append
//     or changes dataset is not (waitsForSource): it serves once it has
//     caught up with its source in this process (its first append; its
//     stream's catch-up, step 4 of "Change data capture"). Before the
//     attach, a dataset may be bootstrapped from a snapshot (see
//     "Snapshots").
//  2. Decide the first refresh. With stored data and refresh_on_startup:
//     auto, the schedule continues from the stored last refresh (at once
//     when overdue; never without a schedule), unless refresh_sql changed
//     since. Otherwise at once, after the initial jitter (0 to
//     refresh_jitter_max). When stored data serves and no refresh runs at
//     once, the source is connected to in the background first (reach.go):
//     status Error after a failed attempt, Ready once it answers; retried
//     with the backoff until it answers, the refresh falls due, or an
//     on-demand request comes; the spec's warning at most every five
//     minutes; a configuration failure (credentials, TLS) an error at once,
//     not retried.
//  3. Refresh on the schedule: every refresh_check_interval ± jitter, or at
//     the times of refresh_cron (then up to refresh_jitter_max later), or
//     never (on demand only). next_refresh is published in the registry;
//     a refresh that has not succeeded keeps its due time.
//  4. On failure, classify the error (schedule.go): transient ones
//     (connection refused or reset, timeouts, the origin restarting,
//     serialization failures, exhausted resources, unknown) are retried
//     after 1, 2, 3, 5, 8 ... s (capped at 300 s, randomized ±25 %;
//     Options.Backoff changes the bounds) while
//     refresh_retry_enabled and up to refresh_retry_max_attempts retries;
//     configuration errors (credentials, TLS, a missing table or column,
//     SQL the origin rejects) are logged as errors and wait for the next
//     scheduled or on-demand refresh. Every failure counts in
//     dataset_acceleration_refresh_errors_total{dataset,reason}.
//
// Refreshes take a slot of a semaphore (runtime.refresh_concurrency,
// default 2). Trigger and Refresh request an on-demand refresh: a refresh
// of the dataset in progress is cancelled and replaced. TriggerFull and
// RefreshFull ask for a full reload: an append dataset's next refresh
// replaces its acceleration instead of appending (rows the source deleted
// or truncated go), retried as such until one succeeds. Time comes from a
// Clock, so tests step through cron schedules with a ManualClock.
//
// A second goroutine per dataset with retention_check_enabled runs a
// retention pass every retention_check_interval (retention.go): DELETE the
// rows older than retention_period by time_column, and those matching
// retention_sql's condition, in the acceleration. When a setting is missing
// it logs a [retention] error naming it and schedules nothing. Every load
// also applies the policy before publishing, so evicted rows never show.
//
// # Append refreshes (timefmt.go)
//
// An append refresh reads rows past max(time_column) in the acceleration
// less refresh_append_overlap (>= the start of that day for time_format:
// date), in the column's time format, plus time_partition_column >= the
// partition of the newest stored row not past that bound (true whatever
// the partitions' granularity). The rows are merged in one DuckDB
// transaction (accelerator.AppendMerge): with primary_key, the newest
// version of each key by time_column wins; without, rows that equal stored
// rows past the bound are not added again (EXCEPT ALL, so duplicates at
// the origin stay duplicates).
//
// # A full refresh
//
//  1. Connect to origin.dsn (application_name "pgaccel refresh").
//  2. Read the table's columns from pg_attribute and pg_type (origin.go):
//     name, type OID and typmod (a domain's base type), format_type, and the
//     element type of arrays.
//  3. Build `COPY (SELECT <cols> FROM "schema"."table" WHERE <refresh_sql's
//     WHERE> AND <time_column > now() - refresh_data_window>) TO STDOUT
//     (FORMAT binary)`. The columns are refresh_sql's (all for *); a column
//     whose type cannot be accelerated is selected as NULL, so that it is
//     still listed, as not accelerated.
//  4. Take the connection over from pgconn and stream the COPY
//     (copystream.go: the CopyData payloads read straight off the socket)
//     into accelerator.Engine.Load, which swaps the new table in.
//  5. Publish the outcome in the registry: ready with LastRefresh, Rows,
//     Columns, Generation+1; or error with the message (passwords removed)
//     while the previous acceleration, if any, keeps serving (Loaded stays).
//
// # Change data capture (changes.go, changes_batch.go, changes_slot.go, slots.go)
//
// A dataset with refresh_mode: changes has no schedule: its goroutine runs
// stream sessions (changes.go) until the runner stops.
//
//  1. A session opens a normal connection (catalog, publication) and a
//     replication connection, checks the table's replica identity (a
//     primary key that is primary_key, or REPLICA IDENTITY FULL; a table
//     with neither is never published), makes sure the publication exists
//     and holds the table (created before the slot), and reads the slot.
//  2. It resumes when the stored checkpoint's replication state names this
//     slot and system and the slot exists, is not lost, and has not
//     confirmed past the stored position; otherwise it rebuilds: the slot
//     is (re)created with EXPORT_SNAPSHOT, the table copied under that
//     snapshot on another connection while the replication connection
//     stays idle, and swapped in with the consistent point as its position.
//  3. START_REPLICATION (proto_version 1, binary tuples) from that position.
//     Transactions that committed before it are skipped. Row changes are
//     coalesced per key (changes_batch.go: last change wins; unchanged
//     TOAST values come from the key's earlier change in the batch, else
//     from the stored row; a key change deletes the old key and puts the
//     new one) and applied by accelerator.Applier: complete transactions
//     wait up to 100 ms, and a batch past 20,000 rows or 16 MiB is applied
//     into the open DuckDB transaction even inside a large origin
//     transaction; the DuckDB commit, with the new position in the
//     checkpoint, comes at an origin commit. Only then is the position
//     acknowledged (write = flush = apply). With nothing in flight, a
//     keepalive's WAL end moves the position, written to the checkpoint at
//     most every 10 s. Status updates go out at least every 10 s, every
//     second (asking for a reply) until ready.
//  4. Ready (Loaded, status ready) once the stream is past the origin's WAL
//     position at its start with nothing left to apply, or a batch applied
//     within pg_replication_ready_lag of its commit.
//  5. A Relation message is compared with the acceleration's columns: a
//     nullable column without a default joins it (ALTER TABLE ADD COLUMN);
//     a missing or retyped column rebuilds (a generated one is a
//     configuration error: logical replication never sends it).
//  6. Errors reconnect with the Fibonacci backoff (the acceleration keeps
//     serving); errors that retrying cannot fix wait for an on-demand
//     refresh, which rebuilds.
//
// Slot names are pgaccel_<instance id>_<dataset>, the instance id kept in
// runtime.data_dir. slots.go lists slots named like that, flags those of
// this instance that no dataset uses (logged, and counted in a metric
// every minute) and drops one on request.
//
// # Snapshots (snapshots.go)
//
// With a snapshot store (Options.Snapshots, from snapshots.location) and a
// file-mode dataset whose acceleration.snapshots is not disabled:
//
//   - bootstrap (enabled, bootstrap_only): before the first attach, a
//     dataset with no file yet gets the location's current snapshot
//     (snapshot.Bootstrap) instead of a first load from the origin; on
//     failure bootstrap_on_failure_behavior retries, falls back to older
//     snapshots, or lets the dataset load from its source;
//   - publish (enabled, create_only; not for refresh_mode snapshot): after
//     each completed refresh (snapshots_trigger: refresh_complete), or
//     every snapshots_trigger_threshold (time_interval, the default for
//     changes datasets), a snapshot is made and uploaded in the background
//     (snapshot.Create), unless nothing changed since the current one;
//   - follow (refresh_mode snapshot): the metadata is read with the ETag of
//     the last poll; a strictly newer current snapshot is checked against
//     the config and the columns served, downloaded (snapshot.Fetch) and
//     swapped in (accelerator.ReplaceFrom) while queries go on.
//
// Failures show in the dataset's status (snapshots.error) and are counted
// in metrics.
//
// Logs carry the dataset name; a failed refresh is a warning.
package refresh

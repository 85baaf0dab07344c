// Package refresh schedules and runs dataset refreshes: intervals, cron,
// jitter, on-demand requests, retries with backoff, and the refresh modes of
// the data-refresh spec (full, append, changes, caching, snapshot), plus
// retention checks.
//
// refresh may import catalog and accelerator; it must never import proxy or
// planner.
//
// # The scheduler (runner.go, schedule.go)
//
// A Runner has one goroutine per enabled dataset:
//
//  1. Attach the dataset's acceleration. A file-mode dataset whose file holds
//     a table and a checkpoint (last refresh, rows, columns, refresh_sql,
//     primary key) is published at once: Loaded, status ready. An append
//     dataset is not: it is ready after its first append after start.
//  2. Decide the first refresh. With stored data and refresh_on_startup:
//     auto, the schedule continues from the stored last refresh (at once
//     when overdue; never without a schedule), unless refresh_sql changed
//     since. Otherwise at once, after the initial jitter (0 to
//     refresh_jitter_max).
//  3. Refresh on the schedule: every refresh_check_interval ± jitter, or at
//     the times of refresh_cron (then up to refresh_jitter_max later), or
//     never (on demand only). next_refresh is published in the registry;
//     a refresh that has not succeeded keeps its due time.
//  4. On failure, classify the error (schedule.go): transient ones
//     (connection refused or reset, timeouts, the origin restarting,
//     serialization failures, exhausted resources, unknown) are retried
//     after 1, 2, 3, 5, 8 ... s (capped at 300 s, randomized ±25 %) while
//     refresh_retry_enabled and up to refresh_retry_max_attempts retries;
//     configuration errors (credentials, TLS, a missing table or column,
//     SQL the origin rejects) are logged as errors and wait for the next
//     scheduled or on-demand refresh. Every failure counts in
//     dataset_acceleration_refresh_errors_total{dataset,reason}.
//
// Refreshes take a slot of a semaphore (runtime.refresh_concurrency,
// default 2). Trigger and Refresh request an on-demand refresh: a refresh
// of the dataset in progress is cancelled and replaced. Time comes from a
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
// Logs carry the dataset name; a failed refresh is a warning.
package refresh

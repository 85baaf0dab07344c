// Package refresh schedules and runs dataset refreshes: intervals, cron,
// jitter, on-demand requests, retries with backoff, and the refresh modes of
// the data-refresh spec (full, append, changes, caching, snapshot), plus
// retention checks.
//
// refresh may import catalog and accelerator; it must never import proxy or
// planner.
//
// # What exists now
//
// A Runner (runner.go) with one goroutine per enabled dataset:
//
//  1. Attach the dataset's acceleration. A file-mode dataset whose file holds
//     a table is published at once: Loaded, status ready, its rows, columns
//     and last refresh from the file's checkpoint.
//  2. Decide the first refresh: now when there is nothing stored or
//     refresh_on_startup is always; with auto and stored data, when
//     refresh_check_interval has elapsed since the stored last refresh (never
//     without an interval), as the spec says.
//  3. Refresh every refresh_check_interval. A failed refresh is retried after
//     1 s, 2 s, 4 s ... up to 5 min (refresh_retry_enabled,
//     refresh_retry_max_attempts), never later than the next interval.
//
// Runner.Refresh runs one refresh now (the admin API's on-demand refresh);
// refreshes of one dataset never overlap. Runner.WaitReady waits for the
// first load. Every refresh is a full refresh (fullrefresh.go): other
// refresh modes log a warning and refresh in full, disabled only attaches.
// Cron, jitter, append, changes, caching, snapshots and retention are not
// implemented yet; the scheduler replaces Runner.run and keeps
// Runner.refresh, the unit that runs one refresh and publishes its outcome.
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

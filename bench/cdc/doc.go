// Command cdc measures refresh_mode: changes: how far behind the origin an
// acceleration kept by logical replication is while pgbench writes to the
// table at fixed rates, the highest rate it follows without falling
// behind, and how fast it catches up after a pause. See package bench's
// doc for the other benchmarks.
//
//	go run ./bench/cdc [-rates 1000,5000,max] [-duration 10s] [-rows 100000]
//	                   [-clients 8] [-threads 2] [-search 0]
//	                   [-catchup-ops 100000] [-bulk=true] [-mode file]
//	                   [-synchronous-commit on] [-out FILE]
//	                   [-cpuprofile FILE] [-log FILE]
//
// The recorded run:
//
//	go run ./bench/cdc -rates 1000,2000,5000,10000,max -duration 30s -search 3 -catchup-ops 500000 -out bench/RESULTS.md
//
// What one run does:
//
//  1. Starts a throwaway origin (internal/pgtest: wal_level logical,
//     fsync and synchronous_commit off) with one table, cdc_bench (id
//     bigint primary key, v int, payload text, updated_at timestamptz
//     default now()), holding -rows rows.
//  2. Starts pgaccel in-process (app.Start) with cdc_bench as a dataset
//     with refresh_mode: changes, primary_key [id], mode file, and
//     runtime.point_reads: acceleration, and waits until it is ready.
//  3. For each rate of -rates, runs pgbench against the origin directly
//     (`pgbench -n -M prepared -f script -R rate -T duration -c clients -j
//     threads -P 1`; "max" leaves out -R) with a script of one change per
//     transaction: 50% INSERT of a new id (a sequence), 35% UPDATE of a
//     random row of the first half of the ids, 15% DELETE of the oldest
//     row not yet deleted (a second sequence, starting at the middle of
//     the ids, so that it always finds one). Every transaction changes
//     exactly one row, so ops/s is pgbench's TPS.
//     Meanwhile a probe inserts a marker row (negative id) at the origin
//     every -marker-every on its own connection and takes the time after
//     its COMMIT returns; a second connection, through pgaccel, asks for
//     the markers not yet seen (`SELECT id FROM cdc_bench WHERE id IN
//     (...)`, a point read that runtime.point_reads: acceleration answers
//     from DuckDB; pgaccel_statements_total checks that every probe read
//     was accelerated) within 1 ms of every move of the stream's published
//     position (Runner.Replication, read in-process: a batch's commit to
//     DuckDB moves it) and at least every -poll-every. A marker's lag is
//     from its COMMIT returning at the origin to the return of the first
//     probe read that saw it through the proxy. Each probe read's text is
//     new (its IN list ends with an id no row has), see uniqueBase.
//     pgbench's and the markers' sessions use -synchronous-commit (on,
//     Postgres's default; the harness origin's is off, and logical
//     decoding sends a commit only once its WAL is flushed, so with off
//     the WAL writer's 200 ms cycle would be part of the lag).
//     The stream's own view (dataset_replication_lag_ms, sampled every
//     100 ms, and the dataset_replication_apply_lag_seconds histogram) is
//     recorded next to it. After pgbench ends, one more marker shows how
//     long the stream takes to drain, and the table's aggregates through
//     pgaccel (accelerated) are compared with the origin's.
//     A rate is sustained when pgbench kept it (at least 95% of the
//     target) and the lag did not grow: the median marker lag of the last
//     third of the run is no more than 200 ms or 25% above the first
//     third's. -search N adds N bisection steps between the highest
//     sustained rate and the lowest one that was not.
//  4. Catch-up: pgaccel shuts down, pgbench writes -catchup-ops changes
//     unthrottled, pgaccel starts again on the same data dir, resumes from
//     the position stored in its acceleration and applies the backlog; the
//     rate is the backlog's rows over the time from the stream's resume
//     (its log line) to the last of them applied (the stream's counters,
//     polled every 10 ms). With -bulk, one UPDATE of every row in a
//     single transaction is timed the same way, from its COMMIT.
//  5. Prints a Markdown report (machine, load averages, per-rate lag
//     percentiles and trend, highest sustained rate, catch-up rows/s,
//     against the targets and the published anchors); -out
//     appends it to a file under "## Change data capture (refresh_mode:
//     changes)".
//
// Origin, pgaccel, pgbench and the probe share the machine's CPUs; the
// report records the load average and the CPU time pgaccel's process and
// the origin's walsender used in each step. -cpuprofile writes a Go CPU
// profile of the whole run (pgaccel runs in this process).
//
// It needs the PostgreSQL server binaries and pgbench (apt-get install -y
// postgresql postgresql-client) and a C compiler for DuckDB.
//
// cdc may import every pgaccel package (the origin comes from
// internal/pgtest); nothing imports it.
package main

// Package bench holds pgaccel's benchmarks. Performance is measured here and
// in `go test -bench` functions, never asserted by timed tests.
//
// Each benchmark is its own main package under bench/, run with `go run`:
//
//   - bench/passthrough measures the cost of the proxy on the path every
//     query takes when it is not accelerated: pgbench against a throwaway
//     origin Postgres directly, through pgaccel (its own process, as `pgaccel
//     run` runs it; no acceleration)
//     and through pgbouncer (session pool mode), side by side. Runs are
//     interleaved (round by round, workload by workload, target by target,
//     the target order rotating each round) so that machine drift hits all
//     three alike; after each run that writes (TPC-B) the origin is vacuumed
//     and checkpointed, so that the run after it does not pay for it
//     (-no-settle skips that; -control runs an A/A check of two identical
//     pgaccel processes). The report gives the median of the rounds:
//
//     go run ./bench/passthrough -scale 10 -duration 10s -rounds 3 -out /tmp/pt.md
//
//     It needs the PostgreSQL server and pgbench (apt-get install -y
//     postgresql postgresql-client) and pgbouncer (apt-get install -y
//     pgbouncer); it installs nothing itself. Besides TPS and latency it
//     reports each proxy's own CPU time per transaction, which is much less
//     sensitive to a busy shared machine than TPS. -cpuprofile writes a Go
//     CPU profile of the pgaccel process; it does not see the runtime's
//     sysmon thread, so for the whole picture
//     use `perf record -g -p <pid>` as well. -out replaces the
//     "## Pass-through (pgbench)" section of a results file and keeps the
//     other sections.
//
//   - bench/tpch measures accelerated reads: TPC-H data generated offline
//     (go-tpc's dbgen port), loaded into a throwaway origin, then each query
//     checked equal to the origin's answer and timed on the origin, through
//     pgaccel and on bare DuckDB, interleaved; plus the full refresh of
//     lineitem against a plain binary COPY and the peak memory during it:
//
//     go run ./bench/tpch -sf 1 -rounds 3 -out bench/RESULTS.md
//
//   - bench/soak runs pgaccel in front of tables under steady writes for a
//     long time (a changes dataset at 2,000 updates/s, one with REPLICA
//     IDENTITY FULL and TOASTed text, a full dataset refreshed every 5 s,
//     an append dataset with a 60 s retention window, point reads), restarts
//     it halfway, and samples every 15 s each dataset's file, the RSS,
//     DuckDB's memory, the change stream's lag and the point index's hit
//     rate; at the end it compares each file with a fresh copy of its rows
//     and each dataset's checksum with the origin's:
//
//     go run ./bench/soak -duration 30m -out bench/RESULTS.md
//
// Results with the exact command, date and machine are kept in RESULTS.md
// next to this file. What the benchmarks share (their main's scaffolding,
// writing to RESULTS.md, the machine description, the simple-protocol
// client, metric sums, finding pgbench and reading its summary) is in
// bench/internal/benchutil.
//
// bench may import every pgaccel package (the origin comes from
// internal/pgtest); nothing imports bench.
package bench

// Command tpch measures pgaccel's accelerated reads on TPC-H: the same
// queries straight on the origin Postgres, through pgaccel, and on bare
// DuckDB, in one run, plus the cost of a full refresh. See package bench's
// doc for the other benchmarks.
//
//	go run ./bench/tpch [-sf 0.1] [-rounds 3] [-refresh-rounds 3]
//	                    [-queries all|1,3,6] [-timeout 15m] [-out FILE]
//
// From make, with the Makefile's BENCHARGS convention:
//
//	go run ./bench/tpch $(BENCHARGS)                       # quick: SF 0.1
//	go run ./bench/tpch -sf 1 -rounds 3 -out bench/RESULTS.md  # the recorded run
//
// What one run does:
//
//  1. Starts a throwaway origin (internal/pgtest) and generates TPC-H
//     offline and deterministically with go-tpc v1.0.7's tpch/dbgen (a port
//     of TPC-H dbgen 2.4; a scale factor below 1 is made as dbgen makes it,
//     see scale.go), streaming every row straight into `COPY ... FROM STDIN`.
//     The generator runs in a child process of the benchmark (the hidden
//     flag -generate-child), so that dbgen's 300 MB text pool stays out of
//     the RSS measured during refreshes.
//     The tables have Postgres types the accelerator keeps exactly
//     (numeric(15,2), char(n), varchar(n), date, integer, bigint); then come
//     the primary keys, one index on lineitem (l_partkey, l_suppkey) without
//     which Postgres takes hours over Q17 and Q20, VACUUM ANALYZE, and
//     SELECT granted to the role the clients use, pgtest.AppUser.
//  2. Starts pgaccel in-process (app.Start) with the eight tables as
//     memory-mode datasets and waits until they are loaded.
//  3. Times -refresh-rounds full refreshes of lineitem (Runner.Refresh)
//     against a plain `COPY lineitem TO STDOUT (FORMAT binary)` into
//     io.Discard, interleaved, and the process's peak RSS during each
//     refresh above its RSS just before it, after a 2 s rest (VmRSS sampled
//     every 10 ms, and VmHWM after a reset through /proc/self/clear_refs).
//  4. For each query (Q1 to Q22 with the validation parameters, in
//     Postgres's dialect): asks the planner for its decision, runs it once
//     on the origin and once through pgaccel and compares every row as
//     text, and reads from pgaccel_queries_total whether pgaccel
//     accelerated it (and from the proxy's debug log why not). Then
//     -rounds rounds of origin, pgaccel and bare DuckDB (Engine.Query with
//     the planner's rewrite), the order rotating each round.
//  5. Prints a Markdown report: machine, versions, load average, per-query
//     medians, speedups and their geometric mean, the proxy's latency over
//     bare DuckDB, the refresh ratio and memory, against the targets (15×
//     geometric-mean speedup, refresh ≤ 1.3× COPY, < 1 GiB over idle).
//     -out appends it to a file under "## TPC-H (accelerated reads)".
//
// It also runs Q1 once more as a hand-written DuckDB query whose avg is
// Postgres's exact numeric avg (exactavg.go), to show what Q1 would cost
// if the planner rewrote avg that way.
//
// It needs the PostgreSQL server binaries (apt-get install -y postgresql)
// and a C compiler for DuckDB. Scale factor 1 takes a few minutes to
// generate and load and about 3 GB of disk for the origin. The machine is
// best left otherwise idle: origin, pgaccel and the client share it, and
// the report records the load average.
//
// tpch may import every pgaccel package (the origin comes from
// internal/pgtest); nothing imports it.
package main

// Package tpchdata loads TPC-H at a scale factor into a harness origin
// (go-tpc's dbgen in a child process, streamed into COPY), for the
// benchmarks that need it (bench/tpch, bench/snapshots).
package tpchdata

// Package integration holds pgaccel's end-to-end tests: a real origin
// Postgres started by the internal/pgtest harness, the proxy in front of it,
// and real clients (pgx, psql, and programs on other drivers: asyncpg,
// psycopg, pgjdbc) talking to both, compared message for message.
//
// The throwaway Postgres harness lives in internal/pgtest (it moved there
// from integration/pgtest), so that the tests of other packages, the
// benchmarks and `pgaccel demo` start their origin with it too. The
// subpackages s3test (a throwaway S3-compatible server) and tcprelay (a TCP
// relay that can stall a connection part-way) are test harnesses as well,
// which other packages' tests and bench/snapshots import; corpora holds
// the corpora of read statements the tests and the benchmarks run.
//
// integration may import every pgaccel package; nothing imports it.
package integration

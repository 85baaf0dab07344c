// Package pgtest starts a throwaway real PostgreSQL for integration tests,
// benchmarks and the `pgaccel demo` command.
//
// Start finds the server binaries (`pg_config --bindir`, else the highest
// /usr/lib/postgresql/*/bin, else initdb on PATH; if there are none the error
// says to run `apt-get update && apt-get install -y postgresql`), runs initdb
// into a new directory under os.TempDir (--no-sync, UTF8, C locale), and
// starts the server with `pg_ctl -w start` on a free loopback port (a new
// port is picked if another process takes it first). The server listens on
// 127.0.0.1 and on a unix socket in the temp dir, logs to postgres.log there,
// runs with wal_level=logical, 10 WAL senders and slots, 300 connections and
// no durability (fsync, synchronous_commit and full_page_writes off).
//
// Authentication: through the socket everyone is trusted (bootstrap uses the
// initdb superuser "postgres" that way). Over TCP trustuser is trusted,
// md5user uses MD5 and every other role SCRAM-SHA-256, for normal and
// replication connections alike. Start then creates the superuser pgaccel
// (random password, Server.SuperPassword), app / app-pass, md5user / md5-pass
// (stored as MD5), trustuser (no password), noaccess / noaccess-pass, and the
// database pgaccel_test owned by app. The constants in bootstrap.go name them.
//
// When the process is root (as in containers), initdb, pg_ctl and postgres,
// which refuse to run as root, run as the OS user "postgres"; the temp dir is
// chowned to it, and every parent of it must be world-traversable.
//
// If PGACCEL_TEST_ORIGIN_DSN is set, Start starts nothing and returns an
// External server described by that DSN, creating the test roles and
// database there if they are missing (existing ones are left as they are).
// That server must itself have wal_level=logical, room for 300 connections
// and the pg_hba.conf rules above. Stop never touches an External server.
//
// # Not leaving servers behind
//
// A postmaster started by pg_ctl runs in its own session and does not die
// with the process that started it, so cleanup has three layers:
//
//  1. Server.Stop (`pg_ctl stop -m fast`, then remove the temp dir), which
//     RunMain defers and also calls on SIGINT and SIGTERM.
//  2. A watchdog: Start launches a small /bin/sh, in its own process group,
//     whose stdin is a pipe whose only write end this process holds. When this
//     process exits for any reason, including a panicking test, a go test
//     -timeout and SIGKILL, the kernel closes the pipe; the watchdog sees EOF,
//     runs `pg_ctl stop -m immediate` and removes the temp dir.
//  3. PostgreSQL itself shuts down within about a minute when its
//     postmaster.pid disappears, so removing a stale pgtest-* dir by hand
//     also ends its server.
//
// pgtest is a normal package so that cmd/pgaccel and bench can use it; only
// main.go (RunMain) imports testing. It must never import another pgaccel
// package.
package pgtest

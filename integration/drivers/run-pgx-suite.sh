#!/usr/bin/env bash
# Runs pgx's own test suite (every package of github.com/jackc/pgx/v5, from
# the Go module cache: nothing is fetched) once directly against a throwaway
# origin and once through pgaccel with a dataset configured, and compares.
# Exits non-zero when a test fails through pgaccel that passes directly.
#
#   integration/drivers/run-pgx-suite.sh [go test flags, e.g. -run TestConnect]
#
# The environment is what pgx's CI sets up (ci/setup_test.bash,
# testsetup/postgresql_setup.sql) without TLS, unix sockets and OAuth: the
# tests that need those skip on both runs. Results and logs stay in the
# work directory it prints.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if ! go list -m github.com/jackc/pgx/v5 >/dev/null 2>&1; then
	echo "pgx is not in the module graph of $repo" >&2
	exit 1
fi
start_env
echo "work directory: $work"

run_suite() {
	local name=$1 port=$2
	shift 2
	local conn="host=127.0.0.1 port=$port dbname=$DATABASE"
	echo "running pgx's tests against $name (port $port) ..."
	(cd "$repo" &&
		PGX_TEST_DATABASE="$conn user=pgx_md5 password=secret" \
		PGX_TEST_TCP_CONN_STRING="$conn user=pgx_md5 password=secret" \
		PGX_TEST_MD5_PASSWORD_CONN_STRING="$conn user=pgx_md5 password=secret" \
		PGX_TEST_PLAIN_PASSWORD_CONN_STRING="$conn user=pgx_pw password=secret" \
		PGX_TEST_SCRAM_PASSWORD_CONN_STRING="$conn user=pgx_scram password=secret channel_binding=disable" \
		GOPROXY=off GOFLAGS=-mod=readonly \
		go test -count=1 -p 1 -timeout 60m -v "$@" github.com/jackc/pgx/v5/... >"$work/$name.log" 2>&1) || true
	sed -nE 's/^ *--- (PASS|FAIL|SKIP): ([^ ]+).*/\1 \2/p' "$work/$name.log" >"$work/$name.results"
	if grep -qE '^(FAIL|panic:).*\[(build|setup) failed\]|^panic: ' "$work/$name.log"; then
		echo "pgx's tests did not run cleanly against $name: see $work/$name.log" >&2
		if grep -q 'module lookup disabled by GOPROXY=off' "$work/$name.log"; then
			echo "pgx's test dependencies are not in the module cache: run go list -test -deps github.com/jackc/pgx/v5/... in $repo" >&2
		fi
		unclean=1
	fi
}

unclean=0
run_suite direct "$DIRECT_PORT" "$@"
run_suite pgaccel "$PROXY_PORT" "$@"
compare "$work/direct.results" "$work/pgaccel.results"
if [ "$unclean" -ne 0 ]; then
	echo "a run did not build or set up cleanly: the comparison above is incomplete" >&2
	exit 1
fi

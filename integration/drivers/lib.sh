# Shared by the driver-suite scripts: start the environment (main.go) and
# compare two runs' results. Sourced, not run.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# start_env starts the origin and pgaccel (go run of this directory) in the
# background and waits for their ports; stop_env ends them.
start_env() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/pgaccel-drivers.XXXXXX")
	mkfifo "$work/stdin"
	(cd "$repo" && go build -o "$work/drivers" ./integration/drivers) || exit 1
	"$work/drivers" -env "$work/env" <"$work/stdin" 2>"$work/drivers.log" &
	drivers_pid=$!
	exec 9>"$work/stdin" # the environment lives while this is open
	for _ in $(seq 1 300); do
		[ -s "$work/env" ] && break
		if ! kill -0 "$drivers_pid" 2>/dev/null; then
			cat "$work/drivers.log" >&2
			echo "the driver environment did not start" >&2
			exit 1
		fi
		sleep 0.5
	done
	# shellcheck disable=SC1091
	. "$work/env"
	trap stop_env EXIT
}

stop_env() {
	exec 9>&-
	wait "$drivers_pid" 2>/dev/null
}

# compare DIRECT PROXY: both are files of "PASS name" / "FAIL name" lines;
# prints the counts and the failures through pgaccel the origin does not
# have, and fails if there is one.
compare() {
	local direct=$1 proxy=$2
	printf '%-8s %6s %6s %6s\n' "" pass fail skip
	for f in "$direct" "$proxy"; do
		printf '%-8s %6d %6d %6d\n' "$(basename "$f" .results)" \
			"$(grep -c '^PASS ' "$f" || true)" "$(grep -c '^FAIL ' "$f" || true)" "$(grep -c '^SKIP ' "$f" || true)"
	done
	if grep -q '^[A-Z]* Test[^ ]*/' "$direct"; then
		echo "of which top-level tests (no subtests):"
		for f in "$direct" "$proxy"; do
			printf '%-8s %6d %6d %6d\n' "$(basename "$f" .results)" \
				"$(grep -c '^PASS [^/]*$' "$f" || true)" "$(grep -c '^FAIL [^/]*$' "$f" || true)" "$(grep -c '^SKIP [^/]*$' "$f" || true)"
		done
	fi
	{ grep '^FAIL ' "$direct" || true; } | sort >"$work/fail.direct"
	{ grep '^FAIL ' "$proxy" || true; } | sort >"$work/fail.proxy"
	local only
	only=$(comm -13 "$work/fail.direct" "$work/fail.proxy")
	if [ -n "$(cat "$work/fail.direct")" ]; then
		echo "failing directly against the origin too:"
		sed 's/^/  /' "$work/fail.direct"
	fi
	if [ -n "$only" ]; then
		echo "failing only through pgaccel:"
		echo "$only" | sed 's/^/  /'
		return 1
	fi
	echo "no failure through pgaccel that the origin does not have"
}

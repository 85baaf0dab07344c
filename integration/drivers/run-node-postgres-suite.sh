#!/usr/bin/env bash
# Runs node-postgres's integration tests (packages/pg/test/integration,
# each *-tests.js file on its own, as its Makefile's test-integration does)
# once directly against a throwaway origin and once through pgaccel with a
# dataset configured, and compares file by file. Exits non-zero when a
# file fails through pgaccel that passes directly.
#
#   NODE_POSTGRES_SRC=DIR integration/drivers/run-node-postgres-suite.sh
#
# NODE_POSTGRES_SRC is a node-postgres checkout or a bare git directory of
# one (default: /work/.mirror/brianc+node-postgres/repo); nothing of it is
# kept in this repository. Its dependencies come from the npm registry
# (npm install, once per node-postgres commit, cached under
# ${XDG_CACHE_HOME:-~/.cache}/pgaccel-drivers). The environment is what
# node-postgres's CI sets (.github/workflows/ci.yml): PG* variables for the
# postgres superuser, PGTESTNOSSL, and its SCRAM roles.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=${NODE_POSTGRES_SRC:-/work/.mirror/brianc+node-postgres/repo}
for tool in node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "$tool is missing: apt-get update && apt-get install -y nodejs npm" >&2
		exit 1
	fi
done
if [ -d "$src/packages/pg/test" ]; then
	commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo worktree)
elif commit=$(git --git-dir="$src" rev-parse HEAD 2>/dev/null); then
	:
else
	echo "NODE_POSTGRES_SRC=$src is no node-postgres checkout: git clone https://github.com/brianc/node-postgres and point NODE_POSTGRES_SRC at it" >&2
	exit 1
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/pgaccel-drivers/node-postgres-$commit
if [ ! -d "$cache/node_modules" ]; then
	rm -rf "$cache" && mkdir -p "$cache"
	if [ -d "$src/packages/pg/test" ]; then
		cp -r "$src/packages/pg/." "$cache/"
	else
		git --git-dir="$src" archive HEAD packages/pg | tar -x -C "$cache" --strip-components=2
	fi
	# The package's runtime and test dependencies, without the Cloudflare
	# worker tooling (its worker tests are not run).
	deps=$(cd "$cache" && node -e '
		const p = require("./package.json");
		const d = Object.assign({}, p.dependencies, p.devDependencies);
		console.log(Object.entries(d).filter(([k]) => !/cloudflare|vitest|wrangler|typescript/.test(k)).map(([k, v]) => k + "@" + v).join(" "));')
	mv "$cache/package.json" "$cache/package.json.orig"
	echo '{"name": "pg-suite", "private": true}' >"$cache/package.json"
	echo "installing node-postgres's dependencies: $deps"
	# shellcheck disable=SC2086
	(cd "$cache" && npm install --no-save --no-package-lock --no-audit --no-fund --ignore-scripts $deps >"$cache/npm-install.log" 2>&1) || {
		cat "$cache/npm-install.log" >&2
		rm -rf "$cache/node_modules"
		exit 1
	}
fi

start_env
echo "work directory: $work (node-postgres $commit)"

run_suite() {
	local name=$1 port=$2
	echo "running node-postgres's integration tests against $name (port $port) ..."
	: >"$work/$name.results"
	mkdir -p "$work/$name"
	(cd "$cache" && find test/integration -name '*-tests.js' | sort) | while read -r f; do
		log="$work/$name/$(echo "$f" | tr / _).log"
		if (cd "$cache" &&
			PGHOST=127.0.0.1 PGPORT=$port PGUSER=postgres PGPASSWORD=postgres PGDATABASE=$DATABASE \
			PGTESTNOSSL=true \
			SCRAM_TEST_PGUSER=scram_test SCRAM_TEST_PGPASSWORD=test4scram \
			SCRAM_TEST_PGUSER_UNICODE=scram_unicode_test SCRAM_TEST_PGPASSWORD_UNICODE=$'IX-\u2168' \
			timeout 300 node "$f" >"$log" 2>&1); then
			echo "PASS $f" >>"$work/$name.results"
		else
			echo "FAIL $f" >>"$work/$name.results"
		fi
	done
}

run_suite direct "$DIRECT_PORT"
run_suite pgaccel "$PROXY_PORT"
compare "$work/direct.results" "$work/pgaccel.results"

#!/usr/bin/env bash
# tests/conformance/run.sh: run third-party client conformance tests
# against heurekad.
#
# Installs eureka-js-client (pinned in package.json / package-lock.json) into
# tests/conformance/node_modules when it is missing, then for each of
# conformance.js, interop-client.js, cluster.js and auth.js that exists:
# starts a fresh heurekad on 127.0.0.1 (ephemeral port) and runs `node
# SCRIPT` with
#
#	HEUREKA_URL   http://127.0.0.1:PORT/eureka/ of that server
#	HEUREKA_HOST, HEUREKA_PORT
#	HEUREKAD, HEUREKA, HEUREKA_EXAMPLE   binaries (for scripts that start
#	              their own servers or clients)
#
# Prints "CONFORMANCE-SUMMARY pass=N fail=M" last (read by ./quickstart) and
# exits non-zero if any script failed. HEUREKAD must point at the built
# server (./quickstart test sets it; make check sets it for the integration
# tests). Each script is bounded by CONFORMANCE_TIMEOUT seconds (300).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
: "${HEUREKAD:=$TOP/build/server/heurekad}"
: "${HEUREKA:=$(dirname "$(dirname "$HEUREKAD")")/client/heureka}"
: "${HEUREKA_EXAMPLE:=$(dirname "$(dirname "$HEUREKAD")")/client/examples/hello}"
: "${CONFORMANCE_TIMEOUT:=300}"
export HEUREKAD HEUREKA HEUREKA_EXAMPLE

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "conformance: node and npm are required (apt-get install nodejs npm)" >&2
	echo "CONFORMANCE-SUMMARY pass=0 fail=1"
	exit 1
fi

if [ ! -f "$HERE/node_modules/eureka-js-client/package.json" ]; then
	echo "conformance: installing eureka-js-client into $HERE/node_modules"
	# --ignore-scripts: nothing may download binaries or run install hooks.
	if [ -f "$HERE/package-lock.json" ]; then
		(cd "$HERE" && npm ci --no-audit --no-fund --ignore-scripts)
	else
		(cd "$HERE" && npm install --no-audit --no-fund --ignore-scripts)
	fi || {
		echo "conformance: npm install failed" >&2
		echo "CONFORMANCE-SUMMARY pass=0 fail=1"
		exit 1
	}
fi

# lib.sh re-execs under bash, starts servers, cleans up at exit.
# shellcheck source=../integration/lib.sh
. "$HERE/../integration/lib.sh"
set +e

pass=0
failn=0
failed=""
n=0
for script in conformance.js interop-client.js cluster.js auth.js; do
	[ -f "$HERE/$script" ] || continue
	n=$((n + 1))
	name=srv$n
	echo "=== conformance: $script"
	# A server that does not start ends the run (lib.sh prints its log).
	hk_start "$name"
	eval "url=\${HK_URL_$name}"
	eval "port=\${HK_PORT_$name}"
	(cd "$HERE" && HEUREKA_URL=$url HEUREKA_HOST=127.0.0.1 HEUREKA_PORT=$port \
	    timeout "$CONFORMANCE_TIMEOUT" node "$HERE/$script")
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "PASS: $script"
	else
		failn=$((failn + 1))
		failed="$failed $script"
		[ "$rc" -ne 124 ] || echo "FAIL: $script: timed out after ${CONFORMANCE_TIMEOUT}s" >&2
		echo "FAIL: $script (exit $rc); server log:" >&2
		tail -n 60 "$HK_ROOT/$name.log" >&2 || true
	fi
	hk_kill "$name" >/dev/null 2>&1
done

[ -z "$failed" ] || echo "conformance: failed:$failed" >&2
echo "CONFORMANCE-SUMMARY pass=$pass fail=$failn"
[ "$failn" -eq 0 ]

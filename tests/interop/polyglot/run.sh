#!/usr/bin/env bash
# tests/interop/polyglot/run.sh: the Python and Go Eureka clients against
# heurekad.
#
#	tests/interop/polyglot/run.sh [python] [go]     (default: both)
#
# Sets up each client once, then starts a fresh heurekad on 127.0.0.1
# (ephemeral port, tests/integration/lib.sh) per client and runs its test
# program with HEUREKA_URL=http://127.0.0.1:PORT/eureka/:
#
#	python  py-eureka-client, pinned in tests/interop/python/requirements.txt,
#	        pip-installed into a venv ($INTEROP_WORK/venv; rebuilt when
#	        requirements.txt changes); runs tests/interop/python/interop_test.py
#	go      github.com/hudl/fargo, pinned in tests/interop/go/go.mod and
#	        go.sum; `go build` fetches the modules through the Go module
#	        proxy into the usual module cache and builds $INTEROP_WORK/fargo-interop
#
# Each program checks its results against heurekad's REST API and prints
# "INTEROP-SUMMARY name=CLIENT pass=N fail=M"; when a set-up fails or a
# program dies before its summary, this script prints one with fail=1, so
# ./quickstart always finds a line per client. Exits non-zero if anything
# failed. HEUREKAD is the server binary (default build/server/heurekad);
# INTEROP_WORK defaults to the interop/ folder of that build; each program
# is bounded by INTEROP_TIMEOUT seconds (120).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
: "${HEUREKAD:=$TOP/build/server/heurekad}"
: "${INTEROP_WORK:=$(dirname "$(dirname "$HEUREKAD")")/interop}"
: "${INTEROP_TIMEOUT:=120}"
export HEUREKAD

clients=${*:-python go}
mkdir -p "$INTEROP_WORK"
INTEROP_WORK=$(cd "$INTEROP_WORK" && pwd)

# Create the venv and install the pinned requirements unless the venv
# already holds exactly this requirements.txt.
setup_python()
{
	local req=$TOP/tests/interop/python/requirements.txt venv=$INTEROP_WORK/venv py
	if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/requirements.txt"; then
		return 0
	fi
	py=$(command -v /usr/bin/python3 || command -v python3) || {
		echo "interop: python3 is required" >&2
		return 1
	}
	echo "interop: creating $venv and installing $(grep -c '==' "$req") pinned packages"
	rm -rf "$venv"
	"$py" -m venv "$venv" || {
		echo "interop: '$py -m venv' failed (Debian: apt-get install python3-venv)" >&2
		return 1
	}
	"$venv/bin/pip" install -q --disable-pip-version-check --no-input \
	    -r "$req" || return 1
	cp "$req" "$venv/requirements.txt"
}

# Build the fargo test program (go build downloads what go.sum pins).
setup_go()
{
	command -v go >/dev/null 2>&1 || {
		echo "interop: go is required (Debian: apt-get install golang-go)" >&2
		return 1
	}
	(cd "$TOP/tests/interop/go" && go build -o "$INTEROP_WORK/fargo-interop" .)
}

# Run one client's program against a fresh heurekad; prints its summary
# (or a failing one); returns non-zero on failure.
run_client()
{
	local name=$1 rc out
	shift
	echo "=== interop: $name"
	hk_start "$name"
	eval "url=\${HK_URL_$name}"
	out=$HK_ROOT/$name.out
	HEUREKA_URL=$url timeout "$INTEROP_TIMEOUT" "$@" >"$out" 2>&1
	rc=$?
	grep -v '^INTEROP-SUMMARY' "$out"
	[ "$rc" -ne 124 ] || echo "FAIL: $name: timed out after ${INTEROP_TIMEOUT}s"
	if [ "$rc" -ne 0 ]; then
		echo "--- $name: exit $rc; server log:" >&2
		tail -n 40 "$HK_ROOT/$name.log" >&2 || true
	fi
	hk_stop "$name" || {
		echo "FAIL: $name: heurekad did not stop cleanly (exit $HK_RC)"
		rc=1
	}
	if grep -q "^INTEROP-SUMMARY name=$name " "$out"; then
		if [ "$rc" -ne 0 ] && grep -q "^INTEROP-SUMMARY name=$name .*fail=0$" "$out"; then
			echo "INTEROP-SUMMARY name=$name pass=0 fail=1"
		else
			grep "^INTEROP-SUMMARY name=$name " "$out" | tail -n 1
		fi
	else
		echo "INTEROP-SUMMARY name=$name pass=0 fail=1"
		rc=1
	fi
	return "$rc"
}

# lib.sh re-execs under bash, starts servers, cleans up at exit.
# shellcheck source=../../integration/lib.sh
. "$TOP/tests/integration/lib.sh"
set +e

status=0
for c in $clients; do
	case "$c" in
	python)
		if setup_python; then
			run_client python "$INTEROP_WORK/venv/bin/python" \
			    "$TOP/tests/interop/python/interop_test.py" || status=1
		else
			echo "INTEROP-SUMMARY name=python pass=0 fail=1"
			status=1
		fi
		;;
	go)
		if setup_go; then
			run_client go "$INTEROP_WORK/fargo-interop" || status=1
		else
			echo "INTEROP-SUMMARY name=go pass=0 fail=1"
			status=1
		fi
		;;
	*)
		echo "interop: unknown client [$c] (python, go)" >&2
		status=1
		;;
	esac
done
exit "$status"

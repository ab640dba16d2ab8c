#!/bin/sh
# tests/integration/19-lib-stop.sh: hk_stop stops one server and nothing else.
#
# hk_stop reaps the server with a watchdog subshell that it ends once the
# server has exited. That subshell must end without running the script's
# exit trap, which would kill every other server of the script with
# SIGKILL and remove the script's work folder (logs, port files) under the
# feet of the steps that follow. The script runs with errexit off, as the
# drivers that count failures themselves do (tests/interop/polyglot/run.sh).
# Five rounds: stop one of two servers; the other must still answer and
# stop with status 0, and the work folder must still be there.
. "$(dirname "$0")/lib.sh"
set +e

for round in 1 2 3 4 5; do
	hk_start a || exit 1
	hk_start b || exit 1
	hk_stop a || exit 1
	[ -d "$HK_ROOT" ] && [ -f "$HK_ROOT/b.log" ] ||
	    fail "round $round: the work folder is gone after hk_stop a"
	assert_http 200 GET "${HK_URL_b}apps" || exit 1
	hk_alive b || exit 1
	hk_stop b || exit 1
	[ -d "$HK_ROOT" ] ||
	    fail "round $round: the work folder is gone after hk_stop b"
done
echo "19-lib-stop: ok"

#!/bin/sh
# 77-delta-churn.sh: a delta after many recent changes does not stall the
# loop while a fleet keeps registering (issue 21, "Stalls"). 200,000
# instances are registered (peer batches), then one more every 20 ms all
# along; GET apps/delta in JSON, JSON gzip and XML, each with a heartbeat
# prober on another connection. Before: each change started the sliced
# delta build over, and the fourth start ran whole in one loop turn (1 to
# 1.5 s at 200,000, heartbeats waiting as long). Now the walk covers the
# queue as it was when it began and never starts over: no turn holds
# the loop for more than a slice. The bound asserted, 500 ms, is eight
# times the longest turn measured here with the fix on a loaded machine,
# and a quarter of the turn measured without it (1,500 ms under
# AddressSanitizer, whose realloc copies a growing body: 340 ms measured
# with the fix); the server's own
# heureka_loop_lag_max_since_start_seconds is read before and after, and
# the figures are printed (MEASURE). The mechanism is checked without
# time by check_cache_sliced's test_delta_never_whole_under_churn.
. "$(dirname "$0")/lib.sh"

SF="$HK_PYTHON $(dirname "$0")/stallfetch.py"
N_APPS=200
PER=1000
BOUND_MS=500
if hk_asan; then
	BOUND_MS=1500
fi

hk_start s
U=$HK_URL_s
P=$HK_PORT_s
out=$($SF "$U" load $N_APPS $PER)
assert_eq '{"codes": {"200": 800}}' "$out" "preload of $((N_APPS * PER))"
$SF "$U" churn "$HK_ROOT/stop" >"$HK_ROOT/churn.out" &
CHURN=$!
hk_own $CHURN
# Instances the churn registered so far.
churned()
{
	hk_curl -H 'Accept: application/json' "${U}apps/CHURN" |
	    "$HK_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["application"]["instance"]))'
}
wait_until 30 hk_ge 20 churned
BAD=""
lag0=$(hk_metric heureka_loop_lag_max_since_start_seconds "$P")
for v in "json" "json-gzip" "xml"; do
	case $v in
	json) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/json") ;;
	json-gzip) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/json" "Accept-Encoding: gzip") ;;
	xml) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/xml") ;;
	esac
	lag=$(hk_metric heureka_loop_lag_max_since_start_seconds "$P")
	echo "MEASURE delta $v: $r; longest turn since start ${lag}s" >&2
	st=$(echo "$r" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
	beat=$(echo "$r" | "$HK_PYTHON" -c 'import json,sys; print(int(json.load(sys.stdin)["beat_max_ms"]))')
	[ "$st" = 200 ] || BAD="$BAD; delta $v answered $st"
	[ "$beat" -lt $BOUND_MS ] ||
	    BAD="$BAD; delta $v: a heartbeat waited $beat ms"
done
touch "$HK_ROOT/stop"
wait "$CHURN" || true
lag1=$(hk_metric heureka_loop_lag_max_since_start_seconds "$P")
echo "MEASURE longest loop turn: ${lag0}s after the preload, ${lag1}s after the deltas; churn: $(cat "$HK_ROOT/churn.out")" >&2
"$HK_PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) * 1000 < float(sys.argv[2]) or float(sys.argv[1]) <= float(sys.argv[3]) else 1)' \
    "$lag1" "$BOUND_MS" "$lag0" ||
    BAD="$BAD; a loop turn of ${lag1}s during the deltas (bound ${BOUND_MS} ms)"
[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop s

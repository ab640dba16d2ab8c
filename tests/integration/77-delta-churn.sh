#!/bin/sh
# 77-delta-churn.sh: a delta after many recent changes does not stall the
# loop while a fleet keeps registering (issue 21, "Stalls"). 200,000
# instances are registered (peer batches), then one more every 20 ms all
# along; GET apps/delta in JSON, JSON gzip and XML, each with a heartbeat
# prober on another connection. Before: each change started the sliced
# delta build over, and the fourth start ran whole in one loop turn (1 to
# 1.5 s at 200,000, heartbeats waiting as long). Now the walk covers the
# queue as it was when it began and never starts over: no turn holds
# the loop for more than a slice. The bound is on the CPU time of a turn
# (heureka_loop_turn_cpu_max_since_start_seconds), which a loaded
# machine's preemption does not inflate: the wall-clock lag and the
# heartbeats' waits are printed (MEASURE) but not asserted, since a
# 2-core CI machine running other tests delayed a heartbeat 611 ms with
# the fix. The bound, 300 ms, is five times the longest turn measured
# with the fix and under half of the turns without it (1,500 ms under
# AddressSanitizer, whose realloc copies a growing body: 340 ms measured
# with the fix). The mechanism is checked without
# time by check_cache_sliced's test_delta_never_whole_under_churn (and
# the VIP's by test_vip_never_whole_under_churn).
. "$(dirname "$0")/lib.sh"

SF="$HK_PYTHON $(dirname "$0")/stallfetch.py"
N_APPS=200
PER=1000
BOUND_MS=300
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
lag0=$(hk_metric heureka_loop_turn_cpu_max_since_start_seconds "$P")
for v in "json" "json-gzip" "xml"; do
	case $v in
	json) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/json") ;;
	json-gzip) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/json" "Accept-Encoding: gzip") ;;
	xml) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/xml") ;;
	esac
	lag=$(hk_metric heureka_loop_lag_max_since_start_seconds "$P")
	cpu=$(hk_metric heureka_loop_turn_cpu_max_since_start_seconds "$P")
	echo "MEASURE delta $v: $r; longest lag since start ${lag}s, longest turn (CPU) ${cpu}s" >&2
	st=$(echo "$r" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
	beat=$(echo "$r" | "$HK_PYTHON" -c 'import json,sys; print(int(json.load(sys.stdin)["beat_max_ms"]))')
	[ "$st" = 200 ] || BAD="$BAD; delta $v answered $st"
done
# A VIP's build starts over when the registry changes under it, at most
# 4 times; then it goes on in slices (before: it ran whole, 59 ms of one
# turn at 1M; tests/bench/delta-churn.sh measures that).
r0=$(hk_metric heureka_cache_build_restarts_total "$P")
t0=$(hk_metric heureka_cache_build_tolerant_total "$P")
r=$($SF "$U" beat APP00000 a0-i0 vips/app00001 "Accept: application/json")
r1=$(hk_metric heureka_cache_build_restarts_total "$P")
t1=$(hk_metric heureka_cache_build_tolerant_total "$P")
echo "MEASURE vip: $r; restarts $((r1 - r0)), went on through changes $((t1 - t0))" >&2
st=$(echo "$r" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
[ "$st" = 200 ] || BAD="$BAD; vip answered $st"
[ $((r1 - r0)) -le 4 ] || BAD="$BAD; a VIP build started over $((r1 - r0)) times (at most 4)"
touch "$HK_ROOT/stop"
wait "$CHURN" || true
lag1=$(hk_metric heureka_loop_turn_cpu_max_since_start_seconds "$P")
echo "MEASURE longest loop turn (CPU): ${lag0}s after the preload, ${lag1}s after the deltas; churn: $(cat "$HK_ROOT/churn.out")" >&2
"$HK_PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) * 1000 < float(sys.argv[2]) or float(sys.argv[1]) <= float(sys.argv[3]) else 1)' \
    "$lag1" "$BOUND_MS" "$lag0" ||
    BAD="$BAD; a loop turn of ${lag1}s of CPU during the deltas (bound ${BOUND_MS} ms)"
[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop s

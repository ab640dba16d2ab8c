#!/bin/bash
# tests/bench/delta-churn.sh: the loop turns of the delta and of the
# sliced builds at 1M instances under churn (issue 21, "Stalls": no
# request may hold the loop for more than 50 ms at 1M instances).
# tests/integration/77-delta-churn.sh asserts the rule at 200,000 in
# make check; this is its 1M bench (too slow for CI's two cores), and
# reports, asserting nothing.
#
# BENCH_APPS x BENCH_PER instances (default 1,000 x 1,000) are registered
# by peer batches, then one more every 20 ms all along (stallfetch.py
# churn); each fetch runs with a heartbeat prober on another connection,
# and the longest turn's CPU time since the last fetch (the loop turn
# metric is reset per fetch by reading the "since start" maximum before
# and after; a fetch whose turns stay under the earlier maximum reports
# "<= before"). Fetches: apps/delta in JSON, JSON gzip and XML, then the
# full registry (JSON), one application (APP00000) and a VIP (a VIP every
# instance of APP00001 has); BENCH_FETCHES="delta-json vip-json" picks
# some. The "restarts" column is the change in
# heureka_cache_build_restarts_total (builds begun again because the
# registry moved under them).
#
#	HEUREKAD=build/server/heurekad tests/bench/delta-churn.sh
. "$(cd "$(dirname "$0")/../integration" && pwd)/lib.sh"

SF="$HK_PYTHON $(cd "$(dirname "$0")/../integration" && pwd)/stallfetch.py"
N_APPS=${BENCH_APPS:-1000}
PER=${BENCH_PER:-1000}
HK_START_TIMEOUT=60

hk_start s -D eureka.server.max-instances=2000000
U=$HK_URL_s
P=$HK_PORT_s
t0=$(date +%s)
out=$($SF "$U" load "$N_APPS" "$PER")
echo "preload of $((N_APPS * PER)): $out in $(($(date +%s) - t0)) s" >&2
$SF "$U" churn "$HK_ROOT/stop" >"$HK_ROOT/churn.out" &
CHURN=$!
hk_own $CHURN
churned()
{
	hk_curl -H 'Accept: application/json' "${U}apps/CHURN" |
	    "$HK_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["application"]["instance"]))'
}
wait_until 60 hk_ge 20 churned
VIP=$(hk_curl -H 'Accept: application/json' "${U}apps/APP00001" |
    "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["application"]["instance"][0]["vipAddress"])')
echo "uptime: $(uptime)" >&2
printf '%-16s %6s %9s %11s %11s %9s %8s\n' fetch status fetch_ms turn_max_ms turns_50ms beat_ms restarts
for v in ${BENCH_FETCHES:-delta-json delta-json-gzip delta-xml full-json app-json vip-json}; do
	hk_curl "http://127.0.0.1:$P/metrics" >"$HK_ROOT/m0"
	case $v in
	delta-json) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/json") ;;
	delta-json-gzip) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/json" "Accept-Encoding: gzip") ;;
	delta-xml) r=$($SF "$U" beat APP00000 a0-i0 apps/delta "Accept: application/xml") ;;
	full-json) r=$($SF "$U" beat APP00000 a0-i0 apps "Accept: application/json") ;;
	app-json) r=$($SF "$U" beat APP00000 a0-i0 apps/APP00000 "Accept: application/json") ;;
	vip-json) r=$($SF "$U" beat APP00000 a0-i0 "vips/$VIP" "Accept: application/json") ;;
	esac
	hk_curl "http://127.0.0.1:$P/metrics" >"$HK_ROOT/m1"
	# The longest turn during the fetch: the since-start maximum when it
	# grew, else the histogram bucket of the longest turn counted.
	echo "$r" | "$HK_PYTHON" -c '
import json, re, sys
def parse(f):
    m = {}
    for line in open(f):
        if not line.startswith("#") and " " in line:
            k, v = line.rsplit(" ", 1)
            m[k] = float(v)
    return m
r = json.loads(sys.stdin.read())
m0, m1 = parse(sys.argv[2]), parse(sys.argv[3])
d = lambda k: m1.get(k, 0) - m0.get(k, 0)
mx = "heureka_loop_turn_cpu_max_since_start_seconds"
bk = sorted((float(re.search(r"le=\"([^\"]+)\"", k).group(1)), k)
            for k in m1 if k.startswith("heureka_loop_turn_cpu_seconds_bucket"))
over = d("heureka_loop_turn_cpu_seconds_count") - d(
    "heureka_loop_turn_cpu_seconds_bucket{le=\"0.05\"}")
if m1[mx] > m0[mx]:
    turn = "%.1f" % (m1[mx] * 1000)
else:
    lo = 0
    for le, k in bk:
        if d(k) < d("heureka_loop_turn_cpu_seconds_count"):
            lo = le
    nxt = [le for le, k in bk if le > lo]
    turn = "<= %g" % ((nxt[0] if nxt else lo) * 1000)
print("%-16s %6s %9d %11s %11d %9d %8d" % (sys.argv[1], r["status"],
    r.get("fetch_ms", 0), turn, over, r["beat_max_ms"],
    d("heureka_cache_build_restarts_total")))' "$v" "$HK_ROOT/m0" "$HK_ROOT/m1"
done
touch "$HK_ROOT/stop"
wait "$CHURN" || true
echo "churn: $(cat "$HK_ROOT/churn.out"); uptime: $(uptime)" >&2
hk_stop s
[ -z "${BENCH_LOG:-}" ] || cp "$HK_ROOT/s.log" "$BENCH_LOG"

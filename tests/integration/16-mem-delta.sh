#!/bin/sh
# 16-mem-delta.sh: issue 9, "Memory": registering and cancelling one 60 KB
# instance in a loop used to hold every cancelled copy in the delta queue
# (1 GB in 8 s with an empty registry). The queue now keeps compact
# records, so RSS stays flat under the churn; and with a small
# eureka.server.max-delta-queue-bytes the oldest records go early, the
# drop is counted, and apps/delta carries a hash code no registry has
# (DELTA_TRUNCATED_0_) until the dropped records would have expired, so a
# client's reconciliation falls back to a full fetch instead of applying
# an incomplete delta.
. "$(dirname "$0")/lib.sh"

LOAD="$HK_PYTHON $(dirname "$0")/memload.py"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
J="Accept: application/json"

hk_log "churn of a 60 KB instance with the default bounds"
hk_start s
rss0=$(rss "$HK_PID_s")
$LOAD "$HK_URL_s" churn SVC big 2500 60000 >"$HK_ROOT/churn.json" ||
    fail "churn"
rss1=$(rss "$HK_PID_s")
echo "MEASURE 2500 x register+cancel of a 60 KB instance: VmRSS ${rss0} kB -> ${rss1} kB; $(cat "$HK_ROOT/churn.json")" >&2
assert_eq '{"200":2500,"204":2500}' "$(hk_json 'd["codes"]' "$HK_ROOT/churn.json")" \
    "churn answers"
hk_asan || [ $((rss1 - rss0)) -lt 32768 ] ||
    fail "RSS grew by $((rss1 - rss0)) kB under churn (delta queue?)"
assert_http 200 GET "${HK_URL_s}apps/delta" -H "$J"
n=$(hk_json 'str(sum(len(a["instance"]) for a in d["applications"]["application"]))')
assert_eq 1 "$n" "one deduplicated delta entry for the churned id"
hk_stop s

hk_log "a small byte bound: records dropped early, delta marked truncated"
hk_start t -D eureka.server.max-delta-queue-bytes=65536 \
    -D eureka.server.retention-time-in-ms-in-delta-queue=3000 \
    -D eureka.server.delta-retention-timer-interval-in-ms=300
U=$HK_URL_t
hk_register "$U" SVC keep
assert_http 200 GET "${U}apps/delta" -H "$J"
assert_eq "UP_1_" "$(hk_json 'd["applications"]["apps__hashcode"]')" \
    "hash code before the bound is hit"
$LOAD "$U" churn SVC c 400 2000 >/dev/null || fail "churn 400"
[ "$(hk_metric 'heureka_limit_rejections_total{limit="max-delta-queue-bytes"}' \
    "$HK_PORT_t")" -gt 0 ] || fail "no early drop counted"
assert_http 200 GET "${U}apps/delta" -H "$J"
assert_eq "DELTA_TRUNCATED_0_" "$(hk_json 'd["applications"]["apps__hashcode"]')" \
    "hash code of a delta that lost records"
n=$(hk_json 'str(sum(len(a["instance"]) for a in d["applications"]["application"]))')
[ "$n" -le 2 ] || fail "delta holds $n instances"
bytes=$(hk_metric 'heureka_memory_bytes{part="delta-queue"}' "$HK_PORT_t")
[ "$bytes" -le 65536 ] || fail "delta queue holds $bytes bytes > 65536"
# The full registry is complete, and once the dropped records would have
# expired anyway the delta reconciles again.
assert_http 200 GET "${U}apps" -H "$J"
assert_eq "UP_1_" "$(hk_json 'd["applications"]["apps__hashcode"]')" \
    "full registry hash code"
delta_ok()
{
	hk_curl -s -H "$J" -o "$HK_ROOT/d.json" "${U}apps/delta" &&
	    [ "$(hk_json 'd["applications"]["apps__hashcode"]' \
	    "$HK_ROOT/d.json")" = "UP_1_" ]
}
wait_until 15 delta_ok
hk_alive t
hk_stop t

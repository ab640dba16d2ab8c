#!/bin/sh
# 15-mem-budget.sh: issue 9, "Memory": one client registering instances
# with many metadata entries as fast as it can used to grow heurekad until
# the kernel killed it. Now (1) one instance's stored size is capped
# (eureka.server.max-instance-bytes, 413) on REST registers and on each
# item of a replication batch, which used to store 500 KB instances;
# (2) metadata key and value lengths are capped (400); (3) past the
# memory budget (eureka.server.max-memory-bytes) NEW registrations get 503
# with a reason while the instances already registered stay, renew and may
# re-register; RSS stays near the budget. Every hit shows in
# heureka_limit_rejections_total.
. "$(dirname "$0")/lib.sh"

LOAD="$HK_PYTHON $(dirname "$0")/memload.py"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

hk_log "a replicated 500 KB instance is refused with the default cap"
hk_start d
$LOAD "$HK_URL_d" batch SVC big 512000 >"$HK_ROOT/batch.json" ||
    fail "batch did not complete"
item=$(hk_json 'str(d["response"]["responseList"][0]["statusCode"])' \
    "$HK_ROOT/batch.json")
assert_eq 413 "$item" "status of a 500 KB batch item"
assert_http 404 GET "${HK_URL_d}apps/SVC/big"
[ "$(hk_metric 'heureka_limit_rejections_total{limit="max-instance-bytes"}' \
    "$HK_PORT_d")" -ge 1 ] || fail "instance-size refusal not counted"
# A normal batch item still goes through.
$LOAD "$HK_URL_d" batch SVC small 2000 >/dev/null || fail "small batch"
assert_http 200 GET "${HK_URL_d}apps/SVC/small"
hk_stop d

hk_start s -D eureka.server.max-memory-bytes=16777216 \
    -D eureka.server.register-rate-per-second=0 \
    -D eureka.server.max-instance-bytes=16384 \
    -D eureka.server.max-metadata-value-bytes=200
U=$HK_URL_s
P=$HK_PORT_s

hk_log "REST: stored size and metadata lengths"
$LOAD "$U" register SVC toolarge 1 100 150 >"$HK_ROOT/big.json" ||
    fail "register toolarge"
assert_eq '{"413": 1}' "$(hk_json 'd["codes"]' "$HK_ROOT/big.json" |
    sed 's/:/: /')" "a 100 x 150-byte-metadata instance over 16 KiB"
$LOAD "$U" register SVC longval 1 1 300 >"$HK_ROOT/long.json" ||
    fail "register longval"
assert_eq '{"400": 1}' "$(hk_json 'd["codes"]' "$HK_ROOT/long.json" |
    sed 's/:/: /')" "a 300-byte metadata value over the 200 bound"
assert_http 404 GET "${U}apps/SVC/toolarge"
hk_register "$U" SVC early
assert_http 400 PUT "${U}apps/SVC/early/metadata?k=$(head -c 300 /dev/zero | tr '\0' v)"
[ "$(hk_metric 'heureka_limit_rejections_total{limit="max-metadata-bytes"}' \
    "$P")" -ge 2 ] || fail "metadata-length refusals not counted"

hk_log "fill the 16 MiB budget with 60-entry instances"
rss0=$(rss "$HK_PID_s")
$LOAD "$U" register SVC n 20000 60 80 --stop-on 503 >"$HK_ROOT/fill.json" ||
    fail "fill"
at=$(hk_json 'str(d.get("stopped_at", -1))' "$HK_ROOT/fill.json")
reason=$(hk_json 'd.get("reason", "")' "$HK_ROOT/fill.json")
rss1=$(rss "$HK_PID_s")
echo "MEASURE budget 16 MiB: 503 after $at registrations; VmRSS ${rss0} kB -> ${rss1} kB" >&2
[ "$at" -gt 100 ] || fail "no 503 within 20000 registrations: $(cat "$HK_ROOT/fill.json")"
assert_contains "max-memory-bytes" "$reason" "503 reason"
hk_asan || [ $((rss1 - rss0)) -lt 65536 ] ||
    fail "RSS grew by $((rss1 - rss0)) kB for a 16 MiB budget"

hk_log "earlier instances stay, renew and re-register; new ones get 503"
$LOAD "$U" register SVC late 3 60 80 >"$HK_ROOT/late.json" || fail "late"
assert_eq '{"503": 3}' "$(hk_json 'd["codes"]' "$HK_ROOT/late.json" |
    sed 's/:/: /')" "new registrations past the budget"
assert_http 200 GET "${U}apps/SVC/n-0"
assert_http 200 PUT "${U}apps/SVC/n-0"
assert_http 200 PUT "${U}apps/SVC/early"
hk_register "$U" SVC early
assert_http 200 GET "${U}apps/SVC/n-$((at - 1))"
[ "$(hk_metric 'heureka_limit_rejections_total{limit="max-memory-bytes"}' \
    "$P")" -ge 2 ] || fail "memory refusals not counted"
hk_alive s
hk_stop s

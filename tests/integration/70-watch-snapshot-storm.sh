#!/bin/sh
# 70-watch-snapshot-storm.sh: issue 21, "Opening a watch copies the whole
# registry in one loop turn and keeps it". With 30,000 instances, 20
# watchers that open at once and never read used to make one loop turn of
# about a second (each snapshot encoded whole in the turn it opened) and
# hold 20 copies of the registry (~22 MiB each) outside the memory budget
# for as long as they stayed connected. Now a snapshot is sent a piece at
# a time from encodings shared by every watcher: no loop turn (the
# server's own CPU time per turn, /metrics) passes 0.25 s while they open,
# the peak RSS stays within the budget, a reader opened with them gets
# every instance once and SYNCED, the watchers that never read are cut off
# (RESET, then the close) after heureka.watch.stall-timeout-ms, and the
# memory goes back once they are gone.
. "$(dirname "$0")/lib.sh"

WL="$HK_PYTHON $(dirname "$0")/watchload.py"
SSE="$HK_PYTHON $(dirname "$0")/sse.py"
BUDGET=$((96 * 1024 * 1024))
NAPPS=3000
PER=10
kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

hk_start s -D eureka.server.max-memory-bytes=$BUDGET \
    -D heureka.watch.stall-timeout-ms=3000
U=$HK_URL_s
W=${U}heureka/watch
wstat() { hk_curl "${U}heureka/watch/stats" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

out=$($WL "$U" load $NAPPS $PER 0)
assert_eq '{"codes": {"200": 150}}' "$out" "preload of $((NAPPS * PER)) instances"
base=$(kb "$HK_PID_s" VmRSS)

hk_log "20 watchers that never read and one reader open at once"
hk_register "$U" HB hb-0
$SSE "$W" "$HK_ROOT/reader" & R=$!; hk_own "$R"
# Two seconds at least, then until the server cut the 20 off.
$WL "$U" storm 20 2 20 >"$HK_ROOT/storm.json" || fail "storm"
storm=$(cat "$HK_ROOT/storm.json")
peak=$(kb "$HK_PID_s" VmHWM)
turn=$(hk_json 'str(d["turn_max_s"])' "$HK_ROOT/storm.json")
hb=$(hk_json 'str(d["hb_max_ms"])' "$HK_ROOT/storm.json")
echo "MEASURE $((NAPPS * PER)) instances, 20 watchers: longest turn <= ${turn} s, longest heartbeat wait ${hb} ms, VmRSS ${base} kB after the load, VmHWM ${peak} kB, budget $((BUDGET / 1024)) kB; $storm" >&2

hk_log "no long loop turn while they opened; peak RSS within the budget"
"$HK_PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 0.25 else 1)' \
    "$turn" || fail "a loop turn of up to $turn s while 20 watchers opened"
hk_asan || [ "$peak" -le $((BUDGET / 1024)) ] ||
    fail "peak RSS ${peak} kB over the $((BUDGET / 1024)) kB budget"

hk_log "the watchers that never read were cut off: RESET, then closed"
assert_eq 20 "$(hk_json 'str(d["reset"])' "$HK_ROOT/storm.json")" \
    "watchers that saw RESET"
assert_eq 20 "$(hk_json 'str(d["eof"])' "$HK_ROOT/storm.json")" \
    "watchers whose stream ended"
[ "$(wstat stalls)" -ge 20 ] || fail "stalled watchers counted: $(wstat stalls)"
wait_until 10 hk_eq 1 wstat watchers

hk_log "the reader got the whole registry once, then SYNCED"
wait_until 30 grep -q ' SYNCED ' "$HK_ROOT/reader"
sed '/ SYNCED /q' "$HK_ROOT/reader" >"$HK_ROOT/snap"
n=$(grep -c ' ADDED ' "$HK_ROOT/snap" || true)
assert_eq $((NAPPS * PER + 1)) "$n" "ADDED frames of the snapshot (with HB)"
u=$(grep ' ADDED ' "$HK_ROOT/snap" | cut -d' ' -f5 | sort -u | wc -l)
assert_eq $((NAPPS * PER + 1)) "$u" "distinct instances in the snapshot"
l=$(grep -c ' LEADER ' "$HK_ROOT/snap" || true)
assert_eq $((NAPPS + 1)) "$l" "LEADER frames of the snapshot"
kill "$R"; wait "$R" 2>/dev/null || true
wait_until 10 hk_eq 0 wstat watchers

hk_log "the memory goes back once they are gone"
# What stays is the window of recent events (a few heartbeat frames).
wbytes() { hk_metric 'heureka_memory_bytes{part="watch"}' "$HK_PORT_s"; }
wait_until 10 test "$(wbytes)" -lt 65536
end=$(kb "$HK_PID_s" VmRSS)
echo "MEASURE VmRSS ${end} kB once the watchers left" >&2
hk_asan || [ $((end - base)) -le 16384 ] ||
    fail "RSS ${end} kB after the watchers left, ${base} kB before"
hk_alive s
hk_stop s
hk_log "ok"

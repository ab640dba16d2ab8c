#!/bin/sh
# 71-watch-fanout.sh: issue 21, "Fan-out to readers that never read". 500
# watchers that never read and 400 events of 4.5 KB (two replication
# batches of 200) used to take heurekad far past a 64 MiB budget (every
# event copied into every watcher's output in the turn it happened, and
# the kernel's autotuned send buffers taking what the outputs gave up, so
# no watcher was ever found full and no RESET was sent), with one long
# loop turn per batch and the memory kept after the watchers closed. Now
# an event is one shared frame handed out by reference by a pump with a
# bounded amount of work per loop turn; a watcher's unsent bytes count
# what the kernel holds unacknowledged, so each watcher is found full at
# heureka.watch.max-buffer-bytes, gets RESET and is closed; the peak RSS
# stays within the budget, no loop turn (the server's own CPU time per
# turn) passes 0.25 s, and RSS comes back once the watchers are gone.
. "$(dirname "$0")/lib.sh"

WL="$HK_PYTHON $(dirname "$0")/watchload.py"
BUDGET=$((64 * 1024 * 1024))
kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

hk_start s -D eureka.server.max-memory-bytes=$BUDGET \
    -D eureka.server.register-rate-per-second=0
U=$HK_URL_s
wstat() { hk_curl "${U}heureka/watch/stats" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
base=$(kb "$HK_PID_s" VmRSS)

hk_log "500 watchers that never read, 400 events of 4.5 KB"
$WL "$U" fanout 500 400 1100 5 >"$HK_ROOT/fanout.json" || fail "fanout"
out=$(cat "$HK_ROOT/fanout.json")
peak=$(kb "$HK_PID_s" VmHWM)
turn=$(hk_json 'str(d["turn_max_s"])' "$HK_ROOT/fanout.json")
echo "MEASURE 500 watchers x 400 events of 4.5 KB: longest turn <= ${turn} s, VmRSS ${base} kB at the start, VmHWM ${peak} kB, budget $((BUDGET / 1024)) kB, resets $(wstat resets); $out" >&2
assert_eq '{"200":2}' "$(hk_json 'd["codes"]' "$HK_ROOT/fanout.json")" \
    "the two batches"

hk_log "peak RSS within the budget, no long loop turn"
hk_asan || [ "$peak" -le $((BUDGET / 1024)) ] ||
    fail "peak RSS ${peak} kB over the $((BUDGET / 1024)) kB budget"
"$HK_PYTHON" -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 0.25 else 1)' \
    "$turn" || fail "a loop turn of up to $turn s for a 200-item batch"

hk_log "every watcher was found full: RESET, then closed"
assert_eq 500 "$(hk_json 'str(d["reset"])' "$HK_ROOT/fanout.json")" \
    "watchers that saw RESET"
assert_eq 500 "$(hk_json 'str(d["eof"])' "$HK_ROOT/fanout.json")" \
    "watchers whose stream ended"
[ "$(wstat resets)" -ge 500 ] || fail "resets counted: $(wstat resets)"
wait_until 10 hk_eq 0 wstat watchers

hk_log "the memory goes back once they are gone"
# The window of recent events stays (400 frames of 4.5 KB, under 2 MiB).
wbytes() { hk_metric 'heureka_memory_bytes{part="watch"}' "$HK_PORT_s"; }
wait_until 10 test "$(wbytes)" -lt $((4 * 1024 * 1024))
sleep_until_trim() { [ "$(kb "$HK_PID_s" VmRSS)" -le $((base + 32768)) ]; }
hk_asan || wait_until 10 sleep_until_trim
end=$(kb "$HK_PID_s" VmRSS)
echo "MEASURE VmRSS ${end} kB once the watchers left (${base} kB at the start)" >&2
hk_alive s
hk_stop s
hk_log "ok"

#!/bin/sh
# 27-client-watch-push.sh: libheureka follows the watch stream (issue 14).
# With the registry fetch interval at 60 s, `heureka watch` sees another
# client's registration, status change and cancel within 2 s each: that is
# push, not poll. Reconnecting and the no-watch fallback are unit-tested
# (check_client), where time is driven by hand.
. "$(dirname "$0")/lib.sh"

hk_need_cli

hk_start S
A=$HK_URL_S
T=$(hk_tmp)
wstat() { hk_curl "${A}heureka/watch/stats" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
watching() { [ "$(wstat watchers)" = "$1" ]; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

hk_register "$A" EARLY early-1
"$HEUREKA" watch --interval 60 --server "$A" >"$T/watch.out" 2>&1 &
WATCH=$!
hk_own "$WATCH"
# The first full fetch, then the stream.
wait_until 10 grep -q '^ADDED EARLY early-1 UP$' "$T/watch.out"
wait_until 10 watching 1

t0=$(now_ms)
hk_register "$A" PUSHED p-1
wait_until 2 grep -q '^ADDED PUSHED p-1 UP$' "$T/watch.out"
hk_log "registration seen by push after $(($(now_ms) - t0)) ms"
assert_http 200 PUT "${A}apps/PUSHED/p-1/status?value=OUT_OF_SERVICE"
wait_until 2 grep -q '^MODIFIED PUSHED p-1 OUT_OF_SERVICE$' "$T/watch.out"
assert_http 200 DELETE "${A}apps/PUSHED/p-1"
wait_until 2 grep -q '^DELETED PUSHED p-1 ' "$T/watch.out"
# Each change printed once (the snapshot after the fetch adds nothing).
assert_eq 1 "$(grep -c '^ADDED EARLY' "$T/watch.out")" "EARLY lines"
assert_eq 1 "$(grep -c '^ADDED PUSHED' "$T/watch.out")" "PUSHED lines"

kill -TERM "$WATCH"
rc=0
wait "$WATCH" || rc=$?
assert_eq 0 "$rc" "watch exit status"
hk_disown "$WATCH"
wait_until 5 watching 0
hk_stop S

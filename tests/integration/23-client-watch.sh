#!/bin/sh
# 23-client-watch.sh: `heureka watch` prints the changes another client
# makes (ADDED, MODIFIED on a status change, DELETED), one line each.
. "$(dirname "$0")/lib.sh"

hk_need_cli

hk_start S
T=$(hk_tmp)
hk_register "$HK_URL_S" EARLY early-1

"$HEUREKA" watch --interval 1 --server "$HK_URL_S" >"$T/watch.out" 2>&1 &
WATCH=$!
hk_own "$WATCH"
wait_until 10 grep -q '^ADDED EARLY early-1 UP$' "$T/watch.out"

hk_register "$HK_URL_S" WATCHED w-1
wait_until 10 grep -q '^ADDED WATCHED w-1 UP$' "$T/watch.out"
assert_http 200 PUT "${HK_URL_S}apps/WATCHED/w-1/status?value=OUT_OF_SERVICE"
wait_until 10 grep -q '^MODIFIED WATCHED w-1 OUT_OF_SERVICE$' "$T/watch.out"
assert_http 200 DELETE "${HK_URL_S}apps/WATCHED/w-1"
wait_until 10 grep -q '^DELETED WATCHED w-1 ' "$T/watch.out"

# Filtered by application.
"$HEUREKA" watch WATCHED --interval 1 --server "$HK_URL_S" \
    >"$T/watch2.out" 2>&1 &
W2=$!
hk_own "$W2"
hk_register "$HK_URL_S" WATCHED w-2
wait_until 10 grep -q '^ADDED WATCHED w-2 UP$' "$T/watch2.out"
grep -q EARLY "$T/watch2.out" && fail "filter: $(cat "$T/watch2.out")"

kill -TERM "$WATCH" "$W2"
rc=0
wait "$WATCH" || rc=$?
assert_eq 0 "$rc" "watch exit status"
wait "$W2" || true
hk_disown "$WATCH" "$W2"
hk_stop S

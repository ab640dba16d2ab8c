#!/bin/sh
# 100-head-memory.sh: unfinished request heads count in max-memory-bytes
# (issue 21, "Memory that the budget does not see"). The guard holds a
# connection's bytes until its head is whole, up to 64 KiB each; before,
# none of it was in heureka_memory_bytes, so 300 connections with 60 KiB
# heads held 18 MiB beside a 4 MiB budget unseen, and every one stayed
# open until its head deadline.
#  1. 300 connections each send 60 KiB of a head that never ends, with
#     max-memory-bytes=4 MiB: heureka_memory_bytes{part="heads"} shows
#     them (up to the budget), connections past the budget are closed and
#     counted (limit="head-memory"), and the descriptors and the count
#     come back once they go; /health answers meanwhile.
#  2. A registration still works afterwards (the bytes were given back).
. "$(dirname "$0")/lib.sh"

SLOW="$HK_PYTHON $(dirname "$0")/slowconn.py"
T=$(hk_tmp)
BUDGET=4194304

# A metric, 0 when the series is absent.
metric0()
{
	hk_curl "http://127.0.0.1:$HK_PORT_s/metrics" |
	    awk -v k="$1" '$1 == k { v = $2 } END { print v + 0 }'
}
heads()
{
	metric0 'heureka_memory_bytes{part="heads"}'
}

hk_start s -D eureka.server.max-memory-bytes=$BUDGET \
    -D heureka.server.head-timeout-ms=20000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
mkfifo "$T/hold"
$SLOW hold "$HK_PORT_s" 300 61440 0 <"$T/hold" >"$T/held" &
hk_own $!
exec 3>"$T/hold"
wait_until 30 grep -q connected "$T/held"
hk_log "the heads are counted and the budget closes connections"
wait_until 20 hk_ge 1 heads
wait_until 20 hk_ge 100 metric0 'heureka_limit_rejections_total{limit="head-memory"}'
h=$(heads)
n=$(metric0 'heureka_limit_rejections_total{limit="head-memory"}')
echo "figures: 300 unfinished 60 KiB heads, budget $BUDGET: heads counted $h bytes, $n connections closed (head-memory)" >&2
[ "$h" -le $((BUDGET + 65536)) ] || fail "heads counted $h bytes, past the budget $BUDGET"
assert_http 200 GET "http://127.0.0.1:$HK_PORT_s/health"
exec 3>&-
hk_log "they go, and their bytes with them"
wait_until 20 hk_eq 0 heads
hk_register "$HK_URL_s" APP i-1
hk_stop s

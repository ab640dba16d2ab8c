#!/bin/sh
# 33-cluster-blackhole.sh: C is black-holed (accepts connections, never
# answers) on A's path to it. Replication A->B stays fast, A's queue for C
# stays within max-elements-in-peer-replication-pool with the overflow
# counted, A's memory stays flat under heartbeat load, A does not hammer C
# (back-off), and after C recovers it catches up (issue 3, scenario 5).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

set -- $(cl_ports 3)
PA=$1 PB=$2 PC=$3
cl_proxy TOC "$PC"
UA="http://127.0.0.1:$PA/eureka/"
UB="http://127.0.0.1:$PB/eureka/"
UC="http://127.0.0.1:$PC/eureka/"
cl_start A "$PA" "$UA,$UB,http://127.0.0.1:$CL_PPORT_TOC/eureka/" \
    -D eureka.server.max-elements-in-peer-replication-pool=100
cl_start B "$PB" "$UA,$UB,$UC"
cl_start C "$PC" "$UA,$UB,$UC"
A=$HK_URL_A B=$HK_URL_B C=$HK_URL_C
CQ='[p for p in d["peers"] if ":'"$CL_PPORT_TOC"'/" in p["url"]][0]'

hk_log "black-hole C"
cl_mode TOC drop
echo "MEASURE with C black-holed, register on A -> visible on B: $(cl_measure_register "$A" FAST 10 "$B")" >&2

hk_log "load: 300 registrations on A"
cl_bulk "$A" register SVC s 300
wait_until 10 cl_has "$B" SVC s-299
q=$(cl_stats "$A" "str($CQ[\"queue\"])")
[ "$q" -le 100 ] || fail "A's queue for C holds $q tasks (bound 100)"
ov=$(cl_stats "$A" "str($CQ[\"overflow\"])")
[ "$ov" -gt 0 ] || fail "no overflow counted for C"
rss1=$(cl_rss "$HK_PID_A")

hk_log "load: 3 rounds of heartbeats for all 300"
for r in 1 2 3; do
	cl_bulk "$A" heartbeat SVC s 300
done
rss2=$(cl_rss "$HK_PID_A")
q=$(cl_stats "$A" "str($CQ[\"queue\"])")
[ "$q" -le 100 ] || fail "A's queue for C holds $q tasks after heartbeats"
echo "MEASURE A VmRSS: ${rss1} kB after registrations, ${rss2} kB after 900 heartbeats; queue for C $q" >&2
hk_asan || [ $((rss2 - rss1)) -lt 4096 ] ||
    fail "A's memory grew by $((rss2 - rss1)) kB"
# B got every heartbeat's worth of replication; C's path never retried in
# a storm: a failure at most every ~500 ms once backed off.
fails=$(cl_stats "$A" "str($CQ[\"failures\"])")
batches=$(cl_stats "$A" "str($CQ[\"batches\"])")
echo "MEASURE black-holed C: $batches batch attempts, $fails failures" >&2
[ "$batches" -lt 60 ] || fail "$batches batch attempts to a black hole: retry storm"
# (C may already hold the data: its own path to A is healthy, so its
# anti-entropy pulls A's registry. A's queue for C is what is tested here.)

hk_log "C recovers and catches up"
t0=$(cl_now_ms)
cl_mode TOC pass
wait_until 40 cl_same "$A" "$B" "$C"
echo "MEASURE black-hole healed -> C identical: $(($(cl_now_ms) - t0)) ms" >&2
wait_until 40 hk_eq 0 cl_stats "$A" "str($CQ[\"queue\"])"

hk_stop A
hk_stop B
hk_stop C

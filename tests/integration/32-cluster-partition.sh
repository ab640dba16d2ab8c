#!/bin/sh
# 32-cluster-partition.sh: fault proxies sit on every path between A and
# the others (B and C reach A through one, A reaches B and C through two).
# Partition A away, write on both sides, heal: all three converge to the
# same registry (full fetches compared) with no cancelled instance
# resurrected (issue 3, scenario 4). Prints the convergence time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

set -- $(cl_ports 3)
PA=$1 PB=$2 PC=$3
cl_proxy TOA "$PA"
cl_proxy TOB "$PB"
cl_proxy TOC "$PC"
UA="http://127.0.0.1:$CL_PPORT_TOA/eureka/"
UB="http://127.0.0.1:$PB/eureka/"
UC="http://127.0.0.1:$PC/eureka/"
cl_start A "$PA" "http://127.0.0.1:$CL_PPORT_TOB/eureka/,http://127.0.0.1:$CL_PPORT_TOC/eureka/"
cl_start B "$PB" "$UA,$UB,$UC"
cl_start C "$PC" "$UA,$UB,$UC"
A=$HK_URL_A B=$HK_URL_B C=$HK_URL_C

for i in 1 2 3 4; do
	hk_register "$A" SVC "i-$i"
done
wait_until 5 cl_same "$A" "$B" "$C"

hk_log "partition A from B and C"
# Failed batches so far: A's to B and C, B's and C's to A.
fab=$(cl_peer "$A" "$CL_PPORT_TOB" 'p["failures"]')
fac=$(cl_peer "$A" "$CL_PPORT_TOC" 'p["failures"]')
fba=$(cl_peer "$B" "$CL_PPORT_TOA" 'p["failures"]')
fca=$(cl_peer "$C" "$CL_PPORT_TOA" 'p["failures"]')
cl_mode TOA drop
cl_mode TOB drop
cl_mode TOC drop
# Side A: cancel i-1, register a-1, override i-3.
assert_http 200 DELETE "${A}apps/SVC/i-1"
hk_register "$A" SVC a-1
assert_http 200 PUT "${A}apps/SVC/i-3/status?value=OUT_OF_SERVICE"
# Side B/C: cancel i-2 on B, register b-1 on C, override i-4 on C.
assert_http 200 DELETE "${B}apps/SVC/i-2"
hk_register "$C" SVC b-1
assert_http 200 PUT "${C}apps/SVC/i-4/status?value=DOWN"
wait_until 3 cl_same "$B" "$C"
# Every side has tried to send its writes across and failed.
wait_until 10 hk_ge $((fab + 1)) cl_peer "$A" "$CL_PPORT_TOB" 'p["failures"]'
wait_until 10 hk_ge $((fac + 1)) cl_peer "$A" "$CL_PPORT_TOC" 'p["failures"]'
wait_until 10 hk_ge $((fba + 1)) cl_peer "$B" "$CL_PPORT_TOA" 'p["failures"]'
wait_until 10 hk_ge $((fca + 1)) cl_peer "$C" "$CL_PPORT_TOA" 'p["failures"]'
cl_same "$A" "$B" && fail "A and B agree during the partition: not partitioned?"
cl_has "$B" SVC i-1 || fail "B lost i-1 during the partition"

hk_log "heal"
t0=$(cl_now_ms)
cl_mode TOA pass
cl_mode TOB pass
cl_mode TOC pass
wait_until 30 cl_same "$A" "$B" "$C"
echo "MEASURE partition heal -> identical registries: $(($(cl_now_ms) - t0)) ms (anti-entropy every 500 ms, peer read timeout 1 s)" >&2

for u in "$A" "$B" "$C"; do
	cl_has "$u" SVC i-1 && fail "cancelled i-1 resurrected on $u"
	cl_has "$u" SVC i-2 && fail "cancelled i-2 resurrected on $u"
	cl_has "$u" SVC a-1 || fail "a-1 missing on $u"
	cl_has "$u" SVC b-1 || fail "b-1 missing on $u"
	assert_eq OUT_OF_SERVICE "$(cl_field "$u" SVC i-3 status)" "i-3 on $u"
	assert_eq DOWN "$(cl_field "$u" SVC i-4 status)" "i-4 on $u"
done
# Several more anti-entropy rounds (CL_SETTLE_ROUNDS with every peer,
# on every node) change nothing.
cl_settle 20 "$A" "$B" "$C"
cl_same "$A" "$B" "$C" || fail "registries diverged again after healing"
cl_has "$A" SVC i-1 && fail "i-1 resurrected later"
cl_has "$B" SVC i-2 && fail "i-2 resurrected later"

hk_stop A
hk_stop B
hk_stop C

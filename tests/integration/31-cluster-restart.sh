#!/bin/sh
# 31-cluster-restart.sh: kill -9 B, register and cancel on A meanwhile,
# restart B with an empty registry: B answers 403 to reads (heureka/apps
# and heureka/digest too) until it has synced (held back here by
# black-holing its way to the peers), then holds exactly A's registry (issue 3, scenario 3). A second restart without the
# fault measures how long an empty node takes to be ready and identical.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

set -- $(cl_ports 3)
PA=$1 PB=$2 PC=$3
PEERS="http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/,http://127.0.0.1:$PC/eureka/"
cl_start A "$PA" "$PEERS"
cl_start C "$PC" "$PEERS"
# B reaches A and C through fault proxies, so its sync can be held back.
cl_proxy TOA "$PA"
cl_proxy TOC "$PC"
BPEERS="http://127.0.0.1:$CL_PPORT_TOA/eureka/,http://127.0.0.1:$PB/eureka/,http://127.0.0.1:$CL_PPORT_TOC/eureka/"
cl_start B "$PB" "$BPEERS"
A=$HK_URL_A B=$HK_URL_B C=$HK_URL_C

hk_register "$A" SVC i-1
hk_register "$A" SVC i-2
hk_register "$C" OTHER o-1
wait_until 3 cl_same "$A" "$B" "$C"

hk_log "kill -9 B; register and cancel on A meanwhile"
hk_kill B
hk_register "$A" SVC i-3
assert_http 200 DELETE "${A}apps/SVC/i-1"
assert_http 200 PUT "${A}apps/SVC/i-2/status?value=OUT_OF_SERVICE"
wait_until 3 cl_same "$A" "$C"

hk_log "restart B with its peers black-holed: reads refused"
cl_mode TOA drop
cl_mode TOC drop
cl_start B "$PB" "$BPEERS"
for path in apps apps/delta apps/SVC vips/svc heureka/apps heureka/digest; do
	assert_http 403 GET "${B}$path" -H 'Accept: application/json'
done
# The heureka/ extension is gated as apps is; its 403 tells a syncing
# heureka peer "answered, not ready" (a cluster starting together opens).
assert_eq 0 "$(hk_header X-Heureka-Ready)" "X-Heureka-Ready of a 403"
# Still refused once B has given up on a request to its black-holed
# peers (closed it unanswered at its read timeout): a failed sync must
# not open reads.
swallowed() { echo $(($(cl_swallowed TOA) + $(cl_swallowed TOC))); }
wait_until 10 hk_ge 1 swallowed
assert_http 403 GET "${B}apps" -H 'Accept: application/json'
# Writes and instance reads are not gated (§6.4).
assert_http 404 GET "${B}apps/SVC/i-2"
assert_eq false "$(cl_stats "$B" 'd["ready"]')" "B ready while black-holed"

hk_log "heal: B syncs, then holds exactly A's registry"
t0=$(cl_now_ms)
cl_mode TOA pass
cl_mode TOC pass
wait_until 15 sh -c "curl -s -o /dev/null -w '%{http_code}' '${B}apps' | grep -q 200"
echo "MEASURE restart-after-fault: reads open $(($(cl_now_ms) - t0)) ms after heal (B's pending request times out first)" >&2
wait_until 5 cl_same "$A" "$B" "$C"
cl_has "$B" SVC i-1 && fail "cancelled SVC/i-1 came back on B"
assert_eq OUT_OF_SERVICE "$(cl_field "$B" SVC i-2 status)" "status on B"

hk_log "measure: plain restart of an empty node"
hk_kill B
t0=$(cl_now_ms)
cl_start B "$PB" "$PEERS"
wait_until 10 sh -c "curl -s -o /dev/null -w '%{http_code}' '${B}apps' | grep -q 200"
wait_until 10 cl_same "$A" "$B" "$C"
echo "MEASURE restart->ready and identical: $(($(cl_now_ms) - t0)) ms (incl. process start and polling); sync took $(cl_stats "$B" 'str(d["syncMs"])') ms, $(cl_stats "$B" 'str(d["syncCount"])') instances" >&2

hk_stop A
hk_stop B
hk_stop C

#!/bin/sh
# 30-cluster-replicate.sh: three peers on 127.0.0.1 replicate every kind of
# write (register, heartbeat, cancel, status override, override deletion,
# metadata) to each other (issue 3, scenario 1), and nothing is ever
# re-replicated: for every write exactly one item per peer leaves the node
# that took it, and none leaves the others (scenario 2, the loop check,
# read from GET {base}heureka/stats). Anti-entropy is off here so that
# replication alone is measured. Also prints the register -> visible-on-
# every-peer latency.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

NOAE="-D eureka.server.anti-entropy-interval-ms=0 -D eureka.server.eviction-interval-timer-in-ms=500"
# shellcheck disable=SC2086
cl_trio $NOAE

# Every node sees the two others and not itself.
for n in A B C; do
	eval "u=\$HK_URL_$n"
	assert_eq 2 "$(cl_stats "$u" 'len(d["peers"])')" "peers of $n"
done
assert_eq "false" "$(cl_stats "$A" 'any(str(":'"$PA"'/") in p["url"] for p in d["peers"])')" "A lists itself"

# The loop check: items sent by each node, expected exactly.
EA=0 EB=0 EC=0
check_items()
{
	wait_until 3 hk_eq "$EA" cl_stats "$A" 'str(d["itemsSent"])'
	wait_until 3 hk_eq "$EB" cl_stats "$B" 'str(d["itemsSent"])'
	wait_until 3 hk_eq "$EC" cl_stats "$C" 'str(d["itemsSent"])'
	# Nothing more may follow (a loop would). A node queues what it
	# passes on while it applies a batch, before it answers: once no
	# node has anything queued or in flight, a looping item has been
	# sent and counted.
	wait_until 3 cl_drained "$A" "$B" "$C"
	assert_eq "$EA $EB $EC" "$(cl_stats "$A" 'str(d["itemsSent"])') $(cl_stats "$B" 'str(d["itemsSent"])') $(cl_stats "$C" 'str(d["itemsSent"])')" "items sent by A B C after: $1"
}

hk_log "register on A -> B and C within 1 s"
hk_register "$A" SVC i-1 UP 6
wait_until 1 cl_has "$B" SVC i-1
wait_until 1 cl_has "$C" SVC i-1
EA=$((EA + 2))
check_items register

hk_log "heartbeats on A keep the lease alive on B and C"
# Each heartbeat must reach B and C as a renewal before the next is sent.
RB=$(hk_metric heureka_renewals_total "$PB")
RC=$(hk_metric heureka_renewals_total "$PC")
for i in 1 2 3 4 5 6 7 8; do
	assert_http 200 PUT "${A}apps/SVC/i-1"
	EA=$((EA + 2))
	wait_until 3 hk_eq $((RB + i)) hk_metric heureka_renewals_total "$PB"
	wait_until 3 hk_eq $((RC + i)) hk_metric heureka_renewals_total "$PC"
done
cl_has "$B" SVC i-1 || fail "lease expired on B despite heartbeats on A"
cl_has "$C" SVC i-1 || fail "lease expired on C despite heartbeats on A"
check_items heartbeats
# The rest uses a normal lease, so slow checks cannot let it expire.
hk_register "$A" SVC i-1 UP 90
EA=$((EA + 2))
check_items re-register

hk_log "status override on C -> A and B"
assert_http 200 PUT "${C}apps/SVC/i-1/status?value=OUT_OF_SERVICE"
EC=$((EC + 2))
for u in "$A" "$B"; do
	wait_until 2 hk_eq OUT_OF_SERVICE cl_field "$u" SVC i-1 status
	assert_eq OUT_OF_SERVICE "$(cl_field "$u" SVC i-1 overriddenStatus)" "override on $u"
done
check_items override

hk_log "override deletion on B -> A and C"
assert_http 200 DELETE "${B}apps/SVC/i-1/status?value=UP"
EB=$((EB + 2))
for u in "$A" "$C"; do
	wait_until 2 hk_eq UP cl_field "$u" SVC i-1 status
	assert_eq UNKNOWN "$(cl_field "$u" SVC i-1 overriddenStatus)" "override left on $u"
done
check_items override-deletion

hk_log "metadata update on A -> B and C"
assert_http 200 PUT "${A}apps/SVC/i-1/metadata?color=blue"
EA=$((EA + 2))
for u in "$B" "$C"; do
	wait_until 2 sh -c "curl -s -H 'Accept: application/json' '${u}apps/SVC/i-1' | grep -q '\"color\":\"blue\"'"
done
check_items metadata

hk_log "cancel on B -> gone everywhere"
assert_http 200 DELETE "${B}apps/SVC/i-1"
EB=$((EB + 2))
for u in "$A" "$C"; do
	wait_until 1 sh -c "! curl -s -o /dev/null -w '%{http_code}' '${u}apps/SVC/i-1' | grep -q 200"
done
check_items cancel

hk_log "evictions are not replicated"
hk_register "$C" SVC i-2 UP 1
EC=$((EC + 2))
wait_until 2 cl_has "$A" SVC i-2
wait_until 10 sh -c "! curl -s -o /dev/null -w '%{http_code}' '${A}apps/SVC/i-2' | grep -q 200"
wait_until 10 sh -c "! curl -s -o /dev/null -w '%{http_code}' '${B}apps/SVC/i-2' | grep -q 200"
wait_until 10 sh -c "! curl -s -o /dev/null -w '%{http_code}' '${C}apps/SVC/i-2' | grep -q 200"
check_items eviction

hk_log "measure: register on A -> visible on B and C"
echo "MEASURE register->visible on both peers: $(cl_measure_register "$A" LAT 20 "$B" "$C")" >&2
EA=$((EA + 40))
check_items latency

hk_stop A
hk_stop B
hk_stop C

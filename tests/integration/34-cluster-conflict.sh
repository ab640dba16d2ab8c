#!/bin/sh
# 34-cluster-conflict.sh: the per-item results of a replicated heartbeat
# (§6.2, issue 3 scenario 6). A heartbeat replicated to a peer that does
# not know the instance is answered 404 and the sender then registers its
# copy there; a heartbeat carrying an older lastDirtyTimestamp is answered
# 409 with the peer's newer copy, which the sender adopts; a newer one
# makes the peer answer 404 and take the sender's copy. Anti-entropy is off
# so that only these paths can repair anything.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

set -- $(cl_ports 2)
PA=$1 PB=$2
PEERS="http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/"
NOAE="-D eureka.server.anti-entropy-interval-ms=0"
cl_start A "$PA" "$PEERS" $NOAE
cl_start B "$PB" "$PEERS" $NOAE
A=$HK_URL_A B=$HK_URL_B
REP="x-netflix-discovery-replication: true"

# Register APP/ID at BASE with lastDirtyTimestamp TS and metadata v=V;
# extra curl args (e.g. the replication header) follow.
reg_ts()
{
	local base=$1 app=$2 id=$3 ts=$4 v=$5
	shift 5
	hk_instance_json "$app" "$id" |
	    sed -e "s/\"lastDirtyTimestamp\":\"[0-9]*\"/\"lastDirtyTimestamp\":\"$ts\"/" \
		-e "s/\"zone\":\"default\"/\"zone\":\"default\",\"v\":\"$v\"/" \
	    >"$HK_ROOT/reg.json"
	assert_http 204 POST "${base}apps/$app" -H 'Content-Type: application/json' \
	    --data-binary @"$HK_ROOT/reg.json" "$@"
}

T1=$(cl_now_ms)
T2=$((T1 + 1000))
T3=$((T1 + 2000))

hk_log "404: the peer does not know the instance"
reg_ts "$A" SVC x-1 "$T1" 1 -H "$REP"
# A queues what it replicates as it applies the write: once nothing is
# queued or in flight, a re-replication would have been sent and counted.
wait_until 3 cl_drained "$A" "$B"
assert_eq 0 "$(cl_stats "$A" 'str(d["itemsSent"])')" "items A sent for a replicated registration"
cl_has "$B" SVC x-1 && fail "a replicated registration was re-replicated"
assert_http 200 PUT "${A}apps/SVC/x-1"
wait_until 3 cl_has "$B" SVC x-1
[ "$(cl_stats "$A" 'str(d["peers"][0]["notFound"])')" -ge 1 ] ||
    fail "A counted no 404 answer"

hk_log "409: the peer holds a newer copy, the sender adopts it"
reg_ts "$A" SVC y-1 "$T1" 1
wait_until 3 cl_has "$B" SVC y-1
reg_ts "$B" SVC y-1 "$T2" 2 -H "$REP"
assert_eq "$T1" "$(cl_field "$A" SVC y-1 lastDirtyTimestamp)" "A before the heartbeat"
assert_http 200 PUT "${A}apps/SVC/y-1"
wait_until 3 hk_eq "$T2" cl_field "$A" SVC y-1 lastDirtyTimestamp
hk_curl -H 'Accept: application/json' "${A}apps/SVC/y-1" | grep -q '"v":"2"' ||
    fail "A did not adopt B's metadata"
[ "$(cl_stats "$A" 'str(d["peers"][0]["conflicts"])')" -ge 1 ] ||
    fail "A counted no 409 answer"

hk_log "newer on the sender: the peer answers 404 and takes the sender's copy"
reg_ts "$A" SVC y-1 "$T3" 3 -H "$REP"
assert_eq "$T2" "$(cl_field "$B" SVC y-1 lastDirtyTimestamp)" "B before the heartbeat"
assert_http 200 PUT "${A}apps/SVC/y-1"
wait_until 3 hk_eq "$T3" cl_field "$B" SVC y-1 lastDirtyTimestamp
hk_curl -H 'Accept: application/json' "${B}apps/SVC/y-1" | grep -q '"v":"3"' ||
    fail "B did not take A's newer copy"
wait_until 3 cl_same "$A" "$B"

hk_stop A
hk_stop B

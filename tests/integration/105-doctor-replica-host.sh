#!/bin/sh
# 105-doctor-replica-host.sh: the doctor's `peer` finding for Eureka's
# replica check (docs/console.md). Java Eureka lists a peer URL under
# "available-replicas" only if an instance of the server's own
# application (here HEUREKA) is registered with the URL's host as its
# hostName (StatusUtil.isReplicaAvailable, PeerEurekaNodes.isInstanceURL);
# a mismatch is the usual cause of "unavailable-replicas" (Netflix/eureka
# #1008). Node A names its peer B as 127.0.0.1; B registers itself (a
# `heureka agent`, as a Spring Eureka server is its own client) as
#   - hostName "localhost", ipAddr 127.0.0.1: A says the host is only its
#     ipAddr;
#   - hostName "b.invalid", ipAddr 10.0.0.9: A says no instance has it;
#   - hostName 127.0.0.1: the finding clears;
# each seen in GET heureka/doctor and `heureka doctor` (exit 1, then 0).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_need_cli
T=$(hk_tmp)
set -- $(cl_ports 2)
PA=$1 PB=$2
UA=http://127.0.0.1:$PA/eureka/
UB=http://127.0.0.1:$PB/eureka/
FAST="-D heureka.doctor.interval-ms=200 \
-D eureka.server.anti-entropy-interval-ms=300 \
-D eureka.server.wait-time-in-ms-when-sync-empty=0"

peer_detail()
{
	hk_curl -o "$T/doc.json" "${UA}heureka/doctor" &&
	    hk_json '"".join(f["detail"] for f in d["findings"] if f["kind"] == "peer" and f["id"] == "'"$UB"'")' "$T/doc.json"
}
said() { peer_detail | grep -q "$1"; }
none() { [ -z "$(peer_detail)" ]; }
# B's own registration, with host name HOST and address IP, sent to B
# (it replicates to A).
self_agent()
{
	"$HEUREKA" agent --app heureka --instance-id "b:heureka:$PB" \
	    --hostname "$1" --ip "$2" --port "$PB" --server "$UB" \
	    --renewal-interval 1 >"$T/agent.out" 2>&1 &
	AGENT=$!
	hk_own "$AGENT"
}
stop_agent()
{
	kill "$AGENT" 2>/dev/null || true
	wait "$AGENT" 2>/dev/null || true
	hk_disown "$AGENT"
}
host_on_a()
{
	hk_curl -fo "$T/i.json" -H 'Accept: application/json' \
	    "${UA}apps/HEUREKA/b:heureka:$PB" &&
	    [ "$(hk_json 'd["instance"]["hostName"]' "$T/i.json")" = "$1" ]
}

hk_start B -p "$PB" --peers "$UA" $FAST
hk_start A -p "$PA" --peers "$UB" $FAST

hk_log "nodes that do not register themselves: nothing to judge"
"$HEUREKA" doctor --server "$UA" >"$T/out" 2>&1 ||
    fail "heureka doctor on a quiet pair: $(cat "$T/out")"

hk_log "B registers as localhost, A names it 127.0.0.1"
self_agent localhost 127.0.0.1
wait_until 20 host_on_a localhost
wait_until 20 said "its host 127.0.0.1 is the ipAddr of HEUREKA instance b:heureka:$PB, registered with hostName localhost"
assert_contains "unavailable-replicas" "$(peer_detail)" "names the symptom"
rc=0
"$HEUREKA" doctor --server "$UA" >"$T/out" 2>&1 || rc=$?
assert_eq 1 "$rc" "heureka doctor exit status"
assert_contains "unavailable-replicas" "$(cat "$T/out")" "heureka doctor prints it"
stop_agent

hk_log "B registers under a host name and address A's URL does not name"
self_agent b.invalid 10.0.0.9
wait_until 20 host_on_a b.invalid
wait_until 20 said "no instance of HEUREKA registered here has its host 127.0.0.1 as hostName (1 registered: b.invalid)"
stop_agent

hk_log "B registers as 127.0.0.1: the finding clears"
self_agent 127.0.0.1 127.0.0.1
wait_until 20 host_on_a 127.0.0.1
wait_until 20 none
wait_until 20 "$HEUREKA" doctor --server "$UA"
stop_agent
hk_stop A
hk_stop B

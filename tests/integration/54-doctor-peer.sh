#!/bin/sh
# 54-doctor-peer.sh: the doctor's `peer` findings (docs/console.md). Node
# A's peer list (a .properties file) names
#   - A itself as 127.0.0.1 (not by its host name: Java Eureka nodes,
#     which compare host names, would replicate to themselves and show it
#     under unavailable-replicas);
#   - a port where nothing listens yet (unreachable);
#   - node C, whose authentication refuses A (no credentials in the URL).
# Each is reported with its reason; the unreachable one clears once a
# node starts there, and the self one once a SIGHUP reloads a list
# without it. The findings are also in /metrics and `heureka doctor`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_need_cli
T=$(hk_tmp)
set -- $(cl_ports 3)
PA=$1 PB=$2 PC=$3
SELF=http://127.0.0.1:$PA/eureka/
LATE=http://127.0.0.1:$PB/eureka/
LOCKED=http://127.0.0.1:$PC/eureka/
HOST=$(hostname)
[ "$HOST" != 127.0.0.1 ] || fail "this test needs a host name other than 127.0.0.1"

export SPRING_SECURITY_USER_PASSWORD="c-$$-pw"
hk_start C -p "$PC" -D heureka.security.peer.name=cpeer
unset SPRING_SECURITY_USER_PASSWORD

echo "eureka.client.service-url.defaultZone=$SELF,$LATE,$LOCKED" >"$T/a.properties"
hk_start A -c "$T/a.properties" -p "$PA" -D heureka.doctor.interval-ms=200 \
    -D eureka.server.anti-entropy-interval-ms=300 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
U=$HK_URL_A

peer_detail()
{
	hk_curl -o "$T/doc.json" "${U}heureka/doctor" &&
	    hk_json '"".join(f["detail"] for f in d["findings"] if f["kind"] == "peer" and f["id"] == "'"$1"'")' "$T/doc.json"
}
said() { peer_detail "$1" | grep -q "$2"; }
none() { [ -z "$(peer_detail "$1")" ]; }

hk_log "the three peer findings"
wait_until 15 said "$SELF" "names this node itself, but not by its host name"
wait_until 15 said "$LATE" "unreachable"
wait_until 15 said "$LOCKED" "refuses our credentials (answered 401)"
assert_eq 3 "$(hk_metric 'heureka_doctor_findings{kind="peer"}' "$HK_PORT_A")" "in /metrics"
rc=0
"$HEUREKA" doctor --server "$U" >"$T/out" 2>&1 || rc=$?
assert_eq 1 "$rc" "heureka doctor exit status"
assert_contains "refuses our credentials" "$(cat "$T/out")" "heureka doctor prints it"

hk_log "a node starts where nothing listened: that finding clears"
hk_start B -p "$PB" --peers "$SELF"
wait_until 20 none "$LATE"
said "$LOCKED" "refuses" || fail "the credentials finding went away too"

hk_log "SIGHUP with a list without A itself: that finding clears"
echo "eureka.client.service-url.defaultZone=$LATE,$LOCKED" >"$T/a.properties"
eval "kill -HUP \$HK_PID_A"
wait_until 20 none "$SELF"
said "$LOCKED" "refuses" || fail "the credentials finding went away"
hk_stop A
hk_stop B
hk_stop C

#!/bin/sh
# 29-cluster-auth.sh: a three-node cluster with authentication on and the
# peer credentials in the peer URLs (docs/security.md) replicates, syncs
# a restarted node and repairs by anti-entropy as it does without. A
# client with the user's (non-peer) credentials that sends the
# x-netflix-discovery-replication header is handled as a client: its
# registration is replicated (counted in the sender's heureka/stats),
# while the same header from a peer is honoured (not replicated again).
# No password shows in any node's log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

UPW="u-Secr3t-$$-pw"
PPW="p-Secr3t-$$-pw"
# Every helper of lib.sh speaks as the user (a client); later -u win.
HK_AUTH="alice:$UPW"
hk_curl()
{
	curl -sS --max-time "$HK_CURL_MAX_TIME" --connect-timeout 5 \
	    -u "$HK_AUTH" "$@"
}
# python EXPR over node BASE's heureka/stats, asked as a peer.
pst()
{
	hk_curl -u "hk-peer:$PPW" -o "$HK_ROOT/pst.json" "${1}heureka/stats" ||
	    fail "GET ${1}heureka/stats"
	hk_json "$2" "$HK_ROOT/pst.json"
}
sent() { pst "$1" 'str(d["itemsSent"])'; }
ready() { [ "$(pst "$1" 'str(d["ready"])')" = True ]; }
ge() { [ "$("$@")" -ge "$WANT" ]; }

CL_PEER_AUTH="hk-peer:$PPW@"
SEC="-D spring.security.user.name=alice -D heureka.security.peer.name=hk-peer"
export SPRING_SECURITY_USER_PASSWORD=$UPW HEUREKA_SECURITY_PEER_PASSWORD=$PPW
# shellcheck disable=SC2086
cl_trio $SEC
unset SPRING_SECURITY_USER_PASSWORD HEUREKA_SECURITY_PEER_PASSWORD
for n in "$A" "$B" "$C"; do
	wait_until 10 ready "$n"
done

hk_log "replication with peer credentials"
hk_register "$A" SVC i-1
hk_register "$B" SVC i-2
hk_register "$C" OTHER o-1
wait_until 5 cl_same "$A" "$B" "$C"
cl_has "$C" SVC i-1 || fail "SVC/i-1 not on C"
assert_eq 0 "$(pst "$A" 'str(sum(p["failures"] for p in d["peers"]))')" \
    "replication failures on A"

hk_log "a client's spoofed replication header is ignored"
wait_until 5 hk_eq 0 pst "$A" 'str(sum(p["queue"] + p["inflight"] for p in d["peers"]))'
S0=$(sent "$A")
hk_instance_json SVC spoof >"$HK_ROOT/spoof.json"
assert_http 204 POST "${A}apps/SVC" -H 'Content-Type: application/json' \
    -H 'x-netflix-discovery-replication: true' \
    --data-binary @"$HK_ROOT/spoof.json"
# Replicated as a client's: one item to each of the two peers.
WANT=$((S0 + 2))
wait_until 5 ge sent "$A"
wait_until 5 cl_has "$B" SVC spoof
wait_until 5 cl_has "$C" SVC spoof

hk_log "a peer's replication header is honoured (not replicated again)"
S0=$(sent "$B")
hk_instance_json SVC from-peer >"$HK_ROOT/peer.json"
assert_http 204 POST "${B}apps/SVC" -u "hk-peer:$PPW" \
    -H 'Content-Type: application/json' \
    -H 'x-netflix-discovery-replication: true' \
    --data-binary @"$HK_ROOT/peer.json"
# Then a client's registration, which is replicated: once its two items
# are out, the peer's registration must not have added any.
hk_register "$B" SVC after-peer
WANT=$((S0 + 2))
wait_until 5 ge sent "$B"
wait_until 5 hk_eq 0 pst "$B" 'str(sum(p["queue"] + p["inflight"] for p in d["peers"]))'
assert_eq $((S0 + 2)) "$(sent "$B")" "items B sent"

hk_log "anti-entropy repairs what replication never carried"
# SVC/from-peer is on B only; A and C pull it with the peer credentials.
wait_until 10 cl_same "$A" "$B" "$C"
cl_has "$A" SVC from-peer || fail "anti-entropy did not bring SVC/from-peer to A"
assert_eq True "$(pst "$A" 'str(sum(p["antiEntropy"]["adopted"] for p in d["peers"]) >= 1)')" \
    "A adopted by anti-entropy"

hk_log "a restarted node syncs from its peers"
hk_kill B
hk_register "$A" SVC i-3
assert_http 200 DELETE "${A}apps/SVC/i-1"
wait_until 5 cl_same "$A" "$C"
export SPRING_SECURITY_USER_PASSWORD=$UPW HEUREKA_SECURITY_PEER_PASSWORD=$PPW
# shellcheck disable=SC2086
cl_start B "$PB" "$PEERS" $SEC
unset SPRING_SECURITY_USER_PASSWORD HEUREKA_SECURITY_PEER_PASSWORD
wait_until 10 ready "$B"
assert_eq True "$(pst "$B" 'str(d["syncCount"] >= 5)')" "instances B synced"
wait_until 5 cl_same "$A" "$B" "$C"
cl_has "$B" SVC i-1 && fail "cancelled SVC/i-1 came back on B"

hk_log "the user is no peer"
assert_http 403 GET "${A}heureka/apps"
assert_http 401 GET "${A}heureka/apps" -u "hk-peer:$UPW"

hk_stop A
hk_stop B
hk_stop C
for n in A B C; do
	for pw in "$UPW" "$PPW"; do
		grep -v '^=== ' "$HK_ROOT/$n.log" | grep -F -- "$pw" &&
		    fail "a password in the log of $n"
	done
done
exit 0

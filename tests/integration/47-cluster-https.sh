#!/bin/sh
# 47-cluster-https.sh: three nodes started from etc/heurekad-secure.yml
# (TLS only, peers over https with mutual TLS) replicate, sync a restarted
# node and repair by anti-entropy exactly as they do over http (30, 31,
# 32); the ports speak nothing but TLS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
. "$(dirname "$0")/tls-lib.sh"

hk_tls_certs "$(hk_tmp)"
cl_https "$HK_TLS_DIR"
# Handshakes under ASan or on a loaded machine can outlast Spring's
# 200 ms read timeout; 2 s makes retries rarer, but nothing below relies
# on it: a batch that timed out is retried (and its peer is unreachable
# until one succeeds), so the test awaits the state (the items arrived,
# both https peers reachable again) and asserts what a TLS failure
# would leave instead: items dropped (401/403) or a refused peer
# certificate in the log. Before, it asserted no failed batch at all,
# which a slow handshake past the 2 s timeout broke.
CL_FAST="$CL_FAST -D eureka.server.peer-node-read-timeout-ms=2000"
cl_trio
assert_contains "https://" "$A" "node URL"

hk_log "the ports speak TLS only"
if curl -sS --max-time 5 -o /dev/null "http://127.0.0.1:$PA/eureka/apps" 2>/dev/null; then
	fail "plain http answered on A's TLS port"
fi

hk_log "replication: register on A -> B and C"
hk_register "$A" SVC i-1
wait_until 15 cl_has "$B" SVC i-1
wait_until 15 cl_has "$C" SVC i-1
assert_http 200 PUT "${A}apps/SVC/i-1/status?value=OUT_OF_SERVICE"
wait_until 15 hk_eq OUT_OF_SERVICE cl_field "$C" SVC i-1 status
wait_until 15 hk_eq 2 cl_stats "$A" 'str(len([p for p in d["peers"] if p["url"].startswith("https://") and p["reachable"]]))'
assert_eq 0 "$(cl_stats "$A" 'str(sum(p["failedItems"] for p in d["peers"]))')" "A's items dropped (401/403)"
if grep -q "TLS: peer certificate refused" "$HK_ROOT/A.log"; then
	fail "A's peers refused a certificate: $(grep "TLS: peer" "$HK_ROOT/A.log" | head -1)"
fi
echo "figures: A's failed batches (timeouts, retried): $(cl_stats "$A" 'str(sum(p["failures"] for p in d["peers"]))')" >&2

hk_log "start-up sync: C restarted empty copies what it missed"
hk_kill C
hk_register "$A" SVC i-2
hk_register "$B" OTHER o-1
# Whichever peer C syncs from must hold all three.
wait_until 5 cl_same "$A" "$B"
cl_start C "$PC" "$PEERS"
wait_until 10 hk_eq true cl_stats "$C" 'str(d["ready"]).lower()'
# A's and B's queued batches (i-2, o-1) race the sync and may reach C
# first; i-1 was replicated before the kill, so only the sync brings it.
n=$(cl_stats "$C" 'str(d["syncCount"])')
[ "$n" -ge 1 ] && [ "$n" -le 3 ] ||
    fail "instances C copied by its start-up sync: $n, expected 1 to 3"
cl_has "$C" SVC i-1 || fail "C is ready without i-1 (the sync's to bring)"
wait_until 3 cl_same "$A" "$B" "$C"

hk_log "anti-entropy: an instance only B holds reaches A and C"
# Taken as replicated, B does not pass it on: only anti-entropy can.
hk_instance_json SVC only-b >"$HK_ROOT/only-b.json"
assert_http 204 POST "${B}apps/SVC" -H 'Content-Type: application/json' \
    -H 'x-netflix-discovery-replication: true' \
    --data-binary @"$HK_ROOT/only-b.json"
wait_until 10 cl_has "$A" SVC only-b
wait_until 10 cl_has "$C" SVC only-b
for u in "$A" "$C"; do
	assert_eq True "$(cl_stats "$u" 'str(sum(p["antiEntropy"]["adopted"] for p in d["peers"]) >= 1)')" "$u adopted by anti-entropy"
done
wait_until 5 cl_same "$A" "$B" "$C"

hk_log "auth: clients need the password, only certificates make peers"
T=(--cacert "$HK_TLS_DIR/ca.pem")
code() { curl -sS -o /dev/null -w '%{http_code}' "${T[@]}" "$@"; }
assert_eq 401 "$(code "${A}apps")" "no certificate, no password"
assert_eq 200 "$(code -u eureka:client-pw "${A}apps")" "client password"
assert_eq 403 "$(code -u eureka:client-pw "${A}heureka/stats")" "client on a peer endpoint"
assert_eq 200 "$(code --cert "$HK_TLS_DIR/peer.pem" --key "$HK_TLS_DIR/peer.key" "${A}heureka/stats")" "peer certificate"

for n in A B C; do hk_stop "$n"; done

#!/bin/sh
# 46-tls-peer-refused.sh: a node refuses https:// peers whose certificate
# has expired, names another host, or comes from a CA it does not trust
# (heureka.peer.ssl.trust-certificate): its replication batches to them
# fail and are counted (heureka/stats), the reason is logged, and nothing
# reaches them, while a peer with a good certificate gets everything.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

hk_tls_certs "$(hk_tmp)"
D=$HK_TLS_DIR
HK_SCHEME=https
tls_args()	# CERTNAME
{
	echo "-D server.ssl.enabled=true -D server.ssl.certificate=$D/$1.pem" \
	    "-D server.ssl.certificate-private-key=$D/$1.key" \
	    "-D eureka.server.wait-time-in-ms-when-sync-empty=0"
}
# The peers, standalone; --insecure only for the tests' own look at them.
HK_CURL_TLS=(--insecure)
# shellcheck disable=SC2046
hk_start EXP $(tls_args expired)
# shellcheck disable=SC2046
hk_start WRONG $(tls_args wronghost)
# shellcheck disable=SC2046
hk_start GOOD $(tls_args server)
url() { echo "https://localhost:$1/eureka/"; }
FAST="-D eureka.server.anti-entropy-interval-ms=500 -D eureka.server.peer-node-read-timeout-ms=1000"

# shellcheck disable=SC2046
hk_start A $(tls_args server) $FAST -D heureka.peer.ssl.trust-certificate="$D/ca.pem" \
    --peers "$(url "$HK_PORT_EXP"),$(url "$HK_PORT_WRONG"),$(url "$HK_PORT_GOOD")"
# X trusts another CA only: even GOOD is refused.
# shellcheck disable=SC2046
hk_start X $(tls_args server) $FAST -D heureka.peer.ssl.trust-certificate="$D/otherca.pem" \
    --peers "$(url "$HK_PORT_GOOD")"

peer_failures()	# NODE PORT: failed batches of NODE towards the peer on PORT
{
	eval "local u=\$HK_URL_$1"
	hk_curl "${u}heureka/stats" | "$HK_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print([p["failures"] for p in d["peers"] if (":%s/" % sys.argv[1]) in p["url"]][0])' "$2"
}
has()	# NODE ID: does NODE hold SVC/ID?
{
	eval "local u=\$HK_URL_$1"
	[ "$(hk_curl -o /dev/null -w '%{http_code}' "${u}apps/SVC/$2")" = 200 ]
}
at_least_one() { [ "$("$@")" -ge 1 ]; }

hk_log "A replicates to GOOD, and to neither EXP nor WRONG"
hk_register "$HK_URL_A" SVC from-a
wait_until 5 has GOOD from-a
wait_until 5 at_least_one peer_failures A "$HK_PORT_EXP"
wait_until 5 at_least_one peer_failures A "$HK_PORT_WRONG"
assert_eq 0 "$(peer_failures A "$HK_PORT_GOOD")" "A's failures towards GOOD"
has EXP from-a && fail "replicated to a peer with an expired certificate"
has WRONG from-a && fail "replicated to a peer with another host's certificate"
wait_until 5 grep -q "peer certificate refused: certificate has expired" "$HK_ROOT/A.log"
wait_until 5 grep -q "peer certificate refused: hostname mismatch" "$HK_ROOT/A.log"

hk_log "X, trusting another CA, replicates nothing to GOOD"
hk_register "$HK_URL_X" SVC from-x
wait_until 5 at_least_one peer_failures X "$HK_PORT_GOOD"
has GOOD from-x && fail "replicated to a peer from an untrusted CA"
wait_until 5 grep -q "peer certificate refused: unable to get local issuer certificate" "$HK_ROOT/X.log"
for n in A X EXP WRONG GOOD; do hk_stop "$n"; done

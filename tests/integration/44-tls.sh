#!/bin/sh
# 44-tls.sh: heurekad with server.ssl.* (certificates made here by
# tls-lib.sh). curl, the heureka CLI and the agent (libheureka) work over
# TLS with the CA; plaintext to the TLS port gets nothing; TLS 1.0 and 1.1
# are refused; libheureka refuses a server from another CA, an expired
# certificate and a wrong host name (and --insecure overrides, with a
# warning); client-auth need refuses no certificate and one from another
# CA, and takes the peer's; the plaintext port serves /health only, on
# loopback; bad TLS settings exit 78 naming the key, with --check-config
# too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

hk_need_cli

hk_tls_certs "$(hk_tmp)"
D=$HK_TLS_DIR
T=$(hk_tmp)
tls_args()	# CERTNAME: serve with DIR/CERTNAME.pem
{
	echo "-D server.ssl.enabled=true -D server.ssl.certificate=$D/$1.pem" \
	    "-D server.ssl.certificate-private-key=$D/$1.key" \
	    "-D eureka.server.wait-time-in-ms-when-sync-empty=0"
}
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$D/ca.pem")
# shellcheck disable=SC2046
hk_start S $(tls_args server) -D heureka.server.plain-port=0 \
    -D heureka.server.plain-port-file="$T/plain.port"
P=$HK_PORT_S
S=https://localhost:$P/eureka/

hk_log "curl over TLS, by IP and by name"
hk_register "$HK_URL_S" SVC i-1
assert_http 200 GET "${S}apps/SVC/i-1" -H 'Accept: application/json'
assert_eq i-1 "$(hk_json 'd["instance"]["instanceId"]')" "instance over TLS"

hk_log "the CLI and the agent (libheureka) over TLS with --cacert"
out=$("$HEUREKA" apps --cacert "$D/ca.pem" --server "$S") ||
    fail "heureka apps over TLS failed: $out"
assert_contains "i-1" "$out" "heureka apps"
"$HEUREKA" agent --app tlsagent --port 19091 --hostname agent.local \
    --ip 127.0.0.1 --renewal-interval 1 --cacert "$D/ca.pem" \
    --server "$S" >"$T/agent.out" 2>&1 &
AGENT=$!
hk_own "$AGENT"
agent_registered()
{
	"$HEUREKA" get TLSAGENT agent.local:tlsagent:19091 --cacert "$D/ca.pem" \
	    --server "$S" >/dev/null 2>&1
}
wait_until 10 agent_registered
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exited $? after SIGTERM: $(cat "$T/agent.out")"
hk_disown "$AGENT"
assert_http 404 GET "${S}apps/TLSAGENT/agent.local:tlsagent:19091"

hk_log "plaintext to the TLS port: no HTTP answer"
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$P/eureka/apps" 2>/dev/null) || true
assert_eq 000 "$code" "HTTP status of plaintext to the TLS port"
hk_alive S

hk_log "TLS 1.0 and 1.1 refused; 1.2 and 1.3 accepted"
# Without the system's openssl.cnf and at security level 0 the client
# offers the old versions, so the refusal seen is the server's own
# "protocol version" alert. An openssl built without them cannot offer
# them at all; the handshake must fail then too.
for v in -tls1 -tls1_1; do
	if OPENSSL_CONF=/dev/null openssl s_client -connect "127.0.0.1:$P" "$v" \
	    -cipher 'DEFAULT:@SECLEVEL=0' -CAfile "$D/ca.pem" \
	    </dev/null >"$T/s_client.out" 2>&1; then
		fail "handshake with $v succeeded: $(grep -E 'Protocol|Cipher' "$T/s_client.out")"
	fi
	if grep -q 'no protocols available\|unknown option' "$T/s_client.out"; then
		hk_log "$v: this openssl cannot offer it (handshake failed client-side)"
	else
		grep -q 'alert protocol version' "$T/s_client.out" ||
		    fail "$v: no protocol-version refusal: $(tail -5 "$T/s_client.out")"
	fi
done
for v in -tls1_2 -tls1_3; do
	openssl s_client -connect "127.0.0.1:$P" "$v" -CAfile "$D/ca.pem" \
	    -verify_return_error </dev/null >"$T/s_client.out" 2>&1 ||
	    fail "handshake with $v failed: $(tail -5 "$T/s_client.out")"
done

hk_log "the client library refuses a CA it does not trust"
if "$HEUREKA" apps --cacert "$D/otherca.pem" --server "$S" 2>"$T/err"; then
	fail "heureka apps trusted a server from another CA"
fi
assert_contains "certificate refused" "$(cat "$T/err")" "reason for another CA"
if "$HEUREKA" apps --server "$S" 2>"$T/err"; then
	fail "heureka apps trusted the test CA without --cacert"
fi

hk_log "... an expired certificate and a wrong host name"
HK_CURL_TLS=(--insecure)	# only to see them start
# shellcheck disable=SC2046
hk_start E $(tls_args expired)
# shellcheck disable=SC2046
hk_start W $(tls_args wronghost)
HK_CURL_TLS=(--cacert "$D/ca.pem")
if "$HEUREKA" apps --cacert "$D/ca.pem" --server "https://localhost:$HK_PORT_E/eureka/" 2>"$T/err"; then
	fail "heureka apps accepted an expired certificate"
fi
assert_contains "certificate has expired" "$(cat "$T/err")" "reason (expired)"
if "$HEUREKA" apps --cacert "$D/ca.pem" --server "https://localhost:$HK_PORT_W/eureka/" 2>"$T/err"; then
	fail "heureka apps accepted a certificate for another host"
fi
assert_contains "hostname mismatch" "$(cat "$T/err")" "reason (wrong host)"
out=$("$HEUREKA" apps --insecure --server "https://localhost:$HK_PORT_W/eureka/" 2>&1) ||
    fail "--insecure did not connect: $out"
assert_contains "verification is OFF" "$out" "--insecure warning"
hk_stop E
hk_stop W

hk_log "the plaintext port: /health only, on 127.0.0.1"
PP=$(tr -dc 0-9 <"$T/plain.port")
assert_contains "plaintext port (health only) on 127.0.0.1:$PP" "$(cat "$HK_ROOT/S.log")" "plain port log"
HK_CURL_TLS=()
assert_http 200 GET "http://127.0.0.1:$PP/health"
assert_http 404 GET "http://127.0.0.1:$PP/eureka/apps"
# Only GET and HEAD are taken there: writes are refused by evhttp.
assert_http 501 POST "http://127.0.0.1:$PP/eureka/apps/SVC"
HK_CURL_TLS=(--cacert "$D/ca.pem")
hk_stop S

hk_log "client-auth need: no certificate and another CA's refused, the peer's taken"
NEED="-D server.ssl.client-auth=need -D server.ssl.trust-certificate=$D/ca.pem"
HK_CURL_TLS=(--cacert "$D/ca.pem" --cert "$D/peer.pem" --key "$D/peer.key")
# shellcheck disable=SC2046
hk_start M $(tls_args server) $NEED
M=https://localhost:$HK_PORT_M/eureka/
assert_http 200 GET "${M}apps"
HK_CURL_TLS=(--cacert "$D/ca.pem")
code=$(hk_curl -o /dev/null -w '%{http_code}' "${M}apps" 2>/dev/null) || true
assert_eq 000 "$code" "no client certificate"
code=$(hk_curl -o /dev/null -w '%{http_code}' --cert "$D/other.pem" \
    --key "$D/other.key" "${M}apps" 2>/dev/null) || true
assert_eq 000 "$code" "a client certificate from another CA"
"$HEUREKA" apps --cacert "$D/ca.pem" --cert "$D/peer.pem" --key "$D/peer.key" \
    --server "$M" >/dev/null || fail "heureka apps with the peer certificate"
if "$HEUREKA" apps --cacert "$D/ca.pem" --server "$M" 2>/dev/null; then
	fail "heureka apps without a certificate got through client-auth need"
fi
hk_stop M

hk_log "bad TLS settings exit 78 naming the key"
echo "not a certificate" >"$T/bad.pem"
bad()	# KEY-IN-MESSAGE ARGS...: heurekad must exit 78 and name it
{
	local want=$1 rc=0
	shift
	"$HEUREKAD" -b 127.0.0.1 -p 0 "$@" >"$T/bad.out" 2>&1 || rc=$?
	assert_eq 78 "$rc" "exit status for $want ($(tail -1 "$T/bad.out"))"
	assert_contains "$want" "$(cat "$T/bad.out")" "message for $want"
}
ON="-D server.ssl.enabled=true"
bad "server.ssl.certificate: not set" $ON
bad "server.ssl.certificate: $T/missing.pem" $ON -D server.ssl.certificate="$T/missing.pem" \
    -D server.ssl.certificate-private-key="$D/server.key"
bad "server.ssl.certificate: $T/bad.pem: not a usable PEM" $ON \
    -D server.ssl.certificate="$T/bad.pem" -D server.ssl.certificate-private-key="$D/server.key"
bad "server.ssl.certificate-private-key: $T/bad.pem" $ON \
    -D server.ssl.certificate="$D/server.pem" -D server.ssl.certificate-private-key="$T/bad.pem"
bad "server.ssl.certificate-private-key: $D/other.key does not match" $ON \
    -D server.ssl.certificate="$D/server.pem" -D server.ssl.certificate-private-key="$D/other.key"
bad "server.ssl.trust-certificate: not set" $(tls_args server) -D server.ssl.client-auth=need
bad "server.ssl.trust-certificate: $T/bad.pem" $(tls_args server) -D server.ssl.trust-certificate="$T/bad.pem"
bad "server.ssl.client-auth" -D server.ssl.client-auth=maybe
bad "server.ssl.enabled-protocols: TLSv1.1 is not supported" $(tls_args server) \
    -D server.ssl.enabled-protocols=TLSv1.1,TLSv1.2
bad "heureka.peer.ssl.certificate: $T/missing.pem" \
    -D heureka.peer.ssl.certificate="$T/missing.pem" -D heureka.peer.ssl.certificate-private-key="$D/peer.key"
bad "heureka.peer.ssl.trust-certificate: $T/bad.pem" -D heureka.peer.ssl.trust-certificate="$T/bad.pem"
# --check-config loads the files too, so a bad one is caught before a restart.
bad "server.ssl.certificate: $T/missing.pem" --check-config $ON \
    -D server.ssl.certificate="$T/missing.pem" -D server.ssl.certificate-private-key="$D/server.key"
bad "heureka.peer.ssl.trust-certificate: $T/bad.pem" --check-config \
    -D heureka.peer.ssl.trust-certificate="$T/bad.pem"
"$HEUREKAD" --check-config $(tls_args server) >/dev/null ||
    fail "--check-config refused a good TLS configuration"

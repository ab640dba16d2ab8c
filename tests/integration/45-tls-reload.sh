#!/bin/sh
# 45-tls-reload.sh: SIGHUP reloads server.ssl.certificate without dropping
# connections: a keep-alive connection opened before the signal goes on
# working on its old certificate (same socket, serial 1001), new
# connections get the new one (serial 1002); a broken file on a later
# SIGHUP leaves the current certificate in place.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

hk_tls_certs "$(hk_tmp)"
D=$HK_TLS_DIR
T=$(hk_tmp)
cp "$D/server.pem" "$T/cur.pem"
cp "$D/server.key" "$T/cur.key"
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$D/ca.pem")
hk_start S -D server.ssl.enabled=true -D server.ssl.certificate="$T/cur.pem" \
    -D server.ssl.certificate-private-key="$T/cur.key" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
P=$HK_PORT_S

# Serial of the certificate a new connection is served.
new_serial()
{
	openssl s_client -connect "127.0.0.1:$P" -CAfile "$D/ca.pem" \
	    </dev/null 2>/dev/null | openssl x509 -noout -serial | sed 's/^serial=//'
}
assert_eq 1001 "$(new_serial)" "serial before the reload"

# One keep-alive connection across the reload: a request before, one after.
"$HK_PYTHON" - "$P" "$D/ca.pem" "$T" >"$T/ka.out" 2>&1 <<'PY' &
import http.client, os, ssl, sys, time
port, ca, t = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPSConnection("localhost", port, timeout=10,
    context=ssl.create_default_context(cafile=ca))
def get():
    c.request("GET", "/eureka/apps", headers={"Accept": "application/json"})
    r = c.getresponse(); r.read()
    return r.status, c.sock.getsockname()[1], c.sock.getpeercert()["serialNumber"]
before = get()
open(t + "/ka.ready", "w").close()
deadline = time.time() + 20
while not os.path.exists(t + "/ka.go"):
    if time.time() > deadline:
        sys.exit("never told to go on")
    time.sleep(0.05)	# a bounded poll for the script's go-ahead (a state)
after = get()
print("before %d %d %s" % before)
print("after %d %d %s" % after)
PY
KA=$!
hk_own "$KA"
wait_until 10 test -e "$T/ka.ready"

hk_log "SIGHUP with a new certificate in place"
cp "$D/server2.pem" "$T/cur.pem"
kill -HUP "$HK_PID_S"
wait_until 5 grep -q "TLS certificate reloaded" "$HK_ROOT/S.log"
assert_eq 1002 "$(new_serial)" "serial of a new connection after the reload"
touch "$T/ka.go"
wait "$KA" || fail "keep-alive client: $(cat "$T/ka.out")"
hk_disown "$KA"
before=$(sed -n 's/^before //p' "$T/ka.out")
after=$(sed -n 's/^after //p' "$T/ka.out")
set -- $before
assert_eq "200 1001" "$1 $3" "keep-alive request before the reload"
lport=$2
set -- $after
assert_eq "200 $lport 1001" "$1 $2 $3" "same connection, old certificate, after the reload"

hk_log "a broken certificate on SIGHUP: warned, the current one stays"
echo garbage >"$T/cur.pem"
kill -HUP "$HK_PID_S"
wait_until 5 grep -q "TLS certificate not reloaded: server.ssl.certificate" "$HK_ROOT/S.log"
assert_eq 1002 "$(new_serial)" "serial after a failed reload"
assert_http 200 GET "${HK_URL_S}apps"

hk_log "SIGHUP reloads the peers' client certificate"
cp "$D/other.pem" "$T/pc.pem"
cp "$D/other.key" "$T/pc.key"
HK_SCHEME=http
HK_CURL_TLS=()
hk_start A -D eureka.server.wait-time-in-ms-when-sync-empty=0 \
    -D heureka.peer.ssl.certificate="$T/pc.pem" \
    -D heureka.peer.ssl.certificate-private-key="$T/pc.key" \
    -D heureka.peer.ssl.trust-certificate="$D/ca.pem" \
    -D server.ssl.client-auth=none --peers "https://localhost:$P/eureka/"
# S now wants a certificate from ca.pem.
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$D/ca.pem" --cert "$D/peer.pem" --key "$D/peer.key")
hk_stop S
hk_start S -D server.ssl.enabled=true -D server.ssl.certificate="$D/server.pem" \
    -D server.ssl.certificate-private-key="$D/server.key" \
    -D server.ssl.client-auth=need -D server.ssl.trust-certificate="$D/ca.pem" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0 -p "$P"
failures()
{
	curl -sS --max-time 5 "${HK_URL_A}heureka/stats" |
	    "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["peers"][0]["failures"])'
}
at_least_one() { [ "$("$@")" -ge 1 ]; }
HK_CURL_TLS=()
hk_register "$HK_URL_A" SVC via-peer
wait_until 5 at_least_one failures
HK_CURL_TLS=(--cacert "$D/ca.pem" --cert "$D/peer.pem" --key "$D/peer.key")
assert_http 404 GET "${HK_URL_S}apps/SVC/via-peer"
cp "$D/peer.pem" "$T/pc.pem"
cp "$D/peer.key" "$T/pc.key"
kill -HUP "$HK_PID_A"
# The batch was kept: it goes out on the next retry with the new one.
wait_until 15 sh -c "curl -sS -o /dev/null -w '%{http_code}' --cacert '$D/ca.pem' \
    --cert '$D/peer.pem' --key '$D/peer.key' '${HK_URL_S}apps/SVC/via-peer' | grep -qx 200"
hk_stop A
hk_stop S

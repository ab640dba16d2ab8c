#!/bin/bash
# 101-plain-port-limits.sh: the plaintext health port (heureka.server.
# plain-port, TLS on) has a connection cap and the head deadline too
# (issue 21, "Connections and heads"). Before, its evhttp had neither:
# 300 idle connections to it took the descriptors the main port's limits
# had kept in reserve (with a limit of 256, accept failed with EMFILE
# and /health timed out on both ports), and a head dripping a byte a
# second stayed open as long as it went on (evhttp's 10 s timeout
# restarts on every read).
#  1. A descriptor limit of 256, heureka.server.plain-max-connections=8:
#     300 idle connections to the plain port; /health answers on the
#     main (TLS) port and on the plain port all along, the connections
#     past the cap are closed and counted.
#  2. One byte a second to the plain port: closed at the head deadline.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

SLOW="$HK_PYTHON $(dirname "$0")/slowconn.py"
T=$(hk_tmp)
hk_tls_certs "$(hk_tmp)"
D=$HK_TLS_DIR
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$D/ca.pem")

fds()
{
	find "/proc/$HK_PID_s/fd" -mindepth 1 -maxdepth 1 | wc -l
}
# /health on the plain port answers 200.
plain_health()
{
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 \
	    "http://127.0.0.1:$PP/health")" = 200 ]
}
main_health()
{
	[ "$(hk_curl -o /dev/null -w '%{http_code}' --max-time 3 \
	    "https://127.0.0.1:$HK_PORT_s/health")" = 200 ]
}

cat >"$T/heurekad" <<W
#!/bin/sh
ulimit -n 256
exec "$HEUREKAD" "\$@"
W
chmod +x "$T/heurekad"
HEUREKAD=$T/heurekad hk_start s -D server.ssl.enabled=true \
    -D server.ssl.certificate="$D/server.pem" \
    -D server.ssl.certificate-private-key="$D/server.key" \
    -D heureka.server.plain-port=0 \
    -D heureka.server.plain-port-file="$T/plain.port" \
    -D heureka.server.plain-max-connections=8 \
    -D heureka.server.head-timeout-ms=3000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
PP=$(tr -dc 0-9 <"$T/plain.port")
base=$(fds)

hk_log "1. 300 idle connections to the plain port (cap 8, limit 256)"
mkfifo "$T/hold"
$SLOW hold "$PP" 300 0 0 <"$T/hold" >"$T/held" &
hk_own $!
exec 3>"$T/hold"
wait_until 30 grep -q connected "$T/held"
held=$(fds)
echo "figures: 300 idle to the plain port: descriptors $base -> $held; $(cat "$T/held")" >&2
# While they are held (the head deadline is 3 s: answered before it).
main_health || fail "/health on the main port does not answer with 300 idle plain connections (descriptors $held)"
plain_health || fail "/health on the plain port does not answer with 300 idle plain connections (descriptors $held)"
[ "$held" -le $((base + 8 + 4)) ] ||
    fail "descriptors held: $held (base $base, plain cap 8)"
n=$(hk_metric 'heureka_limit_rejections_total{limit="max-connections"}' "$HK_PORT_s")
[ "$n" -ge 250 ] || fail "plain connections closed at the cap counted: $n"
grep -q "heureka.server.plain-max-connections" "$HK_ROOT/s.log" ||
    fail "the cap was not logged"
exec 3>&-

hk_log "2. one byte a second to the plain port"
t=$($SLOW drip "$PP" 1 20)
echo "figures: plain port, one byte a second: closed after $t s (head-timeout 3 s)" >&2
[ "$t" != open ] || fail "a plain-port head dripping a byte a second stayed open 20 s"
main_health || fail "/health on the main port"
plain_health || fail "/health on the plain port"
hk_stop s

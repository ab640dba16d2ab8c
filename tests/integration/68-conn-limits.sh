#!/bin/sh
# 68-conn-limits.sh: connections are counted from their accept, a
# descriptor reserve is kept, and a TLS handshake and a request head each
# have a deadline (issue 21). Figures (descriptors held, RSS) go to the
# log for the note.
#  1. eureka.server.max-connections=50: 200 connections sending
#     unfinished 32 KiB heads hold at most the cap (plus the server's
#     own descriptors), the rest are closed at once and counted; the
#     head deadline then closes the others and the descriptors come back.
#  2. A descriptor limit of 256 and a cap of 900 (above it): 300 idle
#     connections never exhaust the descriptors (no EMFILE), and /health
#     answers once their head deadline has passed.
#  3. One byte every second keeps neither a plain connection (head) nor
#     a TLS one (handshake) open past its deadline; both are counted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

SLOW="$HK_PYTHON $(dirname "$0")/slowconn.py"
T=$(hk_tmp)

# Descriptors and RSS (KiB) of server NAME.
fds()
{
	local pid
	eval "pid=\$HK_PID_$1"
	find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l
}
rss()
{
	local pid
	eval "pid=\$HK_PID_$1"
	awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"
}
limit()
{
	hk_metric "heureka_limit_rejections_total{limit=\"$1\"}" "$2"
}

hk_log "1. cap 50, 200 unfinished 32 KiB heads"
hk_start a -D eureka.server.max-connections=50 \
    -D heureka.server.head-timeout-ms=3000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
PA=$HK_PORT_a
base=$(fds a)
rss0=$(rss a)
mkfifo "$T/hold"
$SLOW hold "$PA" 200 32768 0 <"$T/hold" >"$T/held" &
hk_own $!
exec 3>"$T/hold"
wait_until 20 grep -q connected "$T/held"
sleep 0.5
held=$(fds a)
rss1=$(rss a)
echo "figures: cap 50, 200 heads of 32 KiB: descriptors $base -> $held, RSS $rss0 -> $rss1 KiB" >&2
[ "$held" -le $((base + 50 + 2)) ] ||
    fail "descriptors held with 200 unfinished heads: $held (base $base, cap 50)"
n=$(limit max-connections "$PA")
[ "$n" -ge 140 ] || fail "connections closed at the cap counted: $n"
hk_log "the head deadline frees the rest"
wait_until 15 hk_eq "$base" fds a
exec 3>&-
rss2=$(rss a)
echo "figures: after the head deadline: descriptors $(fds a), RSS $rss2 KiB" >&2
[ "$(limit head-timeout "$PA")" -ge 40 ] || fail "head timeouts not counted"
assert_http 200 GET "http://127.0.0.1:$PA/health"
hk_stop a

hk_log "2. descriptor limit 256, cap 900, 300 idle connections"
cat >"$T/heurekad" <<W
#!/bin/sh
ulimit -n 256
exec "$HEUREKAD" "\$@"
W
chmod +x "$T/heurekad"
HEUREKAD=$T/heurekad hk_start b -D eureka.server.max-connections=900 \
    -D heureka.server.head-timeout-ms=4000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
PB=$HK_PORT_b
mkfifo "$T/hold2"
$SLOW hold "$PB" 300 0 0 <"$T/hold2" >"$T/held2" &
hk_own $!
exec 4>"$T/hold2"
wait_until 20 grep -q connected "$T/held2"
sleep 0.5
held=$(fds b)
echo "figures: limit 256, cap 900, 300 idle: descriptors $held; $(cat "$T/held2")" >&2
[ "$held" -le $((256 - 64 + 8)) ] ||
    fail "descriptors held: $held (limit 256, reserve 64)"
[ "$(limit descriptor-reserve "$PB")" -ge 1 ] || fail "reserve not counted"
grep "accept: " "$HK_ROOT/b.log" && fail "accept failed (EMFILE)"
wait_until 15 sh -c "curl -s -o /dev/null --max-time 2 http://127.0.0.1:$PB/health"
exec 4>&-
hk_stop b

hk_log "3. one byte a second: plain head, TLS handshake"
hk_start c -D heureka.server.head-timeout-ms=2000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
t=$($SLOW drip "$HK_PORT_c" 1 20)
echo "figures: plain, one byte a second: closed after $t s (head-timeout 2 s)" >&2
[ "$t" != open ] || fail "a head dripping a byte a second stayed open 20 s"
[ "$(limit head-timeout "$HK_PORT_c")" -ge 1 ] || fail "head timeout not counted"
hk_stop c
hk_tls_certs "$(hk_tmp)"
D=$HK_TLS_DIR
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$D/ca.pem")
hk_start d -D server.ssl.enabled=true -D server.ssl.certificate="$D/server.pem" \
    -D server.ssl.certificate-private-key="$D/server.key" \
    -D heureka.server.handshake-timeout-ms=2000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
t=$($SLOW drip "$HK_PORT_d" 1 20 tls)
echo "figures: TLS, one handshake byte a second: closed after $t s (handshake-timeout 2 s)" >&2
[ "$t" != open ] || fail "a handshake dripping a byte a second stayed open 20 s"
[ "$(limit handshake-timeout "$HK_PORT_d")" -ge 1 ] ||
    fail "handshake timeout not counted"
assert_http 200 GET "https://127.0.0.1:$HK_PORT_d/health"
hk_stop d

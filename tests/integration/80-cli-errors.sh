#!/bin/sh
# 80-cli-errors.sh: every way a heureka query can fail says what happened
# and exits 2: connection refused, a host name that does not resolve, a
# server that never answers (--timeout), TLS verification, a URL that is
# no Eureka API (404: "the URL must end in /eureka/"), missing or wrong
# credentials (401). None says only "no server answered", and none shows a
# bare status 0 (issue 22; before, every one of these printed "no server
# answered (URL)").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

hk_need_cli
T=$(hk_tmp)

# run_fail WANT_RC PATTERN ARGS...: heureka ARGS exits WANT_RC and its
# stderr contains PATTERN (grep -E), never a bare 0 or the old catch-all.
run_fail()
{
	hk_cli_expect "$T" "$@"
	shift 2
	if grep -Eq -- '(answered|status|failed|\() ?0\b|no server answered' \
	    "$T/err"; then
		fail "heureka $*: a bare status 0 or the old message: $(cat "$T/err")"
	fi
}

hk_log "connection refused"
run_fail 2 "127\.0\.0\.1:1/eureka/: connection refused" \
    apps --server http://127.0.0.1:1/eureka/
run_fail 2 "connection refused" get FOO --server http://127.0.0.1:1/eureka/

hk_log "DNS name not found"
run_fail 2 "no-such-host\.invalid.*host name not found \(DNS\)" \
    apps --timeout 5 --server http://no-such-host.invalid:8761/eureka/

hk_log "a server that accepts and never answers: timed out"
"$HK_PYTHON" -c '
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    held.append(s.accept()[0])
' "$T/silent.port" &
SILENT=$!
hk_own "$SILENT"
wait_until 20 test -s "$T/silent.port"
run_fail 2 "timed out.*--timeout" apps --timeout 1 \
    --server "http://127.0.0.1:$(cat "$T/silent.port")/eureka/"

hk_log "404: a URL that is no Eureka API"
hk_start S
ROOT=http://127.0.0.1:$HK_PORT_S/
run_fail 2 "answered 404 Not Found.*must end in /eureka/" apps --server "$ROOT"
run_fail 2 "answered 404 Not Found.*must end in /eureka/" get FOO --server "$ROOT"
run_fail 2 "answered 404 Not Found.*must end in /eureka/" \
    status FOO i-1 DOWN --server "$ROOT"
# ... while the right URL answers.
"$HEUREKA" apps --server "$HK_URL_S" >/dev/null || fail "apps on $HK_URL_S"

hk_log "401: missing or wrong credentials"
PW="pw-$$"
SPRING_SECURITY_USER_PASSWORD=$PW hk_start A
run_fail 2 "answered 401 Unauthorized.*wrong or missing credentials" \
    apps --server "$HK_URL_A"
run_fail 2 "answered 401 Unauthorized.*wrong or missing credentials" \
    get FOO --server "http://user:badpw$$@127.0.0.1:$HK_PORT_A/eureka/"
grep -q "badpw$$" "$T/err" && fail "the password in the message: $(cat "$T/err")"
"$HEUREKA" apps --server "http://user:$PW@127.0.0.1:$HK_PORT_A/eureka/" \
    >/dev/null || fail "apps with the right credentials"

hk_log "several servers: the last answer is said"
run_fail 2 "no server took the request.*the last: 401 Unauthorized" \
    apps --server "http://127.0.0.1:1/eureka/,$HK_URL_A"

hk_log "TLS verification failed"
hk_tls_certs "$(hk_tmp)"
D=$HK_TLS_DIR
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$D/ca.pem")
hk_start TLS -D server.ssl.enabled=true \
    -D server.ssl.certificate="$D/server.pem" \
    -D server.ssl.certificate-private-key="$D/server.key" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
run_fail 2 "TLS verification failed" apps --cacert "$D/otherca.pem" \
    --server "https://localhost:$HK_PORT_TLS/eureka/"
grep -q "certificate refused" "$T/err" || fail "no reason: $(cat "$T/err")"
"$HEUREKA" apps --cacert "$D/ca.pem" \
    --server "https://localhost:$HK_PORT_TLS/eureka/" >/dev/null ||
    fail "apps over TLS with the right CA"
hk_stop TLS
HK_SCHEME=http
HK_CURL_TLS=()
hk_stop A
hk_stop S

#!/bin/sh
# 67-auth-throttle.sh: password guessing is throttled per client address
# (issue 21: one connection tried about 6,000 passwords a second). From
# 127.0.0.2, wrong passwords on one kept-alive connection get 401 for
# heureka.security.auth-failure-burst of them, then 429 with Retry-After;
# while throttled even the right password gets 429 (a guess is never
# judged), anonymous requests are judged as usual, and another address
# (127.0.0.1) is not affected. The 429s are counted in /metrics and
# logged once. After Retry-After the right password works again, and a
# SIGHUP does not forgive the guesser.
. "$(dirname "$0")/lib.sh"

UPW="u-67-$$"
hk_start s -D spring.security.user.name=alice \
    -D spring.security.user.password="$UPW" \
    -D heureka.security.auth-failure-burst=5 \
    -D heureka.security.auth-failures-per-second=0.2 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
R=http://127.0.0.1:$HK_PORT_s
U="$R/eureka/v2/apps"

# N requests on one connection from 127.0.0.2 with CREDS (curl reuses the
# connection for the URLs of one command line); print the codes.
from2()
{
	local n=$1 creds=$2 urls=() i
	for i in $(seq "$n"); do urls+=(-o /dev/null "$U"); done
	# shellcheck disable=SC2086
	hk_curl --interface 127.0.0.2 $creds -w '%{http_code}\n' \
	    "${urls[@]}" | tr '\n' ' ' | sed 's/ $//'
}

# One token per 5 s: the twenty requests below take milliseconds, so no
# token comes back during them however loaded the machine is.
hk_log "20 wrong passwords on one connection"
t0=$(date +%s%N)
codes=$(from2 20 "-u alice:wrong")
t1=$(date +%s%N)
echo "wrong x20 from 127.0.0.2: $codes ($(( (t1 - t0) / 1000000 )) ms)" >&2
assert_eq "401 401 401 401 401 429 429 429 429 429 429 429 429 429 429 429 429 429 429 429" \
    "$codes" "answers to 20 wrong passwords (burst 5)"

hk_log "throttled: the right password is not judged, anonymous is"
assert_http 429 GET "$U" --interface 127.0.0.2 -u "alice:$UPW"
ra=$(hk_header Retry-After)
case "$ra" in [1-9]*) ;; *) fail "Retry-After [$ra]" ;; esac
[ -s "$HK_BODY" ] || fail "429 without a reason"
assert_http 401 GET "$U" --interface 127.0.0.2
assert_http 200 GET "$R/health" --interface 127.0.0.2 -u alice:wrong

hk_log "another address is not affected"
assert_http 200 GET "$U" -u "alice:$UPW"
assert_http 401 GET "$U" -u alice:wrong

hk_log "counted and logged once"
n=$(hk_curl -u "alice:$UPW" "$R/metrics" |
    awk '$1 == "heureka_limit_rejections_total{limit=\"auth-failure-rate\"}" { print $2 }')
[ -n "$n" ] && [ "$n" -ge 16 ] || fail "auth-failure-rate counted [$n], want >= 16"
assert_eq 1 "$(grep -c 'failed authentications from' "$HK_ROOT/s.log")" \
    "log lines about the throttle"

hk_log "a reload does not forgive; the wait does"
kill -HUP "$HK_PID_s"
wait_until 10 grep -q "configuration reloaded" "$HK_ROOT/s.log"
assert_http 429 GET "$U" --interface 127.0.0.2 -u alice:wrong
wait_until 20 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.2 -u 'alice:$UPW' '$U')\" = 200 ]"
hk_alive s
hk_stop s

#!/bin/sh
# 17-register-rate.sh: issue 9, "Memory": registrations are limited per
# client address by a token bucket (eureka.server.register-rate-per-second
# and -burst). Past the burst one address gets 429 with Retry-After, while
# another address (loopback alias 127.0.0.3) still registers, heartbeats
# and reads from the limited address still work, a peer's replication
# batch is never limited, and the address may register again after the
# Retry-After. Hits are counted in /metrics.
. "$(dirname "$0")/lib.sh"

LOAD="$HK_PYTHON $(dirname "$0")/memload.py"
CT="Content-Type: application/json"

hk_start s -D eureka.server.register-rate-per-second=0.5 \
    -D eureka.server.register-rate-burst=5
U=$HK_URL_s

hk_log "127.0.0.2 registers its burst, then gets 429"
$LOAD "$U" register SVC a 5 1 8 --source 127.0.0.2 >"$HK_ROOT/a.json" ||
    fail "register from 127.0.0.2"
assert_eq '{"204":5}' "$(hk_json 'd["codes"]' "$HK_ROOT/a.json")" "the burst"
hk_instance_json SVC a-late >"$HK_ROOT/late.json"
assert_http 429 POST "${U}apps/SVC" --interface 127.0.0.2 -H "$CT" \
    --data-binary @"$HK_ROOT/late.json"
ra=$(hk_header Retry-After)
case "$ra" in
[1-9]*) ;;
*) fail "429 without a Retry-After in seconds: [$ra]" ;;
esac
assert_contains "register-rate-per-second" "$(cat "$HK_BODY")" "429 reason"
assert_http 404 GET "${U}apps/SVC/a-late"

hk_log "another address still registers; the limited one still renews"
$LOAD "$U" register SVC b 5 1 8 --source 127.0.0.3 >"$HK_ROOT/b.json" ||
    fail "register from 127.0.0.3"
assert_eq '{"204":5}' "$(hk_json 'd["codes"]' "$HK_ROOT/b.json")" \
    "127.0.0.3's burst while 127.0.0.2 is limited"
assert_http 200 PUT "${U}apps/SVC/a-0" --interface 127.0.0.2
assert_http 200 GET "${U}apps/SVC/a-0" --interface 127.0.0.2

hk_log "replication from the limited address is not limited"
$LOAD "$U" batch SVC r1 2000 --source 127.0.0.2 >"$HK_ROOT/r.json" ||
    fail "batch"
assert_eq 200 "$(hk_json 'str(d["response"]["responseList"][0]["statusCode"])' \
    "$HK_ROOT/r.json")" "replicated register from 127.0.0.2"
assert_http 200 GET "${U}apps/SVC/r1"

[ "$(hk_metric 'heureka_limit_rejections_total{limit="register-rate"}' \
    "$HK_PORT_s")" -ge 1 ] || fail "429 not counted"

hk_log "after Retry-After the address registers again"
again()
{
	[ "$(hk_curl -s -o /dev/null -w '%{http_code}' -X POST \
	    --interface 127.0.0.2 -H "$CT" --data-binary @"$HK_ROOT/late.json" \
	    "${U}apps/SVC")" = 204 ]
}
wait_until $((ra + 3)) again
assert_http 200 GET "${U}apps/SVC/a-late"
hk_alive s
hk_stop s

#!/bin/sh
# 76-admit-airlift.sh: one registration rate limit for every way an
# instance enters the registry (issue 21, "airlift announcements bypass
# the registration rate limit"). Limit 2/s, burst 10, per client address.
#  - 5 airlift announcements of 64 new services each: the first waits for
#    a full bucket and is stored; the next ones get 429 with Retry-After
#    (the bucket is in debt), so far fewer than 320 services are stored;
#    REST registrations from the same address then get 429 too (one
#    bucket).
#  - A re-announcement of unchanged services renews them and takes no
#    token (a Trino node re-announces every few seconds).
. "$(dirname "$0")/lib.sh"

hk_start S -D eureka.environment=test -D heureka.airlift.max-age-ms=60000 \
    -D eureka.server.register-rate-per-second=2 \
    -D eureka.server.register-rate-burst=10
S=${HK_URL_S%eureka/}
BAD=""

# The services JSON of node N: 64 services.
svcs()
{
	"$HK_PYTHON" -c '
import json, sys
n = sys.argv[1]
print(json.dumps([{"id": "%s-%d" % (n, k), "type": "trino",
    "properties": {"http": "http://10.0.0.1:%d" % (8000 + k)}} for k in range(64)]))' "$1"
}

# PUT node N's announcement; print the status.
announce()
{
	hk_curl -o "$HK_BODY" -D "$HK_ROOT/ann.h" -w '%{http_code}' -X PUT \
	    "${S}v1/announcement/$1" -H 'Content-Type: application/json' \
	    --data-binary "{\"environment\":\"test\",\"pool\":\"general\",\"services\":$(svcs "$1")}"
}

# Services stored (AIRLIFT-TRINO's instances).
stored()
{
	hk_curl -H 'Accept: application/json' "${HK_URL_S}apps/AIRLIFT-TRINO" |
	    "$HK_PYTHON" -c 'import json,sys
try:
    print(len(json.load(sys.stdin)["application"]["instance"]))
except Exception:
    print(0)'
}

codes=""
for n in n1 n2 n3 n4 n5; do
	c=$(announce "$n")
	codes="$codes $c"
	if [ "$c" = 429 ]; then
		grep -qi '^Retry-After:' "$HK_ROOT/ann.h" ||
		    BAD="$BAD; a 429 to $n without Retry-After"
	fi
done
hk_log "5 announcements of 64 services:$codes; stored: $(stored)"
echo "MEASURE announcements:$codes, services stored $(stored) of 320" >&2
case "$codes" in *429*) ;; *) BAD="$BAD; no announcement got 429 (codes:$codes)" ;; esac
[ "$(stored)" -le 64 ] || BAD="$BAD; $(stored) services stored past a limit of 2/s, burst 10"
hk_instance_json SVC r-1 >"$HK_ROOT/r.json"
c=$(hk_curl -o /dev/null -w '%{http_code}' -X POST "${HK_URL_S}apps/SVC" \
    -H 'Content-Type: application/json' --data-binary @"$HK_ROOT/r.json")
[ "$c" = 429 ] || BAD="$BAD; a REST registration after the announcements got $c, not 429"
# n1's services stored: re-announcing them unchanged is a renewal.
if [ "$(stored)" -gt 0 ]; then
	c=$(announce n1)
	[ "$c" = 202 ] || BAD="$BAD; an unchanged re-announcement got $c, not 202"
fi
[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop S

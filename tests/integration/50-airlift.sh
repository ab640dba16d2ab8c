#!/bin/sh
# 50-airlift.sh: airlift's discovery protocol (issue 15) against a real
# heurekad: announce, inventory by type and pool, ETag / 304 through both
# If-None-Match and the ETag request header airlift's lookup client sends,
# re-announcement replacing the node's set, expiry after max age, delete
# of a node and of one type, static announcements, environment mismatch,
# bad bodies (4xx, nothing stored), the Eureka view of the same leases and
# self-preservation's figures left alone; then the same through a three-
# node cluster (announce on A, find on C; delete on B, gone on C).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

# "nodeId:id" of every service in an inventory answer ($HK_BODY), sorted.
al_ids()
{
	"$HK_PYTHON" -c 'import json,sys
d=json.load(open(sys.argv[1]))
assert d["environment"] == sys.argv[2], d["environment"]
print(" ".join(sorted("%s:%s" % (s["nodeId"], s["id"]) for s in d["services"])))' "$HK_BODY" "${1:-test}"
}

# Succeeds when GET URL's inventory is exactly WANT (for wait_until).
al_is()
{
	local want=$1 url=$2 got
	got=$(hk_curl -s "$url" | "$HK_PYTHON" -c 'import json,sys
d=json.load(sys.stdin)
print(" ".join(sorted("%s:%s" % (s["nodeId"], s["id"]) for s in d["services"])))') || return 1
	[ "$got" = "$want" ]
}

# PUT an announcement of node $2 at base $1 with services JSON $3.
al_announce()
{
	assert_http 202 PUT "$1v1/announcement/$2" -H 'Content-Type: application/json' \
	    --data-binary "{\"environment\":\"test\",\"pool\":\"${4:-general}\",\"location\":\"/dc1/rack1/$2\",\"services\":$3}"
}

# The base URL of a server without /eureka/.
al_base()
{
	echo "${1%eureka/}"
}

# A 5 s max age: the checks after the first announcements take their
# time under ASan on a loaded machine, and must see them still alive.
hk_start S -D heureka.airlift.max-age-ms=5000 -D eureka.environment=test \
    -D eureka.server.eviction-interval-timer-in-ms=500
S=$(al_base "$HK_URL_S")
THRESHOLD=$(hk_metric heureka_renews_threshold "$HK_PORT_S")

hk_log "announce two nodes, three services"
al_announce "$S" n1 '[{"id":"a1","type":"trino","properties":{"http":"http://10.0.0.1:8080","coordinator":"true"}},{"id":"a2","type":"jmx","properties":{}}]'
assert_eq "max-age=5" "$(hk_header Cache-Control)" "announce max-age"
al_announce "$S" n2 '[{"id":"b1","type":"trino","properties":{"http":"http://10.0.0.2:8080"}}]' batch

assert_http 200 GET "${S}v1/service"
assert_eq "n1:a1 n1:a2 n2:b1" "$(al_ids)" "whole inventory"
assert_http 200 GET "${S}v1/service/trino"
assert_eq "n1:a1 n2:b1" "$(al_ids)" "inventory of type trino"
assert_http 200 GET "${S}v1/service/trino/"
assert_eq "n1:a1 n2:b1" "$(al_ids)" "trailing slash (airlift's lookup URL)"
assert_http 200 GET "${S}v1/service/trino/general"
assert_eq "n1:a1" "$(al_ids)" "inventory of type trino, pool general"
assert_http 200 GET "${S}v1/service/trino/batch"
assert_eq "n2:b1" "$(al_ids)" "inventory of type trino, pool batch"
assert_http 200 GET "${S}v1/service/nosuch"
assert_eq "" "$(al_ids)" "unknown type: empty list"
assert_http 200 GET "${S}v1/service/trino/general"
"$HK_PYTHON" -c 'import json,sys
s=json.load(open(sys.argv[1]))["services"][0]
assert s == {"id":"a1","nodeId":"n1","type":"trino","pool":"general",
    "location":"/dc1/rack1/n1","properties":{"http":"http://10.0.0.1:8080",
    "coordinator":"true"}}, s' "$HK_BODY" || fail "service a1 as shown"

hk_log "ETag and 304, both request header forms"
assert_http 200 GET "${S}v1/service/trino"
ETAG=$(hk_header ETag)
[ -n "$ETAG" ] || fail "no ETag on the inventory"
case "$(hk_header Cache-Control)" in max-age=[0-9]*) ;; *) fail "no max-age on the inventory" ;; esac
assert_http 304 GET "${S}v1/service/trino" -H "If-None-Match: $ETAG"
assert_http 304 GET "${S}v1/service/trino" -H "ETag: $ETAG"
assert_http 200 GET "${S}v1/service/trino" -H 'ETag: "stale"'
assert_http 200 GET "${S}v1/service/jmx" -H "ETag: $ETAG"

hk_log "the Eureka view: AIRLIFT-TRINO, address from the http property"
assert_http 200 GET "${HK_URL_S}apps/AIRLIFT-TRINO/n1:a1" -H 'Accept: application/json'
"$HK_PYTHON" -c 'import json,sys
i=json.load(open(sys.argv[1]))["instance"]
assert i["ipAddr"] == "10.0.0.1" and i["port"]["$"] == 8080, i
assert i["metadata"]["coordinator"] == "true", i["metadata"]
assert i["leaseInfo"]["durationInSecs"] == 5, i["leaseInfo"]' "$HK_BODY" ||
    fail "airlift service as a Eureka instance"
assert_eq "$THRESHOLD" "$(hk_metric heureka_renews_threshold "$HK_PORT_S")" \
    "self-preservation threshold after airlift announcements"

hk_log "the dashboard's own airlift section"
assert_http 200 GET "$S"
tr -d '\n' <"$HK_BODY" | grep -q '<tbody id="airlift-services"><tr class="airlift"><td>jmx</td><td>general</td><td>n1</td><td>a2</td><td>/dc1/rack1/n1</td><td>UP</td></tr>' ||
    fail "dashboard: no airlift row for n1/a2"
grep -c '<tr class="airlift">' "$HK_BODY" | grep -qx 3 || fail "dashboard: not 3 airlift rows"

hk_log "a changed ETag after a re-announcement; the old set is replaced"
al_announce "$S" n1 '[{"id":"a3","type":"trino","properties":{"http":"http://10.0.0.1:8081"}}]'
assert_http 200 GET "${S}v1/service/trino" -H "ETag: $ETAG"
assert_eq "n1:a3 n2:b1" "$(al_ids)" "n1 re-announced a3 only"
assert_http 200 GET "${S}v1/service/jmx"
assert_eq "" "$(al_ids)" "a2, no longer announced, is gone"

hk_log "re-announcing keeps leases alive past max age; silence expires them"
# n1 re-announces on every poll until n2 (silent, 5 s lease) has expired
# and a3 has outlived its own 5 s max age by half again (the clock is
# what is awaited: a lease is a span of time).
t0=$(date +%s%3N)
n1_outlives()
{
	al_announce "$S" n1 '[{"id":"a3","type":"trino","properties":{"http":"http://10.0.0.1:8081"}}]' &&
	    [ $(($(date +%s%3N) - t0)) -gt 7500 ] &&
	    al_is "n1:a3" "${S}v1/service/trino"
}
wait_until 20 n1_outlives
assert_http 200 GET "${S}v1/service/trino"
assert_eq "n1:a3" "$(al_ids)" "n2 expired, n1 kept alive"
wait_until 12 al_is "" "${S}v1/service/trino"

hk_log "delete a node, and one type of a node"
al_announce "$S" n3 '[{"id":"c1","type":"trino"},{"id":"c2","type":"jmx"}]'
al_announce "$S" n4 '[{"id":"d1","type":"trino"}]'
assert_http 204 DELETE "${S}v1/announcement/n3/jmx"
assert_http 200 GET "${S}v1/service"
assert_eq "n3:c1 n4:d1" "$(al_ids)" "after DELETE n3/jmx"
assert_http 204 DELETE "${S}v1/announcement/n4"
assert_http 200 GET "${S}v1/service"
assert_eq "n3:c1" "$(al_ids)" "after DELETE n4"
assert_http 204 DELETE "${S}v1/announcement/n3"
assert_http 404 GET "${HK_URL_S}apps/AIRLIFT-TRINO/n3:c1"

hk_log "static announcements: created, listed, beside dynamic ones, never expire"
assert_http 201 POST "${S}v1/announcement/static" -H 'Content-Type: application/json' \
    --data-binary '{"environment":"test","type":"db","pool":"general","properties":{"jdbc":"jdbc:x"}}'
SID=$("$HK_PYTHON" -c 'import json,sys
s=json.load(open(sys.argv[1]))
assert s["nodeId"] is None and s["type"] == "db" and s["properties"] == {"jdbc":"jdbc:x"}, s
assert s["location"] == "/somewhere/" + s["id"], s
print(s["id"])' "$HK_BODY") || fail "static announcement reply"
assert_eq "/v1/announcement/static/$SID" "$(hk_header Location)" "Location"
assert_http 200 GET "${S}v1/announcement/static"
assert_eq "None:$SID" "$(al_ids)" "static list"
al_announce "$S" n5 '[{"id":"e1","type":"db"}]'
assert_http 200 GET "${S}v1/service/db"
assert_eq "None:$SID n5:e1" "$(al_ids)" "static beside dynamic"
wait_until 14 al_is "None:$SID" "${S}v1/service/db"
assert_http 204 DELETE "${S}v1/announcement/static/$SID"
assert_http 200 GET "${S}v1/service/db"
assert_eq "" "$(al_ids)" "static deleted"

hk_log "bad input: 4xx with a reason, nothing stored"
bad()
{
	local code=$1 body=$2 want=$3
	shift 3
	assert_http "$code" PUT "${S}v1/announcement/bad" -H 'Content-Type: application/json' \
	    --data-binary "$body" "$@"
	grep -q -- "$want" "$HK_BODY" || fail "reason for [$body]: $(cat "$HK_BODY")"
}
bad 400 '{"environment":"prod","pool":"general","services":[]}' \
    "Environment mismatch. Expected: test, Provided: prod"
bad 400 '{"environment":"test","pool":"general","services":[' "malformed JSON"
bad 400 '[1,2]' "must be a JSON object"
bad 400 '{"environment":"test","services":[]}' "pool is required"
bad 400 '{"environment":"test","pool":"general"}' "services must be an array"
bad 400 '{"environment":"test","pool":"general","services":[{"type":"x"}]}' "id is required"
bad 400 '{"environment":"test","pool":"general","services":[{"id":"1","type":"a/b"}]}' "invalid type"
bad 400 '{"environment":"test","pool":"general","services":[{"id":"1","type":"x","properties":{"k":1}}]}' "must be a string"
bad 400 '{"environment":"test","pool":"general","services":[{"id":"1","type":"x","properties":{"airlift.nodeId":"n"}}]}' "reserved"
bad 400 '{"environment":"test","pool":"general","services":[{"id":"1","type":"x"},{"id":"1","type":"y"}]}' "given twice"
MANY=$("$HK_PYTHON" -c 'import json
print(json.dumps({"environment":"test","pool":"p","services":[{"id":str(i),"type":"x"} for i in range(65)]}))')
bad 400 "$MANY" "more than 64 services"
BIG=$("$HK_PYTHON" -c 'print("{\"environment\":\"test\",\"pool\":\"p\",\"services\":[],\"x\":\"" + "a" * 70000 + "\"}")')
bad 413 "$BIG" "too large"
assert_http 415 PUT "${S}v1/announcement/bad" -H 'Content-Type: text/plain' --data-binary '{}'
assert_http 400 PUT "${S}v1/announcement/a:b" -H 'Content-Type: application/json' \
    --data-binary '{"environment":"test","pool":"general","services":[]}'
assert_http 400 POST "${S}v1/announcement/static" -H 'Content-Type: application/json' \
    --data-binary '{"environment":"other","type":"db","pool":"general"}'
grep -q "Environment mismatch. Expected: test, Provided: other" "$HK_BODY" || fail "static env mismatch reason"
assert_http 405 POST "${S}v1/announcement/n1"
assert_http 404 GET "${HK_URL_S}announcement/static"
assert_http 200 GET "${S}v1/service"
assert_eq "" "$(al_ids)" "bad input stored nothing"
hk_stop S

hk_log "heureka.airlift.enabled=false: no /v1/ routes"
hk_start OFF -D heureka.airlift.enabled=false
assert_http 404 GET "$(al_base "$HK_URL_OFF")v1/service"
hk_stop OFF

hk_log "three-node cluster: announce on A, found on C; delete on B, gone on C"
cl_trio -D eureka.environment=test
A=$(al_base "$A") B=$(al_base "$B") C=$(al_base "$C")
al_announce "$A" w1 '[{"id":"x1","type":"trino","properties":{"http":"http://10.0.1.1:8080"}},{"id":"x2","type":"trino"}]'
wait_until 3 al_is "w1:x1 w1:x2" "${C}v1/service/trino/general"
wait_until 3 al_is "w1:x1 w1:x2" "${B}v1/service/trino"
assert_http 201 POST "${C}v1/announcement/static" -H 'Content-Type: application/json' \
    --data-binary '{"environment":"test","type":"db","pool":"general"}'
SID=$("$HK_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$HK_BODY")
wait_until 3 al_is "None:$SID" "${A}v1/announcement/static"
al_announce "$B" w1 '[{"id":"x1","type":"trino","properties":{"http":"http://10.0.1.1:8080"}}]'
wait_until 3 al_is "w1:x1" "${C}v1/service/trino"
wait_until 3 al_is "w1:x1" "${A}v1/service/trino"
assert_http 204 DELETE "${B}v1/announcement/w1"
wait_until 3 al_is "" "${C}v1/service/trino"
wait_until 3 al_is "" "${A}v1/service/trino"
assert_http 204 DELETE "${A}v1/announcement/static/$SID"
wait_until 3 al_is "" "${C}v1/service/db"

hk_log "a restarted node gets the announcements by the start-up sync"
hk_kill C
al_announce "$A" w2 '[{"id":"y1","type":"trino"}]'
cl_start C "$PC" "$PEERS" -D eureka.environment=test
wait_until 5 al_is "w2:y1" "${C}v1/service/trino"
assert_eq 1 "$(hk_metric heureka_renews_threshold "$HK_PORT_C")" \
    "C's self-preservation threshold after syncing an airlift lease"
hk_log "ok"

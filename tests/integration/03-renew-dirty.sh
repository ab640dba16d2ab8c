#!/bin/sh
# 03-renew-dirty.sh: the lastDirtyTimestamp rules of heartbeats (spec §2.7,
# trap 13): newer than stored -> 404, older -> 200 for clients and 409 with
# the stored instance for replication (x-netflix-discovery-replication:
# true, exact), non-numeric -> 400; and re-registration with an older
# lastDirtyTimestamp keeps the stored data (trap 15).
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
J="Accept: application/json"
RH="x-netflix-discovery-replication: true"

T=1700000000000
hk_instance_json SVC d1 | sed "s/\"lastDirtyTimestamp\":\"[0-9]*\"/\"lastDirtyTimestamp\":\"$T\"/" \
    >"$HK_ROOT/d1.json"
assert_http 204 POST "${U}apps/SVC" -H "Content-Type: application/json" --data-binary @"$HK_ROOT/d1.json"
assert_http 200 GET "${U}apps/SVC/d1" -H "$J"
assert_eq "$T" "$(hk_json 'd["instance"]["lastDirtyTimestamp"]')" "stored lastDirtyTimestamp"

hk_log "equal, newer, older"
assert_http 200 PUT "${U}apps/SVC/d1?status=UP&lastDirtyTimestamp=$T"
assert_http 404 PUT "${U}apps/SVC/d1?status=UP&lastDirtyTimestamp=$((T + 1000))"
assert_http 200 PUT "${U}apps/SVC/d1?status=UP&lastDirtyTimestamp=$((T - 1000))"
assert_http 200 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$T" -H "$RH"
assert_http 404 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$((T + 1000))" -H "$RH"

hk_log "older with replication: 409 and the stored instance"
assert_http 409 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$((T - 1000))" -H "$RH" -H "$J"
assert_eq d1 "$(hk_json 'd["instance"]["instanceId"]')" "409 body is the stored instance (JSON)"
assert_eq "$T" "$(hk_json 'd["instance"]["lastDirtyTimestamp"]')" "409 body carries the stored timestamp"
assert_http 409 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$((T - 1000))" -H "$RH"
assert_contains "<instanceId>d1</instanceId>" "$(cat "$HK_BODY")" "409 body in XML by default"
assert_http 200 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$((T - 1000))" \
    -H "x-netflix-discovery-replication: TRUE"	# compared case-sensitively
assert_http 200 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$((T - 1000))" \
    -H "x-netflix-discovery-replication: false"

hk_log "bad lastDirtyTimestamp values"
assert_http 400 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=abc"
assert_http 400 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=12x"
assert_http 404 PUT "${U}apps/SVC/nope?lastDirtyTimestamp=$T"
assert_http 200 GET "${U}apps/SVC/d1" -H "$J"
assert_eq "$T" "$(hk_json 'd["instance"]["lastDirtyTimestamp"]')" "unchanged by heartbeats"

hk_log "re-register with an older lastDirtyTimestamp keeps the stored data"
sed -e "s/\"lastDirtyTimestamp\":\"[0-9]*\"/\"lastDirtyTimestamp\":\"$((T - 5000))\"/" \
    -e 's/"ipAddr":"10.0.0.1"/"ipAddr":"10.9.9.9"/' "$HK_ROOT/d1.json" >"$HK_ROOT/old.json"
assert_http 204 POST "${U}apps/SVC" -H "Content-Type: application/json" --data-binary @"$HK_ROOT/old.json"
assert_http 200 GET "${U}apps/SVC/d1" -H "$J"
assert_eq 10.0.0.1 "$(hk_json 'd["instance"]["ipAddr"]')" "older registration ignored"
assert_eq "$T" "$(hk_json 'd["instance"]["lastDirtyTimestamp"]')" "stored timestamp kept"
assert_eq ADDED "$(hk_json 'd["instance"]["actionType"]')" "still a fresh ADDED lease"

hk_log "re-register with a newer lastDirtyTimestamp replaces the data"
sed -e "s/\"lastDirtyTimestamp\":\"[0-9]*\"/\"lastDirtyTimestamp\":\"$((T + 5000))\"/" \
    -e 's/"ipAddr":"10.0.0.1"/"ipAddr":"10.8.8.8"/' "$HK_ROOT/d1.json" >"$HK_ROOT/new.json"
assert_http 204 POST "${U}apps/SVC" -H "Content-Type: application/json" --data-binary @"$HK_ROOT/new.json"
assert_http 200 GET "${U}apps/SVC/d1" -H "$J"
assert_eq 10.8.8.8 "$(hk_json 'd["instance"]["ipAddr"]')" "newer registration applied"
assert_eq "$((T + 5000))" "$(hk_json 'd["instance"]["lastDirtyTimestamp"]')" "new timestamp"
assert_http 200 PUT "${U}apps/SVC/d1?lastDirtyTimestamp=$((T + 5000))"

hk_stop s

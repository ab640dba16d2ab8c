#!/bin/sh
# 02-status-override.sh: PUT/DELETE apps/{app}/{id}/status (spec §2.9,
# §2.10, §5.6-§5.8): the override wins over what the instance reports,
# shows in status/overriddenStatus and serverinfo/statusoverrides, and its
# deletion without a value forces re-registration (heartbeat 404).
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
R=http://127.0.0.1:$HK_PORT_s
J="Accept: application/json"

# Print "status overriddenStatus" of APP/ID as the server shows it.
st()
{
	assert_http 200 GET "${U}apps/$1/$2" -H "$J"
	echo "$(hk_json 'd["instance"]["status"]') $(hk_json 'd["instance"]["overriddenStatus"]')"
}

hk_register "$U" SVC a1
hk_register "$U" SVC a2

hk_log "override to OUT_OF_SERVICE"
assert_http 200 PUT "${U}apps/SVC/a1/status?value=OUT_OF_SERVICE"
assert_eq "OUT_OF_SERVICE OUT_OF_SERVICE" "$(st SVC a1)" "after override"
assert_eq "UP UNKNOWN" "$(st SVC a2)" "other instance untouched"
assert_http 200 GET "${R}/eureka/serverinfo/statusoverrides"
assert_eq '{"a1":"OUT_OF_SERVICE"}' "$(hk_json 'd')" "statusoverrides map"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq "OUT_OF_SERVICE_1_UP_1_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "hashcode"
assert_http 200 GET "${U}apps/SVC"
assert_contains "<overriddenstatus>OUT_OF_SERVICE</overriddenstatus>" "$(cat "$HK_BODY")" \
    "XML spelling of the override"

hk_log "the override survives heartbeats and re-registration with UP"
assert_http 200 PUT "${U}apps/SVC/a1?status=UP"
assert_eq "OUT_OF_SERVICE OUT_OF_SERVICE" "$(st SVC a1)" "after heartbeat"
hk_register "$U" SVC a1 UP
assert_eq "OUT_OF_SERVICE OUT_OF_SERVICE" "$(st SVC a1)" "after re-register with UP"
assert_http 200 PUT "${U}apps/SVC/a1"

hk_log "bad and unknown targets"
assert_http 400 PUT "${U}apps/SVC/a1/status?value=BOGUS"
assert_http 400 PUT "${U}apps/SVC/a1/status?value=up"	# exact enum spelling
assert_http 400 PUT "${U}apps/SVC/a1/status"
assert_eq "OUT_OF_SERVICE OUT_OF_SERVICE" "$(st SVC a1)" "unchanged by bad values"
assert_http 404 PUT "${U}apps/SVC/nope/status?value=OUT_OF_SERVICE"
assert_http 404 PUT "${U}apps/NOPE/a1/status?value=OUT_OF_SERVICE"
assert_http 404 DELETE "${U}apps/SVC/nope/status"
assert_http 404 DELETE "${U}apps/NOPE/a1/status?value=UP"

hk_log "delete the override with value=UP"
assert_http 200 DELETE "${U}apps/SVC/a1/status?value=UP"
assert_eq "UP UNKNOWN" "$(st SVC a1)" "after delete with value=UP"
assert_http 200 GET "${R}/eureka/serverinfo/statusoverrides"
assert_eq '{}' "$(hk_json 'd')" "statusoverrides empty again"
assert_http 200 PUT "${U}apps/SVC/a1"
assert_eq "UP UNKNOWN" "$(st SVC a1)" "heartbeat after delete"

hk_log "delete without a value: UNKNOWN, then heartbeat 404, then re-register"
assert_http 200 PUT "${U}apps/SVC/a1/status?value=DOWN"
assert_eq "DOWN DOWN" "$(st SVC a1)" "override DOWN"
assert_http 200 DELETE "${U}apps/SVC/a1/status"
assert_eq "UNKNOWN UNKNOWN" "$(st SVC a1)" "after delete without value"
assert_http 404 PUT "${U}apps/SVC/a1"
hk_register "$U" SVC a1 UP
assert_eq "UP UNKNOWN" "$(st SVC a1)" "after re-registration"
assert_http 200 PUT "${U}apps/SVC/a1"

hk_log "an override equal to the current status records nothing"
assert_http 200 PUT "${U}apps/SVC/a2/status?value=UP"
assert_eq "UP UNKNOWN" "$(st SVC a2)" "same-status override"
assert_http 200 GET "${R}/eureka/serverinfo/statusoverrides"
assert_eq '{}' "$(hk_json 'd')" "no override recorded"
assert_http 200 DELETE "${U}apps/SVC/a2/status?value=UP"	# none present: still 200

hk_log "an override stored at registration (overriddenstatus in the body)"
hk_instance_json SVC a3 UP | sed 's/"overriddenstatus":"UNKNOWN"/"overriddenstatus":"OUT_OF_SERVICE"/' \
    >"$HK_ROOT/a3.json"
assert_http 204 POST "${U}apps/SVC" -H "Content-Type: application/json" --data-binary @"$HK_ROOT/a3.json"
assert_eq "OUT_OF_SERVICE OUT_OF_SERVICE" "$(st SVC a3)" "override from the registration body"

hk_log "cancel removes the override"
assert_http 200 PUT "${U}apps/SVC/a2/status?value=OUT_OF_SERVICE"
assert_http 200 DELETE "${U}apps/SVC/a2"
assert_http 200 GET "${R}/eureka/serverinfo/statusoverrides"
assert_eq '{"a3":"OUT_OF_SERVICE"}' "$(hk_json 'd')" "override of the cancelled instance gone"
hk_register "$U" SVC a2 UP
assert_eq "UP UNKNOWN" "$(st SVC a2)" "re-registered after cancel: no stale override"

hk_stop s

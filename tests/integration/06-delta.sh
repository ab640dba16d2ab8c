#!/bin/sh
# 06-delta.sh: GET apps/delta after each kind of change (spec §5.9): register
# (ADDED), cancel (DELETED), status override and its deletion (MODIFIED),
# metadata update (ADDED, trap 17); the delta's apps__hashcode equals the
# full fetch's (hash of the whole registry), in JSON and XML.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
J="Accept: application/json"

# Print "actionType status" of ID in the current delta (JSON), or "absent".
delta_of()
{
	assert_http 200 GET "${U}apps/delta" -H "$J"
	hk_json '" ".join([i["actionType"], i["status"]]) if (i := next((i for a in d["applications"]["application"] for i in a["instance"] if i["instanceId"] == "'"$1"'"), None)) else "absent"'
}

# Fail unless the delta's hashcode equals the full registry's (JSON and XML).
same_hash()
{
	local full delta
	assert_http 200 GET "${U}apps" -H "$J"
	full=$(hk_json 'd["applications"]["apps__hashcode"]')
	assert_http 200 GET "${U}apps/delta" -H "$J"
	delta=$(hk_json 'd["applications"]["apps__hashcode"]')
	assert_eq "$full" "$delta" "delta hashcode = full hashcode ($1)"
	[ -z "${2:-}" ] || assert_eq "$2" "$full" "full hashcode ($1)"
	assert_http 200 GET "${U}apps/delta"
	assert_contains "<apps__hashcode>$full</apps__hashcode>" "$(cat "$HK_BODY")" "XML delta hashcode ($1)"
}

hk_log "empty delta"
assert_http 200 GET "${U}apps/delta" -H "$J"
assert_eq "[]" "$(hk_json 'd["applications"]["application"]')" "nothing changed yet"
assert_eq str "$(hk_json 'type(d["applications"]["versions__delta"]).__name__')" "versions__delta is a string"
hk_json 'int(d["applications"]["versions__delta"])' >/dev/null

hk_log "register"
hk_register "$U" DAPP r1
hk_register "$U" DAPP r2
assert_eq "ADDED UP" "$(delta_of r1)" "register -> ADDED"
assert_eq "list" "$(hk_json 'type(d["applications"]["application"][0]["instance"]).__name__')" "delta instance array"
same_hash register UP_2_

hk_log "cancel"
hk_register "$U" GONE c1
assert_http 200 DELETE "${U}apps/GONE/c1"
assert_eq "DELETED UP" "$(delta_of c1)" "cancel -> DELETED"
same_hash cancel UP_2_
assert_http 200 GET "${U}apps/delta"
assert_contains "<actionType>DELETED</actionType>" "$(cat "$HK_BODY")" "XML delta actionType"

hk_log "status override"
assert_http 200 PUT "${U}apps/DAPP/r1/status?value=OUT_OF_SERVICE"
assert_eq "MODIFIED OUT_OF_SERVICE" "$(delta_of r1)" "override -> MODIFIED"
same_hash override OUT_OF_SERVICE_1_UP_1_

hk_log "delete override"
assert_http 200 DELETE "${U}apps/DAPP/r1/status?value=UP"
assert_eq "MODIFIED UP" "$(delta_of r1)" "delete override -> MODIFIED"
same_hash "delete override" UP_2_

hk_log "metadata"
assert_http 200 PUT "${U}apps/DAPP/r2/metadata?k=v"
assert_eq "ADDED UP" "$(delta_of r2)" "metadata -> ADDED"
assert_http 200 GET "${U}apps/delta" -H "$J"
assert_eq v "$(hk_json 'next(i for a in d["applications"]["application"] for i in a["instance"] if i["instanceId"] == "r2")["metadata"]["k"]')" \
    "delta carries the new metadata"
same_hash metadata UP_2_

hk_log "duplicates collapse: one entry per (app, id)"
assert_http 200 GET "${U}apps/delta" -H "$J"
assert_eq 1 "$(hk_json 'sum(1 for a in d["applications"]["application"] for i in a["instance"] if i["instanceId"] == "r1")')" \
    "r1 listed once"

hk_log "heartbeats do not add delta entries"
hk_register "$U" HB h1
assert_http 200 PUT "${U}apps/HB/h1"
assert_eq "ADDED UP" "$(delta_of h1)" "heartbeat keeps ADDED"
same_hash heartbeat UP_3_

hk_log "a change shows up immediately in the full registry too"
hk_register "$U" LATE l1
assert_http 200 GET "${U}apps/LATE" -H "$J"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq UP_4_ "$(hk_json 'd["applications"]["apps__hashcode"]')" "full registry not stale"

hk_stop s

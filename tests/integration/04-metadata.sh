#!/bin/sh
# 04-metadata.sh: PUT apps/{app}/{id}/metadata?k=v (spec §2.11): keys are
# added or overwritten, others kept, lastDirtyTimestamp untouched, 404 for
# unknown instances.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
J="Accept: application/json"

hk_register "$U" SVC m1
assert_http 200 GET "${U}apps/SVC/m1" -H "$J"
dirty=$(hk_json 'd["instance"]["lastDirtyTimestamp"]')
assert_eq '{"zone":"default"}' "$(hk_json 'd["instance"]["metadata"]')" "initial metadata"

assert_http 200 PUT "${U}apps/SVC/m1/metadata?zone=eu-1&version=2.5"
assert_http 200 GET "${U}apps/SVC/m1" -H "$J"
assert_eq '{"version":"2.5","zone":"eu-1"}' "$(hk_json 'd["instance"]["metadata"]')" "updated metadata"
assert_eq "$dirty" "$(hk_json 'd["instance"]["lastDirtyTimestamp"]')" "lastDirtyTimestamp unchanged"
assert_eq UP "$(hk_json 'd["instance"]["status"]')" "status unchanged"

assert_http 200 PUT "${U}apps/svc/m1/metadata?extra=x%20y"
assert_http 200 GET "${U}apps/SVC/m1" -H "$J"
assert_eq '{"extra":"x y","version":"2.5","zone":"eu-1"}' "$(hk_json 'd["instance"]["metadata"]')" \
    "keys kept, value url-decoded"
assert_http 200 GET "${U}apps/SVC/m1"
assert_contains "<extra>x y</extra>" "$(cat "$HK_BODY")" "metadata in XML"

assert_http 404 PUT "${U}apps/SVC/nope/metadata?a=b"
assert_http 404 PUT "${U}apps/NOPE/m1/metadata?a=b"
assert_http 200 PUT "${U}apps/SVC/m1"	# still heartbeats fine

hk_stop s

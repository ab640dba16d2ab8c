#!/bin/sh
# 09-bad-json.sh: bad JSON registrations get a 4xx with a reason, never a
# crash and never a change: malformed/truncated bodies, wrong roots and
# types, invalid UTF-8, deep nesting, non-numeric timestamps, missing
# required fields (400 with Eureka's exact messages, spec §2.5), mismatched
# app names, wrong content types (415). The registry is compared before and
# after, and the server must still serve.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
J="Accept: application/json"
CT="Content-Type: application/json"

hk_register "$U" SVC base1
hk_register "$U" OTHER base2
assert_http 200 PUT "${U}apps/SVC/base1/status?value=OUT_OF_SERVICE"
before=$(hk_snapshot "$U")
d=$(hk_tmp)
hk_instance_json SVC new1 >"$d/good.json"

G=$d/good.json

# POST FILE to apps/APP with content type CTYPE; expect CODE and a reason.
post_bad()
{
	hk_log "$5"
	assert_refused s "$1" POST "${U}apps/$2" -H "$3" --data-binary @"$4"
}

# Expect 400 whose body (trimmed) is exactly MSG.
post_msg()
{
	post_bad 400 SVC "$CT" "$2" "message: $1"
	assert_eq "$1" "$(hk_body_trimmed)" "400 body"
}

printf '{"instance":{"hostName":' >"$d/trunc1"
post_bad 400 SVC "$CT" "$d/trunc1" "truncated JSON"
head -c 200 "$d/good.json" >"$d/trunc2"
post_bad 400 SVC "$CT" "$d/trunc2" "truncated real body"
printf '{"instance":{"hostName":"x",,}}' >"$d/m1"
post_bad 400 SVC "$CT" "$d/m1" "syntax error"
printf 'not json at all' >"$d/m2"
post_bad 400 SVC "$CT" "$d/m2" "not JSON"
: >"$d/empty"
post_bad 400 SVC "$CT" "$d/empty" "empty body"
printf '[]' >"$d/m3"
post_bad 400 SVC "$CT" "$d/m3" "array root"
printf '{"instance":"str"}' >"$d/m4"
post_bad 400 SVC "$CT" "$d/m4" "instance is a string"
printf '{"application":{"name":"SVC"}}' >"$d/m5"
post_bad 400 SVC "$CT" "$d/m5" "wrong root key"
cat "$d/good.json" >"$d/m6"; printf '{}' >>"$d/m6"
post_bad 400 SVC "$CT" "$d/m6" "trailing garbage after the document"
hk_mutate "$G" 'i["port"] = {"$": "abc", "@enabled": "true"}' >"$d/m7"
post_bad 400 SVC "$CT" "$d/m7" "non-numeric port"
hk_mutate "$G" 'i["lastDirtyTimestamp"] = "abc"' >"$d/m8"
post_bad 400 SVC "$CT" "$d/m8" "non-numeric lastDirtyTimestamp"
hk_mutate "$G" 'i["leaseInfo"] = {"durationInSecs": "soon"}' >"$d/m9"
post_bad 400 SVC "$CT" "$d/m9" "non-numeric lease duration"
hk_mutate "$G" 'i["metadata"] = {"a": {"b": "c"}}' >"$d/m10"
post_bad 400 SVC "$CT" "$d/m10" "metadata value is an object"
"$HK_PYTHON" -c 'import sys; sys.stdout.write("{\"instance\":{\"metadata\":{\"a\":" + "[" * 200 + "]" * 200 + "}}}")' >"$d/deep1"
post_bad 400 SVC "$CT" "$d/deep1" "deep JSON inside the instance"
"$HK_PYTHON" -c 'import sys; sys.stdout.write("[" * 60000 + "]" * 60000)' >"$d/deep2"
assert_http 413 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/deep2"	# 120 KB
"$HK_PYTHON" -c 'import sys; sys.stdout.write("{\"a\":" * 10000 + "1" + "}" * 10000)' >"$d/deep3"
post_bad 400 SVC "$CT" "$d/deep3" "10000-deep objects under the size cap"
"$HK_PYTHON" -c 'import sys; sys.stdout.buffer.write(open(sys.argv[1], "rb").read().replace(b"new1.example", b"new1\xff\xfe.example"))' \
    "$d/good.json" >"$d/utf8"
post_bad 400 SVC "$CT" "$d/utf8" "invalid UTF-8"

hk_log "missing required fields: Eureka's exact messages"
hk_mutate "$G" 'del i["instanceId"]; del i["hostName"]' >"$d/f1"
post_msg "Missing instanceId" "$d/f1"
hk_mutate "$G" 'i["instanceId"] = ""; i["hostName"] = ""' >"$d/f1b"
post_msg "Missing instanceId" "$d/f1b"
hk_mutate "$G" 'del i["hostName"]' >"$d/f2"
post_msg "Missing hostname" "$d/f2"
hk_mutate "$G" 'del i["ipAddr"]' >"$d/f3"
post_msg "Missing ip address" "$d/f3"
hk_mutate "$G" 'del i["app"]' >"$d/f4"
post_msg "Missing appName" "$d/f4"
hk_mutate "$G" 'i["app"] = "OTHER"' >"$d/f5"
post_msg "Mismatched appName, expecting SVC but was OTHER" "$d/f5"
hk_mutate "$G" 'del i["dataCenterInfo"]' >"$d/f6"
post_msg "Missing dataCenterInfo" "$d/f6"
hk_mutate "$G" 'del i["dataCenterInfo"]["name"]' >"$d/f7"
post_msg "Missing dataCenterInfo Name" "$d/f7"

hk_log "content types"
post_bad 415 SVC "Content-Type: text/plain" "$d/good.json" "text/plain"
post_bad 415 SVC "Content-Type: application/x-www-form-urlencoded" "$d/good.json" "form content type"
post_bad 415 SVC "Content-Type: application/json; charset=koi8-r" "$d/good.json" "unsupported charset"
post_bad 400 SVC "Content-Type: application/xml" "$d/good.json" "JSON sent as XML"

after=$(hk_snapshot "$U")
assert_eq "$before" "$after" "registry unchanged by bad JSON"
assert_http 404 GET "${U}apps/SVC/new1" -H "$J"

hk_log "the same body, well formed, still registers; lenient parts stay lenient"
assert_http 204 POST "${U}apps/SVC" -H "Content-Type: application/json; charset=UTF-8" \
    --data-binary @"$d/good.json"
hk_mutate "$G" 'i["app"] = "svc"' >"$d/ok1"
assert_http 204 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/ok1"	# app case differs: fine
hk_mutate "$G" 'i["instanceId"] = "new2"; i["status"] = "BOGUS"' >"$d/ok2"
assert_http 204 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/ok2"
assert_http 200 GET "${U}apps/SVC/new2" -H "$J"
assert_eq UNKNOWN "$(hk_json 'd["instance"]["status"]')" "unknown status decodes to UNKNOWN (§4.1.8)"
hk_mutate "$G" 'i["instanceId"] = "new3"; i["unknownKey"] = "x"; i["metadata"]["@class"] = "java.util.Map"' >"$d/ok3"
assert_http 204 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/ok3"
assert_http 200 GET "${U}apps/SVC/new3" -H "$J"
assert_eq '{"zone":"default"}' "$(hk_json 'd["instance"]["metadata"]')" "@class metadata entry dropped"

hk_stop s

#!/bin/sh
# 11-bad-limits.sh: heureka's bounds on input (issue 2, "Bad input"): bodies
# over 64 KiB -> 413, app names and instance ids with bad characters or
# over-long -> 400, too many metadata keys -> 4xx, over-long strings -> 4xx,
# in registrations and in metadata updates; nothing changes, the server
# stays up and still accepts good input.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
J="Accept: application/json"
CT="Content-Type: application/json"

hk_register "$U" SVC base1
before=$(hk_snapshot "$U")
d=$(hk_tmp)
hk_instance_json SVC n1 >"$d/good.json"

G=$d/good.json

hk_log "oversized bodies"
hk_mutate "$G" 'i["metadata"]["big"] = "x" * 70000' >"$d/big"
assert_http 413 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/big"
hk_alive s
"$HK_PYTHON" -c 'import sys; sys.stdout.write(" " * (65 * 1024))' >"$d/spaces"
cat "$d/good.json" >>"$d/spaces"
assert_http 413 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/spaces"
"$HK_PYTHON" -c 'import sys; sys.stdout.write("<instance><hostName>" + "x" * 70000 + "</hostName></instance>")' >"$d/big.xml"
assert_http 413 POST "${U}apps/SVC" -H "Content-Type: application/xml" --data-binary @"$d/big.xml"
hk_alive s
# A chunked upload has no Content-Length: the cap must still hold.
assert_http 413 POST "${U}apps/SVC" -H "$CT" -H "Transfer-Encoding: chunked" --data-binary @"$d/big"
hk_alive s

hk_log "bad app names and instance ids"
hk_mutate "$G" 'i["app"] = "BAD NAME"' >"$d/a1"
assert_refused s '4??' POST "${U}apps/BAD%20NAME" -H "$CT" --data-binary @"$d/a1"
hk_mutate "$G" 'i["app"] = "BAD\u0001CTRL"' >"$d/a2"
assert_refused s '4??' POST "${U}apps/BAD%01CTRL" -H "$CT" --data-binary @"$d/a2"
hk_mutate "$G" 'i["app"] = "A" * 300' >"$d/a3"
assert_refused s '4??' POST "${U}apps/$(printf 'A%.0s' $(seq 300))" -H "$CT" --data-binary @"$d/a3"
hk_mutate "$G" 'i["instanceId"] = "has space"' >"$d/i1"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/i1"
hk_mutate "$G" 'i["instanceId"] = "a/b"' >"$d/i2"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/i2"
hk_mutate "$G" 'i["instanceId"] = "x" * 300' >"$d/i3"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/i3"
hk_mutate "$G" 'i["instanceId"] = "nl\nid"' >"$d/i4"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/i4"
hk_mutate "$G" 'del i["instanceId"]; i["hostName"] = "h?x"' >"$d/i5"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/i5"

hk_log "over-long strings and too many metadata keys"
hk_mutate "$G" 'i["homePageUrl"] = "http://x/" + "y" * 10000' >"$d/s1"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/s1"
hk_mutate "$G" 'i["metadata"] = {"k%d" % n: "v" for n in range(200)}' >"$d/m1"
assert_refused s '4??' POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/m1"
q=$("$HK_PYTHON" -c 'print("&".join("k%d=v" % n for n in range(200)))')
assert_refused s '4??' PUT "${U}apps/SVC/base1/metadata?$q"
assert_refused s '4??' PUT "${U}apps/SVC/base1/metadata?k=$(printf 'v%.0s' $(seq 5000))"

after=$(hk_snapshot "$U")
assert_eq "$before" "$after" "registry unchanged by oversized/bad-name input"

hk_log "still alive and accepting good input"
hk_mutate "$G" 'i["metadata"] = {"k%d" % n: "v" for n in range(100)}' >"$d/ok"
assert_http 204 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/ok"
assert_http 200 GET "${U}apps/SVC/n1" -H "$J"
assert_eq 100 "$(hk_json 'len(d["instance"]["metadata"])')" "100 metadata keys accepted"
hk_mutate "$G" 'i["instanceId"] = "host-x:svc:8080"; i["app"] = "SVC.A_B-1"' >"$d/ok2"
assert_http 204 POST "${U}apps/SVC.A_B-1" -H "$CT" --data-binary @"$d/ok2"
assert_http 200 GET "${U}apps/svc.a_b-1/host-x:svc:8080" -H "$J"

hk_stop s

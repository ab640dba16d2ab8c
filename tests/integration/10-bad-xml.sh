#!/bin/sh
# 10-bad-xml.sh: bad XML registrations get a 4xx with a reason and change
# nothing: malformed and truncated documents, DOCTYPE and entities (internal,
# external, billion laughs: refused, never expanded or fetched), wrong root,
# missing required fields with Eureka's exact messages (spec §2.5),
# mismatched app names, non-numeric numbers.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
J="Accept: application/json"
CT="Content-Type: application/xml"

hk_register "$U" SVC base1
hk_register "$U" OTHER base2
before=$(hk_snapshot "$U")
d=$(hk_tmp)
now=$(date +%s%3N)
sed -e "s|<instanceId>[^<]*</instanceId>|<instanceId>x1</instanceId>|" \
    -e "s|ORDER-SERVICE|SVC|" -e "s|<lastDirtyTimestamp>[^<]*<|<lastDirtyTimestamp>$now<|" \
    "$TEST_DATA_DIR/instance.xml" >"$d/good.xml"

# POST FILE as XML to apps/SVC; expect CODE and a reason in the body.
post_bad()
{
	hk_log "$3"
	assert_refused s "$1" POST "${U}apps/SVC" -H "$CT" --data-binary @"$2"
}

# Expect 400 whose body (trimmed) is exactly MSG.
post_msg()
{
	post_bad 400 "$2" "message: $1"
	assert_eq "$1" "$(hk_body_trimmed)" "400 body"
}

# Print good.xml with sed expression EXPR applied.
edit()
{
	sed -e "$1" "$d/good.xml"
}

head -c 300 "$d/good.xml" >"$d/t1"
post_bad 400 "$d/t1" "truncated XML"
edit 's|</hostName>|</hostname>|' >"$d/t2"
post_bad 400 "$d/t2" "mismatched tags"
printf '<instance><hostName>a</hostName>' >"$d/t3"
post_bad 400 "$d/t3" "unclosed root"
printf '<foo><bar/></foo>' >"$d/t4"
post_bad 400 "$d/t4" "wrong root element"
printf 'plain text' >"$d/t5"
post_bad 400 "$d/t5" "not XML"
printf '<instance>&bogus;</instance>' >"$d/t6"
post_bad 400 "$d/t6" "undefined entity"
{ printf '<!DOCTYPE instance [<!ENTITY h "evil.example">]>\n'; edit 's|<hostName>[^<]*<|<hostName>\&h;<|'; } >"$d/e1"
post_bad 400 "$d/e1" "DOCTYPE with an internal entity"
{ printf '<!DOCTYPE instance SYSTEM "file:///etc/passwd">\n'; cat "$d/good.xml"; } >"$d/e2"
post_bad 400 "$d/e2" "DOCTYPE with an external DTD"
{ printf '<!DOCTYPE instance [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'; edit 's|<hostName>[^<]*<|<hostName>\&x;<|'; } >"$d/e3"
post_bad 400 "$d/e3" "external entity"
{
	printf '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
	prev=lol
	for n in 1 2 3 4 5 6 7 8 9; do
		printf '<!ENTITY lol%s "' "$n"
		for k in 1 2 3 4 5 6 7 8 9 10; do printf '&%s;' "$prev"; done
		printf '">\n'
		prev=lol$n
	done
	printf ']>\n'
	edit 's|<hostName>[^<]*<|<hostName>\&lol9;<|'
} >"$d/e4"
post_bad 400 "$d/e4" "billion laughs"
edit 's|<lastDirtyTimestamp>[^<]*<|<lastDirtyTimestamp>abc<|' >"$d/n1"
post_bad 400 "$d/n1" "non-numeric lastDirtyTimestamp"
edit 's|<port enabled="true">8080</port>|<port enabled="true">http</port>|' >"$d/n2"
post_bad 400 "$d/n2" "non-numeric port"
"$HK_PYTHON" -c 'import sys; sys.stdout.write("<instance>" + "<metadata>" * 2000 + "</metadata>" * 2000 + "</instance>")' >"$d/deep"
post_bad 400 "$d/deep" "deeply nested XML"

hk_log "missing required fields"
edit '/<instanceId>/d; /<hostName>/d' >"$d/f1"
post_msg "Missing instanceId" "$d/f1"
edit '/<hostName>/d' >"$d/f2"
post_msg "Missing hostname" "$d/f2"
edit '/<ipAddr>/d' >"$d/f3"
post_msg "Missing ip address" "$d/f3"
edit '/<app>/d' >"$d/f4"
post_msg "Missing appName" "$d/f4"
edit 's|<app>SVC</app>|<app>OTHER</app>|' >"$d/f5"
post_msg "Mismatched appName, expecting SVC but was OTHER" "$d/f5"
"$HK_PYTHON" -c 'import re, sys; s = open(sys.argv[1]).read(); sys.stdout.write(re.sub(r"<dataCenterInfo.*?</dataCenterInfo>", "", s, flags=re.S))' \
    "$d/good.xml" >"$d/f6"
post_msg "Missing dataCenterInfo" "$d/f6"
edit '/<name>MyOwn<\/name>/d' >"$d/f7"
post_msg "Missing dataCenterInfo Name" "$d/f7"

after=$(hk_snapshot "$U")
assert_eq "$before" "$after" "registry unchanged by bad XML"
assert_http 404 GET "${U}apps/SVC/x1" -H "$J"

hk_log "the good document registers (also with an XML declaration)"
assert_http 204 POST "${U}apps/SVC" -H "$CT" --data-binary @"$d/good.xml"
assert_http 200 GET "${U}apps/SVC/x1" -H "$J"
assert_eq host-a.example.com "$(hk_json 'd["instance"]["hostName"]')" "XML registration stored"
{ printf '<?xml version="1.0" encoding="UTF-8"?>\n'; edit 's|<instanceId>x1<|<instanceId>x2<|'; } >"$d/ok2"
assert_http 204 POST "${U}apps/svc" -H "$CT" --data-binary @"$d/ok2"
assert_http 200 GET "${U}apps/SVC/x2" -H "$J"

hk_stop s

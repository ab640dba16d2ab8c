#!/bin/sh
# 01-rest.sh: every read/write endpoint of spec §2.1 once, with the exact
# status codes, in both formats (XML by default, JSON when Accept contains
# json), over all three base paths, with and without trailing slashes, and
# with app names in any case.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s
R=http://127.0.0.1:$HK_PORT_s
J="Accept: application/json"

hk_log "empty registry"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq '{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}' \
    "$(cat "$HK_BODY")" "empty registry, JSON"
assert_contains json "$(hk_header Content-Type)" "JSON content type"
assert_http 200 GET "${U}apps"
assert_contains "<applications>" "$(cat "$HK_BODY")" "empty registry, XML by default"
assert_contains "<versions__delta>1</versions__delta>" "$(cat "$HK_BODY")" "XML versions__delta"
assert_contains xml "$(hk_header Content-Type)" "XML content type by default"
assert_http 200 GET "${U}apps" -H "Accept: */*"
assert_contains "<applications>" "$(cat "$HK_BODY")" "Accept */* gives XML"
assert_http 200 GET "${U}apps" -H "Accept: application/xml"
assert_contains "<applications>" "$(cat "$HK_BODY")" "Accept xml gives XML"
assert_http 200 GET "${U}apps" -H "Accept: text/plain, application/json;q=0.9"
assert_contains '{"applications":' "$(cat "$HK_BODY")" "Accept containing json gives JSON"

hk_log "register: JSON body"
hk_register "$U" order-service o1
[ ! -s "$HK_BODY" ] || fail "register 204 must have no body: $(cat "$HK_BODY")"

hk_log "register: XML body"
now=$(date +%s%3N)
sed -e "s|<instanceId>[^<]*</instanceId>|<instanceId>o2</instanceId>|" \
    -e "s|<hostName>[^<]*</hostName>|<hostName>o2.example</hostName>|" \
    -e "s|<lastDirtyTimestamp>[^<]*<|<lastDirtyTimestamp>$now<|" \
    "$TEST_DATA_DIR/instance.xml" >"$HK_ROOT/o2.xml"
assert_http 204 POST "${U}apps/ORDER-SERVICE" -H "Content-Type: application/xml" \
    --data-binary @"$HK_ROOT/o2.xml"
[ ! -s "$HK_BODY" ] || fail "register 204 (XML) must have no body"

hk_log "register: the Java and Spring client fixtures"
for c in java spring-cloud; do
	C=$(echo "$c" | tr a-z A-Z)
	sed -e "s/host-a.example.com:order-service:8080/$c-1/" \
	    -e "s/ORDER-SERVICE/$C-CLIENT/g; s/order-service/$c-client/g" \
	    "$TEST_DATA_DIR/register-request-$c-client.json" >"$HK_ROOT/$c.json"
	assert_http 204 POST "${U}apps/$C-CLIENT" -H "Content-Type: application/json" \
	    --data-binary @"$HK_ROOT/$c.json"
	assert_http 200 GET "${U}apps/$C-CLIENT/$c-1" -H "$J"
	assert_eq "$c-1" "$(hk_json 'd["instance"]["instanceId"]')" "$c client fixture registered"
done

hk_log "GET apps (JSON): arrays, types, hashcode"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq "1" "$(hk_json 'd["applications"]["versions__delta"]')" "versions__delta is the string 1"
assert_eq "UP_4_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "apps__hashcode"
assert_eq "list" "$(hk_json 'type(d["applications"]["application"]).__name__')" "application is an array"
assert_eq '["JAVA-CLIENT","ORDER-SERVICE","SPRING-CLOUD-CLIENT"]' \
    "$(hk_json 'sorted(a["name"] for a in d["applications"]["application"])')" "app names"
assert_eq "list" "$(hk_json '[type(a["instance"]).__name__ for a in d["applications"]["application"]][0]')" \
    "instance is an array"

hk_log "GET apps/{app}: both formats, any case, 404 for unknown"
for path in apps/ORDER-SERVICE apps/order-service apps/Order-Service apps/ORDER-SERVICE/; do
	assert_http 200 GET "${U}$path" -H "$J"
	assert_eq ORDER-SERVICE "$(hk_json 'd["application"]["name"]')" "$path name"
	assert_eq '["o1","o2"]' "$(hk_json 'sorted(i["instanceId"] for i in d["application"]["instance"])')" \
	    "$path instances"
done
assert_http 200 GET "${U}apps/order-service"
assert_contains "<application>" "$(cat "$HK_BODY")" "app XML"
assert_contains "<name>ORDER-SERVICE</name>" "$(cat "$HK_BODY")" "app XML name"
assert_http 404 GET "${U}apps/NO-SUCH-APP"
assert_http 404 GET "${U}apps/NO-SUCH-APP" -H "$J"

hk_log "GET apps/{app}/{id}: field types of §4.1.4"
assert_http 200 GET "${U}apps/order-service/o1" -H "$J"
assert_eq o1 "$(hk_json 'd["instance"]["instanceId"]')" "instanceId"
assert_eq ORDER-SERVICE "$(hk_json 'd["instance"]["app"]')" "app upper-cased"
assert_eq UP "$(hk_json 'd["instance"]["status"]')" "status"
assert_eq UNKNOWN "$(hk_json 'd["instance"]["overriddenStatus"]')" "overriddenStatus (camelCase in JSON)"
assert_eq '{"$":8080,"@enabled":"true"}' "$(hk_json 'd["instance"]["port"]')" "port object"
assert_eq '{"$":8443,"@enabled":"false"}' "$(hk_json 'd["instance"]["securePort"]')" "securePort object"
assert_eq false "$(hk_json 'd["instance"]["isCoordinatingDiscoveryServer"]')" "isCoordinatingDiscoveryServer string"
assert_eq str "$(hk_json 'type(d["instance"]["lastDirtyTimestamp"]).__name__')" "lastDirtyTimestamp is a string"
assert_eq str "$(hk_json 'type(d["instance"]["lastUpdatedTimestamp"]).__name__')" "lastUpdatedTimestamp is a string"
assert_eq int "$(hk_json 'type(d["instance"]["leaseInfo"]["registrationTimestamp"]).__name__')" \
    "lease timestamps are numbers"
assert_eq ADDED "$(hk_json 'd["instance"]["actionType"]')" "actionType"
assert_eq com.netflix.appinfo.InstanceInfo\$DefaultDataCenterInfo \
    "$(hk_json 'd["instance"]["dataCenterInfo"]["@class"]')" "dataCenterInfo @class"
assert_http 200 GET "${U}apps/ORDER-SERVICE/o2"
b=$(cat "$HK_BODY")
assert_contains "<instance>" "$b" "instance XML root"
assert_contains "<instanceId>o2</instanceId>" "$b" "instance XML id"
assert_contains "<overriddenstatus>UNKNOWN</overriddenstatus>" "$b" "XML spelling overriddenstatus"
assert_contains '<port enabled="true">8080</port>' "$b" "XML port"
assert_http 200 GET "${U}apps/ORDER-SERVICE/o2/" -H "$J"
assert_http 404 GET "${U}apps/ORDER-SERVICE/nope"
assert_http 404 GET "${U}apps/NO-SUCH-APP/o1"
assert_http 404 GET "${U}apps/ORDER-SERVICE/O1" -H "$J"	# ids are case-sensitive

hk_log "GET instances/{id}"
assert_http 200 GET "${U}instances/o1" -H "$J"
assert_eq o1 "$(hk_json 'd["instance"]["instanceId"]')" "instances/{id} JSON"
assert_http 200 GET "${U}instances/o2"
assert_contains "<instanceId>o2</instanceId>" "$(cat "$HK_BODY")" "instances/{id} XML"
assert_http 404 GET "${U}instances/nope"

hk_log "heartbeat"
assert_http 200 PUT "${U}apps/ORDER-SERVICE/o1"
[ ! -s "$HK_BODY" ] || fail "heartbeat 200 has no body"
# No body, no type (as Eureka's); not evhttp's text/html default.
assert_eq "" "$(hk_header Content-Type)" "heartbeat 200 Content-Type"
assert_http 200 PUT "${U}apps/order-service/o1?status=UP"
assert_http 404 PUT "${U}apps/ORDER-SERVICE/nope"
assert_http 404 PUT "${U}apps/NO-SUCH-APP/o1"

hk_log "all three base paths, with and without trailing slash"
for base in /eureka/v2/ /eureka/ /v2/; do
	for p in apps apps/ apps/delta apps/delta/ apps/ORDER-SERVICE apps/ORDER-SERVICE/ \
	    apps/ORDER-SERVICE/o1 apps/ORDER-SERVICE/o1/ instances/o1 vips/order-service \
	    svips/order-service; do
		assert_http 200 GET "$R$base$p" -H "$J"
	done
	assert_http 200 GET "$R${base}apps/"
	assert_contains "<applications>" "$(cat "$HK_BODY")" "$base apps/ XML"
	assert_http 200 PUT "$R${base}apps/ORDER-SERVICE/o1"
	assert_http 200 PUT "$R${base}apps/ORDER-SERVICE/o1/"
	assert_http 200 GET "$R${base}status"
done

hk_log "vips and svips"
assert_http 200 GET "${U}vips/order-service" -H "$J"
assert_eq -1 "$(hk_json 'd["applications"]["versions__delta"]')" "VIP versions__delta"
assert_eq '["o1","o2"]' \
    "$(hk_json 'sorted(i["instanceId"] for a in d["applications"]["application"] for i in a["instance"])')" \
    "vip members"
assert_eq "UP_2_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "vip hashcode over its instances"
assert_http 200 GET "${U}svips/order-service" -H "$J"
assert_eq 2 "$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])')" "svip members"
assert_http 200 GET "${U}vips/no-such-vip" -H "$J"
assert_eq "[]" "$(hk_json 'd["applications"]["application"]')" "unknown vip: empty list"
assert_http 200 GET "${U}vips/ORDER-SERVICE" -H "$J"
assert_eq "[]" "$(hk_json 'd["applications"]["application"]')" "vip match is case-sensitive"
assert_http 200 GET "${U}svips/no-such-vip" -H "$J"
assert_eq "[]" "$(hk_json 'd["applications"]["application"]')" "unknown svip: empty list"
assert_http 200 GET "${U}vips/no-such-vip"
assert_contains "<applications>" "$(cat "$HK_BODY")" "vip XML"

hk_log "serverinfo/statusoverrides, status, asg"
assert_http 200 GET "${R}/eureka/serverinfo/statusoverrides"
assert_contains application/json "$(hk_header Content-Type)" "statusoverrides content type"
assert_eq "{}" "$(hk_json 'd')" "no overrides yet"
assert_http 200 GET "${U}status"
assert_http 400 PUT "${U}asg/my-asg/status?value=ENABLED"

hk_log "cancel"
assert_http 200 DELETE "${U}apps/ORDER-SERVICE/o1"
assert_http 404 DELETE "${U}apps/ORDER-SERVICE/o1"
assert_http 404 GET "${U}apps/ORDER-SERVICE/o1" -H "$J"
assert_http 404 GET "${U}instances/o1" -H "$J"
assert_http 404 PUT "${U}apps/ORDER-SERVICE/o1"
assert_http 404 DELETE "${U}apps/NO-SUCH-APP/o1"
assert_http 200 DELETE "${U}apps/order-service/o2"
assert_http 404 GET "${U}apps/ORDER-SERVICE" -H "$J"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq "UP_2_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "hashcode after cancels"


hk_log "byte-exact output: the fixtures' instances registered again (§4.1, §4.2)"
hk_start f
F=$HK_URL_f
"$HK_PYTHON" - "$TEST_DATA_DIR/applications.json" "$HK_ROOT" <<'EOF' >"$HK_ROOT/fx.list"
import json, sys
apps = json.load(open(sys.argv[1]))["applications"]["application"]
n = 0
for a in apps:
    for i in a["instance"]:
        i = dict(i)
        i.pop("actionType", None)
        n += 1
        open("%s/fx%d.json" % (sys.argv[2], n), "w").write(
            json.dumps({"instance": i}))
        print(a["name"], n)
EOF
while read -r app n; do
	assert_http 204 POST "${F}apps/$app" -H "Content-Type: application/json" \
	    --data-binary @"$HK_ROOT/fx$n.json"
done <"$HK_ROOT/fx.list"
# Server-set times differ; everything else must match byte for byte.
fx_norm()
{
	sed -E 's/(Timestamp"?[:>]"?)[0-9]{13}/\1T/g' "$1"
}
for c in "applications.json apps $J" "applications.xml apps" \
    "application.json apps/order-service $J" "application.xml apps/order-service"; do
	set -- $c
	f=$1 path=$2
	shift 2
	assert_http 200 GET "${F}$path" ${1:+-H "$*"}
	assert_eq "$(fx_norm "$TEST_DATA_DIR/$f")" "$(fx_norm "$HK_BODY")" "$f byte for byte"
done

hk_log "XML names and escaping: metadata keys with _ and \$, special values"
cat >"$HK_ROOT/esc.json" <<'EOF'
{"instance":{"instanceId":"esc-1","hostName":"esc.example","app":"ESC","ipAddr":"10.9.9.9","dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"metadata":{"@class":"ignored","a_b":"x<y&z\"'>","c$d":"v\r1"}}}
EOF
assert_http 204 POST "${F}apps/ESC" -H "Content-Type: application/json" \
    --data-binary @"$HK_ROOT/esc.json"
assert_http 200 GET "${F}apps/ESC/esc-1"
assert_contains '<a__b>x&lt;y&amp;z&quot;&apos;&gt;</a__b>' "$(cat "$HK_BODY")" "XML _ coding and escaping"
assert_contains '<c_-d>v&#xd;1</c_-d>' "$(cat "$HK_BODY")" "XML \$ coding and CR"
assert_http 200 GET "${F}apps/ESC/esc-1" -H "$J"
assert_contains '"metadata":{"a_b":"x<y&z\"'"'"'>","c$d":"v\r1"},' "$(cat "$HK_BODY")" \
    "JSON metadata keeps the names, drops @class"

hk_log "HEAD as GET; query parameter names are case-sensitive; Amazon id"
assert_http 200 HEAD "${F}apps/ESC"
assert_http 404 HEAD "${F}apps/NO-SUCH-APP"
# An unknown parameter (wrong case) is ignored: this is a plain heartbeat.
assert_http 200 PUT "${F}apps/ESC/esc-1?LastDirtyTimestamp=99999999999999"
assert_http 400 PUT "${F}apps/ESC/esc-1/status?Value=UP"
cat >"$HK_ROOT/amz.json" <<'EOF'
{"instance":{"instanceId":"amz-1","hostName":"amz.example","app":"AMZ","ipAddr":"10.9.9.8","dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{}}}}
EOF
assert_http 204 POST "${F}apps/AMZ" -H "Content-Type: application/json" \
    --data-binary @"$HK_ROOT/amz.json"
assert_http 200 GET "${F}apps/AMZ/amz-1" -H "$J"
assert_contains '"metadata":{"instance-id":"amz-1"}' "$(cat "$HK_BODY")" \
    "a blank Amazon instance-id is filled with the id"
hk_stop f

hk_stop s

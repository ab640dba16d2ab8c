#!/bin/sh
# 95-consul.sh: Consul's read-only catalog and health API on heurekad
# (issue 26, docs/dns-consul.md) asked with curl: the JSON shapes and
# field names of catalog/services, catalog/service/<name> (?tag=),
# health/service/<name> (?passing, check status from the Eureka status),
# catalog/nodes, status/leader, agent/self; X-Consul-Index,
# X-Consul-KnownLeader and X-Consul-LastContact on every answer; a
# blocking query held until a change and answered at once after it, or
# at the end of its wait with the same index; clients that go away while
# held; bad index, wait and filter refused with a reason; Basic auth
# when security is on; heureka.consul.enabled=false.
. "$(dirname "$0")/lib.sh"

hk_start S --log-level debug
C=http://127.0.0.1:$HK_PORT_S/v1

# Register APP/ID at IP:PORT with STATUS and the tags metadata TAGS.
reg()
{
	assert_http 204 POST "${HK_URL_S}apps/$1" \
	    -H 'Content-Type: application/json' --data-binary \
	    "{\"instance\":{\"instanceId\":\"$2\",\"hostName\":\"$2.example\",
\"app\":\"$1\",\"ipAddr\":\"$3\",\"status\":\"${5:-UP}\",
\"port\":{\"\$\":$4,\"@enabled\":\"true\"},
\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.InstanceInfo\$DefaultDataCenterInfo\",\"name\":\"MyOwn\"},
\"metadata\":{\"tags\":\"${6:-}\",\"team\":\"core\"}}}"
}

# Run python on the last body ($HK_BODY as d); prints what it prints.
py()
{
	"$HK_PYTHON" -c "import json,sys
d=json.load(open(sys.argv[1]))
$1" "$HK_BODY"
}

# The X-Consul-Index of the last answer.
index()
{
	hk_header X-Consul-Index
}

reg WEB web-1 10.0.0.1 8080 UP "prod, v1"
reg WEB web-2 10.0.0.2 8081 UP v1
reg WEB web-3 10.0.0.3 8082 STARTING ""
reg DB db-1 10.0.0.9 5432 OUT_OF_SERVICE ""

hk_log "catalog/services"
assert_http 200 GET "$C/catalog/services"
assert_eq '{"db": [], "web": ["prod", "v1"]}' \
    "$(py 'print(json.dumps(d, sort_keys=True))')" "services and tags"
assert_eq true "$(hk_header X-Consul-KnownLeader)" "KnownLeader"
assert_eq 0 "$(hk_header X-Consul-LastContact)" "LastContact"
I0=$(index)
[ "$I0" -gt 0 ] || fail "X-Consul-Index [$I0]"
assert_eq application/json "$(hk_header Content-Type)" "content type"

hk_log "catalog/service/<name>"
assert_http 200 GET "$C/catalog/service/WEB"
assert_eq "web-1 web-2 web-3" \
    "$(py 'print(" ".join(sorted(e["ServiceID"] for e in d)))')" "instances"
assert_eq "web web-1.example 10.0.0.1 10.0.0.1 8080 prod,v1 core default" \
    "$(py 'e=[e for e in d if e["ServiceID"]=="web-1"][0]
print(e["ServiceName"], e["Node"], e["Address"], e["ServiceAddress"],
    e["ServicePort"], ",".join(e["ServiceTags"]), e["ServiceMeta"]["team"],
    e["Datacenter"])')" "CatalogService fields"
assert_http 200 GET "$C/catalog/service/web?tag=prod"
assert_eq "web-1" "$(py 'print(" ".join(e["ServiceID"] for e in d))')" "?tag="
assert_http 200 GET "$C/catalog/service/web?tag=prod&tag=nope"
assert_eq "0" "$(py 'print(len(d))')" "two tags, both required"
assert_http 200 GET "$C/catalog/service/nothing"
assert_eq "[]" "$(hk_body_trimmed)" "unknown service: empty list"
[ -n "$(index)" ] || fail "no index on an unknown service"

hk_log "health/service/<name>"
assert_http 200 GET "$C/health/service/web"
assert_eq "web-1:passing web-2:passing web-3:warning" \
    "$(py 'print(" ".join(sorted(e["Service"]["ID"] + ":" + e["Checks"][0]["Status"] for e in d)))')" \
    "check status from the Eureka status"
assert_eq "web-1.example 10.0.0.1 web 8080 service:web-1 web-1" \
    "$(py 'e=[e for e in d if e["Service"]["ID"]=="web-1"][0]
print(e["Node"]["Node"], e["Node"]["Address"], e["Service"]["Service"],
    e["Service"]["Port"], e["Checks"][0]["CheckID"],
    e["Checks"][0]["ServiceID"])')" "ServiceEntry fields"
assert_http 200 GET "$C/health/service/web?passing"
assert_eq "web-1 web-2" \
    "$(py 'print(" ".join(sorted(e["Service"]["ID"] for e in d)))')" "?passing"
assert_http 200 GET "$C/health/service/db"
assert_eq critical "$(py 'print(d[0]["Checks"][0]["Status"])')" \
    "OUT_OF_SERVICE is critical"

hk_log "catalog/nodes, status/leader, agent/self"
assert_http 200 GET "$C/catalog/nodes"
assert_eq "db-1.example web-1.example web-2.example web-3.example" \
    "$(py 'print(" ".join(sorted(n["Node"] for n in d)))')" "nodes"
assert_http 200 GET "$C/status/leader"
assert_eq ":$HK_PORT_S" "$(py 'print(d[d.rindex(":"):])')" "leader"
assert_http 200 GET "$C/agent/self"
assert_eq default "$(py 'print(d["Config"]["Datacenter"])')" "datacenter"

hk_log "blocking query: held until a change"
T=$(hk_tmp)
assert_http 200 GET "$C/health/service/web"
IW=$(index)
hk_curl -s -D "$T/h1" -o "$T/b1" "$C/health/service/web?index=$IW&wait=60s" &
P1=$!
hk_own "$P1"
# An unrelated application's change does not wake a service's query.
reg OTHER other-1 10.0.5.1 9000
sleep 0.5
[ -s "$T/h1" ] && fail "answered before the change: $(cat "$T/h1")"
start=$(date +%s%N)
reg WEB web-4 10.0.0.4 8083
wait "$P1" || fail "blocking curl failed"
hk_disown "$P1"
took=$((($(date +%s%N) - start) / 1000000))
hk_log "blocking query answered ${took} ms after the change"
[ "$took" -lt 5000 ] || fail "answered ${took} ms after the change"
I2=$(sed -n 's/^X-Consul-Index: \([0-9]*\).*/\1/p' "$T/h1" | tr -d '\r')
[ "$I2" -gt "$IW" ] || fail "index did not move: $IW -> $I2"
grep -q '"web-4"' "$T/b1" || fail "the change is not in the answer"

hk_log "blocking query: the wait ends with the same index"
start=$(date +%s%N)
assert_http 200 GET "$C/catalog/services?index=$((I2 + 100))&wait=1s"
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -ge 900 ] || fail "wait=1s answered after ${took} ms"
[ "$took" -lt 10000 ] || fail "wait=1s answered after ${took} ms"
assert_http 200 GET "$C/catalog/services?index=0&wait=1s"
assert_http 200 GET "$C/catalog/services?index=1"
hk_log "index=0 and an old index answer at once"

hk_log "clients that go away while held"
i=0
while [ "$i" -lt 20 ]; do
	hk_curl -s -o /dev/null --max-time 1 \
	    "$C/catalog/services?index=$((I2 + 100))&wait=5m" 2>/dev/null || true
	i=$((i + 1))
done
# Each is noticed at its end of file and its connection freed.
gone()
{
	grep -c "blocked on a Consul query went away" "$HK_ROOT/S.log"
}
wait_until 10 hk_ge 20 gone
assert_http 200 GET "$C/catalog/services"
reg WEB web-5 10.0.0.5 8084
assert_http 200 GET "$C/catalog/service/web"
assert_eq 5 "$(py 'print(len(d))')" "still answering"

hk_log "bad input: 400 with a reason"
assert_refused S 400 GET "$C/catalog/services?index=x"
assert_refused S 400 GET "$C/catalog/services?index=-1"
assert_refused S 400 GET "$C/catalog/services?wait=10"
assert_refused S 400 GET "$C/catalog/services?wait=5x"
assert_refused S 400 GET "$C/health/service/web?filter=Service.Port%3D%3D1"
assert_http 405 PUT "$C/catalog/services"
assert_http 404 PUT "$C/agent/service/register"
assert_http 404 GET "$C/kv/x"

hk_log "Basic auth when security is on, Consul off by its key"
PW="c0nsul-$$"
printf '%s\n' "$PW" >"$T/pw"
chmod 600 "$T/pw"
hk_start A -D heureka.security.user.password-file="$T/pw"
CA=http://127.0.0.1:$HK_PORT_A/v1
assert_http 401 GET "$CA/catalog/services"
assert_http 401 GET "$CA/catalog/services" -H "X-Consul-Token: $PW"
assert_http 200 GET "$CA/catalog/services" -u "user:$PW"
hk_start OFF -D heureka.consul.enabled=false
assert_http 404 GET "http://127.0.0.1:$HK_PORT_OFF/v1/catalog/services"
hk_stop OFF
hk_stop A
hk_stop S
hk_log "ok"

#!/usr/bin/env bash
# scenario.sh: Spring Cloud Consul's discovery client reading heurekad's
# Consul catalog and health API (docs/dns-consul.md), run by run.sh after
# it built the jar.
#
# A real heurekad on 127.0.0.1 with an ephemeral port (tests/integration/
# lib.sh), its access log on; two instances of WEB (ports 8081 and 8082,
# metadata tags "prod,v1") and one of DB (no tags) registered through
# Eureka's REST API. Then heureka.interop.ConsulList (read-only: no
# registration, no Consul config) runs twice, each JVM bounded:
#
#	first   getServices() lists web and db; getInstances("web") gives both
#	        instances with their address, port, tags [prod, v1] and
#	        metadata; getInstances("db") one with no tags
#	second  after WEB/web-2 is cancelled: web-1 alone
#
# Each check prints "PASS: ..." or "FAIL: ..." (run.sh counts them); a
# setup failure (heurekad, the JVM not exiting) ends the script through
# lib.sh's fail. The Consul requests the client made are printed from the
# access log. heurekad is stopped with SIGTERM, by PID, and must exit 0.
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../../.." && pwd)
: "${HEUREKAD:=$TOP/build/server/heurekad}"
: "${JAVA:=java}"
: "${JCO_JVM_TIMEOUT:=90}"
export HEUREKAD
# shellcheck source=../../../integration/lib.sh
. "$TOP/tests/integration/lib.sh"

CP="$HERE/target/classes:$(cat "$HERE/target/classpath.txt")"
# Small, quick JVMs: two cores are shared by everything.
JOPTS="-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k"
NFAIL=0

# Record check NAME as passed when CMD... succeeds, else failed.
check()
{
	local name=$1
	shift
	if "$@"; then
		echo "PASS: $name"
	else
		echo "FAIL: $name"
		NFAIL=$((NFAIL + 1))
	fi
}

# Succeed when CMD... fails.
not()
{
	! "$@"
}

# Is line $2 (exactly) in file $1?
has_line()
{
	grep -qxF -- "$2" "$1"
}

# Does some line of file $1 match the extended regex $2?
has_match()
{
	grep -qE -- "$2" "$1"
}

# Register APP/ID on PORT (address 10.0.0.PORT-8080) with metadata META
# (a python dict literal) and status STATUS (default UP).
register()
{
	local app=$1 id=$2 port=$3 meta=$4 status=${5:-UP}
	hk_instance_json "$app" "$id" "$status" >"$HK_ROOT/i.json"
	hk_mutate "$HK_ROOT/i.json" \
	    "i['port']['\$'] = $port; i['ipAddr'] = '10.0.0.$((port - 8080))'; i['metadata'] = $meta" \
	    >"$HK_ROOT/r.json"
	assert_http 204 POST "${HK_URL_hk}apps/$app" \
	    -H 'Content-Type: application/json' --data-binary @"$HK_ROOT/r.json"
}

# Start ConsulList against heurekad in the background, output to $1,
# Spring arguments after it; sets JPID.
client_start()
{
	local out=$1
	shift
	echo "=== java-consul: ConsulList $* (log: $out)"
	# shellcheck disable=SC2086
	"$JAVA" $JOPTS -cp "$CP" heureka.interop.ConsulList \
	    --spring.cloud.consul.host=127.0.0.1 \
	    --spring.cloud.consul.port="$HK_PORT_hk" \
	    --heureka.apps=web,db "$@" </dev/null >"$out" 2>&1 &
	JPID=$!
	hk_own "$JPID"
}

# Wait (at most $JCO_JVM_TIMEOUT s) for the JVM to exit; print the lines
# of its output $1 that matter; return its exit status.
client_wait()
{
	local out=$1 i=0 rc=0
	while kill -0 "$JPID" 2>/dev/null && [ "$i" -lt $((JCO_JVM_TIMEOUT * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$JPID" 2>/dev/null && fail "ConsulList did not exit within ${JCO_JVM_TIMEOUT}s"
	wait "$JPID" || rc=$?
	hk_disown "$JPID"
	grep -E '^(CLIENT|SERVICES|(AFTER )?(INSTANCE|COUNT)|DONE|ERROR|WATCH|CHANGED)' "$out"
	grep -E ' (WARN|ERROR) ' "$out" | grep -v LoadBalancerCaffeine | head -n 20
	return "$rc"
}

# On a failure, the JVM's last lines.
_jco_log()
{
	local f
	for f in "$HK_ROOT"/run*.log; do
		[ -f "$f" ] || continue
		echo "===== $f (last 60 lines) =====" >&2
		tail -n 60 "$f" >&2
	done
}
hk_on_fail _jco_log

hk_start hk -D heureka.consul.enabled=true -D heureka.log.access="$HK_ROOT/access.log"
register WEB web-1 8081 "{'tags': 'prod,v1', 'zone': 'z1'}"
register WEB web-2 8082 "{'tags': 'prod,v1', 'zone': 'z2'}"
register WEB web-3 8084 "{'tags': 'canary'}" DOWN
register DB db-1 8083 "{'zone': 'z1'}"

# ------------------------------------------------------------ first run
# Default query-passing=false: every instance, web-3 (DOWN) included, as
# Consul answers /v1/health/service without ?passing.
OUT1=$HK_ROOT/run1.log
client_start "$OUT1" --heureka.watch-ms=$((JCO_JVM_TIMEOUT * 1000 - 30000))
wait_until $((JCO_JVM_TIMEOUT - 30)) has_match "$OUT1" '^(WATCHING|WATCH-TIMEOUT|ERROR)'
check "first run: the catalog watch runs" has_match "$OUT1" '^WATCHING index=[0-9]+$'
# The change the watch has to see: web-2's lease cancelled.
assert_http 200 DELETE "${HK_URL_hk}apps/WEB/web-2"
rc=0
client_wait "$OUT1" || rc=$?
check "first run exits 0" [ "$rc" -eq 0 ]
check "first run completes" has_line "$OUT1" "DONE"
check "the client is Spring Cloud Consul's" \
    has_match "$OUT1" '^CLIENT org\.springframework\.cloud\.(client\.discovery\.composite\.CompositeDiscoveryClient|consul\.discovery\.ConsulDiscoveryClient)$'
check "getServices() lists db and web" has_line "$OUT1" "SERVICES db,web"
check "getInstances(web): 3 instances" has_line "$OUT1" "COUNT web 3"
check "web-1: address, port, tags, metadata" has_match "$OUT1" \
    '^INSTANCE web id=web-1 service=web host=10\.0\.0\.1 port=8081 secure=false uri=http://10\.0\.0\.1:8081 tags=\[prod, v1\] meta=\{tags=prod,v1, zone=z1\}$'
check "web-2: address, port, tags, metadata" has_match "$OUT1" \
    '^INSTANCE web id=web-2 service=web host=10\.0\.0\.2 port=8082 secure=false uri=http://10\.0\.0\.2:8082 tags=\[prod, v1\] meta=\{tags=prod,v1, zone=z2\}$'
check "web-3 (DOWN) listed without ?passing" has_match "$OUT1" \
    '^INSTANCE web id=web-3 service=web host=10\.0\.0\.4 port=8084 .* tags=\[canary\] '
check "getInstances(db): 1 instance, no tags" has_match "$OUT1" \
    '^INSTANCE db id=db-1 service=db host=10\.0\.0\.3 port=8083 secure=false uri=http://10\.0\.0\.3:8083 tags=\[\] meta=\{zone=z1\}$'
check "getInstances(db) count" has_line "$OUT1" "COUNT db 1"
check "the watch sees the cancel (a new X-Consul-Index)" has_match "$OUT1" '^CHANGED index=[0-9]+$'
check "after the watch: getInstances(web) without web-2" has_line "$OUT1" "AFTER COUNT web 2"
check "after the watch: web-2 is gone" not has_match "$OUT1" '^AFTER INSTANCE web id=web-2 '
check "the watch's index moved" \
    [ "$(sed -n 's/^WATCHING index=//p' "$OUT1")" != "$(sed -n 's/^CHANGED index=//p' "$OUT1")" ]

# ------------------------------------------------------------ second run
# A new JVM with query-passing=true (?passing=true): web-1 alone (web-2
# cancelled, web-3 DOWN).
OUT2=$HK_ROOT/run2.log
client_start "$OUT2" --spring.cloud.consul.discovery.query-passing=true
rc=0
client_wait "$OUT2" || rc=$?
check "second run exits 0" [ "$rc" -eq 0 ]
check "second run: getInstances(web) with ?passing: 1 instance" has_line "$OUT2" "COUNT web 1"
check "second run: web-1 is there" has_match "$OUT2" '^INSTANCE web id=web-1 .* port=8081 .* tags=\[prod, v1\] '
check "second run: getServices() lists db and web" has_line "$OUT2" "SERVICES db,web"

# ------------------------------------------------------------ what it asked
echo "=== java-consul: the client's requests (heurekad's access log, counted)"
awk '$4 ~ /^\/v1\// { print $3, $4, $5 }' "$HK_ROOT/access.log" |
    sed 's/index=[0-9]*/index=N/' | sort | uniq -c
check "it read /v1/ only with GET, each answered 200" \
    not has_match "$HK_ROOT/access.log" ' /v1/[^ ]* ([^2][0-9][0-9]|2[1-9][0-9]|20[1-9]) | (POST|PUT|DELETE) /v1/'
check "the watch used blocking queries (?index=)" \
    has_match "$HK_ROOT/access.log" ' GET /v1/catalog/services\?[^ ]*index=[0-9]+'

hk_stop hk
echo "java-consul: $NFAIL check(s) failed"
[ "$NFAIL" -eq 0 ]

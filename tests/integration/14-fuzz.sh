#!/bin/sh
# 14-fuzz.sh: a bounded, seeded fuzz of a real heurekad (fuzz.py does the
# sending). Seeded JSON and XML instances (one with an override and extra
# metadata) are registered and snapshotted; thousands of hostile requests
# follow; then the seeded instances must be intact (the full snapshot,
# hashcode included, once the fuzz's own accepted registrations are
# cancelled), the server must answer GET /eureka/apps within 1 s, its RSS
# must have stayed bounded and SIGTERM must still end it with status 0.
#
# FUZZ_SEED replays a run (the seed is printed); FUZZ_ITERATIONS sets the
# number of requests (default 3000, well under 60 s).
. "$(dirname "$0")/lib.sh"

# No eviction during the run: a refused write must be the only thing that
# could change the registry between two snapshots.
hk_start s -D eureka.server.eviction-interval-timer-in-ms=3600000
U=$HK_URL_s
pid=$HK_PID_s

hk_log "seeding the registry"
hk_register "$U" FZSEED-JSON seed-j1
hk_register "$U" FZSEED-JSON seed-j2 STARTING
d=$(hk_tmp)
now=$(date +%s%3N)
cat >"$d/x.xml" <<XML
<instance><instanceId>seed-x1</instanceId><hostName>seed-x1.example</hostName>
<app>FZSEED-XML</app><ipAddr>10.0.0.2</ipAddr><status>UP</status>
<overriddenstatus>UNKNOWN</overriddenstatus><port enabled="true">8080</port>
<securePort enabled="false">443</securePort><countryId>1</countryId>
<dataCenterInfo class="com.netflix.appinfo.InstanceInfo\$DefaultDataCenterInfo"><name>MyOwn</name></dataCenterInfo>
<leaseInfo><renewalIntervalInSecs>30</renewalIntervalInSecs><durationInSecs>90</durationInSecs></leaseInfo>
<metadata><zone>z9</zone><k1>v1</k1></metadata><vipAddress>fzseed-xml</vipAddress>
<lastDirtyTimestamp>$now</lastDirtyTimestamp></instance>
XML
assert_http 204 POST "${U}apps/FZSEED-XML" -H 'Content-Type: application/xml' \
    --data-binary @"$d/x.xml"
assert_http 200 PUT "${U}apps/FZSEED-JSON/seed-j1/status?value=OUT_OF_SERVICE"
assert_http 200 PUT "${U}apps/FZSEED-XML/seed-x1/metadata?owner=fuzz&tier=1"
before=$(hk_snapshot "$U")
echo "$before" >&2

# A descriptor limit the final connection flood of fuzz.py goes past.
flood=0
if command -v prlimit >/dev/null 2>&1 &&
    prlimit --pid "$pid" --nofile=128:128 2>/dev/null; then
	flood=200
fi

# ASan keeps up to 256 MiB of freed memory in quarantine on top of what
# heurekad holds: the bound there is that much higher.
rss_max=$((256 * 1024))
if hk_asan; then
	rss_max=$((768 * 1024))
fi

hk_log "fuzzing"
"$HK_PYTHON" "$TESTS_DIR/integration/fuzz.py" --port "$HK_PORT_s" \
    --pid "$pid" --rss-max-kb "${FUZZ_RSS_MAX_KB:-$rss_max}" --log "$HK_ROOT/s.log" --flood "$flood" --seeded FZSEED-JSON/seed-j1,FZSEED-JSON/seed-j2,FZSEED-XML/seed-x1 ||
    fail "fuzz found problems (see above; replay with the printed FUZZ_SEED)"

hk_log "after the fuzz"
hk_alive s
t0=$(date +%s%N)
assert_http 200 GET "${U}apps" --max-time 1
t1=$(date +%s%N)
hk_log "GET /eureka/apps answered in $(((t1 - t0) / 1000000)) ms"
after=$(hk_snapshot "$U")
assert_eq "$before" "$after" "seeded registry unchanged by the fuzz"
assert_http 200 GET "${U}apps/FZSEED-XML/seed-x1" -H 'Accept: application/json'
assert_eq fuzz "$(hk_json 'd["instance"]["metadata"]["owner"]')" "seeded metadata kept"
hk_register "$U" FZSEED-JSON seed-j3
hk_stop s

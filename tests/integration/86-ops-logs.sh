#!/bin/sh
# 86-ops-logs.sh: what an operator reads in heurekad's logs. Register,
# cancel, eviction and status changes are logged at INFO with the app and
# the instance id (an eviction names the lease), at most 100 lines per
# 10 s, the rest summed up in one line; the access log has a real
# timestamp, the client address and the bytes sent, and follows
# --log-format json.
. "$(dirname "$0")/lib.sh"

d=$(hk_tmp)

hk_log "lifecycle lines"
hk_start s -D eureka.server.eviction-interval-timer-in-ms=300 \
    -D eureka.server.enable-self-preservation=false
U=$HK_URL_s
L=$HK_ROOT/s.log
hk_register "$U" ORDERS o1
hk_register "$U" ORDERS o1
assert_http 200 PUT "${U}apps/ORDERS/o1/status?value=OUT_OF_SERVICE"
assert_http 200 DELETE "${U}apps/ORDERS/o1/status?value=UP"
assert_http 200 DELETE "${U}apps/ORDERS/o1"
hk_register "$U" SHORT s1 UP 1
wait_until 15 grep -q 'evicted SHORT/s1' "$L"
for want in 'INFO.*registered ORDERS/o1 (status UP)' \
    'INFO.*registered again ORDERS/o1' \
    'INFO.*status override ORDERS/o1: OUT_OF_SERVICE' \
    'INFO.*status override of ORDERS/o1 removed' \
    'INFO.*cancelled ORDERS/o1' \
    'INFO.*registered SHORT/s1' \
    'INFO.*evicted SHORT/s1: lease expired'; do
	grep -q "$want" "$L" || fail "no log line [$want]"
done
# A heartbeat is not a change worth a line.
hk_register "$U" KEEP k1
n=$(grep -c 'KEEP/k1' "$L")
for i in 1 2 3 4 5; do assert_http 200 PUT "${U}apps/KEEP/k1"; done
assert_eq "$n" "$(grep -c 'KEEP/k1' "$L")" "heartbeats logged"

hk_log "a flood: 100 lines, then one summary"
# 300 registrations in a burst: the window's 100 lines (fewer by the
# changes above, in the same window), then the rest counted.
"$HK_PYTHON" - "$U" <<'PYEOF' || fail "flood"
import http.client, json, sys, urllib.parse
import hkfixture
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
for i in range(300):
    body = json.dumps({"instance": hkfixture.instance("FLOOD", "f%d" % i)})
    c.request("POST", u.path + "apps/FLOOD", body, {"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    assert r.status == 204, r.status
PYEOF
wait_until 30 grep -q 'registry: [0-9]* more changes* not logged' "$L"
lines=$(grep -c 'registered FLOOD/' "$L")
[ "$lines" -le 100 ] && [ "$lines" -ge 50 ] || fail "$lines FLOOD lines logged"
# Every summary's registrations (the flood may straddle two windows).
held=$(sed -n 's/.*registry: [0-9]* more changes\{0,1\} not logged.*: \([0-9]*\) registered.*/\1/p' "$L" |
    awk '{ n += $1 } END { print n + 0 }')
[ "$held" -gt 0 ] || fail "summary: $(grep 'more change' "$L")"
assert_eq 300 "$((lines + held))" "FLOOD lines + registrations summed up"
hk_stop s

hk_log "access log, text"
hk_start t -D heureka.log.access="$d/access.log"
R=http://127.0.0.1:$HK_PORT_t
sz=$(hk_curl -o /dev/null -w '%{size_download}' "$R/eureka/apps")
[ "$sz" -gt 0 ] || fail "empty apps body"
hk_register "$HK_URL_t" A a1
hk_stop t
line=$(grep ' GET /eureka/apps ' "$d/access.log" | tail -n 1)
echo "$line" | grep -Eq '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}Z 127\.0\.0\.1 GET /eureka/apps 200 '"$sz"' [0-9]+us$' ||
    fail "access log line [$line] (body $sz bytes)"
grep -Eq 'Z 127\.0\.0\.1 POST /eureka/apps/A 204 0 [0-9]+us$' "$d/access.log" ||
    fail "register line: $(grep POST "$d/access.log")"

hk_log "access log, --log-format json"
hk_start j --log-format json -D heureka.log.access=-
R=http://127.0.0.1:$HK_PORT_j
sz=$(hk_curl -o /dev/null -w '%{size_download}' -H 'Accept: application/json' "$R/eureka/apps?x=1")
hk_stop j
"$HK_PYTHON" - "$HK_ROOT/j.log" "$sz" <<'PYEOF' || fail "JSON access log"
import json, re, sys
path, size = sys.argv[1], int(sys.argv[2])
acc = []
for line in open(path):
    if line.startswith("==="):
        continue
    d = json.loads(line)         # every line of the log is JSON
    if d.get("logger") == "access":
        acc.append(d)
hits = [d for d in acc if d["uri"].startswith("/eureka/apps?x=")]
assert len(hits) == 1, acc
d = hits[0]
assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", d["timestamp"]), d
assert d["remote"] == "127.0.0.1", d
assert d["method"] == "GET" and d["status"] == 200, d
assert d["bytes"] == size, (d, size)
assert isinstance(d["durationUs"], int), d
PYEOF

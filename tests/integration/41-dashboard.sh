#!/bin/sh
# 41-dashboard.sh: the dashboard over plain HTTP (no browser): the page and
# /lastn are rendered on the server with every value escaped, the safety
# headers are sent, the JSON feed parses, eureka.dashboard.path moves the
# page (and its assets) and eureka.dashboard.enabled=false removes it while
# the operations endpoints stay. The charts' history (history.json) has
# its shape, stays within its capacity and counts what /metrics counts;
# a peer's queue depth and replication lag show in it.
. "$(dirname "$0")/lib.sh"

# history.json at $1 (the dashboard's root URL): shape and bound; its
# newest sample counts $2 registrations and $3 cancels in all, and the
# per-interval counts add up to them.
history_says()
{
	hk_curl -s -o "$HK_ROOT/history.json" "$1heureka-assets/history.json" &&
	"$HK_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["samples"]
assert d["intervalMs"] == 1000 and d["capacity"] == 60, d
assert 2 <= len(s) <= d["capacity"], len(s)
for x in s:
    for k in ("at", "registrations", "renewals", "cancels", "renewsLastMin",
              "threshold", "registrationsTotal", "cancelsTotal"):
        assert isinstance(x[k], int), (k, x)
    assert len(x["peers"]) == len(d["peers"]), x
assert [x["at"] for x in s] == sorted(x["at"] for x in s), "not oldest first"
last = s[-1]
assert last["registrationsTotal"] == int(sys.argv[2]), last
assert last["cancelsTotal"] == int(sys.argv[3]), last
if len(s) < d["capacity"]:
    assert sum(x["registrations"] for x in s) == int(sys.argv[2]), s
    assert sum(x["cancels"] for x in s) == int(sys.argv[3]), s
' "$HK_ROOT/history.json" "$2" "$3"
}

hk_start s -D eureka.server.wait-time-in-ms-when-sync-empty=0 \
    -D heureka.dashboard.history-interval-ms=1000
U=$HK_URL_s
R=http://127.0.0.1:$HK_PORT_s

hk_log "empty registry"
assert_http 200 GET "$R/"
assert_contains "No instances available" "$(cat "$HK_BODY")" "empty instance table"
assert_contains "frame-ancestors 'none'" "$(hk_header Content-Security-Policy)" "CSP"
assert_eq nosniff "$(hk_header X-Content-Type-Options)" "nosniff"
assert_http 200 GET "$R/lastn"
assert_contains "No results available" "$(cat "$HK_BODY")" "empty /lastn"
assert_contains "Last 1000 cancelled leases" "$(cat "$HK_BODY")" "lastn tab"
assert_contains "Last 1000 newly registered leases" "$(cat "$HK_BODY")" "lastn tab"

hk_log "a registered app, with markup in its metadata"
hk_register "$U" ALPHA a1
hk_register "$U" ALPHA a2 DOWN
assert_http 200 PUT "${U}apps/ALPHA/a1/metadata?note=%3Cscript%3Ex%3C%2Fscript%3E"
assert_http 200 GET "$R/"
PAGE=$(cat "$HK_BODY")
assert_contains '<tr class="app" data-app="ALPHA">' "$PAGE" "ALPHA row"
assert_contains '<b>UP (1)</b>' "$PAGE" "UP group"
assert_contains '<b>DOWN (1)</b>' "$PAGE" "DOWN group"
assert_contains 'href="http://a1.example:8080/info">a1</a>' "$PAGE" "id linked to its status page"
assert_contains '&lt;script&gt;x&lt;/script&gt;' "$PAGE" "metadata escaped"
assert_not_contains '<script>x' "$PAGE" "raw metadata"
assert_http 200 GET "$R/heureka-assets/status.json"
assert_contains application/json "$(hk_header Content-Type)" "feed content type"
"$HK_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
apps = {a["name"]: a for a in d["apps"]}
assert sorted(i["status"] for i in apps["ALPHA"]["instances"]) == ["DOWN", "UP"], apps
meta = [dict(i["metadata"]) for i in apps["ALPHA"]["instances"] if i["id"] == "a1"][0]
assert meta["note"] == "<script>x</script>", meta
assert isinstance(d["renewsThreshold"], int) and "banners" in d
' "$HK_BODY" || fail "status.json"
assert_http 200 GET "$R/heureka-assets/app.css"
assert_contains text/css "$(hk_header Content-Type)" "css content type"
assert_http 404 GET "$R/heureka-assets/../index.html"
assert_http 404 GET "$R/heureka-assets/index.html"
assert_http 404 GET "$R/no-such-page"
assert_http 405 POST "$R/"
assert_http 200 HEAD "$R/"
hk_register "$U" BETA b1
assert_http 200 DELETE "${U}apps/BETA/b1"
assert_http 200 GET "$R/lastn"
assert_contains 'BETA(b1)' "$(cat "$HK_BODY")" "cancel on /lastn"

hk_log "history.json counts what /metrics counts"
REGS=$(hk_metric heureka_registrations_total "$HK_PORT_s")
CANS=$(hk_metric heureka_cancels_total "$HK_PORT_s")
[ "$REGS" -ge 3 ] || fail "registrations in /metrics: $REGS, want >= 3"
assert_eq 1 "$CANS" "cancels in /metrics"
wait_until 10 history_says "$R/" "$REGS" "$CANS"
history_says "$R/" "$REGS" "$CANS" || fail "history.json"
assert_http 200 GET "$R/heureka-assets/history.json"
assert_contains application/json "$(hk_header Content-Type)" "history content type"
assert_contains "connect-src 'self'" "$(hk_header Content-Security-Policy)" "CSP lets the page watch"
hk_stop s

hk_log "eureka.dashboard.path=/console, an unreachable peer"
hk_start c -D eureka.dashboard.path=/console \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0 \
    -D heureka.dashboard.history-interval-ms=1000 \
    --peers http://127.0.0.1:9/eureka/
R=http://127.0.0.1:$HK_PORT_c
hk_register "$HK_URL_c" GAMMA g1
# The peer never answered: its lag is unknown (-1), its queue holds g1.
peer_backlog()
{
	hk_curl -s "$R/console/heureka-assets/history.json" | "$HK_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
assert d["peers"] == ["http://127.0.0.1:9/eureka/"], d["peers"]
p = d["samples"][-1]["peers"][0]
assert p["lagMs"] == -1 and p["queueDepth"] >= 1, p
'
}
wait_until 10 peer_backlog
assert_http 200 GET "$R/console"
assert_contains 'href="/console/heureka-assets/app.css"' "$(cat "$HK_BODY")" "assets under the path"
assert_http 200 GET "$R/console/"
assert_http 200 GET "$R/console/lastn"
assert_http 200 GET "$R/console/heureka-assets/app.js"
assert_http 404 GET "$R/lastn"
assert_http 200 GET "$R/health/liveness"
hk_stop c

hk_log "eureka.dashboard.enabled=false"
hk_start d -D eureka.dashboard.enabled=false
R=http://127.0.0.1:$HK_PORT_d
assert_http 404 GET "$R/"
assert_http 404 GET "$R/heureka-assets/status.json"
assert_http 200 GET "$R/metrics"
assert_http 200 GET "$R/health/liveness"
hk_stop d
exit 0

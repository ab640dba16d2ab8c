#!/bin/sh
# 40-metrics.sh: the operations endpoints. /health goes from DOWN (503,
# start-up sync found no peer) to UP once the empty-sync wait is over, and
# is never UP after SIGTERM; liveness is UP all along. /metrics is parsed by
# the real Prometheus parser (python3-prometheus-client) and its values are
# checked against the registrations, heartbeats and cancels done here,
# including a hostile app name that must not break the label escaping.
# Also: /info, StatusInfo in XML and JSON, and that credentials in a peer
# URL never reach /metrics or the dashboard feed.
. "$(dirname "$0")/lib.sh"

# Debian's python3-prometheus-client lives in the system python, which a
# pyenv or venv python3 earlier in PATH does not see.
PY=""
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import prometheus_client.parser' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	echo "SKIP: python3-prometheus-client is not installed" >&2
	exit 77
fi

# An unreachable peer with credentials in its URL: the start-up sync finds
# nobody, so the server is not ready until the 2 s empty-sync wait passes.
hk_start s --peers "http://scott:tiger@127.0.0.1:1/eureka/" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=2500
U=$HK_URL_s
R=http://127.0.0.1:$HK_PORT_s

hk_log "health while not ready"
assert_http 503 GET "$R/health"
assert_eq '{"status":"DOWN"}' "$(cat "$HK_BODY")" "/health body when not ready"
assert_http 503 GET "$R/actuator/health"
assert_http 503 GET "$R/health/readiness"
assert_http 200 GET "$R/health/liveness"
assert_eq '{"status":"UP"}' "$(cat "$HK_BODY")" "liveness body"

hk_log "health once the empty-sync wait is over"
health_up()
{
	[ "$(hk_curl -o /dev/null -w '%{http_code}' "$R/health")" = 200 ]
}
wait_until 15 health_up
assert_http 200 GET "$R/health"
assert_eq '{"status":"UP"}' "$(cat "$HK_BODY")" "/health body when ready"
assert_contains application/json "$(hk_header Content-Type)" "health content type"
assert_http 200 GET "$R/actuator/health"
assert_http 200 GET "$R/health/readiness"
assert_http 405 POST "$R/health"

hk_log "actions to count"
hk_register "$U" ALPHA a1
hk_register "$U" ALPHA a2
hk_register "$U" BETA b1 DOWN
# App name with a quote and a backslash: both must be escaped in labels.
W=$HK_ROOT/weird.json
hk_instance_json WEIRDPLACEHOLDER w1 |
    sed -e 's/WEIRDPLACEHOLDER/WE\\"IRD\\\\APP/' >"$W"
assert_http 204 POST "${U}apps/WE%22IRD%5CAPP" -H 'Content-Type: application/json' \
    --data-binary @"$W"
assert_http 200 PUT "${U}apps/ALPHA/a1"
assert_http 200 PUT "${U}apps/ALPHA/a1"
assert_http 404 PUT "${U}apps/ALPHA/nosuch"
assert_http 200 DELETE "${U}apps/ALPHA/a2"

hk_log "scrape /metrics"
assert_http 200 GET "$R/metrics"
assert_eq "text/plain; version=0.0.4; charset=utf-8" "$(hk_header Content-Type)" \
    "metrics content type"
cp "$HK_BODY" "$HK_ROOT/metrics.txt"
assert_not_contains tiger "$(cat "$HK_ROOT/metrics.txt")" "peer password in /metrics"
assert_http 200 GET "$R/actuator/prometheus"

"$PY" - "$HK_ROOT/metrics.txt" <<'EOF' || fail "metric values (see above)"
import sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1]).read()
samples = {}
types = {}
for fam in text_string_to_metric_families(text):
    types[fam.name] = fam.type
    for s in fam.samples:
        samples[(s.name, tuple(sorted(s.labels.items())))] = s.value

def get(name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))

bad = []
def want(expected, name, **labels):
    got = get(name, **labels)
    if got != expected:
        bad.append("%s%r: want %r, got %r" % (name, labels, expected, got))

want(1, "heureka_up")
# No internal invariant (HK_BUG) broke during the run.
want(0, "heureka_bugs_total")
want(4, "heureka_registrations_total")
want(2, "heureka_renewals_total")
want(1, "heureka_renewals_not_found_total")
want(1, "heureka_cancels_total")
want(0, "heureka_evictions_total")
for prefix in ("heureka_instances", "eureka_server_instances"):
    want(1, prefix, application="ALPHA", status="UP")
    want(1, prefix, application="BETA", status="DOWN")
    want(1, prefix, application='WE"IRD\\APP', status="UP")
    want(None, prefix, application="BETA", status="UP")
want(4, "heureka_http_requests_total", route="register", code="204")
want(2, "heureka_http_requests_total", route="renew", code="200")
want(1, "heureka_http_requests_total", route="renew", code="404")
want(1, "heureka_http_requests_total", route="cancel", code="200")
want(4, "heureka_http_request_duration_seconds_count", route="register")
want(4, "heureka_http_request_duration_seconds_bucket", route="register", le="+Inf")
peer = "http://127.0.0.1:1/eureka/"
for name in ("heureka_replication_queue_depth",
             "heureka_replication_batches_total",
             "heureka_replication_items_total",
             "heureka_replication_failures_total",
             "heureka_replication_dropped_total"):
    if get(name, peer=peer) is None:
        bad.append("%s{peer=%s} missing" % (name, peer))
for name in ("heureka_self_preservation_active", "heureka_renews_threshold",
             "heureka_renews_last_minute", "heureka_open_connections"):
    if get(name) is None:
        bad.append(name + " missing")
if get("heureka_open_connections") is not None and get("heureka_open_connections") < 1:
    bad.append("heureka_open_connections < 1 during a scrape")
# The loop-latency probe runs (every 10 ms) and its gauges are exported.
for name in ("heureka_loop_lag_max_seconds", "heureka_loop_lag_p99_seconds",
             "heureka_loop_lag_max_since_start_seconds"):
    if get(name) is None:
        bad.append(name + " missing")
if (get("heureka_loop_lag_seconds_count") or 0) < 1:
    bad.append("heureka_loop_lag_seconds_count: the probe never ran")
if get("heureka_loop_lag_seconds_bucket", le="+Inf") != get("heureka_loop_lag_seconds_count"):
    bad.append("heureka_loop_lag_seconds: +Inf bucket != count")
for name, t in (("heureka_registrations", "counter"),
                ("heureka_instances", "gauge"),
                ("heureka_http_request_duration_seconds", "histogram"),
                ("heureka_loop_lag_seconds", "histogram"),
                ("heureka_http_requests", "counter")):
    if types.get(name) != t:
        bad.append("type of %s: want %s, got %s" % (name, t, types.get(name)))
# Histogram buckets are cumulative.
prev = -1
for le in ("0.0005", "0.001", "0.01", "0.1", "1", "10", "+Inf"):
    v = get("heureka_http_request_duration_seconds_bucket", route="register", le=le)
    if v is None or v < prev:
        bad.append("bucket le=%s not cumulative: %r after %r" % (le, v, prev))
    prev = v if v is not None else prev
for b in bad:
    print("metrics:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

hk_log "/info and StatusInfo"
assert_http 200 GET "$R/info"
"$HK_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["build"]["version"]; assert d["start"]["epochMs"] > 0' \
    "$HK_BODY" || fail "/info JSON"
assert_http 200 GET "${U}status"
assert_contains "<com.netflix.eureka.util.StatusInfo>" "$(cat "$HK_BODY")" "StatusInfo XML root"
assert_contains "<generalStats>" "$(cat "$HK_BODY")" "StatusInfo generalStats"
assert_contains "<instanceInfo>" "$(cat "$HK_BODY")" "StatusInfo instanceInfo"
assert_not_contains tiger "$(cat "$HK_BODY")" "peer password in StatusInfo"
assert_http 200 GET "${U}status" -H "Accept: application/json"
"$HK_PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "generalStats" in d and "applicationStats" in d and "instanceInfo" in d' \
    "$HK_BODY" || fail "StatusInfo JSON"

hk_log "dashboard feed hides peer credentials"
assert_http 200 GET "$R/heureka-assets/status.json"
assert_contains '127.0.0.1:1/eureka/' "$(cat "$HK_BODY")" "peer listed in the feed"
assert_not_contains tiger "$(cat "$HK_BODY")" "peer password in the feed"
assert_not_contains scott "$(cat "$HK_BODY")" "peer user in the feed"
assert_http 200 GET "$R/"
assert_not_contains tiger "$(cat "$HK_BODY")" "peer password on the page"

hk_log "health after SIGTERM is never UP"
pid=$HK_PID_s
kill -TERM "$pid"
i=0
while [ "$i" -lt 20 ]; do
	code=$(hk_curl -o /dev/null --max-time 1 -w '%{http_code}' "$R/health" 2>/dev/null) || code=000
	case "$code" in
	503) hk_log "saw DOWN while shutting down" ;;
	000) break ;;
	*) fail "/health answered $code after SIGTERM" ;;
	esac
	i=$((i + 1))
done
_hk_reap "$pid"
HK_PID_s=
assert_eq 0 "$HK_RC" "exit status after SIGTERM"
exit 0

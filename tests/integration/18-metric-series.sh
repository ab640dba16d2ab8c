#!/bin/sh
# 18-metric-series.sh: issue 9, "Memory": /metrics wrote one series per
# application and status, so 80,000 applications made every scrape grow
# without bound. Past eureka.server.max-metric-applications the rest are
# summed into application="other" (no instance is lost from the totals),
# the number folded is a gauge and the hits are counted.
. "$(dirname "$0")/lib.sh"

LOAD="$HK_PYTHON $(dirname "$0")/memload.py"
hk_start s -D eureka.server.max-metric-applications=50 \
    -D eureka.server.register-rate-per-second=0
U=$HK_URL_s
M="http://127.0.0.1:$HK_PORT_s/metrics"

$LOAD "$U" apps 400 >"$HK_ROOT/apps.json" || fail "register 400 apps"
assert_eq '{"204":400}' "$(hk_json 'd["codes"]' "$HK_ROOT/apps.json")" \
    "400 registrations"
hk_curl -s -o "$HK_ROOT/m.txt" "$M" || fail "GET /metrics"
series=$(grep -c '^heureka_instances{' "$HK_ROOT/m.txt" || true)
others=$(awk '$1 == "heureka_instances{application=\"other\",status=\"UP\"}" { print $2 }' "$HK_ROOT/m.txt")
total=$(awk '/^heureka_instances\{/ { n += $2 } END { print n + 0 }' "$HK_ROOT/m.txt")
omitted=$(awk '$1 == "heureka_metrics_applications_omitted" { print $2 }' "$HK_ROOT/m.txt")
echo "MEASURE 400 apps, cap 50: $series heureka_instances series, /metrics $(wc -c <"$HK_ROOT/m.txt") bytes" >&2
[ "$series" -le 51 ] || fail "$series per-app series for a cap of 50"
assert_eq 350 "$others" "instances summed into application=\"other\""
assert_eq 400 "$total" "instances over all series"
assert_eq 350 "$omitted" "applications omitted"
grep -q '^heureka_limit_rejections_total{limit="max-metric-applications"} [1-9]' \
    "$HK_ROOT/m.txt" || fail "series cap hit not counted"
[ "$(grep -c '^eureka_server_instances{' "$HK_ROOT/m.txt")" -le 51 ] ||
    fail "the Spring-named family is not capped"
hk_alive s
hk_stop s

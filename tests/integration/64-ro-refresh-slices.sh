#!/bin/sh
# 64-ro-refresh-slices.sh: with Eureka's read-only layer on
# (eureka.server.use-read-only-response-cache), its refresh does not stall
# the loop (issue 13). The read-write layer's expiry (1 s) is made shorter
# than a refresh interval (1.5 s), so every pass re-encodes the whole registry (as
# Eureka's 180 s expiry does at scale); with a 1-byte
# heureka.cache.encode-slice-bytes a pass takes thousands of loop turns
# and /health answers while it runs, and every full body served
# meanwhile is a whole, consistent one (its instance count is the one its
# apps hash code states), while changes go on.
# The client waits for the work it checks (3 passes, 8 full bodies, two
# of each variant, two registry versions) however long a loaded machine
# takes; its time bound only catches a hang. (It used to stop after 3
# passes and assert it had fetched 8 bodies meanwhile: a throughput
# claim, which failed once under ASan on a loaded machine with 4.)
. "$(dirname "$0")/lib.sh"

SF="$HK_PYTHON $(dirname "$0")/stallfetch.py"
RR="$HK_PYTHON $(dirname "$0")/rorefresh.py"
NAPPS=3000

# HK_SLICE=0 (no bound: each pass in one loop turn, as before the slices)
# shows what the test catches.
hk_start s -D heureka.cache.encode-slice-bytes="${HK_SLICE:-1}" \
    -D eureka.server.use-read-only-response-cache=true \
    -D eureka.server.response-cache-update-interval-ms=1500 \
    -D eureka.server.response-cache-auto-expiration-in-seconds=1 \
    -D logging.level.root=debug
U=$HK_URL_s
out=$($SF "$U" load $NAPPS 1)
assert_eq '{"codes": {"200": 12}}' "$out" "preload of $NAPPS apps"

hk_log "refresh passes in slices while /health and full fetches go on"
out=$($RR "$U" "$HK_ROOT/s.log" 3 8 300)
hk_log "saw: $out"
get()
{
	echo "$out" | "$HK_PYTHON" -c "import json,sys; d=json.load(sys.stdin); print($1)"
}
assert_eq False "$(get 'd["timed_out"]')" "the client's work done within 300 s (a hang): $out"
[ "$(get 'd["passes"]')" -ge 3 ] || fail "fewer than 3 refresh passes: $out"
assert_eq 0 "$(get 'd["health_errors"]')" "/health errors"
assert_eq "[]" "$(get 'd["bad"]')" "inconsistent full bodies"
[ "$(get 'd["bodies"]')" -ge 8 ] || fail "too few full bodies checked: $out"
[ "$(get 'd["distinct_counts"]')" -ge 2 ] ||
    fail "the refreshes served no change: $out"
# A pass re-encodes every application: at a 1-byte slice, one per turn.
[ "$(get 'd["min_slices"]')" -ge $NAPPS ] ||
    fail "a pass took fewer than $NAPPS slices (loop turns): $out"
# /health answered while each pass ran.
[ "$(get 'min(d["health_during"])')" -ge 2 ] ||
    fail "/health did not answer during a refresh pass: $out"

hk_log "the snapshot is current after a pass: a change shows within two"
rolast()
{
	hk_curl -H "Accept: application/json" "${U}apps" | grep -c '"ROLAST"'
}
passes()
{
	grep -c "read-only cache refreshed" "$HK_ROOT/s.log"
}
# A pass under way takes in a change ahead of its walk, so the change
# may show as soon as that pass ends: the "not before a refresh" check
# counts only when no pass ended between the register and the fetch (a
# pass logs its end in the turn it swaps the snapshot, before any fetch
# it could serve).
judged=0
for try in 1 2 3 4 5; do
	before=$(passes)
	hk_register "$U" ROLAST "last$try"
	seen=$(rolast) || true
	[ "$(passes)" = "$before" ] || continue
	assert_eq 0 "$seen" "the change is not served before a refresh (Eureka)"
	judged=1
	break
done
[ $judged = 1 ] || fail "a refresh pass ended around each of 5 registrations"
wait_until 10 hk_eq 1 rolast
hk_stop s

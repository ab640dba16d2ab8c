#!/bin/sh
# 07-eviction.sh: with self-preservation off and a 500 ms eviction timer, an
# instance registered with leaseInfo.durationInSecs=1 that stops renewing
# is evicted within seconds (spec §5.11; heureka expires a lease
# durationInSecs after its last renewal), while a renewing one stays. The
# eviction shows in the full registry, the delta (DELETED) and the hashcode.
. "$(dirname "$0")/lib.sh"

hk_start s -D eureka.server.eviction-interval-timer-in-ms=500 \
    -D eureka.server.enable-self-preservation=false
U=$HK_URL_s
J="Accept: application/json"

hk_register "$U" EVICT e1 UP 1
hk_register "$U" EVICT e2 UP 1
hk_register "$U" KEEP k1 UP 5
# (No GET of e1 here: on a loaded machine its 1 s lease may already have
# run out, and expired leases are hidden while expiry is enabled.)

# Heartbeat k1 on every poll; succeed once neither e1 nor e2 is listed.
# A refused heartbeat is noted in $d/k1 (wait_until's poll runs in a
# subshell, so it cannot fail the script itself).
d=$(hk_tmp)
only_k1()
{
	[ "$(hk_curl -o /dev/null -w '%{http_code}' -X PUT "${U}apps/KEEP/k1")" = 200 ] ||
	    echo "heartbeat of k1 refused" >>"$d/k1"
	[ "$(hk_curl -H "$J" "${U}apps" | hk_json 'sorted(i["instanceId"] for a in d["applications"]["application"] for i in a["instance"])' /dev/stdin)" = '["k1"]' ]
}
wait_until 15 only_k1
[ ! -s "$d/k1" ] || fail "k1 renews, yet: $(head -n 1 "$d/k1")"
assert_eq 2 "$(hk_metric heureka_evictions_total "$HK_PORT_s")" "evictions counted"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq '["k1"]' "$(hk_json 'sorted(i["instanceId"] for a in d["applications"]["application"] for i in a["instance"])')" "only the renewing k1 left"
assert_eq UP_1_ "$(hk_json 'd["applications"]["apps__hashcode"]')" "hashcode after eviction"

hk_log "evicted instances are gone everywhere"
assert_http 404 GET "${U}apps/EVICT/e1" -H "$J"
assert_http 404 GET "${U}instances/e2" -H "$J"
assert_http 404 GET "${U}apps/EVICT" -H "$J"
assert_http 200 GET "${U}apps/delta" -H "$J"
assert_eq '["DELETED","DELETED"]' \
    "$(hk_json 'sorted(i["actionType"] for a in d["applications"]["application"] for i in a["instance"] if i["instanceId"] in ("e1","e2"))')" \
    "delta lists the evictions as DELETED"
assert_http 404 PUT "${U}apps/EVICT/e1"

hk_log "a re-registration after eviction works"
hk_register "$U" EVICT e1 UP 30
assert_http 200 PUT "${U}apps/EVICT/e1"
assert_http 200 GET "${U}apps/EVICT/e1" -H "$J"

# (k1 surviving while renewing was checked by the loop: it ends only when
# k1 is the one instance left. Not re-checked here, where no heartbeats
# are sent and a loaded machine may take longer than its 5 s lease.)
hk_alive s
hk_stop s

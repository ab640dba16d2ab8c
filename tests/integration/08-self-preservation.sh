#!/bin/sh
# 08-self-preservation.sh: with self-preservation on (the default) and no
# renewals in the last minute, the renewal rate is below the threshold, so
# lease expiry is disabled: instances whose 1 s leases ran out long ago are
# neither evicted nor hidden (spec §5.11, traps 12 and 25). Same timings
# as 07-eviction.sh, which does evict with self-preservation off.
#
# That eviction runs did pass over the expired leases is proved, not
# slept for: an airlift announcement with the same 1 s lease, registered
# after them, is left out of self-preservation (REGISTRY_UNCOUNTED_KEY) and
# so evicted by the first run that finds it expired; by then the older
# Eureka leases have expired too. Three such canaries, one after the other,
# are three eviction runs over the expired leases.
. "$(dirname "$0")/lib.sh"

hk_start s -D eureka.server.eviction-interval-timer-in-ms=500 \
    -D heureka.airlift.max-age-ms=1000 -D eureka.environment=test
U=$HK_URL_s
P=$HK_PORT_s
J="Accept: application/json"

for i in 1 2 3 4; do
	hk_register "$U" HELD "p$i" UP 1
done
assert_eq 1 "$(hk_metric heureka_self_preservation_active "$P")" \
    "self-preservation active without renewals"

# The four, as listed by GET apps.
held()
{
	hk_curl -H "$J" -o "$HK_ROOT/held.json" "${U}apps" &&
	    hk_json 'sorted(i["instanceId"] for a in d["applications"]["application"] for i in a["instance"] if a["name"] == "HELD")' \
	    "$HK_ROOT/held.json"
}

for c in 1 2 3; do
	assert_http 202 PUT "${U%eureka/}v1/announcement/canary$c" \
	    -H 'Content-Type: application/json' \
	    --data-binary '{"environment":"test","pool":"general","services":[{"id":"c","type":"canary","properties":{}}]}'
	wait_until 15 hk_ge "$c" hk_metric heureka_evictions_total "$P"
	assert_eq '["p1","p2","p3","p4"]' "$(held)" \
	    "self-preservation kept every expired lease (eviction run $c)"
done
assert_eq 3 "$(hk_metric heureka_evictions_total "$P")" \
    "only the three canaries were evicted"
assert_eq 1 "$(hk_metric heureka_self_preservation_active "$P")" \
    "self-preservation still active"

hk_alive s
assert_http 200 GET "${U}apps" -H "$J"
assert_eq '["p1","p2","p3","p4"]' \
    "$(hk_json 'sorted(i["instanceId"] for a in d["applications"]["application"] for i in a["instance"])')" \
    "self-preservation kept every expired lease"
assert_eq UP_4_ "$(hk_json 'd["applications"]["apps__hashcode"]')" "hashcode"
assert_http 200 GET "${U}apps/HELD/p1" -H "$J"	# not hidden either
assert_http 200 GET "${U}instances/p2" -H "$J"
assert_http 200 PUT "${U}apps/HELD/p3"	# and they can still renew

hk_stop s

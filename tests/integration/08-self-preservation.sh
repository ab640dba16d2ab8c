#!/bin/sh
# 08-self-preservation.sh: with self-preservation on (the default) and no
# renewals in the last minute, the renewal rate is below the threshold, so
# lease expiry is disabled: instances whose 1 s leases ran out long ago are
# neither evicted nor hidden (spec §5.11, traps 12 and 25). Same timings
# as 07-eviction.sh, which does evict with self-preservation off.
. "$(dirname "$0")/lib.sh"

hk_start s -D eureka.server.eviction-interval-timer-in-ms=500
U=$HK_URL_s
J="Accept: application/json"

for i in 1 2 3 4; do
	hk_register "$U" HELD "p$i" UP 1
done

# Several eviction runs and four lease durations pass without heartbeats.
sleep 4
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

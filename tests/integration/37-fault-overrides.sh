#!/bin/sh
# 37-fault-overrides.sh: status overrides, override deletions and metadata
# changes made while a peer is paused (issue 9, "Overrides"). The queued
# replication tasks for the paused peer expire during the pause
# (eureka.server.max-time-for-replication and the instances' renewal
# interval are short here, as a long pause does with the defaults), so
# only anti-entropy can repair what the paused node missed. After SIGCONT
# all three nodes must agree, within a bounded wait, on every instance's
# status, overridden status and metadata, and hold what the operator set
# last.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

EXPIRE="-D eureka.server.max-time-for-replication=500"
# shellcheck disable=SC2086
cl_trio $EXPIRE

# Register APP/ID on BASE with a 1 s renewal interval: a queued Register
# (metadata change) expires one renewal interval after it was queued.
reg_fast()
{
	hk_instance_json "$2" "$3" |
	    sed 's/"renewalIntervalInSecs":30/"renewalIntervalInSecs":1/' \
	    >"$HK_ROOT/reg.json"
	assert_http 204 POST "${1}apps/$2" -H 'Content-Type: application/json' \
	    --data-binary @"$HK_ROOT/reg.json"
}

# Print "status overriddenStatus metadata" of SVC/ID on BASE.
show()
{
	hk_curl -H 'Accept: application/json' "${1}apps/SVC/$2" |
	    "$HK_PYTHON" -c '
import json, sys
i = json.load(sys.stdin)["instance"]
print(i["status"], i.get("overriddenStatus", i.get("overriddenstatus", "")),
      json.dumps(i.get("metadata"), sort_keys=True, separators=(",", ":")))'
}

for i in 1 2 3 4 5 6 7 8; do
	reg_fast "$A" SVC "o-$i"
done
assert_http 200 PUT "${A}apps/SVC/o-3/status?value=OUT_OF_SERVICE"
assert_http 200 PUT "${A}apps/SVC/o-7/status?value=OUT_OF_SERVICE"
assert_http 200 PUT "${A}apps/SVC/o-8/status?value=OUT_OF_SERVICE"
wait_until 5 cl_same "$A" "$B" "$C"
assert_eq 'OUT_OF_SERVICE OUT_OF_SERVICE {"zone":"default"}' "$(show "$C" o-3)" "o-3 on C before"

hk_log "SIGSTOP C; wait until A and B have backed off from it three times"
fa=$(cl_peer "$A" "$PC" 'p["failures"]')
fb=$(cl_peer "$B" "$PC" 'p["failures"]')
kill -STOP "$HK_PID_C"
hk_register "$A" SVC primer-a
hk_register "$B" SVC primer-b
# After the third failure the next attempt is at least 2 s away (the
# back-off doubles from 1 s), so every task queued now expires unsent.
wait_until 15 hk_ge $((fa + 3)) cl_peer "$A" "$PC" 'p["failures"]'
wait_until 15 hk_ge $((fb + 3)) cl_peer "$B" "$PC" 'p["failures"]'
ea=$(cl_peer "$A" "$PC" 'p["expired"]')
eb=$(cl_peer "$B" "$PC" 'p["expired"]')

hk_log "overrides and metadata changes through A and B"
assert_http 200 PUT "${A}apps/SVC/o-1/status?value=OUT_OF_SERVICE"
assert_http 200 PUT "${B}apps/SVC/o-2/status?value=DOWN"
assert_http 200 DELETE "${A}apps/SVC/o-3/status?value=UP"
assert_http 200 PUT "${A}apps/SVC/o-4/metadata?v=a"
assert_http 200 PUT "${B}apps/SVC/o-5/metadata?v=b&zone=z2"
assert_http 200 PUT "${B}apps/SVC/o-6/status?value=OUT_OF_SERVICE"
assert_http 200 PUT "${B}apps/SVC/o-6/metadata?v=c"
assert_http 200 DELETE "${B}apps/SVC/o-7/status"
# The override goes, the status stays: only overriddenStatus differs.
assert_http 200 DELETE "${A}apps/SVC/o-8/status?value=OUT_OF_SERVICE"
wait_until 5 cl_same "$A" "$B"
# Today these tasks expire; a server that keeps them longer may deliver
# them after SIGCONT instead, which is as good: not a failure either way.
( wait_until 6 hk_ge $((ea + 4)) cl_peer "$A" "$PC" 'p["expired"]' &&
    wait_until 6 hk_ge $((eb + 5)) cl_peer "$B" "$PC" 'p["expired"]' ) 2>/dev/null || true
hk_log "expired tasks for C: A $(($(cl_peer "$A" "$PC" 'p["expired"]') - ea)) of 4, B $(($(cl_peer "$B" "$PC" 'p["expired"]') - eb)) of 5"
kill -CONT "$HK_PID_C"
t0=$(cl_now_ms)
hk_log "SIGCONT C; settle, then wait for the three nodes to agree"
cl_settle 15 "$A" "$B" "$C"
if ! ( wait_until 10 cl_same "$A" "$B" "$C" ) 2>/dev/null; then
	for i in 1 2 3 4 5 6 7 8; do
		echo "o-$i: A [$(show "$A" "o-$i")] B [$(show "$B" "o-$i")] C [$(show "$C" "o-$i")]" >&2
	done
	fail "status, overrides or metadata still differ 10 s after settling"
fi
echo "MEASURE SIGCONT -> identical registries: $(($(cl_now_ms) - t0)) ms" >&2
for u in "$A" "$B" "$C"; do
	assert_eq 'OUT_OF_SERVICE OUT_OF_SERVICE {"zone":"default"}' "$(show "$u" o-1)" "o-1 on $u"
	assert_eq 'DOWN DOWN {"zone":"default"}' "$(show "$u" o-2)" "o-2 on $u"
	assert_eq 'UP UNKNOWN {"zone":"default"}' "$(show "$u" o-3)" "o-3 on $u"
	assert_eq 'UP UNKNOWN {"v":"a","zone":"default"}' "$(show "$u" o-4)" "o-4 on $u"
	assert_eq 'UP UNKNOWN {"v":"b","zone":"z2"}' "$(show "$u" o-5)" "o-5 on $u"
	assert_eq 'OUT_OF_SERVICE OUT_OF_SERVICE {"v":"c","zone":"default"}' "$(show "$u" o-6)" "o-6 on $u"
	assert_eq 'UNKNOWN UNKNOWN {"zone":"default"}' "$(show "$u" o-7)" "o-7 on $u"
	assert_eq 'OUT_OF_SERVICE UNKNOWN {"zone":"default"}' "$(show "$u" o-8)" "o-8 on $u"
done
hk_stop A
hk_stop B
hk_stop C

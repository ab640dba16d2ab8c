#!/bin/sh
# 12-response-cache.sh: the response cache (spec §5.12, trap 19, design.md):
# heartbeats do not invalidate cached bodies (byte-identical before and
# after), every change does (visible at once with the default, no read-only
# layer), and eureka.server.use-read-only-response-cache=true brings back
# Eureka's stale read-only layer, refreshed every
# response-cache-update-interval-ms.
. "$(dirname "$0")/lib.sh"

J="Accept: application/json"
d=$(hk_tmp)

hk_start s
U=$HK_URL_s
hk_register "$U" CACHE c1
hk_register "$U" CACHE c2

hk_log "heartbeats do not invalidate"
for p in apps apps/CACHE; do
	assert_http 200 GET "${U}$p" -H "$J"
	cp "$HK_BODY" "$d/before"
	# A re-encoded body differs only if the heartbeat's renewal stamp
	# does: c1 last renewed before this GET, so let the clock (ms) pass
	# the GET's time before the heartbeat.
	wait_until 5 hk_clock_past "$(date +%s%3N)"
	assert_http 200 PUT "${U}apps/CACHE/c1"
	assert_http 200 GET "${U}$p" -H "$J"
	cmp -s "$d/before" "$HK_BODY" || fail "$p: a heartbeat changed the cached body"
done

hk_log "changes are visible at once (no read-only layer by default)"
hk_register "$U" CACHE c3
assert_http 200 GET "${U}apps/CACHE" -H "$J"
assert_eq 3 "$(hk_json 'len(d["application"]["instance"])')" "register visible"
assert_http 200 PUT "${U}apps/CACHE/c1/status?value=DOWN"
assert_http 200 GET "${U}apps" -H "$J"
assert_eq DOWN_1_UP_2_ "$(hk_json 'd["applications"]["apps__hashcode"]')" "override visible"
assert_http 200 GET "${U}apps" -H "Accept-Encoding: gzip"
gunzip -c <"$HK_BODY" >"$d/x.xml" || fail "gzip XML"
assert_contains "<apps__hashcode>DOWN_1_UP_2_</apps__hashcode>" "$(cat "$d/x.xml")" "gzip XML variant invalidated too"
assert_http 200 DELETE "${U}apps/CACHE/c3"
assert_http 200 GET "${U}vips/cache" -H "$J"
assert_eq 2 "$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])')" "vip invalidated"
hk_stop s

hk_log "read-only layer: stale until the refresh timer runs"
hk_start r -D eureka.server.use-read-only-response-cache=true \
    -D eureka.server.response-cache-update-interval-ms=1000
U=$HK_URL_r
hk_register "$U" RO r1
assert_http 200 GET "${U}apps" -H "$J"	# fills the read-only layer
# Within 15 s the registration must show up (after at most a few refreshes).
has_id()
{
	hk_curl -H "$J" "${U}apps" | grep -q "\"instanceId\":\"$1\""
}
wait_until 15 has_id r1
hk_register "$U" RO r2
wait_until 15 has_id r2
hk_stop r

hk_log "read-only layer with a 10 minute refresh: a cached body stays stale"
hk_start t -D eureka.server.use-read-only-response-cache=true \
    -D eureka.server.response-cache-update-interval-ms=600000
U=$HK_URL_t
hk_register "$U" RO t1
t0=$(($(date +%s) / 600))
assert_http 200 GET "${U}apps" -H "$J"	# fills the read-only entry
hk_register "$U" RO t2
assert_http 200 GET "${U}apps" -H "$J"
t1=$(($(date +%s) / 600))
if [ "$t0" = "$t1" ]; then	# no refresh boundary passed in between
	assert_not_contains '"instanceId":"t2"' "$(cat "$HK_BODY")" "read-only layer serves the stale body"
fi
assert_http 200 GET "${U}apps/RO/t2" -H "$J"	# instance GETs are never cached
hk_stop t

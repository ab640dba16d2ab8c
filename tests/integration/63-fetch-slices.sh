#!/bin/sh
# 63-fetch-slices.sh: a full fetch that needs a from-scratch encode does
# not stall the loop (issue 13). With a tiny heureka.cache.encode-slice-
# bytes the cache builds the body one application per loop turn while the
# request waits: three pipelined /health requests that reach the loop in
# the same turn as the fetch are all answered before it (the server's
# access log says so; stallfetch.py race), the parked fetch's body is the one a later
# (cached) fetch gets, a client that goes away while its fetch is parked
# is noticed while it waits and leaves no connection behind, and a server
# stopped with fetches parked exits cleanly (the ASan build checks for
# leaks at exit).
. "$(dirname "$0")/lib.sh"

SF="$HK_PYTHON $(dirname "$0")/stallfetch.py"
# A body built a slice per loop turn takes thousands of turns: on a loaded
# machine curl's fetches of one may need more than lib.sh's 10 s. This
# bounds a hang; nothing here asserts a speed.
HK_CURL_MAX_TIME=120
XG="Accept: application/xml"
GZ="Accept-Encoding: gzip"
JS="Accept: application/json"
NAPPS=20000
PER=1

# HK_SLICE=0 (one slice: the whole build in one turn, as before the
# slices) shows what the test catches.
hk_start s -D heureka.cache.encode-slice-bytes="${HK_SLICE:-1}" \
    -D logging.level.root=debug -D heureka.log.access="$HK_ROOT/access.log"
U=$HK_URL_s
out=$($SF "$U" load $NAPPS $PER)
assert_eq '{"codes": {"200": 80}}' "$out" "preload of $NAPPS apps x $PER"

# heurekad's open connections (its /metrics gauge).
conns()
{
	hk_metric heureka_open_connections "$HK_PORT_s"
}

hk_log "a from-scratch XML gzip fetch is built in slices; /health answers meanwhile"
first=$($SF "$U" race "$HK_PID_s" "$HK_ROOT/access.log" apps "$XG" "$GZ")
hk_log "first fetch: $first"
health=$(echo "$first" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["health_first"])')
status=$(echo "$first" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
assert_eq 200 "$status" "the parked fetch is answered"
[ "$health" -ge 3 ] ||
    fail "the server answered only $health of 3 /health requests before the fetch that reached it in the same turn (the build held the loop): $first"

hk_log "its body is the one a later, cached fetch gets, and a whole registry"
again=$($SF "$U" race "$HK_PID_s" "$HK_ROOT/access.log" apps "$XG" "$GZ")
sha1=$(echo "$first" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sha"])')
sha2=$(echo "$again" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sha"])')
assert_eq "$sha1" "$sha2" "parked body = cached body"
assert_http 200 GET "${U}apps" -H "$XG" -H "$GZ"
[ "$(sha256sum <"$HK_BODY" | cut -d' ' -f1)" = "$sha1" ] ||
    fail "curl's cached body differs from the parked one"
n=$(gunzip -c <"$HK_BODY" | grep -c '<instance>' || true)
assert_eq $((NAPPS * PER)) "$n" "instances in the body"
gunzip -c <"$HK_BODY" | grep -q "<apps__hashcode>UP_$((NAPPS * PER))_</apps__hashcode>" ||
    fail "apps hash code does not count the body's instances"

hk_log "a change is in the next fetch (JSON, built in slices too)"
hk_register "$U" APP00007 extra
assert_http 200 GET "${U}apps" -H "$JS"
assert_eq $((NAPPS * PER + 1)) "$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])')" "instances after a change"
assert_eq "UP_$((NAPPS * PER + 1))_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "hash code after a change"

hk_log "clients that go away while parked leave nothing behind"
base=$(conns)
for i in 1 2 3 4 5; do
	$SF "$U" drop apps "$JS" "$GZ" >/dev/null
done
# Each is noticed while it waits (the build, a slice per turn, only goes
# on while someone waits), and its connection closes.
wait_until 20 hk_eq 5 grep -c "a client waiting for a full fetch went away" \
    "$HK_ROOT/s.log"
wait_until 20 hk_eq "$base" conns
assert_http 200 GET "${U}apps" -H "$JS" -H "$GZ"
gunzip -c <"$HK_BODY" >/dev/null || fail "gzip JSON body after the drops"

hk_log "a server stopped while fetches are parked exits cleanly"
# Two variants never built yet (compact), waiting one behind the other.
$SF "$U" hold apps 10 "$XG" "$GZ" "X-Eureka-Accept: compact" >/dev/null &
hk_own $!
$SF "$U" hold apps 10 "$JS" "$GZ" "X-Eureka-Accept: compact" >/dev/null &
hk_own $!
wait_until 10 hk_ge $((base + 2)) conns
hk_stop s
grep -q "full fetches still waiting for their body at exit" "$HK_ROOT/s.log" ||
    fail "the fetches were answered before the stop: nothing was parked"

#!/bin/sh
# 65-fetch-slices-other.sh: the other bodies do not stall the loop either
# (issue 13): the delta, one application's (apps/{app}) and a VIP's
# (vips/, svips/) are built a slice per loop turn as full fetches are
# (63-fetch-slices.sh), plain and gzip. With a tiny heureka.cache.
# encode-slice-bytes, three pipelined /health requests that reach the
# loop in the same turn as a fetch are all answered before it (the
# server's access log says so; stallfetch.py race); the parked fetch's body is the one a
# later (cached) fetch gets; the delta holds every change with the
# registry's hash code; a change while a build is under way is in its body.
. "$(dirname "$0")/lib.sh"

SF="$HK_PYTHON $(dirname "$0")/stallfetch.py"
# A body built a slice per loop turn takes thousands of turns: on a loaded
# machine curl's fetches of one may need more than lib.sh's 10 s. This
# bounds a hang; nothing here asserts a speed.
HK_CURL_MAX_TIME=120
GZ="Accept-Encoding: gzip"
JS="Accept: application/json"
XG="Accept: application/xml"
NAPPS=2000
PER=5
BIG=10000

# HK_SLICE=0 (the whole build in one turn, as before) shows what it catches.
hk_start s -D heureka.cache.encode-slice-bytes="${HK_SLICE:-1}" \
    -D heureka.log.access="$HK_ROOT/access.log"
U=$HK_URL_s
out=$($SF "$U" load $NAPPS $PER)
assert_eq '{"codes": {"200": 40}}' "$out" "preload of $NAPPS apps x $PER"
# APP00000 grows to $BIG instances (its first $PER re-registered).
out=$($SF "$U" load 1 $BIG)
assert_eq '{"codes": {"200": 40}}' "$out" "one app of $BIG"
N=$((NAPPS * PER + BIG - PER))

# race PATH HEADERS...: the server answers the fetch after the 3 /health
# requests that reached it in the same loop turn; R is its JSON line.
race()
{
	R=$($SF "$U" race "$HK_PID_s" "$HK_ROOT/access.log" "$@")
	st=$(echo "$R" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["status"])')
	h=$(echo "$R" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["health_first"])')
	[ "$st" = 200 ] || fail "$1: answered $st"
	[ "$h" -ge 3 ] ||
	    fail "$*: the server answered only $h of 3 /health requests before the fetch that reached it in the same turn (the build held the loop): $R"
	hk_log "$*: $h /health answers first, $R"
}

sha()
{
	echo "$1" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["sha"])'
}

hk_log "the delta of $N changes, JSON plain and XML gzip, in slices"
race apps/delta "$JS"; d1=$R
race apps/delta "$XG" "$GZ"; d2=$R
assert_http 200 GET "${U}apps/delta" -H "$JS"
[ "$(sha256sum <"$HK_BODY" | cut -d' ' -f1)" = "$(sha "$d1")" ] ||
    fail "the cached delta differs from the parked one"
assert_eq "$N" "$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])')" "instances in the delta"
assert_eq "UP_${N}_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "the delta's hash code"
assert_http 200 GET "${U}apps/delta" -H "$XG" -H "$GZ"
[ "$(sha256sum <"$HK_BODY" | cut -d' ' -f1)" = "$(sha "$d2")" ] ||
    fail "the cached gzip delta differs from the parked one"
gunzip -c <"$HK_BODY" | grep -q "<apps__hashcode>UP_${N}_</apps__hashcode>" ||
    fail "the gzip delta's hash code"

hk_log "one application of $BIG instances, JSON gzip and XML, in slices"
race apps/APP00000 "$JS" "$GZ"; a1=$R
race apps/app00000 "$XG"; a2=$R
assert_http 200 GET "${U}apps/APP00000" -H "$JS" -H "$GZ"
[ "$(sha256sum <"$HK_BODY" | cut -d' ' -f1)" = "$(sha "$a1")" ] ||
    fail "the cached application body differs from the parked one"
assert_eq "$BIG" "$(gunzip -c <"$HK_BODY" | "$HK_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["application"]["instance"]))')" "instances of APP00000"
assert_http 404 GET "${U}apps/NOPE" -H "$JS"

hk_log "a VIP walks every instance, in slices; svips too"
race vips/app00001 "$JS"; v1=$R
race svips/app00001 "$XG" "$GZ"; v2=$R
assert_http 200 GET "${U}vips/app00001" -H "$JS"
[ "$(sha256sum <"$HK_BODY" | cut -d' ' -f1)" = "$(sha "$v1")" ] ||
    fail "the cached VIP body differs from the parked one"
assert_eq "$PER" "$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])')" "instances of VIP app00001"

hk_log "a change while the delta is being built is in a later delta"
# A delta is the change queue as it was when its build began (issue 21:
# a build that started over on every change ran whole under churn);
# fetches that join a build under way get its body, and the change is
# in the delta of the next build. Whichever the fetch below got, its
# hash code is the registry it describes; the change shows up in a
# bounded number of fetches.
hk_register "$U" APP00007 extra0
$SF "$U" hold apps/delta 2 "$XG" >/dev/null &
hk_own $!
hk_register "$U" APP00007 extra
delta_has_extra()
{
	assert_http 200 GET "${U}apps/delta" -H "$XG"
	grep -q "<instanceId>extra</instanceId>" "$HK_BODY"
}
wait_until 60 delta_has_extra
grep -q "<apps__hashcode>UP_$((N + 2))_</apps__hashcode>" "$HK_BODY" ||
    fail "the delta's hash code after the change"

#!/bin/sh
# 05-gzip-compact.sh: compression (spec §3.3) and the compact codec (§4.3).
# With Accept-Encoding: gzip the full registry and the delta come with
# Content-Encoding: gzip and gunzip to exactly the plain body; without it
# nothing is compressed. X-Eureka-Accept: compact gives the reduced field
# set.
. "$(dirname "$0")/lib.sh"

hk_start s
U=$HK_URL_s

hk_register "$U" GZ g1
hk_register "$U" GZ g2 DOWN
hk_register "$U" OTHER x1

# Fetch URL with extra curl args into FILE (raw bytes, no decoding).
fetch()
{
	local out=$1 url=$2
	shift 2
	assert_http 200 GET "$url" "$@"
	cp "$HK_BODY" "$out"
}

d=$(hk_tmp)
for fmt in json xml; do
	A="Accept: application/$fmt"
	for p in apps apps/delta; do
		hk_log "$p $fmt"
		fetch "$d/plain" "${U}$p" -H "$A"
		assert_eq "" "$(hk_header Content-Encoding)" "$p $fmt: no gzip unless asked"
		fetch "$d/gz" "${U}$p" -H "$A" -H "Accept-Encoding: gzip"
		assert_eq gzip "$(hk_header Content-Encoding)" "$p $fmt: Content-Encoding"
		assert_contains "application/$fmt" "$(hk_header Content-Type)" "$p $fmt: Content-Type with gzip"
		gunzip -c <"$d/gz" >"$d/unz" 2>"$d/err" ||
		    fail "$p $fmt: body is not gzip: $(cat "$d/err")"
		if [ "$p" = apps ]; then
			cmp -s "$d/plain" "$d/unz" || fail "$p $fmt: gunzipped body differs from the plain body"
		else
			# versions__delta may advance per generation: compare the rest.
			sed 's/versions__delta[^0-9-]*[0-9-]*/V/' "$d/plain" >"$d/p2"
			sed 's/versions__delta[^0-9-]*[0-9-]*/V/' "$d/unz" >"$d/u2"
			cmp -s "$d/p2" "$d/u2" || fail "$p $fmt: gunzipped delta differs from the plain one"
		fi
		fetch "$d/gz2" "${U}$p" -H "$A" -H "Accept-Encoding: deflate, gzip;q=0.8, br"
		assert_eq gzip "$(hk_header Content-Encoding)" "$p $fmt: gzip inside a list"
		fetch "$d/cmp" "${U}$p" -H "$A" --compressed
		[ -s "$d/cmp" ] || fail "$p $fmt: empty body with --compressed"
	done
done

hk_log "gzip and the registry content agree (JSON)"
assert_http 200 GET "${U}apps" -H "Accept: application/json" --compressed
assert_eq "DOWN_1_UP_2_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "hashcode via gzip"

hk_log "compact JSON"
assert_http 200 GET "${U}apps" -H "Accept: application/json" -H "X-Eureka-Accept: compact"
assert_eq '["g1","g2","x1"]' \
    "$(hk_json 'sorted(i["instanceId"] for a in d["applications"]["application"] for i in a["instance"])')" \
    "compact: same instances"
assert_eq "DOWN_1_UP_2_" "$(hk_json 'd["applications"]["apps__hashcode"]')" "compact hashcode"
for k in leaseInfo metadata overriddenStatus lastDirtyTimestamp homePageUrl healthCheckUrl \
    statusPageUrl countryId isCoordinatingDiscoveryServer; do
	assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "'$k'" in i]')" \
	    "compact instance has no $k"
done
for k in instanceId app ipAddr hostName status port securePort vipAddress lastUpdatedTimestamp actionType; do
	assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "'$k'" not in i]')" \
	    "compact instance keeps $k"
done
assert_eq int "$(hk_json 'type(d["applications"]["application"][0]["instance"][0]["lastUpdatedTimestamp"]).__name__')" \
    "compact lastUpdatedTimestamp is a number"

hk_log "full JSON keeps everything; X-Eureka-Accept is case-insensitive, unknown = full"
assert_http 200 GET "${U}apps" -H "Accept: application/json" -H "X-Eureka-Accept: full"
assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "leaseInfo" not in i]')" \
    "full has leaseInfo"
assert_http 200 GET "${U}apps" -H "Accept: application/json" -H "X-Eureka-Accept: whatever"
assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "leaseInfo" not in i]')" \
    "unknown X-Eureka-Accept is full"
assert_http 200 GET "${U}apps" -H "Accept: application/json" -H "X-Eureka-Accept: COMPACT"
assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "leaseInfo" in i]')" \
    "COMPACT is compact"

hk_log "compact XML, compact delta, compact + gzip"
assert_http 200 GET "${U}apps" -H "X-Eureka-Accept: compact"
b=$(cat "$HK_BODY")
assert_contains "<applications>" "$b" "compact XML root"
assert_contains "<instanceId>g1</instanceId>" "$b" "compact XML instance"
assert_not_contains "<leaseInfo>" "$b" "compact XML has no leaseInfo"
assert_not_contains "<lastDirtyTimestamp>" "$b" "compact XML has no lastDirtyTimestamp"
assert_http 200 GET "${U}apps/delta" -H "Accept: application/json" -H "X-Eureka-Accept: compact"
assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "leaseInfo" in i]')" \
    "compact delta"
fetch "$d/cz" "${U}apps" -H "Accept: application/json" -H "X-Eureka-Accept: compact" -H "Accept-Encoding: gzip"
assert_eq gzip "$(hk_header Content-Encoding)" "compact gzip"
gunzip -c <"$d/cz" >"$d/cz.json" || fail "compact gzip body does not gunzip"
assert_eq "[]" "$(hk_json '[1 for a in d["applications"]["application"] for i in a["instance"] if "leaseInfo" in i]' "$d/cz.json")" \
    "compact gzip body is compact"

hk_stop s

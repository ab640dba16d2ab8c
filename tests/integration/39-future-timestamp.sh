#!/bin/sh
# 39-future-timestamp.sh: the future-timestamp hijack (issue 9, "Future
# timestamps"). An impostor registers an instance id with a
# lastDirtyTimestamp ten years ahead and its own address; the real owner
# then registers the same id with its current timestamp and address, and
# later once more with a new address. What a client fetches must be the
# owner's address each time, whether the impostor came through the REST
# API or a replication batch and whether the owner did. The server may
# refuse the impostor's timestamp (400, or a 400 item in the batch) or
# clamp it to its own clock; either passes, because only the address a
# client sees is checked, not how the server got there. (A clamp to "now
# plus the allowed skew" would let the impostor win for that skew, and
# fails here.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_start S
S=$HK_URL_S
REP="x-netflix-discovery-replication: true"
FUTURE=$(($(cl_now_ms) + 10 * 365 * 86400 * 1000))

# Print a registration body of SVC/ID from HOST/IP stamped TS.
body()
{
	hk_instance_json SVC "$1" |
	    sed -e "s/\"lastDirtyTimestamp\":\"[0-9]*\"/\"lastDirtyTimestamp\":\"$4\"/" \
		-e "s/\"lastUpdatedTimestamp\":\"[0-9]*\"/\"lastUpdatedTimestamp\":\"$4\"/" \
		-e "s/\"hostName\":\"[^\"]*\"/\"hostName\":\"$2\"/" \
		-e "s/\"ipAddr\":\"[^\"]*\"/\"ipAddr\":\"$3\"/"
}

# Register SVC/ID from HOST/IP stamped TS through the REST API; print
# the HTTP status.
reg_rest()
{
	body "$1" "$2" "$3" "$4" >"$HK_ROOT/reg.json"
	hk_curl -o /dev/null -w '%{http_code}' -X POST "${S}apps/SVC" \
	    -H 'Content-Type: application/json' --data-binary @"$HK_ROOT/reg.json"
}

# The same through POST peerreplication/batch (a peer's Register); print
# the HTTP status and the item's statusCode.
reg_batch()
{
	body "$1" "$2" "$3" "$4" | "$HK_PYTHON" -c '
import json, sys
i = json.load(sys.stdin)["instance"]
print(json.dumps({"replicationList": [{"appName": "SVC", "id": i["instanceId"],
    "lastDirtyTimestamp": int(i["lastDirtyTimestamp"]), "status": "UP",
    "instanceInfo": i, "action": "Register"}]}))' >"$HK_ROOT/batch.json"
	code=$(hk_curl -o "$HK_ROOT/batch.out" -w '%{http_code}' -X POST \
	    "${S}peerreplication/batch/" -H "$REP" \
	    -H 'Content-Type: application/json' --data-binary @"$HK_ROOT/batch.json")
	echo "$code $("$HK_PYTHON" -c '
import json, sys
try:
    print(json.load(open(sys.argv[1]))["responseList"][0]["statusCode"])
except Exception:
    print("-")' "$HK_ROOT/batch.out")"
}

# Heartbeat SVC/ID carrying lastDirtyTimestamp TS; print the HTTP status.
beat()
{
	hk_curl -o /dev/null -w '%{http_code}' -X PUT \
	    "${S}apps/SVC/$1?status=UP&lastDirtyTimestamp=$2"
}

# Print "hostName ipAddr" of SVC/ID as the single-instance read and the
# full fetch show it.
seen()
{
	local one all
	one=$(hk_curl -H 'Accept: application/json' "${S}apps/SVC/$1" |
	    "$HK_PYTHON" -c 'import json,sys; i=json.load(sys.stdin)["instance"]; print(i["hostName"], i["ipAddr"])' 2>/dev/null) ||
	    one=none
	all=$(hk_curl -H 'Accept: application/json' "${S}apps" |
	    "$HK_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)["applications"]["application"]
print(" ".join("%s %s" % (i["hostName"], i["ipAddr"]) for a in d
    for i in a["instance"] if i["instanceId"] == sys.argv[1]) or "none")' "$1")
	echo "$one | $all"
}

BAD=""
# One case: ID, how the impostor comes (rest|batch), how the owner does.
hijack()
{
	local id=$1 imp=$2 own=$3 r now
	if [ "$imp" = rest ]; then
		r=$(reg_rest "$id" evil.example 10.6.6.6 "$FUTURE")
	else
		r=$(reg_batch "$id" evil.example 10.6.6.6 "$FUTURE")
	fi
	# The impostor keeps its lease alive, as it would.
	hk_log "$id: impostor via $imp stamped +10 years: $r, heartbeat $(beat "$id" "$FUTURE")"
	for ip in 10.0.0.1 10.0.0.2; do
		now=$(cl_now_ms)
		if [ "$own" = rest ]; then
			r=$(reg_rest "$id" "$id.example" "$ip" "$now")
			[ "$r" = 204 ] || BAD="$BAD; $id: the owner's registration got HTTP $r"
		else
			r=$(reg_batch "$id" "$id.example" "$ip" "$now")
			case "$r" in
			"200 200") ;;
			*) BAD="$BAD; $id: the owner's replicated registration got [$r]" ;;
			esac
		fi
		r=$(seen "$id")
		hk_log "$id: owner via $own from $ip: $r"
		[ "$r" = "$id.example $ip | $id.example $ip" ] ||
		    BAD="$BAD; $id ($imp impostor, $own owner): clients see [$r], not the owner's $id.example $ip"
		# Later: the impostor heartbeats, the owner too.
		beat "$id" "$FUTURE" >/dev/null
		beat "$id" "$now" >/dev/null
		r=$(seen "$id")
		[ "$r" = "$id.example $ip | $id.example $ip" ] ||
		    BAD="$BAD; $id ($imp impostor, $own owner): after heartbeats clients see [$r]"
	done
}

hijack x-rest rest rest
hijack x-batch batch rest
hijack x-mixed rest batch
hk_alive S
[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop S

#!/bin/sh
# 24-auth.sh: HTTP Basic authentication on one node (docs/security.md).
# No, wrong and right credentials on every kind of endpoint: open
# (/health probes), read (registry GETs, dashboard, /metrics, /info),
# write (register, heartbeat, status, metadata, cancel) and peer
# (peerreplication/batch, heureka/...); 401 carries WWW-Authenticate, a
# user on a peer endpoint gets 403, and a refusal changes nothing. Then
# heureka.security.read-anonymous, the password from a file and from the
# environment, and the secrets never showing in the log, the access log,
# --check-config, /info, /metrics or the dashboard. (Its many wrong
# passwords in a row are not a guesser's: the throttle, 67-auth-throttle,
# gets a burst they fit in.)
. "$(dirname "$0")/lib.sh"

UPW="u-Secr3t-$$-pw"
PPW="p-Secr3t-$$-pw"
T=$(hk_tmp)
printf '%s\n' "$UPW" >"$T/user.pw"
chmod 600 "$T/user.pw"
# A peer URL with credentials (unreachable), and a malformed one whose
# parse error is logged: neither may show the password.
PEERS="http://hk-peer:$PPW@127.0.0.1:1/eureka/,http://hk-peer:$PPW@127.0.0.1:x/eureka/"

HEUREKA_SECURITY_PEER_PASSWORD=$PPW hk_start s \
    -D spring.security.user.name=alice \
    -D heureka.security.user.password-file="$T/user.pw" \
    -D heureka.security.peer.name=hk-peer \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0 \
    -D heureka.security.auth-failure-burst=100000 \
    -D heureka.log.access="$T/access.log" --log-level debug \
    --peers "$PEERS"
U=$HK_URL_s
R=http://127.0.0.1:$HK_PORT_s
NONE=""
WRONG="-u alice:not-the-password"
USER="-u alice:$UPW"
PEER="-u hk-peer:$PPW"

# CODE METHOD URL CREDS [curl args]: creds is one word list (may be empty).
req()
{
	local want=$1 method=$2 url=$3 creds=$4
	shift 4
	# shellcheck disable=SC2086
	assert_http "$want" "$method" "$url" $creds "$@"
	if [ "$want" = 401 ]; then
		assert_eq 'Basic realm="heureka"' "$(hk_header WWW-Authenticate)" \
		    "WWW-Authenticate of $method $url"
	fi
}

hk_log "open: the probes answer whatever is sent"
for p in /health /health/liveness /actuator/health /actuator/health/liveness \
    /health/readiness; do
	req 200 GET "$R$p" "$NONE"
	req 200 GET "$R$p" "$WRONG"
	req 200 GET "$R$p" "$USER"
done

hk_log "write: 401 without or with wrong credentials, and nothing changes"
hk_instance_json APP i-1 >"$T/i1.json"
J="-H Content-Type:application/json --data-binary @$T/i1.json"
# shellcheck disable=SC2086
req 401 POST "${U}apps/APP" "$NONE" $J
# shellcheck disable=SC2086
req 401 POST "${U}apps/APP" "$WRONG" $J
# shellcheck disable=SC2086
req 401 POST "${U}apps/APP" "-H Authorization:Basic!!" $J
# shellcheck disable=SC2086
req 401 POST "${U}apps/APP" "-H Authorization:Bearer-abc" $J
# The user name with the peer's password is no identity either.
# shellcheck disable=SC2086
req 401 POST "${U}apps/APP" "-u alice:$PPW" $J
req 404 GET "${U}apps/APP/i-1" "$USER"
# shellcheck disable=SC2086
req 204 POST "${U}apps/APP" "$USER" $J
hk_instance_json APP i-2 >"$T/i2.json"
req 204 POST "${U}apps/APP" "$PEER" -H Content-Type:application/json \
    --data-binary @"$T/i2.json"
# A snapshot with the user's credentials (hk_snapshot sends none).
snap()
{
	hk_curl -u "alice:$UPW" -H 'Accept: application/json' "${U}apps" |
	    "$HK_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)["applications"]
print(sorted((a["name"], i["instanceId"], i["status"], i.get("overriddenStatus"),
    json.dumps(i.get("metadata"), sort_keys=True), i.get("lastDirtyTimestamp"))
    for a in d["application"] for i in a["instance"]))'
}
SNAP=$(snap)
for creds in "$NONE" "$WRONG"; do
	req 401 PUT "${U}apps/APP/i-1" "$creds"
	req 401 PUT "${U}apps/APP/i-1/status?value=OUT_OF_SERVICE" "$creds"
	req 401 DELETE "${U}apps/APP/i-1/status" "$creds"
	req 401 PUT "${U}apps/APP/i-1/metadata?k=v" "$creds"
	req 401 DELETE "${U}apps/APP/i-1" "$creds"
done
assert_eq "$SNAP" "$(snap)" "registry after refused writes"

hk_log "write: the user and the peer may"
req 200 PUT "${U}apps/APP/i-1" "$USER"
req 200 PUT "${U}apps/APP/i-1/status?value=OUT_OF_SERVICE" "$USER"
req 200 DELETE "${U}apps/APP/i-1/status" "$PEER"
req 200 PUT "${U}apps/APP/i-1/metadata?k=v" "$USER"
req 200 DELETE "${U}apps/APP/i-2" "$USER"

hk_log "read: registry, dashboard, /metrics, /info"
for p in "${U}apps" "${U}apps/delta" "${U}apps/APP" "${U}apps/APP/i-1" \
    "${U}vips/app" "${U}instances/i-1" "${U}status" \
    "${U}serverinfo/statusoverrides" "$R/" "$R/lastn" \
    "$R/heureka-assets/status.json" "$R/heureka-assets/app.js" \
    "$R/metrics" "$R/actuator/prometheus" "$R/info" "$R/actuator/info"; do
	req 401 GET "$p" "$NONE"
	req 401 GET "$p" "$WRONG"
	req 200 GET "$p" "$USER"
	req 200 GET "$p" "$PEER"
done
req 401 HEAD "${U}apps" "$NONE"
req 200 HEAD "${U}apps" "$USER"
# A refused read gives nothing away.
req 401 GET "${U}apps/APP" "$NONE" -H 'Accept: application/json'
assert_not_contains i-1 "$(cat "$HK_BODY")" "401 body"

hk_log "peer: 401 anonymous or wrong, 403 for the user, 200 for the peer"
SNAP=$(snap)
cat >"$T/batch.json" <<EOF
{"replicationList":[{"appName":"APP","id":"i-1",
"lastDirtyTimestamp":$(date +%s%3N),"action":"Cancel"}]}
EOF
B="-H Content-Type:application/json --data-binary @$T/batch.json"
# shellcheck disable=SC2086
req 401 POST "${U}peerreplication/batch" "$NONE" $B
# shellcheck disable=SC2086
req 401 POST "${U}peerreplication/batch" "$WRONG" $B
# shellcheck disable=SC2086
req 403 POST "${U}peerreplication/batch" "$USER" $B
assert_eq "$SNAP" "$(snap)" "registry after refused batches"
for p in heureka/apps heureka/digest heureka/stats; do
	req 401 GET "${U}$p" "$NONE"
	req 401 GET "${U}$p" "$WRONG"
	req 403 GET "${U}$p" "$USER"
	req 200 GET "${U}$p" "$PEER"
done
# shellcheck disable=SC2086
req 200 POST "${U}peerreplication/batch" "$PEER" $B
req 404 GET "${U}apps/APP/i-1" "$USER"

hk_log "SIGHUP re-reads a rotated password file"
printf '%s\n' "$UPW-2" >"$T/user.pw"
kill -HUP "$HK_PID_s"
wait_until 5 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -u 'alice:$UPW-2' '${U}apps')\" = 200 ]"
req 401 GET "${U}apps" "$USER"
printf '%s\n' "$UPW" >"$T/user.pw"
kill -HUP "$HK_PID_s"
wait_until 5 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -u 'alice:$UPW' '${U}apps')\" = 200 ]"

hk_log "secrets never shown"
req 200 GET "$R/info" "$USER"
INFO=$(cat "$HK_BODY")
req 200 GET "$R/" "$USER"
PAGE=$(cat "$HK_BODY")
req 200 GET "$R/heureka-assets/status.json" "$USER"
FEED=$(cat "$HK_BODY")
req 200 GET "$R/metrics" "$USER"
METRICS=$(cat "$HK_BODY")
req 200 GET "${U}status" "$PEER"
STATUS=$(cat "$HK_BODY")
req 200 GET "${U}heureka/stats" "$PEER"
STATS=$(cat "$HK_BODY")
assert_contains "http://127.0.0.1:1/eureka/" "$FEED" "peer URL in the feed"
assert_contains "http://127.0.0.1:1/eureka/" "$PAGE" "peer URL on the page"
CHECK=$(HEUREKA_SECURITY_PEER_PASSWORD=$PPW "$HEUREKAD" --check-config \
    -D heureka.security.user.password-file="$T/user.pw" \
    -D heureka.security.peer.name=hk-peer --peers "$PEERS")
assert_contains "spring.security.user.password=<hidden>" "$CHECK" "--check-config"
assert_contains "heureka.security.peer.password=<hidden>" "$CHECK" "--check-config"
hk_stop s
for pw in "$UPW" "$PPW"; do
	for what in INFO PAGE FEED METRICS STATUS STATS CHECK; do
		eval "v=\$$what"
		assert_not_contains "$pw" "$v" "a password in $what"
	done
	# (lib.sh's own "=== command line" lines are not the server's.)
	grep -v '^=== ' "$HK_ROOT/s.log" | cat - "$T/access.log" |
	    grep -F -- "$pw" && fail "a password in the server's log or access log"
	# Nor its base64 (an Authorization header copied somewhere).
	b64=$(printf 'alice:%s' "$pw" | base64 -w0)
	grep -v '^=== ' "$HK_ROOT/s.log" | cat - "$T/access.log" |
	    grep -F -- "$b64" && fail "credentials in the server's log or access log"
done
grep -q "bad port" "$HK_ROOT/s.log" || fail "the malformed peer URL was not logged"
[ -s "$T/access.log" ] || fail "empty access log"

hk_log "read-anonymous, and the password from the environment"
SPRING_SECURITY_USER_PASSWORD=$UPW hk_start a \
    -D heureka.security.read-anonymous=true \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
A=$HK_URL_a
req 200 GET "${A}apps" "$NONE"
req 200 GET "http://127.0.0.1:$HK_PORT_a/" "$NONE"
req 401 GET "${A}apps" "-u user:wrong"
# shellcheck disable=SC2086
req 401 POST "${A}apps/APP" "$NONE" $J
req 401 GET "${A}heureka/stats" "$NONE"
# shellcheck disable=SC2086
req 204 POST "${A}apps/APP" "-u user:$UPW" $J
req 200 GET "${A}apps/APP/i-1" "$NONE"
# The default peer identity is the user (as Spring peers share the user).
req 200 GET "${A}heureka/stats" "-u user:$UPW"
hk_stop a

hk_log "configuration errors name the keys, never the secret"
set +e
OUT=$("$HEUREKAD" --check-config -D spring.security.user.password="$UPW" \
    -D heureka.security.user.password-file="$T/user.pw" 2>&1)
RC=$?
OUT2=$("$HEUREKAD" --check-config -D heureka.security.peer.password="$PPW" 2>&1)
RC2=$?
OUT3=$("$HEUREKAD" --check-config --peers "ftp://u:$PPW@h/" 2>&1)
RC3=$?
set -e
assert_eq 78 "$RC" "password and password-file"
assert_contains "are both set" "$OUT" "password and password-file"
assert_eq 78 "$RC2" "peer password without a user password"
assert_eq 78 "$RC3" "bad peer URL"
for o in "$OUT" "$OUT2" "$OUT3"; do
	assert_not_contains "$UPW" "$o" "config error"
	assert_not_contains "$PPW" "$o" "config error"
done

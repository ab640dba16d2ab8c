#!/bin/sh
# 53-console-actions.sh: the dashboard's actions and the cross-site rule
# (docs/console.md, server/front/csrf.h), over plain HTTP.
#   - With authentication off, the feed offers no actions and a browser's
#     write (Origin, Sec-Fetch-Site or X-Heureka-Token) is refused 403
#     with the reason, while curl and Eureka clients (none of those
#     headers) work as before; heureka.dashboard.actions=true turns them on.
#   - With it on, a write from the page needs the feed's token (bound to
#     the credentials it was served to) and this origin: another Origin,
#     a cross-site Sec-Fetch-Site, a form POST from another site, a
#     missing or another's token are 403 with a reason; the right ones
#     take an instance out of service, back in, and deregister it.
#   - The last renewal the page shows is when the heartbeat came (not
#     Eureka's renewal + duration), and /lastn labels an eviction.
. "$(dirname "$0")/lib.sh"

T=$(hk_tmp)
hk_start open -D eureka.server.eviction-interval-timer-in-ms=200 \
    -D eureka.server.enable-self-preservation=false
U=$HK_URL_open
R=http://127.0.0.1:$HK_PORT_open
ORIG="Origin: $R"

feed() { hk_curl "$@" "$R/heureka-assets/status.json" -o "$T/feed.json" && hk_json "$FEEDQ" "$T/feed.json"; }

hk_log "authentication off: no actions"
hk_register "$U" SVC i-1
FEEDQ='str(d["actions"]) + " " + str("token" in d)'
assert_eq "False False" "$(feed)" "feed without actions"
assert_http 403 PUT "${U}apps/SVC/i-1/status?value=OUT_OF_SERVICE" -H "$ORIG"
assert_contains "dashboard actions are off" "$(cat "$HK_BODY")" "the reason"
assert_http 403 DELETE "${U}apps/SVC/i-1" -H "Sec-Fetch-Site: same-origin"
# curl and Eureka clients: as before.
assert_http 200 PUT "${U}apps/SVC/i-1/status?value=OUT_OF_SERVICE"
assert_http 200 DELETE "${U}apps/SVC/i-1/status"
# (Eureka answers the next heartbeat 404 then: the client registers.)
hk_register "$U" SVC i-1
assert_http 200 PUT "${U}apps/SVC/i-1"
# Reads from a browser are never refused.
assert_http 200 GET "${U}apps/SVC/i-1" -H "Origin: http://evil.example"

hk_log "last renewal: when the heartbeat came"
FEEDQ='str([i for a in d["apps"] for i in a["instances"] if i["id"] == "i-1"][0]["lastRenewal"])'
NOW=$(($(date +%s%N) / 1000000))
LR=$(feed)
[ $((LR - NOW)) -le 2000 ] && [ $((NOW - LR)) -le 10000 ] ||
    fail "last renewal $LR is not about now ($NOW): renewal + duration?"
assert_http 200 GET "$R/"
assert_contains " s ago)" "$(cat "$HK_BODY")" "the page says how long ago"

hk_log "/lastn labels evictions"
hk_register "$U" GONE g-1 UP 1
assert_http 200 DELETE "${U}apps/SVC/i-1"
wait_until 10 hk_eq 1 hk_metric heureka_evictions_total "$HK_PORT_open"
assert_http 200 GET "$R/lastn"
assert_contains "<td>GONE(g-1)</td><td>evicted (lease expired)</td>" "$(cat "$HK_BODY")" "eviction labelled"
assert_contains "<td>SVC(i-1)</td><td>cancelled</td>" "$(cat "$HK_BODY")" "cancel labelled"
hk_stop open

hk_log "heureka.dashboard.actions=true with authentication off"
hk_start on -D heureka.dashboard.actions=true
U=$HK_URL_on
R=http://127.0.0.1:$HK_PORT_on
ORIG="Origin: $R"
hk_register "$U" SVC i-1
FEEDQ='d["token"]'
TOK=$(feed)
[ ${#TOK} -eq 32 ] || fail "token [$TOK]"
assert_http 200 PUT "${U}apps/SVC/i-1/status?value=OUT_OF_SERVICE" \
    -H "$ORIG" -H "X-Heureka-Token: $TOK" -H "Sec-Fetch-Site: same-origin"
hk_stop on

hk_log "authentication on"
PW="s3cret-$$"
export SPRING_SECURITY_USER_PASSWORD=$PW
hk_start auth -D spring.security.user.name=ops
unset SPRING_SECURITY_USER_PASSWORD
U=$HK_URL_auth
R=http://127.0.0.1:$HK_PORT_auth
ORIG="Origin: $R"
C="ops:$PW"
hk_instance_json SVC i-1 >"$T/reg.json"
assert_http 204 POST "${U}apps/SVC" -u "$C" \
    -H 'Content-Type: application/json' --data-binary @"$T/reg.json"
FEEDQ='str(d["actions"]) + " " + d["token"]'
OUT=$(feed -u "$C")
assert_eq True "${OUT%% *}" "actions offered to the user"
TOK=${OUT#* }
PUT_OOS="${U}apps/SVC/i-1/status?value=OUT_OF_SERVICE"
assert_http 403 PUT "$PUT_OOS" -u "$C" -H "Origin: http://evil.example" -H "X-Heureka-Token: $TOK"
assert_contains "cross-origin request refused" "$(cat "$HK_BODY")" "reason: origin"
assert_http 403 PUT "$PUT_OOS" -u "$C" -H "$ORIG" -H "X-Heureka-Token: $TOK" -H "Sec-Fetch-Site: cross-site"
assert_contains "cross-site request refused" "$(cat "$HK_BODY")" "reason: fetch site"
assert_http 403 PUT "$PUT_OOS" -u "$C" -H "$ORIG"
assert_contains "X-Heureka-Token" "$(cat "$HK_BODY")" "reason: token"
assert_http 403 PUT "$PUT_OOS" -u "$C" -H "$ORIG" -H "X-Heureka-Token: 0123456789abcdef0123456789abcdef"
assert_http 403 PUT "$PUT_OOS" -u "$C" -H "Referer: http://evil.example/page" -H "X-Heureka-Token: $TOK"
# A form another site posts: Origin elsewhere, form-encoded, no token.
assert_http 403 POST "${U}apps/SVC" -u "$C" -H "Origin: http://evil.example" \
    -H "Content-Type: application/x-www-form-urlencoded" -H "Sec-Fetch-Site: cross-site" \
    --data 'instance=x'
# The token is bound to the credentials: none at all is a 401 first.
assert_http 401 PUT "$PUT_OOS" -H "$ORIG" -H "X-Heureka-Token: $TOK"
# The page's own requests: out of service, back in, deregister.
assert_http 200 PUT "$PUT_OOS" -u "$C" -H "$ORIG" -H "X-Heureka-Token: $TOK" -H "Sec-Fetch-Site: same-origin"
hk_curl -u "$C" -H "Accept: application/json" "${U}apps/SVC/i-1" -o "$T/i.json"
assert_eq OUT_OF_SERVICE "$(hk_json 'd["instance"]["status"]' "$T/i.json")" "out of service"
assert_http 200 DELETE "${U}apps/SVC/i-1/status" -u "$C" -H "$ORIG" -H "X-Heureka-Token: $TOK"
assert_http 200 DELETE "${U}apps/SVC/i-1" -u "$C" -H "$ORIG" -H "X-Heureka-Token: $TOK"
assert_http 404 GET "${U}apps/SVC/i-1" -u "$C"
# Who did it, in the audit.
hk_curl -u "$C" "${U}heureka/audit?app=SVC" -o "$T/a.json"
assert_eq "cancel:ops override-removed:ops status-override:ops" \
    "$(hk_json '" ".join(r["what"] + ":" + r["user"] for r in d["records"][:3])' "$T/a.json")" "audited as the user"
hk_stop auth

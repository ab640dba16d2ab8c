#!/bin/sh
# console-test.sh: the operator's console in a real browser (headless
# Chromium through cdp_steps.py). Two nodes with authentication on; the
# browser carries the user's credentials (as after the login prompt).
#   - On A's dashboard the user takes SVC/i-1 out of service with its
#     button; B's dashboard, open meanwhile, shows it OUT_OF_SERVICE live
#     (replication, then B's watch stream), and B's audit names the user
#     and A as where the change entered.
#   - A page from another origin that auto-submits a form to A (the
#     browser sending the same credentials) gets 403 with the reason.
#   - The instance page (#/instance/SVC/i-1) shows the instance and its
#     history; the doctor lists A's findings. Screenshots of both are
#     left in tests/artifacts/ (console-instance.png, console-doctor.png).
# Skips (exit 77) when Chromium is not installed.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/cluster-lib.sh"

CHROMIUM=""
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		CHROMIUM=$(command -v "$c")
		break
	fi
done
if [ -z "$CHROMIUM" ]; then
	echo "SKIP: chromium is not installed" >&2
	exit 77
fi
ARTIFACTS=${HK_ARTIFACTS:-$(pwd)/tests/artifacts}
mkdir -p "$ARTIFACTS"
T=$(hk_tmp)

PW="c-$$-pw"
HK_AUTH="ops:$PW"
hk_curl()
{
	curl -sS --max-time "$HK_CURL_MAX_TIME" --connect-timeout 5 \
	    -u "$HK_AUTH" "$@"
}
set -- $(cl_ports 3)
PA=$1 PB=$2 PE=$3
PEERS="http://ops:$PW@127.0.0.1:$PA/eureka/,http://ops:$PW@127.0.0.1:$PB/eureka/"
export SPRING_SECURITY_USER_PASSWORD=$PW
cl_start A "$PA" "$PEERS" -D spring.security.user.name=ops \
    -D heureka.doctor.interval-ms=200 -D heureka.doctor.window-ms=60000
cl_start B "$PB" "$PEERS" -D spring.security.user.name=ops
unset SPRING_SECURITY_USER_PASSWORD
A=$HK_URL_A B=$HK_URL_B
RA=http://127.0.0.1:$PA RB=http://127.0.0.1:$PB

hk_log "populate: SVC with metadata, an id registered from two hosts"
hk_instance_json SVC i-1 >"$T/i1.json"
hk_mutate "$T/i1.json" \
    'i["metadata"]["team"] = "payments"; i["metadata"]["zone"] = "eu-west-1a"' \
    >"$T/i1m.json"
assert_http 204 POST "${A}apps/SVC" -H 'Content-Type: application/json' \
    --data-binary @"$T/i1m.json"
hk_register "$A" SVC i-2
for h in a b a; do
	hk_instance_json TWIN twin-1 >"$T/t.json"
	hk_mutate "$T/t.json" 'i["hostName"] = "host-'$h'.example"' >"$T/t2.json"
	assert_http 204 POST "${A}apps/TWIN" -H 'Content-Type: application/json' \
	    --data-binary @"$T/t2.json"
done
wait_until 10 cl_has "$B" SVC i-1

# The other site: a page whose form posts to A by itself.
cat >"$T/evil.html" <<HTML
<!DOCTYPE html><html><body>
<form id="f" method="POST" action="${A}apps/SVC"
 enctype="application/x-www-form-urlencoded">
<input type="hidden" name="instance" value="x"></form>
<script>document.getElementById('f').submit();</script>
</body></html>
HTML
(cd "$T" && exec "$HK_PYTHON" -m http.server -b 127.0.0.1 "$PE") \
    >"$HK_ROOT/evil-http.log" 2>&1 &
hk_own "$!"
wait_until 10 curl -sfo /dev/null "http://127.0.0.1:$PE/evil.html"

AUTH="Basic $(printf 'ops:%s' "$PW" | base64 | tr -d '\n')"
SVC_ROW="document.querySelector('tr[data-app=SVC]')"
cat >"$T/steps.json" <<JSON
[
 ["open", "a", "$RA/", {"Authorization": "$AUTH"}],
 ["open", "b", "$RB/", {"Authorization": "$AUTH"}],
 ["wait", "a", "document.body.dataset.feed && document.querySelector('tr[data-app=\"SVC\"] .act-out')", 15],
 ["wait", "b", "document.body.dataset.feed && document.body.dataset.watch === 'on'", 15],
 ["eval", "a", "Array.from(document.querySelectorAll('tr[data-app=\"SVC\"] .inst')).find(function (d) { return d.querySelector('h4').textContent === 'i-1'; }).querySelector('.act-out').click(), 'clicked'"],
 ["wait", "a", "document.body.dataset.action === 'ok'", 10],
 ["wait", "b", "$SVC_ROW && $SVC_ROW.textContent.indexOf('OUT_OF_SERVICE (1)') >= 0", 15],
 ["eval", "b", "$SVC_ROW.textContent.slice(0, 80)"],
 ["open", "evil", "http://127.0.0.1:$PE/evil.html", {"Authorization": "$AUTH"}],
 ["wait", "evil", "location.port === '$PA' && document.body && document.body.innerText.indexOf('refused') >= 0", 15],
 ["eval", "evil", "document.body.innerText"],
 ["eval", "a", "location.hash = '#/instance/SVC/i-1', 'routed'"],
 ["wait", "a", "document.body.dataset.instancePage && document.getElementById('ip-history').textContent.indexOf('status-override') >= 0", 10],
 ["shot", "a", "$ARTIFACTS/console-instance.png", 1100, 1700],
 ["eval", "a", "location.hash = '', 'home'"],
 ["wait", "a", "!document.getElementById('main-sections').hidden && document.body.dataset.doctor >= 1", 10],
 ["eval", "a", "document.getElementById('doctor').textContent"],
 ["shot", "a", "$ARTIFACTS/console-doctor.png", 1100, 900]
]
JSON
hk_log "drive the browser"
"$HK_PYTHON" "$(dirname "$0")/cdp_steps.py" "$CHROMIUM" "$T/steps.json" \
    >"$T/cdp.out" 2>&1 || {
	cat "$T/cdp.out" >&2
	fail "browser steps failed (see above)"
}
cat "$T/cdp.out"
assert_contains "cross-site request refused" "$(cat "$T/cdp.out")" "the form post refused, with the reason"
assert_contains "id-conflict" "$(cat "$T/cdp.out")" "the doctor lists the id conflict"

hk_log "the change reached B, with its origin"
hk_curl -H "Accept: application/json" -o "$T/b.json" "${B}apps/SVC/i-1"
assert_eq OUT_OF_SERVICE "$(hk_json 'd["instance"]["status"]' "$T/b.json")" "status on B"
hk_curl -o "$T/ba.json" "${B}heureka/audit?app=SVC&id=i-1"
assert_eq "status-override ops $PA True" \
    "$(hk_json '" ".join(str(x) for x in (d["records"][0]["what"], d["records"][0]["user"], d["records"][0]["node"].rsplit(":", 1)[1], d["records"][0]["replicated"]))' "$T/ba.json")" \
    "B's record of the click"
# The form post changed nothing.
hk_curl -o "$T/aa.json" "${A}heureka/audit?app=SVC"
assert_eq 0 "$(hk_json 'str(sum(1 for r in d["records"] if r["what"] == "re-register"))' "$T/aa.json")" "no change from the form"
hk_stop A
hk_stop B

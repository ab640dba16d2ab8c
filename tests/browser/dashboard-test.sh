#!/bin/sh
# dashboard-test.sh: the dashboard in a real browser (headless Chromium).
#
# A server holds several applications, some instances DOWN or
# OUT_OF_SERVICE, and one application whose name, instance id, status page
# URL and metadata carry <script>/onerror/javascript: payloads. Chromium
# loads the page and runs its script (which re-renders everything from the
# JSON feed); the rendered DOM must list the applications with the right
# counts and statuses, show every payload as text, contain none of the
# elements the payloads would create, link no javascript: URL, keep the page
# title, hide the peer's password and show the self-preservation banner
# exactly when it should. Screenshots (desktop and phone widths) are left in
# tests/artifacts/ under the directory make check runs in.
#
# Skips (exit 77) when Chromium is not installed.
. "$(dirname "$0")/../integration/lib.sh"

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

# Run headless Chromium with a fresh profile; extra args are its own.
chrome()
{
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	    --no-first-run --disable-background-networking \
	    --disable-component-update --disable-sync \
	    --user-data-dir="$(hk_tmp)" "$@" 2>>"$HK_ROOT/chromium.log"
}

# The DOM once the page's script rendered the feed and the charts (at
# most 10 s). Through cdp.py in real time, not --dump-dom with
# --virtual-time-budget: the page's open watch stream is a pending fetch,
# which would keep virtual time from ever running out.
dump_dom()
{
	"$HK_PYTHON" "$(dirname "$0")/cdp.py" "$CHROMIUM" "$1" \
	    "document.body.dataset.feed && document.body.dataset.charts" 10 \
	    2>>"$HK_ROOT/chromium.log"
}

# POST a registration built by python (so payloads are JSON-escaped).
# Args: BASEURL APP ID STATUS STATUSPAGEURL [KEY=VALUE...]
register_raw()
{
	local base=$1 app=$2 id=$3 status=$4 spu=$5 body enc
	shift 5
	body=$HK_ROOT/reg.json
	"$HK_PYTHON" - "$app" "$id" "$status" "$spu" "$@" >"$body" <<'EOF'
import json, sys
import hkfixture
app, iid, status, spu = sys.argv[1:5]
meta = dict(kv.split("=", 1) for kv in sys.argv[5:])
print(json.dumps({"instance": hkfixture.instance(
    app, iid, host="host.example", ip="10.0.0.9", status=status,
    secure_port=8443, metadata=meta,
    urls=(spu, spu, "http://host.example:8080/health"), vip="evil",
    secure_vip="evil")}))
EOF
	enc=$("$HK_PYTHON" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$app")
	assert_http 204 POST "${base}apps/$enc" \
	    -H 'Content-Type: application/json' --data-binary @"$body"
}

# Names and ids may not hold spaces, '/', '?' or '#': a bare unknown tag
# is the payload there (it would become an <xssapp> element).
EVIL_APP='<XSSAPP>"&AMP;'
EVIL_ID="<xssid>'\"'"
EVIL_SCRIPT="<script>document.title='PWNED';document.body.appendChild(document.createElement('xssran'))</script>"
EVIL_IMG="<img id=xssmeta src=x onerror=\"document.title='PWNED'\">"

hk_start s --peers "http://admin:hunter2@127.0.0.1:1/eureka/" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0 \
    -D heureka.dashboard.history-interval-ms=1000
U=$HK_URL_s
R=http://127.0.0.1:$HK_PORT_s

hk_log "populate the registry"
hk_register "$U" ALPHA a1
hk_register "$U" ALPHA a2
hk_register "$U" ALPHA a3 DOWN
hk_register "$U" BETA b1
hk_register "$U" GAMMA g1 OUT_OF_SERVICE
hk_register "$U" GAMMA g2 DOWN
hk_register "$U" GAMMA g3
hk_register "$U" DELTA d1
hk_register "$U" DELTA d2
assert_http 200 DELETE "${U}apps/DELTA/d2"
register_raw "$U" "$EVIL_APP" "$EVIL_ID" UP "javascript:document.title='PWNED'" \
    "note=$EVIL_SCRIPT" "img=$EVIL_IMG" "zone=<b>zone1</b>"

hk_log "headers and the page without script"
assert_http 200 GET "$R/"
assert_contains "script-src 'self'" "$(hk_header Content-Security-Policy)" "CSP header"
assert_contains "object-src 'none'" "$(hk_header Content-Security-Policy)" "CSP header"
assert_eq nosniff "$(hk_header X-Content-Type-Options)" "nosniff header"
assert_contains text/html "$(hk_header Content-Type)" "page content type"
PAGE=$(cat "$HK_BODY")
assert_contains '<b>UP (2)</b>' "$PAGE" "server-rendered ALPHA UP group"
assert_contains '&lt;XSSAPP&gt;&quot;&amp;AMP;' "$PAGE" "server-rendered app name escaped"
assert_not_contains '<XSSAPP>' "$PAGE" "raw app name on the page"
assert_not_contains '<xssid>' "$PAGE" "raw instance id on the page"
assert_not_contains '<script>document' "$PAGE" "raw metadata on the page"
assert_not_contains hunter2 "$PAGE" "peer password on the page"
assert_http 200 GET "$R/heureka-assets/app.js"
assert_contains javascript "$(hk_header Content-Type)" "script content type"
assert_http 200 GET "$R/lastn"
assert_contains 'DELTA(d2)' "$(cat "$HK_BODY")" "cancelled lease on /lastn"
assert_contains 'ALPHA(a1)' "$(cat "$HK_BODY")" "registered lease on /lastn"

hk_log "render in chromium"
dump_dom "$R/" >"$HK_ROOT/dom.html" || fail "chromium --dump-dom failed: $(tail -5 "$HK_ROOT/chromium.log")"
[ -s "$HK_ROOT/dom.html" ] || fail "empty DOM from chromium"
cp "$HK_ROOT/dom.html" "$ARTIFACTS/dashboard-dom.html"

"$HK_PYTHON" - "$HK_ROOT/dom.html" <<'EOF' || fail "rendered DOM (see above)"
import re, sys
from html.parser import HTMLParser

dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
bad = []

class P(HTMLParser):
    """Collect ids, links, the title and the application rows' groups."""
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.tags = [], [], []
        self.title, self.in_title = "", False
        self.apps = {}          # name -> list of group headers ("UP (2)")
        self.cur_app, self.in_b, self.depth = None, False, 0
        self.group_cls = {}
        self.cur_group = None
        self.filter_hidden = None
        self.searchable = 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "a" and "href" in a:
            self.hrefs.append(a["href"])
        if tag == "title":
            self.in_title = True
        if a.get("id") == "filter-box":
            self.filter_hidden = "hidden" in a
        if tag == "tr" and "app" in (a.get("class") or "").split():
            self.cur_app = a.get("data-app")
            self.apps[self.cur_app] = []
            if "data-search" in a:
                self.searchable += 1
        if tag == "div" and self.cur_app is not None and \
                "group" in (a.get("class") or "").split():
            self.cur_group = a.get("class")
        if tag == "b" and self.cur_app is not None:
            self.in_b = True
    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag == "b":
            self.in_b = False
        if tag == "tr":
            self.cur_app = None
    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.in_b and self.cur_app is not None:
            self.apps[self.cur_app].append(data.strip())
            self.group_cls[(self.cur_app, data.strip())] = self.cur_group

p = P()
p.feed(dom)

if p.title.strip() != "heureka":
    bad.append("title changed to %r: a payload ran" % p.title)
for i in p.ids:
    if i.lower().startswith("xss"):
        bad.append("element with id %r: a payload became markup" % i)
for t in ("xssran", "xssapp", "xssid"):
    if t in p.tags:
        bad.append("<%s> element: a payload became markup or ran" % t)
for h in p.hrefs:
    if not re.match(r"^(https?://|/|#)", h, re.I):
        bad.append("non-http link %r" % h)
if p.filter_hidden is not False:
    bad.append("filter box not shown (app.js did not run?)")
if p.searchable < 5:
    bad.append("rows not re-rendered from the feed by app.js (%d)" % p.searchable)
if "hunter2" in dom:
    bad.append("peer password shown")

evil = '<XSSAPP>"&AMP;'
want = {
    "ALPHA": ["UP (2)", "DOWN (1)"],
    "BETA": ["UP (1)"],
    "GAMMA": ["UP (1)", "DOWN (1)", "OUT_OF_SERVICE (1)"],
    "DELTA": ["UP (1)"],
    evil: ["UP (1)"],
}
for app, groups in want.items():
    got = p.apps.get(app)
    if got is None:
        bad.append("application %r not listed" % app)
    elif got != groups:
        bad.append("application %r: groups %r, want %r" % (app, got, groups))
if sorted(p.apps) != sorted(want):
    bad.append("applications listed: %r" % sorted(p.apps))
for (app, g), cls in p.group_cls.items():
    up = g.startswith("UP ")
    if up != ("st-up" in (cls or "")):
        bad.append("%s %s highlighted wrongly (%r)" % (app, g, cls))

# The payloads are shown, as text.
for text in ("<script>document.title='PWNED'", "<img id=xssmeta",
             "<xssid>'\"", "<XSSAPP>\"&AMP;", "<b>zone1</b> (1)"):
    esc = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if esc not in dom:
        bad.append("payload %r not shown as text" % text)
# Instance details: lease timestamps, override, metadata.
for text in ("<caption>Metadata</caption>", "<th>Last renewal</th>",
             "<th>Override in force</th>", "<th>Overridden status</th>"):
    if text not in dom:
        bad.append("instance detail %r missing" % text)
# The charts: inline SVG drawn by app.js from history.json, with points.
charts = re.findall(r'<svg[^>]*class="chart"[^>]*data-samples="(\d+)"', dom)
if len(charts) != 3:
    bad.append("%d charts drawn, want 3 (activity, peer lag, peer queue)" % len(charts))
elif min(int(n) for n in charts) < 1:
    bad.append("a chart without samples: %r" % charts)
for series in ("renewals", "registrations", "cancels", "threshold"):
    m = re.search(r'<polyline[^>]*points="([^"]*)"[^>]*data-series="%s"' % series, dom)
    if m is None or not m.group(1).strip():
        bad.append("chart series %r not drawn" % series)
if 'data-series="http://127.0.0.1:1/eureka/"' not in dom:
    bad.append("peer series missing (or not scrubbed)")
if "EMERGENCY! EUREKA MAY BE INCORRECTLY CLAIMING INSTANCES ARE UP" not in dom:
    bad.append("self-preservation EMERGENCY banner missing (renews 0 <= threshold)")
for b in bad:
    print("dom:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

hk_log "a registration after the page loaded arrives by the watch stream"
# refresh=3600: the feed is not read again for an hour once the stream is
# open, so the new row can only come from a watch event.
wstat() { hk_curl -s "${U}heureka/watch/stats" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["watchers"])'; }
assert_eq 0 "$(wstat)" "no watcher before the page"
# cdp.py keeps the page open (real time) until the row shows, at most 10 s.
"$HK_PYTHON" "$(dirname "$0")/cdp.py" "$CHROMIUM" "$R/?refresh=3600" \
    "document.querySelector('tr.app[data-app=\"LATECOMER\"]')" 10 \
    >"$HK_ROOT/dom-watch.html" 2>>"$HK_ROOT/chromium.log" &
CHROME_PID=$!
watching() { test "$(wstat)" = 1; }
wait_until 10 watching
hk_register "$U" LATECOMER late1
wait "$CHROME_PID" || fail "LATECOMER not on the page within 10 s of its registration"
"$HK_PYTHON" - "$HK_ROOT/dom-watch.html" <<'EOF' || fail "watch-driven DOM (see above)"
import re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
bad = []
if '<tr class="app" data-app="LATECOMER"' not in dom:
    bad.append("LATECOMER row not shown")
m = re.search(r'<body[^>]*data-watch-events="(\d+)"', dom)
if m is None or int(m.group(1)) < 1:
    bad.append("no watch event applied to the page")
if not re.search(r'<body[^>]*data-watch="on"', dom):
    bad.append("watch stream not open")
for b in bad:
    print("dom:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
cp "$HK_ROOT/dom-watch.html" "$ARTIFACTS/dashboard-dom-watch.html"

hk_log "screenshots"
chrome --timeout=4000 --hide-scrollbars --window-size=1280,900 \
    --screenshot="$ARTIFACTS/dashboard.png" "$R/" >/dev/null ||
    fail "chromium --screenshot failed"
[ -s "$ARTIFACTS/dashboard.png" ] || fail "no screenshot written"
chrome --timeout=4000 --hide-scrollbars --window-size=390,844 \
    --screenshot="$ARTIFACTS/dashboard-phone.png" "$R/" >/dev/null ||
    fail "chromium --screenshot (phone) failed"
chrome --timeout=4000 --hide-scrollbars --window-size=1280,2600 \
    --screenshot="$ARTIFACTS/dashboard-full.png" "$R/" >/dev/null ||
    fail "chromium --screenshot (full) failed"
chrome --timeout=2000 --window-size=1280,900 \
    --screenshot="$ARTIFACTS/lastn.png" "$R/lastn" >/dev/null ||
    fail "chromium --screenshot (lastn) failed"
hk_log "screenshots in $ARTIFACTS"

hk_log "self-preservation off: no EMERGENCY banner, the 'turned off' one"
hk_start q -D eureka.server.enable-self-preservation=false \
    --peers "http://127.0.0.1:1/eureka/" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
hk_register "$HK_URL_q" ALPHA a1
dump_dom "http://127.0.0.1:$HK_PORT_q/" >"$HK_ROOT/dom2.html" ||
    fail "chromium --dump-dom failed"
DOM2=$(cat "$HK_ROOT/dom2.html")
assert_not_contains "EMERGENCY!" "$DOM2" "EMERGENCY banner with self-preservation off"
assert_contains "SELF PRESERVATION MODE IS TURNED OFF" "$DOM2" "self-preservation off banner"
assert_contains '<b>UP (1)</b>' "$DOM2" "ALPHA on the second server"

hk_log "empty /lastn"
assert_http 200 GET "http://127.0.0.1:$HK_PORT_q/lastn"
assert_contains "No results available" "$(cat "$HK_BODY")" "no cancelled leases yet"
exit 0

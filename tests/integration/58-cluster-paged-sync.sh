#!/bin/sh
# 58-cluster-paged-sync.sh: a new node syncs from a registry larger than
# one page (eureka.server.sync-page-bytes set tiny), page after page, and
# ends up holding exactly the same; then anti-entropy repairs one
# divergent application by pulling only its digest bucket, not the
# others (counted in heureka/stats). A has no peers, so it replicates to
# nobody: only B's sync and B's anti-entropy can bring B anything. Last,
# a node whose only peer is a Java server (404 to heureka/*) still syncs
# with one GET apps/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

set -- $(cl_ports 2)
PA=$1 PB=$2
PAGE="-D eureka.server.sync-page-bytes=1024"
cl_start A "$PA" "http://127.0.0.1:$PA/eureka/" $PAGE
A=$HK_URL_A
NAPPS=12 PER=10
for i in $(seq 1 $NAPPS); do
	cl_bulk "$A" register "SVC$i" "s$i" $PER
done
TOTAL=$((NAPPS * PER))

hk_log "A serves bounded pages; without 'after' the whole registry"
hk_curl -D "$HK_ROOT/h1" -o "$HK_ROOT/page1.json" "${A}heureka/apps?after=" ||
    fail "GET heureka/apps?after="
HK_HEADERS=$HK_ROOT/h1
assert_eq more "$(hk_header X-Heureka-Page)" "first page's X-Heureka-Page"
next=$(hk_header X-Heureka-Next)
case "$next" in after=SVC*\&id=s*) ;; *) fail "X-Heureka-Next: '$next'" ;; esac
size=$(wc -c <"$HK_ROOT/page1.json")
# The bound, passed by at most one instance (~700 bytes here).
[ "$size" -le 2048 ] || fail "first page is $size bytes, bound 1024"
n=$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])' "$HK_ROOT/page1.json")
[ "$n" -ge 1 ] && [ "$n" -lt "$TOTAL" ] || fail "first page holds $n instances"
hk_curl -o "$HK_ROOT/whole.json" "${A}heureka/apps" || fail "GET heureka/apps"
assert_eq "$TOTAL" "$(hk_json 'sum(len(a["instance"]) for a in d["applications"]["application"])' "$HK_ROOT/whole.json")" "whole registry"
assert_refused A 400 GET "${A}heureka/apps?after=&buckets=xyz"

hk_log "B starts empty and syncs from A page by page"
cl_start B "$PB" "http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/"
B=$HK_URL_B
wait_until 20 hk_eq true cl_stats "$B" 'str(d["ready"]).lower()'
assert_eq "$TOTAL" "$(cl_stats "$B" 'str(d["syncCount"])')" "instances B copied"
pages=$(cl_peer "$B" "$PA" "p['syncPages']")
[ "$pages" -ge 10 ] || fail "B's sync took $pages page(s), want many"
wait_until 5 cl_same "$A" "$B"
echo "MEASURE paged sync: $TOTAL instances in $pages pages of <= 1024 bytes" >&2

hk_log "A and B agree: anti-entropy rounds pull nothing"
r0=$(cl_peer "$B" "$PA" "p['antiEntropy']['rounds']")
wait_until 10 hk_ge $((r0 + 3)) cl_peer "$B" "$PA" "p['antiEntropy']['rounds']"
assert_eq 0 "$(cl_peer "$B" "$PA" "p['antiEntropy']['pulls']")" "pulls while equal"

hk_log "one application diverges on A: B pulls its bucket only"
hk_register "$A" SVC5 late-1
wait_until 10 cl_has "$B" SVC5 late-1
wait_until 5 cl_same "$A" "$B"
assert_eq 1 "$(cl_peer "$B" "$PA" "p['antiEntropy']['pulls']")" "pulls"
assert_eq 1 "$(cl_peer "$B" "$PA" "p['antiEntropy']['buckets']")" "buckets pulled"
pages=$(cl_peer "$B" "$PA" "p['antiEntropy']['pages']")
inst=$(cl_peer "$B" "$PA" "p['antiEntropy']['instances']")
# SVC5's bucket: SVC5 itself and whatever else hashes there (the names
# are fixed, so this is the same on every run): far from all twelve.
[ "$inst" -ge $((PER + 1)) ] && [ "$inst" -le $((3 * PER + 1)) ] ||
    fail "pulled $inst instance(s) of $((TOTAL + 1))"
echo "MEASURE anti-entropy repair: $inst instance(s) pulled of $((TOTAL + 1)), $pages page(s)" >&2

hk_log "a Java peer (404 to heureka/*): C syncs with one GET apps/"
hk_curl -H 'Accept: application/json' -o "$HK_ROOT/java-apps.json" "${A}apps" ||
    fail "GET ${A}apps"
"$HK_PYTHON" - "$HK_ROOT/java-apps.json" "$HK_ROOT/java.port" \
    "$HK_ROOT/java.log" <<'PY' &
import http.server, sys
body = open(sys.argv[1], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive, as Java's servers
    def do_GET(self):
        with open(sys.argv[3], "a") as f:
            f.write(self.path + "\n")
        if self.path.split("?")[0] in ("/eureka/apps/", "/eureka/apps"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
    do_POST = do_GET
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()
PY
hk_own $!
wait_until 5 test -s "$HK_ROOT/java.port"
PJ=$(cat "$HK_ROOT/java.port")
set -- $(cl_ports 1)
PC=$1
cl_start C "$PC" "http://127.0.0.1:$PJ/eureka/,http://127.0.0.1:$PC/eureka/"
C=$HK_URL_C
wait_until 20 hk_eq true cl_stats "$C" 'str(d["ready"]).lower()'
assert_eq $((TOTAL + 1)) "$(cl_stats "$C" 'str(d["syncCount"])')" "instances C copied"
assert_eq 1 "$(grep -c '^/eureka/apps/$' "$HK_ROOT/java.log")" "GET apps/ to the Java peer"
grep -q '^/eureka/heureka/apps?after=$' "$HK_ROOT/java.log" ||
    fail "C did not ask the Java peer for a page first"
wait_until 5 cl_same "$A" "$C"

hk_stop C
hk_stop B
hk_stop A

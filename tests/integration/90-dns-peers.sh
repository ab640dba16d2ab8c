#!/bin/sh
# 90-dns-peers.sh: peers follow DNS (issue 24). One peer URL whose name
# (hk.test, answered by the tests' own DNS server, dnsstub.py) has several
# addresses means one peer per address, this node's own left out; nodes on
# 127.0.0.2, 127.0.0.3 and 127.0.0.4 share one port, so only the bind
# address tells them apart.
#  - a node added to the answer gets replication and takes part in
#    anti-entropy within one resolve interval plus a few seconds;
#  - a node removed from it is no longer sent to (its queue is dropped and
#    counted);
#  - a DNS server that never answers does not stall the loop (a heartbeat
#    prober sees no wait over 50 ms) and the name resolves once DNS answers
#    again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

INTERVAL=2000		# heureka.peer.resolve-interval-ms
dns=$(hk_tmp)
"$HK_PYTHON" "$(dirname "$0")/dnsstub.py" "$dns" &
hk_own $!
wait_until 5 test -s "$dns/port"
DNSPORT=$(cat "$dns/port")
names() { echo "hk.test $*" >"$dns/names.tmp"; mv "$dns/names.tmp" "$dns/names"; }
names 127.0.0.2 127.0.0.3

# One port free on all three addresses.
P=$("$HK_PYTHON" -c '
import socket
for _ in range(50):
    s = socket.socket(); s.bind(("127.0.0.2", 0)); p = s.getsockname()[1]
    ok = True
    for a in ("127.0.0.3", "127.0.0.4"):
        t = socket.socket()
        try:
            t.bind((a, p))
        except OSError:
            ok = False
        t.close()
    s.close()
    if ok:
        print(p); break')
[ -n "$P" ] || fail "no port free on 127.0.0.2-4"

node() {	# node NAME ADDR AE-INTERVAL-MS
	HK_BIND=$2 hk_start "$1" -p "$P" --peers "http://hk.test:$P/eureka/" \
	    -D heureka.dns.nameservers="127.0.0.1:$DNSPORT" \
	    -D heureka.peer.resolve-interval-ms=$INTERVAL \
	    -D eureka.server.anti-entropy-interval-ms="$3" \
	    -D eureka.server.wait-time-in-ms-when-sync-empty=0 \
	    -D eureka.server.enable-self-preservation=false
}
# The peers a node lists (their addresses, sorted).
peers_of() {
	cl_stats "$1" '" ".join(sorted(p["url"].split("(")[1].rstrip(")")
	    for p in d["peers"]))'
}
A=http://127.0.0.2:$P/eureka/
B=http://127.0.0.3:$P/eureka/
C=http://127.0.0.4:$P/eureka/

node A 127.0.0.2 1000
node B 127.0.0.3 0
wait_until 10 hk_eq 127.0.0.3 peers_of "$A"
wait_until 10 hk_eq 127.0.0.2 peers_of "$B"
hk_register "$A" DNSAPP one
wait_until 10 cl_has "$B" DNSAPP one

# C starts with the answer still .2 and .3: it syncs from both at start.
node C 127.0.0.4 0
wait_until 10 hk_eq "127.0.0.2 127.0.0.3" peers_of "$C"
wait_until 10 cl_has "$C" DNSAPP one

# C joins the answer: A and B take it as a peer on their next lookup.
t0=$(cl_now_ms)
names 127.0.0.2 127.0.0.3 127.0.0.4
wait_until $((INTERVAL / 1000 + 5)) hk_eq "127.0.0.3 127.0.0.4" peers_of "$A"
t1=$(cl_now_ms)
hk_register "$A" DNSAPP two
wait_until 5 cl_has "$C" DNSAPP two
t2=$(cl_now_ms)
# Anti-entropy with the new peer at once, not an interval later.
wait_until 5 hk_ge 1 cl_stats "$A" '[p["antiEntropy"]["rounds"]
    for p in d["peers"] if "127.0.0.4" in p["url"]][0]'
t3=$(cl_now_ms)
wait_until $((INTERVAL / 1000 + 5)) hk_eq "127.0.0.2 127.0.0.4" peers_of "$B"
hk_log "joined: A listed C $((t1 - t0)) ms after the DNS change," \
    "C had A's next registration $((t2 - t0)) ms after it," \
    "A's first digest round with C $((t3 - t0)) ms after it"
metric() {	# metric BASE NAME
	hk_curl "${1%/eureka/}/metrics" | awk -v k="$2" '$1 == k { print $2 }'
}
assert_eq 2 "$(metric "$A" heureka_peers_joined_total)" "A saw B, then C join"

# B leaves the answer: A stops sending to it; C still gets everything.
t0=$(cl_now_ms)
names 127.0.0.2 127.0.0.4
wait_until $((INTERVAL / 1000 + 5)) hk_eq 127.0.0.4 peers_of "$A"
t1=$(cl_now_ms)
hk_register "$A" DNSAPP three
wait_until 5 cl_has "$C" DNSAPP three
hk_log "left: A dropped B $((t1 - t0)) ms after the DNS change"
# B (anti-entropy off) would have had it by now had A still sent to it.
sleep 1
cl_has "$B" DNSAPP three && fail "A still replicates to B after it left"
assert_eq 1 "$(metric "$A" heureka_peers_left_total)" \
    "A counts one peer that left"

# DNS stops answering. Lookups time out in the background; heartbeats to
# A meanwhile must never wait on them.
touch "$dns/mute"
names 127.0.0.2 127.0.0.3 127.0.0.4
# Loop-lateness samples of A over 1 s so far (the lag histogram).
late() {
	hk_curl "${A%/eureka/}/metrics" | awk '
	    $1 == "heureka_loop_lag_seconds_bucket{le=\"1\"}" { a = $2 }
	    $1 == "heureka_loop_lag_seconds_bucket{le=\"+Inf\"}" { b = $2 }
	    END { print b - a }'
}
probe() {	# probe OUT: 8 s of heartbeats to A, "count median max" ms
	"$HK_PYTHON" - "$A" >"$1" <<'EOF'
import http.client, sys, time, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
waits = []
end = time.monotonic() + 8
while time.monotonic() < end:
    t = time.monotonic()
    c.request("PUT", u.path + "apps/DNSAPP/one")
    r = c.getresponse(); r.read()
    waits.append((time.monotonic() - t) * 1000)
    time.sleep(0.01)
waits.sort()
print("%d %.1f %.1f" % (len(waits), waits[len(waits) // 2], waits[-1]))
EOF
}
n0=$(grep -c muted "$dns/queries" || true)
l0=$(late)
probe "$HK_ROOT/prober.out"
read -r nprobe p50 pmax <"$HK_ROOT/prober.out"
n1=$(grep -c muted "$dns/queries" || true)
[ "$n1" -gt "$n0" ] || fail "no lookup went to the silent DNS server"
hk_log "silent DNS: $((n1 - n0)) unanswered queries; $nprobe heartbeats," \
    "median ${p50} ms, longest ${pmax} ms"
if ! "$HK_PYTHON" -c "import sys; sys.exit(not $pmax < 50)"; then
	# A shared machine can hold any process for longer than that. A
	# lookup on the loop would hold it for the resolver's timeout (5 s
	# by default, never under 1 s) on every lookup: once more, and the
	# loop's own lateness probe must show no stall of 1 s or more.
	probe "$HK_ROOT/prober.out"
	read -r nprobe p50 pmax <"$HK_ROOT/prober.out"
	hk_log "again: $nprobe heartbeats, median ${p50} ms, longest ${pmax} ms"
	if ! "$HK_PYTHON" -c "import sys; sys.exit(not $pmax < 50)"; then
		[ "$(late)" = "$l0" ] ||
		    fail "A's loop ran 1 s or more late while DNS was silent"
		hk_log "longest waits over 50 ms twice, but the loop never" \
		    "ran 1 s late: the machine, not a lookup"
	fi
fi
assert_eq "127.0.0.4" "$(peers_of "$A")" "A keeps its peers while DNS is silent"

# DNS answers again: the name resolves on the next retry.
t0=$(cl_now_ms)
rm -f "$dns/mute"
wait_until $((INTERVAL / 1000 + 10)) hk_eq "127.0.0.3 127.0.0.4" peers_of "$A"
t1=$(cl_now_ms)
hk_log "DNS back: A listed B again $((t1 - t0)) ms later"
hk_register "$A" DNSAPP four
wait_until 5 cl_has "$B" DNSAPP four
hk_stop A
hk_stop B
hk_stop C

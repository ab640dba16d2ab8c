#!/bin/sh
# 94-dns.sh: heureka's DNS interface (issue 26, docs/dns-consul.md) asked
# by dig (Debian's dnsutils): A, AAAA and SRV of <app>.service.heureka
# (case-insensitive, the SRV targets' addresses in the additional
# section), leader.<app>.service, <vip>.vip and the _<app>._tcp form;
# NXDOMAIN for an unknown application, NODATA for one with nothing UP,
# REFUSED outside the zone; a UDP answer truncated (TC) past 512 bytes
# and whole over TCP and with EDNS0; registry changes (cancel, status)
# in the very next answer; malformed datagrams answered FORMERR or
# dropped and a silent TCP client closed at its idle deadline, the
# server answering throughout.
. "$(dirname "$0")/lib.sh"

command -v dig >/dev/null 2>&1 || fail "dig is missing (Debian: dnsutils)"

hk_start S -D heureka.dns.enabled=true -D heureka.dns.port=0 \
    -D heureka.dns.tcp-idle-ms=1000
DNS=$(sed -n 's/.*DNS listening on [^ ]*:\([0-9][0-9]*\) .*/\1/p' \
    "$HK_ROOT/S.log" | tail -n 1)
[ -n "$DNS" ] || fail "no DNS port in the log"
hk_log "DNS on port $DNS"

# dig against the server: bounded, one try.
q()
{
	dig -p "$DNS" @127.0.0.1 +time=3 +tries=1 "$@"
}

# The sorted short answer of q ARGS..., on one line.
short()
{
	q +short "$@" | sort | tr '\n' ' ' | sed 's/ $//'
}

# The status (NOERROR, NXDOMAIN, ...) of q ARGS...
status()
{
	q "$@" | sed -n 's/.*status: \([A-Z]*\),.*/\1/p'
}

# The answer count of q ARGS...
answers()
{
	q "$@" | sed -n 's/.*ANSWER: \([0-9]*\),.*/\1/p'
}

# Register APP/ID at IP (STATUS, default UP), VIP vip-APP, port PORT.
reg()
{
	local app=$1 id=$2 ip=$3 status=${4:-UP} port=${5:-8080}
	assert_http 204 POST "${HK_URL_S}apps/$app" \
	    -H 'Content-Type: application/json' --data-binary \
	    "{\"instance\":{\"instanceId\":\"$id\",\"hostName\":\"$id.example\",
\"app\":\"$app\",\"ipAddr\":\"$ip\",\"status\":\"$status\",
\"port\":{\"\$\":$port,\"@enabled\":\"true\"},
\"securePort\":{\"\$\":8443,\"@enabled\":\"false\"},
\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.InstanceInfo\$DefaultDataCenterInfo\",\"name\":\"MyOwn\"},
\"vipAddress\":\"vip-$(echo "$app" | tr '[:upper:]' '[:lower:]')\"}}"
}

hk_log "A, AAAA, SRV of an application"
reg WEB web-1 10.0.0.1 UP 8080
reg WEB web-2 10.0.0.2 UP 8081
reg WEB web-3 fd00::3 UP 8082
reg WEB web-4 10.0.0.4 DOWN 8083
assert_eq "10.0.0.1 10.0.0.2" "$(short web.service.heureka A)" "A"
assert_eq "10.0.0.1 10.0.0.2" "$(short WeB.Service.Heureka. A)" \
    "A, name in another case"
assert_eq "fd00::3" "$(short web.service.heureka AAAA)" "AAAA"
assert_eq "1 1 8080 web-1.example. 1 1 8081 web-2.example. 1 1 8082 web-3.example." \
    "$(short web.service.heureka SRV)" "SRV"
assert_eq "$(short web.service.heureka SRV)" \
    "$(short _web._tcp.service.heureka SRV)" "SRV, RFC 2782 form"
add=$(q +noall +additional web.service.heureka SRV | awk '$4 == "A" || $4 == "AAAA" { print $1, $5 }' | sort | tr '\n' ' ')
assert_eq "web-1.example. 10.0.0.1 web-2.example. 10.0.0.2 web-3.example. fd00::3 " \
    "$add" "SRV additional section"
q web.service.heureka A | grep -q 'flags: qr aa' || fail "not authoritative"
ttl=$(q +noall +answer web.service.heureka A | awk '{ print $2 }' | sort -u)
assert_eq 5 "$ttl" "TTL (heureka.dns.ttl)"

hk_log "leader, VIP"
assert_eq "10.0.0.1" "$(short leader.web.service.heureka A)" "leader"
assert_eq "1 1 8080 web-1.example." "$(short leader.web.service.heureka SRV)" \
    "leader SRV"
assert_eq "10.0.0.1 10.0.0.2" "$(short vip-web.vip.heureka A)" "VIP"

hk_log "NXDOMAIN, NODATA, REFUSED"
reg IDLE idle-1 10.0.1.1 DOWN
assert_eq NXDOMAIN "$(status nope.service.heureka A)" "unknown application"
assert_eq NXDOMAIN "$(status nope.vip.heureka A)" "unknown VIP"
assert_eq NXDOMAIN "$(status what.heureka A)" "unknown name in the zone"
assert_eq NOERROR "$(status idle.service.heureka A)" "nothing UP: NODATA"
assert_eq 0 "$(answers idle.service.heureka A)" "nothing UP: no answer"
assert_eq NOERROR "$(status web.service.heureka TXT)" "other type: NODATA"
assert_eq 0 "$(answers web.service.heureka TXT)" "other type: no answer"
assert_eq REFUSED "$(status example.com A)" "outside the zone"
assert_eq REFUSED "$(status heureka.example A)" "outside the zone, suffix"

hk_log "truncation at 512 bytes, the whole answer over TCP and EDNS0"
i=1
while [ "$i" -le 40 ]; do
	reg BIG "big-$i" "10.1.0.$i"
	i=$((i + 1))
done
out=$(q +noedns +ignore big.service.heureka A)
echo "$out" | grep -q 'flags: qr aa tc' || fail "no TC on a cut answer: $out"
n=$(echo "$out" | sed -n 's/.*ANSWER: \([0-9]*\),.*/\1/p')
[ "$n" -gt 0 ] && [ "$n" -lt 40 ] || fail "UDP answer of $n records"
size=$(echo "$out" | sed -n 's/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p')
[ "$size" -le 512 ] || fail "UDP answer of $size bytes"
hk_log "UDP: $n of 40 records in $size bytes, TC set"
assert_eq 40 "$(answers +tcp big.service.heureka A)" "TCP answer"
q +tcp big.service.heureka A | grep -q 'flags: qr aa tc' && fail "TC over TCP"
assert_eq 40 "$(q +short +noedns big.service.heureka A | wc -l)" \
    "dig retries over TCP after TC"
assert_eq 40 "$(answers +bufsize=4096 +ignore big.service.heureka A)" \
    "EDNS0 4096"
out=$(q +noedns +ignore big.service.heureka SRV)
echo "$out" | grep -q 'flags: qr aa tc' || fail "no TC on a cut SRV answer"
assert_eq 40 "$(answers +tcp big.service.heureka SRV)" "TCP SRV answer"
a=$(q +noall +answer big.service.heureka A | awk '{ print $5 }' | head -n 5 | tr '\n' ' ')
b=$(q +noall +answer big.service.heureka A | awk '{ print $5 }' | head -n 5 | tr '\n' ' ')
c=$(q +noall +answer big.service.heureka A | awk '{ print $5 }' | head -n 5 | tr '\n' ' ')
[ "$a" != "$b" ] || [ "$b" != "$c" ] || fail "three answers in one order: not shuffled"

hk_log "registry changes in the next answer"
assert_http 200 DELETE "${HK_URL_S}apps/WEB/web-2"
assert_eq "10.0.0.1" "$(short web.service.heureka A)" "after a cancel"
assert_http 200 PUT "${HK_URL_S}apps/WEB/web-1/status?value=OUT_OF_SERVICE"
assert_eq "" "$(short web.service.heureka A)" "after OUT_OF_SERVICE"
assert_eq NOERROR "$(status web.service.heureka A)" "still known"
assert_eq "fd00::3" "$(short leader.web.service.heureka AAAA)" "next leader"
assert_http 200 DELETE "${HK_URL_S}apps/WEB/web-1/status?value=UP"
assert_eq "10.0.0.1" "$(short web.service.heureka A)" "back UP"
reg WEB web-5 10.0.0.5
assert_eq "10.0.0.1 10.0.0.5" "$(short web.service.heureka A)" "new instance"

hk_log "malformed queries: FORMERR or dropped, never a stall"
"$HK_PYTHON" - "$DNS" <<'EOF'
import socket, struct, sys, time
port = int(sys.argv[1])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
def ask(pkt):
    u.sendto(pkt, ("127.0.0.1", port))
    try:
        return u.recv(65535)
    except socket.timeout:
        return None
hdr = lambda flags, qd, an, ar: struct.pack(">HHHHHH", 0xbeef, flags, qd, an, 0, ar)
name = b"\x03web\x07service\x07heureka\x00"
cases = {
    "two questions": hdr(0, 2, 0, 0) + name + b"\x00\x01\x00\x01",
    "a pointer in the question": hdr(0, 1, 0, 0) + b"\xc0\x0c\x00\x01\x00\x01",
    "a label past the end": hdr(0, 1, 0, 0) + b"\x3fweb",
    "no type": hdr(0, 1, 0, 0) + name,
    "two OPT": hdr(0, 1, 0, 2) + name + b"\x00\x01\x00\x01" +
        2 * (b"\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00"),
    "an answer record in a query": hdr(0, 1, 1, 0) + name + b"\x00\x01\x00\x01",
}
for what, pkt in cases.items():
    r = ask(pkt)
    assert r is not None and len(r) >= 12, what
    assert r[:2] == b"\xbe\xef" and r[2] & 0x80 and (r[3] & 0x0f) == 1, \
        (what, r[:4])
r = ask(hdr(0x2800, 1, 0, 0) + name + b"\x00\x01\x00\x01")
assert r is not None and (r[3] & 0x0f) == 4, "UPDATE opcode: NOTIMP"
# Dropped: a response, a stub; then a good query is answered.
u.sendto(hdr(0x8000, 1, 0, 0) + name + b"\x00\x01\x00\x01", ("127.0.0.1", port))
u.sendto(b"\x01", ("127.0.0.1", port))
r = ask(hdr(0x0100, 1, 0, 0) + name + b"\x00\x01\x00\x01")
assert r is not None and r[:2] == b"\xbe\xef" and (r[3] & 0x0f) == 0, r
# TCP: a client that sends half a frame and stalls is closed at its idle
# deadline (1 s here); a client that sends a length and closes is fine.
t = socket.create_connection(("127.0.0.1", port), timeout=10)
t.sendall(b"\x00\x40\x12")
t0 = time.monotonic()
assert t.recv(10) == b"", "stalled TCP client not closed"
took = time.monotonic() - t0
assert took < 8, took
t = socket.create_connection(("127.0.0.1", port), timeout=5)
t.sendall(b"\x00\x05")
t.close()
# Two pipelined queries on one TCP connection, both answered.
t = socket.create_connection(("127.0.0.1", port), timeout=5)
q = hdr(0, 1, 0, 0) + name + b"\x00\x01\x00\x01"
t.sendall(2 * (struct.pack(">H", len(q)) + q))
got = b""
while got.count(b"\xbe\xef") < 2 and len(got) < 4096:
    b = t.recv(4096)
    if not b:
        break
    got += b
assert got.count(b"\xbe\xef") >= 2, got
print("malformed: ok (stalled TCP client closed after %.1f s)" % took)
EOF
[ $? -eq 0 ] || fail "malformed queries"
assert_eq "10.0.0.1 10.0.0.5" "$(short web.service.heureka A)" \
    "answers after the malformed ones"
assert_http 200 GET "${HK_URL_S}apps" -H 'Accept: application/json'

hk_log "DNS off by default"
hk_start OFF
grep -q "DNS listening" "$HK_ROOT/OFF.log" && fail "DNS on by default"
hk_stop OFF
hk_stop S
hk_log "ok"

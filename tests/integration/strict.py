#!/usr/bin/python3
# strict.py: raw-socket probes of heurekad's HTTP and codec strictness
# (used by 48-http-strict.sh and 49-codec-strict.sh). Python 3 standard
# library only. Each case sends bytes exactly as written (no client library
# tidies them up) and checks the answer; every failure is printed, and the
# exit status is the number of failed cases.
#
# Usage: strict.py --port PORT --pid PID [--asan] [--tls-ca CA] http|codec|tls

import argparse
import json
import select
import socket
import sys
import time

import hkfixture

FAILS = []
PENDING = {}


def fail(name, msg):
    FAILS.append(name)
    print("FAIL %s: %s" % (name, msg), flush=True)


def ok(name, msg=""):
    print("ok   %s %s" % (name, msg), flush=True)


TLS_CA = None


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if TLS_CA is not None:
        import ssl
        ctx = ssl.create_default_context(cafile=TLS_CA)
        s = ctx.wrap_socket(s, server_hostname="localhost")
    return s


def read_response(s, timeout=5.0):
    """One response: (status, {lower-case header: value}, body); status
    None when the connection closed or timed out without one. Bytes past
    the response (pipelined answers) are kept for the next call."""
    s.settimeout(timeout)
    data = PENDING.pop(s, b"")
    deadline = time.time() + timeout

    def more():
        if time.time() > deadline:
            return b""
        try:
            return s.recv(65536)
        except (socket.timeout, ConnectionError):
            return b""

    while b"\r\n\r\n" not in data:
        chunk = more()
        if not chunk:
            return None, {}, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ")[1])
    except (IndexError, ValueError):
        return None, {}, data
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdrs.setdefault(k.strip().lower(), v.strip())
    want = 0 if status in (100, 204) else int(hdrs.get("content-length",
                                                        "0"))
    while len(body) < want:
        chunk = more()
        if not chunk:
            break
        body += chunk
    if len(body) > want:
        PENDING[s] = body[want:]
    return status, hdrs, body[:want]


def exchange(port, raw, timeout=5.0):
    s = connect(port)
    try:
        s.sendall(raw)
        return read_response(s, timeout)
    finally:
        s.close()


def instance(app, iid, **over):
    return {"instance": hkfixture.instance(
        app, iid, overridden=None, metadata={"k": "v"},
        dirty=1700000000000, **over)}


def post(path, body, extra=b"", ctype=b"application/json"):
    if isinstance(body, str):
        body = body.encode()
    return (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: t\r\n"
            b"Content-Type: " + ctype + b"\r\nContent-Length: " +
            str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body)


def get(port, path):
    return exchange(port, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: t\r\n"
                    b"Accept: application/json\r\n\r\n")


def registry(port):
    st, _, body = get(port, "/eureka/apps")
    if st != 200:
        return None
    d = json.loads(body)["applications"]
    out = []
    for a in d["application"]:
        for i in a["instance"]:
            out.append((a["name"], i.get("instanceId"), i["status"],
                        i.get("lastDirtyTimestamp")))
    return sorted(out)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def expect(name, got, codes, reason=True):
    st, hdrs, body = got
    if st not in codes:
        fail(name, "want %s, got %s %r" % (codes, st, body[:200]))
        return False
    if reason and st >= 400 and not body.strip():
        fail(name, "%d without a reason" % st)
        return False
    ok(name, "%d %s" % (st, body.strip()[:100].decode("utf-8", "replace")))
    return True


def unchanged(name, port, before):
    after = registry(port)
    if after != before:
        fail(name, "registry changed: %r -> %r" % (before, after))


# --- HTTP -----------------------------------------------------------------

def http_cases(port, pid, asan):
    base = "/eureka/apps/"
    st = exchange(port, post(base + "STRICT",
                             json.dumps(instance("STRICT", "s1"))))
    expect("setup register", st, {204})
    before = registry(port)

    # Two different Content-Length headers: which one frames the body is a
    # guess, and a guess is how requests get smuggled.
    body = json.dumps(instance("STRICT", "dup1")).encode()
    raw = (b"POST " + base.encode() + b"STRICT HTTP/1.1\r\nHost: t\r\n"
           b"Content-Type: application/json\r\nContent-Length: " +
           str(len(body)).encode() + b"\r\nContent-Length: " +
           str(len(body) + 1).encode() + b"\r\n\r\n" + body + b" ")
    expect("two different Content-Length", exchange(port, raw), {400})
    unchanged("two different Content-Length", port, before)

    body = json.dumps(instance("STRICT", "plus1")).encode()
    raw = (b"POST " + base.encode() + b"STRICT HTTP/1.1\r\nHost: t\r\n"
           b"Content-Type: application/json\r\nContent-Length: +" +
           str(len(body)).encode() + b"\r\n\r\n" + body)
    expect("Content-Length: +N", exchange(port, raw), {400})
    unchanged("Content-Length: +N", port, before)

    # "true\0" must not count as the replication flag: a replicated
    # register would be accepted without being replicated further.
    body = json.dumps(instance("STRICT", "nul1")).encode()
    raw = post(base + "STRICT", body,
               b"x-netflix-discovery-replication: true\x00\r\n")
    expect("NUL in the replication header", exchange(port, raw), {400})
    unchanged("NUL in the replication header", port, before)
    raw = (b"PUT " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
           b"X-Test: a\x01b\r\n\r\n")
    expect("control character in a header", exchange(port, raw), {400})

    raw = (b"GET " + base.encode() + b" HTTP/1.1\r\nHost: t\r\n"
           b"X-Heureka-Guard: 200 forged\r\n\r\n")
    expect("reserved guard header", exchange(port, raw), {400})

    for m in (b"PATCH", b"OPTIONS"):
        raw = m + b" " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n\r\n"
        got = exchange(port, raw)
        if expect(m.decode() + " -> 405", got, {405}):
            allow = got[1].get("allow", "")
            want = {"GET", "HEAD", "PUT", "DELETE"}
            if set(a.strip() for a in allow.split(",")) != want:
                fail(m.decode() + " Allow", "Allow is %r" % allow)
            else:
                ok(m.decode() + " Allow", allow)
    got = exchange(port, b"DELETE " + base.encode() + b"STRICT HTTP/1.1\r\n"
                   b"Host: t\r\n\r\n")
    if expect("DELETE apps/{app} -> 405", got, {405}):
        allow = got[1].get("allow", "")
        if set(a.strip() for a in allow.split(",")) != {"GET", "HEAD", "POST"}:
            fail("DELETE apps/{app} Allow", "Allow is %r" % allow)
    unchanged("methods", port, before)

    # A heartbeat takes no body: refused when the head arrives, without
    # the server waiting for (or buffering) a single body byte.
    t0 = time.time()
    # (at most 1 KiB is read and ignored: the Netflix Jersey 3 client PUTs
    # "{}" with every heartbeat).
    raw = (b"PUT " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
           b"Content-Length: 1025\r\n\r\n")
    expect("heartbeat with a body over 1 KiB -> 413 at once",
           exchange(port, raw, 3), {413})
    raw = (b"PUT " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n401\r\n" + b"x" * 1025 +
           b"\r\n")
    expect("heartbeat with a chunked body over 1 KiB -> 413",
           exchange(port, raw, 3), {413}, reason=False)
    raw = (b"PUT " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
           b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    expect("heartbeat with the Java client's {} body -> 200",
           exchange(port, raw, 3), {200})
    # ... but an empty chunked body (some clients send one) is no body.
    raw = (b"PUT " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    expect("heartbeat with an empty chunked body -> 200",
           exchange(port, raw, 3), {200})
    raw = (b"DELETE " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
           b"Content-Length: 2000\r\n\r\n")
    expect("cancel with a body over 1 KiB -> 413", exchange(port, raw, 3),
           {413})
    unchanged("bodies on bodiless routes", port, before)
    raw = (b"POST " + base.encode() + b"STRICT HTTP/1.1\r\nHost: t\r\n"
           b"Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n")
    expect("register over max-body-bytes -> 413 at once",
           exchange(port, raw, 3), {413})
    raw = (b"POST /eureka/peerreplication/batch HTTP/1.1\r\nHost: t\r\n"
           b"Content-Type: application/json\r\nContent-Length: 200000\r\n"
           b"\r\n")
    expect("batch over max-batch-bytes -> 413 at once",
           exchange(port, raw, 3), {413})
    if time.time() - t0 > 5:
        fail("early answers", "took %.1f s" % (time.time() - t0))

    # Expect: 100-continue with a length over the cap: 413, never 100.
    s = connect(port)
    s.sendall(b"POST " + base.encode() + b"STRICT HTTP/1.1\r\nHost: t\r\n"
              b"Content-Type: application/json\r\nContent-Length: 70000\r\n"
              b"Expect: 100-continue\r\n\r\n")
    got = read_response(s, 3)
    s.close()
    expect("100-continue over the cap -> 413", got, {413})
    # ... and within it, 100 then the registration.
    body = json.dumps(instance("STRICT", "cont1")).encode()
    s = connect(port)
    s.sendall(b"POST " + base.encode() + b"STRICT HTTP/1.1\r\nHost: t\r\n"
              b"Content-Type: application/json\r\nContent-Length: " +
              str(len(body)).encode() + b"\r\nExpect: 100-continue\r\n\r\n")
    got = read_response(s, 3)
    if expect("100-continue within the cap -> 100", got, {100}):
        s.sendall(body)
        expect("100-continue register", read_response(s, 3), {204})
    s.close()
    exchange(port, b"DELETE " + base.encode() + b"STRICT/cont1 HTTP/1.1\r\n"
             b"Host: t\r\n\r\n")

    # Keep-alive and pipelining still work through the guard: a register,
    # a heartbeat and a read in one write, answered in order.
    body = json.dumps(instance("STRICT", "pipe1")).encode()
    raw = (post(base + "STRICT", body) +
           b"PUT " + base.encode() + b"STRICT/pipe1 HTTP/1.1\r\nHost: t\r\n"
           b"Content-Length: 0\r\n\r\n" +
           b"GET " + base.encode() + b"STRICT/pipe1 HTTP/1.1\r\nHost: t\r\n"
           b"Accept: application/json\r\n\r\n")
    s = connect(port)
    s.sendall(raw)
    codes = [read_response(s, 3)[0] for _ in range(3)]
    s.close()
    if codes != [204, 200, 200]:
        fail("pipelined requests", "got %r" % codes)
    else:
        ok("pipelined requests", repr(codes))
    # A chunked registration is framed and accepted.
    body = json.dumps(instance("STRICT", "chunk1")).encode()
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 100]),
                                         body[i:i + 100])
                       for i in range(0, len(body), 100)) + b"0\r\n\r\n"
    raw = (b"POST " + base.encode() + b"STRICT HTTP/1.1\r\nHost: t\r\n"
           b"Content-Type: application/json\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n" + chunked +
           b"GET " + base.encode() + b"STRICT/chunk1 HTTP/1.1\r\nHost: t\r\n"
           b"\r\n")
    s = connect(port)
    s.sendall(raw)
    codes = [read_response(s, 3)[0] for _ in range(2)]
    s.close()
    if codes != [204, 200]:
        fail("chunked register then a GET", "got %r" % codes)
    else:
        ok("chunked register then a GET", repr(codes))
    for iid in ("pipe1", "chunk1"):
        exchange(port, b"DELETE " + base.encode() + b"STRICT/" +
                 iid.encode() + b" HTTP/1.1\r\nHost: t\r\n\r\n")
    unchanged("keep-alive", port, before)

    # 100 connections each start an 8 MiB body to a heartbeat URL and stop
    # short of its end: refused at the head, nothing of it is buffered.
    rss0 = rss_kb(pid)
    conns = []
    for _ in range(100):
        c = connect(port)
        c.setblocking(False)
        c.send(b"PUT " + base.encode() + b"STRICT/s1 HTTP/1.1\r\nHost: t\r\n"
               b"Content-Length: 8388608\r\n\r\n")
        conns.append([c, 0])
    chunk = b"x" * 65536
    deadline = time.time() + 20
    while time.time() < deadline:
        live = [e for e in conns if e[1] is not None and
                e[1] < 8388608 - 65536]
        if not live:
            break
        _, w, _ = select.select([], [e[0] for e in live], [], 1)
        for e in live:
            if e[0] not in w:
                continue
            try:
                e[1] += e[0].send(chunk)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                e[1] = None          # refused and closed: as it should be
    rss1 = rss_kb(pid)
    sent = sum(e[1] for e in conns if e[1] is not None)
    for e in conns:
        e[0].close()
    growth = (rss1 - rss0) // 1024
    print("     rss %d -> %d KiB (+%d MiB) with 100 unfinished 8 MiB "
          "heartbeat bodies; %d MiB still being accepted" %
          (rss0, rss1, growth, sent // 1048576), flush=True)
    if asan:
        ok("unfinished bodies RSS", "not checked under ASan")
    elif growth > 64:
        fail("unfinished bodies RSS", "RSS grew by %d MiB" % growth)
    else:
        ok("unfinished bodies RSS", "+%d MiB" % growth)
    st = get(port, "/eureka/apps")
    expect("still serving", st, {200}, reason=False)
    unchanged("unfinished bodies", port, before)

    # Every refusal by a route's cap is counted in /metrics.
    st, _, body = exchange(port, b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
    counts = {}
    for line in body.decode("utf-8", "replace").splitlines():
        for lim in ("max-body-bytes", "max-batch-bytes"):
            if line.startswith('heureka_limit_rejections_total{limit="%s"}'
                               % lim):
                counts[lim] = float(line.split()[-1])
    # 5 bodies on bodiless routes or over the register cap (one chunked,
    # cut), 100 unfinished heartbeat bodies; 1 batch.
    if counts.get("max-body-bytes", 0) < 105 or \
            counts.get("max-batch-bytes", 0) < 1:
        fail("limits in /metrics", "counted %r" % counts)
    else:
        ok("limits in /metrics", repr(counts))


# --- over TLS -------------------------------------------------------------

def tls_cases(port, pid, asan):
    """The guard sees the decrypted stream: the same refusals over TLS."""
    base = "/eureka/apps/"
    st = exchange(port, post(base + "TLS", json.dumps(instance("TLS", "t1"))))
    expect("TLS register", st, {204})
    before = registry(port)
    raw = (b"PUT " + base.encode() + b"TLS/t1 HTTP/1.1\r\nHost: t\r\n"
           b"Content-Length: 2000\r\n\r\n")
    expect("TLS heartbeat with a body -> 413 at once", exchange(port, raw, 3),
           {413})
    raw = post(base + "TLS", json.dumps(instance("TLS", "t2")),
               b"x-netflix-discovery-replication: true\x00\r\n")
    expect("TLS NUL in the replication header", exchange(port, raw), {400})
    got = exchange(port, b"PATCH " + base.encode() + b"TLS/t1 HTTP/1.1\r\n"
                   b"Host: t\r\n\r\n")
    expect("TLS PATCH -> 405", got, {405})
    unchanged("TLS refusals", port, before)


# --- codecs ---------------------------------------------------------------

def codec_cases(port, pid, asan):
    base = "/eureka/apps/"
    st = exchange(port, post(base + "CODEC",
                             json.dumps(instance("CODEC", "c1"))))
    expect("setup register", st, {204})
    before = registry(port)

    def bad_json(name, doc):
        expect(name, exchange(port, post(base + "CODEC", doc)), {400})
        unchanged(name, port, before)

    def js(**over):
        return json.dumps(instance("CODEC", "c2", **over))

    bad_json("status as a number", js(status=1))
    bad_json("status as a boolean", js(status=True))
    bad_json("overriddenStatus as a number", js(overriddenStatus=0))
    bad_json("countryId as a word", js(countryId="one"))
    bad_json("port as a word", js(port={"$": "http", "@enabled": "true"}))
    bad_json("@enabled as a number", js(port={"$": 8080, "@enabled": 1}))
    bad_json("negative lastDirtyTimestamp", js(lastDirtyTimestamp="-5"))
    bad_json("negative lastUpdatedTimestamp", js(lastUpdatedTimestamp=-1))
    bad_json("huge lastDirtyTimestamp",
             js(lastDirtyTimestamp="99999999999999999999"))
    bad_json("lastDirtyTimestamp past year 9999",
             js(lastDirtyTimestamp=253402300800000))
    bad_json("negative lease timestamp",
             js(leaseInfo={"renewalIntervalInSecs": 30,
                           "registrationTimestamp": -7}))
    doc = js()
    bad_json("duplicate key in the instance",
             doc.replace('"status": "UP"',
                         '"status": "UP", "status": "DOWN"'))
    bad_json("duplicate metadata key",
             doc.replace('"metadata": {"k": "v"}',
                         '"metadata": {"k": "v", "k": "w"}'))
    bad_json("duplicate root key",
             '{"instance": %s, "instance": %s}' %
             (json.dumps(instance("CODEC", "c2")["instance"]),
              json.dumps(instance("CODEC", "c3")["instance"])))
    bad_json("lone high surrogate",
             doc.replace('"c2.example"', '"c2\\ud800.example"'))
    bad_json("lone low surrogate",
             doc.replace('"c2.example"', '"c2\\udc00.example"'))
    bad_json("high surrogate then a letter",
             doc.replace('"c2.example"', '"c2\\ud800\\u0041.example"'))
    # A real pair is fine.
    st = exchange(port, post(base + "CODEC", doc.replace(
        '"k": "v"', '"k": "\\ud83d\\ude00"')))
    expect("surrogate pair accepted", st, {204})
    exchange(port, b"DELETE " + base.encode() + b"CODEC/c2 HTTP/1.1\r\n"
             b"Host: t\r\n\r\n")

    def xml(status="UP", dirty="1700000000000", extra=""):
        return ("<instance><instanceId>c2</instanceId>"
                "<hostName>c2.example</hostName><app>CODEC</app>"
                "<ipAddr>10.0.0.1</ipAddr><status>%s</status>%s"
                "<port enabled=\"true\">8080</port>"
                "<dataCenterInfo class=\"com.netflix.appinfo."
                "InstanceInfo$DefaultDataCenterInfo\"><name>MyOwn</name>"
                "</dataCenterInfo><lastDirtyTimestamp>%s</lastDirtyTimestamp>"
                "</instance>" % (status, extra, dirty))

    def bad_xml(name, doc):
        expect(name, exchange(port, post(base + "CODEC", doc,
                                         ctype=b"application/xml")), {400})
        unchanged(name, port, before)

    bad_xml("XML negative lastDirtyTimestamp", xml(dirty="-1"))
    bad_xml("XML huge lastDirtyTimestamp", xml(dirty="99999999999999999999"))
    bad_xml("XML duplicate element", xml(extra="<status>DOWN</status>"))
    bad_xml("XML surrogate character reference",
            xml().replace("c2.example", "c2&#xD800;.example"))
    bad_xml("XML port as a word",
            xml().replace(">8080<", ">http<"))

    raw = (b"PUT " + base.encode() + b"CODEC/c1?lastDirtyTimestamp=-5 "
           b"HTTP/1.1\r\nHost: t\r\n\r\n")
    expect("heartbeat with a negative lastDirtyTimestamp",
           exchange(port, raw), {400})
    unchanged("heartbeat with a negative lastDirtyTimestamp", port, before)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--asan", action="store_true")
    ap.add_argument("--tls-ca", help="connect over TLS, trusting this CA")
    ap.add_argument("section", choices=("http", "codec", "tls"))
    a = ap.parse_args()
    global TLS_CA
    TLS_CA = a.tls_ca
    if a.section == "http":
        http_cases(a.port, a.pid, a.asan)
    elif a.section == "tls":
        tls_cases(a.port, a.pid, a.asan)
    else:
        codec_cases(a.port, a.pid, a.asan)
    if FAILS:
        print("%d case(s) failed: %s" % (len(FAILS), ", ".join(FAILS)))
    return min(len(FAILS), 100)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# stallfetch.py: client side of 63-fetch-slices.sh and 65-fetch-slices-
# other.sh (issue 13, "no stall").
# Prints one JSON line with what it saw.
#
#   stallfetch.py URL load NAPPS PER
#       replicate NAPPS applications of PER instances in peer batches of
#       250 (fast: one keep-alive connection).
#   stallfetch.py URL race PID ACCESSLOG PATH [HEADER:VALUE...]
#       have GET PATH (connection A) and three pipelined GET /health
#       (connection B) reach heurekad PID in the same loop turn, and print
#       the order its access log ACCESSLOG (heureka.log.access) gives their
#       answers in ("order", "health_first": the /health answers before
#       the fetch's), the fetch's status, time and the SHA-256 of its body.
#       Nothing in it depends on when the client or the server gets the
#       CPU: the server is stopped (SIGSTOP) while both requests are
#       written, until the kernel holds A's bytes and then B's in the
#       server's receive queues (/proc/net/tcp), and continued (SIGCONT);
#       its next epoll_wait reports both sockets. The fetch is read first.
#       evhttp answers pipelined requests one at a time: the next is
#       read only after the previous answer is written, and the write
#       and that read each take a later loop turn, so three /health
#       answers logged before the fetch's mean the loop turned at least
#       four more times while the fetch waited: its body was built in
#       slices (63, 65), not in one turn, neither the fetch's own (as
#       with HK_SLICE=0: "health_first" 0) nor the first after it.
#   stallfetch.py URL drop PATH [HEADER:VALUE...]
#       send GET PATH and close the connection without reading.
#   stallfetch.py URL hold PATH SECONDS [HEADER:VALUE...]
#       send GET PATH, keep the connection open SECONDS without reading.
#   stallfetch.py URL beat APP ID PATH [HEADER:VALUE...]
#       a heartbeat prober (a process of its own) renews APP/ID again and
#       again on its own connection while GET PATH is fetched once on
#       another; prints the fetch's status and time and the longest wait
#       for a heartbeat's answer while the fetch ran.
#   stallfetch.py URL churn FILE
#       register a new instance of CHURN every 20 ms (a peer's batch of
#       one, not rate limited) until FILE exists; prints how many.
import hashlib
import http.client
import json
import multiprocessing
import os
import signal
import socket
import sys
import time
import urllib.parse

import hkfixture

NHEALTH = 3


def instance(app, iid):
    return hkfixture.instance(app, iid)


def load(u, base, napps, per):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    items = []
    codes = {}

    def flush():
        c.request("POST", base + "peerreplication/batch",
                  json.dumps({"replicationList": items}),
                  {"Content-Type": "application/json",
                   "x-netflix-discovery-replication": "true"})
        r = c.getresponse()
        r.read()
        codes[str(r.status)] = codes.get(str(r.status), 0) + 1
        del items[:]

    for a in range(napps):
        app = "APP%05d" % a
        for i in range(per):
            inst = instance(app, "a%d-i%d" % (a, i))
            items.append({"appName": app, "id": inst["instanceId"],
                          "action": "Register",
                          "lastDirtyTimestamp": inst["lastDirtyTimestamp"],
                          "instanceInfo": inst})
            if len(items) == 250:
                flush()
    if items:
        flush()
    return {"codes": codes}


def request_bytes(u, path, headers):
    lines = ["GET %s HTTP/1.1" % path, "Host: %s:%d" % (u.hostname, u.port)]
    lines += headers
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(s, rest=None):
    """Read one HTTP/1.1 response with a Content-Length; (status, body).
    rest (a bytearray) carries bytes read past it over to the next call
    (pipelined answers)."""
    data = bytes(rest) if rest is not None else b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("connection closed in the head")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    parts, got = [body], len(body)
    while got < length:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise OSError("connection closed in the body")
        parts.append(chunk)
        got += len(chunk)
    body = b"".join(parts)
    if rest is not None:
        rest[:] = body[length:]
    elif len(body) > length:
        raise OSError("bytes past the response")
    return status, body[:length]


def server_state(pid):
    """The state letter of process pid ("T": stopped), from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def rx_queued(lport, rport):
    """Bytes waiting unread in the receive queue of the server's socket
    127.0.0.1:lport <- 127.0.0.1:rport (/proc/net/tcp); -1 if absent."""
    want_l, want_r = "0100007F:%04X" % lport, "0100007F:%04X" % rport
    with open("/proc/net/tcp") as f:
        for ln in f.readlines()[1:]:
            fl = ln.split()
            if fl[1] == want_l and fl[2] == want_r:
                return int(fl[4].split(":")[1], 16)
    return -1


def until(what, cond, secs=20):
    """Poll cond() until it holds; fail after secs (a bounded wait)."""
    deadline = time.monotonic() + secs
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit("stallfetch.py: timed out waiting for " + what)
        time.sleep(0.005)


def race(u, base, pid, alog, path, headers):
    """The fetch and NHEALTH /health requests reach the server in the same
    loop turn; its access log says which it answered first (see top)."""
    tag = "%d-%d" % (os.getpid(), time.monotonic_ns())
    target = base + path
    a = socket.create_connection((u.hostname, u.port), timeout=60)
    b = socket.create_connection((u.hostname, u.port), timeout=60)
    reqa = request_bytes(u, target, headers)
    reqb = b"".join(request_bytes(u, "/health?race=%s-%d" % (tag, i), [])
                    for i in range(NHEALTH))
    with open(alog, "rb") as f:
        off = f.seek(0, 2)
    os.kill(pid, signal.SIGSTOP)
    try:
        until("the server to stop", lambda: server_state(pid) == "T")
        a.sendall(reqa)
        until("the fetch in the server's receive queue",
              lambda: rx_queued(u.port, a.getsockname()[1]) == len(reqa))
        b.sendall(reqb)
        until("the /health requests in the server's receive queue",
              lambda: rx_queued(u.port, b.getsockname()[1]) == len(reqb))
    finally:
        os.kill(pid, signal.SIGCONT)
    t0 = time.monotonic()
    rest = bytearray()
    for i in range(NHEALTH):
        st, _ = read_response(b, rest)
        if st != 200:
            raise SystemExit("stallfetch.py race: /health answered %d" % st)
    st, body = read_response(a)
    ms = (time.monotonic() - t0) * 1000
    a.close()
    b.close()
    # The server's own record: its access log, a line per answer, written
    # when the answer is made, in the order the loop made them.
    order = []
    with open(alog, "rb") as f:
        f.seek(off)
        for ln in f.read().decode("utf-8", "replace").splitlines():
            fl = ln.split()
            if len(fl) < 5:
                continue
            if fl[3].startswith("/health?race=%s-" % tag):
                order.append("health")
            elif fl[3] == target:
                order.append("fetch")
    if order.count("fetch") != 1 or order.count("health") != NHEALTH:
        raise SystemExit("stallfetch.py race: access log lines %r" % order)
    return {"health_first": order.index("fetch"), "order": order,
            "status": st, "fetch_ms": round(ms, 1),
            "sha": hashlib.sha256(body).hexdigest(), "len": len(body)}


def beater(u, base, app, iid, stop, started, out):
    """PUT heartbeats until stop is set; out gets the longest wait (ms)."""
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    worst, n = 0.0, 0
    while not stop.is_set():
        t = time.monotonic()
        c.request("PUT", base + "apps/%s/%s?status=UP" % (app, iid))
        r = c.getresponse()
        r.read()
        worst = max(worst, (time.monotonic() - t) * 1000)
        n += 1
        if n == 3:
            started.set()
    out.put((round(worst, 1), n))


def beat(u, base, app, iid, path, headers):
    stop, started = multiprocessing.Event(), multiprocessing.Event()
    out = multiprocessing.Queue()
    p = multiprocessing.Process(target=beater,
                                args=(u, base, app, iid, stop, started, out))
    p.start()
    started.wait(30)
    a = socket.create_connection((u.hostname, u.port), timeout=120)
    t0 = time.monotonic()
    a.sendall(request_bytes(u, base + path, headers))
    st, body = read_response(a)
    ms = (time.monotonic() - t0) * 1000
    a.close()
    stop.set()
    worst, n = out.get()
    p.join()
    return {"status": st, "fetch_ms": round(ms, 1), "len": len(body),
            "beat_max_ms": worst, "beats": n}


def churn(u, base, stopfile):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    n = 0
    while not os.path.exists(stopfile):
        inst = instance("CHURN", "churn-%d" % n)
        c.request("POST", base + "peerreplication/batch",
                  json.dumps({"replicationList": [{
                      "appName": "CHURN", "id": inst["instanceId"],
                      "action": "Register",
                      "lastDirtyTimestamp": inst["lastDirtyTimestamp"],
                      "instanceInfo": inst}]}),
                  {"Content-Type": "application/json",
                   "x-netflix-discovery-replication": "true"})
        r = c.getresponse()
        r.read()
        n += 1
        time.sleep(0.02)	# a fleet's steady pace (the load, not a wait)
    return {"registered": n}


def drop(u, base, path, headers):
    a = socket.create_connection((u.hostname, u.port), timeout=10)
    a.sendall(request_bytes(u, base + path, headers))
    a.close()
    return {"sent": True}


def main():
    url, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    u = urllib.parse.urlsplit(url)
    base = u.path if u.path.endswith("/") else u.path + "/"
    if cmd == "load":
        out = load(u, base, int(args[0]), int(args[1]))
    elif cmd == "race":
        out = race(u, base, int(args[0]), args[1], args[2], args[3:])
    elif cmd == "drop":
        out = drop(u, base, args[0], args[1:])
    elif cmd == "churn":
        out = churn(u, base, args[0])
    elif cmd == "beat":
        out = beat(u, base, args[0], args[1], args[2], args[3:])
    elif cmd == "hold":
        a = socket.create_connection((u.hostname, u.port), timeout=10)
        a.sendall(request_bytes(u, base + args[0], args[2:]))
        time.sleep(float(args[1]))
        a.close()
        out = {"held": True}
    else:
        sys.exit("stallfetch.py: unknown command " + cmd)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()

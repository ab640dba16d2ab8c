#!/usr/bin/env python3
# stallfetch.py: client side of 63-fetch-slices.sh (issue 13, "no stall").
# Prints one JSON line with what it saw.
#
#   stallfetch.py URL load NAPPS PER
#       replicate NAPPS applications of PER instances in peer batches of
#       250 (fast: one keep-alive connection).
#   stallfetch.py URL race PATH [HEADER:VALUE...]
#       send GET PATH on one connection and, while its answer has not
#       started, GET /health on a second one, again and again; prints how
#       many /health answers came first, the fetch's status, its time and
#       the SHA-256 of its body.
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
import select
import socket
import sys
import time
import urllib.parse

import hkfixture


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


def read_response(s):
    """Read one HTTP/1.1 response with a Content-Length; (status, body)."""
    data = b""
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
    return status, b"".join(parts)


def race(u, base, path, headers):
    a = socket.create_connection((u.hostname, u.port), timeout=60)
    b = socket.create_connection((u.hostname, u.port), timeout=60)
    t0 = time.monotonic()
    a.sendall(request_bytes(u, base + path, headers))
    first = 0
    while True:
        r, _, _ = select.select([a], [], [], 0)
        if r:
            break
        b.sendall(request_bytes(u, "/health", []))
        st, _ = read_response(b)
        if st != 200:
            return {"error": "/health answered %d" % st}
        r, _, _ = select.select([a], [], [], 0)
        if r:
            break
        first += 1
    st, body = read_response(a)
    ms = (time.monotonic() - t0) * 1000
    a.close()
    b.close()
    return {"health_first": first, "status": st, "fetch_ms": round(ms, 1),
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
        out = race(u, base, args[0], args[1:])
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

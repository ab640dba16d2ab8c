#!/usr/bin/env python3
# watchload.py: client side of the watch-abuse tests (issue 21, "The watch
# stream"): watchers that never read, and what the server's loop and
# heartbeats saw meanwhile. Prints one JSON line; the shell test asserts.
#
#   watchload.py URL load NAPPS PER VALUELEN
#       replicate NAPPS applications of PER instances, each with 4
#       metadata values of VALUELEN bytes, in peer batches of BATCH (200).
#   watchload.py URL storm NWATCH SECONDS [STALLS]
#       register HB/hb-0, then open NWATCH watchers at once that never
#       read (receive buffer 4 KiB) and heartbeat HB/hb-0 for SECONDS on
#       another connection (and on until watch/stats counts STALLS
#       watchers cut off for not reading, 120 s at most); prints the
#       longest heartbeat wait, the status of each stream and, read after
#       that, how many saw RESET and EOF.
#   watchload.py URL fill VALUELEN
#       replicate instances (4 metadata values of VALUELEN bytes) in
#       batches of 200 until an item is refused with 503 (the memory
#       budget); prints how many were stored and the refusal's reason.
#   watchload.py URL fanout NWATCH NEVENTS VALUELEN SECONDS
#       open NWATCH watchers that never read, wait until the server counts
#       them, register NEVENTS instances of ~4 x VALUELEN bytes of metadata
#       in batches of 200, keep the watchers SECONDS longer, then read each
#       (RESET seen, EOF) and close them all.
# Loop turns are read from /metrics (heureka_loop_turn_cpu_seconds): the
# largest bucket bound whose count grew while the scenario ran.
import http.client
import json
import select
import socket
import sys
import threading
import time
import urllib.parse

import hkfixture

BATCH = 200


def metrics(u):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    return text


def turn_buckets(text):
    """le -> cumulative count of heureka_loop_turn_cpu_seconds."""
    out = {}
    for line in text.splitlines():
        if line.startswith("heureka_loop_turn_cpu_seconds_bucket{le="):
            le = line.split('"')[1]
            out[le] = int(float(line.split()[-1]))
    return out


def longest_turn(before, after):
    """Upper bound (s) of the largest bucket that gained a turn."""
    prev_b = prev_a = 0
    worst = 0.0
    for le in sorted((k for k in after if k != "+Inf"), key=float):
        gained = (after[le] - prev_a) - (before.get(le, 0) - prev_b)
        if gained > 0:
            worst = float(le)
        prev_a, prev_b = after[le], before.get(le, 0)
    if after.get("+Inf", 0) - prev_a > before.get("+Inf", 0) - prev_b:
        worst = float("inf")
    return worst


def post_batch(c, base, items):
    c.request("POST", base + "peerreplication/batch",
              json.dumps({"replicationList": items}),
              {"Content-Type": "application/json",
               "x-netflix-discovery-replication": "true"})
    r = c.getresponse()
    r.read()
    return r.status


def item(app, iid, vlen):
    md = {"k%d" % i: "v" * vlen for i in range(4)} if vlen else {}
    inst = hkfixture.instance(app, iid, metadata=md)
    return {"appName": app, "id": iid, "action": "Register",
            "lastDirtyTimestamp": inst["lastDirtyTimestamp"],
            "instanceInfo": inst}


def load(u, base, napps, per, vlen, prefix="a"):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    codes = {}
    items = []
    for a in range(napps):
        app = "APP%05d" % a
        for i in range(per):
            items.append(item(app, "%s%d-i%d" % (prefix, a, i), vlen))
            if len(items) == BATCH:
                st = post_batch(c, base, items)
                codes[str(st)] = codes.get(str(st), 0) + 1
                del items[:]
    if items:
        st = post_batch(c, base, items)
        codes[str(st)] = codes.get(str(st), 0) + 1
    c.close()
    return codes


def fill(u, base, vlen):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    stored = 0
    for b in range(100000):
        items = [item("FILL%03d" % (b % 500), "x%d-%d" % (b, i), vlen)
                 for i in range(BATCH)]
        c.request("POST", base + "peerreplication/batch",
                  json.dumps({"replicationList": items}),
                  {"Content-Type": "application/json",
                   "x-netflix-discovery-replication": "true"})
        r = c.getresponse()
        d = json.loads(r.read())
        for it in d["responseList"]:
            if it["statusCode"] == 503:
                return {"stored": stored, "reason": it.get("reason") or
                        json.dumps(it)}
            stored += 1
    return {"stored": stored, "reason": None}


def open_watch(u, base):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((u.hostname, u.port))
    s.sendall(("GET %sheureka/watch HTTP/1.1\r\nHost: x\r\n\r\n" %
               base).encode())
    return s


def drain(socks, limit):
    """Read every socket to EOF (or limit s): status, RESET, EOF each."""
    res = [{"status": None, "reset": False, "eof": False, "bytes": 0}
           for _ in socks]
    tail = [b""] * len(socks)
    head = [b""] * len(socks)
    live = {s.fileno(): i for i, s in enumerate(socks)}
    for s in socks:
        s.setblocking(False)
    end = time.time() + limit
    while live and time.time() < end:
        r, _, _ = select.select(list(live), [], [], 0.5)
        for fd in r:
            i = live[fd]
            try:
                d = socks[i].recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                d = b""
            if not d:
                res[i]["eof"] = True
                del live[fd]
                continue
            res[i]["bytes"] += len(d)
            if len(head[i]) < 64:
                head[i] += d[:64]
            t = tail[i] + d
            if b"event: RESET" in t:
                res[i]["reset"] = True
            tail[i] = t[-64:]
    for i, h in enumerate(head):
        p = h.split(b" ")
        res[i]["status"] = p[1].decode() if len(p) > 1 else None
    return res


def summary(res):
    out = {"status": {}, "reset": 0, "eof": 0}
    for r in res:
        k = str(r["status"])
        out["status"][k] = out["status"].get(k, 0) + 1
        out["reset"] += r["reset"]
        out["eof"] += r["eof"]
    return out


class Heartbeats(threading.Thread):
    """PUT HB/hb-0 back to back; the longest wait for an answer."""

    def __init__(self, u, base):
        super().__init__(daemon=True)
        self.u, self.base = u, base
        self.stop = False
        self.worst = 0.0
        self.n = 0

    def run(self):
        c = http.client.HTTPConnection(self.u.hostname, self.u.port,
                                       timeout=120)
        while not self.stop:
            t0 = time.time()
            c.request("PUT", self.base + "apps/HB/hb-0")
            c.getresponse().read()
            self.worst = max(self.worst, time.time() - t0)
            self.n += 1
            time.sleep(0.02)


def wstats(u, base):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", base + "heureka/watch/stats")
    d = json.loads(c.getresponse().read())
    c.close()
    return d


def register_hb(u, base):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("POST", base + "apps/HB", json.dumps(
        {"instance": hkfixture.instance("HB", "hb-0")}),
        {"Content-Type": "application/json"})
    c.getresponse().read()
    c.close()


def storm(u, base, nwatch, seconds, stalls=None):
    register_hb(u, base)
    before = turn_buckets(metrics(u))
    hb = Heartbeats(u, base)
    hb.start()
    time.sleep(0.3)
    socks = [open_watch(u, base) for _ in range(nwatch)]
    time.sleep(seconds)
    end = time.time() + 120
    while stalls is not None and wstats(u, base).get("stalls", 0) < stalls \
            and time.time() < end:
        time.sleep(0.2)
    hb.stop = True
    hb.join()
    after = turn_buckets(metrics(u))
    res = drain(socks, 60)
    for s in socks:
        s.close()
    out = summary(res)
    out.update({"hb_max_ms": int(hb.worst * 1000), "heartbeats": hb.n,
                "turn_max_s": longest_turn(before, after)})
    return out


def fanout(u, base, nwatch, nevents, vlen, seconds):
    before = turn_buckets(metrics(u))
    socks = []
    for _ in range(nwatch):
        socks.append(open_watch(u, base))
    end = time.time() + 60
    while wstats(u, base)["watchers"] < nwatch and time.time() < end:
        time.sleep(0.1)
    codes = load(u, base, max(1, nevents // BATCH), min(nevents, BATCH),
                 vlen, prefix="f")
    time.sleep(seconds)
    after = turn_buckets(metrics(u))
    res = drain(socks, 30)
    for s in socks:
        s.close()
    out = summary(res)
    out.update({"codes": codes, "turn_max_s": longest_turn(before, after)})
    return out


def main():
    u = urllib.parse.urlsplit(sys.argv[1])
    base = u.path if u.path.endswith("/") else u.path + "/"
    cmd, a = sys.argv[2], sys.argv[3:]
    if cmd == "load":
        out = {"codes": load(u, base, int(a[0]), int(a[1]), int(a[2]))}
    elif cmd == "fill":
        out = fill(u, base, int(a[0]))
    elif cmd == "storm":
        out = storm(u, base, int(a[0]), float(a[1]),
                    int(a[2]) if len(a) > 2 else None)
    elif cmd == "fanout":
        out = fanout(u, base, int(a[0]), int(a[1]), int(a[2]), float(a[3]))
    else:
        sys.exit("watchload.py: unknown command " + cmd)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()

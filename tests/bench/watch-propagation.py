#!/usr/bin/env python3
# watch-propagation.py: register on node A, time the event at a watcher of
# node C while WATCHERS streams are open on C (issue 14's benchmark), and
# the heartbeat throughput on C with and without them.
#
#   watch-propagation.py A_BASE C_BASE WATCHERS REGISTRATIONS
#
# A_BASE/C_BASE are REST bases (http://127.0.0.1:PORT/eureka/). All
# watchers are drained by one selector loop; one of them is parsed.
import http.client
import json
import os
import selectors
import socket
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
import hkfixture  # noqa: E402  (the integration helpers' instance)


def inst(iid, now):
    return json.dumps({"instance": hkfixture.minimal(
        "BENCH", iid, host="h", lastDirtyTimestamp=str(now))})


def open_watch(u):
    s = socket.create_connection((u.hostname, u.port))
    s.sendall(("GET %sheureka/watch?app=BENCH HTTP/1.1\r\nHost: x\r\n\r\n"
               % u.path).encode())
    s.setblocking(False)
    return s


def heartbeats(c, path, n):
    t0 = time.time()
    for i in range(n):
        c.request("PUT", path + "apps/BENCH/hb-0")
        r = c.getresponse()
        r.read()
    return n / (time.time() - t0)


def main():
    a = urllib.parse.urlparse(sys.argv[1])
    cu = urllib.parse.urlparse(sys.argv[2])
    nw, nreg = int(sys.argv[3]), int(sys.argv[4])
    c = http.client.HTTPConnection(a.hostname, a.port, timeout=10)
    c.request("POST", a.path + "apps/BENCH", inst("hb-0", int(time.time() * 1000)),
              {"Content-Type": "application/json"})
    c.getresponse().read()
    hc = http.client.HTTPConnection(cu.hostname, cu.port, timeout=10)
    t_end = time.time() + 5
    while time.time() < t_end:      # replicated to C
        hc.request("GET", cu.path + "apps/BENCH/hb-0")
        r = hc.getresponse()
        r.read()
        if r.status == 200:
            break
        time.sleep(0.05)
    hb0 = heartbeats(hc, cu.path, 3000)
    sel = selectors.DefaultSelector()
    socks = [open_watch(cu) for _ in range(nw)]
    timer = socks[0]
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    seen = bytearray()

    def pump(timeout):
        for key, _ in sel.select(timeout):
            try:
                d = key.fileobj.recv(1 << 16)
            except BlockingIOError:
                continue
            if key.fileobj is timer:
                seen.extend(d)
    t_end = time.time() + 10
    while b"SYNCED" not in seen and time.time() < t_end:
        pump(0.1)
    # Heartbeats go to C, where the watchers are: they make no events.
    lat = []
    for i in range(nreg):
        iid = "p-%d" % i
        key = ('"instanceId":"%s"' % iid).encode()
        t0 = time.time()
        c.request("POST", a.path + "apps/BENCH", inst(iid, int(t0 * 1000)),
                  {"Content-Type": "application/json"})
        c.getresponse().read()
        deadline = t0 + 5
        while key not in seen and time.time() < deadline:
            pump(0.05)
        if key not in seen:
            sys.exit("no event for %s" % iid)
        lat.append((time.time() - t0) * 1000)
        del seen[:]
    hb1 = heartbeats(hc, cu.path, 3000)
    lat.sort()
    print("watchers on C: %d" % nw)
    print("register on A -> event at a watcher of C: p50 %.1f ms, p99 %.1f ms, "
          "max %.1f ms (n=%d)" % (lat[len(lat) // 2],
          lat[min(len(lat) - 1, int(len(lat) * 0.99))], lat[-1], len(lat)))
    print("heartbeats/s on C (one keep-alive connection): %.0f without, "
          "%.0f with the watchers" % (hb0, hb1))


if __name__ == "__main__":
    main()

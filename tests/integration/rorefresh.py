#!/usr/bin/env python3
# rorefresh.py: client side of 64-ro-refresh-slices.sh (issue 13: the
# read-only layer's refresh does not stall the loop). Prints one JSON line.
#
#   rorefresh.py URL LOG PASSES BODIES SECONDS
#       until the server (its log: LOG, at debug level) has completed
#       PASSES more read-only refresh passes and the fetcher has checked
#       BODIES full bodies (each variant at least BODIES / 4 times) and
#       seen two registry versions -- however long a loaded machine takes;
#       SECONDS only bounds a hang ("timed_out" in the output): one thread asks
#       /health again and again and notes when each answer came; another
#       fetches the full registry (JSON, XML, gzip or not) and checks
#       every body is whole and consistent (its instance count is the one
#       its apps hash code states, no instance twice), registering a new
#       instance after each fetch so that every pass has a change to
#       serve. Then reads each pass's end time and length from the log and
#       counts the /health answers that came while it ran (the first pass
#       after the fetches begin is not counted).
import calendar
import gzip
import http.client
import json
import multiprocessing
import re
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

import hkfixture

LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z .*read-only "
                  r"cache refreshed \(pass (\d+): (\d+) slices, (\d+) ms\)")
VARIANTS = [
    {"Accept": "application/json"},
    {"Accept": "application/json", "Accept-Encoding": "gzip"},
    {"Accept": "application/xml"},
    {"Accept": "application/xml", "Accept-Encoding": "gzip"},
]


def passes(log):
    """[(end epoch seconds, slices, ms)] of the passes in the log."""
    out = []
    with open(log, errors="replace") as f:
        for ln in f:
            m = LINE.match(ln)
            if m:
                t = calendar.timegm(time.strptime(m.group(1)[:19],
                                                  "%Y-%m-%dT%H:%M:%S"))
                t += int(m.group(1)[20:]) / 1000.0
                out.append((t, int(m.group(3)), int(m.group(4))))
    return out


def count_body(body, xml):
    """(instances, stated count, distinct ids) of a full registry body."""
    if xml:
        root = ET.fromstring(body)
        ids = [i.findtext("instanceId") for i in root.iter("instance")]
        code = root.findtext("apps__hashcode")
    else:
        d = json.loads(body)["applications"]
        ids = [i["instanceId"] for a in d["application"]
               for i in a["instance"]]
        code = d["apps__hashcode"]
    if not code:
        return len(ids), 0, len(set(ids))	# the empty registry
    m = re.fullmatch(r"UP_(\d+)_", code)
    return len(ids), int(m.group(1)) if m else -1, len(set(ids))


def prober(u, stop, out):
    """GET /health until stop is set; out gets [answer times], errors.

    A process of its own: the fetcher's parsing holds the GIL for tens of
    milliseconds, which would starve a thread."""
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    times, errors = [], 0
    while not stop.is_set():
        c.request("GET", "/health")
        r = c.getresponse()
        r.read()
        if r.status == 200:
            times.append(time.time())
        else:
            errors += 1
    out.put((times, errors))


def main():
    url, log, want, wbodies, secs = (sys.argv[1], sys.argv[2],
                                     int(sys.argv[3]), int(sys.argv[4]),
                                     float(sys.argv[5]))
    u = urllib.parse.urlsplit(url)
    base = u.path if u.path.endswith("/") else u.path + "/"
    stop = threading.Event()
    pstop = multiprocessing.Event()
    pout = multiprocessing.Queue()
    res = {"bodies": 0, "bad": [], "codes": set(),
           "variant": [0] * len(VARIANTS)}

    def fetcher():
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        n = 0
        while not stop.is_set():
            h = VARIANTS[n % len(VARIANTS)]
            c.request("GET", base + "apps", headers=h)
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                res["bad"].append("status %d" % r.status)
                continue
            if "Accept-Encoding" in h:
                body = gzip.decompress(body)
            got, stated, distinct = count_body(body, "xml" in h["Accept"])
            res["bodies"] += 1
            res["variant"][n % len(VARIANTS)] += 1
            res["codes"].add(stated)
            if got != stated or distinct != got:
                res["bad"].append("%s: %d instances (%d distinct), hash "
                                  "code says %d" % (h, got, distinct,
                                                    stated))
            iid = "ro-extra-%d" % n
            inst = {"instance": hkfixture.minimal("ROEXTRA", iid, host=iid,
                                                  ip="10.0.0.2")}
            c.request("POST", base + "apps/ROEXTRA", json.dumps(inst),
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            n += 1

    # The first pass after the fetches begin is left out: it may run
    # before a variant was fetched, or find fragments younger than the
    # read-write expiry and reuse them, so it need not re-encode.
    start = len(passes(log)) + 1
    pr = multiprocessing.Process(target=prober, args=(u, pstop, pout))
    pr.start()
    ts = [threading.Thread(target=fetcher)]
    for t in ts:
        t.start()
    def enough():
        return (len(passes(log)) >= start + want and
                res["bodies"] >= wbodies and
                min(res["variant"]) >= wbodies // len(VARIANTS) and
                len(res["codes"]) >= 2)

    # What is waited for is work done, never an amount of it in a time.
    t0 = time.monotonic()
    timed_out = False
    while not enough():
        if time.monotonic() - t0 >= secs:
            timed_out = True
            break
        time.sleep(0.05)
    stop.set()
    pstop.set()
    for t in ts:
        t.join()
    health, res["health_errors"] = pout.get()
    pr.join()
    ps = passes(log)[start:]
    during = []
    for end, slices, ms in ps:
        lo = end - ms / 1000.0 - 0.0005
        during.append(sum(1 for h in health if lo <= h <= end + 0.0005))
    print(json.dumps({
        "passes": len(ps),
        "min_slices": min((p[1] for p in ps), default=0),
        "max_ms": max((p[2] for p in ps), default=0),
        "health_during": during,
        "health": len(health), "health_errors": res["health_errors"],
        "bodies": res["bodies"], "bad": res["bad"][:5],
        "variants": res["variant"], "timed_out": timed_out,
        "distinct_counts": len(res["codes"])}, sort_keys=True))


if __name__ == "__main__":
    main()

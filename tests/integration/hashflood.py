#!/usr/bin/python3
# hashflood.py: hash-flooding inputs for heurekad (used by 43-hashflood.sh
# and the hashflood bench scenario). Python 3 standard library only.
#
# Before the keyed hash, the response cache put an application in bucket
# FNV-1a-64(NAME) mod 4096 of a table that never grew, and the registry
# chained every lease with one instance id in one bucket of its id index.
# This script finds application names that all fall in one such bucket
# (in well under a second: FNV-1a's state mod 2^12 depends only on the low
# 12 bits, and each step can be inverted because the prime is odd), and
# registers them, or one id in many applications, over a few persistent
# HTTP connections.
#
# Usage:
#   hashflood.py names N              print N colliding upper-case names
#   hashflood.py check FILE           longest old-scheme chain of the names
#   hashflood.py register --port P (--names N | --shared-id ID --apps N)
#                [--conns C] [--duration S]

import argparse
import http.client
import itertools
import json
import random
import sys
import threading

import hkfixture

FNV_OFFSET = 1469598103934665603
FNV_PRIME = 1099511628211
MASK64 = (1 << 64) - 1
BUCKETS = 4096			# the old cache's FRAG_BUCKETS
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def fnv1a64(s):
    """str_hash() as common/instance.c had it."""
    h = FNV_OFFSET
    for c in s.encode():
        h = ((h ^ c) * FNV_PRIME) & MASK64
    return h


def colliding_names(n, target=0, seed=1):
    """n distinct names whose FNV-1a-64 is target mod BUCKETS."""
    inv = pow(FNV_PRIME % BUCKETS, -1, BUCKETS)
    # State needed before a 3-character suffix to end in target: walk the
    # steps backwards (s = (s' * P^-1) ^ c, all mod 2^12).
    need = {}
    for tail in itertools.product(ALPHABET, repeat=3):
        s = target
        for c in reversed(tail):
            s = ((s * inv) % BUCKETS) ^ ord(c)
        need.setdefault(s, []).append("".join(tail))
    rnd = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        prefix = "HF" + "".join(rnd.choice(ALPHABET) for _ in range(6))
        for tail in need.get(fnv1a64(prefix) % BUCKETS, [])[:4]:
            name = prefix + tail
            if name not in seen:
                seen.add(name)
                out.append(name)
    return out[:n]


def longest_chain(names):
    """Longest bucket of the old cache table over names."""
    counts = {}
    for name in names:
        b = fnv1a64(name) % BUCKETS
        counts[b] = counts.get(b, 0) + 1
    return max(counts.values()) if counts else 0


def instance(app, iid, duration):
    return json.dumps({"instance": hkfixture.minimal(
        app, iid, port={"$": 8080, "@enabled": "true"},
        leaseInfo={"renewalIntervalInSecs": 30, "durationInSecs": duration},
        vipAddress=app.lower())}).encode()


def register(port, pairs, conns, duration):
    """POST every (app, id) over conns keep-alive connections."""
    errors = []

    def worker(part):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for app, iid in part:
            c.request("POST", "/eureka/apps/" + app,
                      body=instance(app, iid, duration),
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            if r.status != 204:
                errors.append("%s/%s: %d" % (app, iid, r.status))
                break
        c.close()

    threads = [threading.Thread(target=worker, args=(pairs[i::conns],))
               for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit("register failed: " + "; ".join(errors[:5]))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("names")
    p.add_argument("n", type=int)
    p = sub.add_parser("check")
    p.add_argument("file")
    p = sub.add_parser("register")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--names", type=int, default=0)
    p.add_argument("--shared-id")
    p.add_argument("--apps", type=int, default=0)
    p.add_argument("--conns", type=int, default=4)
    p.add_argument("--duration", type=int, default=90)
    a = ap.parse_args()
    if a.cmd == "names":
        print("\n".join(colliding_names(a.n)))
    elif a.cmd == "check":
        with open(a.file) as f:
            names = f.read().split()
        print(longest_chain(names))
    else:
        if a.shared_id:
            pairs = [("HFID%06d" % i, a.shared_id) for i in range(a.apps)]
        else:
            pairs = [(n, "i-1") for n in colliding_names(a.names)]
        register(a.port, pairs, a.conns, a.duration)


if __name__ == "__main__":
    main()

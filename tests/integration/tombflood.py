#!/usr/bin/env python3
# tombflood.py: client side of 75-tombstones.sh (issue 21, "Tombstones").
# Prints one JSON line with what it saw.
#
#   tombflood.py URL rest N
#       DELETE apps/SVC/ghost-<k> for N ids never registered, on one
#       keep-alive connection, as a client would; counts the answers by
#       status and keeps the first Retry-After.
#   tombflood.py URL batch N [PER]
#       the same N cancels as a peer's replication batches of PER items
#       (default 1000); counts the items' status codes.
import http.client
import json
import sys
import time
import urllib.parse


def rest(u, n):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    codes = {}
    retry = None
    for k in range(n):
        c.request("DELETE", u.path + "apps/SVC/ghost-%d" % k)
        r = c.getresponse()
        r.read()
        codes[str(r.status)] = codes.get(str(r.status), 0) + 1
        if r.status == 429 and retry is None:
            retry = r.getheader("Retry-After")
    return {"codes": codes, "retry_after": retry}


def batch(u, n, per):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    codes = {}
    now = int(time.time() * 1000)
    for start in range(0, n, per):
        items = [{"appName": "SVC", "id": "peer-ghost-%d" % k,
                  "action": "Cancel", "lastDirtyTimestamp": now}
                 for k in range(start, min(n, start + per))]
        c.request("POST", u.path + "peerreplication/batch",
                  json.dumps({"replicationList": items}),
                  {"Content-Type": "application/json",
                   "x-netflix-discovery-replication": "true"})
        r = c.getresponse()
        body = r.read()
        if r.status != 200:
            codes["http" + str(r.status)] = codes.get("http" + str(r.status), 0) + 1
            continue
        for it in json.loads(body)["responseList"]:
            s = str(it["statusCode"])
            codes[s] = codes.get(s, 0) + 1
    return {"codes": codes}


def main():
    u = urllib.parse.urlparse(sys.argv[1])
    if sys.argv[2] == "rest":
        out = rest(u, int(sys.argv[3]))
    else:
        out = batch(u, int(sys.argv[3]),
                    int(sys.argv[4]) if len(sys.argv) > 4 else 1000)
    print(json.dumps(out, sort_keys=True))


main()

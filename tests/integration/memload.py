#!/usr/bin/env python3
# memload.py: load generator for the memory-bound tests (issue 9,
# "Memory"). One keep-alive HTTP connection from an optional source
# address, so thousands of requests take a second or two. Prints one JSON
# line with what it saw; exits 1 on a connection failure.
#
#   memload.py URL register APP PREFIX COUNT META VALUELEN [--stop-on 503]
#       register COUNT instances PREFIX-0.. with META metadata entries of
#       VALUELEN bytes each; with --stop-on CODE, stop at the first CODE.
#   memload.py URL churn APP ID COUNT VALUELEN
#       register and cancel one instance COUNT times (a ~VALUELEN body).
#   memload.py URL batch APP ID VALUELEN
#       replicate one instance with ~VALUELEN of metadata in a peer batch.
#   memload.py URL apps COUNT
#       register one instance in each of COUNT applications.
#   --source ADDR binds the client side to ADDR (127.0.0.2 etc.).
import argparse
import http.client
import json
import sys
import urllib.parse

import hkfixture


def instance(app, iid, meta, vlen):
    md = {"k%03d" % i: "v" * vlen for i in range(meta)}
    return {"instance": hkfixture.instance(app, iid, metadata=md)}


class Conn:
    def __init__(self, url, source):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port
        self.base = u.path if u.path.endswith("/") else u.path + "/"
        self.source = (source, 0) if source else None
        self.c = None

    def req(self, method, path, body=None, headers=None):
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        for attempt in range(3):
            if self.c is None:
                self.c = http.client.HTTPConnection(
                    self.host, self.port, timeout=10,
                    source_address=self.source)
            try:
                self.c.request(method, self.base + path, body, h)
                r = self.c.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.c.close()
                    self.c = None
                return r.status, data, r
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = None
                if attempt == 2:
                    raise


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("cmd")
    ap.add_argument("args", nargs="*")
    ap.add_argument("--source")
    ap.add_argument("--stop-on", type=int)
    a = ap.parse_args()
    c = Conn(a.url, a.source)
    codes = {}
    out = {}

    def count(code):
        codes[str(code)] = codes.get(str(code), 0) + 1

    if a.cmd == "register":
        app, prefix, n, meta, vlen = a.args[0], a.args[1], int(a.args[2]), \
            int(a.args[3]), int(a.args[4])
        for i in range(n):
            body = json.dumps(instance(app, "%s-%d" % (prefix, i), meta,
                                       vlen))
            st, data, _ = c.req("POST", "apps/" + app, body)
            count(st)
            if a.stop_on is not None and st == a.stop_on:
                out["stopped_at"] = i
                out["reason"] = data.decode("utf-8", "replace").strip()
                break
    elif a.cmd == "churn":
        app, iid, n, vlen = a.args[0], a.args[1], int(a.args[2]), \
            int(a.args[3])
        body = json.dumps(instance(app, iid, max(1, vlen // 3000),
                                   min(vlen, 3000)))
        for i in range(n):
            st, _, _ = c.req("POST", "apps/" + app, body)
            count(st)
            st, _, _ = c.req("DELETE", "apps/%s/%s" % (app, iid))
            count(st)
    elif a.cmd == "batch":
        app, iid, vlen = a.args[0], a.args[1], int(a.args[2])
        inst = instance(app, iid, 128, max(1, vlen // 128))["instance"]
        batch = {"replicationList": [{
            "appName": app, "id": iid, "action": "Register",
            "lastDirtyTimestamp": inst["lastDirtyTimestamp"],
            "instanceInfo": inst}]}
        st, data, _ = c.req("POST", "peerreplication/batch",
                            json.dumps(batch),
                            {"x-netflix-discovery-replication": "true"})
        count(st)
        out["response"] = json.loads(data) if st == 200 else None
    elif a.cmd == "apps":
        n = int(a.args[0])
        for i in range(n):
            app = "APP%05d" % i
            body = json.dumps(instance(app, "i-%d" % i, 1, 8))
            st, _, _ = c.req("POST", "apps/" + app, body)
            count(st)
    else:
        sys.exit("memload.py: unknown command " + a.cmd)
    out["codes"] = codes
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()

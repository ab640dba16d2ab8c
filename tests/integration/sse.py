#!/usr/bin/env python3
# sse.py: a small Server-Sent Events client for heureka's watch stream.
#
#   sse.py URL OUT [--last-id N] [--rcvbuf BYTES] [--stall FILE]
#
# Connects over a raw socket (so the receive buffer can be made small),
# decodes the chunked body and appends one line per event to OUT:
#   <recv wall ms> <event> <id> <app> <instanceId> <status>
# ("-" for absent fields), then "HTTP <code>" first and "EOF" last.
# With --stall FILE it stops reading once SYNCED arrived and waits for FILE to exist before it reads on: a stalled
# reader for the slow-reader test.
import json
import os
import socket
import sys
import time
import urllib.parse


def main():
    args = sys.argv[1:]
    url, out = args[0], args[1]
    last_id = rcvbuf = stall = None
    i = 2
    while i < len(args):
        if args[i] == "--last-id":
            last_id = args[i + 1]
        elif args[i] == "--rcvbuf":
            rcvbuf = int(args[i + 1])
        elif args[i] == "--stall":
            stall = args[i + 1]
        i += 2
    u = urllib.parse.urlsplit(url)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect((u.hostname, u.port))
    path = u.path + ("?" + u.query if u.query else "")
    req = "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n" % (
        path, u.netloc)
    if last_id is not None:
        req += "Last-Event-ID: %s\r\n" % last_id
    s.sendall((req + "\r\n").encode())
    f = s.makefile("rb")
    o = open(out, "a", buffering=1)
    status = f.readline().split()
    o.write("HTTP %s\n" % (status[1].decode() if len(status) > 1 else "-"))
    chunked = False
    while True:
        h = f.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        k, _, v = h.decode().partition(":")
        if k.strip().lower() == "transfer-encoding" and "chunked" in v:
            chunked = True

    def body():
        if not chunked:
            while True:
                d = f.read(1)
                if not d:
                    return
                yield d
        while True:
            size = f.readline()
            if not size:
                return
            n = int(size.strip() or b"0", 16)
            if n == 0:
                return
            d = f.read(n)
            f.readline()
            yield d

    buf, ev, eid, data = b"", None, "-", []
    stalled = stall is None
    for d in body():
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            line = line.decode()
            if line == "":
                if ev is None and not data:
                    continue
                app = iid = st = "-"
                if data:
                    try:
                        inst = json.loads("\n".join(data)).get("instance", {})
                        app = inst.get("app") or "-"
                        iid = inst.get("instanceId") or "-"
                        st = inst.get("status") or "-"
                    except ValueError:
                        pass
                o.write("%d %s %s %s %s %s\n" % (time.time() * 1000,
                        ev or "message", eid, app, iid, st))
                if not stalled and ev == "SYNCED":
                    stalled = True
                    give_up = time.time() + 60
                    while not os.path.exists(stall) and time.time() < give_up:
                        time.sleep(0.05)
                ev, data = None, []
            elif line.startswith(":"):
                continue
            elif line.startswith("event:"):
                ev = line[6:].strip()
            elif line.startswith("id:"):
                eid = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
    o.write("EOF\n")


if __name__ == "__main__":
    main()

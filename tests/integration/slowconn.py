#!/usr/bin/env python3
# slowconn.py: slow and idle clients for 68-conn-limits.sh (issue 21).
#
#   slowconn.py hold PORT N BYTES SECONDS
#       open N connections to 127.0.0.1:PORT, each sending a request
#       head of BYTES bytes that never ends (no empty line); keep them
#       SECONDS; print "connected C closed-by-server K" where K counts
#       those the server closed (end of file or reset) in that time.
#       With SECONDS 0 it only opens them and waits until its stdin
#       closes (the script holds them while it measures the server).
#   slowconn.py drip PORT INTERVAL MAXWAIT [tls]
#       connect, then send one byte every INTERVAL seconds (a request
#       head, or for tls the first bytes of a ClientHello); print the
#       seconds until the server closed the connection, or "open" if it
#       still was after MAXWAIT seconds.
import select
import socket
import sys
import time

HEAD = b"GET /eureka/v2/apps HTTP/1.1\r\nHost: x\r\nX-Pad: "
# A TLS 1.2 ClientHello's first bytes: a record header and a few more.
HELLO = bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03,
               0x03] + [0x41] * 64)


def closed(s):
    """Has the server closed s (EOF or reset)? Never blocks."""
    try:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            return False
        return s.recv(65536) == b""
    except OSError:
        return True


def hold(port, n, nbytes, secs):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect(("127.0.0.1", port))
            s.setblocking(False)
            body = HEAD + b"x" * max(0, nbytes - len(HEAD))
            try:
                s.send(body)
            except OSError:
                pass
            socks.append(s)
        except OSError:
            s.close()
    deadline = time.time() + secs
    gone = set()
    if secs == 0:
        print("connected %d" % len(socks), flush=True)
        sys.stdin.read()
        return
    while time.time() < deadline:
        for i, s in enumerate(socks):
            if i not in gone and closed(s):
                gone.add(i)
        time.sleep(0.05)
    print("connected %d closed-by-server %d" % (len(socks), len(gone)))


def drip(port, interval, maxwait, tls):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    data = HELLO if tls else HEAD + b"x" * 4096
    t0 = time.time()
    i = 0
    while time.time() - t0 < maxwait:
        try:
            s.send(data[i:i + 1])
        except OSError:
            print("%.1f" % (time.time() - t0))
            return
        i = (i + 1) % len(data)
        end = time.time() + interval
        while time.time() < end:
            if closed(s):
                print("%.1f" % (time.time() - t0))
                return
            time.sleep(0.05)
    print("open")


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
             float(sys.argv[5]))
    else:
        drip(int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]),
             len(sys.argv) > 5 and sys.argv[5] == "tls")

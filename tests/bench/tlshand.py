#!/usr/bin/python3
# tests/bench/tlshand.py: server CPU per TLS handshake (issue 27's
# multicore note: TLS handshakes are the first work one core runs out
# of). Not part of CI: `tests/bench/run tls` calls it.
#
#	tlshand.py HOST PORT SERVER_PID CAFILE COUNT MODE
#
# MODE full: COUNT new connections, each a full handshake (no session
# offered); MODE resume: one full handshake, then COUNT connections that
# offer its session (a TLS 1.3 ticket, or a TLS 1.2 session ticket);
# full12 and resume12 the same with the client capped at TLS 1.2 (whose
# resumption skips the key exchange that TLS 1.3's psk_dhe_ke keeps). Each
# connection sends one GET of /eureka/v2/none (a 404, a few us of the
# server's time beside the handshake) and reads the answer, so TLS 1.3
# tickets have arrived before the session is taken.
#
# Prints one line "TLS {json}": connections made, how many resumed, the
# server's CPU seconds over them (utime + stime of SERVER_PID from
# /proc, all its threads), CPU per connection in us and the negotiated
# protocol and cipher.

import json
import os
import socket
import ssl
import sys
import time


def cpu_s(pid):
    """User + system CPU seconds of pid so far."""
    with open(f"/proc/{pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


def one(ctx, host, port, session=None):
    """One connection: handshake, a GET, its answer; the SSL socket's
    session and whether it was reused."""
    raw = socket.create_connection((host, port), timeout=30)
    # Without it, a TLS 1.2 resumption's request waits behind the
    # client's Finished for the server's delayed ACK (Nagle): 40 ms.
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
    ver, cip = s.version(), s.cipher()[0]
    s.sendall(b"GET /eureka/v2/none HTTP/1.1\r\nHost: localhost\r\n"
              b"Connection: close\r\n\r\n")
    while s.recv(65536):
        pass
    out = (s.session, s.session_reused, ver, cip)
    s.close()
    return out


def main():
    host, port, pid, ca, count, mode = sys.argv[1:7]
    port, pid, count = int(port), int(pid), int(count)
    ctx = ssl.create_default_context(cafile=ca)
    if mode.endswith("12"):
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        mode = mode[:-2]
    sess = None
    if mode == "resume":
        sess = one(ctx, host, port)[0]
    c0, t0 = cpu_s(pid), time.monotonic()
    reused = 0
    ver = cip = ""
    for _ in range(count):
        s, r, ver, cip = one(ctx, host, port,
                             sess if mode == "resume" else None)
        reused += bool(r)
        if mode == "resume" and s is not None:
            sess = s
    cpu, dt = cpu_s(pid) - c0, time.monotonic() - t0
    print("TLS " + json.dumps({
        "mode": mode, "connections": count, "resumed": reused,
        "server_cpu_s": cpu, "wall_s": dt,
        "cpu_us_per_conn": 1e6 * cpu / count, "protocol": ver,
        "cipher": cip}), flush=True)


if __name__ == "__main__":
    main()

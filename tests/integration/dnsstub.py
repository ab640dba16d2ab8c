#!/usr/bin/python3
# tests/integration/dnsstub.py DIR: a DNS server of the tests' own on
# 127.0.0.1 (UDP, an ephemeral port written to DIR/port), for the peer
# tests that need a name whose addresses change (tests/integration/90-*).
#
# It answers A queries for the names listed in DIR/names, one per line
# as "NAME ADDR ADDR ...", re-read on every query so the test changes the
# answer by rewriting the file; AAAA and other types for those names get
# an empty NOERROR answer, other names NXDOMAIN. While DIR/mute exists it
# answers nothing at all (a DNS server that never answers). Every query
# is appended to DIR/queries ("NAME TYPE answered|muted").
#
# Wire format from RFC 1035 §4.1 (header, question, resource records);
# only the stdlib.
import os
import socket
import struct
import sys

TTL = 1


def qname(msg, off):
    """The question's name (labels, no compression in a query) and the
    offset after it."""
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            break
        if n & 0xC0:
            raise ValueError("compressed name in a question")
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n
    return ".".join(labels), off


def table(d):
    names = {}
    try:
        with open(os.path.join(d, "names")) as f:
            for line in f:
                parts = line.split()
                if parts:
                    names[parts[0].rstrip(".").lower()] = parts[1:]
    except FileNotFoundError:
        pass
    return names


def answer(msg, d):
    qid, flags, qd = struct.unpack("!HHH", msg[:6])
    name, off = qname(msg, 12)
    qtype, qclass = struct.unpack("!HH", msg[off:off + 4])
    question = msg[12:off + 4]          # echoed as asked (0x20 case)
    addrs = table(d).get(name.lower())
    rd = flags & 0x0100
    rcode = 0 if addrs is not None else 3           # NXDOMAIN
    rrs = b""
    n = 0
    if addrs and qtype == 1 and qclass == 1:
        for a in addrs:
            rrs += struct.pack("!HHHIH", 0xC00C, 1, 1, TTL, 4)
            rrs += socket.inet_aton(a)
            n += 1
    hdr = struct.pack("!HHHHHH", qid, 0x8000 | 0x0400 | rd | 0x0080 | rcode,
                      1, n, 0, 0)
    return hdr + question + rrs, name, qtype


def main():
    d = sys.argv[1]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    tmp = os.path.join(d, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(tmp, os.path.join(d, "port"))
    log = open(os.path.join(d, "queries"), "a", buffering=1)
    while True:
        msg, peer = s.recvfrom(4096)
        try:
            reply, name, qtype = answer(msg, d)
        except (ValueError, IndexError, struct.error):
            continue
        if os.path.exists(os.path.join(d, "mute")):
            log.write("%s %d muted\n" % (name, qtype))
            continue
        s.sendto(reply, peer)
        log.write("%s %d answered\n" % (name, qtype))


if __name__ == "__main__":
    main()

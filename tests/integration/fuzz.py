#!/usr/bin/python3
# fuzz.py: a bounded, seeded fuzzer for a running heurekad (used by
# 14-fuzz.sh). Python 3 standard library only.
#
# It sends hostile requests over raw sockets and http.client: random methods
# and paths under every REST base, percent-encoding tricks, huge and broken
# headers, truncated and oversized bodies, mutated JSON/XML registrations,
# mutated replication batches, invalid query parameters, gzip bodies that
# are corrupt or inflate past the body cap, and a bounded number of
# slowloris-style half requests. The rules it checks:
#
#   - no 5xx, except 503 where documented (a full registry);
#   - every 400/405/413/415 carries a reason (a non-empty body);
#   - a 4xx answer to a write leaves the registry exactly as it was (the
#     full registry summary, as hk_snapshot prints it, is compared after
#     every refused write), and writes aimed at the seeded instances are
#     always invalid so they must all be refused;
#   - no request hangs: every answer comes within --timeout seconds, and a
#     probe GET /eureka/apps answers within 1 s even while half requests
#     hold connections open;
#   - the process stays alive and its RSS stays under --rss-max-kb.
#
# The run is reproducible: the seed is printed, and the same seed with the
# same iteration count sends the same requests. Each failure prints the
# request (repr, cut to 600 bytes) so it can be replayed by hand.
#
# At the end, with --flood N, it opens N idle connections (the script has
# lowered the server's descriptor limit below N): the server must serve
# again once some close, keep its log (--log) from flooding and not spin.
#
# Usage: fuzz.py --port PORT --pid PID --seeded APP/ID[,APP/ID...]
#                [--seed N] [--iterations N] [--rss-max-kb N] [--timeout S]
#                [--log FILE --flood N]

import argparse
import gzip
import http.client
import json
import os
import random
import socket
import sys
import time
import urllib.parse
import zlib

import hkfixture

# Issues found by this fuzzer whose fix belongs to the lead-owned files;
# see known(). Emptied as the fixes land.
KNOWN_ISSUES = set()

BASES = ["/eureka/", "/eureka/v2/", "/v2/", "/", "/eureka/v1/", "/v1/",
         "/eureka", "/eureka/V2/", "//eureka//", "/eureka/v3/"]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD"]
ODD_METHODS = ["PATCH", "OPTIONS", "TRACE", "CONNECT", "FOO", "get",
               "G\x00T", "POST POST", "", "PROPFIND", "X" * 300]
WRITES = ("POST", "PUT", "DELETE")
STATUSES = ["UP", "DOWN", "STARTING", "OUT_OF_SERVICE", "UNKNOWN"]
BAD_STATUSES = ["", "BOGUS", "up", "UP ", " UP", "UP%00", "U%00P", "UPP",
                "%ff%fe", "1", "DOWN,UP", "OUT_OF_SERVICE\n", "X" * 5000,
                "%C0%AF", "%", "%zz", "null", "[]"]
BAD_TIMESTAMPS = ["abc", "12abc", "1e5", "0x10", "99999999999999999999999",
                  "-99999999999999999999999", "1.5", "%00", "12%0012",
                  "--1", "1 2", "NaN", "Infinity", "9" * 400]
PCT_TRICKS = ["%00", "%2F", "%2f", "%2e%2e", "..", ".", "%c0%af", "%c0%ae",
              "%e0%80%af", "%", "%1", "%zz", "%%", "%25", "%ff", "%0d%0a",
              "%20", "+", "?", "#", ";", "%3F", "%23", "\\", "%5C",
              "%u002f", "%C0%80", "%ed%a0%80", "%f4%90%80%80", "~", "*"]
SEGMENTS = ["apps", "delta", "instances", "vips", "svips", "status",
            "metadata", "peerreplication", "batch", "asg", "serverinfo",
            "statusoverrides", "heureka", "lastn", "health", "metrics",
            "dashboard", "FZM1", "fzm-1", "FZSEED", "x" * 300,
            "A" * 5000, "\u00e9", "caf\u00e9", "\U0001f600"]


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


class Failure(Exception):
    pass


class Fuzzer:
    def __init__(self, a):
        self.port = a.port
        self.pid = a.pid
        self.timeout = a.timeout
        self.rss_max_kb = a.rss_max_kb
        self.rng = random.Random(a.seed)
        self.seeded = [tuple(s.split("/", 1)) for s in a.seeded.split(",")]
        self.failures = []
        self.stats = {}
        self.accepted = []
        self.rss_peak = 0
        self.probe_max = 0.0
        self.n = 0
        self.state = None
        self.current = None
        self.log_path = a.log
        self.flood_count = a.flood
        self.kind = None
        self.times = {}
        self.half_open = []
        self.bomb_small = gzip.compress(b"\0" * (8 << 20), 9)
        self.bomb_big = gzip.compress(b" " * (64 << 20), 9)

    # ---- transport ------------------------------------------------------

    def raw(self, data, timeout=None, expect_answer=True, half_close=False):
        """Send bytes, read one response; (status or None, headers, body)."""
        t = self.timeout if timeout is None else timeout
        self.current = data
        s = socket.create_connection(("127.0.0.1", self.port), timeout=t)
        buf = b""
        try:
            try:
                s.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            try:
                if half_close:
                    s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            deadline = time.monotonic() + t
            want = None
            while True:
                if time.monotonic() > deadline:
                    if expect_answer and not buf.startswith(b"HTTP/1."):
                        raise socket.timeout()
                    break
                try:
                    c = s.recv(65536)
                except ConnectionResetError:
                    break
                except socket.timeout:
                    if expect_answer and not buf.startswith(b"HTTP/1."):
                        raise
                    break
                if not c:
                    break
                buf += c
                if want is None and b"\r\n\r\n" in buf:
                    head = buf.split(b"\r\n\r\n", 1)[0].lower()
                    want = -1
                    for line in head.split(b"\r\n")[1:]:
                        if line.startswith(b"content-length:"):
                            try:
                                want = len(head) + 4 + int(line[15:])
                            except ValueError:
                                pass
                if want is not None and want >= 0 and len(buf) >= want:
                    break
        finally:
            s.close()
        if not buf.startswith(b"HTTP/1."):
            return None, b"", buf
        head, _, body = buf.partition(b"\r\n\r\n")
        try:
            code = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            return None, head, body
        return code, head, body

    def request(self, method, path, body=None, headers=None, client=None):
        """A well-formed request; raw socket or http.client at random."""
        headers = dict(headers or {})
        if client is None:
            client = self.rng.random() < 0.3
        if client and method in METHODS and all(0x20 < ord(c) < 0x7f for c in method) and \
                all(0x20 < ord(c) < 0x7f for c in path):
            c = http.client.HTTPConnection("127.0.0.1", self.port,
                                           timeout=self.timeout)
            self.current = (method, path, headers, body)
            try:
                c.request(method, path, body=body, headers=headers)
                r = c.getresponse()
                data = r.read() if method != "HEAD" else b""
                return r.status, str(r.headers).encode(), data
            except http.client.HTTPException as e:
                return None, b"", str(e).encode()
            finally:
                c.close()
        if isinstance(path, str):
            path = path.encode("utf-8", "surrogateescape")
        lines = [method.encode("latin-1", "replace") + b" " + path +
                 b" HTTP/1.1", b"Host: 127.0.0.1", b"Connection: close"]
        for k, v in headers.items():
            if isinstance(v, str):
                v = v.encode("latin-1", "replace")
            lines.append(k.encode() + b": " + v)
        if body is not None:
            if not any(k.lower() in ("content-length", "transfer-encoding")
                       for k in headers):
                lines.append(b"Content-Length: %d" % len(body))
        data = b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")
        # libevent leaves the connection open after its 501 to CONNECT,
        # with no Content-Length: take the answer without waiting long.
        return self.raw(data, timeout=None if method in METHODS else 1.0)

    # ---- checks ---------------------------------------------------------

    def fail(self, why, req):
        r = repr(req)
        if len(r) > 600:
            r = r[:600] + "...(%d bytes)" % len(r)
        self.failures.append("%s\n    request: %s" % (why, r))
        log("FUZZ FAIL #%d: %s\n    request: %s" % (self.n, why, r))
        if len(self.failures) >= 20:
            raise Failure("too many failures")

    def known(self, issue, req):
        """A known, reported issue: counted, not failed (FUZZ_STRICT=1
        fails on it too). Remove the entry once the fix lands."""
        hit = False
        if issue == "query-nul":
            # rest.c: a %00 in the query string truncates the decoded
            # value ("value=UP%00X" is taken as UP) instead of a 400.
            q = req[1].partition("?")[2] if isinstance(req, tuple) else ""
            hit = "%00" in q
        if not hit or issue not in KNOWN_ISSUES or \
                os.environ.get("FUZZ_STRICT") == "1":
            return False
        self.stats["KNOWN ISSUE " + issue] = \
            self.stats.get("KNOWN ISSUE " + issue, 0) + 1
        return True

    def snap(self):
        """The registry summary of hk_snapshot (lease times left out)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            c.request("GET", "/eureka/apps",
                      headers={"Accept": "application/json"})
            r = c.getresponse()
            doc = r.read()
            if r.status != 200:
                raise Failure("GET /eureka/apps answered %d" % r.status)
        finally:
            c.close()
        d = json.loads(doc)["applications"]
        out = ["hash=" + d["apps__hashcode"]]
        for a in d["application"]:
            for i in a["instance"]:
                out.append("|".join([a["name"], i.get("instanceId", ""),
                           i["status"], i.get("overriddenStatus", ""),
                           i.get("ipAddr", ""),
                           json.dumps(i.get("metadata"), sort_keys=True),
                           str(i.get("lastDirtyTimestamp", ""))]))
        return sorted(out)

    def alive(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                st = f.read()
        except OSError:
            raise Failure("heurekad (pid %d) is gone" % self.pid)
        for line in st.splitlines():
            if line.startswith("State:") and line.split()[1] in "ZX":
                raise Failure("heurekad (pid %d) exited" % self.pid)
            if line.startswith("VmRSS:"):
                kb = int(line.split()[1])
                self.rss_peak = max(self.rss_peak, kb)
                if kb > self.rss_max_kb:
                    raise Failure("RSS %d kB over the %d kB bound" %
                                  (kb, self.rss_max_kb))

    def probe(self):
        """GET /eureka/apps must answer within 1 s (the loop is free)."""
        t0 = time.monotonic()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            c.request("GET", "/eureka/apps")
            r = c.getresponse()
            r.read()
            code = r.status
        except (OSError, http.client.HTTPException) as e:
            raise Failure("probe GET /eureka/apps failed: %s" % e)
        finally:
            c.close()
        dt = time.monotonic() - t0
        self.probe_max = max(self.probe_max, dt)
        if code != 200 or dt > 1.0:
            raise Failure("probe GET /eureka/apps: %d after %.3f s" %
                          (code, dt))

    def check(self, kind, method, req, res, seeded_target=False,
              may_hang=False, must_answer=True):
        """Apply the rules to one exchange."""
        code, head, body = res
        self.kind = kind
        self.stats[kind] = self.stats.get(kind, 0) + 1
        key = "%s %s" % (kind, code)
        self.stats[key] = self.stats.get(key, 0) + 1
        if code is None:
            if must_answer and not may_hang:
                self.fail("%s: no HTTP answer (%r)" % (kind, body[:100]),
                          req)
            return
        if code == 501 and method not in METHODS:
            # RFC 9110 9.1: an unrecognized or unimplemented method gets
            # 501 (libevent answers it before heurekad sees the request).
            self.stats["501 for method %r" % method[:10]] = 1
        elif code >= 500 and code != 503:
            self.fail("%s: HTTP %d" % (kind, code), req)
        if code == 503 and kind != "register":
            self.fail("%s: undocumented HTTP 503" % kind, req)
        if code in (400, 405, 413, 415) and method != "HEAD" and \
                not body.strip():
            self.fail("%s: HTTP %d without a reason" % (kind, code), req)
        if method not in WRITES:
            return
        if 200 <= code < 300:
            if seeded_target and self.known("query-nul", req):
                pass
            elif seeded_target:
                self.fail("%s: invalid write to a seeded instance got %d"
                          % (kind, code), req)
            self.accepted.append("%s %d" % (kind, code))
            self.state = self.snap()
        elif code >= 400:
            now = self.snap()
            if now != self.state:
                self.fail("%s: HTTP %d but the registry changed:\n      "
                          "before %s\n      after  %s" % (kind, code,
                          sorted(set(self.state) - set(now)),
                          sorted(set(now) - set(self.state))), req)
                self.state = now

    # ---- generators -----------------------------------------------------

    def word(self, n=8):
        r = self.rng
        return "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789-")
                       for _ in range(r.randint(1, n)))

    def mut_app(self):
        return "FZM%d" % self.rng.randint(0, 40)

    def seg(self):
        r = self.rng
        x = r.random()
        if x < 0.45:
            return r.choice(SEGMENTS)
        if x < 0.75:
            return self.word() + r.choice(PCT_TRICKS) + self.word(3)
        if x < 0.85:
            return r.choice(PCT_TRICKS)
        if x < 0.95:
            return "".join(r.choice(PCT_TRICKS) for _ in range(r.randint(1, 6)))
        return self.word() * r.randint(50, 2000)

    def query(self):
        r = self.rng
        if r.random() < 0.5:
            return ""
        parts = []
        for _ in range(r.randint(1, 6)):
            k = r.choice(["value", "lastDirtyTimestamp", "overriddenstatus",
                          "status", self.word(), "", "%00", "a%3Db"])
            v = r.choice(BAD_STATUSES + BAD_TIMESTAMPS + STATUSES +
                         [self.word(), "1700000000000"])
            parts.append(r.choice(["%s=%s", "%s==%s", "%s=%s&"]) % (k, v)
                         if r.random() < 0.9 else k)
        q = "&".join(parts)
        if r.random() < 0.2:
            q = r.choice(["&&&", "=", "==&=", "%", "a=%zz", "a=%00b",
                          "&" * 3000, "k=" + "v" * 20000]) + q
        return "?" + q

    def random_path(self):
        r = self.rng
        path = r.choice(BASES) + "/".join(self.seg() for _ in
                                          range(r.randint(0, 6)))
        return path + self.query()

    def instance_dict(self, app, iid):
        return {"instance": hkfixture.instance(
            app, iid, ip="10.9.9.9", secure_port=8443,
            urls=("http://x/", "http://x/info", "http://x/health"),
            secure_vip=app.lower())}

    def instance_xml(self, app, iid):
        now = str(int(time.time() * 1000))
        return ("<instance><instanceId>%s</instanceId><hostName>%s.example"
                "</hostName><app>%s</app><ipAddr>10.9.9.8</ipAddr>"
                "<status>UP</status><overriddenstatus>UNKNOWN"
                "</overriddenstatus><port enabled=\"true\">8080</port>"
                "<securePort enabled=\"false\">443</securePort>"
                "<countryId>1</countryId><dataCenterInfo class=\"com.netflix"
                ".appinfo.InstanceInfo$DefaultDataCenterInfo\"><name>MyOwn"
                "</name></dataCenterInfo><leaseInfo><renewalIntervalInSecs>30"
                "</renewalIntervalInSecs><durationInSecs>90</durationInSecs>"
                "</leaseInfo><metadata><zone>z1</zone></metadata>"
                "<vipAddress>%s</vipAddress><lastDirtyTimestamp>%s"
                "</lastDirtyTimestamp></instance>" %
                (iid, iid, app, app.lower(), now))

    def bytes_mutate(self, b):
        r = self.rng
        b = bytearray(b)
        for _ in range(r.randint(1, 4)):
            x = r.random()
            if not b:
                break
            i = r.randrange(len(b))
            if x < 0.3:
                b[i] ^= 1 << r.randrange(8)
            elif x < 0.45:
                del b[i:]
            elif x < 0.6:
                b[i:i] = r.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80",
                                   b"\x00", b"\xf8\x88\x80\x80\x80",
                                   b"\xe2\x82", b"\x80"])
            elif x < 0.7:
                j = min(len(b), i + r.randint(1, 50))
                b[i:i] = b[i:j] * r.randint(2, 20)
            elif x < 0.8:
                del b[i:i + r.randint(1, 20)]
            elif x < 0.9:
                b[i:i] = bytes([r.choice(b"{}[]<>\"'\\,:&;=/!?")])
            else:
                b[i] = r.randrange(256)
        return bytes(b)

    def deep(self, n, json_doc):
        if json_doc:
            return "[" * n + "]" * n
        return "<a>" * n + "</a>" * n

    def json_struct_mutate(self, d):
        r = self.rng
        i = d["instance"]
        keys = list(i.keys())
        weird = [None, True, False, 0, -1, 2 ** 63, -2 ** 63, 1e308,
                 1.5, "", "x" * r.choice([300, 5000, 60000]), [], {},
                 [1, 2, 3], {"$": "x"}, {"@enabled": 5}, "\ud800",
                 "\u0000", "\uffff", "a\nb", list(range(100))]
        for _ in range(r.randint(1, 3)):
            x = r.random()
            k = r.choice(keys)
            if x < 0.35:
                i[k] = r.choice(weird)
            elif x < 0.45:
                i.pop(k, None)
            elif x < 0.55:
                i["metadata"] = {"k%d" % n: "v" for n in
                                 range(r.choice([127, 129, 200, 500]))}
            elif x < 0.62:
                i["metadata"] = r.choice([[], "s", 1, {"": "v"},
                                          {"k": {"n": 1}}, {"k": [1]},
                                          {"k": None}, {"a" * 300: "v"}])
            elif x < 0.7:
                i["leaseInfo"] = r.choice([
                    {"durationInSecs": -1}, {"durationInSecs": 2 ** 40},
                    {"renewalIntervalInSecs": "x"}, [], None,
                    {"durationInSecs": 1e99}])
            elif x < 0.78:
                i["port"] = r.choice([{"$": -1}, {"$": 70000}, {"$": "x"},
                                      {"$": 2 ** 70}, "80", [], {}])
            elif x < 0.85:
                i["dataCenterInfo"] = r.choice([
                    None, {}, {"name": ""}, {"name": 5}, {"@class": "x"},
                    {"name": "Amazon", "metadata": "x"},
                    {"name": "Amazon", "metadata": {"k" * 300: "v" * 300}}])
            elif x < 0.92:
                i[self.word()] = r.choice(weird)
            else:
                d = {"instance": d["instance"], "extra": r.choice(weird)}
                if r.random() < 0.5:
                    d = r.choice([[d], {"instance": [i]}, {"instances": i},
                                  i, {"instance": i, "instance2": i}])
                break
        return d

    def gen_register(self):
        """POST a mutated registration for a fresh app (FZM*)."""
        r = self.rng
        app = self.mut_app()
        iid = "fzm-%d" % r.randint(0, 200)
        use_json = r.random() < 0.55
        if use_json:
            d = self.instance_dict(app, iid)
            x = r.random()
            if x < 0.45:
                d = self.json_struct_mutate(d)
            try:
                body = json.dumps(d, ensure_ascii=r.random() < 0.5).encode(
                    "utf-8", "surrogatepass")
            except (TypeError, ValueError):
                body = b"{}"
            if x >= 0.45 or r.random() < 0.3:
                body = self.bytes_mutate(body)
            if r.random() < 0.05:
                body = self.deep(r.choice([100, 1000, 50000]), True).encode()
            ctype = r.choice(["application/json", "application/json",
                              "application/json; charset=utf-8",
                              "application/json; charset=utf-16",
                              "application/JSON;charset=\"iso-8859-1\"",
                              None, "text/plain", "*/*", "application/xml",
                              "", "json" * 1000])
        else:
            body = self.instance_xml(app, iid).encode()
            x = r.random()
            if x < 0.25:
                body = self.xml_attack(app, iid).encode("utf-8",
                                                         "surrogatepass")
            elif x < 0.8:
                body = self.bytes_mutate(body)
            else:
                body = self.xml_struct_mutate(body.decode()).encode(
                    "utf-8", "surrogatepass")
            ctype = r.choice(["application/xml", "application/xml",
                              "text/xml; charset=UTF-8", None, "*/*",
                              "application/xml; charset=windows-1252",
                              "application/json", "application/x-www-form"])
        path = r.choice(BASES[:3]) + "apps/" + app
        if r.random() < 0.05:
            path = r.choice(BASES[:3]) + "apps/" + r.choice(
                ["FZM%00X", "FZM%2FX", "FZM%20X", "FZ M", "%c0%af",
                 "FZM" + "A" * 300, "", "FZM?x=1", "FZM%3F"])
        headers = {}
        if ctype is not None:
            headers["Content-Type"] = ctype
        if r.random() < 0.3:
            headers["Accept"] = r.choice(["application/json",
                                          "application/xml", "*/*", "x"])
        if r.random() < 0.1:
            headers["x-netflix-discovery-replication"] = "true"
        return "POST", path, body, headers

    def xml_attack(self, app, iid):
        r = self.rng
        good = self.instance_xml(app, iid)
        x = r.randint(0, 8)
        if x == 0:
            ents = '<!ENTITY a "aaaaaaaaaa">' + "".join(
                '<!ENTITY %s "%s">' % (chr(98 + k), ("&%s;" % chr(97 + k)) * 10)
                for k in range(9))
            return ('<?xml version="1.0"?><!DOCTYPE instance [%s]>' % ents +
                    good.replace("<hostName>", "<hostName>&j;"))
        if x == 1:
            return ('<!DOCTYPE instance [<!ENTITY x SYSTEM '
                    '"file:///etc/passwd">]>' +
                    good.replace("<hostName>", "<hostName>&x;"))
        if x == 2:
            return ('<!DOCTYPE instance SYSTEM "http://127.0.0.1:1/x.dtd">' +
                    good)
        if x == 3:
            return good.replace("<metadata>", "<metadata>" +
                                self.deep(r.choice([100, 5000, 20000]), False))
        if x == 4:
            return good.replace("<hostName>", "<hostName>" +
                                "x" * r.choice([300, 5000, 60000]))
        if x == 5:
            return good.replace("<metadata>", "<metadata>" + "".join(
                "<k%d>v</k%d>" % (n, n) for n in
                range(r.choice([129, 200, 1000]))))
        if x == 6:
            return good.replace("<hostName>",
                                "<hostName><![CDATA[a]]]]><![CDATA[>b]]>")
        if x == 7:
            return ('<?xml version="1.0" encoding="%s"?>' %
                    r.choice(["UTF-16", "EBCDIC", "x", "ISO-8859-1"]) + good)
        return good.replace("<instance>", '<instance xmlns:a="x" a:b="&#0;'
                            '&#xD800;&#99999999;&#x110000;">')

    def xml_struct_mutate(self, s):
        r = self.rng
        tags = ["instanceId", "hostName", "app", "ipAddr", "status", "port",
                "dataCenterInfo", "name", "leaseInfo", "durationInSecs",
                "metadata", "lastDirtyTimestamp", "countryId"]
        t = r.choice(tags)
        x = r.randint(0, 5)
        if x == 0:
            return s.replace("<%s" % t, "<%sX" % t, 1)
        if x == 1:
            return s.replace("</%s>" % t, "", 1)
        if x == 2:
            return s.replace("<%s>" % t, "<%s>%s" % (t, r.choice(
                ["-1", "99999999999999999999", "\ud800", "&bogus;", "&#0;",
                 "<b/>", "]]>", "\x01", "\uffff"])), 1)
        if x == 3:
            return s + r.choice(["<instance/>", "junk", "\0", "<"])
        if x == 4:
            return s.replace("<%s>" % t, "<%s a=\"1\" a=\"2\">" % t, 1)
        return s.replace("instance>", "instance >", 1)

    def gen_batch(self):
        """POST a mutated replication batch (items for FZM* apps)."""
        r = self.rng
        items = []
        for _ in range(r.choice([0, 1, 2, 5, 20])):
            app = self.mut_app()
            iid = "fzm-%d" % r.randint(0, 200)
            it = {"appName": app, "id": iid,
                  "lastDirtyTimestamp": int(time.time() * 1000),
                  "status": r.choice(STATUSES),
                  "action": r.choice(["Register", "Heartbeat", "Cancel",
                                      "StatusUpdate", "DeleteStatusOverride",
                                      "Bogus", "", "register", None, 5])}
            if it["action"] == "Register" or r.random() < 0.2:
                it["instanceInfo"] = self.instance_dict(app, iid)["instance"]
                if r.random() < 0.4:
                    it["instanceInfo"] = self.json_struct_mutate(
                        {"instance": it["instanceInfo"]})
            if r.random() < 0.3:
                k = r.choice(list(it.keys()))
                it[k] = r.choice([None, [], {}, "", 2 ** 64, -1, "x" * 1000,
                                  "\ud800", 1.5, True])
            items.append(it)
        d = {"replicationList": items}
        x = r.random()
        if x < 0.1:
            d = r.choice([{"replicationList": {}}, {"replicationList": None},
                          [], {"replicationList": [1, "x", None, []]},
                          {"replicationList": [{}] * 3000}])
        try:
            body = json.dumps(d).encode("utf-8", "surrogatepass")
        except (TypeError, ValueError):
            body = b"{}"
        if 0.1 <= x < 0.45:
            body = self.bytes_mutate(body)
        elif 0.45 <= x < 0.5:
            body = b'{"replicationList":' + self.deep(
                r.choice([1000, 100000]), True).encode() + b"}"
        headers = {"Content-Type": "application/json",
                   "x-netflix-discovery-replication": "true"}
        if r.random() < 0.1:
            headers["Content-Encoding"] = "gzip"
            body = gzip.compress(body) if r.random() < 0.7 else \
                self.bytes_mutate(gzip.compress(body))
        path = r.choice(BASES[:3]) + "peerreplication/batch" + \
            r.choice(["", "", "/", "?x=1"])
        return "POST", path, body, headers

    def gen_seeded_query(self):
        """An invalid write aimed at a seeded instance: must be refused.
        While "query-nul" is a known issue such requests would succeed
        and change the seeded instances, so they are only sent with
        FUZZ_STRICT=1."""
        while True:
            m, p = self.gen_seeded_query1()
            if "%00" not in p or "query-nul" not in KNOWN_ISSUES or \
                    os.environ.get("FUZZ_STRICT") == "1":
                return m, p

    def gen_seeded_query1(self):
        r = self.rng
        app, iid = r.choice(self.seeded)
        base = r.choice(BASES[:3]) + "apps/%s/%s" % (app, iid)
        x = r.randint(0, 6)
        if x == 0:
            return "PUT", base + "/status?value=" + r.choice(BAD_STATUSES)
        if x == 1:
            return "PUT", base + "/status?value=%s&lastDirtyTimestamp=%s" % (
                r.choice(STATUSES), r.choice(BAD_TIMESTAMPS))
        if x == 2:
            return "DELETE", base + "/status?value=" + \
                r.choice([s for s in BAD_STATUSES if s != ""])
        if x == 3:
            return "PUT", base + "?lastDirtyTimestamp=" + \
                r.choice(BAD_TIMESTAMPS)
        if x == 4:
            return "PUT", base + "?overriddenstatus=" + \
                r.choice([s for s in BAD_STATUSES if s != ""])
        if x == 5:
            n = r.choice([200, 300, 1000])
            return "PUT", base + "/metadata?" + "&".join(
                "fz%d=%s" % (k, self.word()) for k in range(n))
        return "PUT", base + "/metadata?" + r.choice(
            ["=v", "k=" + "v" * 5000, "k" * 300 + "=v", "a=1&=2",
             "%00=1", "k=a%00b", "k%00x=1"])

    def gen_headers(self):
        """Huge, many, broken headers; odd framing."""
        r = self.rng
        path = r.choice(["/eureka/apps", "/eureka/apps/FZM1",
                         "/eureka/v2/peerreplication/batch", "/"]).encode()
        method = r.choice([b"GET", b"POST", b"PUT"])
        x = r.randint(0, 11)
        body = b""
        hdrs = [b"Host: 127.0.0.1", b"Connection: close"]
        if x == 0:
            hdrs.append(b"X-Big: " + b"a" * r.choice([60000, 70000, 200000]))
        elif x == 1:
            hdrs += [b"X-H%d: v" % k for k in range(r.choice([500, 5000]))]
        elif x == 2:
            hdrs.append(b"NoColonHere")
        elif x == 3:
            hdrs.append(b"Content-Length: " + r.choice(
                [b"-1", b"abc", b"99999999999999999999", b"1, 2", b"",
                 b"0x10", b" 5", b"18446744073709551616"]))
            body = b"{}"
        elif x == 4:
            hdrs += [b"Content-Length: 2", b"Content-Length: 3"]
            body = b"{}"
        elif x == 5:
            hdrs += [b"Transfer-Encoding: chunked"]
            body = r.choice([b"zz\r\n{}\r\n0\r\n\r\n",
                             b"ffffffffffffffffff\r\n{}\r\n0\r\n\r\n",
                             b"-1\r\n\r\n", b"2\r\n{}\r\n",
                             b"2;ext=" + b"x" * 10000 + b"\r\n{}\r\n0\r\n\r\n",
                             b"100000\r\n" + b"x" * 100 + b"\r\n0\r\n\r\n"])
        elif x == 6:
            hdrs += [b"Transfer-Encoding: chunked", b"Content-Length: 2"]
            body = b"2\r\n{}\r\n0\r\n\r\n"
        elif x == 7:
            hdrs.append(b"Accept: " + b"json," * 20000)
        elif x == 8:
            hdrs.append(b"X-Ctl: a\x00b\x7f\xff")
        elif x == 9:
            hdrs.append(b" folded: continuation")
        elif x == 10:
            hdrs.append(b"Content-Type: application/json")
            hdrs.append(b"Content-Length: %d" % (9 << 20))
            body = b"{" * 1000
        else:
            return self.gen_request_line()
        if b"Content-Length" not in b"".join(hdrs) and \
                b"Transfer-Encoding" not in b"".join(hdrs) and body:
            hdrs.append(b"Content-Length: %d" % len(body))
        return method, path + b" HTTP/1.1\r\n" + b"\r\n".join(hdrs) + \
            b"\r\n\r\n" + body

    def gen_request_line(self):
        r = self.rng
        return b"GET", r.choice([
            b"GET /eureka/apps\r\n\r\n",
            b"GET /eureka/apps HTTP/9.9\r\nHost: x\r\n\r\n",
            b"GET /eureka/apps HTTP/1.1 extra\r\n\r\n",
            b"GET  /eureka/apps  HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET http://x/eureka/apps HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET * HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET " + b"/" * 100000 + b" HTTP/1.1\r\n\r\n",
            b"GET /eureka/apps?" + b"a=b&" * 30000 + b" HTTP/1.1\r\n\r\n",
            b"\r\n\r\n\r\n",
            b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\0" * 64,
            b"GET /eureka/apps HTTP/1.1\nConnection: close\n\n",
            b"GET /eureka/\xff\xfe HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET /eureka/apps\x00 HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET /eureka/a\tpps HTTP/1.1\r\nConnection: close\r\n\r\n",
            b"GET /eureka/apps HTTP/1.0\r\n\r\n",
            b"GET ../../etc/passwd HTTP/1.1\r\nConnection: close\r\n\r\n",
            bytes(r.randrange(256) for _ in range(r.randint(1, 400))),
        ])

    def gen_gzip(self):
        """gzip-encoded registrations: valid, corrupt, truncated, bombs."""
        r = self.rng
        app = self.mut_app()
        iid = "fzm-gz%d" % r.randint(0, 50)
        good = json.dumps(self.instance_dict(app, iid)).encode()
        x = r.randint(0, 7)
        enc = "gzip"
        if x == 0:
            body = gzip.compress(good)
        elif x == 1:
            body = self.bytes_mutate(gzip.compress(good))
        elif x == 2:
            z = gzip.compress(good)
            body = z[:r.randint(0, len(z) - 1)]
        elif x == 3:
            body = self.bomb_small
        elif x == 4:
            body = self.bomb_big
        elif x == 5:
            body = zlib.compress(good)
        elif x == 6:
            body = gzip.compress(gzip.compress(good))
        else:
            body = good
            enc = r.choice(["deflate", "br", "gzip, gzip", "GZIP",
                            "x" * 500, "", "identity", "compress"])
        path = r.choice(BASES[:3]) + "apps/" + app
        return "POST", path, body, {"Content-Type": "application/json",
                                    "Content-Encoding": enc}

    # ---- slowloris ------------------------------------------------------

    def slowloris_open(self, count):
        r = self.rng
        for _ in range(count):
            try:
                s = socket.create_connection(("127.0.0.1", self.port),
                                             timeout=2)
                s.sendall(r.choice([
                    b"GET /eureka/apps HTTP/1.1\r\nHost: x\r\nX-A: ",
                    b"POST /eureka/apps/FZM1 HTTP/1.1\r\nContent-Length: "
                    b"1000\r\nContent-Type: application/json\r\n\r\n{\"ins",
                    b"GE", b"",
                    b"POST /eureka/v2/peerreplication/batch HTTP/1.1\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n10\r\nabc"]))
                self.half_open.append(s)
            except OSError as e:
                self.fail("slowloris connect failed: %s" % e, "connect")

    def slowloris_drip(self):
        for s in self.half_open:
            try:
                s.send(b"a")
            except OSError:
                pass

    def slowloris_close(self):
        for s in self.half_open:
            s.close()
        self.half_open = []

    # ---- connection flood -----------------------------------------------

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.pid) as f:
            st = f.read().rsplit(")", 1)[1].split()
        return int(st[11]) + int(st[12])

    def log_lines(self):
        if not self.log_path:
            return 0
        with open(self.log_path, "rb") as f:
            return f.read().count(b"\n")

    def flood(self, count):
        """More idle connections than the server has descriptors (the
        script lowers its RLIMIT_NOFILE): it must keep serving once some
        close, must not flood its log, and should not spin on accept()."""
        lines0 = self.log_lines()
        socks = []
        for _ in range(count):
            try:
                s = socket.create_connection(("127.0.0.1", self.port),
                                             timeout=2)
                s.sendall(b"GET /eureka/apps HTTP/1.1\r\nX-Slow: ")
                socks.append(s)
            except OSError:
                break
        # Measurement windows (time is what is measured): let the
        # connections land, then count CPU ticks over one second.
        time.sleep(0.3)
        c0 = self.cpu_ticks()
        time.sleep(1.0)
        spin = self.cpu_ticks() - c0
        for s in socks[:count // 2]:
            s.close()
        # A server that pauses accepting for a second at the limit (as
        # tmux does) has resumed by now.
        time.sleep(1.2)
        self.probe()
        for s in socks[count // 2:]:
            s.close()
        grown = self.log_lines() - lines0
        log("fuzz: flood of %d connections: %d CPU ticks in 1 s, %d log "
            "lines" % (len(socks), spin, grown))
        self.stats["flood connections"] = len(socks)
        if grown > 100:
            self.fail("%d log lines during a connection flood" % grown,
                      "flood")
        if spin > 20:
            if "accept-spin" in KNOWN_ISSUES and \
                    os.environ.get("FUZZ_STRICT") != "1":
                self.stats["KNOWN ISSUE accept-spin"] = spin
            else:
                self.fail("busy loop at the descriptor limit: %d CPU "
                          "ticks in 1 s" % spin, "flood")
        self.probe()

    # ---- main loop ------------------------------------------------------

    def one(self):
        r = self.rng
        x = r.random()
        if x < 0.22:
            m, p, b, h = self.gen_register()
            self.check("register", m, (m, p, h, b), self.request(m, p, b, h))
        elif x < 0.32:
            m, p, b, h = self.gen_batch()
            self.check("batch", m, (m, p, h, b), self.request(m, p, b, h))
        elif x < 0.44:
            m, p = self.gen_seeded_query()
            self.check("seeded-query", m, (m, p), self.request(m, p),
                       seeded_target=True)
        elif x < 0.64:
            m = r.choice(METHODS) if r.random() < 0.9 else \
                r.choice(ODD_METHODS)
            p = self.random_path()
            body = None
            h = {}
            if m in ("POST", "PUT") and r.random() < 0.5:
                body = self.bytes_mutate(json.dumps(
                    self.instance_dict(self.mut_app(), "fzm-p")).encode())
                h["Content-Type"] = "application/json"
            if r.random() < 0.3:
                h["Accept"] = r.choice(["application/json", "*/*"])
            if r.random() < 0.2:
                h["Accept-Encoding"] = "gzip"
            if r.random() < 0.2:
                h["X-Eureka-Accept"] = "compact"
            self.check("path", m, (m, p, h, body),
                       self.request(m, p, body, h),
                       must_answer=m in METHODS)
        elif x < 0.76:
            m, data = self.gen_headers()
            res = self.raw(data, timeout=1.0, expect_answer=False)
            self.check("headers", m.decode(), data, res, must_answer=False)
        elif x < 0.86:
            m, p, b, h = self.gen_gzip()
            self.check("gzip", m, (m, p, h, len(b)), self.request(m, p, b, h))
        elif x < 0.92:
            # A request line without its end is still arriving, as far
            # as the server knows: no answer is right, the probe checks
            # that the loop is not stuck on it.
            m, data = self.gen_request_line()
            res = self.raw(data, timeout=0.3, expect_answer=False)
            self.check("request-line", "GET", data, res, must_answer=False)
        else:
            self.truncated()

    def truncated(self):
        """A body shorter than its Content-Length; the client gives up."""
        r = self.rng
        app = self.mut_app()
        body = json.dumps(self.instance_dict(app, "fzm-t")).encode()
        cut = body[:r.randint(0, len(body) - 1)]
        data = (b"POST /eureka/apps/%s HTTP/1.1\r\nHost: x\r\nContent-Type: "
                b"application/json\r\nContent-Length: %d\r\n\r\n" %
                (app.encode(), len(body))) + cut
        res = self.raw(data, timeout=0.05, expect_answer=False,
                       half_close=r.random() < 0.5)
        self.kind = "truncated"
        self.stats["truncated"] = self.stats.get("truncated", 0) + 1
        if res[0] is not None:
            self.fail("truncated body answered %d before the body came" %
                      res[0], data)
        now = self.snap()
        if now != self.state:
            self.fail("truncated body changed the registry", data)
            self.state = now

    def run(self, iterations, deadline):
        self.state = self.snap()
        self.probe()
        half_at = iterations // 3
        t0 = time.monotonic()
        for self.n in range(iterations):
            if time.monotonic() > deadline:
                log("fuzz: time budget reached after %d requests" % self.n)
                break
            if self.n == half_at:
                self.slowloris_open(self.rng.randint(20, 60))
            if self.n == 2 * half_at:
                self.slowloris_close()
            t1 = time.monotonic()
            try:
                self.one()
            except (socket.timeout, TimeoutError):
                self.fail("no answer within %.1f s (hang?)" % self.timeout,
                          self.current)
            except ConnectionRefusedError:
                raise Failure("connection refused: heurekad is down")
            dt = time.monotonic() - t1
            self.times[self.kind] = self.times.get(self.kind, 0) + dt
            if dt > 2.0 and self.kind != "request-line":
                log("fuzz: slow (%.1f s) %s: %r" % (dt, self.kind,
                    repr(self.current)[:300]))
            if self.n % 25 == 0:
                self.alive()
                self.probe()
                self.slowloris_drip()
        self.slowloris_close()
        if self.flood_count > 0:
            self.flood(self.flood_count)
        self.alive()
        self.probe()
        return time.monotonic() - t0

    def cleanup(self):
        """Cancel every instance the fuzz registered (not the seeded)."""
        seeded_apps = {a.upper() for a, _ in self.seeded}
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        c.request("GET", "/eureka/apps",
                  headers={"Accept": "application/json"})
        d = json.loads(c.getresponse().read())["applications"]
        c.close()
        n = 0
        for a in d["application"]:
            if a["name"] in seeded_apps:
                continue
            for i in a["instance"]:
                # The id is instanceId, else the AWS instance-id, else
                # the hostName (InstanceInfo.getId()).
                dcm = (i.get("dataCenterInfo") or {}).get("metadata") or {}
                iid = i.get("instanceId") or \
                    (dcm.get("instance-id") if dcm and
                     (i.get("dataCenterInfo") or {}).get("name") == "Amazon"
                     else None) or i.get("hostName", "")
                p = "/eureka/apps/%s/%s" % (
                    urllib.parse.quote(a["name"], safe=""),
                    urllib.parse.quote(iid, safe=""))
                code = self.request("DELETE", p, client=True)[0]
                if code != 200:
                    self.fail("cleanup DELETE answered %s" % code, p)
                n += 1
        return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--seeded", required=True)
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("FUZZ_SEED") or
                                random.SystemRandom().randrange(1 << 31)))
    ap.add_argument("--iterations", type=int,
                    default=int(os.environ.get("FUZZ_ITERATIONS") or 3000))
    ap.add_argument("--time-budget", type=float, default=50.0)
    ap.add_argument("--rss-max-kb", type=int,
                    default=int(os.environ.get("FUZZ_RSS_MAX_KB") or
                                256 * 1024))
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--log", help="the server's log file (flood check)")
    ap.add_argument("--flood", type=int, default=0,
                    help="idle connections to open at the end (0: none)")
    a = ap.parse_args()
    log("fuzz: seed %d, %d iterations (replay: FUZZ_SEED=%d "
        "FUZZ_ITERATIONS=%d)" % (a.seed, a.iterations, a.seed, a.iterations))
    f = Fuzzer(a)
    try:
        secs = f.run(a.iterations, time.monotonic() + a.time_budget)
        cleaned = f.cleanup()
    except Failure as e:
        log("FUZZ FAIL: %s" % e)
        f.failures.append(str(e))
        secs, cleaned = 0, 0
    log("fuzz: %d requests in %.1f s; %d accepted writes (%d instances "
        "cleaned up); RSS peak %d kB; slowest probe %.3f s" %
        (f.n + 1, secs, len(f.accepted), cleaned, f.rss_peak, f.probe_max))
    for k in sorted(f.stats):
        log("  %-28s %d" % (k, f.stats[k]))
    for k in sorted(f.times):
        log("  time %-23s %.1f s" % (k, f.times[k]))
    if f.failures:
        log("fuzz: %d failure(s), seed %d" % (len(f.failures), a.seed))
        for x in f.failures:
            log("  - " + x)
        return 1
    log("fuzz: ok (seed %d)" % a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# tests/diff/gen-heads.py: writes the differential test's corpus
# (tests/diff/heads/, one request stream a file; front_diff.c says how
# they are sent). Run it to regenerate after adding a case here.
import os

H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "heads")
R = "/eureka/apps/A"            # a registration: 64-byte cap in the test
B = "/eureka/peerreplication/batch"  # a batch: 128
I = "/eureka/apps/A/i"          # a heartbeat: no body (1 KiB ignored)


def req(line, hdrs=(), body=b"", eol=b"\r\n"):
    out = line.encode() + eol
    for h in hdrs:
        out += (h.encode() if isinstance(h, str) else h) + eol
    return out + eol + body


CASES = {
    "001-get": req("GET /eureka/apps HTTP/1.1", ["Host: a",
                   "Accept: application/json"]),
    "002-http10": req("GET /eureka/apps HTTP/1.0"),
    "003-http10-keepalive": req("GET /eureka/apps HTTP/1.0",
                                ["Connection: keep-alive"]),
    "004-post-cl": req("POST %s HTTP/1.1" % R, ["Content-Length: 10"],
                       b"0123456789"),
    "005-post-over-cap": req("POST %s HTTP/1.1" % R,
                             ["Content-Length: 65"], b"x" * 65),
    "006-cl-twice-same": req("POST %s HTTP/1.1" % R, ["Content-Length: 5",
                             "Content-Length: 5"], b"hello"),
    "007-cl-twice-differ": req("POST %s HTTP/1.1" % R,
                               ["Content-Length: 5", "Content-Length: 6"],
                               b"hello!"),
    "008-cl-signed": req("POST %s HTTP/1.1" % R, ["Content-Length: +5"],
                         b"hello"),
    "009-cl-list": req("POST %s HTTP/1.1" % R, ["Content-Length: 5, 5"],
                       b"hello"),
    "010-cl-and-te": req("POST %s HTTP/1.1" % R, ["Content-Length: 5",
                         "Transfer-Encoding: chunked"],
                         b"5\r\nhello\r\n0\r\n\r\n"),
    "011-chunked": req("POST %s HTTP/1.1" % R,
                       ["Transfer-Encoding: chunked"],
                       b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
    "012-te-gzip": req("POST %s HTTP/1.1" % R, ["Transfer-Encoding: gzip"]),
    "013-te-twice": req("POST %s HTTP/1.1" % R,
                        ["Transfer-Encoding: chunked",
                         "Transfer-Encoding: chunked"], b"0\r\n\r\n"),
    "014-obs-fold": req("GET /eureka/apps HTTP/1.1", ["X-A: b", " c"]),
    "015-nul-in-value": req("GET /eureka/apps HTTP/1.1", [b"X-A: b\0c"]),
    "016-ctl-in-value": req("GET /eureka/apps HTTP/1.1", [b"X-A: b\x01c"]),
    "017-bare-lf": req("GET /eureka/apps HTTP/1.1", ["Host: a", "X-B: c"],
                       eol=b"\n"),
    "018-bare-cr-in-value": req("GET /eureka/apps HTTP/1.1",
                                [b"X-A: b\rc"]),
    "019-long-header": req("GET /eureka/apps HTTP/1.1",
                           ["X-Long: " + "a" * 70000]),
    "020-absolute-form": req("GET http://h:8080/eureka/apps?x=1 HTTP/1.1",
                             ["Host: h"]),
    "021-absolute-https": req("PUT https://h/eureka/v2/apps/A/i HTTP/1.1"),
    "022-double-slash": req("GET //x/eureka/apps HTTP/1.1"),
    "023-percent-path": req("GET /eureka/%61pps/A%2fb?q=%41+b&k%20=v "
                            "HTTP/1.1"),
    "024-percent-bad": req("GET /eureka/apps/%zz?%zz=%4 HTTP/1.1"),
    "025-pipelined-gets": req("GET /eureka/apps HTTP/1.1", ["Host: a"]) +
    req("GET /eureka/apps/A HTTP/1.1", ["Host: a"]),
    "026-pipelined-post-get": req("POST %s HTTP/1.1" % R,
                                  ["Content-Length: 3"], b"abc") +
    req("GET /eureka/apps HTTP/1.1"),
    "027-expect-continue": req("POST %s HTTP/1.1" % R, [
        "Content-Length: 10", "Expect: 100-continue"], b"0123456789"),
    "028-expect-over-cap": req("POST %s HTTP/1.1" % R, [
        "Content-Length: 100", "Expect: 100-continue"]),
    "029-expect-other": req("POST %s HTTP/1.1" % R, ["Content-Length: 2",
                            "Expect: something"], b"{}"),
    "030-unknown-method": req("BREW /pot HTTP/1.1"),
    "031-unknown-method-body": req("BREW /pot HTTP/1.1",
                                   ["Content-Length: 5"], b"hello"),
    "032-http2": req("GET /eureka/apps HTTP/2.0"),
    "033-http09": b"GET /eureka/apps\r\n\r\n",
    "034-leading-crlf": b"\r\n" + req("GET /eureka/apps HTTP/1.1"),
    "035-reserved-header": req("GET /eureka/apps HTTP/1.1",
                               ["X-Heureka-Guard: 200 x"]),
    "036-space-before-colon": req("GET /eureka/apps HTTP/1.1",
                                  ["Host : a"]),
    "037-tab-in-cl": req("POST %s HTTP/1.1" % R, ["Content-Length:\t5"],
                         b"hello"),
    "038-value-leading-tab": req("GET /eureka/apps HTTP/1.1",
                                 ["X-A:\tv", "X-B:   w"]),
    "039-value-trailing-ws": req("GET /eureka/apps HTTP/1.1",
                                 ["X-A: v  \t ", "X-B: a b"]),
    "040-head-with-body": req("HEAD /eureka/apps HTTP/1.1",
                              ["Content-Length: 5"], b"hello"),
    "041-delete-small-body": req("DELETE %s HTTP/1.1" % I,
                                 ["Content-Length: 2"], b"{}"),
    "042-put-body-over-ignored": req("PUT %s HTTP/1.1" % I,
                                     ["Content-Length: 1025"]),
    "043-chunked-over-cap": req("POST %s HTTP/1.1" % B,
                                ["Transfer-Encoding: chunked"],
                                b"c8\r\n" + b"x" * 200 + b"\r\n0\r\n\r\n"),
    "044-chunked-bad-size": req("POST %s HTTP/1.1" % R,
                                ["Transfer-Encoding: chunked"],
                                b"zz\r\nhello\r\n0\r\n\r\n"),
    "045-chunked-extension": req("POST %s HTTP/1.1" % R,
                                 ["Transfer-Encoding: chunked"],
                                 b"5;a=b\r\nhello\r\n0\r\n\r\n"),
    "046-chunked-trailer": req("POST %s HTTP/1.1" % R,
                               ["Transfer-Encoding: chunked"],
                               b"5\r\nhello\r\n0\r\nX-T: y\r\n\r\n"),
    "047-connection-close": req("GET /eureka/apps HTTP/1.1",
                                ["Connection: close"]),
    "048-batch-at-cap": req("POST %s HTTP/1.1" % B,
                            ["Content-Length: 128"], b"b" * 128),
    "049-no-host": req("GET /eureka/apps HTTP/1.1"),
    "050-many-headers": req("GET /eureka/apps HTTP/1.1",
                            ["X-H%d: v%d" % (i, i) for i in range(100)]),
    "051-cl-leading-zeros": req("POST %s HTTP/1.1" % R,
                                ["Content-Length: 005"], b"hello"),
    "052-cl-huge": req("POST %s HTTP/1.1" % R,
                       ["Content-Length: 99999999999999999999"]),
    "053-empty-value": req("GET /eureka/apps HTTP/1.1", ["X-A:", "X-B: "]),
    "054-lowercase-names": req("post %s HTTP/1.1" % R,
                               ["content-length: 2"], b"{}"),
    "055-empty-query": req("GET /eureka/apps? HTTP/1.1"),
    "056-fragment": req("GET /eureka/apps?a=1#frag HTTP/1.1"),
    "057-options-asterisk": req("OPTIONS * HTTP/1.1"),
    "058-raw-utf8-target": req("GET /eureka/apps/caf\u00e9 HTTP/1.1"),
    "059-pipelined-refusal": req("GET /eureka/apps HTTP/1.1") +
    req("GET /eureka/apps HTTP/1.1", ["Bad Header: x"]),
    "060-unfinished-head": b"GET /eureka/apps HTTP/1.1\r\nHost: a\r\n",
    "061-short-body": req("POST %s HTTP/1.1" % R, ["Content-Length: 10"],
                          b"abc"),
    "062-http10-post-keepalive": req("POST %s HTTP/1.0" % R, [
        "Connection: keep-alive", "Content-Length: 2"], b"{}") +
    req("GET /eureka/apps HTTP/1.0"),
    "063-connect": req("CONNECT h:443 HTTP/1.1"),
    "064-absolute-ipv6": req("GET http://[::1]:8080/eureka/apps HTTP/1.1"),
    "065-te-upper-case": req("POST %s HTTP/1.1" % R,
                             ["transfer-encoding: CHUNKED"],
                             b"2\r\n{}\r\n0\r\n\r\n"),
    "066-chunked-http10": req("POST %s HTTP/1.0" % R,
                              ["Transfer-Encoding: chunked"],
                              b"2\r\n{}\r\n0\r\n\r\n"),
    "067-method-lowercase-get": req("get /eureka/apps HTTP/1.1"),
    "068-two-spaces": req("GET  /eureka/apps HTTP/1.1"),
    "069-del-in-value": req("GET /eureka/apps HTTP/1.1", [b"X-A: b\x7f"]),
    "070-header-no-colon": req("GET /eureka/apps HTTP/1.1", ["Host"]),
    "071-close-keepalive-mixed": req("GET /eureka/apps HTTP/1.1",
                                     ["Connection: keep-alive"]) +
    req("GET /eureka/apps HTTP/1.1", ["Connection: Close"]),
    "072-pipelined-three": req("PUT %s HTTP/1.1" % I) +
    req("PUT %s HTTP/1.1" % I, ["Content-Length: 2"], b"{}") +
    req("GET /eureka/apps/A HTTP/1.1", ["Accept: application/json"]),
    "073-405-with-body": req("PATCH %s HTTP/1.1" % R,
                             ["Content-Length: 2"], b"{}"),
    "074-404-with-body": req("POST /eureka/nothing HTTP/1.1",
                             ["Content-Length: 2"], b"{}"),
    "075-encoded-nul-path-body": req("POST /eureka/apps/A%00 HTTP/1.1",
                                     ["Content-Length: 2"], b"{}"),
}

os.makedirs(H, exist_ok=True)
for name, data in CASES.items():
    with open(os.path.join(H, name), "wb") as f:
        f.write(data)

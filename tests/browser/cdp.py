#!/usr/bin/env python3
"""cdp.py CHROMIUM URL EXPR SECONDS [CHROMIUM-ARGS...]

Open URL in headless Chromium, driven over --remote-debugging-pipe (the
DevTools protocol as NUL-separated JSON on fds 3 and 4: no websocket
library needed), evaluate the JavaScript expression EXPR every 100 ms of
real time until it is truthy, then print the page's DOM and exit 0. Exit 1
(printing the DOM anyway) when SECONDS pass first. Unlike --dump-dom with
--virtual-time-budget, this works with a page that keeps a stream open.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    chromium, url, expr, secs = sys.argv[1:5]
    extra = sys.argv[5:]
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    profile = tempfile.mkdtemp(prefix="hk-cdp-")
    # The child's fds 3 and 4 must be the pipe ends: dup them there
    # (pass_fds keeps those two numbers open after preexec_fn ran).
    def child():
        os.dup2(to_chrome_r, 3)
        os.dup2(from_chrome_w, 4)
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--user-data-dir=" + profile] + extra +
        ["about:blank"],
        preexec_fn=child, pass_fds=(3, 4),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    out = os.fdopen(to_chrome_w, "wb", buffering=0)
    inp = os.fdopen(from_chrome_r, "rb", buffering=0)
    pending = b""
    seq = [0]

    def call(method, params=None, session=None):
        nonlocal pending
        seq[0] += 1
        msg = {"id": seq[0], "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        out.write(json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in pending:
                chunk = inp.read(65536)
                if not chunk:
                    raise SystemExit("cdp: chromium closed the pipe")
                pending += chunk
            raw, pending = pending.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == seq[0]:
                if "error" in reply:
                    raise SystemExit("cdp: %s: %s" % (method, reply["error"]))
                return reply["result"]

    rc = 1
    try:
        tid = call("Target.createTarget", {"url": url})["targetId"]
        sid = call("Target.attachToTarget",
                   {"targetId": tid, "flatten": True})["sessionId"]
        deadline = time.monotonic() + float(secs)
        while time.monotonic() < deadline:
            r = call("Runtime.evaluate",
                     {"expression": "!!(%s)" % expr, "returnByValue": True},
                     sid)
            if r.get("result", {}).get("value") is True:
                rc = 0
                break
            time.sleep(0.1)
        dom = call("Runtime.evaluate",
                   {"expression": "document.documentElement.outerHTML",
                    "returnByValue": True}, sid)
        sys.stdout.write(dom.get("result", {}).get("value", "") + "\n")
        try:
            call("Browser.close")
        except SystemExit:
            pass
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return rc


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""cdp_steps.py CHROMIUM STEPS.json

Drive headless Chromium over --remote-debugging-pipe (as cdp.py does)
through a list of steps, each a JSON array:
  ["open", TAB, URL, HEADERS]  a new tab with extra HTTP headers
                               (an object; {} for none) loading URL
  ["wait", TAB, EXPR, SECS]    until the JavaScript EXPR is truthy
  ["eval", TAB, EXPR]          evaluate EXPR (e.g. a click)
  ["shot", TAB, FILE, W, H]    a PNG screenshot of the page at W x H
Prints each step and exits 1 at the first wait that times out (printing
that tab's DOM), else 0.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time


class CdpError(SystemExit):
    """A DevTools call answered with an error (ends the run unless caught)."""

    def __init__(self, method, error):
        super().__init__("cdp: %s: %s" % (method, error))
        self.error = error

    def navigated(self):
        """The page navigated or its context went while the call ran."""
        msg = str(self.error.get("message", ""))
        return ("navigated or closed" in msg or
                "context was destroyed" in msg or
                "Cannot find context" in msg)


def main():
    chromium, steps_file = sys.argv[1:3]
    steps = json.load(open(steps_file))
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    profile = tempfile.mkdtemp(prefix="hk-cdp-")

    def child():
        os.dup2(to_r, 3)
        os.dup2(from_w, 4)
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--user-data-dir=" + profile,
         "about:blank"],
        preexec_fn=child, pass_fds=(3, 4),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_r)
    os.close(from_w)
    out = os.fdopen(to_w, "wb", buffering=0)
    inp = os.fdopen(from_r, "rb", buffering=0)
    pending = [b""]
    seq = [0]

    def call(method, params=None, session=None):
        seq[0] += 1
        msg = {"id": seq[0], "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        out.write(json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in pending[0]:
                chunk = inp.read(65536)
                if not chunk:
                    raise SystemExit("cdp: chromium closed the pipe")
                pending[0] += chunk
            raw, pending[0] = pending[0].split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == seq[0]:
                if "error" in reply:
                    raise CdpError(method, reply["error"])
                return reply["result"]

    def evaluate(sid, expr):
        r = call("Runtime.evaluate", {"expression": expr,
                                      "returnByValue": True,
                                      "awaitPromise": True}, sid)
        return r.get("result", {}).get("value")

    tabs = {}
    rc = 0
    try:
        for st in steps:
            print("step:", json.dumps(st)[:160], flush=True)
            kind, tab = st[0], st[1]
            if kind == "open":
                tid = call("Target.createTarget",
                           {"url": "about:blank"})["targetId"]
                sid = call("Target.attachToTarget",
                           {"targetId": tid, "flatten": True})["sessionId"]
                call("Network.enable", {}, sid)
                if st[3]:
                    call("Network.setExtraHTTPHeaders",
                         {"headers": st[3]}, sid)
                call("Page.navigate", {"url": st[2]}, sid)
                tabs[tab] = sid
            elif kind == "wait":
                sid = tabs[tab]
                deadline = time.monotonic() + float(st[3])
                while time.monotonic() < deadline:
                    try:
                        if evaluate(sid, "!!(%s)" % st[2]) is True:
                            break
                    except CdpError as e:
                        # A page that navigates (a form that submits
                        # itself) drops the context an evaluation ran
                        # in: not yet, ask the new page.
                        if not e.navigated():
                            raise
                    time.sleep(0.1)
                else:
                    print(evaluate(sid, "document.documentElement."
                                   "outerHTML"))
                    print("timed out waiting for:", st[2])
                    rc = 1
                    break
            elif kind == "eval":
                print("  =", evaluate(tabs[tab], st[2]), flush=True)
            elif kind == "shot":
                sid = tabs[tab]
                call("Emulation.setDeviceMetricsOverride",
                     {"width": st[3], "height": st[4],
                      "deviceScaleFactor": 1, "mobile": False}, sid)
                time.sleep(0.3)
                img = call("Page.captureScreenshot", {"format": "png"}, sid)
                open(st[2], "wb").write(base64.b64decode(img["data"]))
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

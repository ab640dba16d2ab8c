#!/usr/bin/env python3
"""tests/interop/python/interop_test.py: py-eureka-client against heurekad.

Drives py-eureka-client (pinned in requirements.txt) against one running
heurekad whose service URL is $HEUREKA_URL (http://127.0.0.1:PORT/eureka/):
it registers an instance with a 1 s renewal interval, heartbeats, discovers
another application (the client reads the XML registry and follows it with
XML deltas), changes its status and deregisters. Every outcome is read back
from heurekad's REST API (JSON, with urllib), never taken from the client's
own word; the client's calls are only counted (full fetches, deltas,
registrations, heartbeats) by wrapping its module functions.

Prints one "PASS: ..." or "FAIL: ..." line per check and, last,
"INTEROP-SUMMARY name=python pass=N fail=M". Exits 1 if any check failed.
Every wait is bounded (WAIT seconds).

Work-around for a client bug (it shows against Java Eureka too):
EurekaClient.stop() cancels a threading.Timer whose function is an endless
heartbeat loop that has already started, so the loop keeps running and its
next heartbeat, answered 404 after the cancel, re-registers the instance.
The test gates that loop: stop() waits for a heartbeat in flight and turns
the later ones into no-ops.
"""

import asyncio
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

import py_eureka_client.eureka_client as ec
import py_eureka_client.http_client
import py_eureka_client.logger
from py_eureka_client.eureka_client import EurekaClient

# The instance builder the integration helpers share (tests/integration).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "integration"))
import hkfixture  # noqa: E402

URL = os.environ.get("HEUREKA_URL", "http://127.0.0.1:8761/eureka/")
if not URL.endswith("/"):
    URL += "/"
WAIT = float(os.environ.get("INTEROP_WAIT", "10"))

APP = "PY-SVC"
IID = "py-1"
OTHER = "OTHER-APP"

results = {"pass": 0, "fail": 0}


def check(name, ok, detail=""):
    """Count and print one check."""
    if ok:
        results["pass"] += 1
        print("PASS: " + name, flush=True)
    else:
        results["fail"] += 1
        print("FAIL: %s %s" % (name, detail), flush=True)
    return ok


def rest(method, path, body=None, accept="application/json"):
    """One request to heurekad; returns (status, parsed JSON or text)."""
    data = None
    headers = {"Accept": accept}
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(URL + path, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            code, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        code, raw = e.code, e.read()
    text = raw.decode("utf-8", "replace")
    if "json" in accept and text.strip().startswith("{"):
        return code, json.loads(text)
    return code, text


def rest_instance(app, iid):
    """The instance as heurekad's JSON shows it, or None when 404."""
    code, doc = rest("GET", "apps/%s/%s" % (app, iid))
    return doc["instance"] if code == 200 else None


def wait_for(pred, secs=WAIT):
    """Poll pred every 0.1 s until it is truthy; return its last value."""
    deadline = time.monotonic() + secs
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(0.1)


def other_instance(iid, ip, status="UP", meta=None):
    """A registration body for OTHER-APP, as another client would send."""
    home = "http://%s.example:7001/" % iid
    return {"instance": hkfixture.instance(
        OTHER, iid, ip=ip, status=status, port=7001, secure_port=7443,
        metadata={"role": "peer"} if meta is None else meta,
        urls=(home, home + "info", home + "health"),
        secure_vip="other-app")}


class Counter:
    """Wraps a module-level coroutine function of the client and counts
    its calls and failures."""

    def __init__(self, name):
        self.name = name
        self.orig = getattr(ec, name)
        self.calls = 0
        self.errors = []
        self.last_args = None
        self.lock = threading.Lock()
        setattr(ec, name, self.wrapper)

    async def wrapper(self, *args, **kw):
        with self.lock:
            self.calls += 1
            self.last_args = args
        try:
            return await self.orig(*args, **kw)
        except Exception as e:
            with self.lock:
                self.errors.append(repr(e))
            raise

    def count(self):
        with self.lock:
            return self.calls


# Content-Encoding of every response the client got, by path ending.
encodings = {}
_hc = py_eureka_client.http_client.http_client
_orig_urlopen = _hc.urlopen


async def recording_urlopen(request=None, data=None, timeout=None):
    res = await _orig_urlopen(request, data=data, timeout=timeout)
    url = request if isinstance(request, str) else request.url
    path = url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    encodings[path] = res.raw_response.headers.get("content-encoding", "")
    return res
_hc.urlopen = recording_urlopen

full_fetches = Counter("get_applications")
deltas = Counter("get_delta")
registers = Counter("_register")
heartbeats = Counter("send_heartbeat")


def gate_heartbeat_loop(client):
    """Return a function that stops the client's heartbeat loop for good
    (the work-around described at the top of the file)."""
    lock = threading.Lock()
    state = {"stopped": False}
    name = "_EurekaClient__heartbeat"
    orig = getattr(client, name)

    async def gated():
        # The loop runs this on its own event loop in its own thread.
        with lock:
            if not state["stopped"]:
                await orig()

    setattr(client, name, gated)

    def stop_loop():
        with lock:
            state["stopped"] = True
    return stop_loop


def local_app(client, name):
    """The client's local copy of application NAME (None when absent)."""
    apps = client.applications
    if apps is None:
        return None
    for a in apps.applications:
        if a.name == name:
            return a
    return None


def local_instance(client, app, iid):
    """The client's local copy of one instance, or None."""
    a = local_app(client, app)
    return a.get_instance(iid) if a else None


def local_hashcode(client):
    """The reconcile hash code of the client's local registry, computed as
    Eureka clients do (STATUS_count_ sorted by status)."""
    counts = {}
    for a in client.applications.applications:
        for i in a.instances:
            counts[i.status] = counts.get(i.status, 0) + 1
    return "".join("%s_%d_" % (s, counts[s]) for s in sorted(counts))


def compare_instance(label, local, remote):
    """Check that the client's XML-decoded copy equals heurekad's JSON."""
    if not check(label + ": present in the client's registry",
                 local is not None):
        return
    want = {
        "instanceId": remote["instanceId"], "hostName": remote["hostName"],
        "app": remote["app"], "ipAddr": remote["ipAddr"],
        "status": remote["status"],
        "port": (int(remote["port"]["$"]),
                 remote["port"]["@enabled"] == "true"),
        "securePort": (int(remote["securePort"]["$"]),
                       remote["securePort"]["@enabled"] == "true"),
        "vipAddress": remote["vipAddress"],
        "secureVipAddress": remote["secureVipAddress"],
        "countryId": int(remote["countryId"]),
        "dataCenter": remote["dataCenterInfo"]["name"],
        # Java writes an empty map as {"@class": "...EmptyMap"}.
        "metadata": {k: v for k, v in remote["metadata"].items()
                     if k != "@class"},
        "homePageUrl": remote["homePageUrl"],
        "healthCheckUrl": remote["healthCheckUrl"],
        "lastDirtyTimestamp": int(remote["lastDirtyTimestamp"]),
        "durationInSecs": int(remote["leaseInfo"]["durationInSecs"]),
        "registrationTimestamp":
            int(remote["leaseInfo"]["registrationTimestamp"]),
    }
    got = {
        "instanceId": local.instanceId, "hostName": local.hostName,
        "app": local.app, "ipAddr": local.ipAddr, "status": local.status,
        "port": (local.port.port, local.port.enabled),
        "securePort": (local.securePort.port, local.securePort.enabled),
        "vipAddress": local.vipAddress,
        "secureVipAddress": local.secureVipAddress,
        "countryId": local.countryId,
        "dataCenter": local.dataCenterInfo.name,
        "metadata": local.metadata,
        "homePageUrl": local.homePageUrl,
        "healthCheckUrl": local.healthCheckUrl,
        "lastDirtyTimestamp": local.lastDirtyTimestamp,
        "durationInSecs": local.leaseInfo.durationInSecs,
        "registrationTimestamp": local.leaseInfo.registrationTimestamp,
    }
    diff = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
    check(label + ": the XML the client read equals heurekad's JSON",
          not diff, "(want, got): %r" % diff)


def full_fetch_hashcode():
    """apps__hashcode of heurekad's full registry."""
    code, doc = rest("GET", "apps")
    return doc["applications"]["apps__hashcode"] if code == 200 else None


async def scenario():
    """The whole scenario; checks are counted as they go."""
    # Another application, registered by another client.
    code, _ = rest("POST", "apps/" + OTHER,
                   other_instance("other-1", "127.0.0.11",
                                  meta={"role": "peer", "zone": "default"}))
    check("setup: OTHER-APP/other-1 registered over REST", code == 204,
          "HTTP %s" % code)

    client = EurekaClient(
        eureka_server=URL, app_name="py-svc", instance_id=IID,
        instance_host="py-1.example", instance_ip="127.0.0.1",
        instance_port=9090, renewal_interval_in_secs=1, duration_in_secs=10,
        metadata={"lang": "python"})
    stop_loop = gate_heartbeat_loop(client)
    await client.start()

    # 1. register
    ins = rest_instance(APP, IID)
    check("register: heurekad holds PY-SVC/py-1", ins is not None)
    if ins is None:
        return
    check("register: status UP", ins["status"] == "UP", ins["status"])
    check("register: fields as sent",
          ins["hostName"] == "py-1.example" and ins["ipAddr"] == "127.0.0.1"
          and int(ins["port"]["$"]) == 9090
          and ins["port"]["@enabled"] == "true"
          and ins["securePort"]["@enabled"] == "false"
          and ins["vipAddress"] == "py-svc"
          and ins["dataCenterInfo"]["name"] == "MyOwn", json.dumps(ins))
    sent = registers.last_args[1]
    check("register: metadata as sent (ours and the client's own keys)",
          ins["metadata"] == sent["metadata"]
          and ins["metadata"].get("lang") == "python",
          "sent %s, heurekad %s" % (json.dumps(sent["metadata"]),
                                   json.dumps(ins["metadata"])))
    check("register: lease intervals as sent",
          int(ins["leaseInfo"]["renewalIntervalInSecs"]) == 1
          and int(ins["leaseInfo"]["durationInSecs"]) == 10,
          json.dumps(ins["leaseInfo"]))
    reg_ts = ins["leaseInfo"]["registrationTimestamp"]
    renew0 = ins["leaseInfo"]["lastRenewalTimestamp"]

    # 2. heartbeat: the lease is renewed, not re-created.
    hb0 = heartbeats.count()

    def renewed():
        i = rest_instance(APP, IID)
        return (i is not None and heartbeats.count() >= hb0 + 2
                and i["leaseInfo"]["lastRenewalTimestamp"] > renew0 and i)
    ins = wait_for(renewed)
    check("heartbeat: heurekad's lastRenewalTimestamp advances",
          bool(ins), "heartbeats sent: %d" % (heartbeats.count() - hb0))
    if ins:
        check("heartbeat: same lease (registrationTimestamp unchanged)",
              ins["leaseInfo"]["registrationTimestamp"] == reg_ts,
              "%s -> %s" % (reg_ts, ins["leaseInfo"]["registrationTimestamp"]))
    check("heartbeat: every heartbeat answered 200 (no re-registration)",
          not heartbeats.errors and registers.count() == 1,
          "errors %r, registrations %d" % (heartbeats.errors,
                                            registers.count()))

    # 3. discover the other application (full fetch, XML).
    compare_instance("discover other-1",
                     wait_for(lambda: local_instance(client, OTHER,
                                                     "other-1")),
                     rest_instance(OTHER, "other-1"))
    check("discover: the client's own instance is in its registry",
          wait_for(lambda: local_instance(client, APP, IID)) is not None)
    check("discover: local hashcode equals heurekad's apps__hashcode",
          wait_for(lambda: local_hashcode(client) == full_fetch_hashcode()),
          "local %s, heurekad %s" % (local_hashcode(client),
                                     full_fetch_hashcode()))
    url = await client.walk_nodes(OTHER, "/x", walker=lambda u: u)
    check("discover: the client resolves OTHER-APP to its URL",
          url == "http://other-1.example:7001/x", url)

    # 3b. follow changes through XML deltas, with no full-fetch fallback.
    fetches = full_fetches.count()
    d0 = deltas.count()
    code, _ = rest("POST", "apps/" + OTHER,
                   other_instance("other-2", "127.0.0.12", meta={}))
    compare_instance("delta add other-2",
                     wait_for(lambda: local_instance(client, OTHER,
                                                     "other-2")),
                     rest_instance(OTHER, "other-2"))
    code, _ = rest("PUT", "apps/%s/other-2/status?value=OUT_OF_SERVICE"
                   % OTHER)
    st = wait_for(lambda: (local_instance(client, OTHER, "other-2") or
                           ec.Instance()).status == "OUT_OF_SERVICE")
    check("delta: an override made over REST reaches the client", st)
    code, _ = rest("DELETE", "apps/%s/other-2" % OTHER)
    gone = wait_for(lambda: local_app(client, OTHER) is not None and
                    local_instance(client, OTHER, "other-2") is None)
    check("delta: a cancel made over REST reaches the client", gone)
    check("delta: changes came by delta, hashcodes matched (no full fetch)",
          full_fetches.count() == fetches and deltas.count() > d0,
          "full fetches %d -> %d, deltas %d"
          % (fetches, full_fetches.count(), deltas.count() - d0))

    check("gzip: the full registry and the delta came gzipped (the client "
          "asks with Accept-Encoding: gzip)",
          encodings.get("apps") == "gzip" and encodings.get("delta") == "gzip",
          repr(encodings))

    # 4. status change (an override set by the instance itself).
    await client.status_update("OUT_OF_SERVICE")
    ins = rest_instance(APP, IID)
    check("status: heurekad shows OUT_OF_SERVICE",
          ins is not None and ins["status"] == "OUT_OF_SERVICE"
          and ins["overriddenStatus"] == "OUT_OF_SERVICE",
          json.dumps(ins and [ins["status"], ins["overriddenStatus"]]))
    hb0 = heartbeats.count()
    wait_for(lambda: heartbeats.count() >= hb0 + 2)
    ins = rest_instance(APP, IID)
    check("status: OUT_OF_SERVICE holds across heartbeats",
          heartbeats.count() >= hb0 + 2 and ins is not None
          and ins["status"] == "OUT_OF_SERVICE" and registers.count() == 1,
          "heartbeats %d, registrations %d, %s" % (
              heartbeats.count() - hb0, registers.count(),
              ins and ins["status"]))
    check("status: the client sees itself OUT_OF_SERVICE (delta)",
          wait_for(lambda: (local_instance(client, APP, IID) or
                            ec.Instance()).status == "OUT_OF_SERVICE"))
    await client.status_update("UP")
    ins = rest_instance(APP, IID)
    check("status: back to UP",
          ins is not None and ins["status"] == "UP", ins and ins["status"])

    # 4b. deleting the override (no value): Eureka leaves the instance
    # UNKNOWN, answers its next heartbeat 404 and the client re-registers
    # with its own status.
    regs = registers.count()
    nerr = len(heartbeats.errors)
    await client.delete_status_override()

    def reregistered():
        i = rest_instance(APP, IID)
        return (registers.count() > regs and i is not None
                and i["status"] == "UP" and i)
    ins = wait_for(reregistered)
    check("delete override: the next heartbeat answers 404 and the client "
          "re-registers UP",
          bool(ins) and len(heartbeats.errors) > nerr
          and "404" in heartbeats.errors[-1],
          "registrations %d -> %d, heartbeat errors %r"
          % (regs, registers.count(), heartbeats.errors[nerr:]))
    check("delete override: no override left",
          bool(ins) and ins["overriddenStatus"] == "UNKNOWN",
          ins and ins["overriddenStatus"])

    # 4c. the client's basic calls that read single documents (XML).
    vip = await ec.get_vip(URL, "other-app")
    got = sorted(i.instanceId for a in vip.applications for i in a.instances)
    check("vip: vips/other-app (XML) lists other-1", got == ["other-1"],
          repr(got))
    one = await ec.get_app_instance(URL, OTHER, "other-1")
    compare_instance("apps/OTHER-APP/other-1 (XML)", one,
                     rest_instance(OTHER, "other-1"))
    oa = await ec.get_application(URL, "other-app")
    check("application: apps/other-app (XML) names OTHER-APP with other-1",
          oa is not None and oa.name == OTHER
          and [i.instanceId for i in oa.instances] == ["other-1"],
          oa and repr((oa.name, [i.instanceId for i in oa.instances])))

    # 5. deregister (stop: registers DOWN, then cancels).
    seen = {}
    orig_cancel = ec.cancel

    async def cancel_after_down(*args, **kw):
        # What heurekad holds between the DOWN registration and the cancel.
        i = rest_instance(APP, IID)
        seen["status"] = i and i["status"]
        return await orig_cancel(*args, **kw)
    ec.cancel = cancel_after_down
    stop_loop()
    await client.stop()
    check("deregister: the client registers DOWN before it cancels",
          seen.get("status") == "DOWN", repr(seen))
    code, _ = rest("GET", "apps/%s/%s" % (APP, IID))
    check("deregister: GET apps/PY-SVC/py-1 answers 404", code == 404,
          "HTTP %s" % code)
    code, doc = rest("GET", "apps")
    names = [a["name"] for a in doc["applications"]["application"]]
    check("deregister: PY-SVC is gone from the full registry",
          APP not in names and OTHER in names, repr(names))
    code, doc = rest("GET", "apps/delta")
    acts = [(i["instanceId"], i["actionType"])
            for a in doc["applications"]["application"]
            for i in a["instance"] if a["name"] == APP]
    check("deregister: the delta says DELETED", (IID, "DELETED") in acts,
          repr(acts))


def main():
    # The client logs the expected 404 of 4b with tracebacks; keep quiet
    # unless asked (the checks say what went wrong).
    py_eureka_client.logger.set_level(
        "INFO" if os.environ.get("INTEROP_VERBOSE") else "ERROR")
    try:
        asyncio.run(scenario())
    except Exception as e:  # a crash is one more failure, not a silent pass
        import traceback
        traceback.print_exc()
        check("scenario ran to the end", False, repr(e))
    print("INTEROP-SUMMARY name=python pass=%d fail=%d"
          % (results["pass"], results["fail"]), flush=True)
    sys.exit(1 if results["fail"] else 0)


if __name__ == "__main__":
    main()

# hkfixture.py: the one Eureka instance the Python test helpers register,
# full (instance) or the least a registration carries (minimal): for
# stallfetch.py, memload.py, strict.py, fuzz.py, hashflood.py and
# rorefresh.py; tests/bench/run, tests/bench/watch-propagation.py and
# tests/interop/python/interop_test.py put this folder on sys.path, and
# lib.sh puts it on PYTHONPATH for the inline Python of cluster-lib.sh,
# 55-watch.sh, 56-cluster-watch.sh and tests/browser/dashboard-test.sh.
# Python puts a script's own folder first on sys.path, so the helpers
# here import it from wherever they are run (the source tree, an
# out-of-tree build's `bash ../tests/integration/NN-x.sh`, make check,
# make distcheck). What a caller needs different is a parameter; the
# fields come in the order a Java client sends them.
import time

DATA_CENTER = {
    "@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo",
    "name": "MyOwn"}


def now_ms():
    """The wall clock in ms, as a client stamps lastDirtyTimestamp."""
    return int(time.time() * 1000)


def instance(app, iid, host=None, ip="10.0.0.1", status="UP",
             overridden="UNKNOWN", port=8080, secure_port=443,
             metadata=None, urls=None, vip=None, secure_vip=None,
             dirty=None, updated=None, duration=90, **extra):
    """The instance dict (without its {"instance": ...} wrapper) of app
    with id iid. host: iid + ".example" unless given; overridden None
    leaves overriddenstatus out; metadata: {"zone": "z1"} unless given;
    urls: (homePageUrl, statusPageUrl, healthCheckUrl) or None for none;
    vip: app in lower case unless given; secure_vip: also
    secureVipAddress and isCoordinatingDiscoveryServer "false"; dirty:
    lastDirtyTimestamp (now unless given), updated: lastUpdatedTimestamp
    (dirty unless given), both sent as strings; duration: the lease's
    durationInSecs. extra: more fields, or ones that replace these (in
    place, as dict.update does)."""
    dirty = now_ms() if dirty is None else dirty
    i = {"instanceId": iid,
         "hostName": iid + ".example" if host is None else host,
         "app": app, "ipAddr": ip, "status": status}
    if overridden is not None:
        i["overriddenstatus"] = overridden
    i["port"] = {"$": port, "@enabled": "true"}
    i["securePort"] = {"$": secure_port, "@enabled": "false"}
    i["countryId"] = 1
    i["dataCenterInfo"] = dict(DATA_CENTER)
    i["leaseInfo"] = {"renewalIntervalInSecs": 30, "durationInSecs": duration}
    i["metadata"] = {"zone": "z1"} if metadata is None else metadata
    if urls is not None:
        i["homePageUrl"], i["statusPageUrl"], i["healthCheckUrl"] = urls
    i["vipAddress"] = app.lower() if vip is None else vip
    if secure_vip is not None:
        i["secureVipAddress"] = secure_vip
        i["isCoordinatingDiscoveryServer"] = "false"
    i["lastUpdatedTimestamp"] = str(dirty if updated is None else updated)
    i["lastDirtyTimestamp"] = str(dirty)
    i.update(extra)
    return i


def minimal(app, iid, host=None, ip="10.0.0.1", status="UP", **extra):
    """The least a registration carries (no lease, port or timestamps:
    heurekad fills Eureka's defaults), for the callers whose bodies are
    meant to be small; host: iid + ".example" unless given; extra: more
    fields, after these."""
    i = {"instanceId": iid,
         "hostName": iid + ".example" if host is None else host,
         "app": app, "ipAddr": ip, "status": status,
         "dataCenterInfo": dict(DATA_CENTER)}
    i.update(extra)
    return i

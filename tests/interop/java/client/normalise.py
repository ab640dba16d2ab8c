#!/usr/bin/env python3
# normalise.py FILE [compact]: print heurekad's full fetch (GET apps, JSON,
# in FILE) as the normalised lines NetflixClient writes for its local
# registry: one JSON line per instance (sorted), then "hash APPS_HASHCODE".
# With "compact", only the fields the compact codec carries.
import json
import sys

d = json.load(open(sys.argv[1], encoding="utf-8"))["applications"]
compact = len(sys.argv) > 2 and sys.argv[2] == "compact"
out = []
apps = d.get("application", [])
if isinstance(apps, dict):
    apps = [apps]
for a in apps:
    insts = a.get("instance", [])
    if isinstance(insts, dict):
        insts = [insts]
    for i in insts:
        port = i.get("port", {})
        o = {"app": a["name"], "id": i.get("instanceId"), "status": i["status"],
             "ip": i.get("ipAddr"),
             "port": int(port.get("$", 0)) if isinstance(port, dict) else int(port)}
        if not compact:
            o["overridden"] = i.get("overriddenStatus", i.get("overriddenstatus", "UNKNOWN"))
            o["dirty"] = int(i.get("lastDirtyTimestamp", 0))
            md = {k: v for k, v in (i.get("metadata") or {}).items() if k != "@class"}
            o["metadata"] = dict(sorted(md.items()))
        out.append(json.dumps(o, separators=(",", ":"), ensure_ascii=False))
out.sort()
out.append("hash " + d["apps__hashcode"])
print("\n".join(out))

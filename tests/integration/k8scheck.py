#!/usr/bin/python3
# tests/integration/k8scheck.py SRCDIR: the Kubernetes files promise
# what docs/kubernetes.md says (tests/integration/92-k8s-manifests.sh).
# There is no cluster and no helm on the test machines, so:
#  - deploy/kubernetes/*.yaml are parsed (python3-yaml) and checked for
#    the promised fields;
#  - the Helm chart's templates are rendered with its values.yaml by a
#    substitution of the subset of Helm's template language they use
#    ({{ .Values.x }}, .Release/.Chart fields, | quote, | indent N,
#    toYaml ... | nindent N, if ... end, {{- and -}} trimming), which
#    fails on anything else; the result must parse and pass the same
#    checks.
# With OUTDIR, the heurekad.yml of both ConfigMaps is written there
# (kubernetes.yml, helm.yml) for heurekad --check-config.
# Prints one line per file checked; exits 1 with the reasons otherwise.
import glob
import os
import re
import sys

import yaml

ERRORS = []


def need(cond, what):
    if not cond:
        ERRORS.append(what)


def dig(d, *path):
    for p in path:
        if isinstance(d, dict):
            d = d.get(p)
        elif isinstance(d, list) and isinstance(p, int) and p < len(d):
            d = d[p]
        else:
            return None
    return d


OUT = None


def check(objs, where, name="heureka"):
    """The promised fields, whatever produced the objects."""
    kinds = {}
    for o in objs:
        if o:
            kinds.setdefault(o["kind"], []).append(o)
    for k in ("StatefulSet", "Service", "PodDisruptionBudget", "ConfigMap"):
        need(k in kinds, "%s: no %s" % (where, k))
    if ERRORS:
        return
    svcs = {s["metadata"]["name"]: s for s in kinds["Service"]}
    peers = svcs.get(name + "-peers")
    need(peers is not None, "%s: no headless Service %s-peers" %
         (where, name))
    if peers:
        need(dig(peers, "spec", "clusterIP") == "None",
             "%s: %s-peers is not headless" % (where, name))
        need(dig(peers, "spec", "publishNotReadyAddresses") is True,
             "%s: %s-peers must publish not-ready pods" % (where, name))
    client = svcs.get(name)
    need(client is not None and dig(client, "spec", "clusterIP") is None,
         "%s: no client Service %s" % (where, name))
    ss = kinds["StatefulSet"][0]
    need(dig(ss, "spec", "replicas") == 3, "%s: replicas != 3" % where)
    need(dig(ss, "spec", "serviceName") == name + "-peers",
         "%s: serviceName is not the headless Service" % where)
    c = dig(ss, "spec", "template", "spec", "containers", 0) or {}
    rp = dig(c, "readinessProbe", "httpGet", "path")
    need(rp == "/health/readiness",
         "%s: readiness probe %r (heurekad answers 503 there until the "
         "start-up sync is done)" % (where, rp))
    need(dig(c, "livenessProbe", "httpGet", "path") == "/health/liveness",
         "%s: liveness probe" % where)
    for r in ("cpu", "memory"):
        need(dig(c, "resources", "requests", r) is not None,
             "%s: no %s request" % (where, r))
    need(dig(c, "resources", "limits", "memory") is not None,
         "%s: no memory limit" % where)
    mounts = [m.get("mountPath") for m in c.get("volumeMounts", [])]
    need("/etc/heureka" in mounts, "%s: configuration not mounted" % where)
    need("-c /etc/heureka/heurekad.yml" in
         [e.get("value") for e in c.get("env", [])],
         "%s: heurekad not started with the ConfigMap's file" % where)
    pdb = kinds["PodDisruptionBudget"][0]
    need(dig(pdb, "spec", "minAvailable") == 2, "%s: PDB minAvailable" %
         where)
    need(dig(pdb, "spec", "selector", "matchLabels") ==
         dig(ss, "spec", "selector", "matchLabels"),
         "%s: the PDB selects other pods than the StatefulSet" % where)
    cm = [m for m in kinds["ConfigMap"] if m["metadata"]["name"] == name]
    need(len(cm) == 1, "%s: no ConfigMap %s" % (where, name))
    if cm:
        if OUT:
            with open(os.path.join(OUT, where.split("/")[-1].split()[0] +
                                   ".yml"), "w") as f:
                f.write(cm[0]["data"]["heurekad.yml"])
        conf = yaml.safe_load(cm[0]["data"]["heurekad.yml"])
        url = dig(conf, "eureka", "client", "service-url", "defaultZone")
        need(url == "http://%s-peers:8761/eureka/" % name,
             "%s: the peer URL %r is not the headless Service" %
             (where, url))
        need(isinstance(dig(conf, "heureka", "peer",
                            "resolve-interval-ms"), int),
             "%s: no heureka.peer.resolve-interval-ms" % where)
        need(isinstance(dig(conf, "heureka", "drain", "fetch-window-ms"),
                        int),
             "%s: no heureka.drain.fetch-window-ms" % where)


def check_prestop(path):
    with open(path) as f:
        d = yaml.safe_load(f)
    c = dig(d, "spec", "template", "spec", "containers", 0)
    cmd = " ".join(dig(c, "lifecycle", "preStop", "exec", "command") or [])
    need("value=OUT_OF_SERVICE" in cmd and "/drained?wait=" in cmd,
         "%s: the preStop hook does not drain" % path)
    grace = dig(d, "spec", "template", "spec",
                "terminationGracePeriodSeconds") or 30
    waits = [int(w) for w in re.findall(r"wait=(\d+)s", cmd)]
    env = {e["name"]: e.get("value", "") for e in c.get("env", [])}
    n = len(env.get("HEUREKA_SERVERS", "").split())
    need(waits and n and waits[0] * n < grace,
         "%s: %d servers x %s s of wait do not fit the grace period %d" %
         (path, n, waits, grace))


# ------------------------------------------------------------------
# A Helm template subset.

TAG = re.compile(r"\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.S)


def lookup(ctx, ref):
    if not ref.startswith("."):
        raise ValueError("not a field: %s" % ref)
    d = ctx
    for p in ref[1:].split("."):
        if not isinstance(d, dict) or p not in d:
            raise ValueError("no value %s" % ref)
        d = d[p]
    return d


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def evaluate(expr, ctx):
    parts = [p.strip() for p in expr.split("|")]
    head = parts[0].split()
    if head[0] == "toYaml":
        v = lookup(ctx, head[1])
        out = yaml.safe_dump(v, default_flow_style=False).rstrip("\n")
        if out in ("{}", "[]"):
            out = out
    elif len(head) == 1:
        v = lookup(ctx, head[0])
        out = scalar(v)
    else:
        raise ValueError("unsupported: %s" % expr)
    for f in parts[1:]:
        fn = f.split()
        if fn[0] == "quote":
            out = '"%s"' % out.replace('"', '\\"')
        elif fn[0] in ("indent", "nindent"):
            pad = " " * int(fn[1])
            out = "\n".join(pad + line if line else line
                            for line in out.split("\n"))
            if fn[0] == "nindent":
                out = "\n" + out
        else:
            raise ValueError("unsupported function: %s" % f)
    return out


def render(text, ctx):
    """Tokens, then if/end blocks, then substitution with trimming."""
    out, stack, pos = [], [True], 0
    for m in TAG.finditer(text):
        lit = text[pos:m.start()]
        if m.group(1):
            lit = lit.rstrip(" \t\n")
        if all(stack):
            out.append(lit)
        pos = m.end()
        expr = m.group(2)
        if expr.startswith("if "):
            try:
                v = lookup(ctx, expr[3:].strip())
            except ValueError:
                v = None
            stack.append(bool(v))
        elif expr == "end":
            if len(stack) == 1:
                raise ValueError("end without if")
            stack.pop()
        elif all(stack):
            out.append(evaluate(expr, ctx))
        if m.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip(" \t\n"))
    if len(stack) != 1:
        raise ValueError("if without end")
    out.append(text[pos:])
    return "".join(out)


def main():
    global OUT
    src = sys.argv[1]
    OUT = sys.argv[2] if len(sys.argv) > 2 else None
    kdir = os.path.join(src, "deploy", "kubernetes")
    objs = []
    for p in sorted(glob.glob(os.path.join(kdir, "*.yaml"))):
        with open(p) as f:
            docs = list(yaml.safe_load_all(f))
        if os.path.basename(p) == "client-prestop-example.yaml":
            check_prestop(p)
        elif os.path.basename(p) == "kustomization.yaml":
            for r in docs[0]["resources"]:
                need(os.path.exists(os.path.join(kdir, r)),
                     "kustomization: %s is missing" % r)
        else:
            objs += docs
        print("k8scheck: parsed %s" % os.path.relpath(p, src))
    check(objs, "deploy/kubernetes")

    chart = os.path.join(src, "deploy", "helm", "heureka")
    with open(os.path.join(chart, "Chart.yaml")) as f:
        meta = yaml.safe_load(f)
    with open(os.path.join(chart, "values.yaml")) as f:
        values = yaml.safe_load(f)
    ctx = {"Values": values,
           "Release": {"Name": "heureka", "Namespace": "default"},
           "Chart": {"Name": meta["name"], "Version": meta["version"],
                     "AppVersion": meta["appVersion"]}}
    objs = []
    for p in sorted(glob.glob(os.path.join(chart, "templates", "*"))):
        with open(p) as f:
            text = f.read()
        try:
            out = render(text, ctx)
        except ValueError as e:
            ERRORS.append("%s: %s" % (p, e))
            continue
        if p.endswith(".yaml"):
            try:
                objs += [d for d in yaml.safe_load_all(out) if d]
            except yaml.YAMLError as e:
                ERRORS.append("%s renders to invalid YAML: %s\n%s" %
                              (p, e, out))
        print("k8scheck: rendered %s" % os.path.relpath(p, src))
    check(objs, "helm chart")
    # A value documented for every value the chart has.
    with open(os.path.join(chart, "README.md")) as f:
        readme = f.read()
    for k in values:
        need("`%s" % k in readme, "helm README: value %s undocumented" % k)
    for e in ERRORS:
        print("k8scheck:", e)
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())

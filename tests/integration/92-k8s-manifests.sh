#!/bin/sh
# 92-k8s-manifests.sh: deploy/kubernetes/ and the Helm chart carry what
# docs/kubernetes.md promises (k8scheck.py: no cluster and no helm here,
# so the manifests are parsed and the chart's templates rendered by a
# substitution of its values), heurekad accepts both ConfigMaps'
# configuration, and the check itself fails on a manifest that breaks a
# promise.
. "$(dirname "$0")/lib.sh"

src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(hk_tmp)
"$HK_PYTHON" "$src/tests/integration/k8scheck.py" "$src" "$out" ||
    fail "the Kubernetes files do not carry the promised fields"
for f in kubernetes helm; do
	[ -s "$out/$f.yml" ] || fail "no heurekad.yml from the $f ConfigMap"
	"$HEUREKAD" --check-config -c "$out/$f.yml" >"$out/$f.check" 2>&1 ||
	    fail "heurekad refuses the $f ConfigMap: $(cat "$out/$f.check")"
	grep -q "^heureka.peer.resolve-interval-ms=" "$out/$f.check" ||
	    fail "the $f configuration has no resolve interval"
done

# The check bites: a readiness probe on the liveness path, and a chart
# template that does not render, must each fail it.
bad=$(hk_tmp)
mkdir -p "$bad/deploy"
cp -r "$src/deploy/kubernetes" "$src/deploy/helm" "$bad/deploy/"
sed -i 's|path: /health/readiness|path: /health/liveness|' \
    "$bad/deploy/kubernetes/statefulset.yaml"
if "$HK_PYTHON" "$src/tests/integration/k8scheck.py" "$bad" >"$bad/out" 2>&1
then
	fail "k8scheck accepted a readiness probe on /health/liveness"
fi
grep -q "readiness probe" "$bad/out" || fail "k8scheck: $(cat "$bad/out")"
cp "$src/deploy/kubernetes/statefulset.yaml" \
    "$bad/deploy/kubernetes/statefulset.yaml"
echo '{{ .Values.noSuchValue }}' >>"$bad/deploy/helm/heureka/templates/service.yaml"
if "$HK_PYTHON" "$src/tests/integration/k8scheck.py" "$bad" >"$bad/out" 2>&1
then
	fail "k8scheck rendered a template with an unknown value"
fi
hk_log "manifests and chart checked; a broken probe and template refused"

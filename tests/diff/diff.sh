#!/bin/sh
# tests/diff/diff.sh: the front's differential test (front_diff.c says
# how). Runs today's front on the corpus and compares each case with
# what the old path (guard.c + evhttp) answered, tests/diff/expected;
# a case named in tests/diff/intended differs on purpose (the reason is
# on its line) and is compared with tests/diff/expected-new/<case>.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/front-diff.$$
trap 'rm -f "$out"' EXIT
./tests/diff/front_diff "$here/heads" > "$out"
python3 - "$here" "$out" <<'PY'
import os, sys
here, out = sys.argv[1], sys.argv[2]

def cases(path):
    res, name = {}, None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("== "):
            name = line[3:].strip()
            res[name] = []
        elif name is not None and not line.startswith("reject "):
            # The status says the verdict; which code answered it (the
            # guard's, evhttp's own, the front's) is not compared.
            res[name].append(line)
    return res

old, new = cases(os.path.join(here, "expected")), cases(out)
intended = {}
for line in open(os.path.join(here, "intended")):
    if line.strip() and not line.startswith("#"):
        name, why = line.split(":", 1)
        intended[name.strip()] = why.strip()
bad = 0
for name in sorted(set(old) | set(new)):
    if name in intended:
        want = open(os.path.join(here, "expected-new", name)).readlines()
    else:
        want = old.get(name)
    got = new.get(name)
    if want != got:
        bad += 1
        print("DIFFERS: %s\n--- old path\n%s--- front\n%s" % (
            name, "".join(want or ["(missing)\n"]),
            "".join(got or ["(missing)\n"])))
print("%d cases, %d intended differences, %d unexpected" % (
    len(new), len(intended), bad))
sys.exit(1 if bad else 0)
PY

#!/bin/bash
# tests/layers/layers.sh: the layering check (docs/ARCHITECTURE.md) as a
# `make check` test. First the checker's own self-test (a ring, one hidden
# behind a shared _int.h, an upward include, libevent or a clock read in
# the core, a file or function too long must each be caught), then the
# tree itself against every folder's .may_include and
# tests/layers/lengths.allow.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
python3 "$here/check.py" --self-test
python3 "$here/check.py" "$src"

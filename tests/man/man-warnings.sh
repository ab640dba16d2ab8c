#!/bin/sh
# tests/man/man-warnings.sh: every manual page in man/ renders with
# `man --warnings` (groff's warnings on) without a single warning: an
# undefined macro, a bad escape or a broken font request shows there as
# it would for a reader's `man`. Skipped (77) where man or groff is not
# installed.
set -eu
: "${TESTS_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
MANDIR=$TESTS_DIR/../man

if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: man or groff is not installed" >&2
	exit 77
fi
n=0
bad=0
for page in "$MANDIR"/*.[1-9]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	# -l: this file, not an installed page; the text goes nowhere, the
	# warnings (stderr) are kept.
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat man --warnings -l "$page" 2>&1 >/dev/null) || {
		echo "FAIL: man -l $page exited $?: $w" >&2
		bad=1
		continue
	}
	if [ -n "$w" ]; then
		echo "FAIL: $(basename "$page"):" >&2
		echo "$w" | sed 's/^/  /' >&2
		bad=1
	else
		echo "ok: $(basename "$page")" >&2
	fi
done
[ "$n" -gt 0 ] || { echo "FAIL: no page in $MANDIR" >&2; exit 1; }
exit "$bad"

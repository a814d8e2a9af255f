#!/usr/bin/env bash
# The layering test (make check): every #include and every call in user/
# points to its own layer or down, no circles, no file over 700 lines
# (tests/layers/layers.py says which layers there are). Then the tests of
# the test: on a copy of the tree, a planted upward include, a circle of two
# headers and a file of 701 lines must each be caught.
# Closes with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${XRL_OUT:-.output}

out=$(python3 tests/layers/layers.py --tree . --objects "$OUT")
rc=$?
echo "$out"
read -r passed _ failed _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
passed=${passed:-0}
failed=${failed:-1}
((rc != 0 && failed == 0)) && failed=1

# plant an upward include in base/ and a circle of headers in a copy
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrl-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -r user include "$tmp"/
base=$(ls "$tmp"/user/lib/base/*.c | head -n 1)
echo '#include "text/grammar.h"' >>"$base"
if python3 tests/layers/layers.py --tree "$tmp" >"$tmp/out" 2>&1 ||
	! grep -q "$(basename "$base") (base) includes user/lib/text/grammar.h (text)" "$tmp/out"; then
	echo "FAIL an include planted from base/ up into text/ is caught"
	sed 's/^/    /' "$tmp/out"
	failed=$((failed + 1))
else
	echo "ok   an include planted from base/ up into text/ is caught"
	passed=$((passed + 1))
fi
rm -rf "$tmp"/user "$tmp"/include "$tmp"/out
cp -r user include "$tmp"/
printf '#include "b.h"\n' >"$tmp"/user/lib/base/a.h
printf '#include "a.h"\n' >"$tmp"/user/lib/base/b.h
if python3 tests/layers/layers.py --tree "$tmp" 2>&1 | grep -q 'user/lib/base/a.h -> user/lib/base/b.h'; then
	echo "ok   a circle of two headers is caught"
	passed=$((passed + 1))
else
	echo "FAIL a circle of two headers is caught"
	failed=$((failed + 1))
fi

# a file grown past the limit is caught
rm -rf "$tmp"/user "$tmp"/include
cp -r user include "$tmp"/
mkdir -p "$tmp"/bpf
seq 701 | sed 's|^|// |' >"$tmp"/bpf/long.h
if python3 tests/layers/layers.py --tree "$tmp" 2>&1 | grep -q 'bpf/long.h: 701 lines'; then
	echo "ok   a file of 701 lines is caught"
	passed=$((passed + 1))
else
	echo "FAIL a file of 701 lines is caught"
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
((failed == 0))

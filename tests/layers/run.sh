#!/usr/bin/env bash
# The layering test (make check): every #include and every call in user/
# points to its own layer or down, no circles, no file over 700 lines
# (tests/layers/layers.py says which layers there are). Then the tests of
# the test: on a copy of the tree, each kind of wrong arrow planted must be
# caught (a failed check, naming it). Closes with "N passed, N failed".
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
# without the objects the calls go unread: that is no pass
if grep -q '^skip calls' <<<"$out"; then
	echo "FAIL the calls were read (build the library and the programs first)"
	failed=$((failed + 1))
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrl-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# fresh: a copy of the sources (and of the objects) to plant in
fresh() {
	rm -rf "$tmp"/t
	mkdir -p "$tmp"/t
	cp -r user include "$tmp"/t/
	if [[ -d $OUT/lib ]]; then
		mkdir -p "$tmp"/t/obj
		cp -r "$OUT"/lib "$tmp"/t/obj/
	fi
}

# caught WHAT PATTERN: the check on the copy fails and its output matches
caught() {
	local what=$1 pattern=$2 o r
	o=$(python3 tests/layers/layers.py --tree "$tmp"/t --objects "$tmp"/t/obj 2>&1)
	r=$?
	if ((r != 0)) && grep -qE -- "$pattern" <<<"$o"; then
		echo "ok   $what is caught"
		passed=$((passed + 1))
	else
		echo "FAIL $what is caught"
		sed 's/^/    /' <<<"$o"
		failed=$((failed + 1))
	fi
}

# plant_obj FILE CODE: a source of the copy and its object beside the others
plant_obj() {
	local rel=$1 code=$2 obj
	obj=$tmp/t/obj/${rel#user/}
	obj=${obj%.c}.o
	echo "$code" >"$tmp/t/$rel"
	mkdir -p "$(dirname "$obj")"
	cc -c -x c -o "$obj" - <<<"$code" 2>/dev/null ||
		{ echo "    (cannot compile the planted $rel)"; }
}

fresh
base=$(ls "$tmp"/t/user/lib/base/*.c | head -n 1)
echo '#include "text/grammar.h"' >>"$base"
caught "an include from base/ up into text/" "$(basename "$base") \(base\) includes user/lib/text/grammar.h \(text\)"

fresh
base=$(ls "$tmp"/t/user/lib/base/*.c | head -n 1)
echo '#include <maps/xrl.h>' >>"$base"
caught "an angle-bracket include from base/ up into maps/" "$(basename "$base") \(base\) includes user/lib/maps/xrl.h \(maps\)"

fresh
echo '#include "features/upgrade.h"' >>"$tmp"/t/include/xrl_meter.h
caught "an include from include/ up into the library" "include/xrl_meter.h \(common\) includes user/lib/features/upgrade.h"

fresh
printf '#include "b.h"\n' >"$tmp"/t/user/lib/base/a.h
printf '#include "a.h"\n' >"$tmp"/t/user/lib/base/b.h
caught "a circle of two headers" "user/lib/base/a.h -> user/lib/base/b.h"

if [[ -d $OUT/lib ]]; then
	fresh
	plant_obj user/lib/maps/zz_plant.c 'void xrl_replay_free(void *r); void zz_plant(void) { xrl_replay_free(0); }'
	caught "a call from maps/ up into features/" "zz_plant.c \(maps\) calls into user/lib/features/replay.c"

	fresh
	plant_obj user/lib/maps/zz_a.c 'void zz_b(void); void zz_a(void) { zz_b(); }'
	plant_obj user/lib/maps/zz_b.c 'void zz_a(void); void zz_b(void) { zz_a(); }'
	caught "a circle of calls between two files" "user/lib/maps/zz_a.c <-> user/lib/maps/zz_b.c"
fi

fresh
mkdir -p "$tmp"/t/bpf
seq 701 | sed 's|^|// |' >"$tmp"/t/bpf/long.h
caught "a file of 701 lines" "bpf/long.h: 701 lines"

echo "$passed passed, $failed failed"
((failed == 0))

#!/usr/bin/env bash
# make check: the suites that need no root and touch nothing — the metering
# maths with a fake clock, the grammar and the configuration checker, the
# docs against the code (tests/docs/run.sh), the endpoint classes against
# their reference, the minimum kernel's message — closed
# with "N passed, N failed".
cd "$(dirname "$0")/.."
passed=0
failed=0
OUT=${XRL_OUT:-.output}
for t in "$OUT/test_meter" "$OUT/test_grammar" "$OUT/test_classes" "$OUT/test_kernel" tests/docs/run.sh; do
	echo "== $(basename "$t")"
	out=$("$t" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  /'
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
	if [[ -z "$line" ]]; then
		failed=$((failed + 1))
		continue
	fi
	read -r p _ f _ <<<"$line"
	passed=$((passed + p))
	failed=$((failed + f))
	((rc != 0 && f == 0)) && failed=$((failed + 1))
done
echo
echo "$passed passed, $failed failed"
((failed == 0))

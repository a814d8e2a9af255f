#!/usr/bin/env bash
# Coverage-guided fuzzing of the userspace parsers: each libFuzzer target
# (ASan + UBSan) runs FUZZ_TIME seconds (5 by default: the slice of make
# test; make fuzz-parsers gives 300) from a copy of its corpus
# (tests/fuzz/parsers/corpus/TARGET) and first replays every file of
# tests/fuzz/parsers/regress/TARGET (inputs that once failed). A crash
# leaves its input in the work directory, printed. "N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
OUT=${XRL_OUT:-.output}
secs=${FUZZ_TIME:-5}
work=$(mktemp -d "/tmp/${XRL_RUN:-xrl-}fuzzp.XXXXXX")
passed=0
failed=0
for bin in "$OUT"/fuzz/fuzz_*; do
	t=${bin##*/fuzz_}
	mkdir -p "$work/$t"
	cp tests/fuzz/parsers/corpus/"$t"/* "$work/$t/" 2>/dev/null
	reg=(tests/fuzz/parsers/regress/"$t"/*)
	if [[ -e "${reg[0]}" ]] && ! out=$("$bin" "${reg[@]}" 2>&1); then
		echo "$out" | tail -n 30
		echo "FAIL parsers_$t: a regression input fails again"
		failed=$((failed + 1))
		continue
	fi
	out=$("$bin" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$work/$t-" \
		"$work/$t" 2>&1)
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' <<<"$out")
	if ((rc == 0)); then
		echo "ok   parsers_$t: ${runs:-?} inputs in $secs s"
		passed=$((passed + 1))
	else
		echo "$out" | grep -v '^#' | tail -n 40
		echo "FAIL parsers_$t (exit $rc): the input is kept in $work/"
		failed=$((failed + 1))
	fi
done
((failed == 0)) && rm -rf "$work"
echo "$passed passed, $failed failed"

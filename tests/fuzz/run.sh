#!/usr/bin/env bash
# The differential fuzzer's slice of make test: every regression case of
# tests/fuzz/cases/, then FUZZ_SECONDS (15) of frames with a fixed seed and
# as long with a fresh one, printed so that a failure can be repeated:
#   .output/xrl-fuzz --seed SEED --seconds 15
# Closes with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
OUT=${XRL_OUT:-.output}
secs=${FUZZ_SECONDS:-15}
fixed=${FUZZ_SEED:-20261129}
fresh=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
passed=0
failed=0

out=$("$OUT/xrl-fuzz" --replay tests/fuzz/cases/*.case 2>&1)
echo "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed'
read -r p _ f _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-1}))

for seed in "$fixed" "$fresh"; do
	out=$("$OUT/xrl-fuzz" --seed "$seed" --seconds "$secs" --frames 1000000000000 --quiet 2>&1)
	rc=$?
	line=$(grep -E '^[0-9]+ frames, [0-9]+ disagreements$' <<<"$out" | tail -n 1)
	if ((rc == 0)) && [[ "$line" == *", 0 disagreements" ]]; then
		echo "ok   fuzz_seed_$seed: $line in ${secs} s"
		passed=$((passed + 1))
	else
		echo "$out"
		echo "FAIL fuzz_seed_$seed (exit $rc; repeat: $OUT/xrl-fuzz --seed $seed --seconds $secs)"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"

#!/usr/bin/env bash
# sudo tests/bench/fuzz_speed.sh: the differential fuzzer's frames a second,
# a fresh program load for every sequence (--fresh, as it first ran) beside
# one load per table size reset for each sequence (the default), the same
# seed and time, in one run. Both must end with 0 disagreements.
#
# Environment: SECONDS_EACH (30), SEED (20261129), OUT (.output: the build).
set -u
cd "$(dirname "$0")/../.." || exit 1
[[ $(id -u) -eq 0 ]] || { echo "Error: the benchmark needs root" >&2; exit 1; }
BIN=${OUT:-.output}
S=${SECONDS_EACH:-30}
SEED=${SEED:-20261129}
[[ -x $BIN/xrl-fuzz ]] || { echo "Error: $BIN/xrl-fuzz is missing (make all)" >&2; exit 1; }

printf 'differential fuzzer, seed %s, %s s each (%s, %s CPUs, load %s)\n' "$SEED" "$S" \
	"$(uname -r)" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
rc=0
for mode in --fresh ""; do
	out=$("$BIN/xrl-fuzz" $mode --seed "$SEED" --seconds "$S" --frames 1000000000000 --quiet 2>&1) || rc=1
	rate=$(grep -oE '\(([0-9]+) frames/s\)' <<<"$out" | tr -dc 0-9)
	past=$(grep -oE '[0-9]+ frames/s past loading' <<<"$out" | cut -d' ' -f1)
	loads=$(grep -oE '^[0-9]+ programs loaded' <<<"$out" | cut -d' ' -f1)
	last=$(grep -E '^[0-9]+ frames, [0-9]+ disagreements$' <<<"$out")
	printf '%-32s %10s frames/s %10s past loading  %5s loads  %s\n' \
		"${mode:-default (reset)}" "$rate" "$past" "$loads" "$last"
	[[ $last == *", 0 disagreements" ]] || rc=1
	eval "rate_${mode:+fresh}=\$rate"
done
[[ -n ${rate_fresh:-} && ${rate_:-0} -gt 0 && $rate_fresh -gt 0 ]] &&
	printf 'default / --fresh: %.1fx\n' "$(echo "$rate_ / $rate_fresh" | bc -l)"
exit $rc

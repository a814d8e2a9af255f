#!/usr/bin/env bash
# sudo tests/bench/replay.sh: how fast `xdp-rlctl replay` runs a capture of a
# flood, the default path beside the walk it replaced (XRL_REPLAY_WALK=1:
# every key's count, the whole hot-key cache, read after every dropped
# frame), in one run.
#
# The capture (tests/tools/pcapgen.py flood): N frames (1,000,000) a
# microsecond apart, seven in ten from one source over its limit, the rest
# from 256, 1,024 (IPv6) and 65,536 (a spoofed spread under an aggregate)
# sources; ~95 % of the frames are dropped. The walk runs ~100 frames a
# second, so it gets the first WALK_N (2,000) frames of the same flood, and
# the default path gets those too: their JSON outputs must be the same (the
# verdicts, counters and keys unchanged), else the benchmark fails.
#
# frames/s is frames over the wall time of a replay less that of a replay of
# a one-frame capture (loading and verifying the program, ~1.5 s), both
# printed. No interface, no pin: replay runs on a private instance.
#
# Environment: N (1000000), WALK_N (2000), OUT (.output: the build).
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

[[ $(id -u) -eq 0 ]] || { echo "Error: the benchmark needs root" >&2; exit 1; }
command -v jq >/dev/null || { echo "Error: jq is missing (scripts/deps.sh)" >&2; exit 1; }

N=${N:-1000000}
WALK_N=${WALK_N:-2000}
BIN=${OUT:-$TOP/.output}
CTL_BIN=$BIN/xdp-rlctl
GEN=$TOP/tests/tools/pcapgen.py
[[ -x $CTL_BIN ]] || { echo "Error: $CTL_BIN is missing (make all)" >&2; exit 1; }

TMPD=$(mktemp -d "/tmp/${XRL_RUN:-}xrl-bench-replay.XXXXXX") || exit 1
trap 'rm -rf "$TMPD"' EXIT

cat >"$TMPD/rules.conf" <<'EOF'
rule add 198.18.0.0/16 rate 100/s burst 5 id 1
rule add 2001:db8:1::/48 rate 500/s burst 50 id 2
rule add 198.19.0.0/16 rate 10/s burst 5 aggregate 20000/s burst 2000 id 3
EOF

FLOOD_FRAMES=1 python3 "$GEN" flood "$TMPD/one.pcap" || exit 1
FLOOD_FRAMES=$WALK_N python3 "$GEN" flood "$TMPD/prefix.pcap" || exit 1
FLOOD_FRAMES=$N python3 "$GEN" flood "$TMPD/flood.pcap" || exit 1

# run NAME WALK CAPTURE: the wall time in seconds; the JSON in $TMPD/NAME.json
run() {
	local t0 t1
	t0=$(date +%s.%N)
	XRL_REPLAY_WALK=$2 "$CTL_BIN" -j replay "$3" config "$TMPD/rules.conf" >"$TMPD/$1.json" ||
		{ echo "Error: replay $1 failed" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# rate FRAMES SECONDS LOAD: frames/s past the load
rate() {
	local t
	t=$(echo "$2 - $3" | bc -l)
	if (($(echo "$t <= 0" | bc -l))); then
		echo "-"
	else
		printf '%.0f' "$(echo "$1 / $t" | bc -l)"
	fi
}

load=$(run one 0 "$TMPD/one.pcap")
walk=$(run walk 1 "$TMPD/prefix.pcap")
fastp=$(run fastp 0 "$TMPD/prefix.pcap")
fast=$(run fast 0 "$TMPD/flood.pcap")

if ! cmp -s <(jq -S 'del(.capture)' "$TMPD/walk.json") <(jq -S 'del(.capture)' "$TMPD/fastp.json"); then
	echo "Error: the default path and the walk disagree on the first $WALK_N frames:" >&2
	diff <(jq -S 'del(.capture)' "$TMPD/walk.json") <(jq -S 'del(.capture)' "$TMPD/fastp.json") | head -20 >&2
	exit 1
fi
dropped=$(jq .dropped_packets "$TMPD/fast.json")
keys=$(jq '.limited_keys | length' "$TMPD/fast.json")

printf 'replay of a flood (%s, %s CPUs, load %s)\n' "$(uname -r)" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
printf 'loading the program (a one-frame capture): %.2f s\n' "$load"
printf '%-34s %10s %10s %12s\n' path frames wall_s frames/s
printf '%-34s %10s %10.2f %12s\n' "walk (XRL_REPLAY_WALK=1)" "$WALK_N" "$walk" "$(rate "$WALK_N" "$walk" "$load")"
printf '%-34s %10s %10.2f %12s\n' "default" "$WALK_N" "$fastp" "$(rate "$WALK_N" "$fastp" "$load")"
printf '%-34s %10s %10.2f %12s\n' "default" "$N" "$fast" "$(rate "$N" "$fast" "$load")"
w=$(rate "$WALK_N" "$walk" "$load")
f=$(rate "$N" "$fast" "$load")
[[ $w != - && $f != - ]] && printf 'default / walk: %.0fx\n' "$(echo "$f / $w" | bc -l)"
printf 'the %s-frame flood: %s dropped, %s keys limited; the first %s frames: the same JSON on both paths\n' \
	"$N" "$dropped" "$keys" "$WALK_N"

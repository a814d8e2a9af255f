#!/usr/bin/env bash
# The cross-checks with tools nobody here wrote (make bench, part xcheck; or
# alone): xdp-tools' xdp-bench and xdp-trafficgen.
#
#   ns $GEN: s0 ---- veth ---- d0 :ns $RCV   (contender on d0)
#   IPv6, one source 2001:db8::1 to 2001:db8::fe, UDP; xdp-rl's rule per /64,
#   100/s burst 20 (the flood part's rule)
#
# xdpbench  xrl-flood floods d0, where bare XDP_DROP (xdp-ref), xdp-bench
#           drop (native, no-touch: it reads nothing of the packet, as
#           xdp-ref's does not) and xdp-rl run in turn; xdp-bench's own count of
#           packets received is set beside ours (the frames s0 delivered, from
#           the veth's counters) for the same run.
# trafficgen the same flood from xdp-trafficgen udp instead of xrl-flood,
#           against bare XDP_DROP and xdp-rl: the ratio xdp-rl / bare XDP_DROP
#           with each generator, in the same rounds. Both generators are read
#           the same way: d0's XDP packet counter over a window of DUR seconds
#           taken while the generator runs (after 0.3 s of warm-up).
#
# The tools: XDP_TOOLS=DIR (a built xdp-tools tree: DIR/xdp-bench/xdp-bench,
# DIR/xdp-trafficgen/xdp-trafficgen), else the ones on PATH (Debian's
# xdp-tools). Each is probed first on the lab's veth; one that cannot run
# here is reported with its error, and its part skipped. xdp-bench is
# stopped with SIGTERM (it then detaches and prints its totals); d0's XDP
# hook is cleared after it whatever happened, and the lab goes with the
# namespaces. Environment: ROUNDS (3), DUR (1), OUT (.output/bench),
# TG_COUNT (frames per xdp-trafficgen run: (DUR + 0.5) x 8,000,000).
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

[[ $(id -u) -eq 0 ]] || { echo "Error: the benchmark needs root" >&2; exit 1; }

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-1}
OUT=${OUT:-$TOP/.output/bench}
TG_COUNT=${TG_COUNT:-$(echo "($DUR + 0.5) * 8000000 / 1" | bc)}
CTL_BIN=$TOP/.output/xdp-rlctl
FLOOD=$TOP/.output/xrl-flood
XDPREF=$TOP/.output/xdp-ref
SRC6=2001:db8::1
DST6=2001:db8::fe
if [[ -n ${XDP_TOOLS:-} ]]; then
	XDP_BENCH=$XDP_TOOLS/xdp-bench/xdp-bench
	XDP_TRAFFICGEN=$XDP_TOOLS/xdp-trafficgen/xdp-trafficgen
else
	XDP_BENCH=$(command -v xdp-bench)
	XDP_TRAFFICGEN=$(command -v xdp-trafficgen)
fi
source "$TOP/tests/lib/lab.sh"

XB_PID=
TG_PID=
cleanup() {
	set +e
	[[ -n $XB_PID ]] && kill -TERM "$XB_PID" 2>/dev/null && wait "$XB_PID" 2>/dev/null
	[[ -n $TG_PID ]] && kill -TERM "$TG_PID" 2>/dev/null && wait "$TG_PID" 2>/dev/null
	in_dst ip link set dev d0 xdp off 2>/dev/null
	lab_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM
lab_init xc || exit 1
PIN=$LAB_PIN
TMPD=$LAB_TMP
# libxdp (under xdp-bench) finds its bpffs here, not another job's
export LIBXDP_BPFFS=$LAB_BPFFS
RESULTS="$TMPD/xcheck.jsonl"
NOTES="$TMPD/notes"
: >"$RESULTS"
: >"$NOTES"
mkdir -p "$OUT"

log() { printf '%s\n' "$*" >&2; }
ctl() { in_dst "$CTL_BIN" --pin-dir "$PIN" "$@"; }

lab_build -s $SRC6/64 -d $DST6/64 || exit 1

xmit() {	# frames s0 delivered into d0 so far (XDP redirects, and the stack's)
	in_src ethtool -S s0 | awk '/tx_queue_[0-9]+_xdp_xmit:/ { x += $2 } END { print x + 0 }'
}
d0_rx() {	# frames d0's XDP program saw so far
	in_dst ethtool -S d0 | awk '/rx_queue_[0-9]+_xdp_packets:/ { x += $2 } END { print x + 0 }'
}

# ---- contenders ----
setup_xdp_drop() { in_dst "$XDPREF" d0 drop native; }
teardown_xdp_drop() { in_dst "$XDPREF" d0 off; }
setup_xdprl() {
	ctl attach dev d0 mode native >/dev/null 2>&1 &&
		ctl rule add 2001:db8::/32 rate 100/s burst 20 id 1 >/dev/null
}
teardown_xdprl() { ctl detach dev d0 purge >/dev/null; }
# xdp-bench drop, native, in the background; its totals when it stops
setup_xdpbench() {
	# nsenter execs the tool: $! is its pid, for the SIGTERM
	nsenter --net="/run/netns/$DST" "$XDP_BENCH" drop d0 -m native -p no-touch -i 1 >"$TMPD/xdpbench.out" 2>&1 &
	XB_PID=$!
	local i
	for ((i = 0; i < 50; i++)); do
		in_dst ip -j link show dev d0 | jq -e '.[0].xdp != null' >/dev/null 2>&1 && return 0
		kill -0 "$XB_PID" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}
teardown_xdpbench() {
	kill -TERM "$XB_PID" 2>/dev/null
	wait "$XB_PID" 2>/dev/null
	XB_PID=
	# whatever happened to it, d0's hook is left empty
	in_dst ip link set dev d0 xdp off 2>/dev/null
	in_dst ip -j link show dev d0 | jq -e '.[0].xdp == null' >/dev/null ||
		{ log "Error: d0 still has an XDP program after xdp-bench"; return 1; }
}

# probe NAME CMD...: can the tool run here? Its error goes to the notes.
probe_xdpbench() {
	[[ -x $XDP_BENCH ]] || { echo "xdp-bench: not installed" >>"$NOTES"; return 1; }
	if ! setup_xdpbench; then
		teardown_xdpbench
		echo "xdp-bench ($XDP_BENCH) cannot attach here: $(grep -v '^ *$' "$TMPD/xdpbench.out" | tail -n 3 | tr '\n' ' ')" >>"$NOTES"
		return 1
	fi
	teardown_xdpbench
}

# flood_xrl: xrl-flood from one CPU for DUR seconds; prints "frames seconds"
flood_xrl() {
	in_src taskset -c 0 "$FLOOD" -i s0 -m "$DST_MAC" -d $DST6 -s $SRC6 -n 1000000000 -T "$DUR" -j |
		jq -r '"\(.sent) \(.seconds)"'
}

# window GENPID: d0's count over DUR seconds while a generator runs, from
# 0.3 s after its frames start to arrive (a generator may take a while to
# load its programs); prints "frames seconds"
window() {
	local c0 c1 t0 t1 i
	c0=$(d0_rx)
	for ((i = 0; i < 100; i++)); do
		sleep 0.05
		(($(d0_rx) > c0 + 1000)) && break
	done
	sleep 0.3
	c0=$(d0_rx) t0=$(date +%s.%N)
	sleep "$DUR"
	c1=$(d0_rx) t1=$(date +%s.%N)
	kill -0 "$1" 2>/dev/null || { log "Error: the generator stopped before the window closed"; return 1; }
	echo "$((c1 - c0)) $(echo "$t1 - $t0" | bc)"
}

run_xdpbench() {	# ROUND CONTENDER: xrl-flood into d0, one JSON line
	local r=$1 c=$2 x0 x1 gen own=null
	"setup_$c" || { log "Error: cannot set up $c"; "teardown_$c"; return 1; }
	x0=$(xmit)
	gen=$(flood_xrl)
	x1=$(xmit)
	sleep 0.1
	"teardown_$c" || return 1
	if [[ $c == xdpbench ]]; then
		own=$(awk '/Packets received/ { gsub(/,/, "", $4); print $4 }' "$TMPD/xdpbench.out")
		[[ -n $own ]] || { log "Error: no total from xdp-bench: $(tail -n 3 "$TMPD/xdpbench.out")"; return 1; }
	fi
	read -r sent secs <<<"$gen"
	jq -nc --argjson r "$r" --arg c "$c" --argjson delivered $((x1 - x0)) --argjson secs "$secs" \
		--argjson own "$own" '{part: "xdpbench", round: $r, contender: $c, delivered: $delivered,
		 seconds: $secs, mpps: ($delivered / $secs / 1e6), tool_count: $own}' >>"$RESULTS"
	log "   round $r  xdpbench  $c: $(tail -n 1 "$RESULTS" | jq -r '"\(.mpps * 1000 | round / 1000) Mpps\(if .tool_count then ", xdp-bench counted \(.tool_count) of \(.delivered)" else "" end)"')"
}

run_gen() {	# ROUND GENERATOR CONTENDER: one window, one JSON line
	local r=$1 g=$2 c=$3 pid w
	"setup_$c" || { log "Error: cannot set up $c"; return 1; }
	if [[ $g == xrl_flood ]]; then
		nsenter --net="/run/netns/$SRC" taskset -c 0 "$FLOOD" -i s0 -m "$DST_MAC" -d $DST6 -s $SRC6 \
			-n 1000000000 -T "$(echo "$DUR + 1" | bc)" >/dev/null &
	else
		# bounded by count: TG_COUNT frames (at 8 Mpps, the window's
		# 1.3 s and more), and by time
		nsenter --net="/run/netns/$SRC" timeout -s KILL 60 taskset -c 0 "$XDP_TRAFFICGEN" udp s0 \
			-m "$DST_MAC" -a $DST6 -A $SRC6 -p 9 -n "$TG_COUNT" -t 1 >"$TMPD/tg.out" 2>&1 &
	fi
	pid=$!
	[[ $g == trafficgen ]] && TG_PID=$pid
	w=$(window "$pid")
	# xrl-flood stops at its deadline; xdp-trafficgen at its count (a
	# signal waits for its BPF_PROG_RUN call, which is the whole count)
	wait "$pid" 2>/dev/null
	TG_PID=
	"teardown_$c"
	[[ -n $w ]] || return 1
	read -r n secs <<<"$w"
	jq -nc --argjson r "$r" --arg g "$g" --arg c "$c" --argjson n "$n" --argjson secs "$secs" \
		'{part: "trafficgen", round: $r, generator: $g, contender: $c, received: $n,
		  seconds: $secs, mpps: ($n / $secs / 1e6)}' >>"$RESULTS"
	log "   round $r  $g  $c: $(tail -n 1 "$RESULTS" | jq -r '"\(.mpps * 1000 | round / 1000) Mpps"')"
}

# probe_trafficgen: a short run of xdp-trafficgen; its frames must reach d0
probe_trafficgen() {
	[[ -x $XDP_TRAFFICGEN ]] || { echo "xdp-trafficgen: not installed" >>"$NOTES"; return 1; }
	local c0 c1
	setup_xdp_drop
	c0=$(d0_rx)
	in_src timeout -s TERM 10 "$XDP_TRAFFICGEN" udp s0 -m "$DST_MAC" -a $DST6 -A $SRC6 -p 9 -n 10000 -t 1 \
		>"$TMPD/tg.out" 2>&1
	c1=$(d0_rx)
	teardown_xdp_drop
	if ((c1 - c0 < 10000)); then
		echo "xdp-trafficgen ($XDP_TRAFFICGEN) cannot send here ($((c1 - c0)) of 10000 frames arrived): $(grep -v '^ *$' "$TMPD/tg.out" | tail -n 3 | tr '\n' ' ')" >>"$NOTES"
		return 1
	fi
}

XB_OK=0 TG_OK=0
probe_xdpbench && XB_OK=1
probe_trafficgen && TG_OK=1
if ((XB_OK)); then
	log "== xdp-bench drop beside bare XDP_DROP and xdp-rl, $ROUNDS rounds, ${DUR}s each"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in xdp_drop xdpbench xdprl; do
			run_xdpbench "$r" "$c" || exit 1
		done
	done
fi
if ((TG_OK)); then
	log "== xdp-trafficgen against xrl-flood, $ROUNDS rounds, ${DUR}s windows"
	for ((r = 1; r <= ROUNDS; r++)); do
		for g in xrl_flood trafficgen; do
			for c in xdp_drop xdprl; do
				run_gen "$r" "$g" "$c" || exit 1
			done
		done
	done
fi
cp "$RESULTS" "$OUT/xcheck_runs.jsonl"
{
	while read -r line; do
		echo "- skipped: $line"
	done <"$NOTES"
	[[ -s $NOTES ]] && echo
	if ((XB_OK)); then
		echo "| receiver on d0 (xrl-flood, one CPU) | Mpps (median, min–max) | × bare XDP_DROP | xdp-bench's own count ÷ frames delivered |"
		echo "|---|---:|---:|---:|"
		for c in xdp_drop xdpbench xdprl; do
			jq -sr --arg c "$c" '
				def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
				map(select(.part == "xdpbench")) |
				(map(select(.contender == "xdp_drop")) | map({key: (.round | tostring), value: .mpps}) | from_entries) as $d |
				map(select(.contender == $c)) | . as $g | sort_by(.mpps) as $s |
				($g | map(.mpps / $d[.round | tostring]) | median) as $x |
				($g | map(select(.tool_count != null) | .tool_count / .delivered) | median) as $agree |
				{xdp_drop: "bare XDP_DROP (xdp-ref)", xdpbench: "xdp-bench drop (xdp-tools)", xdprl: "xdp-rl native"} as $name |
				"| \($name[$c]) | \($s[($s | length - 1) / 2 | floor].mpps * 1000 | round / 1000) (\($s[0].mpps * 100 | round / 100)–\($s[-1].mpps * 100 | round / 100)) | \($x * 100 | round / 100) | \(if $agree == null then "—" else "\($agree * 1000 | round / 10) %" end) |"' \
				"$RESULTS"
		done
		echo
	fi
	if ((TG_OK)); then
		echo "| generator (IPv6, one source, one CPU) | bare XDP_DROP, Mpps | xdp-rl native, Mpps | xdp-rl ÷ bare XDP_DROP (median, min–max) | ÷ the same with xrl-flood |"
		echo "|---|---:|---:|---:|---:|"
		for g in xrl_flood trafficgen; do
			jq -sr --arg g "$g" '
				def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
				map(select(.part == "trafficgen")) as $all |
				def ratios(gen): [$all[] | select(.generator == gen and .contender == "xdprl")] |
					map(. as $x | [$all[] | select(.generator == gen and .contender == "xdp_drop" and .round == $x.round)][0].mpps as $d |
					    if $d and $d > 0 then $x.mpps / $d else null end) | map(select(. != null));
				(ratios($g)) as $rs | (ratios("xrl_flood")) as $ref |
				([$all[] | select(.generator == $g and .contender == "xdp_drop") | .mpps] | median) as $md |
				([$all[] | select(.generator == $g and .contender == "xdprl") | .mpps] | median) as $mr |
				{xrl_flood: "xrl-flood (this project)", trafficgen: "xdp-trafficgen udp (xdp-tools)"} as $name |
				"| \($name[$g]) | \($md * 1000 | round / 1000) | \($mr * 1000 | round / 1000) | \($rs | median * 1000 | round / 1000) (\($rs | min * 1000 | round / 1000)–\($rs | max * 1000 | round / 1000)) | \(($rs | median) / ($ref | median) * 1000 | round / 1000) |"' \
				"$RESULTS"
		done
		echo
	fi
} >"$OUT/xcheck.md"
cat "$OUT/xcheck.md" >&2

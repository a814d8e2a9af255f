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
#           with each generator, in the same rounds, both measured the same
#           way (below, at window()): the same frames, the same CPU, the
#           offered rate, and the CPU time per packet beside the rate.
#
# The tools: XDP_TOOLS=DIR (a built xdp-tools tree: DIR/xdp-bench/xdp-bench,
# DIR/xdp-trafficgen/xdp-trafficgen), else the ones on PATH (Debian's
# xdp-tools). Each is probed first on the lab's veth; one that cannot run
# here is reported with its error, and its part skipped. xdp-bench is
# stopped with SIGTERM (it then detaches and prints its totals); d0's XDP
# hook is cleared after it whatever happened, and the lab goes with the
# namespaces. Environment: ROUNDS (3), DUR (1), OUT (.output/bench),
# TG_ROUNDS (rounds of the trafficgen half: ROUNDS, at least 5), TG_COUNT
# (frames per xdp-trafficgen run: enough for (DUR + 1.5) s at twice the
# fastest bare XDP_DROP rate of the xdpbench half, 8 Mpps without it: a
# count made for a slower machine ran out before the window closed on a
# faster one), XCHECK_PARTS
# (xdpbench trafficgen: the halves to run).
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-1}
OUT=${OUT:-$TOP/.output/bench}
TG_COUNT=${TG_COUNT:-}
TG_ROUNDS=${TG_ROUNDS:-$((ROUNDS > 5 ? ROUNDS : 5))}
XCHECK_PARTS=${XCHECK_PARTS:-xdpbench trafficgen}
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
source "$TOP/tests/bench/bench_lab.sh"

XB_PID=
TG_PID=
# on exit, before the lab goes: the tools this script started, d0's hook
bench_cleanup_hook() {
	[[ -n $XB_PID ]] && kill -TERM "$XB_PID" 2>/dev/null && wait "$XB_PID" 2>/dev/null
	[[ -n $TG_PID ]] && kill -TERM "$TG_PID" 2>/dev/null && wait "$TG_PID" 2>/dev/null
	in_dst ip link set dev d0 xdp off 2>/dev/null
}
bench_lab_init xc
# libxdp (under xdp-bench) finds its bpffs here, not another job's
export LIBXDP_BPFFS=$LAB_BPFFS
RESULTS="$TMPD/xcheck.jsonl"
NOTES="$TMPD/notes"
: >"$RESULTS"
: >"$NOTES"

lab_build -s $SRC6/64 -d $DST6/64 || exit 1

xmit() {	# frames s0 delivered into d0 so far (XDP redirects, and the stack's)
	in_src ethtool -S s0 | awk '/tx_queue_[0-9]+_xdp_xmit:/ { x += $2 } END { printf "%.0f\n", x }'
}
d0_rx() {	# frames d0's XDP program saw so far
	in_dst ethtool -S d0 | awk '/rx_queue_[0-9]+_xdp_packets:/ { x += $2 } END { printf "%.0f\n", x }'
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

# The trafficgen part measures the same thing with both generators:
# - the same frames: 64 bytes (xdp-trafficgen's size counts the 4-byte FCS),
#   UDP 40000 -> 9, hop limit 64, as xrl-flood builds them;
# - the same CPU: the generator pinned to CPU 0, and d0's NAPI on CPU 0 too
#   (a veth's NAPI runs where the frames were sent, in the generator's own
#   softirq after each BPF_PROG_RUN batch: both generators take the
#   kernel's default batch of 64); the share of NET_RX softirqs on CPU 0 is
#   printed with each run;
# - the same reading: over a window of DUR s, the frames s0 offered (sent,
#   or refused by d0's full ring), the frames d0's program saw, and the CPU
#   time of the generator's threads (schedstat), which holds d0's NAPI as
#   well: the kernel charges a softirq run at bh-enable to the task it
#   interrupts (when it accounts IRQ time apart, CPU 0's softirq time is
#   added instead).
# Two ratios per round: packets a second (the flood table's figure; on a
# busy host it also says how often the neighbours took CPU 0), and CPU
# time per packet, bare's ÷ xdp-rl's: the same ratio as if the generator
# had CPU 0 to itself, which what the neighbours take does not enter.
TG_FRAME=(-s 68 -P 40000 -l 64)
IRQ_TIME=0
{ zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null; } |
	grep -q '^CONFIG_IRQ_TIME_ACCOUNTING=y' && IRQ_TIME=1

offered() {	# frames s0 sent, or tried to (refused by d0's full ring)
	in_src ethtool -S s0 | awk '/tx_queue_[0-9]+_xdp_xmit(_errors)?:/ { x += $2 } END { printf "%.0f\n", x }'
}
tree() {	# PID and its descendants (xdp-trafficgen runs under timeout)
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		tree "$c"
	done
}
cpu_ns() {	# PIDS...: CPU time of their threads so far, ns
	local p f s t=0
	for p in "$@"; do
		for f in /proc/"$p"/task/*/schedstat; do
			read -r s _ 2>/dev/null <"$f" && t=$((t + s))
		done
	done
	# IRQ time accounted apart: CPU 0's softirq time (USER_HZ ticks)
	((IRQ_TIME)) && t=$((t + $(awk '$1 == "cpu0" { print $8 }' /proc/stat) * 1000000000 / $(getconf CLK_TCK)))
	echo $t
}
net_rx() {	# NET_RX softirqs so far: on CPU 0, on all CPUs
	awk '$1 == "NET_RX:" { t = 0; for (i = 2; i <= NF; i++) t += $i; print $2, t }' /proc/softirqs
}
load1() { cut -d' ' -f1 /proc/loadavg; }

# window GENPID: a window of DUR seconds while a generator runs, from 0.3 s
# after its frames start to arrive (a generator may take a while to load
# its programs); prints "received offered seconds cpu_ns netrx_cpu0 netrx_all"
window() {
	local c0 c1 o0 o1 t0 t1 n0 n1 r0 r1 a0 a1 i pids
	c0=$(d0_rx)
	for ((i = 0; i < 100; i++)); do
		sleep 0.05
		(($(d0_rx) > c0 + 1000)) && break
	done
	sleep 0.3
	pids=$(tree "$1")
	# shellcheck disable=SC2086 # a list of pids
	c0=$(d0_rx) o0=$(offered) n0=$(cpu_ns $pids) t0=$(date +%s.%N)
	read -r r0 a0 < <(net_rx)
	sleep "$DUR"
	# shellcheck disable=SC2086
	c1=$(d0_rx) o1=$(offered) n1=$(cpu_ns $pids) t1=$(date +%s.%N)
	read -r r1 a1 < <(net_rx)
	kill -0 "$1" 2>/dev/null || { log "Error: the generator stopped before the window closed"; return 1; }
	echo "$((c1 - c0)) $((o1 - o0)) $(echo "$t1 - $t0" | bc) $((n1 - n0)) $((r1 - r0)) $((a1 - a0))"
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
	read -r _ secs <<<"$gen"
	jq -nc --argjson r "$r" --arg c "$c" --argjson delivered $((x1 - x0)) --argjson secs "$secs" \
		--argjson own "$own" '{part: "xdpbench", round: $r, contender: $c, delivered: $delivered,
		 seconds: $secs, mpps: ($delivered / $secs / 1e6), tool_count: $own}' >>"$RESULTS"
	log "   round $r  xdpbench  $c: $(tail -n 1 "$RESULTS" | jq -r '"\(.mpps * 1000 | round / 1000) Mpps\(if .tool_count then ", xdp-bench counted \(.tool_count) of \(.delivered)" else "" end)"')"
}

# frames for one xdp-trafficgen run (TG_COUNT, above)
tg_count() {
	local mpps
	[[ -n $TG_COUNT ]] && { echo "$TG_COUNT"; return; }
	mpps=$(jq -s 'map(select(.part == "xdpbench" and .contender == "xdp_drop") | .mpps) | max // 4' "$RESULTS" 2>/dev/null)
	echo "($DUR + 1.5) * 2 * ${mpps:-4} * 1000000 / 1" | bc
}

run_gen() {	# ROUND GENERATOR CONTENDER: one window, one JSON line
	local r=$1 g=$2 c=$3 pid w n o secs ns q0 qa
	"setup_$c" || { log "Error: cannot set up $c"; return 1; }
	if [[ $g == xrl_flood ]]; then
		nsenter --net="/run/netns/$SRC" taskset -c 0 "$FLOOD" -i s0 -m "$DST_MAC" -d $DST6 -s $SRC6 \
			-n 1000000000 -T "$(echo "$DUR + 2" | bc)" >/dev/null &
	else
		# bounded by count (tg_count(): the window and more), and by time
		nsenter --net="/run/netns/$SRC" timeout -s KILL 60 taskset -c 0 "$XDP_TRAFFICGEN" udp s0 \
			-m "$DST_MAC" -a $DST6 -A $SRC6 -p 9 "${TG_FRAME[@]}" -n "$(tg_count)" -t 1 >"$TMPD/tg.out" 2>&1 &
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
	read -r n o secs ns q0 qa <<<"$w"
	((n > 0)) || { log "Error: no frame of $g reached d0"; return 1; }
	jq -nc --argjson r "$r" --arg g "$g" --arg c "$c" --argjson n "$n" --argjson o "$o" --argjson secs "$secs" \
		--argjson ns "$ns" --argjson q0 "$q0" --argjson qa "$qa" --argjson load "$(load1)" \
		'{part: "trafficgen", round: $r, generator: $g, contender: $c, received: $n, offered: $o,
		  seconds: $secs, mpps: ($n / $secs / 1e6), offered_mpps: ($o / $secs / 1e6),
		  cpu_ns: ($ns / $n), napi_cpu0: (if $qa > 0 then $q0 / $qa else null end), load: $load}' >>"$RESULTS"
	log "   round $r  $g  $c: $(tail -n 1 "$RESULTS" | jq -r '"\(.mpps * 1000 | round / 1000) Mpps received of \(.offered_mpps * 1000 | round / 1000) offered, \(.cpu_ns * 10 | round / 10) ns of CPU 0 a packet, NET_RX \(if .napi_cpu0 then "\(.napi_cpu0 * 100 | round) %" else "?" end) on CPU 0, load \(.load)"')"
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
[[ " $XCHECK_PARTS " == *" xdpbench "* ]] && probe_xdpbench && XB_OK=1
[[ " $XCHECK_PARTS " == *" trafficgen "* ]] && probe_trafficgen && TG_OK=1
if ((XB_OK)) && [[ " $XCHECK_PARTS " == *" xdpbench "* ]]; then
	log "== xdp-bench drop beside bare XDP_DROP and xdp-rl, $ROUNDS rounds, ${DUR}s each"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in xdp_drop xdpbench xdprl; do
			run_xdpbench "$r" "$c" || exit 1
		done
	done
fi
if ((TG_OK)); then
	log "== xdp-trafficgen against xrl-flood, $TG_ROUNDS rounds, ${DUR}s windows, load $(load1)"
	for ((r = 1; r <= TG_ROUNDS; r++)); do
		# the order turns every round (ABBA), so that a drift of the
		# host's load meets both generators and both contenders alike
		if ((r % 2)); then gens="xrl_flood trafficgen" conts="xdp_drop xdprl"
		else gens="trafficgen xrl_flood" conts="xdprl xdp_drop"; fi
		for g in $gens; do
			for c in $conts; do
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
		echo "| generator (64-byte IPv6 UDP frames, one source; it and d0's NAPI on CPU 0) | offered, Mpps: bare XDP_DROP / xdp-rl | received, Mpps: bare / xdp-rl | CPU 0 a packet, ns: bare / xdp-rl | xdp-rl ÷ bare by rate (median, min–max) | by CPU time (median, min–max) | ÷ xrl-flood's: by rate / by CPU time |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for g in xrl_flood trafficgen; do
			jq -sr --arg g "$g" '
				def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
				def r3: . * 1000 | round / 1000;
				def r1: . * 10 | round / 10;
				map(select(.part == "trafficgen")) as $all |
				def pair(gen): [$all[] | select(.generator == gen and .contender == "xdprl")] |
					map(. as $x | [$all[] | select(.generator == gen and .contender == "xdp_drop" and .round == $x.round)][0] as $d |
					    select($d != null and $d.mpps > 0) | {rate: ($x.mpps / $d.mpps), cpu: ($d.cpu_ns / $x.cpu_ns)});
				def med(gen; c; f): [$all[] | select(.generator == gen and .contender == c) | f] | median;
				pair($g) as $p | pair("xrl_flood") as $ref |
				{xrl_flood: "xrl-flood (this project)", trafficgen: "xdp-trafficgen udp (xdp-tools)"} as $name |
				"| \($name[$g]) | \(med($g; "xdp_drop"; .offered_mpps) | r3) / \(med($g; "xdprl"; .offered_mpps) | r3) | \(med($g; "xdp_drop"; .mpps) | r3) / \(med($g; "xdprl"; .mpps) | r3) | \(med($g; "xdp_drop"; .cpu_ns) | r1) / \(med($g; "xdprl"; .cpu_ns) | r1) | \($p | map(.rate) | median | r3) (\($p | map(.rate) | min | r3)–\($p | map(.rate) | max | r3)) | \($p | map(.cpu) | median | r3) (\($p | map(.cpu) | min | r3)–\($p | map(.cpu) | max | r3)) | \(($p | map(.rate) | median) / ($ref | map(.rate) | median) | r3) / \(($p | map(.cpu) | median) / ($ref | map(.cpu) | median) | r3) |"' \
				"$RESULTS"
		done
		echo
		jq -sr '
			map(select(.part == "trafficgen")) as $all |
			($all | map(.load) | min) as $lmin | ($all | map(.load) | max) as $lmax |
			($all | map(.napi_cpu0 // empty)) as $q |
			def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
			# xdp-rl ÷ bare in each round, median: by CPU time (bare'"'"'s ns ÷
			# xdp-rl'"'"'s), or by rate
			def ratio(gen; by_cpu): [$all[] | select(.generator == gen and .contender == "xdprl")] |
				map(. as $x | [$all[] | select(.generator == gen and .contender == "xdp_drop" and .round == $x.round)][0] as $d |
				    select($d != null and $d.mpps > 0) | if by_cpu then $d.cpu_ns / $x.cpu_ns else $x.mpps / $d.mpps end) | median;
			def off(gen): [$all[] | select(.generator == gen and .contender == "xdp_drop") | .offered_mpps] | median * 1000 | round / 1000;
			(ratio("trafficgen"; true) / ratio("xrl_flood"; true)) as $quot |
			"Offered (bare XDP_DROP runs, median): xrl-flood \(off("xrl_flood")) Mpps, xdp-trafficgen \(off("trafficgen")) Mpps. xdp-rl ÷ bare by CPU time: xrl-flood \(ratio("xrl_flood"; true) * 1000 | round / 1000), xdp-trafficgen \(ratio("trafficgen"; true) * 1000 | round / 1000) (\($quot * 1000 | round / 1000)×: \(if $quot >= 0.9 and $quot <= 1.1 then "within" else "not within" end) 10 %); by rate: \(ratio("xrl_flood"; false) * 1000 | round / 1000) and \(ratio("trafficgen"; false) * 1000 | round / 1000).",
			"\($all | map(.round) | max) rounds of \($all | length / (map(.round) | max) | floor) runs; NET_RX softirqs on CPU 0 (where the generator runs): \($q | min * 100 | round)\(if ($q | min * 100 | round) == ($q | max * 100 | round) then "" else "–\($q | max * 100 | round)" end) % of each run'"'"'s; load average (1 min) \($lmin)–\($lmax) during the rounds."' \
			"$RESULTS"
		echo
	fi
} >"$OUT/xcheck.md"
cat "$OUT/xcheck.md" >&2

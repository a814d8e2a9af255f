#!/usr/bin/env bash
# sudo make demo: a throwaway lab, the limiter attached by its daemon, and a
# flood watched while it happens: each rule's rates, top, show, the live
# events and the metrics; then what passed against what the rule allows.
#
#   ns $SRC: s0 198.18.0.1 (abusive), .2 and .3 (polite)  ---veth---  ns $DST: d0 (xdp-rl)
#
# Everything lives in namespaces this script creates, the pins in a private
# bpffs; all of it is removed when the demo ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $(id -u) -eq 0 ]] || { echo "Error: the demo needs root (sudo make demo)" >&2; exit 1; }

source tests/lib/lab.sh
CTL_BIN=$PWD/.output/xdp-rlctl
RLD_BIN=$PWD/.output/xdp-rld
FLOOD=$PWD/.output/udpflood
SECONDS_TO_RUN=${DEMO_SECONDS:-12}
PIDS=()
RLD_PID=

cleanup() {
	set +e
	# a sender is a subshell: its sender (nsenter, exec'd) first
	for p in "${PIDS[@]}"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	[[ -n "$RLD_PID" ]] && kill "$RLD_PID" 2>/dev/null	# detaches, removes the pins
	wait 2>/dev/null
	lab_cleanup
	echo "lab removed"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

lab_init -demo
TMPD=$LAB_TMP
PIN=$LAB_PIN

ctl() {
	in_dst "$CTL_BIN" --pin-dir "$PIN" "$@"
}
say() {
	printf '\n\033[1m$ xdp-rlctl %s\033[0m\n' "$*"
	ctl "$@"
}

echo "== building the lab: namespaces $SRC and $DST"
lab_build -s 198.18.0.1/24 -s 198.18.0.2/24 -s 198.18.0.3/24 -d 198.18.0.254/24

cat >"$TMPD/rules.conf" <<CONF
# the demo's xdp-rl.conf(5)
interface d0 mode native
heartbeat 1000
watchdog 5000
metrics 127.0.0.1:9437
rule add 198.18.0.0/24 rate 100/s burst 20 id 1
rule add 198.18.0.3/32 rate 1000/s burst 100 id 2
CONF
echo
echo "== the daemon's configuration ($TMPD/rules.conf):"
sed 's/^/   /' "$TMPD/rules.conf"
echo
echo "== starting xdp-rld"
nsenter --net="/run/netns/$DST" "$RLD_BIN" --config "$TMPD/rules.conf" --pin-dir "$PIN" \
	2> >(sed -u 's/^/   xdp-rld: /' >&2) &
RLD_PID=$!
for ((i = 0; i < 100; i++)); do
	[[ $(ctl -j status 2>/dev/null | jq '.interfaces | length' 2>/dev/null) == 1 ]] && break
	sleep 0.1
done
say status
say rule list

# rates over the time measured between two samples, not counters since the
# start: "passed/s dropped/s" of each rule, from two `stats -j`
now() { date +%s.%N; }
stats_line() {
	ctl -j stats | jq -r '.rules[] | "\(.id) \(.passed_packets) \(.dropped_packets)"'
}
rates() {	# rates T_PREV T_NOW "PREV" "NOW": one line, each rule's rates
	awk -v t0="$1" -v t1="$2" -v prev="$3" -v cur="$4" -v start="$T0" 'BEGIN {
		dt = t1 - t0; n = split(prev, a, "\n"); split(cur, b, "\n")
		line = sprintf("   t = %4.1f s, the last %.1f s:", t1 - start, dt)
		for (i = 1; i <= n; i++) {
			split(a[i], x, " "); split(b[i], y, " ")
			line = line sprintf("   rule %s passed %6.0f/s dropped %7.0f/s", y[1],
					    (y[2] - x[2]) / dt, (y[3] - x[3]) / dt)
		}
		print line
	}'
}
watch_rates() {	# watch_rates N: N lines, a second apart
	local i t1 s1
	for ((i = 0; i < $1; i++)); do
		sleep 1
		t1=$(now) s1=$(stats_line)
		rates "$T" "$t1" "$S" "$s1"
		T=$t1 S=$s1
	done
}

echo
echo "== the flood, ${SECONDS_TO_RUN}s: 198.18.0.1 sends 50000 packets/s (its limit: 100/s, burst 20);"
echo "   198.18.0.2 and 198.18.0.3 send 50 packets/s each, under their limits. Rule 1"
echo "   meters each source of its /24 alone: it passes 198.18.0.1's 100/s and 198.18.0.2's 50/s."
echo "   What an operator looks at while it lasts: the rates of each rule, \`top\`,"
echo "   \`show\`, the live events (\`xdp-rlctl events\`, lines marked 'event:'), the metrics."
# the live events, for the whole flood and the seconds after it
# nsenter execs xdp-rlctl: $! is the reader itself, which the cleanup ends
nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" events timeout $((SECONDS_TO_RUN + 5)) \
	> >(sed -u 's/^/   event: /') 2>&1 &
EV_PID=$!
PIDS+=("$EV_PID")
sleep 0.5
sender() {	# sender ADDR PPS: its count sent, and when it began and ended
	now >"$TMPD/start.$1"
	in_src "$FLOOD" -s "$1" -d 198.18.0.254 -r "$2" \
		-n $(($2 * SECONDS_TO_RUN)) -t $((SECONDS_TO_RUN + 2)) >"$TMPD/sent.$1"
	now >"$TMPD/end.$1"
}
S0=$(stats_line)
T0=$(now)
T=$T0 S=$S0
sender 198.18.0.1 50000 & SENDERS=($!)
sender 198.18.0.2 50 & SENDERS+=($!)
sender 198.18.0.3 50 & SENDERS+=($!)
PIDS+=("${SENDERS[@]}")

watch_rates 2
# on a terminal, the live view an operator keeps open, for a few seconds
if [[ -t 0 && -t 1 ]]; then
	printf '\n\033[1m$ xdp-rlctl top watch\033[0m   (for 3 s)\n'
	# --foreground: in the terminal's process group, which top watch sets up
	timeout --foreground -s TERM 3 nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" top watch || true
fi
say top count 5			# drops per second of each key, over a 1 s sample
T=$(now) S=$(stats_line)
watch_rates 1
say show 198.18.0.1		# out of tokens: its next packet is dropped
say show 198.18.0.2		# the polite neighbour in the same /24 keeps its own bucket
printf '\n\033[1m$ curl -s 127.0.0.1:9437/metrics   # twice, 1 s apart: what rate() computes\033[0m\n'
m0=$(in_dst curl -s 127.0.0.1:9437/metrics | grep '^xdp_rl_dropped_packets_total'); t_m0=$(now)
sleep 1
m1=$(in_dst curl -s 127.0.0.1:9437/metrics | grep '^xdp_rl_dropped_packets_total'); t_m1=$(now)
join <(sort <<<"$m0") <(sort <<<"$m1") | awk -v dt="$(awk -v a="$t_m0" -v b="$t_m1" 'BEGIN { print b - a }')" \
	'{ printf "   %s  %.0f/s over %.1f s\n", $1, ($3 - $2) / dt, dt }'
T=$(now) S=$(stats_line)
while kill -0 "${SENDERS[0]}" 2>/dev/null; do
	watch_rates 1
	kill -0 "${SENDERS[0]}" 2>/dev/null || echo "   (the flood ended within that last interval)"
done
wait "${SENDERS[@]}" 2>/dev/null || true
# the flooder's own time: from its start to its last datagram
T0=$(<"$TMPD/start.198.18.0.1") T1=$(<"$TMPD/end.198.18.0.1")

# what passed over the time measured, against what the rule allows in it:
# a fresh key may pass its burst and then its rate, burst + rate x elapsed
S1=$(stats_line)
sent1=$(awk '{ print $1 }' "$TMPD/sent.198.18.0.1")
sent2=$(awk '{ print $1 }' "$TMPD/sent.198.18.0.2")
sent3=$(awk '{ print $1 }' "$TMPD/sent.198.18.0.3")
drop2=$(ctl -j show 198.18.0.2 | jq '.dropped_packets // 0')
echo
echo "== over the $(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }') s the flood lasted (measured), against what the rules allow:"
awk -v t0="$T0" -v t1="$T1" -v s0="$S0" -v s1="$S1" -v n1="$sent1" -v n2="$sent2" -v n3="$sent3" -v d2="$drop2" 'BEGIN {
	T = t1 - t0
	split(s0, a, "\n"); split(s1, b, "\n")
	split(a[1], r1a, " "); split(b[1], r1b, " "); split(a[2], r2a, " "); split(b[2], r2b, " ")
	p1 = (r1b[2] - r1a[2]) - (n2 - d2)	# rule 1 passed, less the polite neighbour
	allow = 20 + 100 * T
	printf "   198.18.0.1  sent %7d  passed %5d  allowed burst + rate x elapsed = 20 + 100/s x %.2f s = %.0f  (%.1f %% of it)\n", n1, p1, T, allow, 100 * p1 / allow
	printf "   198.18.0.2  sent %7d  passed %5d  dropped %d (under its limit: nothing lost)\n", n2, n2 - d2, d2
	printf "   198.18.0.3  sent %7d  passed %5d  dropped %d (rule 2: 1000/s)\n", n3, r2b[2] - r2a[2], r2b[3] - r2a[3]
}'
echo
echo "== a second later 198.18.0.1 sends one packet, within its limit again: it passes, and"
echo "   the events say so"
sleep 1
in_src "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -n 1 >/dev/null
wait "$EV_PID" 2>/dev/null || true
echo
echo "== stopping xdp-rld (SIGTERM: it detaches and removes its pins)"
kill "$RLD_PID"
wait "$RLD_PID" 2>/dev/null
RLD_PID=

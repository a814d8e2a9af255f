#!/usr/bin/env bash
# sudo make demo-fleet: two hosts sharing one limit through Redis.
#
#   ns s1 --veth-- ns h1: xdp-rl + xdp-rld --+
#   ns s2 --veth-- ns h2: xdp-rl + xdp-rld --+-- ns redis: redis-server
#
# One source sends to both hosts (70 % to h1, 30 % to h2) at twice the fleet
# rate; the rule `rate 1000/s burst 100 scope fleet` holds the two together
# to burst + rate x elapsed, which the demo compares with what passed over
# the flood's measured time. Everything lives in namespaces this script creates (a bpffs per
# host); all of it, redis-server included, is removed when the demo ends.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $(id -u) -eq 0 ]] || { echo "Error: the demo needs root (sudo make demo-fleet)" >&2; exit 1; }

source tests/lib/lab.sh
source tests/lib/fleet_lab.sh
CTL_BIN=$PWD/.output/xdp-rlctl
RLD_BIN=$PWD/.output/xdp-rld
FLOOD=$PWD/.output/udpflood
SECONDS_TO_RUN=${DEMO_SECONDS:-8}
PIDS=()

cleanup() {
	set +e
	# a sender is a subshell: its sender (nsenter, exec'd) first
	for p in "${PIDS[@]}"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	fleet_umount h1
	fleet_umount h2
	lab_cleanup
	echo "lab removed"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

lab_init -fleet
hctl() { local h=$1; shift; nsenter --net="/run/netns/$LAB_ID-$h" "$CTL_BIN" --pin-dir "$LAB_TMP/bpf-$h/xdp-rl" "$@"; }

echo "== building the lab: Redis and two hosts"
fleet_redis_ns
fleet_add_host h1
fleet_add_host h2
fleet_redis_start 6379
PIDS+=("$FLEET_REDIS_PID")

for h in h1 h2; do
	cat >"$LAB_TMP/$h.conf" <<CONF
interface d0
metrics 198.18.10.1${h#h}:9437
fleet redis $FLEET_RADDR:6379 sync 50 timeout 20
fleet host $h
fleet auth $FLEET_AUTH
rule add 198.18.0.0/24 rate 1000/s burst 100 scope fleet on-failure open id 1
CONF
	nsenter --net="/run/netns/$LAB_ID-$h" "$RLD_BIN" --pin-dir "$LAB_TMP/bpf-$h/xdp-rl" \
		--config "$LAB_TMP/$h.conf" 2> >(sed -u "s/^/   xdp-rld $h: /" >&2) &
	PIDS+=($!)
done
echo
echo "== each host's configuration:"
sed 's/^/   /' "$LAB_TMP/h1.conf"
for ((i = 0; i < 100; i++)); do
	[[ $(hctl h1 -j stats 2>/dev/null | jq -r '.fleet[0].live_hosts // 0') == 2 ]] && break
	sleep 0.1
done

now() { date +%s.%N; }
passed() { hctl "$1" -j stats | jq '.rules[0].passed_packets'; }

echo
echo "== the flood, ${SECONDS_TO_RUN}s: 198.18.0.1 sends 1400/s to h1 and 600/s to h2, twice the"
echo "   fleet rule (1000/s, burst 100, for the two hosts together). Watched while it lasts:"
echo "   the passed rate of each host over the time measured, the fleet's state as h1"
echo "   sees it, the live events on h1 (lines marked 'h1 event:')"
# nsenter execs xdp-rlctl: $! is the reader itself, which the cleanup ends
nsenter --net="/run/netns/$LAB_ID-h1" "$CTL_BIN" --pin-dir "$LAB_TMP/bpf-h1/xdp-rl" events timeout $((SECONDS_TO_RUN + 3)) \
	> >(sed -u 's/^/   h1 event: /') 2>&1 &
EV_PID=$!
PIDS+=("$EV_PID")
sleep 0.5
SENDERS=()
for spec in "h1 1400" "h2 600"; do
	set -- $spec
	(
		now >"$LAB_TMP/start.$1"
		nsenter --net="/run/netns/$LAB_ID-s${1#h}" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -r "$2" \
			-n $(($2 * SECONDS_TO_RUN)) -t $((SECONDS_TO_RUN + 2)) >"$LAB_TMP/sent.$1"
		now >"$LAB_TMP/end.$1"
	) &
	SENDERS+=($!)
done
PIDS+=("${SENDERS[@]}")
p1=$(passed h1) p2=$(passed h2) t0=$(now)
P1=$p1 P2=$p2 T0=$t0
rates() {	# one line: each host's passed/s and the sum, over the time since the last
	local n1 n2 t1
	n1=$(passed h1) n2=$(passed h2) t1=$(now)
	awk -v a="$t0" -v b="$t1" -v s="$T0" -v d1=$((n1 - p1)) -v d2=$((n2 - p2)) 'BEGIN {
		dt = b - a
		printf "   t = %4.1f s, the last %.1f s:   h1 passed %5.0f/s   h2 passed %5.0f/s   together %5.0f/s\n",
			b - s, dt, d1 / dt, d2 / dt, (d1 + d2) / dt
	}'
	p1=$n1 p2=$n2 t0=$t1
}
sleep 1; rates
sleep 1; rates
printf '\n\033[1mh1$ xdp-rlctl stats | grep fleet\033[0m\n'
hctl h1 stats | grep '^fleet'
p1=$(passed h1) p2=$(passed h2) t0=$(now)
while kill -0 "${SENDERS[0]}" 2>/dev/null || kill -0 "${SENDERS[1]}" 2>/dev/null; do
	sleep 1
	rates
	kill -0 "${SENDERS[0]}" 2>/dev/null || kill -0 "${SENDERS[1]}" 2>/dev/null ||
		echo "   (the flood ended within that last interval)"
done
wait "${SENDERS[@]}" 2>/dev/null || true

# what passed over the flood's measured time, against what the rule allows
# in it: burst + rate x elapsed; the fleet's worst case (docs/fleet.md,
# "Worst-case overshoot") adds a burst and the rate over a lease and two syncs
start=$(sort -n "$LAB_TMP"/start.h* | head -n 1)
end=$(sort -n "$LAB_TMP"/end.h* | tail -n 1)
n1=$(passed h1) n2=$(passed h2)
echo
awk -v a="$start" -v b="$end" -v d1=$((n1 - P1)) -v d2=$((n2 - P2)) \
	-v s1="$(<"$LAB_TMP/sent.h1")" -v s2="$(<"$LAB_TMP/sent.h2")" 'BEGIN {
	T = b - a; allow = 100 + 1000 * T; bound = 2 * 100 + 1000 * (T + 0.150 + 2 * 0.050)
	printf "== over the %.2f s the flood lasted (measured), against what the rule allows:\n", T
	printf "   sent       h1 %5d   h2 %5d   together %5d\n", s1, s2, s1 + s2
	printf "   passed     h1 %5d   h2 %5d   together %5d\n", d1, d2, d1 + d2
	printf "   allowed    burst + rate x elapsed = 100 + 1000/s x %.2f s = %.0f: passed %.1f %% of it\n",
		T, allow, 100 * (d1 + d2) / allow
	printf "              (the fleet'"'"'s worst case, 2 x burst + rate x (elapsed + lease + 2 syncs) = %.0f)\n", bound
}'
wait "$EV_PID" 2>/dev/null || true
echo
echo "== stopping both xdp-rld (SIGTERM: each detaches and removes its pins), redis-server"

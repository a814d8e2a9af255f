#!/usr/bin/env bash
# sudo make demo: a throwaway lab, the limiter attached by its daemon, a flood,
# live counters.
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
SECONDS_TO_RUN=${DEMO_SECONDS:-10}
PIDS=()
RLD_PID=

cleanup() {
	set +e
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
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

echo
echo "== flooding for ${SECONDS_TO_RUN}s: 198.18.0.1 sends 50000 packets/s (limit 100/s);"
echo "   198.18.0.2 and 198.18.0.3 send 50 packets/s each, under their limits"
sender() {
	in_src "$FLOOD" -s "$1" -d 198.18.0.254 -r "$2" \
		-n $(($2 * SECONDS_TO_RUN)) -t $((SECONDS_TO_RUN + 2)) >/dev/null
}
sender 198.18.0.1 50000 & PIDS+=($!)
sender 198.18.0.2 50 & PIDS+=($!)
sender 198.18.0.3 50 & PIDS+=($!)

for ((t = 1; t <= SECONDS_TO_RUN; t++)); do
	sleep 1
	printf '\n-- t = %2ds ------------------------------------------------------------\n' "$t"
	ctl stats
done
wait "${PIDS[@]}" 2>/dev/null || true
PIDS=()

say top count 5
say show 198.18.0.1
say show 198.18.0.2
printf '\n\033[1m$ curl -s 127.0.0.1:9437/metrics | grep dropped_packets_total\033[0m\n'
in_dst curl -s 127.0.0.1:9437/metrics | grep '^xdp_rl_dropped_packets_total' || true
echo
echo "== stopping xdp-rld (SIGTERM: it detaches and removes its pins)"
kill "$RLD_PID"
wait "$RLD_PID" 2>/dev/null
RLD_PID=

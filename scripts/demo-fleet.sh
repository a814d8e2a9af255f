#!/usr/bin/env bash
# sudo make demo-fleet: two hosts sharing one limit through Redis.
#
#   ns s1 --veth-- ns h1: xdp-rl + xdp-rld --+
#   ns s2 --veth-- ns h2: xdp-rl + xdp-rld --+-- ns redis: redis-server
#
# One source sends to both hosts (70 % to h1, 30 % to h2) at twice the fleet
# rate; the rule `rate 1000/s scope fleet` holds the two together to
# 1000/s. Everything lives in namespaces this script creates (a bpffs per
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
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
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

echo
echo "== flooding for ${SECONDS_TO_RUN}s: 198.18.0.1 sends 1400/s to h1 and 600/s to h2"
for spec in "h1 1400" "h2 600"; do
	set -- $spec
	nsenter --net="/run/netns/$LAB_ID-s${1#h}" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -r "$2" \
		-n $(($2 * SECONDS_TO_RUN)) -t $((SECONDS_TO_RUN + 2)) >/dev/null &
	PIDS+=($!)
done
p1=0 p2=0
for ((t = 1; t <= SECONDS_TO_RUN; t++)); do
	sleep 1
	n1=$(hctl h1 -j stats | jq '.rules[0].passed_packets')
	n2=$(hctl h2 -j stats | jq '.rules[0].passed_packets')
	printf '  t = %2ds   h1 passed %5d/s   h2 passed %5d/s   together %5d/s (fleet limit 1000/s)\n' \
		"$t" $((n1 - p1)) $((n2 - p2)) $((n1 + n2 - p1 - p2))
	p1=$n1 p2=$n2
done
printf '\n\033[1m$ xdp-rlctl stats   # on h1\033[0m\n'
hctl h1 stats

#!/usr/bin/env bash
# The fleet lab of tests/e2e/test_fleet.sh and scripts/demo-fleet.sh, on top
# of tests/lib/lab.sh (lab_init first):
#
#   ns $LAB_ID-sN: s0 198.18.0.1-.9/24 --veth-- ns $LAB_ID-hN: d0 198.18.0.254/24
#                                                r0 198.18.10.1N/24 --veth--+
#   ns $LAB_ID-redis: br0 198.18.10.1/24 (redis-server binds here) ---------+
#
#   fleet_redis_ns         the Redis namespace and its bridge
#   fleet_add_host hN      host N: its namespaces, links and a bpffs of its
#                          own at $LAB_TMP/bpf-hN (fleet_umount hN removes it)
#   fleet_redis_start PORT [ARGS...]
#                          redis-server in the Redis namespace, password
#                          $FLEET_PASS (no protected mode; the daemons read
#                          it from $FLEET_AUTH); its pid in FLEET_REDIS_PID,
#                          returns once it answers PING
FLEET_RADDR=198.18.10.1
FLEET_PASS="xrl-lab-$$"

fleet_redis_ns() {
	FLEET_RNS="$LAB_ID-redis"
	FLEET_AUTH="$LAB_TMP/redis.auth"
	(umask 077; echo "$FLEET_PASS" >"$FLEET_AUTH")
	lab_ns "$FLEET_RNS" || return 1
	# a MAC of its own: a bridge left to itself takes the lowest of its
	# ports', so a host added later (a random veth MAC) could change it
	# under the others, whose neighbour entries then point at the old one
	# for the 30 s or so it takes them to give up and ask again
	ip -n "$FLEET_RNS" link add br0 address 02:00:00:00:10:01 type bridge || return 1
	ip -n "$FLEET_RNS" link set br0 up
	ip -n "$FLEET_RNS" addr add $FLEET_RADDR/24 dev br0
}

fleet_add_host() {
	local n=${1#h} ns="$LAB_ID-$1" sns="$LAB_ID-s${1#h}" a
	lab_ns "$ns" && lab_ns "$sns" || return 1
	ip -n "$sns" link add s0 type veth peer name d0 netns "$ns" || return 1
	ip -n "$sns" link set s0 address $SRC_MAC up
	ip -n "$ns" link set d0 address $DST_MAC up
	nsenter --net="/run/netns/$ns" ethtool -K d0 gro on >/dev/null
	ip -n "$ns" addr add 198.18.0.254/24 dev d0
	for a in 1 2 3 4 5 6 7 8 9; do
		ip -n "$sns" addr add 198.18.0.$a/24 dev s0
		ip -n "$ns" neigh add 198.18.0.$a lladdr $SRC_MAC dev d0 nud permanent
	done
	ip -n "$sns" neigh add 198.18.0.254 lladdr $DST_MAC dev s0 nud permanent
	ip -n "$ns" link add r0 type veth peer name "r$n" netns "$FLEET_RNS" || return 1
	ip -n "$FLEET_RNS" link set "r$n" master br0 up
	ip -n "$ns" link set r0 up
	ip -n "$ns" addr add 198.18.10.1$n/24 dev r0
	mkdir -p "$LAB_TMP/bpf-$1"
	mount -t bpf bpf "$LAB_TMP/bpf-$1"
}

fleet_umount() {
	umount "$LAB_TMP/bpf-$1" 2>/dev/null
}

fleet_redis_start() {
	local port=$1 i
	shift
	mkdir -p "$LAB_TMP/redis-$port"
	# nsenter itself in the background: $! is redis-server's pid
	nsenter --net="/run/netns/$FLEET_RNS" redis-server --bind $FLEET_RADDR --port "$port" \
		--save '' --appendonly no --requirepass "$FLEET_PASS" --dir "$LAB_TMP/redis-$port" \
		--logfile "$LAB_TMP/redis-$port.log" "$@" </dev/null >/dev/null 2>&1 &
	# shellcheck disable=SC2034 # for the scripts that source this one
	FLEET_REDIS_PID=$!
	for ((i = 0; i < 100; i++)); do
		REDISCLI_AUTH=$FLEET_PASS nsenter --net="/run/netns/$FLEET_RNS" \
			redis-cli -h $FLEET_RADDR -p "$port" ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.05
	done
	return 1
}

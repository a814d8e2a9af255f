#!/usr/bin/env bash
# End-to-end: more of fleet-wide limits (README, "Fleet-wide limits"), on the
# lab of test_fleet.sh (sourced for its helpers): Redis blocked by DEBUG
# SLEEP, IPv6 keys, CLUSTERDOWN from a real Redis Cluster, a reload that
# changes the fleet lines (applied, all-or-nothing).
source "$(dirname "$0")/test_fleet.sh"

# 5. (DEBUG SLEEP) Redis slow, then blocked by DEBUG SLEEP past the timeout:
# the data path's rate unchanged, the latency in the metrics, the breaker
# open and the policy applied; the sleep over, it recovers
lat_over() {	# hN SECONDS: syncs so far that took longer than SECONDS
	local inf le
	inf=$(hmetric "$1" 'xdp_rl_fleet_sync_duration_seconds_bucket{le="+Inf"}')
	le=$(hmetric "$1" "xdp_rl_fleet_sync_duration_seconds_bucket{le=\"$2\"}")
	echo $((inf - le))
}

test_fleet_redis_debug_sleep() {
	lab_up || return
	start_redis 6379 --enable-debug-command yes || return
	local h
	for h in h1 h2 h3; do start_host $h; done
	N=3 wait_hosts h1 h2 h3 || return
	flood_h h1 198.18.0.9 900 12	# rule 2, on-failure closed
	sleep 1.5
	local c1 c2 s1 s2 f1 f2 o1 o2 i lat
	# slow: Redis asleep 5 ms again and again, back to back from one
	# client. Well under the 20 ms timeout even for an exchange that waits
	# twice (a reconnect's connect and its calls): the syncs wait, and
	# succeed. (10 ms sleeps left a reconnect no margin on a quiet machine:
	# two waits were the whole timeout, and the breaker opened.)
	o1=$(lat_over h1 0.002)
	f1=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	s1=$(seen h1 2)
	for ((i = 0; i < 300; i++)); do echo "DEBUG SLEEP 0.005"; done | rcli >/dev/null
	s2=$(seen h1 2)
	o2=$(lat_over h1 0.002)
	f2=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	echo "    slow: $((o2 - o1)) syncs over 2 ms, $((f2 - f1)) failed, $((s2 - s1)) packets seen" >&2
	((o2 - o1 >= 2)) || fail "slow: only $((o2 - o1)) syncs over 2 ms in the histogram while Redis slept"
	(($(echo "$s2 - $s1 >= 0.9 * 1.5 * 900" | bc -l))) || fail "slow: the data path saw $((s2 - s1)) packets in 1.5 s at 900/s"
	check_match "slow: still synced" "$(hctl h1 stats)" "fleet rule 2: synced"
	# blocked: DEBUG SLEEP 2 s, far past the timeout
	o1=$(lat_over h1 0.01)
	rcli debug sleep 2 >/dev/null &
	BG_PIDS+=($!)
	sleep 0.5
	# the syncs that waited out their timeout show it
	o2=$(lat_over h1 0.01)
	lat=$(hmetric h1 xdp_rl_fleet_last_sync_duration_seconds)
	((o2 > o1)) || fail "asleep: no sync over 10 ms in the histogram"
	(($(echo "$lat >= 0.75 * $TIMEOUT / 1000" | bc -l))) ||
		fail "asleep: the last sync took $lat s, not its timeout ($TIMEOUT ms)"
	c1=$(passed h1 2)
	s1=$(seen h1 2)
	f1=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	sleep 1
	c2=$(passed h1 2)
	s2=$(seen h1 2)
	f2=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	check_eq "asleep: on-failure closed passed" $((c2 - c1)) 0
	(($(echo "$s2 - $s1 >= 0.9 * 900" | bc -l))) || fail "asleep: the data path saw $((s2 - s1)) packets in 1 s at 900/s"
	check_eq "asleep: breaker closed" "$(hmetric h1 'xdp_rl_fleet_breaker_state{state="closed"}')" 0
	check_match "asleep: state" "$(hctl h1 stats)" "fleet rule 2: closed"
	((f2 > f1 || f1 > 0)) || fail "asleep: no failed sync counted"
	sleep 2	# the sleep over (2 s), the breaker's back-off (<= 800 ms)
	c1=$(passed h1 2)
	sleep 1
	c2=$(passed h1 2)
	((c2 - c1 >= 800)) || fail "awake: passed $((c2 - c1)) in 1 s at 900/s"
	check_match "awake: synced" "$(hctl h1 stats)" "fleet rule 2: synced"
}

# 3. IPv6 keys (2001:db8::/32): promoted, and one fleet limit across hosts
v6_up() {	# hN: 2001:db8::1 in sN, 2001:db8::fe on hN's d0
	local ns="$RUN_ID-$1" sns="$RUN_ID-s${1#h}"
	ip -n "$sns" addr add 2001:db8::1/64 dev s0 nodad || return 1
	ip -n "$ns" addr add 2001:db8::fe/64 dev d0 nodad || return 1
	ip -n "$sns" neigh add 2001:db8::fe lladdr $DST_MAC dev s0 nud permanent
	ip -n "$ns" neigh add 2001:db8::1 lladdr $SRC_MAC dev d0 nud permanent
}

flood6_h() {	# hN PPS SECONDS
	nsenter --net="/run/netns/$RUN_ID-s${1#h}" "$FLOOD" -s 2001:db8::1 -d 2001:db8::fe -n $(($2 * $3)) -r "$2" -t "$(($3 + 5))" \
		>/dev/null 2>&1 &
	BG_PIDS+=($!)
}

test_fleet_ipv6() {
	lab_up || return
	start_redis || return
	local h p1 p2 q1 q2 d
	for h in h1 h2 h3; do
		v6_up $h || { fail "cannot give $h IPv6"; return; }
		start_host $h "rule add 2001:db8::/32 rate $RATE/s burst $BURST scope fleet on-failure open id 3"
	done
	N=3 wait_hosts h1 h2 h3 || return
	# one host at 0.9x the fleet rate: once promoted, all of it
	flood6_h h1 900 4
	sleep 1
	p1=$(passed h1 3)
	sleep 3
	d=$(($(passed h1 3) - p1))
	((d >= 2550)) || fail "IPv6: passed $d of ~2700 in 3 s at 0.9x the fleet rate: limited to the share"
	check_match "IPv6 key promoted" "$(hctl h1 stats)" "fleet rule 3: synced, 3 live host\(s\), .* 1 promoted key"
	[[ "$(rcli --scan | grep -c '{xrl:3:2001:db8::')" -ge 1 ]] ||
		fail "IPv6: no fleet bucket in Redis: $(rcli --scan | tr '\n' ' ')"
	sleep 1.5	# that flood over
	# two hosts at 0.9x each: together the fleet rate, not twice it
	flood6_h h1 900 4
	flood6_h h2 900 4
	sleep 1
	p1=$(passed h1 3)
	q1=$(passed h2 3)
	sleep 3
	p2=$(passed h1 3)
	q2=$(passed h2 3)
	d=$((p2 - p1 + q2 - q1))
	echo "    IPv6: h1 + h2 admitted $d in 3 s at 2 x 900/s (fleet rate $RATE/s, bound $(bound 3))" >&2
	(($(echo "$d >= 0.9 * 3 * $RATE && $d <= $(bound 3)" | bc -l))) ||
		fail "IPv6: two hosts admitted $d in 3 s, not the fleet rate (3000, bound $(bound 3))"
}

# 7. (TRYAGAIN/CLUSTERDOWN) a cluster that lost a slot's coverage answers
# CLUSTERDOWN: counted as a failed sync, and each rule follows its policy
test_fleet_clusterdown() {
	cluster_hosts || return
	flood_h h1 198.18.0.1 900 12	# rule 1, on-failure open
	flood_h h1 198.18.0.9 900 12	# rule 2, on-failure closed
	sleep 1.5
	check_eq "promoted" "$(hmetric h1 xdp_rl_fleet_promoted_keys)" 2
	# a slot none of our keys use, its owner, unassigned everywhere
	local used=" " k s=0 owner p t0 f1 f2 o1 o2 c1 c2 ta1 ta2
	for k in "{xrl}:hosts" "{xrl:1:198.18.0.1/32}" "{xrl:2:198.18.0.9/32}"; do
		used+="$(RPORT=7001 rcli cluster keyslot "$k" | tr -d '\r') "
	done
	while [[ "$used" == *" $s "* ]]; do s=$((s + 1)); done
	owner=$(owner_port $s)
	f1=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	ta1=$(hmetric h1 'xdp_rl_fleet_redis_redirects_total{kind="tryagain"}')
	for p in 7001 7002 7003; do RPORT=$p rcli cluster delslots $s >/dev/null; done
	sleep 0.5
	check_match "the cluster is down" "$(RPORT=7001 rcli set '{xrl}:x' 1 2>&1)" "CLUSTERDOWN"
	o1=$(passed h1 1)
	c1=$(passed h1 2)
	sleep 2
	o2=$(passed h1 1)
	c2=$(passed h1 2)
	f2=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	ta2=$(hmetric h1 'xdp_rl_fleet_redis_redirects_total{kind="tryagain"}')
	echo "    CLUSTERDOWN (slot $s unassigned): $((f2 - f1)) failed syncs, $((ta2 - ta1)) TRYAGAIN/CLUSTERDOWN replies" >&2
	((f2 > f1)) || fail "CLUSTERDOWN: no failed sync counted ($f1 -> $f2)"
	((ta2 > ta1)) || fail "CLUSTERDOWN: not counted ($ta1 -> $ta2)"
	check_eq "CLUSTERDOWN: on-failure closed passed" $((c2 - c1)) 0
	(($(echo "($o2 - $o1) >= 0.8 * 2 * $RATE / 3 && ($o2 - $o1) <= 1.2 * 2 * $RATE / 3 + $BURST" | bc -l))) ||
		fail "CLUSTERDOWN: on-failure open passed $((o2 - o1)) in 2 s, expected the share (~667)"
	check_match "state" "$(hctl h1 stats)" "fleet rule 1: fallback-open"
	check_match "state" "$(hctl h1 stats)" "fleet rule 2: closed"
	# the slot back to its owner: synced again
	RPORT=$owner rcli cluster addslots $s >/dev/null
	t0=$(date +%s%N)
	until hctl h1 stats | grep -q "fleet rule 2: synced"; do
		(($(date +%s%N) - t0 < 5000000000)) || break
		sleep 0.05
	done
	check_match "synced again" "$(hctl h1 stats)" "fleet rule 2: synced"
}

# a reload that changes the fleet lines applies them, all-or-nothing: a new
# Redis that answers takes over (the old one left); one that does not
# answer refuses the whole reload (the rules too) and the old client stays;
# no 'fleet redis' line any more: no fleet
in_hosts() {	# PORT HOST: is HOST in that Redis' live hosts?
	[[ -n "$(RPORT=$1 rcli zscore '{xrl}:hosts' "$2" | tr -d '\r')" ]]
}

# new_conf ARGS...: host_conf h1 ARGS into $TMPD/new (edit it there);
# reload_h1 REGEX: move it over h1's config in one step (the daemon's
# inotify watch reloads it once) and wait for REGEX in h1's log
new_conf() {
	mkdir -p "$TMPD/new"
	TMPD="$TMPD/new" host_conf h1 "$@"
}

reload_h1() {
	local n i
	n=$(grep -c "" "$TMPD/h1.log")
	mv "$TMPD/new/h1.conf" "$TMPD/h1.conf"
	for ((i = 0; i < 100; i++)); do
		tail -n +$((n + 1)) "$TMPD/h1.log" | grep -qE "$1" && return 0
		sleep 0.05
	done
	fail "reload: no /$1/ in the log: $(tail -n +$((n + 1)) "$TMPD/h1.log" | tr '\n' '|')"
	return 1
}

test_fleet_reload() {
	lab_up || return
	start_redis 6379 || return
	start_redis 6380 || return
	start_host h1
	N=1 wait_hosts h1 || return
	in_hosts 6379 h1 || fail "h1 not in 6379's live hosts"
	# another Redis and host name: applied, the old set left at once
	FLEET_REDIS=$RADDR:6380 new_conf
	sed -i 's/^fleet host h1$/fleet host h1b/' "$TMPD/new/h1.conf"
	reload_h1 "fleet lines applied|reload refused" || return
	N=1 wait_hosts h1 || return
	in_hosts 6380 h1b || fail "reload: h1b not in 6380's live hosts"
	in_hosts 6379 h1 && fail "reload: h1 still in 6379's live hosts"
	check_match "synced with the new Redis" "$(hctl h1 stats)" "fleet rule 1: synced, 1 live host"
	# a Redis that does not answer: the whole reload refused
	FLEET_REDIS=$RADDR:6390 new_conf "rule add 198.18.1.0/24 rate 5/s burst 5 id 9"
	reload_h1 "reload refused|fleet lines applied" || return
	check_match "said why" "$(tail -n 5 "$TMPD/h1.log")" "does not answer"
	[[ "$(hctl h1 stats)" == *"198.18.1.0/24"* ]] && fail "refused reload: its rule was applied"
	check_eq "reload failures" "$(hmetric h1 xdp_rl_reload_failures_total)" 1
	sleep 0.3
	check_match "the old client stays" "$(hctl h1 stats)" "fleet rule 1: synced, 1 live host"
	in_hosts 6380 h1b || fail "refused reload: h1b left 6380"
	# no fleet line: no client, h1 leaves, the rules metered alone
	write_conf "$TMPD/new/h1.conf" "interface d0" "heartbeat 100" "watchdog 2000" "metrics 198.18.10.11:9437" \
		"rule add 198.18.0.0/29 rate $RATE/s burst $BURST scope fleet on-failure open id 1"
	reload_h1 "fleet lines applied|reload refused" || return
	sleep 0.2
	in_hosts 6380 h1b && fail "no fleet line: h1b still in 6380's live hosts"
	check_eq "no fleet metrics" "$(hmetric h1 xdp_rl_fleet_live_hosts)" ""
	flood_h h1 198.18.0.1 900 2
	sleep 2.5
	check_eq "no fleet: passed at 900/s (rate 1000/s)" "$(passed h1 1)" 1800
}

# A long sync (5 s, over twice the 2 s floor of the host TTL): each host
# must outlive the gap between its own syncs in the live set. With a fixed
# 2 s TTL, of two hosts started a second apart one is always expired when
# the other reads N (one of the two gaps is at least half a sync): N = 1
# where the fleet is 2, each host given the whole rate. Both must see 2
# after their second sync and keep seeing it.
test_fleet_long_sync() {
	local SYNC=5000
	lab_up || return
	start_redis || return
	start_host h1
	sleep 1
	start_host h2
	N=2 wait_hosts h1 h2 || return
	local i h v bad=""
	for ((i = 0; i < 12; i++)); do
		for h in h1 h2; do
			v=$(hctl "$h" -j stats | jq -r '.fleet[0].live_hosts // 0')
			[[ $v == 2 ]] || bad+=" $h:$v"
		done
		sleep 0.5
	done
	echo "    sync 5000 ms: live hosts seen other than 2:${bad:- none}" >&2
	check_eq "live hosts other than 2 at sync 5000" "${bad:-none}" none
}

selected "${1:-}" >/dev/null
run_test test_fleet_redis_debug_sleep
run_test test_fleet_ipv6
run_test test_fleet_clusterdown
run_test test_fleet_reload
run_test test_fleet_long_sync
summary

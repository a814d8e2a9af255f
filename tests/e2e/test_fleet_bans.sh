#!/usr/bin/env bash
# End-to-end: fleet-wide bans (docs/bans.md, "Fleet-wide bans") on the lab
# of test_fleet.sh (sourced for its helpers), two hosts and a real
# redis-server: `ban add ... scope fleet` on one host, and the bans that a
# fleet rule sets, reach the other within about two seconds (an exchange
# at least once a second) and end everywhere within a second of one end; a
# fleet ban lifted on one host is lifted on all; Redis down or the hash
# lost keeps the bans already applied; a restarted host brings back no
# withdrawn ban; thousands of host bans do not slow the syncs.
source "$(dirname "$0")/test_fleet.sh"

lab_up() {
	fleet_redis_ns || { fail "cannot build the lab"; return 1; }
	local h
	for h in h1 h2; do
		add_host $h || { fail "cannot build host $h"; return 1; }
	done
}

ban_by() {	# hN PREFIX: who set its ban there ("" when none)
	hctl "$1" -j ban list | jq -r --arg p "$2" '.[] | select(.prefix == $p) | .by'
}

ban_left_ms() {	# hN PREFIX
	hctl "$1" -j ban list | jq -r --arg p "$2" '.[] | select(.prefix == $p) | .left_ms'
}

wait_ban_on() {	# hN PREFIX WHO|"" [SECONDS]
	local i
	for ((i = 0; i < ${4:-5} * 20; i++)); do
		[[ "$(ban_by "$1" "$2")" == "$3" ]] && return 0
		sleep 0.05
	done
	fail "$1: $2 banned by '$(ban_by "$1" "$2")', expected '$3'"
	return 1
}

two_hosts() {
	lab_up || return 1
	start_redis || return 1
	start_host h1 "$@"
	start_host h2 "$@"
	N=2 wait_hosts h1 h2
}

test_fleet_ban_reaches_every_host() {
	two_hosts || return
	check_eq "the grammar" "$(hctl h1 ban add 198.18.0.5 for 30s by x scope fleet 2>&1)" \
		"Error: 'by' and 'scope fleet' do not go together: a fleet ban is the fleet's"
	hctl h1 ban add 198.18.0.5 for 30s reason "seen on h1" scope fleet >/dev/null || { fail "ban add"; return; }
	check_eq "h1: the fleet's" "$(ban_by h1 198.18.0.5/32)" fleet
	wait_ban_on h2 198.18.0.5/32 fleet.in 3 || return
	check_eq "h2: its reason" "$(hctl h2 -j ban list | jq -r '.[] | select(.prefix == "198.18.0.5/32") | .reason')" "seen on h1"
	# one end: the times left within a second of each other
	local l1 l2
	l1=$(ban_left_ms h1 198.18.0.5/32)
	l2=$(ban_left_ms h2 198.18.0.5/32)
	((l1 - l2 < 1100 && l2 - l1 < 1100)) || fail "ends apart: h1 $l1 ms left, h2 $l2 ms"
	((l2 > 27000 && l2 <= 31000)) || fail "h2: $l2 ms left of 30 s"
	# dropped on h2 too
	nsenter --net="/run/netns/$RUN_ID-s2" "$FLOOD" -s 198.18.0.5 -d 198.18.0.254 -n 50 -r 500 -t 5 >/dev/null 2>&1
	check_eq "h2 drops it" "$(hctl h2 -j ban list | jq -r '.[] | select(.prefix == "198.18.0.5/32") | .dropped_packets')" 50
	# a host's own bans stay its own
	hctl h1 ban add 198.18.0.6 for 30s >/dev/null
	sleep 0.5
	check_eq "a host ban stays on its host" "$(ban_by h2 198.18.0.6/32)" ""
	# lifted on one host: lifted on all
	hctl h2 ban del 198.18.0.5 >/dev/null
	wait_ban_on h1 198.18.0.5/32 "" 2
	check_eq "withdrawn" "$(hmetric h2 'xdp_rl_fleet_bans_total{kind="withdrawn"}')" 1
	check_eq "lifted on h1" "$(hmetric h1 'xdp_rl_fleet_bans_total{kind="lifted"}')" 1
}

# a short fleet ban ends on both hosts at once
test_fleet_ban_ends_everywhere() {
	two_hosts || return
	hctl h1 ban add 198.18.0.5 for 3s scope fleet >/dev/null || { fail "ban add"; return; }
	wait_ban_on h2 198.18.0.5/32 fleet.in 3 || return
	wait_ban_on h1 198.18.0.5/32 "" 5 || return
	# h1's ended: h2's within a second of it
	wait_ban_on h2 198.18.0.5/32 "" 1
	# the hash drops it at the next exchange (or expires): within 2 s
	local i
	for ((i = 0; i < 40; i++)); do
		[[ "$(rcli hlen '{xrl}:bans')" == 0 ]] && break
		sleep 0.05
	done
	check_eq "gone from Redis" "$(rcli hlen '{xrl}:bans')" 0
}

# the ban of a fleet rule on one host is a fleet ban on the other
test_fleet_rule_ban_shared() {
	two_hosts "rule add 198.18.0.4/32 rate 10/s burst 5 scope fleet ban 20s on-failure open id 3" || return
	nsenter --net="/run/netns/$RUN_ID-s1" "$FLOOD" -s 198.18.0.4 -d 198.18.0.254 -n 200 -r 1000 -t 5 >/dev/null 2>&1
	wait_ban_on h1 198.18.0.4/32 "rule 3" 3 || return
	wait_ban_on h2 198.18.0.4/32 fleet.in 3 || return
	check_match "its reason names the rule and host" \
		"$(hctl h2 -j ban list | jq -r '.[] | select(.prefix == "198.18.0.4/32") | .reason')" "^rule 3 on h1$"
}

# Redis killed: the bans applied stay on every host, and end on time
test_fleet_ban_redis_down() {
	two_hosts || return
	hctl h1 ban add 198.18.0.5 for 4s scope fleet >/dev/null || { fail "ban add"; return; }
	wait_ban_on h2 198.18.0.5/32 fleet.in 3 || return
	kill -9 "${REDIS_OF[6379]}"
	wait "${REDIS_OF[6379]}" 2>/dev/null
	sleep 1
	check_eq "h1 keeps it" "$(ban_by h1 198.18.0.5/32)" fleet
	check_eq "h2 keeps it" "$(ban_by h2 198.18.0.5/32)" fleet.in
	wait_ban_on h2 198.18.0.5/32 "" 5
}

# another origin's longer ban on h2 keeps h1's fleet ban out of h2, and h2
# withdraws nothing it never held: the fleet ban stays everywhere else
test_fleet_ban_other_origin_kept() {
	two_hosts || return
	hctl h2 ban add 198.18.0.5 for 60s reason "h2 op" >/dev/null || { fail "h2 ban add"; return; }
	hctl h1 ban add 198.18.0.5 for 30s reason "seen on h1" scope fleet >/dev/null || { fail "ban add"; return; }
	sleep 2.5
	check_eq "h1 keeps its fleet ban" "$(ban_by h1 198.18.0.5/32)" fleet
	check_eq "h2 keeps its operator's" "$(ban_by h2 198.18.0.5/32)" operator
	check_eq "the fleet keeps it" "$(rcli hlen '{xrl}:bans')" 1
	check_eq "h2 withdrew nothing" "$(hmetric h2 'xdp_rl_fleet_bans_total{kind="withdrawn"}')" 0
	# a fleet ban replaced on h2 by its operator's: not withdrawn either
	hctl h1 ban add 198.18.0.6 for 30s scope fleet >/dev/null || { fail "ban add"; return; }
	wait_ban_on h2 198.18.0.6/32 fleet.in 2 || return
	hctl h2 ban add 198.18.0.6 for 1h >/dev/null
	sleep 2.5
	check_eq "h1 keeps the second" "$(ban_by h1 198.18.0.6/32)" fleet
	check_eq "still withdrawn nothing" "$(hmetric h2 'xdp_rl_fleet_bans_total{kind="withdrawn"}')" 0
}

# Redis loses the hash (a restart without persistence, a failover, a
# flush): the publisher keeps its own ban and publishes it again
test_fleet_ban_hash_lost() {
	two_hosts || return
	hctl h1 ban add 198.18.0.5 for 30s reason "seen on h1" scope fleet >/dev/null || { fail "ban add"; return; }
	wait_ban_on h2 198.18.0.5/32 fleet.in 3 || return
	rcli del '{xrl}:bans' >/dev/null
	sleep 2.5
	check_eq "h1 keeps its own" "$(ban_by h1 198.18.0.5/32)" fleet
	check_eq "published again" "$(rcli hlen '{xrl}:bans')" 1
	wait_ban_on h2 198.18.0.5/32 fleet.in 3
	check_eq "the same reason" "$(hctl h2 -j ban list | jq -r '.[] | select(.prefix == "198.18.0.5/32") | .reason')" "seen on h1"
}

# a host down while a fleet ban was lifted: back, it does not bring the ban
# back to the fleet, and lifts its own stale copy
test_fleet_ban_no_resurrection() {
	two_hosts || return
	hctl h1 ban add 198.18.0.5 for 30s scope fleet >/dev/null || { fail "ban add"; return; }
	wait_ban_on h2 198.18.0.5/32 fleet.in 3 || return
	kill -9 "${RLD_OF[h2]}"
	wait "${RLD_OF[h2]}" 2>/dev/null
	hctl h1 ban del 198.18.0.5 >/dev/null
	sleep 1.5
	check_match "withdrawn: a tombstone" "$(rcli hget '{xrl}:bans' 198.18.0.5/32)" '^-[0-9]+$'
	check_eq "h2's pinned copy" "$(ban_by h2 198.18.0.5/32)" fleet.in
	start_host h2
	N=2 wait_hosts h1 h2 || return
	sleep 2
	check_match "not back in the fleet" "$(rcli hget '{xrl}:bans' 198.18.0.5/32)" '^-[0-9]+$'
	check_eq "h2 published nothing" "$(hmetric h2 'xdp_rl_fleet_bans_total{kind="published"}')" 0
	check_eq "h1 stays unbanned" "$(ban_by h1 198.18.0.5/32)" ""
	wait_ban_on h2 198.18.0.5/32 "" 2
}

# a host with thousands of bans of its own: its syncs still go through (the
# ban tables are not read in the lease batch, nor at every sync)
test_fleet_ban_many_host_bans() {
	lab_up || return 1
	start_redis || return 1
	local lines=() i
	for ((i = 0; i < 3000; i++)); do
		lines+=("ban add 198.19.$((i / 256)).$((i % 256)) for 1h")
	done
	start_host h1 "${lines[@]}"
	start_host h2
	# setting 3000 bans at the start takes a while on a loaded machine
	local t0=$SECONDS
	until (($(hmetric h1 'xdp_rl_fleet_syncs_total{result="ok"}' 2>/dev/null || echo 0) + 0 >= 1)); do
		((SECONDS - t0 > 90)) && { fail "h1 never synced: $(tail -n 3 "$TMPD/h1.log" | tr '\n' '|')"; return; }
		sleep 0.5
	done
	N=2 wait_hosts h1 h2 || return
	local f0
	f0=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	hctl h2 ban add 198.18.0.5 for 30s scope fleet >/dev/null || { fail "ban add"; return; }
	wait_ban_on h1 198.18.0.5/32 fleet.in 3
	sleep 3
	check_eq "h1: no sync failed" "$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')" "$f0"
	check_eq "h1: its host bans stay its own" "$(rcli hlen '{xrl}:bans')" 1
	echo "    h1 last sync $(hmetric h1 xdp_rl_fleet_last_sync_duration_seconds) s, h2 $(hmetric h2 xdp_rl_fleet_last_sync_duration_seconds) s" >&2
}

# an end far past the longest ban (a lying or broken publisher): cut to
# the longest ban, not refused, never an overflow
test_fleet_ban_end_clamped() {
	two_hosts || return
	local t us now
	t=$(rcli time | tr '\n' ' ')
	read -r t us <<<"$t"
	now=$((t * 1000 + us / 1000))
	rcli hset '{xrl}:bans' 198.18.0.9/32 "$((now + 5 * 366 * 86400 * 1000)) far" >/dev/null
	wait_ban_on h1 198.18.0.9/32 fleet.in 3 || return
	local left
	left=$(ban_left_ms h1 198.18.0.9/32)
	((left > 365 * 86400 * 1000 && left <= 366 * 86400 * 1000)) || fail "left $left ms, not 366 days"
}

run_test test_fleet_ban_reaches_every_host
run_test test_fleet_ban_ends_everywhere
run_test test_fleet_rule_ban_shared
run_test test_fleet_ban_redis_down
run_test test_fleet_ban_other_origin_kept
run_test test_fleet_ban_hash_lost
run_test test_fleet_ban_no_resurrection
run_test test_fleet_ban_many_host_bans
run_test test_fleet_ban_end_clamped
summary

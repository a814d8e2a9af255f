#!/usr/bin/env bash
# End-to-end: fleet-wide limits when Redis loses data or is never reached
# (README, "Fleet-wide limits", "What the client requires of Redis"), on the
# lab of test_fleet.sh (sourced for its helpers), against the real
# redis-server:
#
#   - FLUSHALL every 200 ms under a flood: a vanished fleet bucket is taken
#     as spent, not full, and the documented overshoot bound holds;
#   - allkeys-lru eviction under memory pressure: the same, and the policy
#     is reported (log, status, metric);
#   - a fleet that never syncs (a wrong password everywhere): an
#     on-failure closed rule holds quiet keys to rate / hosts and drops the
#     keys over it; status and metrics say never-synced;
#   - 1,000 hot keys per rule in the hot sets: bounded, indexed, a sync and
#     a stop stay short.
# Every test checks that the daemons keep heartbeating.
source "$(dirname "$0")/test_fleet.sh"

# hN: the daemon's heartbeat is fresh (the watchdog never comes near)
hb_fresh() {
	local j
	j=$(hctl "$1" -j status 2>/dev/null)
	[[ "$(jq -r .daemon.heartbeating <<<"$j")" == true &&
		"$(jq -r .daemon.watchdog_fired <<<"$j")" == false ]] &&
		(($(jq -r '.daemon.heartbeat_age_ms // 99999' <<<"$j") < 1000)) ||
		fail "$1: heartbeat not fresh: $(jq -c .daemon <<<"$j")"
}

# hN NAME: a metric's value, 0 when the daemon exports no such metric
hmetric0() {
	local v
	v=$(hmetric "$1" "$2")
	echo "${v:-0}"
}

# two hosts up, each seeing both
two_hosts() {
	lab_up || return 1
	start_redis "$@" || return 1
	start_host h1
	start_host h2
	N=2 wait_hosts h1 h2
}

# W seconds of one source at 3R, 70/30 over h1 and h2; prints the fleet's
# admitted packets of rule 1 over the run
flood_3r() {	# SECONDS
	local p0 p1
	p0=$(fleet_passed h1 h2)
	flood_h h1 198.18.0.1 2100 "$1"
	flood_h h2 198.18.0.1 900 "$1"
	sleep "$1"
	sleep 0.5	# the floods' last packets
	p1=$(fleet_passed h1 h2)
	echo $((p1 - p0))
}

W=6	# seconds of flood in the data-loss tests

# 7a. FLUSHALL every 200 ms under a flood at 3R: every flush takes the
# fleet bucket, the hosts set and the hot set; a host that held a lease on
# the key finds its bucket gone and takes it as spent (TAT at now + burst):
# the fleet stays under the README's bound instead of a fresh burst per flush
test_fleet_flushall() {
	two_hosts || return
	local total b lost i
	( for ((i = 0; i < W * 5 + 3; i++)); do rcli flushall >/dev/null; sleep 0.2; done ) &
	BG_PIDS+=($!)
	total=$(flood_3r $W)
	b=$(bound $W)
	lost=$(($(hmetric0 h1 xdp_rl_fleet_buckets_lost_total) + $(hmetric0 h2 xdp_rl_fleet_buckets_lost_total)))
	echo "    FLUSHALL every 200 ms, $W s at 3R: admitted $total, bound ${b%.*}, ideal $((BURST + RATE * W)); vanished buckets found: $lost" >&2
	(($(echo "$total <= $b" | bc -l))) || fail "admitted $total over the bound ${b%.*}"
	# still a limit that admits: the rate, less what the flushes cost (a
	# lost bucket starts spent: up to one sync of the rate, each flush)
	(($(echo "$total >= 0.6 * $RATE * $W" | bc -l))) || fail "admitted $total: far under the rate"
	((lost > 0)) || fail "no vanished bucket counted"
	hb_fresh h1
	hb_fresh h2
}

# a filler of Redis' memory: SET filler:N (1 KB) at about PPS a second,
# for SECONDS, over one connection (background)
fill_redis() {	# PORT PPS SECONDS
	nsenter --net="/run/netns/$FLEET_RNS" python3 - "$RADDR" "$1" "$FLEET_PASS" "$2" "$3" <<'EOF' >/dev/null 2>&1 &
import socket, sys, time
host, port, pw, pps, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
def cmd(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in a)
s = socket.create_connection((host, port))
s.sendall(cmd(b"AUTH", pw.encode()))
s.recv(100)
val, n, end, batch = b"x" * 1000, 0, time.time() + secs, max(1, pps // 100)
while time.time() < end:
    s.sendall(b"".join(cmd(b"SET", b"filler:%d" % (n + i), val) for i in range(batch)))
    got = 0
    while got < batch:
        data = s.recv(65536)
        if not data:	# Redis gone: the test is over
            sys.exit(0)
        got += data.count(b"\r\n")
    n += batch
    time.sleep(0.01)
EOF
	BG_PIDS+=($!)
}

# 7b. allkeys-lru eviction under memory pressure (maxmemory a little over
# what Redis holds, a filler writing 1 KB keys): fleet keys are evicted
# now and then; the bound holds, and the policy is reported
test_fleet_evicting() {
	two_hosts 6379 --maxmemory-policy allkeys-lru || return
	local used total b lost evicted
	used=$(rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')
	rcli config set maxmemory $((used + 300000)) >/dev/null
	sleep 0.3	# the policy check of the next syncs
	fill_redis 6379 4000 $((W + 1))
	total=$(flood_3r $W)
	b=$(bound $W)
	lost=$(($(hmetric0 h1 xdp_rl_fleet_buckets_lost_total) + $(hmetric0 h2 xdp_rl_fleet_buckets_lost_total)))
	evicted=$(rcli info stats | tr -d '\r' | awk -F: '$1 == "evicted_keys" { print $2 }')
	echo "    allkeys-lru, maxmemory used + 300 KB, $W s at 3R: admitted $total, bound ${b%.*}, ideal $((BURST + RATE * W)); Redis evicted $evicted keys, vanished buckets found: $lost; syncs failed: $(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}') and $(hmetric h2 'xdp_rl_fleet_syncs_total{result="failed"}') of $(hmetric h1 'xdp_rl_fleet_syncs_total{result="ok"}') and $(hmetric h2 'xdp_rl_fleet_syncs_total{result="ok"}') ok" >&2
	((evicted > 1000)) || fail "Redis evicted only $evicted keys: no memory pressure"
	(($(echo "$total <= $b" | bc -l))) || fail "admitted $total over the bound ${b%.*}"
	# a lost bucket starts spent: each loss costs the key up to one sync
	# of the rate; a dozen losses a second cost most of it, never all
	(($(echo "$total >= 0.1 * $RATE * $W" | bc -l))) || fail "admitted $total: nothing left of the rate"
	# the policy: reported by the log, status and the metrics
	check_match "log" "$(cat "$TMPD/h1.log")" "fleet: Redis maxmemory-policy is allkeys-lru"
	check_match "status" "$(hctl h1 stats)" "fleet rule 1: synced.*Redis may evict"
	check_eq "metric" "$(hmetric h1 'xdp_rl_fleet_redis_evicts{policy="allkeys-lru"}')" 1
	check_eq "json" "$(hctl h1 -j stats | jq -r '.fleet[0].redis_may_evict')" true
	hb_fresh h1
	hb_fresh h2
}

# 7c. the default (noeviction, no maxmemory) is reported as such; CONFIG
# renamed away: the policy is read from INFO
test_fleet_policy_reported() {
	lab_up || return
	start_redis 6379 --rename-command CONFIG "" || return
	start_host h1
	N=1 wait_hosts h1 || return
	check_eq "metric" "$(hmetric h1 'xdp_rl_fleet_redis_evicts{policy="noeviction"}')" 0
	check_eq "json" "$(hctl h1 -j stats | jq -r '.fleet[0].redis_may_evict')" false
	[[ "$(hctl h1 stats)" == *"Redis may evict"* ]] && fail "status says Redis may evict under noeviction"
	hb_fresh h1
}

# 8. a fleet that never syncs (a wrong password on every host): an
# on-failure closed rule holds a quiet key to rate / hosts (h1: the default,
# 2; h2: the 'hosts' option, 4) and drops a key over that share (a
# candidate for a lease that never comes), on every host; open rules meter
# alone at the whole rate; status and the metrics say never-synced
test_fleet_never_synced() {
	lab_up || return
	start_redis || return
	local bad="$TMPD/bad.auth" h q1 d1 o1 share
	local -A hosts_of=([h1]=2 [h2]=4)
	(umask 077; echo "not-$FLEET_PASS" >"$bad")
	rm -f "$TMPD/h1.log" "$TMPD/h2.log"	# the lines of this test only
	FLEET_AUTH=$bad start_host h1 \
		"rule add 198.18.0.4/31 rate $RATE/s burst $BURST scope fleet on-failure closed id 3" \
		"rule add 198.18.0.6/31 rate $RATE/s burst $BURST scope fleet on-failure closed id 4"
	FLEET_OPTS=" hosts 4" FLEET_AUTH=$bad start_host h2 \
		"rule add 198.18.0.4/31 rate $RATE/s burst $BURST scope fleet on-failure closed id 3" \
		"rule add 198.18.0.6/31 rate $RATE/s burst $BURST scope fleet on-failure closed id 4"
	# (on, when one host refuses to start: the other still shows its rules)
	for h in h1 h2; do
		wait_log "$TMPD/$h.log" "fleet: sync failed"
	done
	sleep 0.3
	for h in h1 h2; do
		flood_h $h 198.18.0.4 200 3	# rule 3: quiet, under either share
		flood_h $h 198.18.0.6 600 3	# rule 4: over either share, under R
		flood_h $h 198.18.0.1 600 3	# rule 1 (open): alone at R
	done
	sleep 3.5
	for h in h1 h2; do
		share=$((RATE / hosts_of[$h]))
		q1=$(passed $h 3)
		d1=$(passed $h 4)
		o1=$(passed $h 1)
		echo "    $h never synced, hosts ${hosts_of[$h]}, 3 s: quiet key at 200/s passed $q1, a key at 600/s passed $d1 (share $share/s, burst $((BURST / hosts_of[$h]))), open rule at 600/s passed $o1" >&2
		# quiet: all of it
		((q1 >= 570)) || fail "$h: the quiet key passed $q1 of 600; log: $(tail -n 4 "$TMPD/$h.log" | tr '\n' '|')"
		# over the share: until the share's burst has run out at
		# 600 - share a second, then a sync or two, then dropped (on
		# main: 1800 of 1800, the whole rate on each host)
		((d1 <= 600 * (BURST / hosts_of[$h]) / (600 - share) + 600 * 15 / 100 + 20)) ||
			fail "$h: the key over the share passed $d1 of 1800"
		((o1 >= 1700)) || fail "$h: the open rule passed $o1 of 1800"
		check_match "$h: status" "$(hctl $h stats)" "fleet rule 4: never-synced \(on-failure closed: keys over rate/${hosts_of[$h]} dropped\), 1 key\(s\) dropped"
		check_match "$h: status" "$(hctl $h stats)" "fleet rule 1: never-synced \(on-failure open: metered alone at the whole rate\)"
		check_eq "$h: metric" "$(hmetric $h 'xdp_rl_fleet_rule_state{rule="4",state="never-synced"}')" 1
		check_eq "$h: json" "$(hctl $h -j stats | jq -r '.fleet[] | select(.rule == 4) | "\(.state) \(.share_hosts)"')" "never-synced ${hosts_of[$h]}"
		hb_fresh $h
	done
}

# hot keys: NUM keys "198.19.B.C/32" from FIRST into the hot set of RULE,
# expiring far in the future (a hostile or buggy server, or a big fleet):
# the later the expiry, the longer a trimmed set keeps it
hot_fill() {	# RULE FIRST NUM EXPIRY_MS
	local i args=()
	for ((i = $2; i < $2 + $3; i++)); do
		args+=("$4" "198.19.$((i / 256)).$((i % 256))/32")
	done
	rcli zadd "{xrl:hot:$1}" "${args[@]}" >/dev/null
}

# 9. 1,000 hot keys per rule, of which every one had traffic here: each
# sync finds their slots by an index, not by a scan of every slot; the hot
# set and what a host takes of it are bounded (1024 per rule); a stop stays
# short. 3,000 keys in one hot set come back at most 1024.
test_fleet_hot_keys() {
	lab_up || return
	start_redis || return
	local t0 t1 stop_ms lat n size i rc
	# 2,000 lease calls in one batch: a timeout that a loaded 2-core
	# machine meets, so that the keys are leased (the calls' cost is the
	# transport's, not this test's)
	local TIMEOUT=100
	start_host h1 "rule add 198.19.0.0/22 rate $RATE/s burst $BURST scope fleet on-failure open id 3" \
		"rule add 198.19.4.0/22 rate $RATE/s burst $BURST scope fleet on-failure open id 4"
	N=1 wait_hosts h1 || return
	local s0 c0 s1 c1
	s0=$(hmetric h1 xdp_rl_fleet_sync_duration_seconds_sum)
	c0=$(hmetric h1 xdp_rl_fleet_sync_duration_seconds_count)
	hot_fill 3 0 1000 99999999999999
	hot_fill 4 1024 1000 99999999999999
	# rule 4 holds 2000: trimmed to 1024, the 1000 above and 24 of these
	hot_fill 4 2048 1000 99999999990000
	# every key of both rules had traffic here lately (2 frames each)
	for ((n = 0; n < 4; n++)); do
		nsenter --net="/run/netns/$RUN_ID-s1" "$XFLOOD" -i s0 -m $DST_MAC -d 198.18.0.254 \
			-s 198.19.0.0/20 -N 2048 -n 4096 -T 10 >>"$TMPD/xflood.log" 2>&1
		sleep 0.4
	done
	for ((i = 0; i < 30; i++)); do
		(($(hmetric0 h1 xdp_rl_fleet_promoted_keys) >= 1990)) && break
		sleep 0.1
	done
	size=$(rcli zcard "{xrl:hot:4}" | tr -d '\r')
	n=$(hmetric0 h1 xdp_rl_fleet_promoted_keys)
	lat=$(hmetric h1 xdp_rl_fleet_last_sync_duration_seconds)
	s1=$(hmetric h1 xdp_rl_fleet_sync_duration_seconds_sum)
	c1=$(hmetric h1 xdp_rl_fleet_sync_duration_seconds_count)
	echo "    1000 + 2000 hot keys in two rules: hot set of rule 4 holds $size, $n keys promoted, $((c1 - c0)) syncs in the meantime, $(echo "scale=4; ($s1 - $s0) / $((c1 - c0 + (c1 == c0)))" | bc -l) s each on average, the last $lat s" >&2
	((c1 - c0 >= 10)) || fail "only $((c1 - c0)) syncs in about 2.5 s (sync $SYNC ms): the sync thread is stuck"
	((size <= 1024)) || fail "the hot set of rule 4 holds $size keys: unbounded"
	((n >= 1990 && n <= 2000)) || fail "$n keys promoted of 1999"
	(($(echo "$lat < 0.5" | bc -l))) || fail "a sync with 2000 hot keys took $lat s"
	hb_fresh h1
	t0=$(date +%s%N)
	kill -TERM "${RLD_OF[h1]}"
	wait "${RLD_OF[h1]}" 2>/dev/null
	rc=$?
	t1=$(date +%s%N)
	check_eq "the stop's exit status (a sanitizer's report: not 0)" $rc 0
	stop_ms=$(((t1 - t0) / 1000000))
	echo "    stop with $n promoted keys: $stop_ms ms" >&2
	((stop_ms < 1500)) || fail "the stop took $stop_ms ms (watchdog 2000 ms)"
}

[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0
selected "${1:-}" >/dev/null
run_test test_fleet_flushall
run_test test_fleet_evicting
run_test test_fleet_policy_reported
run_test test_fleet_never_synced
run_test test_fleet_hot_keys
summary

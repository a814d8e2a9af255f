#!/usr/bin/env bash
# End-to-end: the fleet client against a broken or hostile Redis (README,
# "Fleet-wide limits", "What the client does with a bad server"), on the lab
# of test_fleet.sh (sourced for its helpers). The real redis-server wherever
# it can show the fault (SCRIPT FLUSH, an unreachable seed); elsewhere
# tests/tools/fake_redis.py, a small RESP server of the tests' own, in the
# Redis namespace: replies that trickle or stall, bad CLUSTER SLOTS maps,
# MOVED to a node whose map is bad, grants out of range, huge headers.
# In every test the heartbeat stays fresh and a stop (SIGTERM, with and
# without --keep-attached) never lets the watchdog fire.
source "$(dirname "$0")/test_fleet.sh"

FAKE="$TOP/tests/tools/fake_redis.py"
# the interpreter itself, not a wrapper that forks it (a pyenv shim is a
# shell script): $! must be the server, killed on the way out
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=$(command -v python3)
RLD_EXTRA=

fake_start() {	# PORT [fake_redis.py options]: in the Redis namespace
	local port=$1 i
	shift
	# nsenter itself in the background (not a function: a subshell): $! is
	# the server
	nsenter --net="/run/netns/$FLEET_RNS" "$PYTHON" "$FAKE" --bind $RADDR --port "$port" --pass "$FLEET_PASS" "$@" \
		</dev/null >>"$TMPD/fake-$port.log" 2>&1 &
	local pid=$!
	BG_PIDS+=($pid)
	for ((i = 0; i < 100; i++)); do
		if RPORT=$port rcli ping 2>/dev/null | grep -q PONG; then
			[[ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" == *fake_redis.py* ]] && return 0
			fail "fake_redis.py on port $port: \$! is not the server"
			return 1
		fi
		sleep 0.05
	done
	fail "fake_redis.py on port $port did not start: $(tail -n 3 "$TMPD/fake-$port.log")"
	return 1
}

start_h() {	# hN [extra config lines]: start_host, with ${RLD_EXTRA:-}
	local h=$1
	shift
	host_conf "$h" "$@"
	nsenter --net="/run/netns/$RUN_ID-$h" "$RLD_BIN" ${RLD_EXTRA:-} --pin-dir "$TMPD/bpf-$h/xdp-rl" \
		--config "$TMPD/$h.conf" >>"$TMPD/$h.log" 2>&1 &
	RLD_OF[$h]=$!
	BG_PIDS+=($!)
	# started: attached and heartbeating
	local i
	for ((i = 0; i < 200; i++)); do
		[[ "$(hctl "$h" -j status 2>/dev/null | jq -r '.daemon.heartbeating')" == true ]] && return 0
		sleep 0.05
	done
	fail "$h: the daemon did not start in 10 s: $(tail -n 3 "$TMPD/$h.log" | tr '\n' '|')"
	return 1
}

hb_ok() {	# hN: alive, heartbeat fresh, watchdog never fired
	local s
	kill -0 "${RLD_OF[$1]}" 2>/dev/null || { fail "$1: the daemon is gone: $(tail -n 3 "$TMPD/$1.log" | tr '\n' '|')"; return 1; }
	s=$(hctl "$1" -j status)
	(($(jq -r .daemon.heartbeat_age_ms <<<"$s") < 1000)) ||
		fail "$1: heartbeat $(jq -r .daemon.heartbeat_age_ms <<<"$s") ms old"
	check_eq "$1: watchdog fired" "$(jq -r .daemon.watchdog_fired <<<"$s")" false
}

# SIGTERM, and watch the stop: it ends, and the watchdog never fires on the
# way (sampled every 50 ms while the pins are there)
stop_ok() {	# hN [keep]: keep: the daemon runs with --keep-attached
	local h=$1 pid=${RLD_OF[$1]} i fired=false t0 ms
	t0=$(date +%s%N)
	kill -TERM "$pid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		[[ "$(hctl "$h" -j status 2>/dev/null | jq -r '.daemon.watchdog_fired')" == true ]] && fired=true
		sleep 0.05
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if kill -0 "$pid" 2>/dev/null; then
		fail "$h: still stopping 5 s after SIGTERM: $(tail -n 2 "$TMPD/$h.log" | tr '\n' '|')"
		kill -9 "$pid"
	fi
	wait "$pid" 2>/dev/null
	check_eq "$h: the watchdog fired during the stop" $fired false
	if [[ ${2:-} == keep ]]; then
		check_eq "$h: after a --keep-attached stop, watchdog fired" \
			"$(hctl "$h" -j status | jq -r .daemon.watchdog_fired)" false
		check_eq "$h: after a --keep-attached stop, watchdog" "$(hctl "$h" -j status | jq -r .daemon.watchdog_ms)" 0
	fi
	echo "    $h: stopped in $ms ms${2:+ (--keep-attached)}" >&2
}

refused() {	# hN KIND: xdp_rl_fleet_redis_refused_total{kind=KIND}
	hmetric "$1" "xdp_rl_fleet_redis_refused_total{kind=\"$2\"}"
}

no_sanitizer_report() {	# hN: UBSan/ASan said nothing in the daemon's log
	grep -qE "runtime error|AddressSanitizer|LeakSanitizer" "$TMPD/$1.log" &&
		fail "$1: $(grep -m1 -E "runtime error|AddressSanitizer|LeakSanitizer" "$TMPD/$1.log")"
	return 0
}

# 1. every reply sent one byte every 2 ms: each sync would take longer than
# its deadline (75 ms; some 100 ms with a promoted key): failed, never "ok"
# (the leases it would grant run out before the next), the closed rule closed
test_hostile_trickle() {
	local TIMEOUT=45	# a Python server on a busy machine: its replies in time
	lab_up || return
	fake_start 6390 --trickle-ms 2 || return
	FLEET_REDIS=$RADDR:6390 start_h h1 || return
	flood_h h1 198.18.0.9 2000 3	# promoted: longer replies (lease calls)
	sleep 3
	local ok failed
	ok=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="ok"}')
	failed=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	echo "    trickle: $ok syncs ok, $failed failed, $(refused h1 deadline) exchanges cut by a deadline" >&2
	check_eq "syncs counted ok while each reply trickled" "$ok" 0
	((failed > 0)) || fail "no failed sync counted"
	(($(refused h1 deadline) > 0)) || fail "no exchange cut by its deadline"
	# never answered in time, not even once: never-synced (closed: keys
	# over the share dropped)
	check_match "state" "$(hctl h1 stats)" "fleet rule 2: (unsynced|closed|never-synced \\(on-failure closed)"
	hb_ok h1
	stop_ok h1
}

# 1. a reply that stalls for ever (a bulk header, then a byte every 2 ms):
# a reload that changes the fleet lines goes through (nothing joins the sync
# thread under the daemon's lock: /metrics answers), the heartbeat stays
# fresh, and a stop ends, with and without --keep-attached, with the
# watchdog never fired
test_hostile_stall() {
	local TIMEOUT=45	# a Python server on a busy machine: its replies in time
	lab_up || return
	fake_start 6391 --stall || return
	FLEET_REDIS=$RADDR:6391 start_h h1 || return
	RLD_EXTRA=--keep-attached FLEET_REDIS=$RADDR:6391 start_h h2 || return
	sleep 1.5
	hb_ok h1
	hb_ok h2
	# another timeout: the fleet lines change
	TIMEOUT=40 FLEET_REDIS=$RADDR:6391 host_conf h1
	wait_log "$TMPD/h1.log" "reload: fleet lines applied|reload refused" 5
	in_h h1 curl -s -m 3 -o /dev/null "198.18.10.11:9437/metrics" ||
		fail "/metrics does not answer after a reload of the fleet lines"
	hb_ok h1
	check_match "status" "$(hctl h1 status)" "heartbeating"
	stop_ok h1
	stop_ok h2 keep
}

# 2. CLUSTER SLOTS with a negative slot: at the start (seed 7101), and from
# the node a MOVED names, at run time (7102: a good map first, then a bad
# one; its lease calls answer MOVED to itself): refused, counted, no crash
test_hostile_slots() {
	local TIMEOUT=45	# a Python server on a busy machine: its replies in time
	lab_up || return
	fake_start 7101 --slots="-100000:16383:$RADDR:7101" || return
	fake_start 7102 --slots "0:16383:$RADDR:7102" --slots-later="-100000:100:$RADDR:7102,-40:16383:$RADDR:7102" \
		--moved "$RADDR:7102" --on lease || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7101 start_h h1 || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7102 start_h h2 || return
	flood_h h2 198.18.0.9 2000 3	# promoted: lease calls, MOVED
	sleep 3.5
	hb_ok h1 || return
	hb_ok h2 || return
	echo "    bad slot maps refused: h1 $(refused h1 bad_reply), h2 $(refused h2 bad_reply); h2 followed $(hmetric h2 'xdp_rl_fleet_redis_redirects_total{kind="moved"}') MOVED" >&2
	(($(refused h1 bad_reply) > 0)) || fail "h1: the bad slot map not refused"
	(($(hmetric h2 'xdp_rl_fleet_redis_redirects_total{kind="moved"}') > 0)) || fail "h2: no MOVED seen"
	(($(refused h2 bad_reply) > 0)) || fail "h2: the bad slot map after MOVED not refused"
	stop_ok h1
	stop_ok h2
	no_sanitizer_report h1	# leaks, too: reported at exit
	no_sanitizer_report h2
}

# 3. grants of -1 and 1e9: clamped to [0, asked]. Rule 2 (closed, 1000/s
# burst 100) flooded at 2000/s for 3 s: with -1 (nothing, clamped) it
# passes at most its burst and rate; with 1e9 never more per call than was
# asked (at most rate * lease + burst = 250)
test_hostile_grants() {
	local TIMEOUT=45	# a Python server on a busy machine: its replies in time
	lab_up || return
	fake_start 6392 --grant -1 --on lease || return
	fake_start 6393 --grant 1000000000 --on lease || return
	FLEET_REDIS=$RADDR:6392 start_h h1 || return
	RLD_EXTRA=--keep-attached FLEET_REDIS=$RADDR:6393 start_h h2 || return
	sleep 1
	flood_h h1 198.18.0.9 2000 3
	flood_h h2 198.18.0.9 2000 3
	sleep 3.5
	local p1 g2 c2
	p1=$(passed h1 2)
	g2=$(hmetric h2 'xdp_rl_fleet_tokens_total{kind="granted"}')
	c2=$(hmetric h2 xdp_rl_fleet_lease_calls_total)
	echo "    grant -1: passed $p1 of 6000 (bound $BURST + $RATE * 3); grant 1e9: $g2 tokens over $c2 lease calls" >&2
	((p1 <= BURST + RATE * 3)) || fail "grant -1: the closed rule passed $p1 of 6000, over $BURST + $RATE * 3"
	(($(refused h1 grant_clamped) > 0)) || fail "grant -1: no grant clamped"
	((c2 > 0)) || fail "grant 1e9: no lease call"
	((g2 <= 250 * c2)) || fail "grant 1e9: $g2 tokens over $c2 calls: more than asked (at most 250 a call)"
	(($(refused h2 grant_clamped) > 0)) || fail "grant 1e9: no grant clamped"
	hb_ok h1
	hb_ok h2
	stop_ok h1
	stop_ok h2 keep
}

# 4. a real Redis loses its scripts (SCRIPT FLUSH, 15 times under two
# floods): every NOSCRIPT is loaded and retried in a later pipelined pass,
# the replies never out of step (no "SCRIPT LOAD: NOSCRIPT", no failed
# syncs beyond the noise of a busy machine, each rule within the README's
# bound)
test_hostile_noscript() {
	lab_up || return
	start_redis || return
	start_h h1 || return
	N=1 wait_hosts h1 || return
	local f1 f2 i p1 p2 o1 o2
	f1=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	o1=$(passed h1 1)
	p1=$(passed h1 2)
	flood_h h1 198.18.0.1 2000 4
	flood_h h1 198.18.0.9 2000 4
	sleep 0.5
	for ((i = 0; i < 15; i++)); do
		rcli script flush >/dev/null
		sleep 0.2
	done
	sleep 1.5
	f2=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="failed"}')
	o2=$(passed h1 1)
	p2=$(passed h1 2)
	echo "    15 SCRIPT FLUSH: $(hmetric h1 'xdp_rl_fleet_redis_redirects_total{kind="noscript"}') NOSCRIPT followed, $((f2 - f1)) syncs failed; admitted $((o2 - o1)) (rule 1), $((p2 - p1)) (rule 2), bound $(bound 4)" >&2
	(($(hmetric h1 'xdp_rl_fleet_redis_redirects_total{kind="noscript"}') > 0)) || fail "no NOSCRIPT followed"
	((f2 - f1 <= 7)) || fail "$((f2 - f1)) syncs failed after SCRIPT FLUSH: $(grep 'sync failed' "$TMPD/h1.log" | sort | uniq -c | tr '\n' '|')"
	grep -q "SCRIPT LOAD: NOSCRIPT" "$TMPD/h1.log" && fail "the replies got out of step: $(grep -m1 'SCRIPT LOAD: NOSCRIPT' "$TMPD/h1.log")"
	(($(echo "$((o2 - o1)) <= $(bound 4)" | bc -l))) || fail "rule 1 admitted $((o2 - o1)) in 4 s, over the bound"
	(($(echo "$((p2 - p1)) <= $(bound 4)" | bc -l))) || fail "rule 2 admitted $((p2 - p1)) in 4 s, over the bound"
	hb_ok h1
	stop_ok h1
}

# 5. an unreachable standby seed (timeout 200 ms): never connected to while
# the first seed answers; syncs stay short, the closed rule gets its rate
test_hostile_seed() {
	lab_up || return
	start_redis || return
	RLD_EXTRA=--keep-attached TIMEOUT=200 FLEET_REDIS="$RADDR:6379,198.18.10.99:6379" start_h h1 || return
	N=1 wait_hosts h1 || return
	local p1 p2 n slow
	p1=$(passed h1 2)
	flood_h h1 198.18.0.9 1500 3
	sleep 3.5
	p2=$(passed h1 2)
	slow=$(lat_over h1 0.1)
	n=$(hmetric h1 xdp_rl_fleet_sync_duration_seconds_count)
	echo "    standby seed unreachable: $slow of $n syncs over 100 ms; closed rule passed $((p2 - p1)) (B + R*3 = $((BURST + RATE * 3)))" >&2
	((slow * 20 <= n)) || fail "$slow of $n syncs took over 100 ms: the unreachable seed is tried"
	((p2 - p1 >= (BURST + RATE * 3) * 8 / 10)) || fail "the closed rule passed $((p2 - p1)), under 80 % of its rate"
	hb_ok h1
	stop_ok h1 keep
}

# 5. a slot map of 64 nodes, 63 of them unreachable (the hosts key's slot
# on the fake itself): a batch connects only to the nodes that have calls,
# each failed node backs off, and no sync outlasts its deadline; a reload
# that changes the fleet lines (its probe) does not hold up the event loop
test_hostile_many_nodes() {
	local TIMEOUT=45
	lab_up || return
	local hs spec lo i
	hs=$("$PYTHON" -c 'import sys; sys.path.insert(0, sys.argv[1]); import fake_redis; print(fake_redis.key_slot(b"{xrl}:hosts"))' \
		"$TOP/tests/tools")
	spec=""
	for ((i = 0; i < 64; i++)); do
		lo=$((i * 256))
		if ((hs >= lo && hs < lo + 256)); then
			spec+="$lo:$((lo + 255)):$RADDR:7103,"
		else
			spec+="$lo:$((lo + 255)):198.18.10.$((100 + i)):7000,"
		fi
	done
	fake_start 7103 --slots "${spec%,}" || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7103 start_h h1 || return
	flood_h h1 198.18.0.1 2000 4	# promoted: lease calls to unreachable nodes
	flood_h h1 198.18.0.9 2000 4
	sleep 2
	TIMEOUT=40 FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7103 host_conf h1
	wait_log "$TMPD/h1.log" "reload: fleet lines applied|reload refused" 5
	in_h h1 curl -s -m 3 -o /dev/null "198.18.10.11:9437/metrics" ||
		fail "/metrics does not answer after a reload of the fleet lines"
	sleep 2
	local n slow
	slow=$(lat_over h1 0.1)
	n=$(hmetric h1 xdp_rl_fleet_sync_duration_seconds_count)
	echo "    64 nodes, 63 unreachable: $slow of $n syncs over 100 ms; $(refused h1 backoff) calls failed at once (back-off)" >&2
	((n > 0)) || fail "no sync at all"
	check_eq "syncs over 100 ms" "$slow" 0
	hb_ok h1
	stop_ok h1
}

# 7. a master fails over: the first CLUSTER SLOTS puts every slot on a node
# that does not answer (198.18.10.99), the next ones on the fake itself.
# The failed calls ask for the map again (at most once a second): syncs
# come back within a few seconds, without a restart
test_hostile_failover() {
	local TIMEOUT=45
	lab_up || return
	fake_start 7104 --slots "0:16383:198.18.10.99:7000" --slots-later "0:16383:$RADDR:7104" || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7104 start_h h1 || return
	local i ok=0
	for ((i = 0; i < 60; i++)); do
		ok=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="ok"}')
		((ok > 0)) && break
		sleep 0.1
	done
	sleep 1
	ok=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="ok"}')
	echo "    failover: $ok syncs ok after $((i / 10)).$((i % 10)) s" >&2
	((ok > 0)) || fail "no sync ok 6 s after the map moved off a dead node: $(tail -n 2 "$TMPD/h1.log" | tr '\n' '|')"
	hb_ok h1
	stop_ok h1
}

# 8. names where an address belongs (hiredis would resolve them with a
# blocking call): a slot map naming "localhost" and a MOVED to
# "slow.invalid" are refused as bad replies; the seed keeps serving
test_hostile_names() {
	local TIMEOUT=45
	lab_up || return
	fake_start 7105 --slots "0:16383:localhost:7105" || return
	fake_start 7106 --moved "slow.invalid:7106" --on lease || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7105 start_h h1 || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7106 start_h h2 || return
	flood_h h2 198.18.0.9 2000 3	# promoted: lease calls, MOVED
	sleep 3.5
	local ok1 mv2
	ok1=$(hmetric h1 'xdp_rl_fleet_syncs_total{result="ok"}')
	mv2=$(hmetric h2 'xdp_rl_fleet_redis_redirects_total{kind="moved"}')
	echo "    names refused: h1 $(refused h1 bad_reply) maps ($ok1 syncs ok), h2 $(refused h2 bad_reply) of $mv2 MOVED; slow syncs $(lat_over h1 0.25), $(lat_over h2 0.25)" >&2
	(($(refused h1 bad_reply) > 0)) || fail "h1: a slot map with a host name not refused"
	((ok1 > 0)) || fail "h1: no sync ok through the seed"
	((mv2 > 0)) || fail "h2: no MOVED seen"
	(($(refused h2 bad_reply) > 0)) || fail "h2: a MOVED to a host name not refused"
	check_eq "h1: syncs over 250 ms" "$(lat_over h1 0.25)" 0
	check_eq "h2: syncs over 250 ms" "$(lat_over h2 0.25)" 0
	hb_ok h1
	hb_ok h2
	stop_ok h1
	stop_ok h2
}

# 9. one reply too many after each pipeline (":7", a live-host count): it
# never answers the next sync's first call (the live hosts stay 1, never
# 7), the connection is dropped and the reply counted as bad; the closed
# rule stays within its bound
test_hostile_extra() {
	local TIMEOUT=45
	lab_up || return
	fake_start 7107 --extra || return
	FLEET_REDIS=$RADDR:7107 start_h h1 || return
	local i h seen="" p1 p2
	p1=$(passed h1 2)
	flood_h h1 198.18.0.9 2000 3
	for ((i = 0; i < 15; i++)); do
		h=$(hmetric h1 xdp_rl_fleet_live_hosts)
		[[ " $seen " == *" $h "* ]] || seen+=" $h"
		sleep 0.2
	done
	sleep 0.5
	p2=$(passed h1 2)
	echo "    a reply too many: live hosts seen:$seen; $(refused h1 bad_reply) bad replies; closed rule passed $((p2 - p1)) (bound $(bound 4): the flood may stretch on a busy machine)" >&2
	[[ " $seen " == *" 7 "* ]] && fail "a stale reply answered the live-host count (7 seen)"
	(($(refused h1 bad_reply) > 0)) || fail "the reply too many not counted as bad"
	(($(echo "$((p2 - p1)) <= $(bound 4)" | bc -l))) || fail "the closed rule passed $((p2 - p1)), over the bound"
	hb_ok h1
	stop_ok h1
}

# 10. ASK to a node that is importing the slot and has not the script:
# NOSCRIPT there, then SCRIPT LOAD, ASKING and the call, in that order
# (ASKING holds for the next command only: queued before SCRIPT LOAD, the
# LOAD used it up and the call was sent MOVED back). The fake at 7109
# forgets each script once it ran, so every lease call goes that way
test_hostile_ask_load() {
	local TIMEOUT=45
	lab_up || return
	fake_start 7108 --ask "$RADDR:7109" --on lease || return
	fake_start 7109 --importing --moved "$RADDR:7108" || return
	FLEET_OPTS=" cluster" FLEET_REDIS=$RADDR:7108 start_h h1 || return
	flood_h h1 198.18.0.9 2000 3	# promoted: lease calls, ASK
	sleep 3.5
	local g ask ns
	g=$(hmetric h1 'xdp_rl_fleet_tokens_total{kind="granted"}')
	ask=$(hmetric h1 'xdp_rl_fleet_redis_redirects_total{kind="ask"}')
	ns=$(hmetric h1 'xdp_rl_fleet_redis_redirects_total{kind="noscript"}')
	echo "    ASK to an importing node without the script: $ask ASK, $ns NOSCRIPT followed, $g tokens granted" >&2
	((ask > 0)) || fail "no ASK followed"
	((ns > 0)) || fail "no NOSCRIPT followed at the importing node"
	((g > 0)) || fail "no token granted through ASK + SCRIPT LOAD: $(grep -m1 'sync failed' "$TMPD/h1.log")"
	hb_ok h1
	stop_ok h1
}

# 11. a stop without --keep-attached that keeps the pins (another
# interface of the host's, fxk0, attached with xdp-rlctl, not served by
# the daemon): the heartbeat stops, so the watchdog must be disarmed too,
# or it fires on fxk0 two seconds later
test_hostile_stop_pins_kept() {
	lab_up || return
	start_redis || return
	start_h h1 || return
	in_h h1 ip link add fxk0 type veth peer name fxk1 || { fail "cannot add a veth in h1"; return; }
	in_h h1 ip link set fxk0 up
	in_h h1 ip link set fxk1 up
	hctl h1 attach dev fxk0 mode generic >/dev/null || { fail "cannot attach to fxk0"; return; }
	stop_ok h1
	check_match "pins kept" "$(tail -n 3 "$TMPD/h1.log")" "pins kept"
	sleep 2.5	# the watchdog is 2000 ms
	local s
	s=$(hctl h1 -j status)
	echo "    stop with the pins kept: watchdog $(jq -r .daemon.watchdog_ms <<<"$s") ms, fired $(jq -r .daemon.watchdog_fired <<<"$s")" >&2
	check_eq "after a stop that kept the pins, watchdog" "$(jq -r .daemon.watchdog_ms <<<"$s")" 0
	check_eq "after a stop that kept the pins, watchdog fired" "$(jq -r .daemon.watchdog_fired <<<"$s")" false
	hctl h1 detach dev fxk0 >/dev/null
	in_h h1 ip link del fxk0
}

lat_over() {	# hN SECONDS: syncs so far that took longer than SECONDS (one scrape)
	in_h "$1" curl -s "198.18.10.1${1#h}:9437/metrics" | awk -v le="xdp_rl_fleet_sync_duration_seconds_bucket{le=\"$2\"}" '
		$1 == "xdp_rl_fleet_sync_duration_seconds_bucket{le=\"+Inf\"}" { inf = $2 }
		$1 == le { n = $2 }
		END { print inf - n }'
}

rss_kb() {	# PID
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# 6. "$2000000000" then data as fast as the client reads, and "*2000000000"
# then a trickle: refused over the caps, the daemon's memory stays within
# 32 MB of a daemon beside it that talks to a real Redis (under ASan, with
# its quarantine of freed memory held small: else it keeps up to 256 MB of
# the refused buffers, freed, in RSS)
test_hostile_huge() {
	local TIMEOUT=45
	local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4
	export ASAN_OPTIONS	# a Python server on a busy machine: its replies in time
	lab_up || return
	start_redis || return
	fake_start 6394 --huge bulk || return
	fake_start 6395 --huge array || return
	start_h h3 || return
	FLEET_REDIS=$RADDR:6394 start_h h1 || return
	RLD_EXTRA=--keep-attached FLEET_REDIS=$RADDR:6395 start_h h2 || return
	# until each has refused a reply (20 s at most): the bulk one is cut
	# where the bytes pass the cap, or at the call's deadline when the
	# bytes come slower than that (ASan, a busy machine): either way the
	# call ends with nothing kept
	local base r1 r2 i
	for ((i = 0; i < 40; i++)); do
		(($(refused h1 too_large) + $(refused h1 deadline) > 0 && $(refused h2 too_large) > 0)) && break
		sleep 0.5
	done
	sleep 1
	base=$(rss_kb "${RLD_OF[h3]}")
	r1=$(rss_kb "${RLD_OF[h1]}")
	r2=$(rss_kb "${RLD_OF[h2]}")
	echo "    RSS: $((r1 / 1024)) MB (bulk), $((r2 / 1024)) MB (array), $((base / 1024)) MB beside them; refused: $(refused h1 too_large) (and $(refused h1 deadline) at the deadline), $(refused h2 too_large)" >&2
	((r1 <= base + 32768)) || fail "bulk: RSS $((r1 / 1024)) MB, against $((base / 1024)) MB"
	((r2 <= base + 32768)) || fail "array: RSS $((r2 / 1024)) MB, against $((base / 1024)) MB"
	(($(refused h1 too_large) + $(refused h1 deadline) > 0)) ||
		fail "bulk: no reply refused (too large, or cut at the deadline)"
	(($(refused h2 too_large) > 0)) || fail "array: no reply refused as too large"
	hb_ok h1
	hb_ok h2
	stop_ok h1
	stop_ok h2 keep
	stop_ok h3
	no_sanitizer_report h1	# leaks, too: reported at exit
	no_sanitizer_report h2
}

selected "${1:-}" >/dev/null
run_test test_hostile_trickle
run_test test_hostile_stall
run_test test_hostile_slots
run_test test_hostile_grants
run_test test_hostile_noscript
run_test test_hostile_seed
run_test test_hostile_many_nodes
run_test test_hostile_huge
run_test test_hostile_failover
run_test test_hostile_names
run_test test_hostile_extra
run_test test_hostile_ask_load
run_test test_hostile_stop_pins_kept
summary

#!/usr/bin/env bash
# End-to-end: a large rule set (README, "Limits of the design"). A 1 MB file
# of 16,383 endpoint rules whose port ranges overlap, the most the endpoint
# tables take, is checked and reloaded by a daemon under systemd's watchdog
# of the unit (30 s): the reload ends long before it, in little memory, and
# the heartbeat stays fresh meanwhile; a set over the limit is refused by
# --check and by the reload, naming the limit, with the rules in force kept.
# The times are printed, not asserted; what is asserted is the watchdog's
# verdict, the peak memory, and counts.
source "$(dirname "$0")/../lib/e2e.sh"

UNIT_WATCHDOG_USEC=30000000	# packaging/xdp-rld.service: WatchdogSec=30s
N_EP=16383

# big_conf FILE: a metrics line, one source rule, N_EP TCP rules each from
# its own port to 65535 (every slot between two of them its own class)
big_conf() {
	{
		echo "interface d0"
		echo "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
		local i
		for ((i = 0; i < N_EP; i++)); do
			echo "rule add 0.0.0.0/0 proto tcp dport $((N_EP - i))-65535 rate 100/s burst 20"
		done
	} >"$1.tmp" && mv "$1.tmp" "$1"
}

small_conf() {
	write_conf "$1" "interface d0" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1" \
		"rule add 0.0.0.0/0 proto tcp dport 22 rate 100/s burst 20"
}

# over_conf FILE [N]: N (255) rules of distinct prefixes, each from its
# port to 65535: N listed and N*(N+1)/2 class entries; 255 are over the
# 32,768 of IPv4, 250 within
over_conf() {
	{
		echo "interface d0"
		echo "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
		local i
		for ((i = 1; i <= ${2:-255}; i++)); do
			echo "rule add 198.51.100.$i/32 proto udp dport $i-65535 rate 100/s burst 20"
		done
	} >"$1"
}

# ms since the epoch
now_ms() { date +%s%3N; }

# start_rld_wd LOG ARGS...: the daemon with systemd's watchdog variables as
# the unit's WatchdogSec= sets them (WATCHDOG_PID: the daemon's own pid,
# kept by exec)
start_rld_wd() {
	local log=$1
	shift
	(export WATCHDOG_USEC=$UNIT_WATCHDOG_USEC WATCHDOG_PID=$BASHPID
	 exec nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" "$@") >>"$log" 2>&1 &
	RLD_PID=$!
	BG_PIDS+=($RLD_PID)
}

# status_kb PID FIELD: VmRSS, VmHWM of the daemon, in kB
status_kb() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# reload_and_wait LOG REGEX: SIGHUP, then until REGEX is logged; samples the
# heartbeat age meanwhile (MAX_HB_MS), prints nothing, returns the time in
# RELOAD_MS
reload_and_wait() {
	local log=$1 re=$2 t0 age lines
	lines=$(wc -l <"$log")
	MAX_HB_MS=0
	HB_SAMPLES=0
	t0=$(now_ms)
	kill -HUP "$RLD_PID"
	while ((($(now_ms) - t0) < 300000)); do
		tail -n +"$((lines + 1))" "$log" | grep -qE "$re" && break
		age=$(ctl -j status 2>/dev/null | jq -r '.daemon.heartbeat_age_ms')
		if [[ $age =~ ^[0-9]+$ ]]; then
			HB_SAMPLES=$((HB_SAMPLES + 1))
			((age > MAX_HB_MS)) && MAX_HB_MS=$age
		fi
		sleep 0.2
	done
	RELOAD_MS=$(($(now_ms) - t0))
	tail -n +"$((lines + 1))" "$log" | grep -qE "$re" ||
		{ fail "no line /$re/ within 300 s of the SIGHUP: $(tail -n 3 "$log" | tr '\n' '|')"; return 1; }
}

test_check_large_set() {
	local big="$TMPD/big.conf" small="$TMPD/small.conf" out rc t0 t_small t_big
	big_conf "$big"
	small_conf "$small"
	echo "    the file: $(wc -c <"$big") bytes, $((N_EP + 1)) rules"
	t0=$(now_ms)
	out=$("$RLD_BIN" --check --config "$small" 2>&1)
	t_small=$(($(now_ms) - t0))
	check_eq "--check small: $out" $? 0
	t0=$(now_ms)
	out=$("$RLD_BIN" --check --config "$big" 2>&1)
	rc=$?
	t_big=$(($(now_ms) - t0))
	check_eq "--check large: exit ($out)" $rc 0
	check_match "--check large" "$out" "valid, $((N_EP + 1)) rules"
	echo "    --check: ${t_small} ms for 2 rules, ${t_big} ms for $((N_EP + 1))"
}

test_check_over_limit() {
	local over="$TMPD/over.conf" near="$TMPD/near.conf" log="$TMPD/rld.log" out rc i
	over_conf "$over"
	out=$("$RLD_BIN" --check --config "$over" 2>&1)
	rc=$?
	check_eq "--check over the limit: exit" $rc 1
	check_match "--check names the limit, at the last rule" "$out" \
		"^$over:257:[0-9]+: too many endpoint rules and port classes: the IPv4 endpoint rules \(255\) .* more than 32768 entries, the limit per address family"
	# the CLI refuses the same sets: 250 of them in force (loaded by a
	# daemon, left attached), then one rule at a time
	over_conf "$near" 250
	lab_up || return
	: >"$log"
	start_rld "$log" --config "$near" --keep-attached
	wait_log "$log" "running" || return
	kill -TERM "$RLD_PID"
	wait "$RLD_PID" 2>/dev/null
	BG_PIDS=()
	check_eq "250 in force" "$(ctl -j rule list | jq length)" 251
	for ((i = 251; i <= 255; i++)); do
		out=$(ctl rule add 198.51.100.$i/32 proto udp dport $i-65535 rate 100/s burst 20 2>&1) || break
	done
	# 251 to 254 add 252 to 255 entries each: 32,639; 255 would be 32,895
	check_eq "refused at" $i 255
	check_match "rule add over the limit" "$out" "^Error: too many endpoint rules and port classes: the IPv4 endpoint rules \(255\)"
	check_eq "the rules in force kept" "$(ctl -j rule list | jq length)" 255
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "still metered" "$(rule_stat 1 passed_packets)" 5
}

test_reload_large_set() {
	local log="$TMPD/rld.log" conf="$TMPD/rules.conf" over="$TMPD/over.conf"
	local small_ms small_hwm t_big hwm rss
	lab_up || return
	small_conf "$conf"
	: >"$log"
	start_rld_wd "$log" --config "$conf"
	wait_log "$log" "running" || return
	check_match "the unit's watchdog is on" "$(cat "$log")" "systemd watchdog: 30000 ms"
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "metered before" "$(rule_stat 1 passed_packets)" 5
	# a small reload: the scale of the comparison
	write_conf "$conf" "interface d0" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1" \
		"rule add 0.0.0.0/0 proto tcp dport 23 rate 100/s burst 20"
	reload_and_wait "$log" "reload: 2 rules, mode enforce, applied in" || return
	small_ms=$RELOAD_MS
	small_hwm=$(status_kb "$RLD_PID" VmHWM)

	big_conf "$conf"
	reload_and_wait "$log" "reload: $((N_EP + 1)) rules, mode enforce, applied in|reload refused" || return
	t_big=$RELOAD_MS
	hwm=$(status_kb "$RLD_PID" VmHWM)
	rss=$(status_kb "$RLD_PID" VmRSS)
	echo "    reload: ${small_ms} ms for 2 rules, ${t_big} ms for $((N_EP + 1)) ($(grep -oE "$((N_EP + 1)) rules, mode enforce, applied in [0-9.]+ ms" "$log"))"
	echo "    memory: peak ${small_hwm} kB after the small reload, ${hwm} kB after the large one; ${rss} kB resident after"
	echo "    heartbeat age: at most ${MAX_HB_MS} ms in ${HB_SAMPLES} samples during the reload"
	! grep -q "reload refused" "$log" || fail "the large set was refused: $(grep -m1 -B2 'reload refused' "$log" | tr '\n' '|')"
	! grep -q "no more WATCHDOG=1" "$log" || fail "the reload outlasted the unit's watchdog: systemd would kill the daemon"
	! grep -q "has been busy" "$log" || fail "the event loop was busy for long: $(grep -m1 'has been busy' "$log")"
	# the daemon's own watchdog (5 s by default) never saw it stale
	((MAX_HB_MS < 5000)) || fail "the heartbeat went stale during the reload (${MAX_HB_MS} ms)"
	# the peak memory of the reload: a few tens of MB, not the gigabytes of
	# a full rule list per class
	((hwm - small_hwm < 200 * 1024)) || fail "the reload took $(((hwm - small_hwm) / 1024)) MB more at its peak"
	check_eq "every rule in force" "$(ctl -j rule list | jq length)" $((N_EP + 1))
	check_eq "the endpoint rules listed" "$(ctl -j rule list | jq '[.[] | select(.proto == "tcp")] | length')" $N_EP
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "still metered after (bucket kept)" "$(rule_stat 1 passed_packets)" 5
	check_eq "its drops counted" "$(rule_stat 1 dropped_packets)" 15

	# the same size again over itself (one rate changed): the tables hold
	# both sets during the commit
	sed -i "\$s/rate 100\/s/rate 99\/s/" "$conf"
	reload_and_wait "$log" "reload: $((N_EP + 1)) rules, mode enforce, applied in|reload refused" || return
	echo "    reload over itself: ${RELOAD_MS} ms"
	check_eq "reloaded over itself: no refusal" "$(grep -c 'reload refused' "$log")" 0

	# over the limit: refused, the rules in force kept
	over_conf "$over"
	cp "$over" "$conf.tmp" && mv "$conf.tmp" "$conf"
	reload_and_wait "$log" "reload refused" || return
	check_match "the refusal names the limit" "$(cat "$log")" "too many endpoint rules and port classes"
	check_eq "rules kept after the refusal" "$(ctl -j rule list | jq length)" $((N_EP + 1))
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "still metered after the refusal" "$(rule_stat 1 dropped_packets)" 25
}

run_test test_check_large_set
run_test test_check_over_limit
run_test test_reload_large_set
summary

#!/usr/bin/env bash
# End-to-end: live events. A flooded key becomes limited, a polite packet
# after a pause ends it; `xdp-rlctl events` shows both (text and JSON), the
# daemon logs them at a bounded rate and counts them, each reader on a ring
# of its own.
source "$(dirname "$0")/../lib/e2e.sh"

LOG="$TMPD/rld.log"
CONF="$TMPD/rules.conf"
EV="$TMPD/events.out"

lab_up() {
	: >"$LOG"
	: >"$EV"
	lab_up_veth
}

# events_bg ARGS...: xdp-rlctl ARGS (an events command) in the background,
# its stdout in $EV, its stderr in $EV.err; returns once it follows the ring
EV_PID=
events_bg() {
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" "$@" >"$EV" 2>"$EV.err" &
	EV_PID=$!
	BG_PIDS+=($EV_PID)
	local i
	for ((i = 0; i < 100; i++)); do	# its claim, taken before it reads
		lsof_claim && break
		sleep 0.05
	done
	sleep 0.2
}
# the claim's flock is held (by whichever pid: /proc/locks names the process)
lsof_claim() {
	local ino
	ino=$(stat -c %i "$PIN/events" 2>/dev/null) || return 1
	grep -qE "FLOCK .* $EV_PID [0-9a-f:]+:$ino " /proc/locks
}

# over the limit, then a pause and one polite packet
limit_then_recover() {
	flood 198.18.0.1 198.18.0.254 200 >/dev/null
	sleep 1		# rate 10/s, burst 5: full again after 0.5 s (+ one interval)
	flood 198.18.0.1 198.18.0.254 1 >/dev/null
}

test_events_json() {
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 id 4 >/dev/null
	events_bg -j events count 2 timeout 20
	limit_then_recover
	wait_exit "$EV_PID" 10
	check_eq "exit status" $? 0
	check_eq "two lines" "$(wc -l <"$EV")" 2
	check_eq "limited" "$(sed -n 1p "$EV" | jq -c '[.event, .key, .family, .rule, .mode]')" \
		'["limited","198.18.0.1",4,4,"enforce"]'
	check_eq "unlimited" "$(sed -n 2p "$EV" | jq -c '[.event, .key, .rule]')" '["unlimited","198.18.0.1",4]'
	check_eq "its drops" "$(sed -n 2p "$EV" | jq .dropped)" "$(ctl -j show 198.18.0.1 | jq .dropped_packets)"
	check_match "a time" "$(sed -n 1p "$EV" | jq -r .time)" "^$(date -u +%Y-%m-%d)T[0-9:.]+Z$"
	check_eq "nothing on stderr" "$(cat "$EV.err")" ""
}

test_events_text_and_signals() {
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 per /24 id 9 >/dev/null
	events_bg events
	limit_then_recover
	sleep 0.3
	kill -TERM "$EV_PID"
	wait_exit "$EV_PID" 5
	check_eq "SIGTERM: clean exit" $? 0
	check_match "limited line" "$(sed -n 1p "$EV")" \
		"^[0-9-]+T[0-9:.]+Z 198\.18\.0\.0/24 limited by rule 9$"
	check_match "unlimited line" "$(sed -n 2p "$EV")" \
		"^[0-9-]+T[0-9:.]+Z 198\.18\.0\.0/24 no longer limited by rule 9 \(195 dropped\)$"
	check_eq "two lines" "$(wc -l <"$EV")" 2

	# SIGINT, and one reader at a time
	events_bg events
	local out
	out=$(ctl events timeout 1 2>&1)
	check_eq "second reader refused" $? 1
	check_match "says who" "$out" "another 'xdp-rlctl events' \(pid $EV_PID\) follows the events"
	kill -INT "$EV_PID"
	wait_exit "$EV_PID" 5
	check_eq "SIGINT: clean exit" $? 0
	# the claim went with it; a timeout ends a quiet one
	ctl events timeout 1 >/dev/null 2>&1
	check_eq "timeout: clean exit" $? 0
}

metric() {	# NAME{LABELS}
	nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics | awk -v m="$1" '$1 == m { print $2 }'
}

# the daemon reads its own ring: it logs and counts, and xdp-rlctl events
# still sees every event beside it
test_daemon_logs_and_counts() {
	lab_up || return
	printf '%s\n' "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 10/s burst 5 id 1" >"$CONF"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	events_bg -j events count 2 timeout 20
	limit_then_recover
	wait_log "$LOG" "event: 198.18.0.1 limited by rule 1$" || return
	wait_log "$LOG" "event: 198.18.0.1 no longer limited by rule 1 \(195 dropped\)$" || return
	wait_exit "$EV_PID" 10
	check_eq "ctl beside the daemon" "$(jq -r .event "$EV" | tr '\n' ' ')" "limited unlimited "
	check_eq "limited counted" "$(metric 'xdp_rl_events_total{kind="limited"}')" 1
	check_eq "unlimited counted" "$(metric 'xdp_rl_events_total{kind="unlimited"}')" 1
	check_eq "none dropped" "$(metric 'xdp_rl_events_dropped_total{reason="rate_cap"}') $(metric 'xdp_rl_events_dropped_total{reason="ring_full"}')" "0 0"
}

# a flood from a /22's sources: the log takes 20 lines at once, then 10 a
# second, and says how many it left out; the metrics count every event
test_daemon_log_bounded() {
	lab_up || return
	printf '%s\n' "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.19.0.0/16 rate 1/h burst 1 id 2" >"$CONF"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	flood 198.19.4.0/22 198.18.0.254 4096 >/dev/null
	wait_log "$LOG" "events: [0-9]+ more not logged" || return
	sleep 1.2
	local logged unlogged total capped
	logged=$(grep -c "event: 198\.19\." "$LOG")
	unlogged=$(metric xdp_rl_events_unlogged_total)
	total=$(metric 'xdp_rl_events_total{kind="limited"}')
	capped=$(metric 'xdp_rl_events_dropped_total{reason="rate_cap"}')
	((logged >= 20 && logged <= 40)) || fail "logged $logged event lines, expected 20 .. 40"
	check_eq "logged + unlogged = read" $((logged + unlogged)) "$total"
	check_eq "read + capped = every new key" $((total + capped)) \
		"$(metric 'xdp_rl_new_keys_total{rule="2",prefix="198.19.0.0/16",action="limit"}')"
	((capped > 0)) || fail "the cap left out nothing"
	check_eq "said as such" "$(grep -oE 'events: [0-9]+ more' "$LOG" | awk '{ s += $2 } END { print s }')" "$unlogged"
}

# pins of a build without the events rings (as an older one left them) are
# refused with the way out, which works
test_older_pins_refused() {
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	rm "$PIN/xrl_events_rld" "$PIN/xrl_events_ctl" "$PIN/xrl_event_stats"
	local out
	out=$(ctl status 2>&1)
	check_eq "refused" $? 1
	check_match "says why and how out" "$out" \
		"cannot open pinned map .*/xrl_events_rld: No such file or directory \('xdp-rlctl purge' to start over; pinned by an older build of xdp-rl\? detach and purge with that build, or remove $PIN, which detaches it everywhere"
	rm -rf "$PIN"
	no_xdp_on "$DST" d0 || fail "removing the directory did not detach"
	ctl attach dev d0 >/dev/null || fail "attach after the removal"
}

# One reader stays one reader when the pin directory is removed under a
# running daemon (which pins it all again, claim directories aside): the
# reader renews its claim, so a second one is still refused; and purge
# does not pull the maps from under a reader.
test_claim_survives_removed_pins() {
	lab_up || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics off" \
		"rule add 198.18.0.0/24 rate 10/s burst 5 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	events_bg events
	rm -rf "$PIN"
	wait_log "$LOG" "restored the pins" 5 || return
	sleep 1.5	# a poll of the reader's: it renews its claim
	local out
	out=$(ctl events timeout 1 2>&1)
	check_eq "second reader refused after the removal" $? 1
	check_match "names the first" "$out" "another 'xdp-rlctl events' \(pid $EV_PID\)"
	kill_bg		# the daemon too (kill -9: its link stays)
	# purge refuses while a reader follows
	events_bg events
	ctl detach dev d0 >/dev/null || fail "detach"
	out=$(ctl purge 2>&1)
	check_eq "purge refused under a reader" $? 1
	check_match "says who" "$out" "'xdp-rlctl events' \(pid $EV_PID\) follows"
	[[ -e "$PIN/xrl_control" ]] || fail "purge removed pins under a reader"
	kill -TERM "$EV_PID"
	wait_exit "$EV_PID" 5
	# something else's inside a claim directory: nothing removed
	mkdir "$PIN/events/sub"
	out=$(ctl purge 2>&1)
	check_eq "purge refused: foreign entry in events/" $? 1
	[[ -e "$PIN/xrl_control" ]] || fail "purge removed pins before refusing"
	rmdir "$PIN/events/sub"
	ctl purge >/dev/null || fail "purge after the cleanup"
}

run_test test_events_json
run_test test_events_text_and_signals
run_test test_daemon_logs_and_counts
run_test test_daemon_log_bounded
run_test test_older_pins_refused
run_test test_claim_survives_removed_pins
summary

#!/usr/bin/env bash
# End-to-end: outputs that must not mislead. A dry-run rule's drops are
# would-drops in every per-key view (events, show, key list, replay, text
# and JSON); rule list's config output reads back as the same rule set;
# status's cost per packet is a recent one; unprivileged users are told
# "permission denied"; help, completion and rule del say what they mean.
source "$(dirname "$0")/lib.sh"

EV="$TMPD/events.out"
GEN="$TOP/tests/tools/pcapgen.py"

# events_bg ARGS...: xdp-rlctl ARGS (an events command) in the background,
# its stdout in $EV; returns once it holds the events claim
EV_PID=
events_bg() {
	: >"$EV"
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" "$@" >"$EV" 2>"$EV.err" &
	EV_PID=$!
	BG_PIDS+=($EV_PID)
	local i ino
	for ((i = 0; i < 100; i++)); do
		ino=$(stat -c %i "$PIN/events" 2>/dev/null) &&
			grep -qE "FLOCK .* $EV_PID [0-9a-f:]+:$ino " /proc/locks && break
		sleep 0.05
	done
	sleep 0.2
}

# wait_exit PID SECONDS: its exit status, or 124 when it is still running
wait_exit() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			return
		fi
		sleep 0.05
	done
	return 124
}

# over the limit (rate 10/s burst 5), then a pause and one polite packet
limit_then_recover() {	# SRC
	flood "$1" 198.18.0.254 100 >/dev/null
	sleep 1.5	# full again after 0.5 s (+ one interval)
	flood "$1" 198.18.0.254 1 >/dev/null
}

# A dry-run rule's key: "would be limited", its drops would-drops, in the
# events (text and JSON), show, key list; an enforcing rule's beside it
# stays "dropped".
test_dry_run_keys() {
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.1/32 rate 10/s burst 5 dry-run id 9 >/dev/null
	ctl rule add 198.18.0.2/32 rate 10/s burst 5 id 2 >/dev/null
	ctl rule add 198.18.0.3/32 rate 10/s burst 5 dry-run id 3 >/dev/null
	events_bg events count 2 timeout 20
	limit_then_recover 198.18.0.1
	wait_exit "$EV_PID" 10
	check_eq "events: exit" $? 0
	check_match "events: limited" "$(sed -n 1p "$EV")" \
		"^[0-9-]+T[0-9:.]+Z 198\.18\.0\.1 would be limited by rule 9$"
	check_match "events: unlimited" "$(sed -n 2p "$EV")" \
		"^[0-9-]+T[0-9:.]+Z 198\.18\.0\.1 no longer would be limited by rule 9 \(95 would-drops, passed: dry-run\)$"
	events_bg -j events count 2 timeout 20
	limit_then_recover 198.18.0.2
	wait_exit "$EV_PID" 10
	check_eq "events -j: exit" $? 0
	check_eq "events -j: enforcing" "$(jq -c '[.event, .rule, .mode, .dry_run]' <"$EV" | tr '\n' ' ')" \
		'["limited",2,"enforce",false] ["unlimited",2,"enforce",false] '
	events_bg -j events count 1 timeout 20
	flood 198.18.0.3 198.18.0.254 100 >/dev/null
	wait_exit "$EV_PID" 10
	check_eq "events -j: dry-run" "$(jq -c '[.event, .rule, .mode, .dry_run]' <"$EV")" \
		'["limited",3,"dry-run",true]'

	# an endpoint rule's key under show
	ctl rule add 0.0.0.0/0 proto udp dport 9 rate 10/s burst 5 dry-run id 7 >/dev/null
	flood 198.18.0.1 198.18.0.254 10 >/dev/null

	check_match "show: would-drop" "$(ctl show 198.18.0.1)" $'\n''would-drop: 100 \(dry-run: passed\)'$'\n'
	check_match "show: dropped" "$(ctl show 198.18.0.2)" $'\n''dropped:   95'$'\n'
	check_match "show: endpoint would-drops" "$(ctl show 198.18.0.1)" \
		"endpoint: +rule 7 .* [0-9]+ would-drops \(dry-run: passed\)"
	check_eq "show -j" "$(ctl -j show 198.18.0.1 | jq -c '[.dry_run, .dropped_packets, .endpoints[0].dry_run]')" '[true,100,true]'
	check_eq "show -j: enforcing" "$(ctl -j show 198.18.0.2 | jq -c '[.dry_run, .dropped_packets]')" '[false,95]'
	check_eq "key list -j" "$(ctl -j key list | jq -c '[.[] | [.key, .rule, .dry_run]] | sort')" \
		'[["198.18.0.1/32",7,true],["198.18.0.1/32",9,true],["198.18.0.2/32",2,false],["198.18.0.3/32",3,true]]'
	check_match "key list: dry-run key" "$(ctl key list rule 9)" \
		$'\n''198\.18\.0\.1/32 +9 .* 100 .* s ago \(dry-run: would-drops\)$'
	check_match "key list: enforcing key" "$(ctl key list rule 2)" $'\n''198\.18\.0\.2/32 +2 .* 95 .* s ago$'
	# the mode's dry-run: every key's drops are would-drops
	ctl mode set dry-run >/dev/null
	check_eq "mode dry-run: show -j" "$(ctl -j show 198.18.0.2 | jq .dry_run)" true
	check_match "mode dry-run: show" "$(ctl show 198.18.0.2)" $'\n''would-drop: 95 '
}

# replay counts a dry-run rule's would-drops and names its keys' drops so
test_replay_dry_run() {
	local d=$TMPD/replay conf=$TMPD/replay.conf rep out
	mkdir -p "$d"
	printf '%s\n' "rule add 198.18.0.0/24 rate 1/h burst 3 dry-run id 1" \
		"rule add 2001:db8:1::/48 rate 1/h burst 2 id 2" >"$conf"
	python3 "$GEN" mixed "$d/mixed.pcap" || { fail "pcapgen"; return; }
	rep=$("$CTL_BIN" -j replay "$d/mixed.pcap" config "$conf") || { fail "replay failed"; return; }
	check_eq "would-drops" "$(jq -c '[.would_drop_packets, .dropped_packets]' <<<"$rep")" '[12,6]'
	check_eq "per rule" "$(jq -c '[.rules[] | [.id, .dropped_packets, .would_drop_packets]]' <<<"$rep")" \
		'[[1,0,12],[2,4,0]]'
	check_eq "keys" "$(jq -c '[.limited_keys[] | [.key, .dropped_packets, .dry_run]]' <<<"$rep")" \
		'[["198.18.0.1/32",3,true],["198.18.0.2/32",3,true],["198.18.0.3/32",3,true],["2001:db8:1::/64",4,false],["198.18.0.4/32",3,true]]'
	out=$("$CTL_BIN" replay "$d/mixed.pcap" config "$conf")
	check_match "text: rule" "$out" $'\n''rule 1 dry-run: would have dropped 12 packets, 756 bytes'$'\n'
	check_match "text: key" "$out" $'\n''198\.18\.0\.1/32 +1 +3 [^'$'\n'']* \(dry-run: would-drops\)'$'\n'
}

run_test test_dry_run_keys
run_test test_replay_dry_run
summary

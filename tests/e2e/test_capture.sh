#!/usr/bin/env bash
# End-to-end: xdp-rlctl capture. During a flood, the drops written to a
# pcapng file (each with its verdict and rule in its comment) and read
# back by tcpdump; streamed to stdout into tcpdump; ended by count, by
# seconds and by a signal with a summary; one capture at a time (the
# second refused with the first one's pid); a capture killed with SIGKILL
# leaves no capture running in the data path; the file replayed to the
# same verdicts.
source "$(dirname "$0")/../lib/e2e.sh"

DUMP="$TOP/tests/tools/pcapng-dump.py"
CAP="$TMPD/cap.pcapng"

# the control block's capture lease (0: no capture runs)
capture_until() {
	bpftool -j map dump pinned "$PIN/xrl_control" | jq -r '.[0].formatted.value.capture_until'
}

# cap_bg ARGS...: a capture in the background, stdout in $TMPD/bg.out,
# stderr in $TMPD/bg.err; returns once its lease is set
CAP_PID=
cap_bg() {
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" capture "$@" \
		>"$TMPD/bg.out" 2>"$TMPD/bg.err" &
	CAP_PID=$!
	BG_PIDS+=($CAP_PID)
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(capture_until) != 0 ]] && break
		sleep 0.05
	done
	sleep 0.1
}

setup_limited() {
	lab_up || return 1
	ctl attach dev d0 >/dev/null || { fail "attach"; return 1; }
	# one token a minute after a burst of 20: the verdicts do not depend
	# on the flood's timing (the replay's check)
	ctl rule add 198.18.0.0/24 rate 1/min burst 20 id 7 >/dev/null || { fail "rule add"; return 1; }
}

test_capture_drops_file() {
	setup_limited || return
	cap_bg "$CAP" seconds 20
	flood 198.18.0.1 198.18.0.254 150 >/dev/null
	sleep 0.5
	kill -INT "$CAP_PID"
	wait_exit "$CAP_PID" 5
	check_eq "SIGINT: a clean exit" $? 0
	check_match "the summary" "$(cat "$TMPD/bg.err")" \
		"^capture: 130 packets written; 130 matched, 0 left out over the rate cap \(2000/s\), 0 dropped by the buffer$"
	check_eq "no capture runs" "$(capture_until)" 0
	local dump
	dump=$("$DUMP" "$CAP") || { fail "the file parses: $dump"; return; }
	check_eq "one section, one interface" "$(grep -c '^SHB\|^IDB' <<<"$dump")" 2
	check_match "the interface" "$(grep ^IDB <<<"$dump")" "^IDB link=1 snaplen=256 name=d0 tsresol=9$"
	check_eq "130 packets, each a drop of rule 7, inbound" \
		"$(grep -c '^EPB if=0 ts=[0-9]* caplen=106 len=106 flags=0x1 comment=xdp-rl verdict=drop rule=7 mode=enforce ifindex=[0-9]*$' <<<"$dump")" 130
	# tcpdump reads it: the packets and their source
	local td
	td=$(tcpdump -n -r "$CAP" 2>/dev/null)
	check_eq "tcpdump reads 130 packets" "$(wc -l <<<"$td")" 130
	check_match "from the flooding source" "$(head -1 <<<"$td")" "IP 198\.18\.0\.1\.[0-9]+ > 198\.18\.0\.254\.[0-9]+: UDP"
	check_eq "the packets' own count" "$(rule_stat 7 dropped_packets)" 130
}

# capture - | tcpdump -r -: streamed, flushed per packet; ended by count
test_capture_stream_count() {
	setup_limited || return
	nsenter --net="/run/netns/$DST" bash -c \
		'"$1" --pin-dir "$2" capture - count 5 2>"$3" | tcpdump -n -r - 2>/dev/null >"$4"' \
		_ "$CTL_BIN" "$PIN" "$TMPD/st.err" "$TMPD/st.out" &
	local pid=$! i
	BG_PIDS+=($pid)
	for ((i = 0; i < 100; i++)); do
		[[ $(capture_until) != 0 ]] && break
		sleep 0.05
	done
	flood 198.18.0.2 198.18.0.254 100 >/dev/null
	wait_exit "$pid" 10
	check_eq "count 5 ends it" $? 0
	check_eq "tcpdump read 5 packets" "$(wc -l <"$TMPD/st.out")" 5
	check_match "the packets" "$(head -1 "$TMPD/st.out")" "IP 198\.18\.0\.2\.[0-9]+ > 198\.18\.0\.254"
	check_match "the summary" "$(cat "$TMPD/st.err")" "^capture: 5 packets written; "
	check_eq "no capture runs" "$(capture_until)" 0
}

# seconds ends it; the filter: a source prefix, verdict pass; JSON summary
test_capture_seconds_filter() {
	setup_limited || return
	cap_bg -j "$CAP" seconds 2 verdict pass key 198.18.0.3
	flood 198.18.0.1 198.18.0.254 50 >/dev/null
	flood 198.18.0.3 198.18.0.254 50 >/dev/null
	wait_exit "$CAP_PID" 6
	check_eq "seconds 2 ends it" $? 0
	check_eq "the 20 passed packets of 198.18.0.3 only" \
		"$(tcpdump -n -r "$CAP" 2>/dev/null | grep -c '^.* IP 198\.18\.0\.3\.')" 20
	check_eq "nothing else" "$(tcpdump -n -r "$CAP" 2>/dev/null | wc -l)" 20
	check_eq "all passes" "$("$DUMP" "$CAP" | grep -c 'verdict=pass rule=7')" 20
	check_eq "the JSON summary" "$(jq -c '[.written, .matched, .left_out, .buffer_dropped]' "$TMPD/bg.err")" \
		"[20,20,0,0]"
}

# one capture at a time, the second refused with the first one's pid; a
# capture killed with SIGKILL: its lease lapses, and the next one starts
test_capture_one_at_a_time_and_killed() {
	setup_limited || return
	cap_bg "$CAP"
	local out first=$CAP_PID
	out=$(ctl capture "$TMPD/second.pcapng" count 1 2>&1)
	check_eq "a second capture is refused" $? 1
	check_match "with the first one's pid" "$out" "^Error: another capture \(pid $first\) runs on "
	kill -9 "$first"
	wait "$first" 2>/dev/null
	check_match "the lease is still set just after" "$(capture_until)" "^[1-9][0-9]*$"
	local i
	for ((i = 0; i < 80; i++)); do	# at most 5.4 s, then the next packet clears it
		flood 198.18.0.4 198.18.0.254 1 >/dev/null
		[[ $(capture_until) == 0 ]] && break
		sleep 0.1
	done
	check_eq "the killed capture's lease lapsed, cleared by the data path" "$(capture_until)" 0
	out=$(ctl capture "$TMPD/third.pcapng" seconds 1 2>&1)
	check_eq "the next capture runs" $? 0
	# purge waits for a capture to end (its maps would go)
	cap_bg "$CAP"
	ctl detach dev d0 >/dev/null
	out=$(ctl purge 2>&1)
	check_match "purge refused while a capture runs" "$out" "'xdp-rlctl capture' \(pid $CAP_PID\) reads"
	kill -TERM "$CAP_PID"
	wait_exit "$CAP_PID" 5
	ctl purge >/dev/null || fail "purge once it ended"
}

# Over the rate cap: sampled, the rest counted as left out; no verdict
# changes (the rule's counters are the flood's)
test_capture_rate_cap() {
	setup_limited || return
	cap_bg "$CAP" verdict any key 198.18.0.5
	local sent
	sent=$(flood 198.18.0.5 198.18.0.254 20000)
	sleep 0.3
	kill -TERM "$CAP_PID"
	wait_exit "$CAP_PID" 5
	check_eq "SIGTERM: a clean exit" $? 0
	local w m l
	read -r w m l < <(sed -E 's/^capture: ([0-9]+) packets written; ([0-9]+) matched, ([0-9]+) left out.*/\1 \2 \3/' "$TMPD/bg.err")
	check_eq "every packet matched" "$m" "$sent"
	((w < m)) || fail "sampled: $w written of $m"
	((w <= 200 + 2000 * 5)) || fail "over the cap: $w"
	check_eq "written + left out = matched" "$((w + l))" "$m"
	check_eq "the verdicts: 20 passed" "$(rule_stat 7 passed_packets)" 20
	check_eq "the rest dropped" "$(rule_stat 7 dropped_packets)" "$((sent - 20))"
	check_eq "the file holds what was written" "$(tcpdump -n -r "$CAP" 2>/dev/null | wc -l)" "$w"
}

# the file replays to the same verdicts
test_capture_replay() {
	setup_limited || return
	cap_bg "$CAP" verdict any key 198.18.0.0/24
	flood 198.18.0.6 198.18.0.254 150 >/dev/null
	sleep 0.3
	kill -INT "$CAP_PID"
	wait_exit "$CAP_PID" 5
	local dump
	dump=$("$DUMP" "$CAP")
	check_eq "captured: 20 passed" "$(grep -c 'verdict=pass rule=7' <<<"$dump")" 20
	check_eq "captured: 130 dropped" "$(grep -c 'verdict=drop rule=7' <<<"$dump")" 130
	write_conf "$TMPD/rules.conf" "rule add 198.18.0.0/24 rate 1/min burst 20 id 7"
	local r
	r=$(ctl -j replay "$CAP" config "$TMPD/rules.conf")
	check_eq "the replay: the same verdicts" "$(jq -c '[.frames, .passed_packets, .dropped_packets]' <<<"$r")" "[150,20,130]"
	# pcap, without comments, replays the same
	cap_bg "$TMPD/cap.pcap" verdict any key 198.18.0.0/24 format pcap
	ctl key reset 198.18.0.7 >/dev/null
	flood 198.18.0.7 198.18.0.254 150 >/dev/null
	sleep 0.3
	kill -INT "$CAP_PID"
	wait_exit "$CAP_PID" 5
	check_match "a classic pcap file" "$(file -b "$TMPD/cap.pcap")" "pcap capture file"
	r=$(ctl -j replay "$TMPD/cap.pcap" config "$TMPD/rules.conf")
	check_eq "pcap: the same verdicts" "$(jq -c '[.frames, .passed_packets, .dropped_packets]' <<<"$r")" "[150,20,130]"
}

# bad input: a typo, a rule not in the set, a file that cannot be written
test_capture_errors() {
	setup_limited || return
	local out
	out=$(ctl capture "$CAP" key 198.18.0.300 2>&1)
	check_eq "a bad key: a usage error" $? 2
	check_match "says so" "$out" "^Error: .*198\.18\.0\.300"
	out=$(ctl capture "$CAP" rule 99 2>&1)
	check_eq "no rule 99" $? 1
	check_match "says so" "$out" "^Error: no rule 99 in the active set"
	out=$(ctl capture "$TMPD/no/such/dir/x.pcapng" count 1 2>&1)
	check_eq "an unwritable file" $? 1
	check_match "says so" "$out" "^Error: cannot write $TMPD/no/such/dir/x.pcapng"
	check_eq "no capture left running" "$(capture_until)" 0
	out=$(ctl capture "$CAP" snaplen 63 2>&1)
	check_eq "snaplen under 64: a usage error" $? 2
	out=$(ctl capture "$CAP" snaplen 4097 2>&1)
	check_eq "snaplen over 4096: a usage error" $? 2
}

# the reader of '-' gone (head reads one byte and leaves): the next write
# fails, the capture ends with the error and its summary, no lease left
test_capture_reader_gone() {
	setup_limited || return
	nsenter --net="/run/netns/$DST" bash -c \
		'"$1" --pin-dir "$2" capture - 2>"$3" | head -c 1 >/dev/null; echo "${PIPESTATUS[0]}" >"$4"' \
		_ "$CTL_BIN" "$PIN" "$TMPD/rg.err" "$TMPD/rg.rc" &
	local pid=$! i
	BG_PIDS+=($pid)
	for ((i = 0; i < 100; i++)); do
		[[ $(capture_until) != 0 ]] && break
		sleep 0.05
	done
	flood 198.18.0.4 198.18.0.254 100 >/dev/null
	wait_exit "$pid" 10
	check_eq "it ends" $? 0
	check_eq "with an error" "$(cat "$TMPD/rg.rc")" 1
	check_match "that says why" "$(cat "$TMPD/rg.err")" "^Error: cannot write to stdout: Broken pipe"
	check_match "and the summary" "$(cat "$TMPD/rg.err")" "capture: [0-9]+ packets written; "
	check_eq "no capture runs" "$(capture_until)" 0
}

run_test test_capture_drops_file
run_test test_capture_stream_count
run_test test_capture_seconds_filter
run_test test_capture_one_at_a_time_and_killed
run_test test_capture_rate_cap
run_test test_capture_replay
run_test test_capture_errors
run_test test_capture_reader_gone
summary

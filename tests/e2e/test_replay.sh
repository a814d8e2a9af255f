#!/usr/bin/env bash
# End-to-end: `xdp-rlctl replay` runs a capture through the real program on
# private maps with the capture's timestamps as its clock.
#  - a capture taken with tcpdump on the sending veth during a flood gives
#    the verdicts the live program gave the same traffic: exactly for a rule
#    whose outcome does not depend on timing, within a tolerance for one
#    that does; rules from a config file or from the pins, which stay as
#    they were
#  - crafted captures (tests/tools/pcapgen.py): VLAN tags, IPv6, frames cut
#    by the snaplen, frames too short to run, an oversize frame, pcapng and
#    nanosecond pcap, Linux cooked captures, a refused link type, and a
#    capture longer than an hour whose bucket refills
source "$(dirname "$0")/../lib/e2e.sh"

GEN="$TOP/tests/tools/pcapgen.py"

# replay ARGS...: the CLI alone, outside the lab (no pins needed with config)
replay() {
	"$CTL_BIN" replay "$@"
}

# rstat JSON ID FILTER: of a rule in `replay -j` or `stats -j` output
# (FILTER a field name, or a jq filter on the rule)
rstat() {
	local f=$3
	[[ $f =~ ^[a-z_]+$ ]] && f=".$f"
	jq -r ".rules[] | select(.id == $2) | $f" <<<"$1"
}

test_live_capture() {
	lab_up || return
	local cap=$TMPD/live.pcap conf=$TMPD/live.conf err=$TMPD/tcpdump.err pid i live rep pins_before
	cat >"$conf" <<-'EOF'
	# timing does not matter: 1/h refills nothing during the flood
	rule add 198.18.0.0/24 rate 1/h burst 50 id 1
	# timing matters: 200/s over a 1 s flood
	rule add 2001:db8:1::/48 rate 200/s burst 10 id 2
	EOF
	ctl attach dev d0 keys 4096 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 1/h burst 50 id 1 >/dev/null
	ctl rule add 2001:db8:1::/48 rate 200/s burst 10 id 2 >/dev/null

	# XDP on d0 runs before tcpdump's tap there: dropped frames never
	# reach it. What s0 sends is what d0 receives: capture that, cut at
	# 64 bytes (the headers), so that the snaplen handling is tried too.
	nsenter --net="/run/netns/$SRC" tcpdump -i s0 -Q out -s 64 --immediate-mode -U -n -w "$cap" 2>"$err" &
	pid=$!
	BG_PIDS+=($pid)
	for ((i = 0; i < 100; i++)); do
		grep -q "listening on" "$err" && break
		sleep 0.05
	done
	grep -q "listening on" "$err" || { fail "tcpdump did not start: $(cat "$err")"; return; }
	for i in 1 2 3; do
		flood 198.18.0.$i 198.18.0.254 300 3000 >/dev/null &
	done
	flood 2001:db8:1::1 2001:db8:1::fe 1000 1000 >/dev/null
	wait_floods
	sleep 1
	kill -INT $pid
	wait $pid 2>/dev/null
	grep -q "^0 packets dropped by kernel" "$err" ||
		{ fail "tcpdump lost frames: $(tr '\n' '|' <"$err")"; return; }

	live=$(ctl -j stats)
	pins_before=$(ls -l --time-style=+%s.%N "$PIN"; ctl -j rule list)
	check_eq "live: rule 1 passed its burst for each of 3 keys" "$(rstat "$live" 1 passed_packets)" 150
	check_eq "live: rule 1 dropped the rest" "$(rstat "$live" 1 dropped_packets)" 750

	# the config file's rules
	rep=$("$CTL_BIN" -j replay "$cap" config "$conf")
	check_eq "replay: every frame run" "$(jget "$rep" '.frames == .run and .run > 0')" true
	check_eq "replay: frames cut by the snaplen" "$(jget "$rep" '.truncated == .run')" true
	for f in passed_packets dropped_packets passed_bytes dropped_bytes new_keys; do
		check_eq "rule 1 $f: replay = live" "$(rstat "$rep" 1 $f)" "$(rstat "$live" 1 $f)"
	done
	check_eq "rule 1 saw every frame (the capture is whole)" \
		"$(rstat "$rep" 1 '.passed_packets + .dropped_packets')" \
		"$(rstat "$live" 1 '.passed_packets + .dropped_packets')"
	check_eq "rule 2 saw every frame" \
		"$(rstat "$rep" 2 '.passed_packets + .dropped_packets')" \
		"$(rstat "$live" 2 '.passed_packets + .dropped_packets')"
	local lp rp
	lp=$(rstat "$live" 2 passed_packets)
	rp=$(rstat "$rep" 2 passed_packets)
	# the live program's clock ticks every jiffy, the replay's is the
	# capture's: 10 + 200/s x ~1 s, within 10 % of each other
	if ((lp < 100 || rp < 100 || (lp - rp) * 10 > lp || (rp - lp) * 10 > lp)); then
		fail "rule 2 passed: live $lp, replay $rp (not within 10 %)"
	fi
	# the keys: the same drops per key as the live buckets (top)
	check_eq "replay: the limited IPv4 keys and their drops = live top" \
		"$(jget "$rep" '[.limited_keys[] | select(.rule == 1) | "\(.key) \(.dropped_packets)"] | sort | join(",")')" \
		"$(ctl -j top count 100 | jq -r '[.[] | select(.rule == 1) | "\(.key) \(.dropped_packets)"] | sort | join(",")')"
	check_eq "first drop: after the first frame, before the last drop, inside the capture" \
		"$(jq -r '.first_ns as $f | .last_ns as $l | [.limited_keys[] |
			.first_drop_ns > $f and .first_drop_ns <= .last_drop_ns and .last_drop_ns <= $l] | all' <<<"$rep")" true
	# the pins' rules: the same, and nothing of the live instance changes
	rep=$(ctl -j replay "$cap")
	check_match "rules from the pins" "$(jget "$rep" .rules_from)" "^the pins \\($PIN\\)"
	check_eq "pins: rule 1 passed = live" "$(rstat "$rep" 1 passed_packets)" "$(rstat "$live" 1 passed_packets)"
	check_eq "pins: rule 1 dropped = live" "$(rstat "$rep" 1 dropped_packets)" "$(rstat "$live" 1 dropped_packets)"
	# (the lab's link-local chatter keeps moving the unmatched counter)
	check_eq "the live counters are untouched" "$(ctl -j stats | jq -c .rules)" "$(jq -c .rules <<<"$live")"
	check_eq "the pins and rules are untouched" "$(ls -l --time-style=+%s.%N "$PIN"; ctl -j rule list)" "$pins_before"
}

# wait for the background floods of this shell (not the daemons of BG_PIDS)
wait_floods() {
	local j
	for j in $(jobs -p); do
		[[ " ${BG_PIDS[*]} " == *" $j "* ]] || wait "$j"
	done
}

test_crafted() {
	local d=$TMPD/crafted conf=$TMPD/crafted.conf out rep fmt
	mkdir -p "$d"
	cat >"$conf" <<-'EOF'
	rule add 198.18.0.0/24 rate 1/h burst 3
	rule add 2001:db8:1::/48 rate 1/h burst 2
	EOF
	for fmt in pcap pcap-ns pcapng; do
		python3 "$GEN" mixed "$d/mixed.$fmt" --format $fmt || { fail "pcapgen mixed"; return; }
		rep=$(replay -j "$d/mixed.$fmt" config "$conf") || { fail "replay $fmt failed"; continue; }
		check_eq "$fmt: frames, run, too short to run" \
			"$(jget "$rep" '"\(.frames) \(.run) \(.skipped_short)"')" "37 34 3"
		check_eq "$fmt: cut by the snaplen, of which inside the headers, oversize" \
			"$(jget "$rep" '"\(.truncated) \(.cut_in_headers) \(.oversize)"')" "8 2 1"
		# 198.18.0.1 plain, .2 one tag, .3 two tags, .4 cut after the IP
		# header: burst 3 each, 3 dropped each; .6 (4000 bytes) passes
		check_eq "$fmt: IPv4 rule passed/dropped" \
			"$(rstat "$rep" 1 '"\(.passed_packets) \(.dropped_packets) \(.new_keys)"')" "13 12 5"
		check_eq "$fmt: frames cut by the snaplen count their length on the wire" \
			"$(rstat "$rep" 1 passed_bytes)" "$((3 * 60 + 3 * 64 + 3 * 68 + 3 * 60 + 3072))"
		# two addresses of one /64: one key, burst 2 of 6
		check_eq "$fmt: IPv6 rule" "$(rstat "$rep" 2 '"\(.passed_packets) \(.dropped_packets) \(.new_keys)"')" "2 4 1"
		check_eq "$fmt: malformed (cut inside the IP header), non-IP (ARP)" \
			"$(jget "$rep" '"\(.malformed_packets) \(.non_ip_packets)"')" "2 1"
		check_eq "$fmt: limited keys in order of first drop" \
			"$(jget "$rep" '[.limited_keys[] | "\(.key):\(.rule):\(.dropped_packets)"] | join(" ")')" \
			"198.18.0.1/32:1:3 198.18.0.2/32:1:3 198.18.0.3/32:1:3 2001:db8:1::/64:2:4 198.18.0.4/32:1:3"
		# frames 1 ms apart from 2024-05-01T00:00:00Z: the 4th of .1 drops
		check_eq "$fmt: first and last drop of 198.18.0.1" \
			"$(jget "$rep" '.limited_keys[0] | "\(.first_drop_ns) \(.first_drop_offset_ns) \(.last_drop_offset_ns)"')" \
			"1714521600003000000 3000000 5000000"
	done
	out=$(replay "$d/mixed.pcap" config "$conf")
	check_match "text: says frames too short were skipped" "$out" "3 frames shorter than an Ethernet header \\(14 bytes\\) skipped"
	check_match "text: says frames were cut" "$out" "8 frames cut by the snaplen"
	check_match "text: a limited key and its first drop" "$out" \
		$'\n''198\.18\.0\.1/32 +1 +3 0\.003000 +2024-05-01T00:00:00\.003000000Z 0\.005000'

	# Linux cooked captures get an Ethernet header
	for fmt in sll sll2; do
		python3 "$GEN" $fmt "$d/$fmt.pcap" || { fail "pcapgen $fmt"; return; }
		rep=$(replay -j "$d/$fmt.pcap" config "$conf") || { fail "replay $fmt failed"; continue; }
		check_eq "$fmt: converted" "$(jget "$rep" '"\(.linktype) \(.converted)"')" "LINUX_${fmt^^} 12"
		check_eq "$fmt: both rules metered" \
			"$(jget "$rep" '[.rules[] | "\(.passed_packets)/\(.dropped_packets)"] | join(" ")')" "3/3 2/4"
	done
	# another link type is refused, clearly
	python3 "$GEN" ppp "$d/ppp.pcap"
	out=$(replay "$d/ppp.pcap" config "$conf" 2>&1)
	check_eq "ppp: exit" $? 1
	check_match "ppp: refused, naming the link type" "$out" "^Error: .*link type PPP \\(9\\) is not supported"
	out=$(replay "$d/none.pcap" config "$conf" 2>&1)
	check_match "a missing capture" "$out" "^Error: cannot read the capture .*none.pcap"
	printf 'rule add 198.18.0.0/24 rate 0/s burst 1\n' >"$d/bad.conf"
	out=$(replay "$d/mixed.pcap" config "$d/bad.conf" 2>&1)
	check_match "a bad config file: its error, with line and column" "$out" "^Error: .*bad.conf:1:[0-9]+: "
}

test_longer_than_an_hour() {
	local d=$TMPD/hour conf=$TMPD/hour.conf rep fmt
	mkdir -p "$d"
	printf 'rule add 198.18.0.0/24 rate 1/h burst 3\n' >"$conf"
	for fmt in pcap-ns pcapng; do
		python3 "$GEN" hour "$d/hour.$fmt" --format $fmt || { fail "pcapgen hour"; return; }
		rep=$(replay -j "$d/hour.$fmt" config "$conf") || { fail "replay failed"; continue; }
		check_eq "$fmt: spans 3601 s and 4 us" "$(jget "$rep" .duration_ns)" 3601000004000
		# 5 frames at t0: 3 pass; 5 at t0 + 3601 s: the bucket got one
		# token back (1/h), so one more passes, never more. Across the
		# instant where the program's time units wrap 2^64.
		check_eq "$fmt: 3 + 1 refilled passed, 6 dropped" \
			"$(rstat "$rep" 1 '"\(.passed_packets) \(.dropped_packets)"')" "4 6"
		# dropped: the 4th and 5th frames, then the last 4 an hour later
		check_eq "$fmt: the key's drops span the hour" \
			"$(jget "$rep" '.limited_keys[0] | "\(.dropped_packets) \(.first_drop_offset_ns) \(.last_drop_offset_ns)"')" \
			"6 3000 3601000004000"
	done
	# another burst, the same hour: burst + 1
	printf 'rule add 198.18.0.0/24 rate 1/h burst 2\n' >"$conf"
	rep=$(replay -j "$d/hour.pcapng" config "$conf")
	check_eq "burst 2: 2 + 1 refilled" "$(rstat "$rep" 1 passed_packets)" 3
}

# A capture is read twice (its frame count sizes the tables): a FIFO or a
# pipe is refused at once, never waited on.
test_not_a_regular_file() {
	local d=$TMPD/fifo conf=$TMPD/fifo.conf out rc
	mkdir -p "$d"
	printf 'rule add 198.18.0.0/24 rate 1/h burst 3\n' >"$conf"
	mkfifo "$d/cap"
	out=$(timeout 10 "$CTL_BIN" replay "$d/cap" config "$conf" 2>&1)
	rc=$?
	check_eq "FIFO: refused, not waited on" $rc 1
	check_match "FIFO: says why" "$out" "not a regular file"
	out=$(echo | timeout 10 "$CTL_BIN" replay - config "$conf" 2>&1)
	check_eq "stdin: refused" $? 1
}

run_test test_not_a_regular_file
run_test test_crafted
run_test test_longer_than_an_hour
run_test test_live_capture
summary

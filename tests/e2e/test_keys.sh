#!/usr/bin/env bash
# End-to-end: keys as objects (key list, reset, del), top's drop rates, the
# live top watch through a pseudo-terminal (tmux), and per-interface counters
# in stats.
source "$(dirname "$0")/../lib/e2e.sh"

# A tmux server of our own, removed at the end whatever happens.
TMUX_SOCK="xrl$$"
tm() { tmux -L "$TMUX_SOCK" "$@"; }
tm_kill() {	# the server, and the socket file it leaves behind
	tm kill-server >/dev/null 2>&1
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$TMUX_SOCK"
}
trap 'tm_kill; cleanup' EXIT

now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }

# pflood SRC COUNT PPS: a paced flood from $SRC in the background
pflood() {
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s "$1" -d 198.18.0.254 -n "$2" -r "$3" -t 30 >/dev/null &
	BG_PIDS+=($!)
}

test_key_list() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 100 >/dev/null
	ctl rule add 2001:db8:1::/48 rate 1/h burst 10 >/dev/null
	flood 198.18.0.1 198.18.0.254 500 >/dev/null
	flood 198.18.0.2 198.18.0.254 40 >/dev/null
	flood 2001:db8:1::1 2001:db8:1::fe 30 >/dev/null
	local s
	s=$(ctl -j key list)
	check_eq "key list: every key" "$(jget "$s" '[.[].key] | sort | join(" ")')" \
		"198.18.0.1/32 198.18.0.2/32 2001:db8:1::/64"
	check_eq "limited key" "$(jget "$s" '.[] | select(.key == "198.18.0.1/32") | [.rule, .tokens, .burst, .dropped_packets] | join(",")')" \
		"1,0,100,400"
	check_eq "polite key" "$(jget "$s" '.[] | select(.key == "198.18.0.2/32") | [.tokens, .dropped_packets] | join(",")')" "60,0"
	check_eq "v6 key" "$(jget "$s" '.[] | select(.key == "2001:db8:1::/64") | [.rule, .tokens, .dropped_packets] | join(",")')" "2,0,20"
	check_eq "last seen" "$(jget "$s" '[.[].last_seen_ms_ago < 30000] | all')" true
	check_eq "limited" "$(ctl -j key list limited | jq -c '[.[].key] | sort')" '["198.18.0.1/32","2001:db8:1::/64"]'
	check_eq "rule 1" "$(ctl -j key list rule 1 | jq -c '[.[].key] | sort')" '["198.18.0.1/32","198.18.0.2/32"]'
	check_eq "rule 1 limited" "$(ctl -j key list rule 1 limited | jq -c '[.[].key]')" '["198.18.0.1/32"]'
	check_match "text" "$(ctl key list rule 1)" "198.18.0.1/32 +1 +0/100 +400 +[0-9.]+ s ago"
	check_match "text header" "$(ctl key list | head -n 1)" "^KEY +RULE +TOKENS +DROPPED +LAST SEEN"
	local out rc
	out=$(ctl key list rule 9 2>&1)
	rc=$?
	check_eq "unknown rule" "$rc:$out" "1:Error: no rule 9"
	# a changed rule meters with fresh buckets: its old ones are not listed
	ctl rule del 1 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 50 id 1 >/dev/null
	check_eq "old buckets left out" "$(ctl -j key list rule 1 | jq length)" 0
	check_eq "old buckets still there" "$(ctl -j status | jq .keys_tracked.ipv4)" 2
}

# key list prints as the walk goes: a table of 200000 keys or more costs it
# no more memory than one of three.
test_key_list_streams() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 2001:db8::/32 rate 1/h burst 5 per /128 >/dev/null
	flood 2001:db8:1::1/126 2001:db8:1::fe 3 >/dev/null
	rss() {
		python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
			nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" "$@"
	}
	local small big big_j
	small=$(rss key list) || fail "key list of 3 keys failed"
	check_eq "3 keys" "$(ctl -j key list | jq length)" 3
	# 60000 new sources a round, until 200000 keys are tracked (a veth
	# drops some of the live frames when the machine is busy)
	local n=3 round
	for ((round = 1; round <= 10 && n < 200000; round++)); do
		nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -d 2001:db8:1::fe \
			-s 2001:db8:$round::/48 -N 60000 -n 60000 -T 60 >/dev/null
		n=$(ctl -j status | jq .keys_tracked.ipv6)
	done
	((n >= 200000)) || fail "only $n keys tracked after $((round - 1)) floods of 60000 sources"
	check_eq "a line per key" "$(ctl key list | wc -l)" $((n + 1))
	big=$(rss key list) || fail "key list of $n keys failed"
	big_j=$(rss -j key list) || fail "key list -j of $n keys failed"
	# holding them would take at least 200000 * 48 bytes (9 MB)
	((big - small < 4096)) || fail "key list of $n keys took $((big - small)) KiB more than of 3"
	((big_j - small < 4096)) || fail "key list -j of $n keys took $((big_j - small)) KiB more than of 3"
}

test_key_reset_del() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 100 >/dev/null
	ctl rule add 198.18.0.8 action allow >/dev/null
	flood 198.18.0.1 198.18.0.254 200 >/dev/null
	check_eq "limited before" "$(ctl -j show 198.18.0.1 | jq -c '[.tokens, .dropped_packets]')" '[0,100]'
	# reset: a full bucket, the history kept
	check_eq "reset" "$(ctl key reset 198.18.0.1)" "reset key 198.18.0.1/32 of rule 1: 100 tokens"
	check_eq "after reset" "$(ctl -j show 198.18.0.1 | jq -c '[.tracked, .tokens, .dropped_packets]')" '[true,100,100]'
	flood 198.18.0.1 198.18.0.254 150 >/dev/null
	check_eq "passed after reset" "$(rule_stat 1 passed_packets)" 200
	check_eq "dropped after reset" "$(rule_stat 1 dropped_packets)" 150
	check_eq "reset -j" "$(ctl -j key reset 198.18.0.1 | jq -c .)" '{"key":"198.18.0.1/32","rule":1,"tracked":true,"tokens":100}'
	# an untracked key is full already: no error
	check_eq "reset untracked" "$(ctl key reset 198.18.0.9; echo rc=$?)" \
		"$(printf 'key 198.18.0.9/32 of rule 1 is not tracked: its bucket is full (100 tokens)\nrc=0')"
	# del: forgotten; its next packet makes a new key
	check_eq "del" "$(ctl key del 198.18.0.1)" "deleted key 198.18.0.1/32 of rule 1"
	check_eq "after del" "$(ctl -j show 198.18.0.1 | jq .tracked)" false
	check_eq "keys after del" "$(ctl -j key list | jq length)" 0
	flood 198.18.0.1 198.18.0.254 1 >/dev/null
	check_eq "a new key" "$(rule_stat 1 new_keys)" 2
	check_eq "del -j" "$(ctl -j key del 198.18.0.1 | jq -c .)" '{"key":"198.18.0.1/32","rule":1,"tracked":true}'
	local out rc
	out=$(ctl key del 198.18.0.1 2>&1)
	rc=$?
	check_eq "del untracked" "$rc:$out" "1:Error: key 198.18.0.1/32 of rule 1 is not tracked"
	out=$(ctl key reset 192.0.2.1 2>&1)
	rc=$?
	check_eq "no rule" "$rc:$out" "1:Error: no rule matches 192.0.2.1: it has no key"
	out=$(ctl key del 198.18.0.8 2>&1)
	rc=$?
	check_eq "allow rule" "$rc:$out" "1:Error: 198.18.0.8 matches rule 2, action allow: never metered, it has no key"
}

# key reset and del are writers: they wait for the lock (key list does not)
test_key_writers_lock() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 10 >/dev/null
	flood 198.18.0.1 198.18.0.254 20 >/dev/null
	flock "$PIN" sleep 6 &
	local holder=$! t out rc cmd
	BG_PIDS+=($holder)
	for ((t = 0; t < 100; t++)); do
		grep -q "FLOCK.* $holder " /proc/locks && break
		sleep 0.02
	done
	t=$(now_ns)
	check_eq "key list under a held lock" "$(ctl -j key list | jq length)" 1
	(($(ms_since $t) < 1000)) || fail "key list took $(ms_since $t) ms under a held lock"
	for cmd in reset del; do
		out=$(ctl key $cmd 198.18.0.1 2>&1)
		rc=$?
		check_eq "key $cmd under a held lock" $rc 1
		check_match "key $cmd names the holder" "$out" "^Error: $PIN is locked by another xdp-rl process \(pid $holder"
	done
	check_eq "nothing changed" "$(ctl -j show 198.18.0.1 | jq -c '[.tracked, .tokens]')" '[true,0]'
}

test_top_sample_rates() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 10 >/dev/null
	flood 198.18.0.1 198.18.0.254 5000 >/dev/null	# many drops, and then quiet
	pflood 198.18.0.2 8000 2000			# fewer drops, still coming
	sleep 0.7
	local s
	s=$(ctl -j top sample 500)
	check_eq "hottest first" "$(jget "$s" '.[0].key')" 198.18.0.2/32
	check_eq "then the quiet one" "$(jget "$s" '.[1] | [.key, .dropped_packets, .dropped_per_second] | join(",")')" \
		"198.18.0.1/32,4990,0"
	local r
	r=$(jget "$s" '.[0].dropped_per_second')
	((r >= 500 && r <= 4000)) || fail "drop rate of 198.18.0.2: $r/s, expected about 2000/s"
	check_match "text" "$(ctl top sample 100 count 2 | tail -n 1)" "^198.18.0.1/32 +1 +4990 +0$"
	check_match "text header" "$(ctl top sample 100 | head -n 1)" "^KEY +RULE +DROPPED +DROPPED/s$"
	# top watch draws on a terminal only
	local out rc
	out=$(ctl top watch </dev/null 2>&1)
	rc=$?
	check_eq "watch without a terminal" "$rc:$out" "1:Error: top watch needs a terminal (stdin and stdout); without one, use top"
	out=$(ctl -j top watch 2>&1)
	rc=$?
	check_eq "watch -j" "$rc:$out" '2:{"error":"top watch draws a screen; for JSON use top -j"}'
}

# watch_start NAME: top watch in a tmux pane of 120x40; when it ends the
# pane prints its exit status and the terminal's modes, and stays
watch_start() {
	tm new-session -d -s "$1" -x 120 -y 40 \
		"nsenter --net=/run/netns/$DST $CTL_BIN --pin-dir $PIN top watch sample 500; echo \"exit=\$?\"; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo|isig)' | tr '\n' ' '; echo; sleep 60"
}
screen() { tm capture-pane -p -t "$1"; }
# wait_screen NAME REGEX: until the pane shows it (10 s)
wait_screen() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ "$(screen "$1")" =~ $2 ]] && return 0
		sleep 0.1
	done
	fail "$1: the screen never showed /$2/; it shows:"
	screen "$1" | sed 's/^/      | /' >&2
	return 1
}
# watch_pid NAME: the pid of xdp-rlctl in the pane (the pane's shell's child)
watch_pid() {
	pgrep -P "$(tm list-panes -t "$1" -F '#{pane_pid}')" -x xdp-rlctl
}

RESTORED='exit=([0-9]+)[[:space:]]+isig icanon echo'

test_top_watch() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 10/s burst 10 >/dev/null
	watch_start w1
	wait_screen w1 "xdp-rl top - $PIN" || { tm_kill; return; }
	pflood 198.18.0.3 12000 3000
	# a frame that saw the flood: the rule's and the key's drop rates
	wait_screen w1 $'\n''1 +198\.18\.0\.0/24 +limit +[0-9]+ +[1-9][0-9]+ +[0-9]+ +[1-9][0-9]*' &&
		wait_screen w1 $'\n''198\.18\.0\.3/32 +1 +[1-9][0-9]+ +[1-9][0-9]*'
	local s
	s=$(screen w1)
	check_match "header" "$s" "RULE +PREFIX +ACTION +PASSED/s +DROPPED/s +PASSED +DROPPED"
	check_match "keys header" "$s" "KEY +RULE +DROPPED/s +DROPPED"
	check_match "quit line" "$s" "q: quit"
	# the screen refreshes while the flood goes on
	local d1 d2
	d1=$(grep -oE '^198\.18\.0\.3/32 +1 +[0-9]+ +[0-9]+' <<<"$s" | awk '{print $4}')
	sleep 1.2
	d2=$(screen w1 | grep -oE '^198\.18\.0\.3/32 +1 +[0-9]+ +[0-9]+' | awk '{print $4}')
	((${d2:-0} > ${d1:-0})) || fail "the screen did not refresh: dropped $d1, then $d2"
	tm send-keys -t w1 q
	wait_screen w1 "$RESTORED"
	s=$(screen w1)
	check_match "q: exit 0, terminal restored" "$s" "exit=0[[:space:]]+isig icanon echo"
	[[ "$s" != *"KEY "* ]] || fail "the alternate screen was not left: $s"
	[[ -z "$(watch_pid w1)" ]] || fail "xdp-rlctl still runs after q"

	# Ctrl-C quits as q does
	watch_start w2
	wait_screen w2 "xdp-rl top - $PIN"
	tm send-keys -t w2 C-c
	wait_screen w2 "$RESTORED" && check_match "Ctrl-C: exit 0, terminal restored" "$(screen w2)" "exit=0[[:space:]]+isig icanon echo"

	# a signal from elsewhere: the terminal restored too
	local pid
	watch_start w3
	wait_screen w3 "xdp-rl top - $PIN"
	pid=$(watch_pid w3)
	[[ -n "$pid" ]] && kill -TERM "$pid"
	wait_screen w3 "$RESTORED" && check_match "SIGTERM: exit 143, terminal restored" "$(screen w3)" "exit=143[[:space:]]+isig icanon echo"
	tm_kill
}

# Per-interface counters: the packets each interface received, by verdict
test_stats_per_interface() {
	lab_up || return
	lab_up_src2 || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl attach dev d1 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 100 >/dev/null
	flood 198.18.0.1 198.18.0.254 100 >/dev/null	# through d0: all passed
	nsenter --net="/run/netns/$SRC2" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -n 60 -r 40000 >/dev/null
	# each interface's verdicts: also on what no rule matched (the
	# kernel's own IPv6 traffic on a new link), so passed is at least
	local s
	s=$(ctl -j stats)
	check_eq "interfaces" "$(jget "$s" '[.interfaces[].ifname] | sort | join(" ")')" "d0 d1"
	check_eq "dropped per interface" "$(jget "$s" '[.interfaces[] | "\(.ifname),\(.dropped_packets)"] | sort | join(" ")')" \
		"d0,0 d1,60"
	check_eq "d0 passed the rule's 100" "$(jget "$s" '.interfaces[] | select(.ifname == "d0") | .passed_packets >= 100')" true
	check_eq "d1 passed none of the rule's" \
		"$(jget "$s" '(.interfaces[] | select(.ifname == "d1") | .passed_packets) <= .global.unmatched_packets')" true
	check_eq "the sum is the global count" "$(jget "$s" '([.interfaces[].passed_packets] | add) == .global.passed_packets.enforce')" true
	check_eq "ifindex" "$(jget "$s" '.interfaces[] | select(.ifname == "d1") | .ifindex')" \
		"$(ip -n "$DST" -j link show d1 | jq '.[0].ifindex')"
	check_eq "not shared" "$(jget "$s" '[.interfaces[] | has("counters_shared_with")] | any')" false
	s=$(ctl stats)
	check_match "text d0" "$s" "interface d0: passed [0-9]+, dropped 0"
	check_match "text d1" "$s" "interface d1: passed [0-9]+, dropped 60"
}

run_test test_key_list
run_test test_key_list_streams
run_test test_key_reset_del
run_test test_key_writers_lock
run_test test_top_sample_rates
run_test test_top_watch
run_test test_stats_per_interface
summary

#!/usr/bin/env bash
# End-to-end: named sets through xdp-rlctl on the wire: the set commands,
# rules that take a set, set load of every format (and a bad line that
# applies nothing), timeouts, and a 1,000,000-prefix set (IPv4 and IPv6,
# random lengths) loaded and swapped under a flood: no mixed verdicts, no
# polite packet lost.
source "$(dirname "$0")/../lib/e2e.sh"

SETGEN="$OUT/setgen"

# The commands, and a rule that takes a set, on the wire.
test_set_commands() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	check_eq "create" "$(ctl set create bl)" "created set bl"
	check_match "twice" "$(ctl set create bl 2>&1)" "^Error: set 'bl' exists already"
	check_match "bad name" "$(ctl set create 9x 2>&1)" "^Error: invalid set name '9x': it begins with a letter"
	check_eq "add" "$(ctl set add bl 198.18.0.1)" "added 1 prefix: set bl"
	check_eq "add range" "$(ctl set add bl 198.18.0.5-198.18.0.7)" "added 2 prefixes: set bl"
	ctl set add bl 2001:db8:1::1 >/dev/null
	check_eq "show" "$(ctl set show bl | tail -n +2 | tr '\n' ' ')" \
		"198.18.0.1/32 198.18.0.5/32 198.18.0.6/31 2001:db8:1::1/128 "
	check_eq "show -j" "$(ctl -j set show bl | jq -c '[.prefixes, [.elements[].prefix]]')" \
		'[4,["198.18.0.1/32","198.18.0.5/32","198.18.0.6/31","2001:db8:1::1/128"]]'
	check_eq "a rule of a missing set" "$(ctl rule add @nope action deny 2>&1)" \
		"Error: no set 'nope' (set create nope, or set load nope FILE)"
	check_eq "rule add" "$(ctl rule add @bl action deny)" "added rule 1 for @bl"
	ctl rule add 198.18.0.0/24 action allow >/dev/null
	check_match "rule list" "$(ctl rule list | grep '^1 ')" "^1 +@bl +deny"
	check_eq "rule list config" "$(ctl rule list config | head -n 1)" "rule add @bl action deny id 1 on-failure open"
	check_eq "set list -j" "$(ctl -j set list | jq -c '.[] | [.name, .prefixes, .rules]')" '["bl",4,1]'
	check_eq "denied" "$(flood 198.18.0.1 198.18.0.254 50 >/dev/null; rule_stat 1 dropped_packets)" 50
	check_eq "IPv6 denied" "$(flood 2001:db8:1::1 2001:db8:1::fe 20 >/dev/null; rule_stat 1 dropped_packets)" 70
	check_eq "outside the set" "$(flood 198.18.0.2 198.18.0.254 30 >/dev/null; rule_stat 2 passed_packets)" 30
	check_eq "show: the set rule" "$(ctl -j show 198.18.0.1 | jq -c '[.rule, .prefix]')" '[1,"@bl"]'
	# a limit rule of a set: its key, shown and reset
	ctl set create lim >/dev/null
	ctl set add lim 198.18.0.9 >/dev/null
	ctl rule add @lim rate 1/h burst 2 per /24 id 3 >/dev/null
	check_eq "limited" "$(flood 198.18.0.9 198.18.0.254 5 >/dev/null; rule_stat 3 dropped_packets)" 3
	check_eq "show: its key" "$(ctl -j show 198.18.0.9 | jq -c '[.rule, .key, .tokens]')" '[3,"198.18.0.0/24",0]'
	ctl key reset 198.18.0.9 >/dev/null
	check_eq "key reset" "$(ctl -j show 198.18.0.9 | jq .tokens)" 2
	ctl rule del 3 >/dev/null
	check_match "in use" "$(ctl set del bl 2>&1)" "^Error: set 'bl' is taken by a rule"
	check_eq "del one" "$(ctl set del bl 198.18.0.1)" "deleted 1 prefix: set bl"
	check_match "del a missing one" "$(ctl set del bl 198.18.0.1 2>&1)" "^Error: no such prefix in set 'bl'"
	check_eq "passes now" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 2 passed_packets)" 40
	check_eq "flush" "$(ctl set flush bl)" "flushed set bl"
	check_eq "empty" "$(ctl -j set show bl | jq -c '[.prefixes, .elements]')" '[0,[]]'
	ctl rule del 1 >/dev/null
	check_eq "del set" "$(ctl set del bl)" "removed set bl"
	ctl set del lim >/dev/null
	check_eq "gone" "$(ctl -j set list)" "[]"
}

# set load: every format, ranges, and a bad line that applies nothing.
test_set_load_formats() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	printf '# plain\n\n198.18.0.1\n198.18.0.4/30  # four\n2001:db8:1::/120\n' >"$TMPD/plain.txt"
	printf '#\n# firehol_level1\n#\n# Maintainer: FireHOL\n#\n198.18.0.0/31\n198.51.100.0/24\n' >"$TMPD/f.netset"
	printf 'create bl hash:net family inet hashsize 1024 maxelem 65536\nadd bl 198.18.0.8/31 timeout 600\nadd bl 198.18.0.3\n' \
		>"$TMPD/ipset.save"
	printf '198.18.0.1-198.18.0.6\n2001:db8:1::1-2001:db8:1::2\n' >"$TMPD/ranges.txt"
	check_match "plain" "$(ctl set load s "$TMPD/plain.txt")" "^loaded 3 prefixes into set s in [0-9.]+ s$"
	check_eq "plain, read back" "$(ctl set show s | tail -n +2 | tr '\n' ' ')" "198.18.0.1/32 198.18.0.4/30 2001:db8:1::/120 "
	ctl set load s "$TMPD/f.netset" >/dev/null
	check_eq "netset" "$(ctl set show s | tail -n +2 | tr '\n' ' ')" "198.18.0.0/31 198.51.100.0/24 "
	ctl set load s "$TMPD/ipset.save" >/dev/null
	check_match "ipset save, its timeout" "$(ctl set show s | tail -n +2 | tr '\n' ' ')" "^198.18.0.3/32 198.18.0.8/31 timeout (600|599)s $"
	ctl set load s "$TMPD/ranges.txt" >/dev/null
	check_eq "ranges" "$(ctl set show s | tail -n +2 | tr '\n' ' ')" \
		"198.18.0.1/32 198.18.0.2/31 198.18.0.4/31 198.18.0.6/32 2001:db8:1::1/128 2001:db8:1::2/128 "
	ctl rule add @s action deny >/dev/null
	printf '198.18.0.9\n198.18.0.1/33\n' >"$TMPD/bad.txt"
	check_eq "FILE:LINE" "$(ctl set load s "$TMPD/bad.txt" 2>&1)" \
		"Error: $TMPD/bad.txt:2: invalid prefix '198.18.0.1/33': length must be 0..32 (out of range)"
	check_eq "nothing applied" "$(ctl -j set show s | jq .prefixes)" 6
	check_eq "still denied" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 10
	check_match "missing" "$(ctl set load s "$TMPD/none.txt" 2>&1)" "^Error: $TMPD/none.txt: No such file or directory$"
	check_match "directory" "$(ctl set load s "$TMPD" 2>&1)" "^Error: $TMPD: a directory, not a set file$"
	truncate -s 300M "$TMPD/huge.txt"
	check_match "huge" "$(ctl set load s "$TMPD/huge.txt" 2>&1)" "^Error: $TMPD/huge.txt: 314572800 bytes, over the 256 MiB"
	rm -f "$TMPD/huge.txt"
	"$SETGEN" 1048577 3 >"$TMPD/over.txt"
	check_match "over the bound" "$(ctl set load s "$TMPD/over.txt" 2>&1)" \
		"^Error: $TMPD/over.txt:1048577: more than 1048576 prefixes"
	check_eq "still nothing applied" "$(ctl -j set show s | jq .prefixes)" 6
	# set load creates a set that is missing
	check_match "creates" "$(ctl set load new "$TMPD/plain.txt")" "^loaded 3 prefixes into set new"
}

# Timeouts: the data path stops matching an element on time; the CLI
# sweeps it when it touches the set.
test_set_timeouts() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl set create t timeout 1 >/dev/null
	ctl set add t 198.18.0.1 >/dev/null
	ctl set add t 198.18.0.2 timeout 1h >/dev/null
	ctl rule add @t action deny >/dev/null
	check_eq "before" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 10
	sleep 1.2
	check_eq "expired: passes" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 10
	check_eq "its own timeout holds" "$(flood 198.18.0.2 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 20
	check_match "the sweep" "$(ctl set show t)" "^set t: 1 prefix, .*
198.18.0.2/32 timeout 3[56][0-9][0-9]s$"
	check_match "set list" "$(ctl set list | tail -n 1)" "^t +1 +1s "
}

# A million prefixes, IPv4 and IPv6 of random lengths, loaded and swapped
# under a flood: the flooding source is in both versions of the set (a /32,
# then inside a /31), the polite one in neither; every flood packet is
# dropped, every polite one passes.
test_set_million_swap() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	local t0 t1
	t0=$(date +%s.%N)
	{ "$SETGEN" 999999 11; echo 198.18.0.1; } >"$TMPD/a.txt"
	{ "$SETGEN" 999999 12; echo 198.18.0.0/31; } >"$TMPD/b.txt"
	t1=$(date +%s.%N)
	echo "    generated two sets of 1000000 prefixes in $(echo "$t1 - $t0" | bc) s"
	check_eq "v4 and v6" "$(grep -c : "$TMPD/a.txt" | awk '{ print ($1 > 300000 && $1 < 400000) }')" 1
	local out
	out=$(ctl set load big "$TMPD/a.txt")
	echo "    $out"
	check_match "loaded" "$out" "^loaded 1000000 prefixes into set big in [0-9.]+ s$"
	echo "    $(ctl set list | tail -n 1)"
	check_eq "counted" "$(ctl -j set list | jq '.[0].prefixes')" 1000000
	check_match "memory per prefix" "$(ctl -j set list | jq '.[0].memory_bytes / .[0].prefixes')" "^[0-9.]+$"
	check_eq "status -j" "$(ctl -j status | jq -c '.sets | [.count, .prefixes]')" '[1,1000000]'
	echo "    $(ctl status | grep '^sets:')"
	ctl rule add @big action deny id 1 >/dev/null
	ctl rule add 198.18.0.2 action allow id 2 >/dev/null
	# the flood (bounded: 30 s) and the polite source (1000/s for 20 s)
	nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m "$DST_MAC" -s 198.18.0.1 -d 198.18.0.254 \
		-n 200000000 -l 106 -T 30 -j >"$TMPD/flood.json" 2>&1 &
	local fpid=$!
	BG_PIDS+=("$fpid")
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.2 -d 198.18.0.254 -n 20000 -r 1000 -t 30 \
		>"$TMPD/polite.out" 2>&1 &
	local ppid=$!
	BG_PIDS+=("$ppid")
	sleep 1
	local i
	for i in 1 2 3; do
		if ((i % 2)); then out=$(ctl set load big "$TMPD/b.txt"); else out=$(ctl set load big "$TMPD/a.txt"); fi
		echo "    under the flood: $out"
		check_match "swap $i" "$out" "^loaded 1000000 prefixes"
	done
	kill -INT "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	wait "$ppid" 2>/dev/null
	local s sent passed vdrop
	s=$(ctl -j stats)
	sent=$(tail -n 1 "$TMPD/polite.out")
	passed=$(jget "$s" '.rules[] | select(.id == 2) | .passed_packets')
	# what the veth itself dropped before XDP saw it (its ring full of flood)
	vdrop=$(ip -n "$DST" -j -s link show d0 | jq '.[0].stats64.rx.dropped')
	echo "    flood: $(jget "$s" '.rules[] | select(.id == 1) | .dropped_packets') dropped," \
		"$(jget "$s" '.rules[] | select(.id == 1) | .passed_packets') passed; polite: $passed passed," \
		"$(jget "$s" '.rules[] | select(.id == 2) | .dropped_packets') dropped, of $sent sent; the veth dropped $vdrop before XDP"
	check_eq "flood: no packet passed" "$(jget "$s" '.rules[] | select(.id == 1) | .passed_packets')" 0
	check_match "flood: dropped" "$(jget "$s" '.rules[] | select(.id == 1) | .dropped_packets')" "^[1-9][0-9]{5,}$"
	check_eq "polite: none dropped" "$(jget "$s" '.rules[] | select(.id == 2) | .dropped_packets')" 0
	check_eq "xdp-rl dropped only the flood" "$(jget "$s" '.global.dropped_packets | add')" \
		"$(jget "$s" '.rules[] | select(.id == 1) | .dropped_packets')"
	check_match "polite: sent" "$sent" "^[0-9]+$"
	# a polite packet the veth did not drop reached XDP and passed
	check_eq "polite: every one passed (or lost in the veth)" \
		"$(( passed >= sent - vdrop && passed <= sent ))" 1
}

# The daemon's sets: set NAME file PATH, loaded with the rules; a bad set
# file refuses the reload (rules and sets unchanged) and --check says
# FILE:LINE; a set made with xdp-rlctl stays beside the file's.
test_set_daemon() {
	lab_up || return
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log"
	printf '198.18.0.1\n198.18.0.5-198.18.0.6\n' >"$TMPD/bl.txt"
	write_conf "$conf" "interface d0" "metrics 127.0.0.1:9437" "watchdog 0" \
		"set bl file $TMPD/bl.txt timeout 1h" \
		"rule add @bl action deny id 1" "rule add 0.0.0.0/0 action allow id 2"
	check_eq "--check" "$("$RLD_BIN" --check --config "$conf" 2>&1)" "$conf: valid, 2 rules"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	check_match "loaded" "$(cat "$log")" "set bl: 3 prefixes from $TMPD/bl.txt"
	check_eq "the set" "$(ctl -j set show bl | jq -c '[.prefixes, [.elements[].prefix]]')" \
		'[3,["198.18.0.1/32","198.18.0.5/32","198.18.0.6/32"]]'
	check_match "the file's timeout" "$(ctl set show bl | sed -n 2p)" "timeout 3[56][0-9][0-9]s$"
	check_eq "denied" "$(flood 198.18.0.1 198.18.0.254 20 >/dev/null; rule_stat 1 dropped_packets)" 20
	local m
	m=$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)
	check_match "metrics: prefixes" "$m" 'xdp_rl_set_prefixes\{set="bl"\} 3'
	check_match "metrics: memory" "$m" 'xdp_rl_set_memory_bytes\{set="bl"\} [1-9][0-9]*'
	# a bad line: the reload is refused, nothing changes
	printf '198.18.0.2\nbogus\n' >"$TMPD/bl.txt"
	kill -HUP "$RLD_PID"
	wait_log "$log" "bl.txt:2: invalid prefix 'bogus'" || return
	wait_log "$log" "a set file is refused; the rules and sets in force are unchanged" || return
	check_eq "set unchanged" "$(ctl -j set show bl | jq .prefixes)" 3
	local out rc
	out=$("$RLD_BIN" --check --config "$conf" 2>&1)
	rc=$?
	check_eq "--check exit" $rc 1
	check_match "--check FILE:LINE" "$out" "set bl \(line 4\): $TMPD/bl.txt:2: invalid prefix 'bogus'"
	rm -f "$TMPD/bl.txt"
	check_match "--check missing" "$("$RLD_BIN" --check --config "$conf" 2>&1)" "$TMPD/bl.txt: No such file or directory"
	# a good file: applied with the rules
	printf '198.18.0.2\n' >"$TMPD/bl.txt"
	kill -HUP "$RLD_PID"
	wait_log "$log" "set bl: 1 prefixes" || return
	check_eq "swapped" "$(ctl -j set show bl | jq -c '[.elements[].prefix]')" '["198.18.0.2/32"]'
	check_eq "passes now" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 2 passed_packets)" 10
	# xdp-rlctl's own set beside the file's: a reload leaves it
	ctl set create mine >/dev/null
	kill -HUP "$RLD_PID"
	wait_log "$log" "reload: 2 rules" || return
	check_eq "both sets" "$(ctl -j set list | jq -c '[.[].name]')" '["bl","mine"]'
}

# A set's trie is pinned as xrl_set_N beside the maps: set del and a purge
# take it away, a load leaves no xrl_set_N_new.
test_set_pins() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl set create a >/dev/null
	ctl set create b >/dev/null
	printf '198.18.0.1\n' >"$TMPD/p.txt"
	ctl set load b "$TMPD/p.txt" >/dev/null
	check_eq "pinned" "$(cd "$PIN" && ls -d xrl_set_[0-9]* | tr '\n' ' ')" "xrl_set_0 xrl_set_1 "
	ctl set del a >/dev/null
	check_eq "set del unpins" "$(cd "$PIN" && ls -d xrl_set_[0-9]* | tr '\n' ' ')" "xrl_set_1 "
	ctl detach dev d0 purge >/dev/null
	check_eq "purge: nothing left" "$(ls -A "$PIN" 2>/dev/null | tr '\n' ' ')" ""
}

# A reload that would fail after a set was swapped is refused before any
# set is: a rule taking a set that is nowhere, or more sets than fit.
test_set_daemon_all_or_nothing() {
	lab_up || return
	local conf="$TMPD/rules.conf" log="$TMPD/rld-all.log"
	printf '198.18.0.1\n' >"$TMPD/bl.txt"
	write_conf "$conf" "interface d0" "watchdog 0" "set bl file $TMPD/bl.txt" \
		"rule add @bl action deny id 1" "rule add 0.0.0.0/0 action allow id 2"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	# a new file, and a rule of a set that does not exist: refused whole
	printf '198.18.0.2\n' >"$TMPD/bl.txt"
	write_conf "$conf" "interface d0" "watchdog 0" "set bl file $TMPD/bl.txt" \
		"rule add @bl action deny id 1" "rule add @nosuch action deny id 3" \
		"rule add 0.0.0.0/0 action allow id 2"
	kill -HUP "$RLD_PID"
	wait_log "$log" "no set 'nosuch'" || return
	check_eq "set unchanged (unknown set)" "$(ctl -j set show bl | jq -c '[.elements[].prefix]')" '["198.18.0.1/32"]'
	check_eq "still denied" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 10
	# 63 sets of xdp-rlctl's beside bl: two new ones do not fit
	local i
	for i in $(seq 1 62); do ctl set create "own$i" >/dev/null; done
	printf '198.18.0.3\n' >"$TMPD/x.txt"
	write_conf "$conf" "interface d0" "watchdog 0" "set bl file $TMPD/bl.txt" \
		"set new1 file $TMPD/x.txt" "set new2 file $TMPD/x.txt" \
		"rule add @bl action deny id 1" "rule add 0.0.0.0/0 action allow id 2"
	kill -HUP "$RLD_PID"
	wait_log "$log" "at most 64 sets" || return
	check_eq "set unchanged (too many)" "$(ctl -j set show bl | jq -c '[.elements[].prefix]')" '["198.18.0.1/32"]'
	check_eq "no new set" "$(ctl -j set list | jq length)" 63
}

# An upgrade to another build keeps the sets, their pins and the rules that
# take them; a set loaded after it is the new program's too.
test_set_upgrade() {
	lab_up || return
	local dir="$TMPD/upgrade" new
	mkdir -p "$dir"
	make -s -C "$TOP" OUTPUT="$dir/out" VERSION="9.9.9-sets-upgrade" "$dir/out/xdp-rlctl" >"$dir/build.log" 2>&1 ||
		{ fail "build of the second version failed: $(tail -n 5 "$dir/build.log")"; return; }
	new="$dir/out/xdp-rlctl"
	ctl attach dev d0 >/dev/null
	ctl set create bl timeout 1h >/dev/null
	ctl set add bl 198.18.0.1 >/dev/null
	ctl set add bl 2001:db8:1::/64 >/dev/null
	ctl rule add @bl action deny id 1 >/dev/null
	ctl rule add 0.0.0.0/0 action allow id 2 >/dev/null
	check_eq "before" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 10
	local out
	out=$(nsenter --net="/run/netns/$DST" "$new" --pin-dir "$PIN" upgrade 2>&1)
	check_match "upgraded" "$out" "9.9.9-sets-upgrade"
	check_eq "the set kept" "$(ctl -j set show bl | jq -c '[.prefixes, .timeout_s, [.elements[].prefix]]')" \
		'[2,3600,["198.18.0.1/32","2001:db8:1::/64"]]'
	check_eq "the rule kept" "$(ctl rule list config | head -n 1)" "rule add @bl action deny id 1 on-failure open"
	check_eq "still denied" "$(flood 198.18.0.1 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 20
	check_eq "IPv6 too" "$(flood 2001:db8:1::1 2001:db8:1::fe 10 >/dev/null; rule_stat 1 dropped_packets)" 30
	printf '198.18.0.2\n' >"$TMPD/l.txt"
	ctl set load bl "$TMPD/l.txt" >/dev/null
	check_eq "a load after it" "$(flood 198.18.0.2 198.18.0.254 10 >/dev/null; rule_stat 1 dropped_packets)" 40
}

run_test test_set_commands
run_test test_set_load_formats
run_test test_set_timeouts
run_test test_set_pins
run_test test_set_daemon
run_test test_set_daemon_all_or_nothing
run_test test_set_upgrade
run_test test_set_million_swap
summary

#!/usr/bin/env bash
# End-to-end: xdp-rlctl on a veth lab, a bounded flood, counters checked.
source "$(dirname "$0")/../lib/e2e.sh"

FRAME=106	# the frames flood() sends: 14 + 20 + 8 + 64 bytes of payload

test_flood_counters() {
	lab_up || return
	check_match "attach" "$(ctl attach dev d0)" "attached to d0 \((native|generic) mode\)"
	ctl rule add 198.18.0.0/24 rate 1/h burst 100 >/dev/null
	check_eq "abusive sent" "$(flood 198.18.0.1 198.18.0.254 5000)" 5000
	check_eq "polite sent" "$(flood 198.18.0.2 198.18.0.254 50)" 50
	local s
	s=$(ctl -j stats)
	check_eq "passed" "$(jget "$s" '.rules[0].passed_packets')" 150
	check_eq "dropped" "$(jget "$s" '.rules[0].dropped_packets')" 4900
	check_eq "passed bytes" "$(jget "$s" '.rules[0].passed_bytes')" $((150 * FRAME))
	check_eq "dropped bytes" "$(jget "$s" '.rules[0].dropped_bytes')" $((4900 * FRAME))
	check_eq "new keys" "$(jget "$s" '.rules[0].new_keys')" 2
	check_eq "stats fields" "$(jget "$s" '.rules[0] | [has("id","prefix","rate","burst","action")] | all')" true
	check_eq "global fields" "$(jget "$s" '.global | [has("unmatched_packets","non_ip_packets","malformed_packets")] | all')" true
	check_eq "malformed" "$(jget "$s" '.global.malformed_packets')" 0

	s=$(ctl -j show 198.18.0.1)
	check_eq "show key" "$(jget "$s" .key)" 198.18.0.1/32
	check_eq "show rule" "$(jget "$s" .rule)" 1
	check_eq "show tokens" "$(jget "$s" .tokens)" 0
	check_eq "show dropped" "$(jget "$s" .dropped_packets)" 4900
	check_eq "polite tokens" "$(ctl -j show 198.18.0.2 | jq .tokens)" 50
	check_eq "untracked key" "$(ctl -j show 198.18.0.9 | jq -c '[.tracked, .tokens]')" '[false,100]'
	check_match "show text" "$(ctl show 198.18.0.1)" "tokens: +0 of 100"

	s=$(ctl -j top)
	check_eq "top length" "$(jget "$s" length)" 1
	check_eq "top key" "$(jget "$s" '.[0].key')" 198.18.0.1/32
	check_eq "top rule" "$(jget "$s" '.[0].rule')" 1
	check_eq "top dropped" "$(jget "$s" '.[0].dropped_packets')" 4900
	check_match "top text" "$(ctl top count 1)" "198.18.0.1/32 +1 +4900"

	s=$(ctl -j status)
	check_eq "status iface" "$(jget "$s" '.interfaces[0].ifname')" d0
	check_eq "status keys" "$(jget "$s" .keys_tracked.ipv4)" 2
	check_eq "status capacity" "$(jget "$s" .keys_capacity.ipv4)" 1048576
	check_eq "status rules" "$(jget "$s" .rules)" 1

	# top of one rule: rule 2 has no traffic, rule 99 does not exist
	ctl rule add 198.51.100.0/24 rate 10/s burst 10 id 2 >/dev/null
	check_eq "top rule 1" "$(ctl -j top sample 10 rule 1 | jq -c '[.[].key]')" '["198.18.0.1/32"]'
	check_eq "top rule 2" "$(ctl -j top sample 10 rule 2 | jq length)" 0
	check_eq "top every rule" "$(ctl -j top sample 10 | jq length)" 1
	expect_err 1 "no rule 99" top rule 99
}

test_detach_leaves_nothing() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 >/dev/null
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_match "attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_match "detach purge" "$(ctl detach dev d0 purge)" "removed the pins"
	no_xdp_on "$DST" d0 || fail "a program is still attached to d0"
	[[ ! -e "$PIN" ]] || fail "pins left in $PIN: $(ls "$PIN")"
	# (a fresh bpffs holds the kernel's maps.debug and progs.debug)
	check_eq "bpffs clean" "$(ls -A "$BPFFS" | grep -v '\.debug$')" ""
	ctl stats >/dev/null 2>&1
	check_eq "stats after purge" $? 1
}

test_native_and_generic() {
	lab_up || return
	local mode
	for mode in native generic; do
		check_eq "attach $mode" "$(ctl attach dev d0 mode $mode keys 4096)" "attached to d0 ($mode mode)"
		check_eq "status $mode" "$(ctl -j status | jq -r '.interfaces[0].xdp_mode')" $mode
		check_match "ip link $mode" "$(ip -n "$DST" link show d0)" \
			"$([[ $mode == native ]] && echo 'xdp ' || echo 'xdpgeneric')"
		ctl rule add 198.18.0.0/24 rate 1/h burst 50 >/dev/null
		flood 198.18.0.3 198.18.0.254 300 >/dev/null
		check_eq "$mode passed" "$(rule_stat 1 passed_packets)" 50
		check_eq "$mode dropped" "$(rule_stat 1 dropped_packets)" 250
		ctl detach dev d0 purge >/dev/null
	done
}

test_two_interfaces_share_buckets() {
	lab_up || return
	lab_up_src2 || return

	ctl attach dev d0 keys 4096 >/dev/null
	ctl attach dev d1 >/dev/null
	check_eq "two interfaces" "$(ctl -j status | jq -c '[.interfaces[].ifname] | sort')" '["d0","d1"]'
	ctl rule add 198.18.0.0/24 rate 1/h burst 100 >/dev/null
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	nsenter --net="/run/netns/$SRC2" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -n 100 -r 40000 >/dev/null
	check_eq "shared bucket: passed" "$(rule_stat 1 passed_packets)" 100
	check_eq "shared bucket: dropped" "$(rule_stat 1 dropped_packets)" 100
	check_eq "one key" "$(ctl -j status | jq .keys_tracked.ipv4)" 1
	check_match "purge kept while attached" "$(ctl detach dev d0 purge)" "pins kept: still attached to 1"
	[[ -d "$PIN" ]] || fail "pins removed while d1 is attached"
	ctl detach dev d1 purge >/dev/null
	[[ ! -e "$PIN" ]] || fail "pins left after the last detach"
	no_xdp_on "$DST" d1 || fail "program left on d1"
}

test_ipv6_slash64() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 2001:db8:1::/48 rate 1/h burst 30 >/dev/null
	flood 2001:db8:1::1 2001:db8:1::fe 100 >/dev/null
	flood 2001:db8:1::2 2001:db8:1::fe 50 >/dev/null
	check_eq "v6 passed" "$(rule_stat 1 passed_packets)" 30
	check_eq "v6 dropped" "$(rule_stat 1 dropped_packets)" 120
	check_eq "v6 top key" "$(ctl -j top | jq -r '.[0].key')" 2001:db8:1::/64
	check_eq "v6 show" "$(ctl -j show 2001:db8:1::77 | jq -c '[.key, .tokens]')" '["2001:db8:1::/64",0]'
}

test_mode_dry_run() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 50 >/dev/null
	check_eq "mode set" "$(ctl mode set dry-run)" "mode dry-run"
	check_eq "status mode" "$(ctl -j status | jq -r .mode)" dry-run
	flood 198.18.0.4 198.18.0.254 200 >/dev/null
	local s
	s=$(ctl -j stats)
	# would-drops apart from real drops (they are not in dropped_packets)
	check_eq "would-drop counted" "$(jget "$s" '.rules[0].would_drop_packets')" 150
	check_eq "not as dropped" "$(jget "$s" '.rules[0].dropped_packets')" 0
	check_eq "nothing dropped" "$(jget "$s" '.global.dropped_packets["dry-run"]')" 0
	check_eq "all passed" "$(jget "$s" '.global.passed_packets["dry-run"] >= 200')" true
}

test_rule_commands() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null	# rules need an instance
	ctl rule add 198.18.0.0/24 rate 100/s burst 20 >/dev/null
	ctl rule add 2001:db8::/32 rate 5/min burst 3 per /56 id 9 >/dev/null
	ctl rule add 198.18.1.0/24 action allow >/dev/null
	check_eq "list" "$(ctl -j rule list | jq -c '[.[] | [.id, .prefix, .rate, .burst, .per, .action]]')" \
		'[[1,"198.18.0.0/24","100/s",20,32,"limit"],[2,"198.18.1.0/24",null,null,32,"allow"],[9,"2001:db8::/32","5/min",3,56,"limit"]]'
	ctl rule del 9 >/dev/null
	ctl rule del 198.18.1.0/24 >/dev/null
	check_eq "del" "$(ctl -j rule list | jq -c '[.[].id]')" '[1]'
	ctl rule flush >/dev/null
	check_eq "flush" "$(ctl -j rule list)" '[]'
	check_match "pretty" "$(ctl -p rule list)" '^\[\]$'
}

# Each rule command reads the set, changes it and publishes it: without the
# lock on the pin directory, parallel invocations would lose rules.
test_parallel_invocations() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	local i pids=()
	for i in $(seq 1 20); do
		ctl rule add 198.19.$i.0/24 rate $i/s burst $i >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || fail "a parallel rule add failed"
	done
	check_eq "all 20 rules" "$(ctl -j rule list | jq length)" 20
	check_eq "distinct ids" "$(ctl -j rule list | jq '[.[].id] | unique | length')" 20
}

# expect_err RC REGEX ARGS...: the command fails with RC and an Error naming it
# status: tracked keys and capacity per address family, never one family's
# capacity next to both families' keys
test_status_keys_per_family() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/h burst 100 >/dev/null
	ctl rule add 2001:db8:1::/48 rate 1/h burst 100 >/dev/null
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	flood 198.18.0.2 198.18.0.254 10 >/dev/null
	flood 198.18.0.3 198.18.0.254 10 >/dev/null
	flood 2001:db8:1::1 2001:db8:1::fe 10 >/dev/null
	local s
	s=$(ctl -j status)
	check_eq "status keys" "$(jq -c .keys_tracked <<<"$s" 2>&1)" '{"ipv4":3,"ipv6":1}'
	check_eq "status capacity" "$(jq -c .keys_capacity <<<"$s" 2>&1)" '{"ipv4":4096,"ipv6":4096}'
	s=$(ctl status)
	check_match "status text IPv4" "$s" "keys IPv4: +3 tracked / 4096 capacity"
	check_match "status text IPv6" "$s" "keys IPv6: +1 tracked / 4096 capacity"
}

expect_err() {
	local rc=$1 re=$2 out
	shift 2
	out=$(ctl "$@" 2>&1 >/dev/null)
	local got=$?
	check_eq "exit code of '$*'" $got "$rc"
	check_match "message of '$*'" "$out" "^Error: .*$re"
}

test_errors() {
	lab_up || return
	expect_err 1 "not loaded" stats
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 >/dev/null
	local before
	before=$(ctl -j rule list)
	expect_err 2 "198.18.0.1/24.*host bits" rule add 198.18.0.1/24 rate 1/s burst 1
	expect_err 2 "198.18.0.0/33" rule add 198.18.0.0/33 rate 1/s burst 1
	expect_err 2 "'198.18.0.300'" rule add 198.18.0.300 rate 1/s burst 1
	expect_err 2 "rate must be at least 1" rule add 198.18.2.0/24 rate 0/s burst 1
	expect_err 2 "invalid rate '10/fortnight'" rule add 198.18.2.0/24 rate 10/fortnight burst 1
	expect_err 2 "between 1/h and 100000000/s" rule add 198.18.2.0/24 rate 200000000/s burst 1
	expect_err 2 "burst must be at least 1" rule add 198.18.2.0/24 rate 1/s burst 0
	expect_err 2 "key length /33 is longer" rule add 198.18.2.0/24 rate 1/s burst 1 per /33
	expect_err 2 "key length /16 is shorter" rule add 198.18.2.0/24 rate 1/s burst 1 per /16
	expect_err 2 "missing 'burst N'" rule add 198.18.2.0/24 rate 1/s
	expect_err 2 "unknown argument 'brust'" rule add 198.18.2.0/24 rate 1/s brust 1
	expect_err 2 "invalid action 'block'" rule add 198.18.2.0/24 action block
	expect_err 1 "duplicate prefix 198.18.0.0/24" rule add 198.18.0.0/24 rate 1/s burst 1
	expect_err 1 "duplicate rule id 1" rule add 198.18.3.0/24 rate 1/s burst 1 id 1
	expect_err 1 "no rule with id 42" rule del 42
	expect_err 1 "unknown interface 'nosuch0'" attach dev nosuch0
	expect_err 1 "already attached to d0" attach dev d0
	expect_err 1 "not attached to 'lo'" detach dev lo
	expect_err 2 "invalid mode 'panic'" mode set panic
	expect_err 2 "unknown command 'frobnicate'" frobnicate
	expect_err 2 "invalid address" show 198.18.0
	check_eq "nothing changed" "$(ctl -j rule list)" "$before"
	check_eq "still one interface" "$(ctl -j status | jq '.interfaces | length')" 1
	local j
	j=$(ctl -j rule del 42 2>&1 >/dev/null)
	check_eq "json error" "$(jq -r .error <<<"$j")" "no rule with id 42"
}

# ms_since T0: milliseconds since T0 (from now_ns)
now_ns() { date +%s%N; }
ms_since() { echo $((($(now_ns) - $1) / 1000000)); }

# ctl_at DIR ARGS...: xdp-rlctl on another pin directory
ctl_at() {
	local dir=$1
	shift
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$dir" "$@"
}

# Readers take no lock; writers wait a bounded time and name the holder.
test_lock_readers_and_bounded_wait() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 >/dev/null
	flock "$PIN" sleep 5 &
	local holder=$! t rc out cmd
	BG_PIDS+=($holder)
	for ((t = 0; t < 100; t++)); do
		grep -q "FLOCK.* $holder " /proc/locks && break
		sleep 0.02
	done
	for cmd in "rule list" stats status "show 198.18.0.1" "top sample 10" "key list"; do
		t=$(now_ns)
		ctl $cmd >/dev/null
		rc=$?
		check_eq "'$cmd' under a held lock" $rc 0
		(($(ms_since $t) < 1000)) || fail "'$cmd' took $(ms_since $t) ms under a held lock"
	done
	t=$(now_ns)
	out=$(ctl rule add 198.18.1.0/24 rate 1/s burst 1 2>&1)
	rc=$?
	local ms
	ms=$(ms_since $t)
	check_eq "rule add under a held lock" $rc 1
	check_match "names the holder" "$out" "^Error: $PIN is locked by another xdp-rl process \(pid $holder, flock"
	((ms >= 1900 && ms < 3500)) || fail "rule add gave up after $ms ms, expected about 2000"
	check_eq "rule not added" "$(ctl -j rule list | jq length)" 1
}

# A reader blocked on a full pipe holds no lock.
test_blocked_reader_holds_no_lock() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	local i t rc
	for i in $(seq 1 250); do
		ctl rule add 198.19.$((i / 256)).$((i % 256)) rate 1/s burst 1 >/dev/null || { fail "rule add $i"; return; }
	done
	(($(ctl -p stats | wc -c) > 70000)) || fail "stats output too small to fill a pipe"
	ctl -p stats | (sleep 4) &
	BG_PIDS+=($!)
	sleep 0.5
	t=$(now_ns)
	ctl rule add 198.18.1.0/24 rate 1/s burst 1 >/dev/null
	rc=$?
	check_eq "rule add beside a blocked reader" $rc 0
	(($(ms_since $t) < 2000)) || fail "rule add took $(ms_since $t) ms beside a blocked reader"
}

# A failed command changes nothing: no instance is left on a new pin dir.
test_failed_command_leaves_nothing() {
	lab_up || return
	local other="$BPFFS/typo" out rc
	out=$(ctl_at "$other" attach dev nosuch keys 4096 2>&1)
	rc=$?
	check_eq "attach nosuch exit" $rc 1
	check_match "attach nosuch message" "$out" "^Error: unknown interface 'nosuch'"
	[[ ! -e "$other" ]] || fail "attach dev nosuch left $other: $(ls "$other")"

	# fails after loading: another XDP program holds d0
	ctl attach dev d0 keys 4096 >/dev/null
	out=$(ctl_at "$other" attach dev d0 keys 4096 2>&1)
	rc=$?
	check_eq "attach busy exit" $rc 1
	check_match "attach busy message" "$out" "another XDP program is already attached to d0"
	[[ ! -e "$other" ]] || fail "a failed attach left $other: $(ls "$other")"
	# a directory that was there before stays, empty
	mkdir "$BPFFS/empty"
	ctl_at "$BPFFS/empty" attach dev d0 keys 4096 >/dev/null 2>&1
	check_eq "existing dir kept empty" "$(ls -A "$BPFFS/empty" 2>&1)" ""
	rmdir "$BPFFS/empty"

	# an attach that fails after the maps are pinned: the program's pin
	# name is taken (a dangling symlink)
	mkdir "$other"
	ln -s /nonexistent "$other/xdp_rl_prog"
	out=$(ctl_at "$other" attach dev d0 keys 4096 2>&1)
	rc=$?
	check_eq "attach exit" $rc 1
	check_match "attach message" "$out" "cannot pin the program"
	check_eq "only the obstacle left" "$(ls -A "$other")" "xdp_rl_prog"
	rm -rf "$other"
	check_match "d0 untouched" "$(ctl -j status | jq -r '.interfaces[0].ifname')" d0
}

# An instance that is attached nowhere can be purged.
test_detach_purge_unattached() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null && ctl detach dev d0 >/dev/null
	[[ -d "$PIN" ]] || fail "attach and detach left no instance"
	local out rc
	out=$(ctl detach dev d0 purge)
	rc=$?
	check_eq "purge of an unattached instance" $rc 0
	check_match "says so" "$out" "not attached to d0.*removed the pins under $PIN"
	[[ ! -e "$PIN" ]] || fail "pins left in $PIN: $(ls "$PIN")"
	# while attached somewhere, a wrong interface still fails and keeps all
	ctl attach dev d0 keys 4096 >/dev/null
	expect_err 1 "not attached to 'lo'" detach dev lo purge
	[[ -e "$PIN/link_d0" ]] || fail "pins removed while attached to d0"
	check_eq "json" "$(ctl -j detach dev d0 purge | jq -c '[.detached, .purged]')" '[true,true]'
}

# heartbeating follows the heartbeat's age, not the watchdog (here 0)
test_heartbeating_without_watchdog() {
	lab_up || return
	local log="$TMPD/rld.log" conf="$TMPD/hb.conf" s
	printf '%s\n' "interface d0" "heartbeat 100" "watchdog 0" "rule add 198.18.0.0/24 rate 1/h burst 5" >"$conf"
	: >"$log"
	start_rld "$log" --config "$conf" --metrics off --keep-attached
	wait_log "$log" "running" || return
	s=$(ctl -j status)
	check_eq "heartbeating" "$(jget "$s" .daemon.heartbeating)" true
	check_eq "interval" "$(jget "$s" .daemon.heartbeat_interval_ms)" 100
	kill -STOP "$RLD_PID"	# a hung daemon
	sleep 0.6
	s=$(ctl -j status)
	check_eq "stale heartbeat, watchdog 0" "$(jget "$s" .daemon.heartbeating)" false
	check_eq "age reported" "$(jget "$s" '.daemon.heartbeat_age_ms >= 400')" true
	check_match "text" "$(ctl status)" "not heartbeating, last heartbeat"
	kill -CONT "$RLD_PID"
	sleep 0.3
	check_eq "heartbeating again" "$(ctl -j status | jq .daemon.heartbeating)" true
	kill -TERM "$RLD_PID"
	wait "$RLD_PID"
	s=$(ctl -j status)
	check_eq "stopped (--keep-attached)" "$(jget "$s" .daemon.heartbeating)" false
	check_eq "no heartbeats awaited" "$(jget "$s" .daemon.heartbeat_interval_ms)" 0
	# and a rule change no longer claims a daemon will undo it
	check_eq "no note" "$(ctl rule add 198.18.1.0/24 rate 1/s burst 1 2>&1 >/dev/null)" ""
}

# strict_json: stdin is one valid UTF-8 JSON document; prints .error if any
strict_json() {
	python3 -c 'import json,sys; d=json.loads(sys.stdin.buffer.read().decode("utf-8")); print(d.get("error", "") if isinstance(d, dict) else "")'
}

# expect_json_err RC REGEX ARGS...: under -j, stderr is JSON, stdout empty
expect_json_err() {
	local rc=$1 re=$2 out err got
	shift 2
	err=$(ctl -j "$@" 2>&1 >"$TMPD/out")
	got=$?
	check_eq "exit code of -j '$*'" $got "$rc"
	check_eq "stdout of -j '$*'" "$(cat "$TMPD/out")" ""
	out=$(strict_json <<<"$err") || { fail "-j '$*': not valid JSON: $(cat -v <<<"$err")"; return; }
	check_match "message of -j '$*'" "$out" "$re"
}

test_json_always_valid() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	local fffd=$'\xef\xbf\xbd'	# U+FFFD in UTF-8
	expect_json_err 1 "unknown interface 'x$fffd$fffd'" attach dev $'x\xff\xfe'
	expect_json_err 2 "invalid prefix" rule add $'198.18.0.0/\xff' rate 1/s burst 1
	expect_json_err 2 "unknown argument" rule add 198.18.9.0/24 $'\xc3' 1
	expect_json_err 2 "unknown option '--bogus'" --bogus status
	expect_json_err 2 "unknown option '-x'" -x status
	expect_json_err 2 "option '--pin-dir' needs an argument" --pin-dir
	expect_json_err 2 "missing command"
	expect_json_err 2 "unknown command 'frobnicate'" frobnicate
	# long multibyte arguments: messages are cut between characters
	local c arg msg
	for c in é € 𝄞; do
		arg=$(printf "$c%.0s" $(seq 1 300))
		msg=$(ctl -j rule add "$arg" rate 1/s burst 1 2>&1 | strict_json) || { fail "long '$c' argument: not valid UTF-8 JSON"; continue; }
		[[ "$msg" != *$'\xef\xbf\xbd'* ]] || fail "long '$c' argument: a character was cut: ${msg: -20}"
		check_match "long '$c' argument" "$msg" "^invalid prefix '$c$c"
	done
	# text options errors stay text, with the usage
	check_match "text option error" "$(ctl --bogus status 2>&1)" "^Error: unknown option '--bogus'"$'\n'"Usage:"
	# output on stdout: an interface name that is not UTF-8
	ip -n "$DST" link add $'v\xff' type veth peer name v1 && ip -n "$DST" link set $'v\xff' up &&
		ip -n "$DST" link set v1 up || { fail "cannot create the veth"; return; }
	ctl attach dev $'v\xff' mode generic >/dev/null || fail "attach to v\\xff"
	local st
	st=$(ctl -j status | strict_json) || fail "status with a non-UTF-8 interface name: not valid UTF-8 JSON"
	check_eq "two interfaces" "$(ctl -j status | python3 -c 'import json,sys; print(len(json.loads(sys.stdin.buffer.read().decode())["interfaces"]))')" 2
	ctl detach dev $'v\xff' >/dev/null
}

# One strict decimal parser: no sign, no spaces; no IPv4-mapped IPv6.
test_strict_numbers_and_addresses() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	local before
	before=$(ctl -j rule list)
	expect_err 2 "'198.18.0.0/\+24'.*no sign" rule add 198.18.0.0/+24 rate 1/s burst 1
	expect_err 2 "'198.18.0.0/ 24'.*no spaces" rule add "198.18.0.0/ 24" rate 1/s burst 1
	expect_err 2 "'198.18.0.0/'.*empty" rule add "198.18.0.0/" rate 1/s burst 1
	expect_err 2 "burst '\+5'.*no sign" rule add 198.18.2.0/24 rate 1/s burst +5
	expect_err 2 "burst ' 5'.*no spaces" rule add 198.18.2.0/24 rate 1/s burst " 5"
	expect_err 2 "invalid rate ' 5/s'" rule add 198.18.2.0/24 rate " 5/s" burst 1
	expect_err 2 "id ' 7'.*no spaces" rule add 198.18.2.0/24 rate 1/s burst 1 id " 7"
	expect_err 2 "key length '/ 32'.*no spaces" rule add 198.18.2.0/24 rate 1/s burst 1 per "/ 32"
	expect_err 2 "keys ' 100'.*no spaces" attach dev d0 keys " 100"
	expect_err 2 "count ' 3'.*no spaces" top count " 3"
	expect_err 2 "rule id '\+1'.*no sign" rule del +1
	expect_err 2 "IPv4-mapped.*did you mean 198.18.0.1\?" rule add ::ffff:198.18.0.1 rate 1/s burst 1
	expect_err 2 "IPv4-mapped.*did you mean 198.18.0.0/24\?" rule add ::ffff:198.18.0.0/120 rate 1/s burst 1
	expect_err 2 "IPv4-mapped.*did you mean 0.0.0.0/0\?" rule add ::ffff:0:0/96 rate 1/s burst 1
	expect_err 2 "IPv4-mapped.*did you mean 198.18.0.1\?" show ::ffff:198.18.0.1
	check_eq "nothing changed" "$(ctl -j rule list)" "$before"
	# a prefix that holds more than the mapped range is fine
	ctl rule add ::/0 rate 1/s burst 1 >/dev/null || fail "::/0 refused"
	# the daemon's options and file parse numbers the same way
	local v
	for v in +100 " 100" ""; do
		"$RLD_BIN" --check --heartbeat "$v" >/dev/null 2>&1
		check_eq "xdp-rld --heartbeat '$v'" $? 2
		"$RLD_BIN" --check --watchdog "$v" >/dev/null 2>&1
		check_eq "xdp-rld --watchdog '$v'" $? 2
	done
	printf '%s\n' "heartbeat +100" "watchdog  +500" "metrics 127.0.0.1:+9437" >"$TMPD/n.conf"
	local out
	out=$("$RLD_BIN" --check --config "$TMPD/n.conf" 2>&1)
	check_match "file heartbeat" "$out" "invalid heartbeat '\+100'"
	check_match "file watchdog" "$out" "invalid watchdog '\+500'"
	check_match "file metrics port" "$out" "invalid metrics address '127.0.0.1:\+9437'"
}

# ---- the CLI speaks bpftool/ip ----

# Words shortened to an unambiguous prefix, as `ip a` and `bpftool p s`; an
# ambiguous one lists the candidates, an unknown one gets "did you mean".
test_cli_prefixes() {
	lab_up || return
	check_match "at d d0 k 4096" "$(ctl at d d0 k 4096)" "^attached to d0"
	check_match "r a ... ra b p" "$(ctl r a 198.18.0.0/16 ra 10/s b 5 p /24)" "^added rule 1 for 198.18.0.0/16"
	check_eq "r l" "$(ctl -j r l | jq -c '[.[] | [.id, .rate, .burst, .per]]')" '[[1,"10/s",5,24]]'
	check_eq "m s dry" "$(ctl m s dry)" "mode dry-run"
	check_eq "mode set f... in full" "$(ctl mode set fail-c)" "mode fail-closed"
	check_eq "statu" "$(ctl -j statu | jq .rules)" 1
	check_eq "stats in full" "$(ctl -j stats | jq '.rules | length')" 1
	# status is the preferred word of its prefixes, as ip's first match
	check_eq "st" "$(ctl -j st | jq .rules)" 1
	check_eq "s" "$(ctl -j s | jq .rules)" 1
	expect_err 2 "ambiguous mode 'fail' \(fail-open, fail-closed\)" mode set fail
	expect_err 2 "unknown command 'stauts'; did you mean 'status' or 'stats'\?" stauts
	expect_err 2 "unknown argument 'brust' .*; did you mean 'burst'\?" rule add 198.18.1.0/24 rate 1/s brust 1
	expect_err 2 "unknown rule command 'lsit' .*did you mean 'list'\?" rule lsit
	expect_json_err 2 "^ambiguous mode 'f' \(fail-open, fail-closed\)$" mode set f
	# the values are never completed: "d" is no "d0"
	expect_err 1 "unknown interface 'd'" attach dev d
	check_eq "one rule still" "$(ctl -j rule list | jq length)" 1
}

# help at every level, from the table; -V on both binaries.
test_cli_help_and_version() {
	lab_up || return
	local all rule
	all=$(ctl help)
	check_match "help: usage" "$all" "^Usage: xdp-rlctl "
	check_match "help: every command" "$all" "rule del ID\|PREFIX\|id ID"
	rule=$(ctl help rule)
	check_eq "help rule: four lines" "$(wc -l <<<"$rule")" 4
	check_eq "rule help = help rule" "$(ctl rule help)" "$rule"
	check_eq "r h = help rule" "$(ctl r h)" "$rule"
	check_eq "help r = help rule" "$(ctl help r)" "$rule"
	check_match "rule add help" "$(ctl rule add help | head -n 1)" "^  rule add PREFIX\|@SET rate N/s\|N/min\|N/h burst N \[KEYWORD VALUE\]\.\.\.$"
	check_eq "mode help" "$(ctl mode help)" "$(printf '  mode\n  mode set enforce|dry-run|fail-open|fail-closed')"
	check_eq "help -j" "$(ctl -j rule help | jq -c '[.[].command]')" '["rule add","rule del","rule list","rule flush"]'
	check_eq "help -j synopsis" "$(ctl rule del help -j | jq -r '.[0].synopsis')" "rule del ID|PREFIX|id ID"
	expect_err 2 "unknown command 'frob'" help frob
	expect_err 2 "unexpected 'list' after help" rule help list
	# -V / --version: one version, from the build
	local v
	v=$(sed -n 's/^#define XRL_VERSION "\(.*\)"$/\1/p' "$OUT/xrl_version.h")
	[[ -n "$v" ]] || fail "no version in .output/xrl_version.h"
	check_eq "xdp-rlctl -V" "$("$CTL_BIN" -V | head -n 1)" "xdp-rlctl $v"
	check_eq "xdp-rlctl --version" "$("$CTL_BIN" --version | head -n 1)" "xdp-rlctl $v"
	check_eq "xdp-rlctl -V -j" "$("$CTL_BIN" -V -j | jq -r .version)" "$v"
	check_eq "xdp-rld -V" "$("$RLD_BIN" -V)" "xdp-rld $v"
	check_eq "xdp-rld --version" "$("$RLD_BIN" --version)" "xdp-rld $v"
}

# Global options after the command; "--" ends them; "per /24" is no option.
test_cli_options_after_command() {
	lab_up || return
	local in_dst=(nsenter --net="/run/netns/$DST" "$CTL_BIN")
	"${in_dst[@]}" attach dev d0 keys 4096 --pin-dir "$PIN" >/dev/null || fail "attach ... --pin-dir after the command"
	check_eq "status --pin-dir X" "$("${in_dst[@]}" status --pin-dir "$PIN" -j | jq -r .pin_dir)" "$PIN"
	check_eq "rule add ... per /24 -j" "$(ctl rule add 198.18.0.0/16 rate 1/s burst 1 per /24 -j | jq -c '[.id, .per]')" '[1,24]'
	check_eq "rule list -j" "$(ctl rule list -j | jq -c '[.[].id]')" '[1]'
	check_match "rule list -p" "$(ctl rule list --pretty)" $'^\\[\n  \\{'
	expect_json_err 2 "unknown command 'frobnicate'" frobnicate
	check_eq "error -j after the command" "$(ctl frobnicate -j 2>&1 | jq -r .error)" "unknown command 'frobnicate'"
	# a word that begins with '-' is an option; after "--" it is not
	expect_err 2 "unknown option '-x'" attach dev -x
	expect_err 1 "unknown interface '-x'" attach dev -- -x
}

# rule del id N; mode alone; write commands say what they did, as JSON
# under -j (errors included).
test_cli_reports_and_json() {
	lab_up || return
	expect_err 1 "not loaded" mode
	check_match "attach" "$(ctl attach dev d0 keys 4096)" "attached to d0"
	check_eq "rule add says the id" "$(ctl rule add 198.18.0.0/24 rate 10/s burst 5)" "added rule 1 for 198.18.0.0/24"
	check_eq "rule add id 7" "$(ctl rule add 198.18.1.0/24 action deny id 7)" "added rule 7 for 198.18.1.0/24"
	local j
	j=$(ctl -j rule add 2001:db8::/32 rate 1/min burst 2)
	check_eq "rule add -j" "$(jq -c '[.id, .prefix, .rate, .burst, .action]' <<<"$j")" '[2,"2001:db8::/32","1/min",2,"limit"]'
	check_eq "rule add -j = rule list -j" "$(ctl -j rule list | jq -c '.[] | select(.id == 2)')" "$(jq -c . <<<"$j")"
	check_eq "rule del id 7" "$(ctl rule del id 7)" "removed rule 7 for 198.18.1.0/24"
	check_eq "rule del -j" "$(ctl -j rule del 198.18.0.0/24 | jq -c '[.id, .prefix]')" '[1,"198.18.0.0/24"]'
	expect_err 1 "no rule with id 7" rule del id 7
	expect_err 2 "the rule is named twice" rule del 2 id 2
	check_eq "mode" "$(ctl mode)" "mode enforce"
	ctl mode set dry-run >/dev/null
	check_eq "mode -j" "$(ctl -j mode)" '{"mode":"dry-run"}'
	check_eq "rule flush -j" "$(ctl -j rule flush)" '{"removed":1}'
	check_eq "rule flush" "$(ctl rule flush)" "removed 0 rules"
	# under -j every command prints one JSON document on stdout
	local cmd out
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 >/dev/null
	for cmd in "status" "rule list" "rule add 198.18.2.0/24 action allow" "rule del 198.18.2.0/24" \
		"mode" "mode set enforce" "stats" "show 198.18.0.1" "top" "help" "rule help" "rule flush" \
		"detach dev d0"; do
		out=$(ctl -j $cmd 2>/dev/null)
		check_eq "-j $cmd: exit" $? 0
		strict_json <<<"$out" >/dev/null 2>&1 || fail "-j $cmd: not one JSON document: $out"
	done
}

# A word that the rule's action makes meaningless is refused, not ignored.
test_cli_unmetered_words() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 >/dev/null
	expect_err 2 "'rate' means nothing with action allow: an allow rule is never metered" \
		rule add 198.18.1.0/24 action allow rate 1/s burst 1
	expect_err 2 "'burst' means nothing with action deny" rule add 198.18.1.0/24 burst 3 action deny
	expect_err 2 "'per' means nothing with action allow" rule add 198.18.1.0/24 action allow per /24
	check_eq "nothing added" "$(ctl -j rule list | jq -c '[.[].id]')" '[1]'
	check_match "allow alone" "$(ctl rule add 198.18.1.0/24 action allow)" "added rule 2"
}

# The bash completion written from the grammar's table completes partial
# lines through its function, as bash would call it.
COMPLETION="$OUT/xdp-rlctl.bash"

# complete LINE: the completions of LINE, the cursor at its end, sorted on
# one line; run in the receiving namespace (its interfaces)
complete_line() {
	nsenter --net="/run/netns/$DST" bash -c '
		source "$1" || exit 1
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_xdp_rlctl
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$1" | sed '/^$/d' | sort | paste -sd ' '
}

test_bash_completion() {
	lab_up || return
	[[ -f "$COMPLETION" ]] || { fail "$COMPLETION not built"; return; }
	check_eq "complete -F" "$(bash -c 'source "$1"; complete -p xdp-rlctl' _ "$COMPLETION")" "complete -F _xdp_rlctl xdp-rlctl"
	check_eq "xdp-rlctl " "$(complete_line "xdp-rlctl ")" "attach ban capture detach events help key mode purge replay rule set show stats status suggest top upgrade"
	check_eq "xdp-rlctl ru" "$(complete_line "xdp-rlctl ru")" "rule"
	check_eq "xdp-rlctl s" "$(complete_line "xdp-rlctl s")" "set show stats status suggest"
	check_eq "xdp-rlctl rule a" "$(complete_line "xdp-rlctl rule a")" "add"
	check_eq "xdp-rlctl rule " "$(complete_line "xdp-rlctl rule ")" "add del flush help list"
	check_eq "xdp-rlctl rule add 1.2.3.0/24 ra" "$(complete_line "xdp-rlctl rule add 1.2.3.0/24 ra")" "rate"
	check_eq "keywords left" "$(complete_line "xdp-rlctl rule add 1.2.3.0/24 rate 1/s b 2 ")" "action after aggregate algo ban ban-max dport dry-run id new-keys on-failure per proto scope slip syn syn-cookies"
	check_eq "action " "$(complete_line "xdp-rlctl r a 1.2.3.0/24 action ")" "allow deny limit"
	check_eq "r is rule's, as in the parser" "$(complete_line "xdp-rlctl r ")" "add del flush help list"
	check_eq "replay config" "$(complete_line "xdp-rlctl replay x.pcap ")" "config"
	check_eq "xdp-rlctl mode set " "$(complete_line "xdp-rlctl mode set ")" "dry-run enforce fail-closed fail-open"
	check_eq "xdp-rlctl m s d" "$(complete_line "xdp-rlctl m s d")" "dry-run"
	check_eq "xdp-rlctl mode " "$(complete_line "xdp-rlctl mode ")" "help set"
	check_eq "xdp-rlctl key " "$(complete_line "xdp-rlctl key ")" "del help list reset"
	check_eq "xdp-rlctl key list " "$(complete_line "xdp-rlctl key list ")" "limited rule"
	check_eq "xdp-rlctl top " "$(complete_line "xdp-rlctl top ")" "count rule sample watch"
	# the interfaces of the namespace it runs in
	check_eq "xdp-rlctl attach dev " "$(complete_line "xdp-rlctl attach dev ")" "d0 lo"
	check_eq "xdp-rlctl attach dev d0 mode " "$(complete_line "xdp-rlctl attach dev d0 mode ")" "auto generic native"
	check_eq "detach dev d0 " "$(complete_line "xdp-rlctl -j detach dev d0 ")" "purge"
	check_eq "rule del " "$(complete_line "xdp-rlctl --pin-dir /x rule del ")" "id"
	check_eq "help " "$(complete_line "xdp-rlctl help ")" "attach ban capture detach events help key mode purge replay rule set show stats status suggest top upgrade"
	check_eq "events " "$(complete_line "xdp-rlctl events ")" "count timeout"
	check_eq "options" "$(complete_line "xdp-rlctl rule list --j")" "--json"
	check_eq "a value: nothing" "$(complete_line "xdp-rlctl rule add ")" ""
}

run_test test_flood_counters
run_test test_detach_leaves_nothing
run_test test_native_and_generic
run_test test_two_interfaces_share_buckets
run_test test_ipv6_slash64
run_test test_mode_dry_run
run_test test_rule_commands
run_test test_parallel_invocations
run_test test_errors
run_test test_status_keys_per_family
run_test test_lock_readers_and_bounded_wait
run_test test_blocked_reader_holds_no_lock
run_test test_failed_command_leaves_nothing
run_test test_detach_purge_unattached
run_test test_heartbeating_without_watchdog
run_test test_json_always_valid
run_test test_strict_numbers_and_addresses
run_test test_cli_prefixes
run_test test_cli_help_and_version
run_test test_cli_options_after_command
run_test test_cli_reports_and_json
run_test test_cli_unmetered_words
run_test test_bash_completion
summary

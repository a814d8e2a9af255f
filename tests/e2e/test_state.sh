#!/usr/bin/env bash
# End-to-end: no dead ends in pinned state. `purge` removes an instance that
# nothing uses and names what stops it otherwise; a `keys` that the pinned
# tables do not have says how to get out, and that way works; only attach
# allocates the bucket tables; `ip netns exec`, whose bpffs would vanish
# with the command, is refused with the way to do it.
source "$(dirname "$0")/../lib/e2e.sh"

# add_veth IFACE PEER: one more veth pair, both ends in $DST
add_veth() {
	ip -n "$DST" link add "$1" type veth peer name "$2" &&
		ip -n "$DST" link set "$1" up && ip -n "$DST" link set "$2" up ||
		{ fail "cannot create the veth $1"; return 1; }
}

# nothing on the lab's bpffs (a fresh one holds the kernel's *.debug files)
bpffs_empty() {
	[[ -z "$(ls -A "$BPFFS" | grep -v '\.debug$')" ]]
}

# run_out VAR ARGS...: ctl ARGS, stdout and stderr in VAR, exit code in RC
run_out() {
	local -n _out=$1
	shift
	_out=$(ctl "$@" 2>&1)
	RC=$?
}

test_purge() {
	lab_up || return
	local out
	run_out out purge
	check_eq "purge of nothing: exit" $RC 1
	check_match "purge of nothing: says so" "$out" "^Error: xdp-rl is not loaded"

	add_veth d1 d1p || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl attach dev d1 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/s burst 1 >/dev/null
	run_out out purge
	check_eq "purge while attached: exit" $RC 1
	check_match "names d0" "$out" "^Error: still attached to .*d0"
	check_match "names d1" "$out" "^Error: still attached to .*d1"
	check_match "pins kept" "$out" "pins kept"
	[[ -e "$PIN/link_d0" && -e "$PIN/xrl_buckets4" ]] || fail "pins removed while attached"
	check_match "d0 still attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "rules kept" "$(ctl -j rule list | jq length)" 1

	ctl detach dev d0 >/dev/null
	run_out out purge
	check_eq "purge, d1 left: exit" $RC 1
	check_match "names d1 alone" "$out" "^Error: still attached to d1: pins kept"
	check_match "the -j error" "$(ctl -j purge 2>&1 | jq -r .error)" "^still attached to d1"

	ctl detach dev d1 >/dev/null
	run_out out purge
	check_eq "purge: exit" $RC 0
	check_eq "purge: says so" "$out" "removed the pins under $PIN"
	[[ ! -e "$PIN" ]] || fail "pins left in $PIN: $(ls "$PIN")"
	bpffs_empty || fail "left on the bpffs: $(ls -A "$BPFFS")"

	# -j, and `detach dev X purge` when X is not attached and nothing is
	ctl attach dev d0 keys 4096 >/dev/null && ctl detach dev d0 >/dev/null
	check_eq "purge -j" "$(ctl -j purge | jq -c '[.purged, .pin_dir]')" "[true,\"$PIN\"]"
	ctl attach dev d0 keys 4096 >/dev/null && ctl detach dev d0 >/dev/null
	run_out out detach dev d1 purge
	check_eq "detach purge, not attached: exit" $RC 0
	check_match "detach purge, not attached" "$out" "not attached to d1.*removed the pins under $PIN"
	[[ ! -e "$PIN" ]] || fail "detach purge left $PIN"
	# detach ... purge with another interface attached names it
	ctl attach dev d0 keys 4096 >/dev/null && ctl attach dev d1 >/dev/null
	check_match "detach purge, d1 attached" "$(ctl detach dev d0 purge)" "pins kept: still attached to 1 interface\(s\): d1$"
}

# An instance missing some of its pins (an rm by hand) cannot be opened; it
# can still be purged, which says so. A directory that holds anything not
# xdp-rl's is left alone.
test_purge_partial_instance() {
	lab_up || return
	local out pin
	for pin in xrl_rules4 xdp_rl_prog; do
		ctl attach dev d0 keys 4096 >/dev/null && ctl detach dev d0 >/dev/null
		rm "$PIN/$pin"
		run_out out rule list
		check_eq "rule list without $pin: exit" $RC 1
		[[ $pin == xdp_rl_prog ]] ||
			check_match "names the way out" "$out" "'xdp-rlctl purge' to start over"
		run_out out purge
		check_eq "purge without $pin: exit" $RC 0
		check_eq "purge without $pin" "$out" "removed the pins under $PIN"
		[[ ! -e "$PIN" ]] || fail "pins left without $pin: $(ls "$PIN")"
	done
	local other="$BPFFS/other"
	mkdir "$other"
	bpftool map create "$other/foo" type array key 4 value 4 entries 1 name foo || { fail "bpftool map create"; return; }
	out=$(nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$other" purge 2>&1)
	check_eq "foreign directory: exit" $? 1
	check_eq "foreign directory" "$out" "Error: $other holds 'foo', which is not xdp-rl's: nothing removed"
	[[ -e "$other/foo" ]] || fail "a foreign pin was removed"
	rm -r "$other"
}

# A daemon serving the directory would pin it all again: purge says so.
test_purge_refused_while_daemon_serves() {
	lab_up || return
	local conf="$TMPD/state.conf" log="$TMPD/state.log" out
	printf '%s\n' "metrics off" "rule add 198.18.0.0/24 rate 1/s burst 1" >"$conf"
	: >"$log"
	start_rld "$log" --config "$conf"	# no interface: attached nowhere
	wait_log "$log" "running" || return
	check_eq "nothing attached" "$(ctl -j status | jq '.interfaces | length')" 0
	run_out out purge
	check_eq "purge beside a daemon: exit" $RC 1
	check_match "names the daemon" "$out" "^Error: xdp-rld \(pid $RLD_PID\) serves $PIN"
	[[ -e "$PIN/xrl_buckets4" ]] || fail "pins removed under the daemon"
	kill -TERM "$RLD_PID"
	wait "$RLD_PID"
	[[ ! -e "$PIN" ]] || { ctl purge >/dev/null || fail "purge after the daemon stopped"; }
	[[ ! -e "$PIN" ]] || fail "pins left after the daemon stopped: $(ls "$PIN")"
}

# A keys that the pinned tables do not have names the way out, and following
# it word for word works: attach without keys, or detach everywhere and purge.
test_keys_mismatch_way_out() {
	lab_up || return
	add_veth d1 d1p && add_veth d2 d2p || return
	ctl attach dev d0 keys 4096 >/dev/null
	ctl attach dev d1 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1/s burst 1 >/dev/null
	local out
	run_out out attach dev d2 keys 8192
	check_eq "keys 8192 on 4096 tables: exit" $RC 1
	check_match "says what the tables hold" "$out" "^Error: the pinned bucket tables hold 4096 keys each, not 8192"
	check_match "keep them" "$out" "attach without 'keys'"
	no_xdp_on "$DST" d2 || fail "d2 attached by a refused command"
	check_eq "capacity unchanged" "$(ctl -j status | jq .keys_capacity.ipv4)" 4096

	# the first way: attach without keys
	check_match "attach without keys" "$(ctl attach dev d2)" "attached to d2"
	check_eq "rules kept" "$(ctl -j rule list | jq length)" 1

	# the second: start over, each command as the message writes it
	run_out out attach dev d2 keys 8192
	check_eq "again: exit" $RC 1
	local steps=() step words
	mapfile -t steps < <(grep -o "'xdp-rlctl [^']*'" <<<"$out" | tr -d "'")
	check_eq "steps: a detach per interface, then purge" "${#steps[@]}" 4
	check_match "last step" "${steps[-1]:-}" " purge$"
	for step in "${steps[@]}"; do
		read -ra words <<<"$step"
		words[0]=$CTL_BIN
		nsenter --net="/run/netns/$DST" "${words[@]}" >/dev/null || fail "'$step' failed"
	done
	[[ ! -e "$PIN" ]] || fail "pins left after the steps: $(ls "$PIN")"
	local i
	for i in d0 d1 d2; do
		no_xdp_on "$DST" $i || fail "$i still attached after the steps"
	done
	check_match "then keys 8192" "$(ctl attach dev d2 keys 8192)" "attached to d2"
	check_eq "capacity 8192" "$(ctl -j status | jq -c .keys_capacity)" '{"ipv4":8192,"ipv6":8192}'
}

# Only attach allocates the bucket tables: a rule or mode command before it
# is refused and leaves nothing pinned (no table of 2 x 1M keys, 208 MiB).
test_no_tables_before_attach() {
	lab_up || return
	local cmd out
	for cmd in "rule add 198.18.0.0/24 rate 1/s burst 1" "mode set dry-run" "rule flush" "rule del 1"; do
		run_out out $cmd
		check_eq "'$cmd' before attach: exit" $RC 1
		check_eq "'$cmd' before attach: message" "$out" \
			"Error: xdp-rl is not loaded (nothing pinned at $PIN); run 'xdp-rlctl attach dev IFACE' first"
		[[ ! -e "$PIN" ]] || fail "'$cmd' left $PIN: $(ls "$PIN")"
		bpffs_empty || fail "'$cmd' left on the bpffs: $(ls -A "$BPFFS")"
	done
	check_match "-j" "$(ctl -j rule add 198.18.0.0/24 rate 1/s burst 1 2>&1 | jq -r .error)" "^xdp-rl is not loaded"
	# an empty directory (mkdir by hand) is no instance either
	mkdir "$PIN"
	run_out out rule add 198.18.0.0/24 rate 1/s burst 1
	check_eq "empty dir: exit" $RC 1
	check_eq "empty dir: still empty" "$(ls -A "$PIN")" ""
	rmdir "$PIN"
	# attach makes the tables at the size asked; then rules go in
	ctl attach dev d0 keys 4096 >/dev/null || fail "attach keys 4096"
	check_eq "sized by attach" "$(ctl -j status | jq -c .keys_capacity)" '{"ipv4":4096,"ipv6":4096}'
	ctl rule add 198.18.0.0/24 rate 1/s burst 1 >/dev/null || fail "rule add after attach"
	check_eq "mode after attach" "$(ctl mode set dry-run)" "mode dry-run"
	check_eq "tables of 4096" "$(bpftool map show pinned "$PIN/xrl_buckets4" -j | jq .max_entries)" 4096
}

# `ip netns exec` gives the command a mount namespace and a /sys of its own:
# a bpffs mounted there vanishes with the command, and the attachment with
# it. Refused with the way to do it; what the hint says works.
test_ip_netns_exec_refused() {
	lab_up || return
	local out rc host_fs host_pin
	# the premise: under ip netns exec, /sys/fs/bpf is no bpffs (so that the
	# default pin directory below can never be the machine's)
	check_eq "premise: no bpffs under ip netns exec" \
		"$(ip netns exec "$DST" stat -f -c %T /sys/fs/bpf 2>&1)" sysfs
	((CUR_FAILED)) && return
	host_fs=$(stat -f -c %T /sys/fs/bpf)
	host_pin=$(ls -d /sys/fs/bpf/xdp-rl 2>&1)

	out=$(ip netns exec "$DST" "$CTL_BIN" attach dev d0 2>&1)
	rc=$?
	check_eq "attach under ip netns exec: exit" $rc 1
	check_match "says why" "$out" "^Error: no bpffs at /sys/fs/bpf in this mount namespace, which ends with this command \('ip netns exec'"
	check_match "says what to do" "$out" "'nsenter --net=/run/netns/$DST xdp-rlctl \.\.\.' instead of 'ip netns exec $DST', or --pin-dir on a bpffs mounted outside"
	no_xdp_on "$DST" d0 || fail "d0 attached"
	# a shell started by ip netns exec ends the namespace too
	out=$(ip netns exec "$DST" bash -c '"$1" rule add 198.18.0.0/24 rate 1/s burst 1' _ "$CTL_BIN" 2>&1)
	check_match "from a shell under ip netns exec" "$out" "^Error: no bpffs at /sys/fs/bpf in this mount namespace"
	# readers too: not "not loaded", which would send one to attach
	check_match "status under ip netns exec" "$(ip netns exec "$DST" "$CTL_BIN" status 2>&1)" \
		"nsenter --net=/run/netns/$DST"
	check_eq "host's /sys/fs/bpf untouched" "$(stat -f -c %T /sys/fs/bpf)" "$host_fs"
	check_eq "host's pin dir untouched" "$(ls -d /sys/fs/bpf/xdp-rl 2>&1)" "$host_pin"

	# the hint's --pin-dir: a bpffs mounted outside lasts
	out=$(ip netns exec "$DST" "$CTL_BIN" --pin-dir "$PIN" attach dev d0 keys 4096 2>/dev/null)
	check_match "--pin-dir under ip netns exec" "$out" "^attached to d0"
	check_match "still attached after it ended" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "status sees it" "$(ctl -j status | jq -r '.interfaces[0].ifname')" d0
	# and the hint's nsenter (on the lab's pin dir, never the machine's)
	check_match "nsenter" "$(nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" detach dev d0 purge)" \
		"removed the pins"
	no_xdp_on "$DST" d0 || fail "d0 still attached"
}

run_test test_purge
run_test test_purge_partial_instance
run_test test_purge_refused_while_daemon_serves
run_test test_keys_mismatch_way_out
run_test test_no_tables_before_attach
run_test test_ip_netns_exec_refused
summary

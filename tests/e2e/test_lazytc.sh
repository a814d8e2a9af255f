#!/usr/bin/env bash
# End-to-end: the tc program is loaded only when a tc hook needs it
# (docs/coexistence.md, "Which hook"). An XDP attach verifies the XDP program
# alone; the first `attach dev X hook tc` loads the tc program on the same
# maps and pins it, where every later command finds it; a load that fails
# leaves the XDP side as it was; the daemon loads it at start-up only, when
# its configuration has a hook tc interface, there yet or not.
#
#   ns $SRC   s0 --- d0 (XDP)  ns $DST
#   ns $SRC2  s1 --- d1 (tc)
source "$(dirname "$0")/../lib/e2e.sh"

# flood2 COUNT: COUNT UDP packets from 198.18.0.1 of $SRC2, through d1
flood2() {
	nsenter --net="/run/netns/$SRC2" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -n "$1" -r 4000 -t 20
}

seen() {
	ctl -j stats | jq -r ".rules[] | select(.id == $1) | .passed_packets + .dropped_packets"
}

test_tc_loaded_when_needed() {
	lab_up || return
	lab_up_src2 || { fail "second sender"; return; }
	ctl attach dev d0 >/dev/null || { fail "attach d0"; return; }
	local xdp_id tc_id st
	[[ ! -e $PIN/xrl_tc_prog ]] || fail "an XDP attach pinned a tc program"
	check_eq "an XDP attach: no tc program loaded" "$(inst_progs xrl_tc)" 0
	check_eq "an XDP attach: the XDP program" "$(inst_progs xdp_rl)" 1
	st=$(ctl -j status) || fail "-j status without a tc program"
	check_eq "-j status: one interface, at XDP" "$(jq -c '[.interfaces[] | .hook]' <<<"$st")" '["xdp"]'
	xdp_id=$(jq .prog_id <<<"$st")
	ctl status >/dev/null || fail "status without a tc program"
	ctl rule add 198.18.0.1/32 rate 1/h burst 20 id 1 >/dev/null || { fail "rule add"; return; }

	# the first tc hook loads it, on the same maps
	check_eq "attach d1 hook tc" "$(ctl attach dev d1 hook tc)" "attached to d1 (tc ingress)"
	[[ -e $PIN/xrl_tc_prog ]] || fail "the tc program is not pinned"
	check_eq "the tc program loaded, once" "$(inst_progs xrl_tc)" 1
	check_eq "the XDP program untouched" "$(inst_progs xdp_rl)" 1
	st=$(ctl -j status)
	check_eq "the XDP program kept" "$(jq .prog_id <<<"$st")" "$xdp_id"
	check_eq "d0 still runs it" "$(jq '.interfaces[] | select(.ifname == "d0") | .prog_id' <<<"$st")" "$xdp_id"
	tc_id=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	check_eq "d1 runs the pinned tc program" "$(jq '.interfaces[] | select(.ifname == "d1") | .prog_id' <<<"$st")" "$tc_id"

	# one bucket for 198.18.0.1 whichever hook meters it
	check_eq "d0 (XDP): sent" "$(flood 198.18.0.1 198.18.0.254 30)" 30
	check_eq "d1 (tc): sent" "$(flood2 30)" 30
	check_eq "both hooks metered" "$(seen 1)" 60
	check_eq "one bucket of 20 for both" "$(rule_stat 1 passed_packets)" 20

	# later users find the pinned one: no second load
	ctl detach dev d1 >/dev/null || fail "detach d1"
	check_eq "detach: the tc program stays pinned" "$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)" "$tc_id"
	ctl attach dev d1 hook tc >/dev/null || fail "attach d1 hook tc again"
	check_eq "attached again: the same tc program" "$(ctl -j status | jq '.interfaces[] | select(.ifname == "d1") | .prog_id')" "$tc_id"
	check_eq "still one" "$(inst_progs xrl_tc)" 1
	ctl detach dev d1 >/dev/null || fail "detach d1"
	ctl detach dev d0 purge >/dev/null || fail "detach d0 and purge"
	[[ ! -e $PIN ]] || fail "pins left: $(ls "$PIN" | tr '\n' ' ')"
}

# A tc load that fails (here: without CAP_SYS_ADMIN, which opens the XDP
# program's unpinned maps by id, the capture's, that the tc program shares)
# fails that attach, saying so, and leaves the XDP side and the pins as they
# were; with the right, the same attach then works.
test_tc_load_refused() {
	lab_up || return
	lab_up_src2 || { fail "second sender"; return; }
	ctl attach dev d0 >/dev/null || { fail "attach d0"; return; }
	local before out rc xdp_id
	before=$(ls -i "$PIN" | sort)
	xdp_id=$(ctl -j status | jq .prog_id)
	out=$(nsenter --net="/run/netns/$DST" setpriv --inh-caps=-all --bounding-set=-all,+bpf,+perfmon,+net_admin \
		"$CTL_BIN" --pin-dir "$PIN" attach dev d1 hook tc 2>&1)
	rc=$?
	check_eq "refused" "$rc" 1
	check_match "says why" "$out" "^Error: cannot load the tc program: .*takes CAP_SYS_ADMIN"
	check_eq "pins untouched" "$(ls -i "$PIN" | sort)" "$before"
	check_eq "no tc program left loaded" "$(inst_progs xrl_tc)" 0
	check_eq "d1 not attached" "$(ctl -j status | jq -c '[.interfaces[] | .ifname]')" '["d0"]'
	check_eq "d0 still runs the XDP program" "$(ctl -j status | jq '.interfaces[0].prog_id')" "$xdp_id"
	check_eq "status says the same" "$(ctl -j status | jq .prog_id)" "$xdp_id"
	check_match "d0 still at XDP" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "with the right: attached" "$(ctl attach dev d1 hook tc)" "attached to d1 (tc ingress)"
	check_eq "the tc program loaded" "$(inst_progs xrl_tc)" 1
}

# The daemon at XDP only loads no tc program; after its start-up it cannot
# load one (it keeps CAP_BPF alone), so a reload that adds the first hook tc
# interface fails for that interface, saying what to do, and the XDP one is
# served on as it was.
test_daemon_reload_first_tc() {
	lab_up || return
	lab_up_src2 || { fail "second sender"; return; }
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log" xdp_id
	: >"$log"
	write_conf "$conf" "interface d0 mode generic" "rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	start_rld "$log" --config "$conf"
	wait_log "$log" "interface d0: attached" || return
	wait_log "$log" "running" || return
	check_eq "the daemon at XDP: no tc program loaded" "$(inst_progs xrl_tc)" 0
	xdp_id=$(ctl -j status | jq .prog_id)
	write_conf "$conf" "interface d0 mode generic" "interface d1 hook tc" \
		"rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	kill -HUP "$RLD_PID"
	wait_log "$log" "interface d1: .*after its start-up the daemon cannot load the tc program .*restart it" 10 || return
	check_eq "no tc program loaded" "$(inst_progs xrl_tc)" 0
	[[ ! -e $PIN/xrl_tc_prog ]] || fail "a tc program pinned"
	check_eq "d0 served as it was" "$(ctl -j status | jq -c '[.prog_id, [.interfaces[] | .ifname, .prog_id]]')" \
		"[$xdp_id,[\"d0\",$xdp_id]]"
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
}

# A hook tc interface that is not there when the daemon starts is attached
# when it appears: the daemon loads the tc program at its start-up, while it
# still may, since after it it keeps CAP_BPF alone (before, the interface
# stayed unmetered, the load refused, until a restart with it present).
test_daemon_tc_iface_appears() {
	lab_up || return
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log"
	: >"$log"
	write_conf "$conf" "interface d0 mode generic" "interface d1 hook tc" \
		"rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	start_rld "$log" --config "$conf"
	wait_log "$log" "interface d1 does not exist" || return
	wait_log "$log" "running" || return
	check_eq "the tc program loaded at start-up" "$(inst_progs xrl_tc)" 1
	[[ -e $PIN/xrl_tc_prog ]] || fail "the tc program is not pinned"
	lab_up_src2 || { fail "second sender"; return; }
	wait_log "$log" "interface d1: attached \(tc ingress\)" 10 || return
	check_eq "d1 (tc): sent" "$(flood2 30)" 30
	check_eq "metered at tc: the burst" "$(rule_stat 1 passed_packets)" 20
	check_eq "and the rest dropped" "$(rule_stat 1 dropped_packets)" 10
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
}

# kill -9 of that daemon after its start-up load: the tc program stays
# pinned, unattached; the next daemon adopts it (no second load) and
# attaches the interface once it is there.
test_daemon_killed_after_tc_load() {
	lab_up || return
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log" tc_id
	: >"$log"
	write_conf "$conf" "interface d0 mode generic" "interface d1 hook tc" \
		"rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	tc_id=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	kill -KILL "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
	lab_up_src2 || { fail "second sender"; return; }
	: >"$log"
	start_rld "$log" --config "$conf"
	wait_log "$log" "interface d1: attached \(tc ingress\)" 10 || return
	check_eq "the pinned tc program adopted" "$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)" "$tc_id"
	check_eq "still one tc program" "$(inst_progs xrl_tc)" 1
	check_eq "d1 (tc): sent" "$(flood2 30)" 30
	check_eq "metered at tc: the burst" "$(rule_stat 1 passed_packets)" 20
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
}

run_test test_tc_loaded_when_needed
run_test test_tc_load_refused
run_test test_daemon_reload_first_tc
run_test test_daemon_tc_iface_appears
run_test test_daemon_killed_after_tc_load
summary

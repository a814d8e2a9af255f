#!/usr/bin/env bash
# End-to-end: the order of the tcx ingress chain (docs/coexistence.md,
# "The tcx chain's order"). xdp-rl attaches first; a program attached later
# with BPF_F_BEFORE runs before it, and what that program passes (TC_ACT_OK
# ends the chain) never meets the limiter. status, -j status and the
# daemon (log, xdp_rl_interface_tc_position) say so; `attach ... hook tc
# first` and the configuration's `interface IFACE hook tc first` put
# xdp-rl first again.
#
#   ns $SRC  s0 --- d0  ns $DST   tcx ingress: tc_pass (tests/tools,
#                                 attached by tcx-attach) and xdp-rl
source "$(dirname "$0")/../lib/e2e.sh"

FOREIGN_OBJ="$OUT/tc_pass.bpf.o"

# foreign_before: tc_pass attached first in d0's tcx chain, its link
# pinned in the lab's bpffs; prints its program id
foreign_before() {
	in_dst "$OUT/tcx-attach" "$FOREIGN_OBJ" d0 "$BPFFS/foreign_tc" before || return 1
	bpftool -j link show pinned "$BPFFS/foreign_tc" | jq .prog_id
}

# seen ID: packets of rule ID that reached xdp-rl (passed + dropped)
seen() {
	ctl -j stats | jq -r ".rules[] | select(.id == $1) | .passed_packets + .dropped_packets"
}

# tcx_left: the programs left in d0's tcx chain, once they are 0 or after
# 3 s (a link whose last pin goes is released a moment later)
tcx_left() {
	local i n
	for ((i = 0; i < 30; i++)); do
		n=$(in_dst "$OUT/tcx-attach" count d0)
		[[ $n == 0 ]] && break
		sleep 0.1
	done
	echo "$n"
}

# wait_metric REGEX: the daemon's metrics match REGEX within 5 s
wait_metric() {
	local i
	for ((i = 0; i < 50; i++)); do
		in_dst curl -s 127.0.0.1:9437/metrics | grep -qE "$1" && return 0
		sleep 0.1
	done
	fail "no metric /$1/ within 5 s"
	return 1
}

# order: xdp-rl's place in d0's tcx chain and the program first, from -j status
order() {
	ctl -j status | jq -c '.interfaces[0] | [.tc_position, .tc_first.prog_id, .tc_first.name]'
}

test_tc_chain_order() {
	lab_up || return
	local fid out
	ctl attach dev d0 hook tc >/dev/null || { fail "attach hook tc"; return; }
	ctl rule add 198.18.0.0/24 rate 1/h burst 20 id 1 >/dev/null
	check_eq "attached first" "$(order)" '[1,null,null]'
	fid=$(foreign_before) || { fail "tcx-attach"; return; }
	check_eq "a program attached before it: second" "$(order)" "[2,$fid,\"tc_pass\"]"
	check_match "status says it and the way back" "$(ctl status)" \
		"d0 +tc +ifindex [0-9]+  NOT FIRST in the tcx chain \(position 2\): program $fid tc_pass runs before it.*'attach dev d0 hook tc first'"
	check_eq "a flood sent" "$(flood 198.18.0.1 198.18.0.254 100 2000)" 100
	check_eq "it skipped xdp-rl entirely" "$(seen 1)" 0

	out=$(ctl attach dev d0 hook tc 2>&1)
	check_eq "attach again without first: refused as before" "$?:$out" "1:Error: xdp-rl is already attached to d0"
	out=$(ctl attach dev d0 hook tc first)
	check_match "attach ... first" "$out" \
		"^d0: xdp-rl is first in the tcx chain again \(its link made again: unmetered for [0-9]+ us\)$"
	check_eq "first again" "$(order)" '[1,null,null]'
	check_eq "the foreign program still attached" "$(bpftool -j link show pinned "$BPFFS/foreign_tc" | jq .prog_id)" "$fid"
	check_eq "a flood sent" "$(flood 198.18.0.2 198.18.0.254 100 2000)" 100
	check_eq "held to its burst now" "$(rule_stat 1 passed_packets)" 20
	check_eq "the rest dropped" "$(rule_stat 1 dropped_packets)" 80
	check_eq "first already: said, nothing changed" "$(ctl attach dev d0 hook tc first)" \
		"d0: xdp-rl is first in the tcx chain already"
	check_eq "-j" "$(ctl -j attach dev d0 hook tc first | jq -c '[.moved_first, .hook]')" '[false,"tc"]'
	out=$(ctl attach dev d0 first 2>&1)
	check_eq "first without hook tc: refused" "$?" 2
	check_match "says why" "$out" "first is the tcx chain's order: it needs hook tc"

	rm -f "$BPFFS/foreign_tc"
	check_eq "the foreign program gone: still first" "$(order)" '[1,null,null]'
	ctl detach dev d0 purge >/dev/null || fail "detach"
	check_eq "no tcx program left on d0" "$(tcx_left)" 0
}

# The daemon: a program attached before xdp-rl is said once in the log and
# in xdp_rl_interface_tc_position; with `hook tc first` it puts xdp-rl
# first again by itself, counted in xdp_rl_tc_reorders_total.
test_daemon_tc_order() {
	lab_up || return
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log" fid
	: >"$log"
	write_conf "$conf" "interface d0 hook tc" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	start_rld "$log" --config "$conf"
	wait_log "$log" "interface d0: attached \(tc ingress\)" || return
	wait_log "$log" "running" || return
	wait_metric '^xdp_rl_interface_tc_position\{interface="d0"\} 1$' || return
	fid=$(foreign_before) || { fail "tcx-attach"; return; }
	# (the daemon may not read the program's name: by id, CAP_SYS_ADMIN)
	wait_log "$log" "interface d0: program $fid( tc_pass)? runs before xdp-rl in the tcx chain \(position 2\): what it passes or drops skips the limiter" 5 || return
	wait_metric '^xdp_rl_interface_tc_position\{interface="d0"\} 2$' || return
	check_match "no reorder without first" "$(in_dst curl -s 127.0.0.1:9437/metrics)" 'xdp_rl_tc_reorders_total 0'
	sleep 1.5
	check_eq "said once" "$(grep -c 'runs before xdp-rl in the tcx chain' "$log")" 1
	check_eq "left as the operator has it" "$(order)" "[2,$fid,\"tc_pass\"]"
	rm -f "$BPFFS/foreign_tc"
	wait_log "$log" "interface d0: xdp-rl is first in the tcx chain again" 5 || return

	# hook tc first: the daemon keeps it first
	write_conf "$conf" "interface d0 hook tc first" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	kill -HUP "$RLD_PID"
	wait_log "$log" "reload: rules: " 10 || return
	fid=$(foreign_before) || { fail "tcx-attach"; return; }
	wait_log "$log" "interface d0: program $fid( tc_pass)? had been attached before xdp-rl in the tcx chain: xdp-rl is first again \(unmetered for [0-9]+ us\)" 5 || return
	check_eq "first" "$(order)" '[1,null,null]'
	wait_metric '^xdp_rl_tc_reorders_total 1$' || return
	check_eq "a flood sent" "$(flood 198.18.0.3 198.18.0.254 100 2000)" 100
	check_eq "held to its burst" "$(rule_stat 1 passed_packets)" 20
	check_eq "the foreign program kept" "$(bpftool -j link show pinned "$BPFFS/foreign_tc" | jq .prog_id)" "$fid"
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
	rm -f "$BPFFS/foreign_tc"
	[[ ! -e $PIN ]] || fail "the daemon's stop left pins: $(ls "$PIN" | tr '\n' ' ')"
	check_eq "no tcx program left on d0" "$(tcx_left)" 0
}

run_test test_tc_chain_order
run_test test_daemon_tc_order
summary

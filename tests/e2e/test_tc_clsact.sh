#!/usr/bin/env bash
# End-to-end: hook tc without tcx links, through a clsact filter
# (docs/coexistence.md, "Without tcx: a clsact filter"). This kernel has
# tcx, so XRL_TC_LEGACY=1 forces the fallback that a kernel before 6.6
# takes by itself. A flood is held as with tcx; detach leaves nothing of
# xdp-rl's; another's clsact qdisc and filters are never touched; the
# daemon attaches so and attaches again a filter removed behind its back;
# an upgrade is refused, nothing changed.
#
#   ns $SRC  s0 --- d0  ns $DST   clsact ingress: xdp-rl's filter (prio 1,
#                                 handle 0x5852), another's (prio 10)
source "$(dirname "$0")/../lib/e2e.sh"

FOREIGN_OBJ="$OUT/tc_pass.bpf.o"

lctl() { XRL_TC_LEGACY=1 ctl "$@"; }

# filters: d0's ingress filters as "prio handle" pairs, sorted
filters() {
	in_dst tc -j filter show dev d0 ingress 2>/dev/null |
		jq -r '[.[] | select(.options.handle != null) | "\(.pref) \(.options.handle)"] | sort | join(",")'
}

clsact_there() {	# 1 when d0 has a clsact qdisc
	in_dst tc qdisc show dev d0 | grep -c clsact
}

test_clsact_fallback() {
	lab_up || return
	local out
	# another's clsact and filter, there first
	in_dst tc qdisc add dev d0 clsact || { fail "tc qdisc add"; return; }
	in_dst tc filter add dev d0 ingress prio 10 handle 7 bpf da obj "$FOREIGN_OBJ" sec tc ||
		{ fail "tc filter add"; return; }
	check_eq "another's filter" "$(filters)" "10 0x7"

	check_eq "attach hook tc" "$(lctl attach dev d0 hook tc)" "attached to d0 (tc ingress)"
	check_eq "-j status: at tc, by clsact" "$(ctl -j status | jq -c '.interfaces[0] | [.hook, .tc_via, .tc_position, .link_up]')" \
		'["tc","clsact",null,true]'
	check_match "status says so" "$(ctl status)" "d0 +tc +ifindex [0-9]+  \(a clsact filter: no tcx links\)"
	check_eq "xdp-rl's filter first, the other's kept" "$(filters)" "1 0x5852,10 0x7"
	check_eq "no tcx link" "$(in_dst "$OUT/tcx-attach" count d0)" 0
	out=$(lctl attach dev d0 hook tc 2>&1)
	check_eq "a second attach: refused" "$?:$out" "1:Error: xdp-rl is already attached to d0"

	ctl rule add 198.18.0.0/24 rate 1/h burst 20 id 1 >/dev/null
	check_eq "a flood sent" "$(flood 198.18.0.1 198.18.0.254 100 2000)" 100
	check_eq "held to its burst" "$(rule_stat 1 passed_packets)" 20
	check_eq "the rest dropped" "$(rule_stat 1 dropped_packets)" 80

	out=$(ctl upgrade 2>&1)
	check_eq "upgrade: refused" "$?" 1
	check_match "says why and the way" "$out" "d0 is attached at tc through a clsact filter .*: refused, nothing was changed"
	check_eq "still attached" "$(filters)" "1 0x5852,10 0x7"

	ctl detach dev d0 purge >/dev/null || fail "detach"
	check_eq "xdp-rl's filter gone, the other's kept" "$(filters)" "10 0x7"
	check_eq "the other's clsact kept" "$(clsact_there)" 1
	[[ ! -e $PIN ]] || fail "pins left: $(ls "$PIN" | tr '\n' ' ')"
	in_dst tc qdisc del dev d0 clsact

	# no clsact before: xdp-rl's own, removed with it
	lctl attach dev d0 hook tc >/dev/null || { fail "attach again"; return; }
	check_eq "a clsact made" "$(clsact_there)" 1
	ctl detach dev d0 >/dev/null || fail "detach"
	check_eq "and removed" "$(clsact_there)" 0

	# xdp-rl's clsact, and another adds a filter to it: kept at detach
	lctl attach dev d0 hook tc >/dev/null || { fail "attach again"; return; }
	in_dst tc filter add dev d0 ingress prio 10 handle 7 bpf da obj "$FOREIGN_OBJ" sec tc ||
		{ fail "tc filter add"; return; }
	ctl detach dev d0 purge >/dev/null || fail "detach"
	check_eq "the qdisc another uses now: kept" "$(clsact_there)" 1
	check_eq "with its filter" "$(filters)" "10 0x7"
	in_dst tc qdisc del dev d0 clsact
}

# The daemon attaches through clsact, attaches again a filter deleted
# behind its back, and its stop leaves nothing.
test_daemon_clsact() {
	lab_up || return
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log"
	: >"$log"
	write_conf "$conf" "interface d0 hook tc" "metrics off" \
		"rule add 198.18.0.0/24 rate 1/h burst 20 id 1"
	XRL_TC_LEGACY=1 start_rld "$log" --config "$conf"
	wait_log "$log" "interface d0: attached \(tc ingress\)" || return
	wait_log "$log" "running" || return
	check_eq "by clsact" "$(ctl -j status | jq -r '.interfaces[0].tc_via')" clsact
	check_eq "its filter" "$(filters)" "1 0x5852"
	in_dst tc filter del dev d0 ingress prio 1 handle 0x5852 bpf || { fail "tc filter del"; return; }
	wait_log "$log" "interface d0: the program is no longer attached" 5 || return
	wait_log "$log" "interface d0: attached \(tc ingress\).*" 5 || return
	check_eq "attached again" "$(filters)" "1 0x5852"
	check_eq "a flood sent" "$(flood 198.18.0.1 198.18.0.254 100 2000)" 100
	check_eq "held to its burst" "$(rule_stat 1 passed_packets)" 20
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
	check_eq "no filter left" "$(filters)" ""
	check_eq "no clsact left" "$(clsact_there)" 0
	[[ ! -e $PIN ]] || fail "the daemon's stop left pins: $(ls "$PIN" | tr '\n' ' ')"
}

run_test test_clsact_fallback
run_test test_daemon_clsact
summary

#!/usr/bin/env bash
# End-to-end: xdp-rl beside the XDP programs an operator already runs
# (docs/coexistence.md). With `hook tc` it runs at tc ingress, behind
# whatever holds the XDP hook: xdp-tools' xdp-filter, or a plain program
# attached with `ip link set DEV xdp obj ...`. Each keeps doing its job,
# either may go first, and neither leaves anything behind. At the XDP hook,
# an interface that another program holds is refused, naming it, with
# nothing changed.
#
#   ns $SRC  s0 --- d0  ns $DST   XDP: xdp-filter or xdp_deny_port;
#                                 tc ingress: xdp-rl (hook tc)
#   ns $SRC2 s1 --- d1            (the mixed test: xdp-rl at XDP there)
#
# xdp-filter pins under /sys/fs/bpf/xdp-filter, one directory for the whole
# host: it runs here in a mount namespace of its own, whose /sys/fs/bpf is a
# directory of the lab's private bpffs, so that no other run meets it.
source "$(dirname "$0")/../lib/e2e.sh"

DENY=7777	# the port the foreign programs deny (tests/tools/xdp_deny_port.bpf.c)
OPEN=7000	# a port they leave open
DENY_OBJ="$OUT/xdp_deny_port.bpf.o"
XF_ROOT="$BPFFS/xdp-filter-root"

# xf ARGS...: xdp-filter in $DST, on the lab's private bpffs
xf() {
	mkdir -p "$XF_ROOT" || return 1
	# shellcheck disable=SC2016
	LIBXDP_BPFFS=/sys/fs/bpf unshare -m sh -c \
		'r=$0 n=$1; shift; mount --bind "$r" /sys/fs/bpf && exec nsenter --net="$n" xdp-filter "$@"' \
		"$XF_ROOT" "/run/netns/$DST" "$@"
}

# xflood SRC PORT COUNT [NS]: COUNT UDP datagrams from SRC to 198.18.0.254's
# PORT, from $SRC (or NS), paced at 4000/s: a flood for a limit of 20 and a
# rate the sink's socket keeps up with, so that what it counts is exact
xflood() {
	nsenter --net="/run/netns/${4:-$SRC}" "$FLOOD" -s "$1" -d 198.18.0.254 -p "$2" -n "$3" -r 4000 -t 20
}

# sink PORT SECONDS FILE: count what reaches PORT of d0, per source, into FILE
sink() {
	in_dst "$OUT/udpsink" -p "$1" -T "$2" >"$3" &
	BG_PIDS+=($!)
}

# got FILE SRC: what the sink of FILE counted from SRC
got() {
	jq -r --arg s "$2" '.[$s] // 0' "$1"
}

# seen ID: packets of rule ID that reached xdp-rl (passed + dropped)
seen() {
	ctl -j stats | jq -r ".rules[] | select(.id == $1) | .passed_packets + .dropped_packets"
}

# passed ID: packets rule ID passed
passed() {
	rule_stat "$1" passed_packets
}

# tcx_links PROG_ID: the links (of any interface) that run PROG_ID
tcx_links() {
	bpftool -j link list | jq --argjson p "$1" '[.[] | select(.prog_id == $p)] | length'
}

# ifcount DEV: the packets xdp-rl counted on DEV (passed + dropped)
ifcount() {
	ctl -j stats | jq --arg d "$1" '[.interfaces[] | select(.ifname == $d)][0] | .passed_packets + .dropped_packets'
}

xdp_prog_on() {	# DEV: the id of the XDP program of DEV in $DST, or null
	in_dst ip -j link show "$1" | jq -r '.[0].xdp.prog.id // "null"'
}

# the rules of these tests: every source 198.18.0.N of the lab a rule of its
# own, id N: 20 packets and then 1 an hour (burst + rate x t is 20 for any
# test's t)
limit_all() {
	local n
	for n in 1 2 3 4 5 6 7 8 9; do
		ctl rule add "198.18.0.$n/32" rate 1/h burst 20 id $n >/dev/null || fail "rule add $n"
	done
}

# one flood of 200 from FLOODER to the open port, 30 polite packets from
# POLITE (paced) to it and 50 from DENIED to the denied port; the sinks
# say what reached the host, per source (files $TMPD/open.json, deny.json)
traffic() {	# FLOODER POLITE DENIED
	sink $OPEN 4 "$TMPD/open.json"
	sink $DENY 4 "$TMPD/deny.json"
	sleep 0.3
	check_eq "flood sent" "$(xflood "$1" $OPEN 200)" 200
	in_src "$FLOOD" -s "$2" -d 198.18.0.254 -p $OPEN -n 20 -r 200 -t 5 >/dev/null
	check_eq "denied sent" "$(xflood "$3" $DENY 50)" 50
	wait "${BG_PIDS[@]: -2}" 2>/dev/null
}

# The whole story with xdp-filter: both at once, then each alone.
test_tc_beside_xdp_filter() {
	command -v xdp-filter >/dev/null || { skip "xdp-filter (xdp-tools) is not installed"; return; }
	lab_up || return
	xf load d0 >/dev/null 2>&1 || { fail "xdp-filter load: $(xf load d0 2>&1 | tail -n 1)"; return; }
	xf port $DENY >/dev/null || { fail "xdp-filter port"; return; }
	local held out tc_id
	held=$(xdp_prog_on d0)

	# at the XDP hook: refused, nothing changed, the way out said
	out=$(ctl attach dev d0 2>&1)
	check_eq "attach at XDP: refused" $? 1
	check_match "names the holder" "$out" "another XDP program is already attached to d0 \(id $held, name xdpfilt_[a-z_]+"
	check_match "says the way out" "$out" "'attach dev d0 hook tc'"
	[[ ! -e $PIN ]] || fail "the refused attach left $PIN behind: $(ls "$PIN" | head -n 3 | tr '\n' ' ')"

	ctl attach dev d0 hook tc >/dev/null || { fail "attach hook tc"; return; }
	check_eq "status: the hook" "$(ctl -j status | jq -r '.interfaces[0].hook')" tc
	check_eq "xdp-filter still holds the XDP hook" "$(xdp_prog_on d0)" "$held"
	limit_all
	traffic 198.18.0.1 198.18.0.2 198.18.0.3
	check_eq "the flood: its burst through xdp-rl" "$(passed 1)" 20
	check_eq "the flood: the rest dropped" "$(rule_stat 1 dropped_packets)" 180
	check_eq "the flood: its burst reaches the host" "$(got "$TMPD/open.json" 198.18.0.1)" 20
	check_eq "polite: all of it reaches the host" "$(got "$TMPD/open.json" 198.18.0.2)" 20
	check_eq "the denied port: xdp-filter dropped it before tc" "$(got "$TMPD/deny.json" 198.18.0.3)" 0
	check_eq "the denied port: xdp-rl never saw it" "$(seen 3)" 0

	# xdp-filter goes first: xdp-rl limits alone (the port is open now)
	xf unload d0 >/dev/null || fail "xdp-filter unload"
	check_eq "xdp-filter gone" "$(xdp_prog_on d0)" null
	traffic 198.18.0.4 198.18.0.5 198.18.0.6
	check_eq "alone: the flood held to its burst" "$(got "$TMPD/open.json" 198.18.0.4)" 20
	check_eq "alone: polite passes" "$(got "$TMPD/open.json" 198.18.0.5)" 20
	check_eq "alone: the port xdp-filter denied is only limited" "$(got "$TMPD/deny.json" 198.18.0.6)" 20

	# xdp-filter back, then xdp-rl goes: xdp-filter alone denies
	if ! xf load d0 >/dev/null 2>&1 || ! xf port $DENY >/dev/null; then
		fail "xdp-filter load again"
		return
	fi
	tc_id=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	ctl detach dev d0 purge >/dev/null || fail "detach"
	check_eq "no link of xdp-rl's tc program left" "$(tcx_links "$tc_id")" 0
	[[ ! -e $PIN ]] || fail "pins left: $(ls "$PIN" | tr '\n' ' ')"
	check_match "xdp-filter untouched" "$(xdp_prog_on d0)" '^[0-9]+$'
	traffic 198.18.0.7 198.18.0.8 198.18.0.9
	check_eq "xdp-filter alone: no limit" "$(got "$TMPD/open.json" 198.18.0.7)" 200
	check_eq "xdp-filter alone: polite passes" "$(got "$TMPD/open.json" 198.18.0.8)" 20
	check_eq "xdp-filter alone: still denies" "$(got "$TMPD/deny.json" 198.18.0.9)" 0
	xf unload d0 >/dev/null || fail "xdp-filter unload"
	check_eq "no pin of xdp-filter left" "$(find "$XF_ROOT" ! -type d | wc -l)" 0
	check_eq "no XDP program left" "$(xdp_prog_on d0)" null
}

# The same with a plain program of iproute2's loading: xdp-rl detached
# first this time, then the other order.
test_tc_beside_plain_xdp() {
	lab_up || return
	in_dst ip link set dev d0 xdp obj "$DENY_OBJ" sec xdp || { fail "ip link set xdp"; return; }
	local held tc_id
	held=$(xdp_prog_on d0)
	check_match "attach at XDP: names it" "$(ctl attach dev d0 2>&1)" "\(id $held, name xdp_deny_port, native mode\)"
	ctl attach dev d0 hook tc >/dev/null || { fail "attach hook tc"; return; }
	limit_all
	traffic 198.18.0.1 198.18.0.2 198.18.0.3
	check_eq "the flood held to its burst" "$(got "$TMPD/open.json" 198.18.0.1)" 20
	check_eq "polite passes" "$(got "$TMPD/open.json" 198.18.0.2)" 20
	check_eq "the denied port stays denied" "$(got "$TMPD/deny.json" 198.18.0.3)" 0
	check_eq "xdp-rl never saw it" "$(seen 3)" 0

	# xdp-rl goes first: the other program alone
	tc_id=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	ctl detach dev d0 purge >/dev/null || fail "detach"
	check_eq "no link of xdp-rl's tc program left" "$(tcx_links "$tc_id")" 0
	check_eq "the other program untouched" "$(xdp_prog_on d0)" "$held"
	traffic 198.18.0.4 198.18.0.5 198.18.0.6
	check_eq "alone: no limit" "$(got "$TMPD/open.json" 198.18.0.4)" 200
	check_eq "alone: still denies" "$(got "$TMPD/deny.json" 198.18.0.6)" 0

	# and the other way round: the plain program goes first
	ctl attach dev d0 hook tc >/dev/null || { fail "attach hook tc again"; return; }
	limit_all
	in_dst ip link set dev d0 xdp off
	traffic 198.18.0.7 198.18.0.8 198.18.0.9
	check_eq "xdp-rl alone: the flood held" "$(got "$TMPD/open.json" 198.18.0.7)" 20
	check_eq "xdp-rl alone: the open port's polite traffic passes" "$(got "$TMPD/open.json" 198.18.0.8)" 20
	check_eq "xdp-rl alone: the former denied port only limited" "$(got "$TMPD/deny.json" 198.18.0.9)" 20
	tc_id=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	ctl detach dev d0 purge >/dev/null || fail "detach"
	check_eq "no link left" "$(tcx_links "$tc_id")" 0
	check_eq "no XDP program left" "$(xdp_prog_on d0)" null
	check_eq "no qdisc or tc filter added" "$(in_dst tc qdisc show dev d0 | grep -cE 'clsact|ingress')" 0
}

# One instance, two hooks: d0 at tc (beside a foreign program), d1 at XDP;
# one rule set and one bucket per source for both.
test_mixed_hooks() {
	lab_up || return
	lab_up_src2 || { fail "second sender"; return; }
	in_dst ip link set dev d0 xdp obj "$DENY_OBJ" sec xdp || { fail "ip link set xdp"; return; }
	ctl attach dev d0 hook tc >/dev/null || { fail "attach d0 hook tc"; return; }
	ctl attach dev d1 mode generic >/dev/null || { fail "attach d1"; return; }
	local st
	st=$(ctl -j status)
	check_eq "d0's hook" "$(jq -r '.interfaces[] | select(.ifname == "d0") | .hook' <<<"$st")" tc
	check_eq "d1's hook" "$(jq -r '.interfaces[] | select(.ifname == "d1") | .hook' <<<"$st")" xdp
	check_eq "d1's XDP mode" "$(jq -r '.interfaces[] | select(.ifname == "d1") | .xdp_mode' <<<"$st")" generic
	check_match "status text names the hook" "$(ctl status)" "d0 +tc +ifindex"
	limit_all
	# 198.18.0.1 on both links: one bucket of 20 for the host
	local s0 s1
	s0=$(ifcount d0) s1=$(ifcount d1)
	check_eq "d0: sent" "$(xflood 198.18.0.1 $OPEN 30)" 30
	check_eq "d1: sent" "$(xflood 198.18.0.1 $OPEN 30 "$SRC2")" 30
	check_eq "one bucket for both hooks" "$(passed 1)" 20
	check_eq "seen on both" "$(seen 1)" 60
	# each interface's counter moved by its 30 (and what else its link
	# carried meanwhile: neighbour discovery)
	(( $(ifcount d0) - s0 >= 30 )) || fail "d0 counted $(( $(ifcount d0) - s0 )) at tc, not 30"
	(( $(ifcount d1) - s1 >= 30 )) || fail "d1 counted $(( $(ifcount d1) - s1 )) at XDP, not 30"
	ctl detach dev d0 >/dev/null || fail "detach d0"
	ctl detach dev d1 purge >/dev/null || fail "detach d1"
	[[ ! -e $PIN ]] || fail "pins left"
	in_dst ip link set dev d0 xdp off
}

# GSO packets and GRO aggregates reach tc whole, their payload outside the
# skb's linear part: parsed from the bytes pulled there, counted at their
# whole length, never malformed. A TCP transfer of 20 MB from a local sender
# (veth keeps its GSO packets whole) through hook tc.
test_tc_nonlinear_skbs() {
	lab_up || return
	ctl attach dev d0 hook tc >/dev/null || { fail "attach hook tc"; return; }
	ctl rule add 198.18.0.0/24 rate 1000000/s burst 1000000 id 1 >/dev/null || { fail "rule add"; return; }
	in_dst python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.0.254", 7301)); s.listen(1); s.settimeout(20)
c, _ = s.accept(); c.settimeout(20); n = 0
while True:
    b = c.recv(65536)
    if not b: break
    n += len(b)
print(n)' >"$TMPD/tcp.out" &
	BG_PIDS+=($!)
	wait_listen "$DST" 7301 || return
	in_src python3 -c '
import socket
s = socket.create_connection(("198.18.0.254", 7301), timeout=20); s.sendall(b"x" * 20000000); s.close()' ||
		fail "the transfer failed"
	wait "${BG_PIDS[-1]}"
	check_eq "all of it received" "$(cat "$TMPD/tcp.out")" 20000000
	local st pk by
	st=$(ctl -j stats)
	check_eq "none malformed" "$(jq '.global.malformed_packets' <<<"$st")" 0
	pk=$(jq '.rules[] | select(.id == 1) | .passed_packets' <<<"$st")
	by=$(jq '.rules[] | select(.id == 1) | .passed_bytes' <<<"$st")
	(( by >= 20000000 )) || fail "passed_bytes $by: the skbs' non-linear bytes were not counted"
	# 20 MB in segments of at most 1448 bytes would be 13812 or more
	(( pk < 13812 )) || fail "$pk packets: no aggregate reached tc (nothing non-linear tested)"
	check_eq "nothing dropped" "$(jq '.rules[] | select(.id == 1) | .dropped_packets' <<<"$st")" 0
}

# An upgrade of an instance at tc, under a flood, beside a foreign XDP
# program and with a second interface at XDP: each link gets the new
# build's program of its hook atomically, and no packet goes uncounted.
test_upgrade_tc_under_flood() {
	local new
	mkdir -p "$TMPD/new"
	make -s -C "$TOP" OUTPUT="$TMPD/new/out" VERSION=9.9.9-tc-upgrade "$TMPD/new/out/xdp-rlctl" \
		>"$TMPD/new/build.log" 2>&1 || { fail "cannot build the new version: $(tail -n 3 "$TMPD/new/build.log")"; return; }
	new=$TMPD/new/out/xdp-rlctl
	lab_up || return
	lab_up_src2 || { fail "second sender"; return; }
	in_dst ip link set dev d0 xdp obj "$DENY_OBJ" sec xdp || { fail "ip link set xdp"; return; }
	ctl attach dev d0 hook tc >/dev/null || { fail "attach d0 hook tc"; return; }
	ctl attach dev d1 mode generic >/dev/null || { fail "attach d1"; return; }
	ctl rule add 198.18.0.0/24 rate 100/s burst 20 id 1 >/dev/null
	local old_tc old_xdp st held
	held=$(xdp_prog_on d0)
	old_tc=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	old_xdp=$(ctl -j status | jq .prog_id)

	local t0=$SECONDS p=() out rc
	in_src "$FLOOD" -s 198.18.0.2 -d 198.18.0.254 -p $OPEN -r 50 -n 150 -t 10 >/dev/null & p+=($!)
	in_src "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -p $OPEN -r 20000 -n 60000 -t 10 >/dev/null & p+=($!)
	sleep 1
	out=$(nsenter --net="/run/netns/$DST" "$new" --pin-dir "$PIN" upgrade 2>&1)
	rc=$?
	wait "${p[@]}"
	local secs=$((SECONDS - t0 + 1))
	check_eq "upgrade: exit" $rc 0
	check_match "upgrade: both links moved" "$out" "2 link\(s\) moved"
	local new_tc
	new_tc=$(bpftool -j prog show pinned "$PIN/xrl_tc_prog" | jq .id)
	[[ $new_tc != "$old_tc" ]] || fail "the tc program was not replaced ($new_tc)"
	st=$(ctl -j status)
	check_eq "d0's link runs the new tc program" "$(jq '.interfaces[] | select(.ifname == "d0") | .prog_id' <<<"$st")" "$new_tc"
	check_eq "d1's link runs the new XDP program" "$(jq '.interfaces[] | select(.ifname == "d1") | .prog_id' <<<"$st")" \
		"$(jq .prog_id <<<"$st")"
	[[ $(jq .prog_id <<<"$st") != "$old_xdp" ]] || fail "the XDP program was not replaced"
	check_eq "no upgrade pin left" "$(find "$PIN" -name '*_new' | wc -l)" 0
	check_eq "the old tc program's link is gone" "$(tcx_links "$old_tc")" 0
	local passed dropped
	passed=$(rule_stat 1 passed_packets)
	dropped=$(rule_stat 1 dropped_packets)
	check_eq "every packet counted across the swap" "$((passed + dropped))" 60150
	((passed - 150 <= 20 + 100 * secs)) || fail "the flood got $((passed - 150)) through in ${secs}s"
	# each source a bucket of its own (per /32): the polite one, at 50/s
	# under its 100/s, never dropped
	check_eq "polite never dropped" "$(ctl -j show 198.18.0.2 | jq .dropped_packets)" 0
	check_eq "the foreign program untouched" "$(xdp_prog_on d0)" "$held"
	# a re-attach at tc uses the new program
	ctl detach dev d0 >/dev/null
	ctl attach dev d0 hook tc >/dev/null
	check_eq "re-attach: the new tc program" "$(ctl -j status | jq '.interfaces[] | select(.ifname == "d0") | .prog_id')" "$new_tc"
	ctl detach dev d0 >/dev/null
	ctl detach dev d1 purge >/dev/null
	in_dst ip link set dev d0 xdp off
	check_eq "no link left" "$(tcx_links "$new_tc")" 0
}

# The daemon: an interface configured at tc starts beside a foreign XDP
# program (at XDP it would refuse to start), names its hook in the
# metrics, repairs a removed link at tc, and follows a reload that moves the
# interface from tc to XDP once the foreign program is gone.
test_daemon_hook_tc() {
	lab_up || return
	in_dst ip link set dev d0 xdp obj "$DENY_OBJ" sec xdp || { fail "ip link set xdp"; return; }
	local conf="$TMPD/rules.conf" log="$TMPD/rld.log" held m
	held=$(xdp_prog_on d0)
	: >"$log"
	write_conf "$conf" "interface d0 hook tc" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.1/32 rate 1/h burst 20 id 1"
	check_eq "--check: no complaint" "$(in_dst "$RLD_BIN" --check --pin-dir "$PIN" --config "$conf" 2>&1 | grep -c 'another XDP')" 0
	start_rld "$log" --config "$conf"
	wait_log "$log" "interface d0: attached \(tc ingress\)" || return
	m=$(in_dst curl -s 127.0.0.1:9437/metrics)
	check_match "metric: the hook" "$m" 'xdp_rl_interface_hook\{interface="d0",hook="tc"\} 1'
	check_match "metric: attached" "$m" 'xdp_rl_interface_attached\{interface="d0"\} 1'
	check_eq "the foreign program untouched" "$(xdp_prog_on d0)" "$held"
	check_eq "limited at tc" "$(xflood 198.18.0.1 $OPEN 50)" 50
	check_eq "its burst through" "$(passed 1)" 20
	# a removed link pin: attached again at tc
	rm -f "$PIN/link_d0"
	wait_log "$log" "interface d0: the program is no longer attached" || return
	wait_log "$log" "interface d0: attached \(tc ingress\)" || return
	check_eq "at tc again" "$(ctl -j status | jq -r '.interfaces[0].hook')" tc
	# the foreign program goes, the file moves d0 to XDP: a reload follows
	in_dst ip link set dev d0 xdp off
	write_conf "$conf" "interface d0 hook xdp mode generic" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.1/32 rate 1/h burst 20 id 1"
	kill -HUP "$RLD_PID"
	wait_log "$log" "attached again at generic mode" 10 || return
	check_eq "now at XDP" "$(ctl -j status | jq -r '.interfaces[0].hook')" xdp
	check_match "metric: the new hook" "$(in_dst curl -s 127.0.0.1:9437/metrics)" \
		'xdp_rl_interface_hook\{interface="d0",hook="xdp"\} 1'
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10 >/dev/null
	[[ ! -e $PIN ]] || fail "the daemon's stop left pins: $(ls "$PIN" | tr '\n' ' ')"
	check_eq "no XDP program left" "$(xdp_prog_on d0)" null
}

# run_config MEMBER: the value libxdp reads from the object's run config
# (.xdp_run_config, __uint(MEMBER, N): a pointer to an array of N)
run_config() {
	bpftool -j btf dump file "$OUT/xdp_rl.bpf.o" | jq --arg m "$1" '
		.types as $t | def ty($i): $t[] | select(.id == $i);
		ty(ty([$t[] | select(.name == "_xdp_rl")][0].type_id).members[] | select(.name == $m) | .type_id) |
		ty(.type_id) | .nr_elems'
}

# What libxdp's tools see of xdp-rl: xdp-loader status names its program on
# its interface; the object declares its run priority and chain actions for
# the dispatcher (which this kernel cannot load: docs/coexistence.md).
test_libxdp_citizen() {
	command -v xdp-loader >/dev/null || { skip "xdp-loader (xdp-tools) is not installed"; return; }
	check_eq "run config: priority" "$(run_config priority)" 20
	check_eq "run config: a pass chains to the next program" "$(run_config XDP_PASS)" 1
	lab_up || return
	ctl attach dev d0 mode generic >/dev/null || { fail "attach"; return; }
	mkdir -p "$BPFFS/libxdp"
	local st id
	st=$(LIBXDP_BPFFS="$BPFFS/libxdp" in_dst xdp-loader status d0 2>&1)
	id=$(ctl -j status | jq .prog_id)
	check_match "xdp-loader status lists it" "$st" "d0 +xdp_rl +skb +$id "
}

# A second instance (another pin directory) on an interface the first one
# holds: refused at either hook, naming it, nothing attached. At XDP the
# kernel's one program per hook refuses it anyway; at tc both would run in
# the tcx chain, and every packet would meet two rule sets.
test_second_instance() {
	lab_up || return
	local pin2="$PIN-2" out
	ctl2() { nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$pin2" "$@"; }
	ctl attach dev d0 hook tc >/dev/null || { fail "attach d0 hook tc"; return; }
	out=$(ctl2 attach dev d0 hook tc 2>&1) && fail "a second instance attached at tc beside the first at tc"
	check_match "tc beside tc: refused, naming it" "$out" "another xdp-rl instance is attached to d0 \\(id [0-9]+, at tc ingress\\)"
	out=$(ctl2 attach dev d0 2>&1) && fail "a second instance attached at XDP with the first at tc"
	check_match "XDP beside tc: refused, naming it" "$out" "another xdp-rl instance is attached to d0 \\(id [0-9]+, at tc ingress\\)"
	check_eq "nothing at XDP" "$(xdp_prog_on d0)" null
	ctl detach dev d0 >/dev/null || fail "detach d0"
	ctl attach dev d0 mode generic >/dev/null || { fail "attach d0 at XDP"; return; }
	out=$(ctl2 attach dev d0 hook tc 2>&1) && fail "a second instance attached at tc with the first at XDP"
	check_match "tc beside XDP: refused, naming it" "$out" "another xdp-rl instance is attached to d0 \\(id [0-9]+, at the XDP hook\\)"
	[[ ! -e $pin2 ]] || fail "a refused attach left pins at $pin2"
	ctl detach dev d0 purge >/dev/null || fail "detach d0"
	# alone, the second instance attaches at tc
	ctl2 attach dev d0 hook tc >/dev/null || fail "the second instance alone at tc"
	ctl2 detach dev d0 purge >/dev/null || fail "detach the second instance"
	[[ ! -e $PIN && ! -e $pin2 ]] || fail "pins left"
}

# VLAN-tagged frames at tc: the kernel takes the outer tag out of the frame
# into the skb's metadata before tc ingress, so the program sees the frame
# untagged (a second tag still in it) and limits its source as any other.
# 200 UDP frames from 198.18.0.1 with one tag, then 200 from 198.18.0.2 with
# two, written raw on s0 (no VLAN device needed; the stack drops them after
# tc, having no VLAN 100).
test_tc_vlan() {
	lab_up || return
	ctl attach dev d0 hook tc >/dev/null || { fail "attach d0 hook tc"; return; }
	ctl rule add 198.18.0.1/32 rate 1/h burst 20 id 1 >/dev/null || { fail "rule add 1"; return; }
	ctl rule add 198.18.0.2/32 rate 1/h burst 20 id 2 >/dev/null || { fail "rule add 2"; return; }
	local dmac
	dmac=$(in_dst ip -j link show d0 | jq -r '.[0].address')
	in_src python3 - "$dmac" <<-'PY' || fail "the tagged frames were not sent"
	import socket, struct, sys
	dmac = bytes.fromhex(sys.argv[1].replace(":", ""))
	s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
	s.bind(("s0", 0))
	def frame(src, tags):
	    udp = struct.pack("!HHHH", 40000, 7000, 8 + 18, 0) + b"x" * 18
	    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
	                     socket.inet_aton(src), socket.inet_aton("198.18.0.254"))
	    vl = b"".join(struct.pack("!HH", 0x8100, 100 + i) for i in range(tags))
	    return dmac + b"\x02\x00\x00\x00\x00\x01" + vl + b"\x08\x00" + ip + udp
	for src, tags in (("198.18.0.1", 1), ("198.18.0.2", 2)):
	    for _ in range(200):
	        s.send(frame(src, tags))
	PY
	sleep 0.3
	check_eq "one tag: rule 1 passed" "$(passed 1)" 20
	check_eq "one tag: rule 1 dropped" "$(rule_stat 1 dropped_packets)" 180
	check_eq "two tags: rule 2 passed" "$(passed 2)" 20
	check_eq "two tags: rule 2 dropped" "$(rule_stat 2 dropped_packets)" 180
	check_eq "none malformed" "$(ctl -j stats | jq '.global.malformed_packets')" 0
	ctl detach dev d0 purge >/dev/null || fail "detach"
}

run_test test_tc_beside_xdp_filter
run_test test_tc_beside_plain_xdp
run_test test_mixed_hooks
run_test test_tc_nonlinear_skbs
run_test test_upgrade_tc_under_flood
run_test test_daemon_hook_tc
run_test test_libxdp_citizen
run_test test_second_instance
run_test test_tc_vlan
summary

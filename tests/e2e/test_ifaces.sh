#!/usr/bin/env bash
# End-to-end: the daemon's interfaces are protected, or it says so — an
# interface that another XDP program holds (start, --check, reload, the
# metric per interface), the configured XDP mode on adoption, a detach the
# daemon would undo, and what `systemctl stop` leaves and the way out.
#
#   ns $SRC  s0 --- d0  ns $DST   (xdp-rl, served by xdp-rld)
#   ns $SRC2 s1 --- d1            (a second interface, see lib.sh)
#   brx: a bridge in $DST with no port: no native XDP there
#
# The "other XDP program" is xdp-ref's XDP_PASS (tests/tools/xdp_ref.c),
# attached only to the lab's own d0 or d1, inside $DST.
source "$(dirname "$0")/../lib/e2e.sh"

LOG="$TMPD/rld.log"
CONF="$TMPD/rules.conf"
XREF="$OUT/xdp-ref"
UNIT="$TOP/packaging/xdp-rld.service"

lab_up() {
	: >"$LOG"
	lab_up_veth
}

# another XDP program (XDP_PASS, native) on DEV of $DST; prints its id
foreign_on() {	# DEV
	in_dst "$XREF" "$1" pass native || { fail "xdp-ref cannot attach to $1"; return 1; }
	in_dst ip -j link show "$1" | jq -r '.[0].xdp.prog.id'
}

metric() {	# NAME or NAME{LABELS}: the daemon's value
	in_dst curl -s 127.0.0.1:9437/metrics | awk -v m="$1" '$1 == m { print $2 }'
}

# wait_metric NAME VALUE [SECONDS]: until the daemon exports VALUE
wait_metric() {
	local i v
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		v=$(metric "$1")
		[[ "$v" == "$2" ]] && return 0
		sleep 0.1
	done
	fail "$1 is '$v', not $2, after ${3:-10} s"
	return 1
}

# run_rld_fg ARGS...: xdp-rld in $DST in the foreground (bounded), its
# output appended to the log; the exit status is 124 when it kept running
run_rld_fg() {
	NOTIFY_SOCKET=${NOTIFY:-} timeout 10 nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" "$@" >>"$LOG" 2>&1
}

# Item 4: an interface another XDP program holds: --check says so, and the
# start fails with the cause and no READY, creating nothing.
test_start_refused_when_held() {
	lab_up || return
	local id out rc sock="$TMPD/notify.sock" got="$TMPD/notify.txt"
	id=$(foreign_on d0) || return
	write_conf "$CONF" "interface d0" "metrics 127.0.0.1:9437" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	out=$(in_dst "$RLD_BIN" --check --pin-dir "$PIN" --config "$CONF" 2>&1)
	rc=$?
	check_eq "--check exit" $rc 1
	check_match "--check says so" "$out" \
		"^$CONF:1:1: interface d0: another XDP program \(id $id, name xdp_pass_all, native mode\) is attached: the daemon would not start"
	[[ ! -e "$PIN" ]] || fail "--check created $PIN"

	: >"$got"
	notify_listener "$sock" "$got" || return
	NOTIFY=$sock run_rld_fg --config "$CONF"
	rc=$?
	check_eq "start exit" $rc 1
	check_match "the cause, logged" "$(cat "$LOG")" \
		"interface d0: another XDP program \(id $id, name xdp_pass_all, native mode\) is attached; xdp-rl never replaces what it did not attach: not starting"
	check_eq "no READY" "$(grep -c READY=1 "$got")" 0
	[[ ! -e "$PIN" ]] || fail "a refused start left $PIN"
	check_eq "the other program untouched" "$(in_dst ip -j link show d0 | jq -r '.[0].xdp.prog.id')" "$id"

	# --iface is held to the same
	: >"$LOG"
	write_conf "$CONF" "metrics off" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	run_rld_fg --config "$CONF" --iface d0
	check_eq "--iface: start exit" $? 1
	check_match "--iface: the cause" "$(cat "$LOG")" "^.*--iface d0: interface d0: another XDP program \(id $id"
	[[ ! -e "$PIN" ]] || fail "a refused start (--iface) left $PIN"
}

# Item 4: an interface that exists but refuses the attach for another
# reason (no native XDP on a bridge): the start fails after trying, and
# leaves nothing attached or pinned.
test_start_fails_when_attach_fails() {
	lab_up || return
	ip -n "$DST" link add brx type bridge && ip -n "$DST" link set brx up || { fail "cannot add brx"; return; }
	write_conf "$CONF" "interface d0" "interface brx mode native" "metrics off" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	check_eq "--check: valid (nothing holds brx)" "$(in_dst "$RLD_BIN" --check --pin-dir "$PIN" --config "$CONF" 2>&1)" \
		"$CONF: valid, 1 rules"
	run_rld_fg --config "$CONF"
	check_eq "start exit" $? 1
	check_match "the cause" "$(cat "$LOG")" "interface brx: cannot attach to brx in native mode: Operation not supported"
	check_match "not starting" "$(cat "$LOG")" "not starting: interface\(s\) brx could not be attached"
	no_xdp_on "$DST" d0 || fail "a failed start left the program on d0"
	[[ ! -e "$PIN" ]] || fail "a failed start left $PIN"

	# with --keep-attached the failed start stops as such a stop does:
	# what it attached stays, enforcing, the watchdog disarmed
	: >"$LOG"
	run_rld_fg --config "$CONF" --keep-attached
	check_eq "--keep-attached: start exit" $? 1
	check_match "--keep-attached: d0 kept" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "--keep-attached: watchdog disarmed" "$(ctl -j status | jq .daemon.watchdog_ms)" 0
}

# Item 4, decided: an interface that does not exist (yet) is waited for, not
# a failed start; the metric per interface says 0 until it appears.
test_missing_interface_is_awaited() {
	lab_up || return
	local sock="$TMPD/notify.sock" got="$TMPD/notify.txt"
	: >"$got"
	notify_listener "$sock" "$got" || return
	write_conf "$CONF" "interface d0" "interface dz" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	NOTIFY_SOCKET=$sock start_rld "$LOG" --config "$CONF"
	wait_log "$got" "READY=1" || return
	check_match "READY says so" "$(grep -m1 READY=1 "$got")" \
		"STATUS=1 rules, 1 interface\(s\) attached, waiting for the others to appear"
	check_match "logged" "$(cat "$LOG")" "interface dz does not exist; it will be attached when it appears"
	check_eq "dz: 0" "$(metric 'xdp_rl_interface_attached{interface="dz"}')" 0
	check_eq "d0: 1" "$(metric 'xdp_rl_interface_attached{interface="d0"}')" 1
	ip -n "$DST" link add dz type veth peer name dzp && ip -n "$DST" link set dzp up &&
		ip -n "$DST" link set dz up || { fail "cannot add dz"; return; }
	wait_log "$LOG" "interface dz: attached" 3 || return
	wait_metric 'xdp_rl_interface_attached{interface="dz"}' 1 3
}

# Item 4: a reload that adds an interface another program holds is a failed
# reload, the metric per interface says 0, the log says why; once the other
# program goes, the daemon attaches within a second.
test_reload_with_held_interface() {
	lab_up && lab_up_src2 || return
	local id
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	check_eq "d0 attached" "$(metric 'xdp_rl_interface_attached{interface="d0"}')" 1
	id=$(foreign_on d1) || return
	write_conf "$CONF" "interface d0" "interface d1" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1" "rule add 198.18.5.0/24 rate 1/s burst 1 id 2"
	wait_log "$LOG" "reload failed: the rules and mode are applied, but interface\(s\) d1 could not be attached" || return
	# a running daemon has dropped CAP_SYS_ADMIN, which reading another
	# program's name by its id takes: it names the holder by id and mode
	check_match "the cause" "$(cat "$LOG")" \
		"interface d1: another XDP program is already attached to d1 \(id $id, native mode\)"
	check_eq "the rules applied" "$(ctl -j rule list | jq -c '[.[].id]')" "[1,2]"
	check_eq "counted as failed" "$(metric xdp_rl_reload_failures_total)" 1
	check_eq "not as applied" "$(metric xdp_rl_reloads_total)" 0
	check_eq "d1 not attached" "$(metric 'xdp_rl_interface_attached{interface="d1"}')" 0
	check_eq "d0 still attached" "$(metric 'xdp_rl_interface_attached{interface="d0"}')" 1
	check_eq "1 of 2" "$(metric xdp_rl_interfaces_attached)" 1
	sleep 1.5	# the repair ticks: no false cause, no repeat
	check_eq "no guessed cause" "$(grep -c 'link pin removed' "$LOG")" 0
	check_eq "said once" "$(grep -c 'interface d1: another XDP program' "$LOG")" 1
	check_eq "the other program untouched" "$(in_dst ip -j link show d1 | jq -r '.[0].xdp.prog.id')" "$id"

	in_dst "$XREF" d1 off
	wait_log "$LOG" "interface d1: attached" 3 || return
	wait_metric 'xdp_rl_interface_attached{interface="d1"}' 1 3
	check_eq "2 of 2" "$(metric xdp_rl_interfaces_attached)" 2
	check_eq "not a repair" "$(metric xdp_rl_link_repairs_total)" 0

	# the program taken off and another one attached in its place: the
	# log names it, not a removed pin
	kill -STOP "$RLD_PID"	# so that the other program comes first, every time
	rm -f "$PIN/link_d1"	# the link's last reference: XDP off
	id=$(foreign_on d1)
	kill -CONT "$RLD_PID"
	wait_log "$LOG" "interface d1: the program is no longer attached \(another XDP program \(id $id, native mode\) is attached there now\)" 3
	wait_metric 'xdp_rl_interface_attached{interface="d1"}' 0 3
	in_dst "$XREF" d1 off
}

# Item 5: the configured mode is honoured when the daemon adopts a program
# that xdp-rlctl attached in another; when that mode cannot work, the
# mismatch is reported (log, metric) and the program left as it was.
test_mode_on_adoption() {
	lab_up || return
	ctl attach dev d0 mode native >/dev/null 2>&1 || { fail "attach native"; return; }
	write_conf "$CONF" "interface d0 mode generic" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	check_match "said" "$(cat "$LOG")" \
		"interface d0: the program was attached in native mode \(by xdp-rlctl attach\?\), the configuration says generic: attached again in generic mode"
	check_eq "generic now" "$(ctl -j status | jq -r '.interfaces[0].xdp_mode')" generic
	check_match "the kernel agrees" "$(ip -n "$DST" link show d0)" "xdpgeneric"
	check_eq "no mismatch" "$(metric 'xdp_rl_interface_mode_mismatch{interface="d0"}')" 0
	flood 198.18.0.1 198.18.0.254 20 >/dev/null
	check_eq "limited in generic mode" "$(rule_stat 1 passed_packets)" 5

	# a reload that changes the mode re-attaches
	write_conf "$CONF" "interface d0 mode native" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	wait_log "$LOG" "attached in generic mode .*, the configuration says native: attached again in native mode" || return
	check_eq "native now" "$(ctl -j status | jq -r '.interfaces[0].xdp_mode')" native
	flood 198.18.0.1 198.18.0.254 20 >/dev/null
	check_eq "the same bucket" "$(rule_stat 1 passed_packets)" 5

	# a mode that cannot work there: reported, left in the mode it had
	ip -n "$DST" link add brx type bridge && ip -n "$DST" link set brx up || { fail "cannot add brx"; return; }
	ctl attach dev brx mode generic >/dev/null 2>&1 || { fail "attach brx generic"; return; }
	write_conf "$CONF" "interface d0 mode native" "interface brx mode native" "heartbeat 100" "watchdog 500" \
		"metrics 127.0.0.1:9437" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	wait_log "$LOG" "interface brx: attached in generic mode, but the configuration says native, and attaching in native mode failed \(.*Operation not supported\): left in generic mode" || return
	check_eq "mismatch exported" "$(metric 'xdp_rl_interface_mode_mismatch{interface="brx"}')" 1
	check_eq "still attached" "$(metric 'xdp_rl_interface_attached{interface="brx"}')" 1
	sleep 1.5
	check_eq "not retried every second" "$(grep -c 'interface brx: attached in generic mode, but' "$LOG")" 1
}

# Item 5: xdp-rlctl detach of an interface the daemon serves says that the
# daemon would attach it again, and how to stop it, and changes nothing.
test_detach_of_served_interface() {
	lab_up && lab_up_src2 || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$LOG" --config "$CONF" --iface d1 --keep-attached
	wait_log "$LOG" "running" || return
	local out rc dev
	for dev in d0 d1; do
		out=$(ctl detach dev $dev 2>&1)
		rc=$?
		check_eq "$dev: exit" $rc 1
		check_match "$dev: says who serves it" "$out" \
			"^Error: $dev is served by xdp-rld \(pid $RLD_PID\), which would attach it again within a second: not detached"
		check_match "$dev: and how to stop it" "$out" \
			"remove it from the daemon's configuration \('interface $dev' or --iface\) and reload .*stop the daemon \(systemctl stop xdp-rld\), then 'xdp-rlctl detach dev $dev purge'"
		check_match "$dev: still attached" "$(ip -n "$DST" link show $dev)" "xdp"
	done
	out=$(ctl -j detach dev d0 purge 2>&1)
	check_match "-j, purge: refused too" "$out" '^\{"error":"d0 is served by xdp-rld'
	# a reload names the served interfaces again: the names kept in place
	# (never removed and made again, a window where detach would go on)
	local ino
	ino=$(stat -c %i "$PIN/daemon/if_d0")
	kill -HUP "$RLD_PID"
	wait_log "$LOG" "reload: [0-9]+ rule" || return
	check_eq "a reload: d0's name kept in place" "$(stat -c %i "$PIN/daemon/if_d0" 2>&1)" "$ino"
	sleep 1.2
	check_eq "nothing to repair" "$(metric xdp_rl_link_repairs_total)" 0
	# an interface the daemon does not serve is detached as before
	ip -n "$DST" link add d2 type veth peer name d2p && ip -n "$DST" link set d2 up &&
		ip -n "$DST" link set d2p up || { fail "cannot add d2"; return; }
	ctl attach dev d2 >/dev/null 2>&1
	check_eq "not served: detached" "$(ctl detach dev d2 2>&1)" "detached from d2"

	# the pins removed and restored: the names come back with them
	rm -rf "$PIN"
	wait_log "$LOG" "restored the pins" 5 || return
	out=$(ctl detach dev d0 2>&1)
	check_match "after a restore: still refused" "$out" "^Error: d0 is served by xdp-rld \(pid $RLD_PID\)"

	# a daemon killed with -9 serves nothing: detach and purge work
	kill -9 "$RLD_PID"
	wait "$RLD_PID" 2>/dev/null
	check_eq "after kill -9: detached" "$(ctl detach dev d1 2>&1)" "detached from d1"
	out=$(ctl detach dev d0 purge 2>&1)
	check_eq "after kill -9: purge exit" $? 0
	check_match "after kill -9: purged" "$out" "removed the pins under $PIN"
	[[ ! -e "$PIN" ]] || fail "pins left after kill -9 and purge: $(ls -R "$PIN" | tr '\n' ' ')"
}

# Generic mode with GRO on: a packet rule counts an aggregate's segments
# only as a lower bound; the daemon says so once per interface, not with GRO
# off, not without a packet rule
test_generic_gro_warned() {
	lab_up || return
	in_dst ethtool -K d0 gro off || { fail "ethtool -K d0 gro off"; return; }
	write_conf "$CONF" "interface d0 mode generic" "rule add 198.18.0.0/24 rate 10mbit burst 100000 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	in_dst ethtool -K d0 gro on || { fail "ethtool -K d0 gro on"; return; }
	reload_n 1 || return
	check_eq "a byte rule only: no warning" "$(grep -c "GRO on" "$LOG")" 0
	in_dst ethtool -K d0 gro off
	write_conf "$CONF" "interface d0 mode generic" "rule add 198.18.0.0/24 rate 100/s burst 20 id 1"
	reload_n 2 || return
	check_eq "GRO off: no warning" "$(grep -c "GRO on" "$LOG")" 0
	in_dst ethtool -K d0 gro on
	kill -HUP "$RLD_PID"
	wait_log "$LOG" "interface d0: generic mode with GRO on: packet rules count a merged frame's segments only as a lower bound" || return
	check_match "the advice" "$(grep "GRO on" "$LOG")" "use native mode, or 'ethtool -K d0 gro off'"
	reload_n 4 || return
	check_eq "said once" "$(grep -c "GRO on" "$LOG")" 1
}

# reload_n N: SIGHUP, until the Nth reload is logged (the interfaces are
# served after that line: a second more)
reload_n() {
	local i
	kill -HUP "$RLD_PID"
	for ((i = 0; i < 100; i++)); do
		(($(grep -cE "^.*reload: [0-9]+ rules" "$LOG") >= $1)) && { sleep 1; return 0; }
		sleep 0.1
	done
	fail "no reload $1 logged"
	return 1
}

# Item 6: `systemctl stop` (SIGTERM to the unit's ExecStart) leaves the
# limiter attached and enforcing; `ip link ... xdp off` cannot remove it;
# the way out the unit file documents does, leaving nothing attached or
# pinned.
test_stop_and_the_way_out() {
	lab_up && lab_up_src2 || return
	local args way cmd dev out
	args=$(sed -n 's|^ExecStart=@SBINDIR@/xdp-rld *||p' "$UNIT")
	check_eq "the unit's options" "$args" "--keep-attached"
	way=$(sed -n 's|^#[[:space:]]*way out: *||p' "$UNIT")
	[[ -n "$way" ]] || { fail "the unit file documents no way out ('# way out: ...')"; return; }
	check_match "the way out" "$way" "^systemctl stop xdp-rld && xdp-rlctl detach dev IFACE purge$"
	cat "$TOP/README.md" "$TOP"/docs/*.md | grep -qF "$way" || fail "the docs do not give the unit's way out: $way"
	grep -qF "$(sed 's/-/\\-/g' <<<"$way")" "$TOP/man/xdp-rld.8" ||
		fail "xdp-rld(8) does not give the unit's way out: $way"

	write_conf "$CONF" "interface d0" "interface d1" "heartbeat 100" "watchdog 500" "metrics off" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	# shellcheck disable=SC2086
	start_rld "$LOG" --config "$CONF" $args
	wait_log "$LOG" "running" || return
	kill -TERM "$RLD_PID"	# systemctl stop
	wait "$RLD_PID"
	check_eq "clean exit" $? 0
	for dev in d0 d1; do
		check_match "stop: still on $dev" "$(ip -n "$DST" link show $dev)" "xdp"
	done
	flood 198.18.0.1 198.18.0.254 20 >/dev/null
	check_eq "stop: still enforcing" "$(rule_stat 1 passed_packets)" 5
	check_eq "stop: watchdog disarmed" "$(ctl -j status | jq .daemon.watchdog_ms)" 0
	out=$(ip -n "$DST" link set dev d0 xdp off 2>&1) &&
		fail "ip link set dev d0 xdp off removed a bpf_link: the documentation says it cannot"
	check_match "xdp off: what it says (the README quotes it)" "$out" "Can't replace active BPF XDP link"
	check_match "xdp off: no effect" "$(ip -n "$DST" link show d0)" "xdp"

	# the documented way: each interface status lists, purge with the last
	for dev in $(ctl -j status | jq -r '.interfaces[].ifname'); do
		cmd=${way#*&& xdp-rlctl }
		cmd=${cmd//IFACE/$dev}
		# shellcheck disable=SC2086
		ctl $cmd >/dev/null || fail "'xdp-rlctl $cmd' failed"
	done
	no_xdp_on "$DST" d0 || fail "the way out left the program on d0"
	no_xdp_on "$DST" d1 || fail "the way out left the program on d1"
	[[ ! -e "$PIN" ]] || fail "the way out left pins: $(ls "$PIN" | tr '\n' ' ')"
}

run_test test_start_refused_when_held
run_test test_start_fails_when_attach_fails
run_test test_missing_interface_is_awaited
run_test test_reload_with_held_interface
run_test test_mode_on_adoption
run_test test_detach_of_served_interface
run_test test_stop_and_the_way_out
run_test test_generic_gro_warned
summary

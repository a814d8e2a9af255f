#!/usr/bin/env bash
# End-to-end: hitless upgrade (README, "Upgrading"). A second build of this
# tree, with another VERSION, takes over a running instance under a flood:
# the links get its program atomically, buckets and counters carry on, no
# packet goes uncounted. A build with another map layout version, or with a
# map that differs although the version agrees, is refused before it
# touches anything.
source "$(dirname "$0")/../lib/e2e.sh"

NEW_VERSION="9.9.9-upgrade-test"

# build_variant DIR VERSION [SED-SCRIPT]: xdp-rlctl of this tree in DIR,
# built with VERSION; with SED-SCRIPT, of a copy of the tree edited by it
# (include/xdp_rl_common.h) in DIR/src. Prints the binary's path.
build_variant() {
	local dir=$1 version=$2 src=$TOP
	mkdir -p "$dir"
	if [[ -n "${3:-}" ]]; then
		src=$dir/src
		mkdir -p "$src"
		(cd "$TOP" && tar --exclude=./.output --exclude=./.git -cf - .) | tar -C "$src" -xf - || return 1
		sed -i "$3" "$src/include/xdp_rl_common.h" || return 1
	fi
	make -s -C "$src" OUTPUT="$dir/out" VERSION="$version" "$dir/out/xdp-rlctl" >"$dir/build.log" 2>&1 ||
		{ echo "build of $version failed: $(tail -n 5 "$dir/build.log")" >&2; return 1; }
	echo "$dir/out/xdp-rlctl"
}

# nctl BIN ARGS...: another build's xdp-rlctl on the lab's pins
nctl() {
	local bin=$1
	shift
	nsenter --net="/run/netns/$DST" "$bin" --pin-dir "$PIN" "$@"
}

# the pins, with their inodes: what "untouched" means for the directory
pins_listing() {
	ls -i "$PIN" | sort
}

test_upgrade_under_flood() {
	local new
	new=$(build_variant "$TMPD/new" "$NEW_VERSION") || { fail "cannot build the new version"; return; }
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 100/s burst 20 id 1 >/dev/null
	ctl rule add 198.18.0.128/25 rate 1/h burst 5 id 2 >/dev/null
	local old_build old_prog
	old_build=$("$CTL_BIN" -j -V | jq -r .version)
	check_eq "status: the running build" "$(ctl -j status | jq -r .build)" "$old_build"
	check_match "status: the layout" "$(ctl status)" "build: +$old_build \(map layout [0-9]+\)"
	old_prog=$(ctl -j status | jq .prog_id)
	# a key limited before the upgrade: 5 of 10 through
	flood 198.18.0.129 198.18.0.254 10 >/dev/null
	check_eq "slow key limited before" "$(rule_stat 2 passed_packets)" 5

	local t0=$SECONDS p=() out rc
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.2 -d 198.18.0.254 -r 50 -n 150 -t 10 >/dev/null & p+=($!)
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.3 -d 198.18.0.254 -r 50 -n 150 -t 10 >/dev/null & p+=($!)
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -r 20000 -n 60000 -t 10 >/dev/null & p+=($!)
	sleep 1
	out=$(nctl "$new" upgrade 2>&1)
	rc=$?
	wait "${p[@]}"
	local secs=$((SECONDS - t0 + 1))
	check_eq "upgrade: exit" $rc 0
	check_match "upgrade: says so" "$out" "^upgraded build $old_build \(program $old_prog\) to $NEW_VERSION \(program [0-9]+\), layout [0-9]+: 1 link\(s\) moved"

	local st new_prog
	st=$(nctl "$new" -j status)
	new_prog=$(jq .prog_id <<<"$st")
	check_eq "status: the new build runs" "$(jq -r .build <<<"$st")" "$NEW_VERSION"
	[[ $new_prog != "$old_prog" ]] || fail "the program was not replaced ($new_prog)"
	check_eq "the link runs the new program" "$(jq '.interfaces[0].prog_id' <<<"$st")" "$new_prog"
	check_eq "the old build's status sees the new build" "$(ctl -j status | jq -r .build)" "$NEW_VERSION"
	check_eq "rules kept" "$(ctl -j rule list | jq length)" 2

	# polite keys lost nothing, the flooding key stayed limited, and every
	# packet of the three floods was counted by one program or the other
	check_eq "polite .2 never dropped" "$(ctl -j show 198.18.0.2 | jq .dropped_packets)" 0
	check_eq "polite .3 never dropped" "$(ctl -j show 198.18.0.3 | jq .dropped_packets)" 0
	local passed dropped
	passed=$(rule_stat 1 passed_packets)
	dropped=$(rule_stat 1 dropped_packets)
	[[ $passed =~ ^[0-9]+$ && $dropped =~ ^[0-9]+$ ]] || { fail "no counters"; return; }
	check_eq "every packet counted across the swap" "$((passed + dropped))" 60300
	local flood_passed=$((passed - 300))
	((flood_passed <= 20 + 100 * secs)) || fail "the flood got $flood_passed through in ${secs}s (limit $((20 + 100 * secs)))"
	# the bucket of the slow key came along: still nothing through
	flood 198.18.0.129 198.18.0.254 10 >/dev/null
	check_eq "slow key still limited after" "$(rule_stat 2 passed_packets)" 5
	check_eq "its drops continue" "$(rule_stat 2 dropped_packets)" 15
	# and the new build is the one a re-attach uses
	ctl detach dev d0 >/dev/null
	ctl attach dev d0 >/dev/null
	check_eq "re-attach: the new program" "$(ctl -j status | jq '.interfaces[0].prog_id')" "$new_prog"

	# an XDP-only instance stays XDP-only: the new build loaded no tc program
	[[ ! -e $PIN/xrl_tc_prog ]] || fail "the upgrade of an XDP-only instance pinned a tc program"
	check_eq "XDP-only upgraded: no tc program loaded" "$(inst_progs xrl_tc)" 0
	# its first tc hook loads the running build's: this (the older) build
	# refuses to load its own beside it, and changes nothing
	ip -n "$DST" link add d1 type veth peer name d1p && ip -n "$DST" link set d1 up &&
		ip -n "$DST" link set d1p up || { fail "cannot add d1"; return; }
	local before
	before=$(pins_listing)
	out=$(ctl attach dev d1 hook tc 2>&1)
	check_eq "another build's tc hook: refused" "$?" 1
	check_match "says why and the way" "$out" \
		"^Error: the program under .* is build $NEW_VERSION, this is build $old_build: .*'xdp-rlctl upgrade' with this build first"
	check_eq "refused: pins untouched" "$(pins_listing)" "$before"
	check_eq "refused: no tc program loaded" "$(inst_progs xrl_tc)" 0
	check_eq "the new build's tc hook" "$(nctl "$new" attach dev d1 hook tc)" "attached to d1 (tc ingress)"
	check_eq "its tc program loaded" "$(inst_progs xrl_tc)" 1
	check_eq "d0 still at XDP, the new program" "$(ctl -j status | jq '.interfaces[] | select(.ifname == "d0") | .prog_id')" "$new_prog"
}

# the refusal leaves everything as it was: pins, program, links, buckets
check_untouched() {	# WHAT LISTING PROG
	check_eq "$1: pins untouched" "$(pins_listing)" "$2"
	check_eq "$1: program kept" "$(ctl -j status | jq .prog_id)" "$3"
	check_eq "$1: link kept" "$(ctl -j status | jq '.interfaces[0].prog_id')" "$3"
	check_match "$1: still attached" "$(ip -n "$DST" link show d0)" "xdp"
}

test_layout_mismatch_refused() {
	local other
	other=$(build_variant "$TMPD/layout" "9.9.9-other-layout" \
		's/^#define XRL_LAYOUT_VERSION\t\([0-9]*\)$/#define XRL_LAYOUT_VERSION\t99/') ||
		{ fail "cannot build the other layout"; return; }
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 1/h burst 5 id 1 >/dev/null
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	local before prog out rc
	before=$(pins_listing)
	prog=$(ctl -j status | jq .prog_id)
	out=$(nctl "$other" upgrade 2>&1)
	rc=$?
	check_eq "upgrade: exit" $rc 1
	check_match "says why" "$out" "^Error: the running program under $PIN is build .* with map layout [0-9]+; this build \(9.9.9-other-layout\) has layout 99: its maps cannot be reused \(nothing was changed\)"
	check_untouched "upgrade" "$before" "$prog"
	# nor does any other command of that build use the maps
	out=$(nctl "$other" rule add 198.18.1.0/24 rate 1/s burst 1 2>&1)
	check_match "rule add refused" "$out" "layout 99: its maps cannot be reused"
	out=$(nctl "$other" status 2>&1)
	check_match "status refused" "$out" "layout 99: its maps cannot be reused"
	check_untouched "other commands" "$before" "$prog"
	check_eq "rules kept" "$(ctl -j rule list | jq length)" 1
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "the bucket kept" "$(rule_stat 1 passed_packets)" 5
}

# A map that changed while the version stayed (a forgotten bump): the
# comparison of every pinned map with this build's catches it
test_map_mismatch_refused() {
	local other
	other=$(build_variant "$TMPD/slots" "9.9.9-more-slots" \
		's/^#define XRL_IF_SLOTS\t256$/#define XRL_IF_SLOTS\t512/') ||
		{ fail "cannot build the changed map"; return; }
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	local before prog out rc
	before=$(pins_listing)
	prog=$(ctl -j status | jq .prog_id)
	out=$(nctl "$other" upgrade 2>&1)
	rc=$?
	check_eq "upgrade: exit" $rc 1
	check_match "names the map" "$out" "^Error: pinned map $PIN/xrl_if_stats differs from this build's \(256 entries, this build 512\)"
	check_untouched "upgrade" "$before" "$prog"
}

# A running daemon of the older build adopts the upgraded program: its pin
# check stays green and it re-attaches the new program after a link event
test_upgrade_under_daemon() {
	local new log="$TMPD/rld.log" conf="$TMPD/rules.conf"
	new=$(build_variant "$TMPD/new" "$NEW_VERSION") || { fail "cannot build the new version"; return; }
	lab_up || return
	: >"$log"
	write_conf "$conf" "interface d0" "metrics 127.0.0.1:9437" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	nctl "$new" upgrade >/dev/null || { fail "upgrade under the daemon"; return; }
	local new_prog
	new_prog=$(nctl "$new" -j status | jq .prog_id)
	wait_log "$log" "was upgraded: re-attaching uses the new one" || return
	sleep 1.2	# a pin check after the adoption
	check_match "pins ok" "$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)" $'\nxdp_rl_pins_ok 1\n'
	! grep -q "pins under .* were removed" "$log" || fail "the daemon took the upgrade for removed pins"
	ip -n "$DST" link del d0	# takes s0 with it
	wait_log "$log" "interface d0 disappeared" || return
	ip -n "$SRC" link add s0 type veth peer name d0 netns "$DST" &&
		ip -n "$DST" link set d0 address $DST_MAC up && ip -n "$SRC" link set s0 address $SRC_MAC up ||
		{ fail "cannot re-create d0"; return; }
	wait_log "$log" "interface d0 appeared" || return
	local i
	for ((i = 0; i < 40; i++)); do
		[[ "$(ctl -j status | jq '.interfaces[0].prog_id')" == "$new_prog" ]] && break
		sleep 0.05
	done
	check_eq "re-attached: the new program" "$(ctl -j status | jq '.interfaces[0].prog_id')" "$new_prog"
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "the bucket carried on" "$(rule_stat 1 passed_packets)" 5
}

# ---- an upgrade killed at each of its steps ----
# The real upgrade stops at STEP through its test hook (XRL_TEST_UPGRADE_STOP:
# it writes the step into a FIFO and waits there) and is SIGKILLed there.

# new_build: the new version's xdp-rlctl, built once per run
new_build() {
	build_variant "$TMPD/new" "$NEW_VERSION"
}

# kill_upgrade_at STEP BIN: BIN's upgrade, killed at STEP
kill_upgrade_at() {
	local step=$1 bin=$2 fifo=$TMPD/stop.fifo got pid
	rm -f "$fifo"
	mkfifo "$fifo" || { fail "mkfifo"; return 1; }
	(XRL_TEST_UPGRADE_STOP="$step:$fifo" exec nsenter --net="/run/netns/$DST" "$bin" --pin-dir "$PIN" upgrade \
		>"$TMPD/killed.out" 2>&1) &
	pid=$!
	got=$(timeout 30 head -n 1 "$fifo")
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$fifo"
	[[ $got == "$step" ]] || { fail "the upgrade did not stop at '$step' (got '$got': $(cat "$TMPD/killed.out"))"; return 1; }
}

# the pinned program's id, and each link's
pinned_prog() { ctl -j status | jq .prog_id; }
link_progs() { ctl -j status | jq -r '[.interfaces[].prog_id] | map(tostring) | join(" ")'; }

# two interfaces attached (d0, d1), a limited key whose bucket is half
# spent: 5 of 10 through
killed_lab_up() {
	lab_up || return 1
	lab_up_src2 || { fail "cannot build the second link"; return 1; }
	ctl attach dev d0 >/dev/null 2>&1 && ctl attach dev d1 >/dev/null 2>&1 || { fail "attach"; return 1; }
	ctl rule add 198.18.0.0/24 rate 1/h burst 5 id 1 >/dev/null || { fail "rule add"; return 1; }
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "limited before" "$(rule_stat 1 passed_packets)" 5
}

# the state a kill at STEP leaves, as the upgrade's steps say it must be
check_killed_state() {	# STEP OLD_PROG
	local pinned links
	pinned=$(pinned_prog)
	links=$(link_progs)
	case $1 in
	loaded)
		check_eq "killed at loaded: links on the old program" "$links" "$2 $2"
		[[ -e $PIN/xdp_rl_prog_new ]] || fail "killed at loaded: no xdp_rl_prog_new" ;;
	link)
		[[ $links == "$2 "* && $links != "$2 $2" ]] ||
			[[ $links == *" $2" && $links != "$2 $2" ]] || fail "killed at link: links '$links', expected one moved" ;;
	links)
		check_eq "killed at links: the pin still the old program" "$pinned" "$2"
		[[ $links != *"$2"* ]] || fail "killed at links: a link on the old program ($links)" ;;
	renamed)
		[[ $pinned != "$2" ]] || fail "killed at renamed: the pin is still the old program"
		[[ -e $PIN/xrl_info_new ]] || fail "killed at renamed: no xrl_info_new" ;;
	esac
}

# after the recovery: one program everywhere, the new build's, no leftover,
# the rule and the bucket kept, traffic metered
check_recovered() {	# WHAT OLD_PROG
	local pinned st
	st=$(nctl "$NEW" -j status)
	pinned=$(jq .prog_id <<<"$st")
	[[ $pinned != "$2" ]] || fail "$1: still the old program"
	check_eq "$1: every link on the pinned program" "$(link_progs)" "$pinned $pinned"
	check_eq "$1: the new build" "$(jq -r .build <<<"$st")" "$NEW_VERSION"
	check_eq "$1: no upgrade pins left" "$(ls "$PIN" | grep -c _new)" 0
	check_eq "$1: rules kept" "$(ctl -j rule list | jq length)" 1
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "$1: the bucket kept (nothing more through)" "$(rule_stat 1 passed_packets)" 5
	check_eq "$1: still metered" "$(rule_stat 1 dropped_packets)" 15
}

# killed at STEP, then the next upgrade finishes it and upgrades again
upgrade_killed_at() {
	local old out rc
	NEW=$(new_build) || { fail "cannot build the new version"; return; }
	killed_lab_up || return
	old=$(pinned_prog)
	kill_upgrade_at "$1" "$NEW" || return
	check_killed_state "$1" "$old"
	out=$(nctl "$NEW" upgrade 2>&1)
	rc=$?
	check_eq "killed at $1, the next upgrade: exit" $rc 0
	[[ $1 == loaded ]] || check_match "killed at $1, the next upgrade: says it finished the other" "$out" \
		"finished an interrupted upgrade"
	check_recovered "killed at $1, upgraded again" "$old"
}
test_upgrade_killed_at_loaded() { upgrade_killed_at loaded; }
test_upgrade_killed_at_link() { upgrade_killed_at link; }
test_upgrade_killed_at_links() { upgrade_killed_at links; }
test_upgrade_killed_at_renamed() { upgrade_killed_at renamed; }

# killed between the link updates and the rename, under a daemon: the
# daemon's restart finishes it, and a later upgrade is not refused
test_upgrade_killed_daemon_restart() {
	local old log="$TMPD/rld.log" conf="$TMPD/rules.conf" out rc
	NEW=$(new_build) || { fail "cannot build the new version"; return; }
	lab_up || return
	lab_up_src2 || { fail "cannot build the second link"; return; }
	: >"$log"
	write_conf "$conf" "interface d0" "interface d1" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$log" --config "$conf" --keep-attached
	wait_log "$log" "running" || return
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "limited before" "$(rule_stat 1 passed_packets)" 5
	old=$(pinned_prog)
	kill_upgrade_at links "$NEW" || return
	check_killed_state links "$old"
	kill -TERM "$RLD_PID"
	wait "$RLD_PID" 2>/dev/null
	BG_PIDS=()
	: >"$log"
	start_rld "$log" --config "$conf" --keep-attached
	wait_log "$log" "finished an interrupted upgrade under $PIN: program [0-9]+ pinned" || return
	wait_log "$log" "running" || return
	check_recovered "daemon restart" "$old"
	out=$(nctl "$NEW" upgrade 2>&1)
	rc=$?
	check_eq "a later upgrade: exit" $rc 0
	check_match "a later upgrade" "$out" "^upgraded build $NEW_VERSION"
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "still limited after the later upgrade" "$(rule_stat 1 passed_packets)" 5
}

# killed there with one link: attaching another interface finishes it
# first, so both run the same (new) program
test_upgrade_killed_attach() {
	local old
	NEW=$(new_build) || { fail "cannot build the new version"; return; }
	lab_up || return
	lab_up_src2 || { fail "cannot build the second link"; return; }
	ctl attach dev d0 >/dev/null 2>&1 || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 1/h burst 5 id 1 >/dev/null
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	old=$(pinned_prog)
	kill_upgrade_at links "$NEW" || return
	[[ $(link_progs) != "$old" ]] || fail "killed at links: the link is on the old program"
	check_match "attach finishes it" "$(ctl attach dev d1 2>&1)" "finished an interrupted upgrade"
	check_recovered "attach" "$old"
}

# The hook's path is not a FIFO: neither created nor written (the hook runs
# as root), a warning, and the upgrade goes on without stopping
test_upgrade_hook_not_a_fifo() {
	local out rc
	NEW=$(new_build) || { fail "cannot build the new version"; return; }
	lab_up || return
	ctl attach dev d0 >/dev/null 2>&1 || { fail "attach"; return; }
	rm -f "$TMPD/absent"
	out=$(XRL_TEST_UPGRADE_STOP="loaded:$TMPD/absent" nctl "$NEW" upgrade 2>&1)
	rc=$?
	check_eq "absent: exit" $rc 0
	check_match "absent: a warning" "$out" "XRL_TEST_UPGRADE_STOP: $TMPD/absent is not a FIFO: the hook is ignored"
	[[ ! -e $TMPD/absent ]] || fail "the hook created $TMPD/absent"
	echo keep >"$TMPD/plain"
	out=$(XRL_TEST_UPGRADE_STOP="loaded:$TMPD/plain" nctl "$NEW" upgrade 2>&1)
	rc=$?
	check_eq "a regular file: exit" $rc 0
	check_match "a regular file: a warning" "$out" "$TMPD/plain is not a FIFO"
	check_eq "a regular file: kept" "$(cat "$TMPD/plain")" keep
	rm -f "$TMPD/plain"
}

run_test test_upgrade_under_flood
run_test test_upgrade_under_daemon
run_test test_layout_mismatch_refused
run_test test_map_mismatch_refused
run_test test_upgrade_killed_at_loaded
run_test test_upgrade_killed_at_link
run_test test_upgrade_killed_at_links
run_test test_upgrade_killed_at_renamed
run_test test_upgrade_killed_daemon_restart
run_test test_upgrade_killed_attach
run_test test_upgrade_hook_not_a_fifo
summary

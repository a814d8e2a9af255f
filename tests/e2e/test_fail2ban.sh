#!/usr/bin/env bash
# End-to-end: the fail2ban action (packaging/fail2ban/action.d/xdp-rl.conf;
# docs/bans.md, "fail2ban") with Debian's real fail2ban-server, run by the
# test with a configuration directory, socket, pid file and database of its
# own (never the system's /etc/fail2ban jails): a jail on a log file the
# test writes, a filter of its own. An address that fails maxretry times is
# dropped by xdp-rl in the lab, and passes again once fail2ban unbans it.
source "$(dirname "$0")/../lib/e2e.sh"

F2B="$TMPD/f2b"
AUTHLOG="$TMPD/auth.log"
ACTION="$TOP/packaging/fail2ban/action.d/xdp-rl.conf"

have_f2b() {
	command -v fail2ban-server >/dev/null && command -v fail2ban-client >/dev/null
}

# the jail's configuration: the action as packaged, its command pointed at
# this lab's pins by a .local beside it (as an operator would)
f2b_conf() {	# BANTIME
	rm -rf "$F2B"
	mkdir -p "$F2B/conf/filter.d" "$F2B/conf/action.d"
	cp "$ACTION" "$F2B/conf/action.d/xdp-rl.conf"
	printf '[Init]\nxdprlctl = %s --pin-dir %s\n' "$CTL_BIN" "$PIN" >"$F2B/conf/action.d/xdp-rl.local"
	cat >"$F2B/conf/fail2ban.conf" <<EOF
[Definition]
loglevel = INFO
logtarget = $F2B/f2b.log
socket = $F2B/f2b.sock
pidfile = $F2B/f2b.pid
dbfile = $F2B/f2b.sqlite3
dbpurgeage = 1d
EOF
	printf '[Definition]\nfailregex = ^auth failure from <HOST>$\ndatepattern = {NONE}\n' \
		>"$F2B/conf/filter.d/xrl-test.conf"
	cat >"$F2B/conf/jail.conf" <<EOF
[DEFAULT]
backend = polling
[xrl-test]
enabled = true
filter = xrl-test
logpath = $AUTHLOG
maxretry = 3
findtime = 60
bantime = $1
action = xdp-rl
EOF
	: >"$AUTHLOG"
}

f2b_start() {	# BANTIME
	f2b_conf "$1"
	# in the foreground, in the background: $! is the server (nsenter
	# execs it), killed on the way out
	nsenter --net="/run/netns/$DST" fail2ban-server -f -x -c "$F2B/conf" -s "$F2B/f2b.sock" -p "$F2B/f2b.pid" \
		</dev/null >>"$F2B/server.out" 2>&1 &
	BG_PIDS+=($!)
	local i
	for ((i = 0; i < 100; i++)); do
		f2b status xrl-test 2>/dev/null | grep -q "Currently banned" && return 0
		sleep 0.1
	done
	fail "fail2ban-server did not start: $(tail -n 3 "$F2B/f2b.log" "$F2B/server.out" | tr '\n' '|')"
	return 1
}

f2b() { fail2ban-client -s "$F2B/f2b.sock" "$@"; }

fail_from() {	# ADDR N: N failures in the log
	local i
	for ((i = 0; i < $2; i++)); do
		echo "auth failure from $1" >>"$AUTHLOG"
	done
}

ban_of() {	# PREFIX FIELD: of its live ban ("" when none)
	ctl -j ban list | jq -r --arg p "$1" --arg f "$2" '.[] | select(.prefix == $p) | .[$f]'
}

wait_banned() {	# PREFIX WHO|"" [SECONDS]
	local i
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		[[ "$(ban_of "$1" by)" == "$2" ]] && return 0
		sleep 0.1
	done
	fail "$1: banned by '$(ban_of "$1" by)', expected '$2'; fail2ban says: $(grep -E 'Ban|ERROR' "$F2B/f2b.log" | tail -n 3 | tr '\n' '|')"
	return 1
}

# attached, one rule that lets the lab's IPv4 sources through and counts them
attach() {
	if ! ctl attach dev d0 >/dev/null 2>&1 || ! ctl rule add 198.18.0.0/24 rate 1000/s burst 1000 id 1 >/dev/null; then
		fail "attach"
		return 1
	fi
}
passed() { rule_stat 1 passed_packets; }

test_fail2ban_ban_and_unban() {
	have_f2b || { skip "fail2ban is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	attach || return
	f2b_start 600 || return
	fail_from 198.18.0.5 2
	sleep 1.5
	check_eq "under maxretry: not banned" "$(ban_of 198.18.0.5/32 by)" ""
	fail_from 198.18.0.5 1
	wait_banned 198.18.0.5/32 fail2ban 10 || return
	check_eq "reason names the jail" "$(ban_of 198.18.0.5/32 reason)" "fail2ban xrl-test"
	local left
	left=$(($(ban_of 198.18.0.5/32 left_ms) / 1000))
	((left > 590 && left <= 600)) || fail "time left $left s, not the jail's bantime"
	# dropped in the lab, others pass
	flood 198.18.0.5 198.18.0.254 100 >/dev/null
	check_eq "dropped" "$(ban_of 198.18.0.5/32 dropped_packets)" 100
	flood 198.18.0.4 198.18.0.254 40 >/dev/null
	check_eq "others pass" "$(passed)" 40
	# fail2ban unbans: it passes again
	f2b set xrl-test unbanip 198.18.0.5 >/dev/null
	wait_banned 198.18.0.5/32 "" 10 || return
	flood 198.18.0.5 198.18.0.254 30 >/dev/null
	check_eq "passes once unbanned" "$(passed)" 70
	# IPv6 too
	fail_from 2001:db8:1::5 3
	wait_banned 2001:db8:1::5/128 fail2ban 10
	f2b unban --all >/dev/null
	wait_banned 2001:db8:1::5/128 "" 10
}

# bantime over: fail2ban unbans, and xdp-rl's own expiry had ended it on
# time in the data path anyway
test_fail2ban_bantime_ends() {
	have_f2b || { skip "fail2ban is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	attach || return
	f2b_start 3 || return
	fail_from 198.18.0.6 3
	wait_banned 198.18.0.6/32 fail2ban 10 || return
	wait_banned 198.18.0.6/32 "" 10 || return
	wait_log "$F2B/f2b.log" "Unban 198.18.0.6" 10
	check_eq "no action error" "$(grep -c 'ERROR' "$F2B/f2b.log")" 0 || grep ERROR "$F2B/f2b.log" | tail -n 3 >&2
	flood 198.18.0.6 198.18.0.254 20 >/dev/null
	check_eq "passes" "$(passed)" 20
}

# an operator's ban of the same address is not lifted by fail2ban's unban
test_fail2ban_operator_ban_stays() {
	have_f2b || { skip "fail2ban is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	attach || return
	f2b_start 600 || return
	fail_from 198.18.0.7 3
	wait_banned 198.18.0.7/32 fail2ban 10 || return
	ctl ban add 198.18.0.7 reason "by hand" >/dev/null
	check_eq "the operator's now" "$(ban_of 198.18.0.7/32 by)" operator
	f2b set xrl-test unbanip 198.18.0.7 >/dev/null
	sleep 1
	check_eq "still banned" "$(ban_of 198.18.0.7/32 by)" operator
}

# the operator's ban first: fail2ban's ban keeps it (it never ends), and
# fail2ban's unban then finds no ban of its own to lift
test_fail2ban_keeps_operator_ban() {
	have_f2b || { skip "fail2ban is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	attach || return
	ctl ban add 198.18.0.7 reason "by hand" >/dev/null
	check_eq "the operator's" "$(ban_of 198.18.0.7/32 by)" operator
	f2b_start 600 || return
	fail_from 198.18.0.7 3
	wait_log "$F2B/f2b.log" "Ban 198.18.0.7" 10 || return
	sleep 0.5
	check_eq "kept by fail2ban's ban" "$(ban_of 198.18.0.7/32 by)" operator
	check_eq "its reason too" "$(ban_of 198.18.0.7/32 reason)" "by hand"
	f2b set xrl-test unbanip 198.18.0.7 >/dev/null
	sleep 1
	check_eq "still the operator's after the unban" "$(ban_of 198.18.0.7/32 by)" operator
}

run_test test_fail2ban_ban_and_unban
run_test test_fail2ban_bantime_ends
run_test test_fail2ban_operator_ban_stays
run_test test_fail2ban_keeps_operator_ban
summary

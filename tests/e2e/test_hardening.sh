#!/usr/bin/env bash
# End-to-end: fault injection, as an attacker and as a clumsy operator
# would: what stalls the daemon, what is accepted that must be refused, what
# a key reset leaves limited.
source "$(dirname "$0")/lib.sh"

LOG="$TMPD/rld.log"
CONF="$TMPD/rules.conf"

lab_up() {
	: >"$LOG"
	lab_up_veth
}

base_conf() {
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics off" "$@"
}

# A FIFO named as the Redis credentials: opening it for reading waits for a
# writer. --check, the start and a reload refuse it at once ("not a regular
# file"); the daemon's event loop never waits on it, so the next valid
# reload is applied.
test_fleet_auth_fifo() {
	lab_up || return
	local fifo="$TMPD/redis.auth" out rc
	mkfifo -m 0600 "$fifo" || { fail "mkfifo"; return; }
	base_conf "fleet redis 127.0.0.1:1" "fleet auth $fifo" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 scope fleet id 1"
	out=$(timeout -s KILL 10 "$RLD_BIN" --check --config "$CONF" 2>&1)
	rc=$?
	check_eq "--check refuses" "$rc" 1
	check_match "--check says why" "$out" "rules.conf:6:1: the Redis credentials .*redis.auth are not a regular file"

	# the start: refused before anything is attached, within a moment
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "fleet: the Redis credentials .* are not a regular file" 5 || return
	local i
	for ((i = 0; i < 50; i++)); do
		kill -0 "$RLD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$RLD_PID" 2>/dev/null && fail "the daemon still runs"
	no_xdp_on "$DST" d0 || fail "attached although the start was refused"

	# a reload to it: refused, and the loop goes on
	: >"$LOG"
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	base_conf "fleet redis 127.0.0.1:1" "fleet auth $fifo" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 scope fleet id 1"
	wait_log "$LOG" "reload refused" 5 || return
	check_match "the reason" "$(cat "$LOG")" "not a regular file"
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 5 id 1" "rule add 198.18.1.0/24 rate 1/h burst 5 id 2"
	wait_log "$LOG" "reload: 2 rules" 5 || return
	check_eq "the next reload applied" "$(ctl -j rule list | jq length)" 2
}

run_test test_fleet_auth_fifo
summary

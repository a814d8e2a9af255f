#!/usr/bin/env bash
# End-to-end: fault injection, as an attacker and as a clumsy operator
# would: what stalls the daemon, what is accepted that must be refused, what
# a key reset leaves limited.
source "$(dirname "$0")/../lib/e2e.sh"

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

# key reset / key del forgive ADDR under the endpoint rules too: an address
# that only an endpoint rule limits had "no rule matches ... no key", and one
# with a source rule got its source key reset while the endpoint rule went
# on dropping it.
test_key_reset_endpoint() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null 2>&1
	ctl rule add 198.18.0.0/24 proto udp rate 1/h burst 5 id 1 >/dev/null
	flood 198.18.0.1 198.18.0.254 50 >/dev/null
	check_eq "endpoint key limited" "$(rule_stat 1 passed_packets)/$(rule_stat 1 dropped_packets)" "5/45"
	local out rc
	out=$(ctl key reset 198.18.0.1 2>&1)
	rc=$?
	check_eq "reset, endpoint rule alone" "$rc:$out" "0:reset key 198.18.0.1/32 of rule 1: 5 tokens"
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "forgiven" "$(rule_stat 1 passed_packets)/$(rule_stat 1 dropped_packets)" "10/50"

	# with a source rule: both keys, the source rule's first
	ctl rule add 198.18.0.0/24 rate 1/h burst 1000 id 2 >/dev/null
	out=$(ctl key reset 198.18.0.1 2>&1)
	rc=$?
	check_eq "reset, source and endpoint" "$rc:$out" \
		"0:key 198.18.0.1/32 of rule 2 is not tracked: its bucket is full (1000 tokens)
reset key 198.18.0.1/32 of rule 1: 5 tokens"
	flood 198.18.0.1 198.18.0.254 5 >/dev/null
	check_eq "the endpoint rule forgiven too" "$(rule_stat 1 passed_packets)/$(rule_stat 1 dropped_packets)" "15/50"
	check_eq "reset -j" "$(ctl -j key reset 198.18.0.1 | jq -c '[.key, .rule, ([.keys[] | [.rule, .tracked]])]')" \
		'["198.18.0.1/32",2,[[2,true],[1,true]]]'

	# key del: every tracked key, and an error only when none was
	out=$(ctl key del 198.18.0.1 2>&1)
	check_eq "del both" "$out" "deleted key 198.18.0.1/32 of rule 2
deleted key 198.18.0.1/32 of rule 1"
	out=$(ctl key del 198.18.0.1 2>&1)
	rc=$?
	check_eq "del again" "$rc:$out" "1:Error: key 198.18.0.1/32 of rule 2 is not tracked"
	# outside every rule, as before
	out=$(ctl key reset 198.18.1.1 2>&1)
	rc=$?
	check_eq "no rule" "$rc:$out" "1:Error: no rule matches 198.18.1.1: it has no key"
}

# The pin directory named through a symlink: a symlink among its parents
# that another user owns (in a sticky directory such as /tmp its owner may
# point it elsewhere) is refused, as is a path whose symlinks lead under a
# directory another user owns; stat() of a parent saw only the target.
test_pin_dir_symlink_parents() {
	lab_up || return
	ctl attach dev d0 keys 4096 >/dev/null 2>&1
	local out rc
	ln -s "$BPFFS" "$TMPD/by-root" || { fail "ln"; return; }
	out=$(nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$TMPD/by-root/xdp-rl" -j mode 2>&1)
	check_eq "root's symlink: as before" "$out" '{"mode":"enforce"}'

	ln -s "$BPFFS" "$TMPD/by-nobody" && chown -h nobody "$TMPD/by-nobody" || { fail "ln"; return; }
	out=$(nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$TMPD/by-nobody/xdp-rl" mode 2>&1)
	rc=$?
	check_eq "nobody's symlink refused" "$rc" 1
	check_match "and why" "$out" "by-nobody, a parent of the pin directory .* is a symlink of uid [0-9]+: its owner could point it elsewhere"

	# a root symlink to a bpffs mounted under nobody's directory
	mkdir -p "$TMPD/nob/fs" && chown nobody "$TMPD/nob" && mount -t bpf bpf "$TMPD/nob/fs" ||
		{ fail "cannot mount the second bpffs"; return; }
	ln -s "$TMPD/nob/fs" "$TMPD/to-nob"
	mkdir -m 0700 "$TMPD/nob/fs/xdp-rl"
	out=$(nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$TMPD/to-nob/xdp-rl" mode 2>&1)
	rc=$?
	rm -rf "$TMPD/nob/fs/xdp-rl" 2>/dev/null
	umount "$TMPD/nob/fs"
	check_eq "resolved under nobody's directory: refused" "$rc" 1
	check_match "and why" "$out" "nob, a parent of the pin directory .* belongs to uid [0-9]+"
}

# libmicrohttpd's messages about a client's request (too big, too many
# connections) went straight to stderr from the metrics thread, one or two
# lines per request: any client could flood the journal, and a stalled
# stderr would hold up the scrapes. They go through the bounded log queue at
# debug level now.
test_metrics_client_errors_quiet() {
	lab_up || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	local big i codes=""
	big=$(head -c 20000 /dev/zero | tr '\0' a)
	for i in 1 2 3 4 5 6 7 8 9 10; do
		codes+=$(nsenter --net="/run/netns/$DST" curl -s -m 5 -o /dev/null -w '%{http_code} ' \
			-H "X-Big: $big" http://127.0.0.1:9437/metrics)
	done
	check_eq "too big, every time" "$codes" "431 431 431 431 431 431 431 431 431 431 "
	check_eq "a scrape still answered" \
		"$(nsenter --net="/run/netns/$DST" curl -s -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:9437/metrics)" 200
	sleep 0.3	# the log writer's queue
	check_eq "nothing logged at the default level" \
		"$(grep -cE 'too big|Not enough memory|Error processing request' "$LOG")" 0
}

run_test test_fleet_auth_fifo
run_test test_key_reset_endpoint
run_test test_pin_dir_symlink_parents
run_test test_metrics_client_errors_quiet
summary

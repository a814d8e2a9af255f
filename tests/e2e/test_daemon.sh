#!/usr/bin/env bash
# End-to-end: xdp-rld — configuration, live reload, watchdog and failure
# policy, metrics scraped by a real Prometheus, interfaces that come and go.
source "$(dirname "$0")/../lib/e2e.sh"

LOG="$TMPD/rld.log"
CONF="$TMPD/rules.conf"


# every test starts with an empty daemon log (a restart within one test appends)
lab_up() {
	: >"$LOG"
	lab_up_veth
}

base_conf() {
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" "$@"
}

test_check() {
	write_conf "$CONF" "# comment" "interface d0 mode native" "heartbeat 200" "" \
		"rule add 198.18.0.0/24 rate 100/s burst 20 # trailing comment" "mode set dry-run"
	check_eq "valid file" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "$CONF: valid, 1 rules"
	write_conf "$CONF" "interface d0" \
		"rule add 198.18.0.0/24 rate 100/s brust 20" \
		"rule add 198.18.1.1/24 rate 1/s burst 1" \
		"attach dev d0" \
		"   watchdog soon"
	local out rc
	out=$("$RLD_BIN" --check --config "$CONF" 2>&1)
	rc=$?
	check_eq "invalid file exit" $rc 1
	check_match "error 1" "$out" "$CONF:2:35: unknown argument 'brust'"
	check_match "error 2" "$out" "$CONF:3:10: invalid prefix '198.18.1.1/24': host bits set"
	check_match "error 3" "$out" "$CONF:4:1: 'attach' is not a configuration command"
	check_match "error 4" "$out" "$CONF:5:13: invalid watchdog 'soon'"
	write_conf "$CONF" "rule add 198.18.0.0/24 rate 1/s burst 1" "rule add 198.18.0.0/24 rate 2/s burst 1"
	check_match "duplicate" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "$CONF:2:10: duplicate prefix 198.18.0.0/24"
	check_match "missing file" "$("$RLD_BIN" --check --config "$TMPD/nope.conf" 2>&1)" "nope.conf: No such file"
	"$RLD_BIN" --check --config "$TMPD/nope.conf" >/dev/null 2>&1
	check_eq "missing file exit" $? 1
	[[ ! -e "$PIN" ]] || fail "--check touched the system: $PIN exists"
	if [[ ! -e /etc/xdp-rl/rules.conf ]]; then
		check_eq "built-in rules" "$("$RLD_BIN" --check 2>&1)" "(built-in): valid, 2 rules"
	fi
}

test_builtin_default_rules() {
	[[ -e /etc/xdp-rl/rules.conf ]] && return	# an installed file wins
	lab_up || return
	start_rld "$LOG" --iface d0 --metrics off
	wait_log "$LOG" "running" || return
	check_match "logged" "$(cat "$LOG")" "does not exist: using the built-in default rule set"
	check_eq "default rules" "$(ctl -j rule list | jq -c '[.[] | [.prefix, .rate, .burst]]')" \
		'[["0.0.0.0/0","1000/s",2000],["::/0","1000/s",2000]]'
}

test_start_reload_and_reconcile() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 50 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	check_match "attached" "$(ctl -j status | jq -r '.interfaces[0] | "\(.ifname) \(.xdp_mode)"')" "d0 (native|generic)"
	check_eq "heartbeating" "$(ctl -j status | jq .daemon.heartbeating)" true
	flood 198.18.0.1 198.18.0.254 200 >/dev/null
	check_eq "limited" "$(rule_stat 1 passed_packets)" 50

	# an editor's save (temp file + rename) is seen and applied
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 50 id 1" "rule add 2001:db8:1::/48 rate 10/s burst 5 id 2"
	wait_log "$LOG" "reload: 2 rules" || return
	check_eq "two rules" "$(ctl -j rule list | jq length)" 2
	check_eq "unchanged rule kept its bucket" "$(ctl -j show 198.18.0.1 | jq .tokens)" 0
	check_eq "and its counters" "$(rule_stat 1 passed_packets)" 50

	# an invalid file changes nothing and says where
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 50 id 1" "rule add 198.18.3.0/24 rate fast burst 5"
	wait_log "$LOG" "rules.conf:6:29: invalid rate 'fast'" || return
	wait_log "$LOG" "reload refused" || return
	check_eq "still two rules" "$(ctl -j rule list | jq length)" 2
	check_eq "reload failures" "$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics |
		awk '/^xdp_rl_reload_failures_total/ { print $2 }')" 1

	# xdp-rlctl works beside the daemon; the next reload reconciles with the file
	check_eq "cli says so" "$(ctl rule add 198.18.9.0/24 rate 1/s burst 1 2>&1 >/dev/null)" \
		"Note: xdp-rld is running; this change lasts until its next reload"
	check_eq "cli rule added" "$(ctl -j rule list | jq length)" 3
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 50 id 1"
	kill -HUP "$RLD_PID"
	wait_log "$LOG" "SIGHUP" || return
	wait_log "$LOG" "reload: 1 rules" || return
	check_eq "file wins at reload" "$(ctl -j rule list | jq -c '[.[].prefix]')" '["198.18.0.0/24"]'
}

# 10,000 rules, reloaded again and again under a flood: polite sources lose
# nothing, the flooding source is never let through beyond its limit.
test_reload_under_flood() {
	lab_up || return
	local f1="$TMPD/a.conf" f2="$TMPD/b.conf" i
	{
		echo "interface d0"; echo "heartbeat 100"; echo "watchdog 0"; echo "metrics off"
		echo "rule add 198.18.0.0/24 rate 100/s burst 20 id 1"
		awk 'BEGIN { for (i = 0; i < 9999; i++)
			printf "rule add 2001:db8:%x::/48 rate %d/s burst 10\n", i + 256, i % 50 + 1 }'
	} >"$f1"
	sed 's|burst 10$|burst 11|' "$f1" >"$f2"	# every filler rule changes
	cp "$f1" "$CONF"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" 30 || return
	check_eq "10,000 rules" "$(ctl -j status | jq .rules)" 10000

	local t0=$SECONDS p=()
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.2 -d 198.18.0.254 -r 50 -n 150 -t 10 >/dev/null & p+=($!)
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.3 -d 198.18.0.254 -r 50 -n 150 -t 10 >/dev/null & p+=($!)
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -r 20000 -n 60000 -t 10 >/dev/null & p+=($!)
	for i in 1 2 3 4 5 6; do
		sleep 0.4
		cp "$([[ $((i % 2)) == 1 ]] && echo "$f2" || echo "$f1")" "$CONF.tmp" && mv "$CONF.tmp" "$CONF"
		# each swap its own reload, even on a loaded machine where one
		# takes longer than the 0.4 s between swaps
		wait_count "$LOG" "reload: 10000 rules" "$i" 10 || break
	done
	wait "${p[@]}"
	local secs=$((SECONDS - t0 + 1))
	check_eq "reloads applied" "$(grep -c 'reload: 10000 rules' "$LOG")" 6
	check_eq "polite .2 never dropped" "$(ctl -j show 198.18.0.2 | jq .dropped_packets)" 0
	check_eq "polite .3 never dropped" "$(ctl -j show 198.18.0.3 | jq .dropped_packets)" 0
	local passed flood_dropped
	passed=$(rule_stat 1 passed_packets)
	flood_dropped=$(ctl -j show 198.18.0.1 | jq .dropped_packets)
	[[ $passed =~ ^[0-9]+$ && $flood_dropped =~ ^[0-9]+$ ]] || { fail "no counters"; return; }
	# the flooding key: at most burst + rate * elapsed of its 60000
	local flood_passed=$((60000 - flood_dropped))
	((flood_passed <= 20 + 100 * secs)) || fail "the flood got $flood_passed through in ${secs}s (limit $((20 + 100 * secs)))"
	((flood_passed >= 20)) || fail "the flood got only $flood_passed through"
	check_eq "everything counted" "$((passed + $(rule_stat 1 dropped_packets)))" 60300
	echo "    reload of 10,000 rules: $(grep -o 'reload: 10000 rules.*applied in [0-9.]* ms' "$LOG" |
		grep -o '[0-9.]* ms' | tr '\n' ' ')" >&2
}

test_watchdog_and_restart() {
	lab_up || return
	base_conf "rule add 198.18.0.0/25 rate 1/h burst 10 id 1" \
		"rule add 198.18.0.128/25 rate 1/h burst 10 on-failure closed id 2"
	ip -n "$SRC" addr add 198.18.0.129/24 dev s0
	ip -n "$DST" neigh add 198.18.0.129 lladdr $SRC_MAC dev d0 nud permanent
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	flood 198.18.0.129 198.18.0.254 100 >/dev/null
	check_eq "open rule limited" "$(rule_stat 1 passed_packets)" 10
	check_eq "closed rule limited" "$(rule_stat 2 passed_packets)" 10

	kill -9 "$RLD_PID"
	wait "$RLD_PID" 2>/dev/null
	# within the watchdog time: enforcement goes on unchanged
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_eq "still enforced" "$(rule_stat 1 passed_packets)" 10
	sleep 1	# two watchdog times
	check_eq "watchdog fired" "$(ctl -j status | jq .daemon.watchdog_fired)" true
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	flood 198.18.0.129 198.18.0.254 100 >/dev/null
	check_eq "open: passes" "$(rule_stat 1 failure_passed_packets)" 100
	check_eq "closed: drops" "$(rule_stat 2 failure_dropped_packets)" 100
	check_eq "closed: nothing through" "$(rule_stat 2 passed_packets)" 10

	# a restarted daemon adopts the program, the buckets carry on
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "adopted the program already attached" || return
	wait_log "$LOG" "running" || return
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_eq "enforced again, same bucket" "$(rule_stat 1 passed_packets)" 110
	check_eq "no new key" "$(rule_stat 1 new_keys)" 1
	check_eq "still limited" "$(ctl -j show 198.18.0.1 | jq .tokens)" 0
}

test_stop_detaches_or_keeps() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$LOG" --config "$CONF" --keep-attached
	wait_log "$LOG" "running" || return
	flood 198.18.0.1 198.18.0.254 20 >/dev/null
	kill -TERM "$RLD_PID"
	wait "$RLD_PID"
	check_eq "clean exit" $? 0
	check_match "kept" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "watchdog disarmed" "$(ctl -j status | jq .daemon.watchdog_ms)" 0
	flood 198.18.0.1 198.18.0.254 20 >/dev/null
	check_eq "still enforcing" "$(rule_stat 1 passed_packets)" 5

	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "adopted" || return
	kill -TERM "$RLD_PID"
	wait "$RLD_PID"
	no_xdp_on "$DST" d0 || fail "SIGTERM left the program on d0"
	[[ ! -e "$PIN" ]] || fail "SIGTERM left pins in $PIN"
	wait_log "$LOG" "removed the pins"
}

test_interface_comes_back() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 30 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_eq "limited" "$(rule_stat 1 dropped_packets)" 70
	ip -n "$DST" link del d0	# takes s0 with it
	wait_log "$LOG" "interface d0 disappeared; keeping the maps" || return
	ip -n "$SRC" link add s0 type veth peer name d0 netns "$DST"
	ip -n "$DST" link set d0 address $DST_MAC up
	nsenter --net="/run/netns/$DST" ethtool -K d0 gro on >/dev/null
	ip -n "$SRC" link set s0 address $SRC_MAC up
	ip -n "$SRC" addr add 198.18.0.1/24 dev s0
	ip -n "$SRC" neigh add 198.18.0.254 lladdr $DST_MAC dev s0 nud permanent
	wait_log "$LOG" "interface d0: attached" 2 || return
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_eq "limiting resumed, same bucket" "$(rule_stat 1 dropped_packets)" 170
	check_eq "metrics: attached" "$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics |
		awk '/^xdp_rl_interfaces_attached/ { print $2 }')" 1
}

# A real Prometheus scrapes the daemon; its query API must agree with the
# data path's own counters.
test_prometheus_scrape() {
	command -v prometheus >/dev/null || { fail "prometheus is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 25 id 1" "rule add 2001:db8:1::/48 action allow id 2"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "metrics on http://127.0.0.1:9437/metrics" || return
	flood 198.18.0.1 198.18.0.254 1000 >/dev/null
	local m
	m=$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)
	check_match "counter" "$m" 'xdp_rl_dropped_packets_total\{rule="1",prefix="198.18.0.0/24",action="limit"\} 975'
	check_match "help" "$m" "# TYPE xdp_rl_dropped_packets_total counter"
	check_match "gauge" "$m" 'xdp_rl_mode\{mode="enforce"\} 1'
	check_match "rules" "$m" "xdp_rl_rules_loaded 2"
	check_match "keys per family" "$m" 'xdp_rl_keys_tracked\{family="ipv4"\} 1'
	check_match "capacity per family" "$m" 'xdp_rl_keys_capacity\{family="ipv6"\} [0-9]+'
	check_match "heartbeat" "$m" "xdp_rl_heartbeat_age_seconds 0\.[0-9]+"
	check_eq "404" "$(nsenter --net="/run/netns/$DST" curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:9437/nope)" 404

	mkdir -p "$TMPD/prom"
	cat >"$TMPD/prom.yml" <<-EOF
	global: { scrape_interval: 1s, evaluation_interval: 1s }
	scrape_configs:
	  - job_name: xdp-rl
	    static_configs: [ { targets: ["127.0.0.1:9437"] } ]
	EOF
	nsenter --net="/run/netns/$DST" prometheus --config.file="$TMPD/prom.yml" \
		--storage.tsdb.path="$TMPD/prom" --web.listen-address=127.0.0.1:9090 \
		>"$TMPD/prom.log" 2>&1 &
	BG_PIDS+=($!)
	local v="" i q='xdp_rl_dropped_packets_total{rule="1"}'
	for ((i = 0; i < 60; i++)); do
		v=$(nsenter --net="/run/netns/$DST" curl -s -G --data-urlencode "query=$q" \
			127.0.0.1:9090/api/v1/query 2>/dev/null | jq -r '.data.result[0].value[1] // empty' 2>/dev/null)
		[[ -n "$v" ]] && break
		sleep 0.5
	done
	check_eq "Prometheus sees what the data path counted" "$v" "$(rule_stat 1 dropped_packets)"
	[[ -n "$v" ]] || echo "    prometheus said: $(tail -n 3 "$TMPD/prom.log")" >&2
}

# ---- faults: each of these once let packets through or stopped enforcing ----

# wait_count FILE REGEX N [SECONDS]: until N lines match (default 10 s)
wait_count() {
	local i
	for ((i = 0; i < ${4:-10} * 20; i++)); do
		(($(grep -cE "$2" "$1" 2>/dev/null) >= $3)) && return 0
		sleep 0.05
	done
	fail "fewer than $3 lines /$2/ in $(basename "$1") within ${4:-10} s"
	return 1
}

metric() {	# NAME: the daemon's value of a metric without labels
	nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics | awk -v m="$1" '$1 == m { print $2 }'
}

# start_rld_default LOG ARGS...: xdp-rld with no --config, so it reads the
# default path, /etc/xdp-rl/rules.conf; a private mount namespace puts
# $TMPD/etc there, so the machine's own /etc/xdp-rl is never touched.
ETC_CREATED=0
start_rld_default() {
	local log=$1
	shift
	mkdir -p "$TMPD/etc"
	if [[ ! -d /etc/xdp-rl ]]; then
		mkdir /etc/xdp-rl && ETC_CREATED=1
	fi
	unshare -m --propagation private bash -c \
		'mount --bind "$1" /etc/xdp-rl && shift && exec "$@"' _ "$TMPD/etc" \
		nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" "$@" >>"$log" 2>&1 &
	RLD_PID=$!
	BG_PIDS+=($RLD_PID)
}

etc_cleanup() {
	kill_bg
	((ETC_CREATED)) && rmdir /etc/xdp-rl 2>/dev/null
	ETC_CREATED=0
}

# Issue 7.1: the default file deleted (or made unreadable) under a running
# daemon is a failed reload: rules, mode and interfaces stay.
test_config_removed_is_a_failed_reload() {
	lab_up || return
	local conf="$TMPD/etc/rules.conf"
	mkdir -p "$TMPD/etc"
	write_conf "$conf" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.1/32 action deny id 1" "rule add 198.18.0.0/24 rate 1/h burst 10 id 2" \
		"mode set enforce"
	start_rld_default "$LOG"
	wait_log "$LOG" "running" || { etc_cleanup; return; }
	flood 198.18.0.1 198.18.0.254 50 >/dev/null
	check_eq "denied" "$(rule_stat 1 dropped_packets)" 50

	rm "$conf"
	wait_log "$LOG" "reload refused" || { etc_cleanup; return; }
	check_match "said why" "$(cat "$LOG")" "rules.conf: No such file or directory"
	check_match "still attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "rules kept" "$(ctl -j rule list | jq -c '[.[].id]')" "[1,2]"
	flood 198.18.0.1 198.18.0.254 50 >/dev/null
	check_eq "still denied" "$(rule_stat 1 dropped_packets)" 100
	check_eq "nothing passed" "$(rule_stat 1 passed_packets)" 0
	check_eq "counted" "$(metric xdp_rl_reload_failures_total)" 1

	# a directory in its place: unreadable, refused the same way
	mkdir "$conf"
	wait_log "$LOG" "rules.conf:1:1: not a regular file" || { etc_cleanup; return; }
	check_eq "counted again" "$(metric xdp_rl_reload_failures_total)" 2
	check_eq "rules still kept" "$(ctl -j rule list | jq -c '[.[].id]')" "[1,2]"
	rmdir "$conf"
	# an empty file (what a failed write leaves) is refused too
	: >"$conf"
	wait_log "$LOG" "rules.conf:1:1: the file is empty" || { etc_cleanup; return; }
	check_eq "empty file: rules kept" "$(ctl -j rule list | jq -c '[.[].id]')" "[1,2]"
	check_match "empty file: still attached" "$(ip -n "$DST" link show d0)" "xdp"
	# and a file that comes back is applied
	write_conf "$conf" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.1/32 action deny id 1"
	wait_log "$LOG" "reload: 1 rules" || { etc_cleanup; return; }
	check_match "attached" "$(ip -n "$DST" link show d0)" "xdp"
	etc_cleanup
}

# failure_passed of rule 1 after floods spread over about SECS seconds
flood_for() {	# SECS
	local i
	for ((i = 0; i < $1 * 4; i++)); do
		flood 198.18.0.1 198.18.0.254 20 >/dev/null
		sleep 0.25
	done
}

# Issue 7.2: nothing that stalls the event loop (a huge file, a FIFO, another
# process holding the pin-directory lock) lifts the limits: the heartbeat
# goes on from its own thread.
test_stalls_never_lift_limits() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	flood 198.18.0.1 198.18.0.254 20 >/dev/null

	# 50 MB of invalid lines: refused by size, at once
	awk 'BEGIN { for (i = 0; i < 1000000; i++) print "rule add 198.18.0.0/24 rate fast burst 10 and more words" }' \
		>"$CONF.big"
	mv "$CONF.big" "$CONF"
	flood_for 2
	wait_log "$LOG" "the limit is 16777216 bytes" || return
	check_eq "huge file: nothing failure-passed" "$(rule_stat 1 failure_passed_packets)" 0
	check_eq "huge file: rule kept" "$(ctl -j rule list | jq length)" 1

	# a FIFO in the file's place must not block the reader
	rm -f "$CONF"
	mkfifo "$CONF"
	wait_log "$LOG" "not a regular file" || return
	rm -f "$CONF"

	# another process holds the pin-directory lock for longer than the watchdog
	flock "$PIN" sleep 4 &
	BG_PIDS+=($!)
	sleep 0.2
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 10 id 1" "rule add 198.18.5.0/24 rate 1/s burst 1 id 2"
	flood_for 3
	check_eq "lock held: nothing failure-passed" "$(rule_stat 1 failure_passed_packets)" 0
	check_eq "lock held: watchdog never fired" "$(ctl -j status | jq .daemon.watchdog_fired)" false
	check_eq "the flood stayed limited" "$(rule_stat 1 passed_packets)" 10
	wait_log "$LOG" "reload: 2 rules|reload refused" 10
}

# Issue 7.3: one daemon per pin directory; the second refuses and names the first.
test_second_daemon_refused() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	local out rc
	out=$(timeout 10 nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" --config "$CONF" 2>&1)
	rc=$?
	check_eq "second daemon exit" $rc 1
	check_match "names the first" "$out" "served by another xdp-rld \(pid $RLD_PID\)"
	check_match "first still attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "first still heartbeating" "$(ctl -j status | jq .daemon.heartbeating)" true
	flood 198.18.0.1 198.18.0.254 30 >/dev/null
	check_eq "still limited" "$(rule_stat 1 passed_packets)" 10
	# the first stops cleanly, as its own
	kill -TERM "$RLD_PID"
	wait "$RLD_PID"
	check_eq "clean exit" $? 0
	[[ ! -e "$PIN" ]] || fail "pins left in $PIN"
}

# Issue 7.4: an rm -rf of the pin directory is found and repaired: pins
# again, links re-attached, the buckets carry on.
test_removed_pins_restored() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	flood 198.18.0.1 198.18.0.254 30 >/dev/null
	check_eq "limited" "$(rule_stat 1 passed_packets)" 10
	rm -rf "$PIN"
	wait_log "$LOG" "restored the pins" 5 || return
	check_match "re-attached" "$(ip -n "$DST" link show d0)" "xdp"
	flood 198.18.0.1 198.18.0.254 30 >/dev/null
	check_eq "same bucket, still limited" "$(rule_stat 1 passed_packets)" 10
	check_eq "counted" "$(metric xdp_rl_pin_restores_total)" 1
	check_eq "pins ok" "$(metric xdp_rl_pins_ok)" 1
	# the claim came back too: a second daemon is still refused
	timeout 10 nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" --config "$CONF" >/dev/null 2>&1
	check_eq "second daemon refused after the restore" $? 1

	# only the link pin: XDP goes with it, and comes back
	rm "$PIN/link_d0"
	wait_log "$LOG" "interface d0: the program is no longer attached" 5 || return
	wait_log "$LOG" "interface d0: attached" 5 || return
	check_match "link re-attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "link repair counted" "$(metric xdp_rl_link_repairs_total)" 1

	# some pins and the link, the claim left in place: restored, not
	# mistaken for another daemon
	rm "$PIN/xrl_control" "$PIN/link_d0"
	sleep 2.5
	check_match "partial removal: re-attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "partial removal: pins ok" "$(metric xdp_rl_pins_ok)" 1
	check_eq "no other daemon blamed" "$(grep -c 'served by another' "$LOG")" 0
	flood 198.18.0.1 198.18.0.254 30 >/dev/null
	check_eq "still the same bucket" "$(rule_stat 1 passed_packets)" 10

	# the claim's directory replaced: the daemon claims the new one, and a
	# second daemon started after that is refused
	# (rm -r: it holds the names of the interfaces the daemon serves)
	rm -r "$PIN/daemon" && mkdir "$PIN/daemon"
	sleep 1.5
	timeout 10 nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" --config "$CONF" >/dev/null 2>&1
	check_eq "second daemon refused after the claim was replaced" $? 1

	# removed, and at once the CLI makes a new instance there, attached
	# nowhere (an attach and a detach elsewhere; only attach creates one):
	# the daemon takes the directory back with its own maps
	local restores
	restores=$(grep -c "restored the pins" "$LOG")
	ip -n "$DST" link add d1 type veth peer name d1p && ip -n "$DST" link set d1 up &&
		ip -n "$DST" link set d1p up || { fail "cannot create d1"; return; }
	kill -STOP "$RLD_PID"	# so that the CLI comes first, every time
	rm -rf "$PIN"
	ctl attach dev d1 keys 4096 >/dev/null && ctl detach dev d1 >/dev/null || fail "no instance made"
	kill -CONT "$RLD_PID"
	wait_log "$LOG" "replaced an unattached instance" 5 || return
	wait_count "$LOG" "restored the pins.*; 1 interface" $((restores + 1)) 5 || return
	check_match "taken back: attached" "$(ip -n "$DST" link show d0)" "xdp"
	check_eq "taken back: the daemon's heartbeat" "$(ctl -j status | jq .daemon.heartbeating)" true
	flood 198.18.0.1 198.18.0.254 30 >/dev/null
	check_eq "taken back: the same bucket" "$(rule_stat 1 passed_packets)" 10
}

# A reload that shortens the heartbeat takes effect at once: the watchdog
# never fires while the daemon lives.
test_heartbeat_period_change() {
	lab_up || return
	write_conf "$CONF" "interface d0" "heartbeat 60000" "watchdog 180000" "metrics off" \
		"rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "running" || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics off" \
		"rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	wait_log "$LOG" "reload: 1 rules" || return
	sleep 1.5
	check_eq "heartbeating" "$(ctl -j status | jq .daemon.heartbeating)" true
	check_eq "watchdog not fired" "$(ctl -j status | jq .daemon.watchdog_fired)" false
	flood 198.18.0.1 198.18.0.254 50 >/dev/null
	check_eq "limited, not failure-passed" "$(rule_stat 1 failure_passed_packets)" 0
	check_eq "limited" "$(rule_stat 1 passed_packets)" 10
}

# A stderr that never drains (a stalled journald, a paused pager) blocks
# only the log writer: the heartbeat goes on, lines are dropped and counted.
test_stderr_that_never_drains() {
	lab_up || return
	base_conf "rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	mkfifo "$TMPD/err"
	exec 9<>"$TMPD/err"	# a reader that never reads: writes block once it is full
	nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" --config "$CONF" 2>"$TMPD/err" &
	RLD_PID=$!
	BG_PIDS+=($RLD_PID)
	local i
	for ((i = 0; i < 50; i++)); do
		[[ "$(ctl -j status 2>/dev/null | jq '.interfaces | length')" == 1 ]] && break
		sleep 0.1
	done
	# 50 errors a reload, 40 reloads: well past a pipe's 64 KiB
	{ echo "interface d0"; echo "heartbeat 100"; echo "watchdog 500"; echo "metrics 127.0.0.1:9437"
	  echo "rule add 198.18.0.0/24 rate 1/h burst 10 id 1"
	  for ((i = 0; i < 60; i++)); do echo "rule add 198.18.$i.0/24 rate fast burst 1"; done; } >"$CONF.bad"
	mv "$CONF.bad" "$CONF"
	for ((i = 0; i < 40; i++)); do
		kill -HUP "$RLD_PID"
		sleep 0.02
	done
	sleep 1.5	# three watchdog times
	check_eq "still heartbeating" "$(ctl -j status | jq .daemon.heartbeating)" true
	check_eq "watchdog not fired" "$(ctl -j status | jq .daemon.watchdog_fired)" false
	flood 198.18.0.1 198.18.0.254 50 >/dev/null
	check_eq "limited, not failure-passed" "$(rule_stat 1 failure_passed_packets)" 0
	check_eq "limited" "$(rule_stat 1 passed_packets)" 10
	local dropped
	dropped=$(metric xdp_rl_log_lines_dropped_total)
	[[ "$dropped" =~ ^[0-9]+$ ]] && ((dropped > 0)) || fail "log lines dropped: '$dropped'"
	kill_bg
	exec 9<&-
}

run_test test_check
run_test test_builtin_default_rules
run_test test_start_reload_and_reconcile
run_test test_reload_under_flood
run_test test_watchdog_and_restart
run_test test_stop_detaches_or_keeps
run_test test_interface_comes_back
run_test test_prometheus_scrape
run_test test_config_removed_is_a_failed_reload
run_test test_stalls_never_lift_limits
run_test test_second_daemon_refused
run_test test_removed_pins_restored
run_test test_heartbeat_period_change
run_test test_stderr_that_never_drains
summary

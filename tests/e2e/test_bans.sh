#!/usr/bin/env bash
# End-to-end: bans. ban add drops a source in the lab before any rule, ban
# list's fields, ban del and flush, a decider's bans, expiry with no daemon
# running, bans across a daemon restart, a reload and an upgrade, the
# configuration's bans, the bans' events.
source "$(dirname "$0")/../lib/e2e.sh"

# sent SRC N: N frames from SRC to the lab's receiver; prints how many were sent
sent() {
	if [[ $1 == *:* ]]; then flood "$1" 2001:db8:1::fe "$2"; else flood "$1" 198.18.0.254 "$2"; fi
}

test_ban_add_drops() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1000000/s burst 1000000 >/dev/null
	ctl rule add 198.18.0.3 action allow >/dev/null
	local out s
	out=$(ctl ban add 198.18.0.0/30 for 10m reason "e2e test")
	check_eq "ban add says so" "$out" "banned 198.18.0.0/30 for 10m"
	sent 198.18.0.1 100 >/dev/null
	sent 198.18.0.3 100 >/dev/null
	sent 198.18.0.5 100 >/dev/null
	s=$(ctl -j ban list)
	check_eq "one ban" "$(jget "$s" length)" 1
	check_eq "its fields" "$(jget "$s" '.[0] | [.prefix, .origin, .by, .rule, .decider, .reason, .level] | map(tostring) | join(",")')" \
		"198.18.0.0/30,operator,operator,null,null,e2e test,null"
	check_eq "it dropped the /30's 200 (the allowed host's too)" "$(jget "$s" '.[0].dropped_packets')" 200
	check_eq "time left" "$(jget "$s" '.[0].left_ms > 590000 and .[0].left_ms <= 600000')" true
	check_eq "the rule saw only the other host" "$(rule_stat 1 passed_packets)" 100
	check_match "ban list text" "$(ctl ban list)" "198\.18\.0\.0/30 +operator +(9m5[0-9]s|10m) +200  e2e test"
	out=$(ctl ban add 2001:db8:1::/64 by fail2ban)
	check_eq "a decider's, until ban del" "$out" "banned 2001:db8:1::/64 until ban del"
	sent 2001:db8:1::1 50 >/dev/null
	check_eq "the decider's ban drops" "$(ctl -j ban list | jq -r '.[] | select(.decider == "fail2ban") | [.prefix, .left_ms, .dropped_packets] | map(tostring) | join(",")')" \
		"2001:db8:1::/64,null,50"
	out=$(ctl ban del 2001:db8:1::/64 by crowdsec 2>&1)
	check_eq "another decider's del is refused" "$?:$out" \
		"1:Error: the ban of 2001:db8:1::/64 is fail2ban's, not crowdsec's: left as it is"
	check_eq "ban del" "$(ctl ban del 198.18.0.0/30)" "unbanned 198.18.0.0/30"
	out=$(ctl ban del 198.18.0.0/30 2>&1)
	check_eq "ban del again" "$?:$out" "1:Error: 198.18.0.0/30 is not banned"
	sent 198.18.0.1 100 >/dev/null
	check_eq "unbanned: the rule sees it" "$(rule_stat 1 passed_packets)" 200
	check_eq "ban flush by fail2ban" "$(ctl -j ban flush by fail2ban)" '{"unbanned":1}'
	check_eq "none left" "$(ctl -j ban list)" "[]"
}

# ban_drops SRC: how many of 50 frames from SRC a ban dropped (the ban
# counters before and after)
ban_drops() {
	local before after
	before=$(ctl -j stats | jq .bans.dropped_packets)
	sent "$1" 50 >/dev/null
	after=$(ctl -j stats | jq .bans.dropped_packets)
	echo $((after - before))
}

# A ban ends on time with nothing running but the data path; the next
# writer reclaims it, counted as expired.
test_ban_expiry_without_daemon() {
	lab_up || return
	ctl attach dev d0 bans 1024 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1000000/s burst 1000000 >/dev/null
	ctl ban add 198.18.0.1 for 2s >/dev/null
	check_eq "no daemon" "$(ctl -j status | jq .daemon.heartbeating)" false
	check_eq "banned: all 50 dropped" "$(ban_drops 198.18.0.1)" 50
	sleep 2.3
	check_eq "ended: none dropped" "$(ban_drops 198.18.0.1)" 0
	check_eq "the rule passed them" "$(rule_stat 1 passed_packets)" 50
	check_eq "not listed" "$(ctl -j ban list)" "[]"
	check_eq "still in the table" "$(ctl -j status | jq .bans.ipv4)" 1
	ctl ban add 198.18.0.9 for 1m >/dev/null
	check_eq "the next writer reclaimed it" "$(ctl -j status | jq .bans.ipv4)" 1
	check_eq "counted as expired" "$(ctl -j stats | jq .bans.expired.operator)" 1
	check_eq "capacity: attach bans 1024" "$(ctl -j status | jq -c .bans_capacity)" '{"ipv4":1024,"ipv6":1024}'
	check_eq "rules hold three quarters" "$(ctl -j stats | jq .bans.rule_bans_max)" 768
}

# Bans are pinned state: a daemon's restart, a reload (which replaces the
# configuration's bans only) and an upgrade keep them; the daemon reclaims
# an ended ban and logs it.
test_ban_survives_restart_reload_upgrade() {
	# (the default size: 65536 a family)
	lab_up || return
	local conf=$TMPD/bans.conf log=$TMPD/rld.log
	write_conf "$conf" "interface d0" "metrics off" \
		"rule add 198.18.0.0/24 rate 1000000/s burst 1000000" \
		"ban add 198.18.0.2 reason config-ban" "ban add 198.18.0.3 for 1h"
	start_rld "$log" --config "$conf" --keep-attached
	wait_log "$log" "running" || return
	wait_log "$log" "start: 2 bans in the configuration, 2 set, 0 lifted" || return
	ctl ban add 198.18.0.1 for 10m reason operator-ban >/dev/null
	ctl ban add 198.18.0.4 for 1s >/dev/null
	check_eq "three prefixes banned, each dropping" \
		"$(ban_drops 198.18.0.1),$(ban_drops 198.18.0.2),$(ban_drops 198.18.0.3)" "50,50,50"
	check_eq "default capacity" "$(ctl -j status | jq -c .bans_capacity)" '{"ipv4":65536,"ipv6":65536}'
	check_eq "origins" "$(ctl -j ban list | jq -c '[.[] | select(.left_ms == null or .left_ms > 5000) | .by]')" \
		'["operator","config","config"]'
	wait_log "$log" "unbanned 198.18.0.4/32: the ban by operator ended" 5 || return
	# its event from the daemon's sweep (no packet came after its end),
	# read back by the daemon's own reader of the events
	wait_log "$log" "event: 198.18.0.4 no longer banned \\(ban by operator ended; 0 dropped\\)" 3 || return
	wait_log "$log" "event: 198.18.0.1 banned by operator for " 1 || return

	# a decided stop and a new start: the bans are where they were
	kill -TERM "$RLD_PID"
	wait_exit "$RLD_PID" 10
	check_eq "banned while no daemon runs" "$(ban_drops 198.18.0.1)" 50
	start_rld "$log" --config "$conf" --keep-attached
	wait_log "$log" "running" || return
	check_eq "after the restart" "$(ctl -j ban list | jq -c '[.[].prefix]')" \
		'["198.18.0.1/32","198.18.0.2/32","198.18.0.3/32"]'
	check_eq "the config's ban kept its end" "$(ctl -j ban list | jq '.[2].left_ms > 3500000')" true

	# a reload: the config's bans replaced, the operator's kept
	write_conf "$conf" "interface d0" "metrics off" \
		"rule add 198.18.0.0/24 rate 1000000/s burst 1000000" "ban add 198.18.0.5"
	kill -HUP "$RLD_PID"
	wait_log "$log" "reload: 1 bans in the configuration, 1 set, 2 lifted" || return
	wait_log "$log" "event: 198.18.0.2 no longer banned \\(ban by config lifted; 50 dropped\\)" 3 || return
	wait_log "$log" "event: 198.18.0.5 banned by config until ban del" 3 || return
	check_eq "after the reload" "$(ctl -j ban list | jq -c '[.[] | "\(.prefix) \(.by)"]')" \
		'["198.18.0.1/32 operator","198.18.0.5/32 config"]'
	check_eq "a lifted config ban no longer drops" "$(ban_drops 198.18.0.2)" 0
	check_eq "lifted, counted" "$(ctl -j stats | jq .bans.deleted.config)" 2

	# an upgrade (this build over itself): every map is reused
	local out
	out=$(ctl upgrade 2>&1) || fail "upgrade: $out"
	check_eq "after the upgrade" "$(ctl -j ban list | jq -c '[.[].prefix]')" \
		'["198.18.0.1/32","198.18.0.5/32"]'
	check_eq "still dropping" "$(ban_drops 198.18.0.1)" 50
	check_eq "its drops counted on" "$(ctl -j ban list | jq '.[0].dropped_packets')" 150
}

# The bans' events in xdp-rlctl events: a rule's ban at once, an operator's
# at its ban add, the end at the first packet after it.
test_ban_events() {
	lab_up || return
	local ev=$TMPD/ev.json
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 per /24 ban 1s id 7 >/dev/null
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" -j events count 6 timeout 20 >"$ev" &
	local pid=$!
	BG_PIDS+=($pid)
	sleep 0.5
	sent 198.18.0.1 100 >/dev/null		# limited: the /24 banned for 1 s + jitter
	ctl ban add 2001:db8:1::/64 for 1s >/dev/null
	sent 2001:db8:1::1 10 >/dev/null
	sleep 1.3
	sent 198.18.0.1 1 >/dev/null
	sent 2001:db8:1::1 1 >/dev/null
	wait_exit "$pid" 10
	# and the key's own limited, unlimited
	check_eq "six events" "$(wc -l <"$ev")" 6
	check_eq "the rule's ban" "$(jq -sc '[.[] | select(.event == "banned" and .origin == "rule") | [.key, .rule]]' "$ev")" \
		'[["198.18.0.0/24",7]]'
	check_eq "the operator's" \
		"$(jq -sc '[.[] | select(.event == "banned" and .origin == "operator") | .key]' "$ev")" '["2001:db8:1::/64"]'
	check_eq "both ended" "$(jq -sc '[.[] | select(.event == "unbanned") | "\(.origin) \(.key)"] | sort' "$ev")" \
		'["operator 2001:db8:1::/64","rule 198.18.0.0/24"]'
	check_eq "until is a time" "$(jq -sr '[.[] | select(.event == "banned") | .until | test("^[0-9-]+T[0-9:.]+Z$")] | all' "$ev")" true
}

# Events when a ban is set, lifted or reclaimed from userspace, with no
# packet at all: an operator's and a decider's ban at ban add, their
# unbanned at ban del and ban flush (lifted), and an ended ban's at the
# sweep of the next writer (ended).
test_ban_events_without_traffic() {
	lab_up || return
	local ev=$TMPD/ev.json
	ctl attach dev d0 >/dev/null
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" -j events count 7 timeout 20 >"$ev" &
	local pid=$!
	BG_PIDS+=($pid)
	sleep 0.5
	ctl ban add 198.18.0.7 for 1s >/dev/null
	ctl ban add 2001:db8:1::/64 reason test >/dev/null
	ctl ban del 2001:db8:1::/64 >/dev/null
	ctl ban add 198.18.0.8 for 1h by fail2ban >/dev/null
	ctl ban flush by fail2ban >/dev/null
	sleep 1.3
	ctl ban add 198.18.0.9 >/dev/null	# its sweep reclaims 198.18.0.7
	wait_exit "$pid" 10
	check_eq "seven events, in order" \
		"$(jq -sc '[.[] | "\(.event) \(.key) \(.origin) \(.cause // "-") \(.until != null)"]' "$ev")" \
		'["banned 198.18.0.7 operator - true","banned 2001:db8:1::/64 operator - false","unbanned 2001:db8:1::/64 operator lifted false","banned 198.18.0.8 decider - true","unbanned 198.18.0.8 decider lifted true","unbanned 198.18.0.7 operator ended true","banned 198.18.0.9 operator - false"]'
	check_eq "none dropped" "$(jq -s '[.[].dropped] | add' "$ev")" 0
	check_eq "no packet sent: the data path said none of them" "$(ctl -j stats | jq .bans.dropped_packets)" 0
	# and a ban's first drop says nothing more: its banned went out at ban add
	: >"$ev"
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" -j events count 1 timeout 3 >"$ev" &
	pid=$!
	BG_PIDS+=($pid)
	sleep 0.5
	sent 198.18.0.9 10 >/dev/null
	wait_exit "$pid" 10
	check_eq "no second banned at the first drop" "$(wc -l <"$ev")" 0
	check_eq "its drops counted" "$(ctl -j ban list | jq '.[0].dropped_packets')" 10
}

run_test test_ban_add_drops
run_test test_ban_expiry_without_daemon
run_test test_ban_survives_restart_reload_upgrade
run_test test_ban_events
run_test test_ban_events_without_traffic
summary

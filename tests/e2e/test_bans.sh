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

run_test test_ban_add_drops
summary

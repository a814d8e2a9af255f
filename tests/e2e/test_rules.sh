#!/usr/bin/env bash
# End-to-end: rules that say more: the algorithms, byte rates and
# per-rule dry-run, on the wire through a veth pair, and in every view of a
# rule (rule list, stats, show, top, the metrics, the configuration file).
source "$(dirname "$0")/../lib/e2e.sh"

CONF="$TMPD/rules.conf"
LOG="$TMPD/rld.log"

# How each view reads a rule back: what was written parses again as itself.
test_rule_fields() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.1.0/24 rate 10/s algo fixed-window id 1 >/dev/null
	ctl rule add 198.18.2.0/24 rate 600/min algo sliding-window per /24 id 2 >/dev/null
	ctl rule add 198.18.3.0/24 rate 10mbit burst 64kb dry-run id 3 >/dev/null
	ctl rule add 198.18.4.0/24 rate 2mbps algo sliding-window id 4 >/dev/null
	ctl rule add 198.18.5.0/24 rate 5/s burst 5 id 5 >/dev/null
	local l
	l=$(ctl -j rule list)
	check_eq "json" "$(jq -c '[.[] | [.id, .rate, .burst, .algo, .unit, .dry_run]]' <<<"$l")" \
		'[[1,"10/s",null,"fixed-window","packets",false],[2,"600/min",null,"sliding-window","packets",false],[3,"10mbit",65536,"token-bucket","bytes",true],[4,"2mbps",null,"sliding-window","bytes",false],[5,"5/s",5,"token-bucket","packets",false]]'
	check_match "text header" "$(ctl rule list | head -n 1)" "ON-FAILURE +ALGO +DRY-RUN +ENDPOINT$"
	check_match "text row" "$(ctl rule list | grep '^3 ')" "^3 +198.18.3.0/24 +limit +10mbit +64kb +/32 +open +token-bucket +yes +-$"
	check_match "text row window" "$(ctl rule list | grep '^1 ')" "^1 +198.18.1.0/24 +limit +10/s +- +/32 +open +fixed-window +no +-$"
	# a rule list line, written back as rule add, is the same rule
	ctl rule flush >/dev/null
	ctl rule add 198.18.3.0/24 rate 10mbit burst 64kb dry-run id 3 >/dev/null
	check_eq "round trip" "$(ctl -j rule list | jq -c '.[0]')" "$(jq -c '.[] | select(.id == 3)' <<<"$l")"
	# show: what a window rule has left
	flood 198.18.1.1 198.18.0.254 4 >/dev/null
	ctl rule add 198.18.1.0/24 rate 1000/h algo fixed-window id 1 >/dev/null
	flood 198.18.1.1 198.18.0.254 4 >/dev/null
	check_eq "show" "$(ctl -j show 198.18.1.1 | jq -c '[.tokens, .burst, .algo]')" '[996,1000,"fixed-window"]'
	check_match "show text" "$(ctl show 198.18.1.1)" "tokens: +996 of 1000 \(fixed-window\)"
	# key reset empties a window rule's windows
	ctl key reset 198.18.1.1 >/dev/null
	check_eq "reset" "$(ctl -j show 198.18.1.1 | jq -c '[.tokens, .dropped_packets]')" '[1000,0]'
}

# The configuration file takes the new words, and --check finds their errors.
test_config_check() {
	write_conf "$CONF" \
		"rule add 198.18.0.0/24 rate 100/s algo sliding-window" \
		"rule add 198.18.1.0/24 rate 100/s burst 5 algo fixed-window" \
		"rule add 198.18.2.0/24 rate 1mbit burst 100" \
		"rule add 198.18.3.0/24 rate 10/s burst 1 dry-run" \
		"rule add 198.18.4.0/24 rate 10/s burst 1 algo leaky"
	local out rc
	out=$("$RLD_BIN" --check --config "$CONF" 2>&1)
	rc=$?
	check_eq "exit" $rc 1
	check_match "burst of a window" "$out" "$CONF:2:35: 'burst' belongs to the token bucket"
	check_match "byte burst" "$out" "$CONF:3:41: .*at least 1514 bytes"
	check_match "unknown algo" "$out" "$CONF:5:47: invalid algorithm 'leaky' \(token-bucket, fixed-window, sliding-window\)"
	check_eq "three errors" "$(grep -c "^$CONF:" <<<"$out")" 3
	write_conf "$CONF" \
		"rule add 198.18.0.0/24 rate 100/s algo sliding-window" \
		"rule add 198.18.2.0/24 rate 1mbit burst 16kb dry-run"
	check_eq "valid" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "$CONF: valid, 2 rules"
}

# Each algorithm on the wire: a flood of 300 frames at once from one key.
test_algorithms_on_the_wire() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 rate 100/h algo fixed-window id 1 >/dev/null
	ctl rule add 198.18.1.0/24 rate 100/h algo sliding-window id 2 >/dev/null
	ctl rule add 198.18.2.0/24 rate 100/h burst 100 id 3 >/dev/null
	# 106-byte frames: a 2120-byte burst is 20 of them
	ctl rule add 198.18.3.0/24 rate 1bps burst 2120 id 4 >/dev/null
	ctl rule add 198.18.4.0/24 rate 2120bps algo fixed-window id 5 >/dev/null
	local i
	for i in 0 1 2 3 4; do
		flood 198.18.$i.1 198.18.0.254 300 >/dev/null
	done
	local s
	s=$(ctl -j stats)
	check_eq "fixed" "$(jget "$s" '.rules[] | select(.id == 1) | [.passed_packets, .dropped_packets] | join(",")')" "100,200"
	check_eq "sliding" "$(jget "$s" '.rules[] | select(.id == 2) | [.passed_packets, .dropped_packets] | join(",")')" "100,200"
	check_eq "token bucket" "$(jget "$s" '.rules[] | select(.id == 3) | [.passed_packets, .dropped_packets] | join(",")')" "100,200"
	check_eq "bytes, token bucket" "$(jget "$s" '.rules[] | select(.id == 4) | [.passed_packets, .passed_bytes] | join(",")')" "20,2120"
	check_eq "bytes, fixed window" "$(jget "$s" '.rules[] | select(.id == 5) | [.passed_packets, .dropped_bytes] | join(",")')" "20,29680"
}

# A dry-run rule passes everything and counts would-drops apart while the
# others enforce; the dry-run mode counts into the same counters; stats,
# top and the metrics tell them apart from real drops.
test_dry_run_counted_apart() {
	: >"$LOG"
	lab_up_veth || return
	write_conf "$CONF" "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 10 dry-run id 1" \
		"rule add 198.18.1.0/24 rate 1/h burst 10 algo token-bucket id 2" \
		"rule add 198.18.2.0/24 rate 10/h algo sliding-window id 3"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "metrics on http://127.0.0.1:9437/metrics" || return
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	flood 198.18.1.1 198.18.0.254 100 >/dev/null
	local s
	s=$(ctl -j stats)
	check_eq "dry-run rule" "$(jget "$s" '.rules[] | select(.id == 1) | [.passed_packets, .dropped_packets, .would_drop_packets, .would_drop_bytes] | join(",")')" "100,0,90,9540"
	check_eq "enforcing rule" "$(jget "$s" '.rules[] | select(.id == 2) | [.passed_packets, .dropped_packets, .would_drop_packets] | join(",")')" "10,90,0"
	check_match "stats text" "$(ctl stats)" "rule 1 dry-run: would have dropped 90 packets, 9540 bytes"
	check_eq "top" "$(ctl -j top sample 10 | jq -c '[.[] | [.key, .dry_run]] | sort')" '[["198.18.0.1/32",true],["198.18.1.1/32",false]]'
	check_match "top text" "$(ctl top sample 10 | grep 198.18.0.1/32)" "\(dry-run: would-drops\)$"
	local m
	m=$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)
	check_match "metric would-drop" "$m" 'xdp_rl_would_drop_packets_total\{rule="1",prefix="198.18.0.0/24",action="limit"\} 90'
	check_match "metric dropped" "$m" 'xdp_rl_dropped_packets_total\{rule="1",prefix="198.18.0.0/24",action="limit"\} 0'
	check_match "rule info" "$m" 'xdp_rl_rule_info\{rule="3",prefix="198.18.2.0/24",action="limit",algo="sliding-window",rate="10/h",burst="-",dry_run="no",proto="-",dport="-",syn="no"\} 1'
	check_match "rule info dry-run" "$m" 'xdp_rl_rule_info\{rule="1",[^}]*algo="token-bucket",rate="1/h",burst="10",dry_run="yes",[^}]*\} 1'
	# the mode: drops of an enforcing rule become would-drops, not drops
	ctl mode set dry-run >/dev/null
	flood 198.18.1.1 198.18.0.254 50 >/dev/null
	s=$(ctl -j stats)
	check_eq "mode dry-run" "$(jget "$s" '.rules[] | select(.id == 2) | [.passed_packets, .dropped_packets, .would_drop_packets] | join(",")')" "60,90,50"
}

# Endpoint rules, the issue's example: every source 1000 pps overall, 10
# SYN/min to TCP/22, 100/s to UDP/53 per /24; in every view of a rule.
test_endpoint_rules() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 0.0.0.0/0 rate 1000/s burst 1000 id 1 >/dev/null
	ctl rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10 id 2 >/dev/null
	# (100/h rather than the example's 100/s: no refill between the floods)
	ctl rule add 0.0.0.0/0 proto udp dport 53 rate 100/h burst 100 per /24 id 3 >/dev/null
	check_eq "rule list -j" "$(ctl -j rule list | jq -c '[.[] | [.id, .proto, .dport, .syn]]')" \
		'[[1,null,null,false],[2,"tcp","22",true],[3,"udp","53",false]]'
	check_match "rule list" "$(ctl rule list | grep '^2 ')" "proto tcp dport 22 syn$"
	local i
	for i in 1 2; do	# two sources in one /24: one key of rule 3
		nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -s 198.18.0.$i -d 198.18.0.254 \
			-n 100 -P tcp -p 22 -T 30 -j >/dev/null
		nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -s 198.18.0.$i -d 198.18.0.254 \
			-n 100 -P udp -p 53 -T 30 -j >/dev/null
		nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -s 198.18.0.$i -d 198.18.0.254 \
			-n 100 -P tcp -p 80 -T 30 -j >/dev/null
	done
	local s
	s=$(ctl -j stats)
	check_eq "SSH SYNs per source" "$(jget "$s" '.rules[] | select(.id == 2) | [.passed_packets, .dropped_packets, .new_keys] | join(",")')" "20,180,2"
	check_eq "DNS per /24" "$(jget "$s" '.rules[] | select(.id == 3) | [.passed_packets, .dropped_packets, .new_keys] | join(",")')" "100,100,1"
	# the 180 SYNs and 100 queries the endpoint rules refused first cost the
	# source rule nothing (docs/rules.md, Endpoint rules: Order)
	check_eq "the source rule met the rest" "$(jget "$s" '.rules[] | select(.id == 1) | .passed_packets')" 320
	check_eq "dropped at the interface" "$(jget "$s" '.interfaces[] | select(.ifname == "d0") | .dropped_packets')" 280
	# deleted by id; by prefix, the source rule is meant
	ctl rule del 2 >/dev/null
	check_eq "del by id" "$(ctl -j rule list | jq -c '[.[].id]')" '[1,3]'
	ctl rule del 0.0.0.0/0 >/dev/null
	check_eq "del by prefix: the source rule" "$(ctl -j rule list | jq -c '[.[].id]')" '[3]'
	# the configuration file and the metrics
	write_conf "$CONF" "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10" \
		"rule add 0.0.0.0/0 proto udp dport 53 rate 100/s burst 100 per /24" \
		"rule add 0.0.0.0/0 proto tcp dport 22 syn rate 20/min burst 10"
	local out
	out=$("$RLD_BIN" --check --config "$CONF" 2>&1)
	check_match "duplicate endpoint" "$out" "$CONF:3:10: duplicate prefix 0.0.0.0/0"
}

# show ADDR: the address's keys under the endpoint rules that cover it,
# with or without a source rule.
test_show_endpoint_keys() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 rate 1000/s burst 1000 id 1 >/dev/null
	ctl rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 3 id 7 >/dev/null
	nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -s 198.18.0.9 -d 198.18.0.254 \
		-n 10 -P udp -p 53 -T 30 -j >/dev/null
	nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -s 198.18.1.9 -d 198.18.0.254 \
		-n 10 -P udp -p 53 -T 30 -j >/dev/null
	local out
	out=$(ctl show 198.18.0.9)
	check_match "source rule shown" "$out" "rule:      1 \(198.18.0.0/24, limit\)"
	check_match "endpoint key shown" "$out" "endpoint:  rule 7 \(0.0.0.0/0, proto udp dport 53\), key 198.18.0.9/32: 0 of 3 tokens, 7 dropped"
	check_eq "endpoint key, json" "$(ctl -j show 198.18.0.9 | jq -c '[.endpoints[] | [.rule, .proto, .dport, .tokens, .dropped_packets]]')" '[[7,"udp","53",0,7]]'
	# no source rule: the endpoint key still is one
	out=$(ctl show 198.18.1.9)
	check_match "unmatched by source rules" "$out" "no source rule matches"
	check_match "its endpoint key" "$out" "endpoint:  rule 7 .*key 198.18.1.9/32: 0 of 3 tokens, 7 dropped"
	check_eq "json: rule null, endpoint key" "$(ctl -j show 198.18.1.9 | jq -c '[.rule, [.endpoints[].rule]]')" '[null,[7]]'
}

run_test test_endpoint_rules
run_test test_rule_fields
run_test test_config_check
run_test test_algorithms_on_the_wire
run_test test_dry_run_counted_apart
run_test test_show_endpoint_keys
summary

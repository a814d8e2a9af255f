#!/usr/bin/env bash
# End-to-end: the flood generator against receivers that answer in place
# (XDP_TX), as the benchmark's answer scenarios use it. With -A, xrl-flood
# counts and drops what comes back on its own device (the answers never
# reach the sender's stack, and every frame it sends is written whole
# again); -Q sends DNS queries that xdp-rl's slip answers.
source "$(dirname "$0")/../lib/e2e.sh"

trap cleanup EXIT

# xflood ARGS...: live frames from $SRC to d0 (xrl-flood), prints its JSON
xflood() {
	nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -T 20 -j "$@"
}
# what the sending namespace's UDP layer received (answers that got there)
src_udp_in() {
	nsenter --net="/run/netns/$SRC" awk '
		/^Udp: InDatagrams/ { split($0, h); next }
		/^Udp: [0-9]/ { for (i = 2; i <= NF; i++) if (h[i] ~ /^(InDatagrams|NoPorts|InErrors)$/) s += $i }
		END { print s + 0 }' /proc/net/snmp
}
d0_tx_errors() {
	nsenter --net="/run/netns/$DST" ethtool -S d0 | awk '/rx_queue_[0-9]+_xdp_tx_errors:/ { s += $2 } END { print s + 0 }'
}

# A bare XDP_TX on d0 sends every frame back as it came: every one is
# counted as returned (or lost in d0's transmit ring, which the veth
# counts), none reaches the sender's stack, and the flood keeps sending
# well-formed frames (the second half is answered like the first).
test_answered_bare_tx() {
	lab_up || return
	nsenter --net="/run/netns/$DST" ip link set dev d0 xdpdrv obj "$OUT/xdp_tx.bpf.o" sec xdp ||
		{ fail "cannot attach xdp_tx"; return; }
	local u0 e0 j sent ret other
	u0=$(src_udp_in)
	e0=$(d0_tx_errors)
	j=$(xflood -d 198.18.0.254 -s 198.18.0.1 -p 9 -n 200000 -A)
	sent=$(jget "$j" .sent)
	ret=$(jget "$j" .returned)
	other=$(jget "$j" .returned_other)
	check_eq "all sent" "$sent" 200000
	# (a frame d0 failed to send may still be counted in both)
	check_eq "no more came back than was sent" "$((ret <= sent))" 1
	check_eq "every frame came back, or was lost in d0's ring ($ret + $(($(d0_tx_errors) - e0)))" \
		"$((ret + $(d0_tx_errors) - e0 >= sent))" 1
	check_eq "most came back ($ret)" "$((ret > sent * 9 / 10))" 1
	# the lab's own neighbour discovery, reflected: a few frames at most
	check_eq "little else came back ($other)" "$((other <= 16))" 1
	check_eq "none reached the sender's stack" "$(src_udp_in)" "$u0"
	nsenter --net="/run/netns/$DST" ip link set dev d0 xdpdrv off
}

# DNS queries (-Q) under a slip 1 rule over its limit: every answer the
# rule counts as slipped arrives at the sender and is counted there, and
# the cap's refusals do not.
test_answered_dns_slip() {
	lab_up || return
	ctl attach dev d0 mode native >/dev/null 2>&1 || { fail "cannot attach"; return; }
	ctl rule add 198.18.0.0/24 proto udp dport 53 rate 1/h burst 1 slip 1 id 1 >/dev/null
	local j slipped capped
	j=$(xflood -d 198.18.0.254 -s 198.18.0.1 -p 53 -Q bench.test -n 20000 -A)
	slipped=$(rule_stat 1 slipped_packets)
	capped=$(rule_stat 1 slip_capped_packets)
	check_eq "queries answered" "$((slipped > 0))" 1
	check_eq "the cap refused the rest" "$((capped > 0))" 1
	check_eq "every slipped answer arrived" "$(jget "$j" .returned)" "$slipped"
	check_eq "admitted + slipped + capped" "$((1 + slipped + capped))" "$(jget "$j" .sent)"
}

# -Q's name and protocol are checked
test_query_errors() {
	lab_up || return
	check_match "empty label" "$(xflood -d 198.18.0.254 -p 53 -Q 'a..b' -n 1 2>&1)" "^Error: -Q: a DNS name"
	check_match "label over 63" "$(xflood -d 198.18.0.254 -p 53 -Q "$(printf 'a%.0s' {1..64}).test" -n 1 2>&1)" "^Error: -Q: a DNS name"
	check_match "tcp" "$(xflood -d 198.18.0.254 -P tcp -p 53 -Q bench.test -n 1 2>&1)" "^Error: -Q needs -P udp"
}

run_test test_answered_bare_tx
run_test test_answered_dns_slip
run_test test_query_errors
summary

#!/usr/bin/env bash
# End-to-end: SYN cookies with a real HTTP server and a real client. A
# verified client's first connection completes through SYNPROXY and the
# real listener; a host without what SYNPROXY needs refuses the rule; a
# spoofed SYN flood from a million sources gets cookies, takes no bucket and
# no verified entry, and a client never seen before completes every request
# meanwhile while the listener's queues never overflow.
#
#   ns $SRC   s0 198.18.0.X  (curl; xdp_pass so that XDP_TX answers arrive)
#        --- d0 ---
#   ns $DST   python3 -m http.server :$PORT, xdp-rl on d0 and d1
#        --- d1 ---
#   ns $SRC2  s1 (xrl-flood: spoofed SYNs; xdp_drop discards the answers)
source "$(dirname "$0")/../lib/e2e.sh"

trap cleanup EXIT

# a port of this test's own (from its name), away from the usual ones
PORT=18473
PASS_OBJ="$OUT/xdp_pass.bpf.o"

# the lab with the server up and the client able to receive answers
sc_lab() {
	lab_up || return 1
	# a frame sent back with XDP_TX reaches a veth's peer only while the
	# peer runs an XDP program
	in_src ip link set dev s0 xdpdrv obj "$PASS_OBJ" sec xdp || { fail "cannot attach xdp_pass to s0"; return 1; }
	in_dst sysctl -qw net.ipv4.tcp_syncookies=1
	in_dst sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0 ||
		{ fail "no conntrack in this kernel"; return 1; }
	mkdir -p "$TMPD/www" && echo hello >"$TMPD/www/index.html"
	(cd "$TMPD/www" && exec nsenter --net="/run/netns/$DST" python3 -m http.server \
		--bind :: "$PORT" >"$TMPD/http.log" 2>&1) &
	BG_PIDS+=($!)
	wait_listen "$DST" "$PORT" 5
}

# get ADDR: one request from $SRC; prints the HTTP status (000: none)
get() {
	in_src curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$1:$PORT/"
}

nstat_of() {	# NAME: the server namespace's counter
	in_dst nstat -az "$1" | awk -v n="$1" '$1 == n { print $2 }'
}

# the SYNPROXY table(s) of xdp-rl in the server's namespace (one per
# instance: its name follows the pin directory)
sc_tables() {
	in_dst nft list tables 2>/dev/null | awk '$3 ~ /^xdp_rl_synproxy/ { print $3 }'
}

sc_stat() {	# RULE FIELD
	ctl -j stats | jq -r ".rules[] | select(.id == $1) | .$2"
}

# Every connection completes, the first one of a source never seen too,
# IPv4 and IPv6; SYNPROXY's table is xdp-rl's, and goes with the rule.
test_first_connection() {
	sc_lab || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 1 >/dev/null ||
		{ fail "rule add: $(ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 1 2>&1)"; return; }
	ctl rule add ::/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 2 >/dev/null || { fail "rule add v6"; return; }
	check_match "SYNPROXY's table" "$(in_dst nft list table inet "$(sc_tables | head -1)" 2>&1)" "synproxy mss 1460 wscale 7"
	check_eq "first request" "$(get 198.18.0.254)" 200
	check_eq "second request" "$(get 198.18.0.254)" 200
	check_eq "IPv6 first request" "$(get '[2001:db8:1::fe]')" 200
	check_eq "cookies sent (v4)" "$(sc_stat 1 syn_cookies_sent)" 1
	check_eq "valid ACKs (v4)" "$(sc_stat 1 syn_cookie_acks_valid)" 1
	check_eq "sources verified (v4)" "$(sc_stat 1 syn_cookie_sources_verified)" 1
	check_eq "sources verified (v6)" "$(sc_stat 2 syn_cookie_sources_verified)" 1
	check_eq "verified table" "$(ctl -j stats | jq .global.syn_cookie_verified.entries)" 2
	check_eq "its size" "$(ctl -j stats | jq .global.syn_cookie_verified.size)" 65536
	check_match "rule list" "$(ctl rule list)" "syn-cookies"
	check_eq "the listener took every connection" "$(nstat_of TcpExtListenDrops)" 0
	ctl rule del id 1 >/dev/null && ctl rule del id 2 >/dev/null
	check_match "the table goes with the last syn-cookies rule" \
		"$(sc_tables | wc -l)" 0
}

# Without SYNPROXY's table (deleted behind xdp-rl's back) the stack resets a
# verified client's first connection: the measurement the design rests on.
test_without_synproxy_first_fails() {
	sc_lab || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 1 >/dev/null || { fail "rule add"; return; }
	in_dst nft delete table inet "$(sc_tables | head -1)"
	local rst0 first
	rst0=$(nstat_of TcpOutRsts)
	first=$(get 198.18.0.254)
	check_eq "the first connection fails" "$first" 000
	check_eq "the stack reset it" "$(($(nstat_of TcpOutRsts) - rst0))" 1
	check_eq "after its cookie: an ordinary handshake" "$(get 198.18.0.254)" 200
}

# A host that lacks what SYNPROXY needs refuses the rule, saying what.
test_refused_without_needs() {
	sc_lab || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	local out
	in_dst sysctl -qw net.netfilter.nf_conntrack_tcp_loose=1
	out=$(ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 10/s burst 10 2>&1)
	check_match "loose conntrack refused" "$out" "^Error: .*nf_conntrack_tcp_loose is 1"
	in_dst sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0
	in_dst sysctl -qw net.ipv4.tcp_syncookies=0
	out=$(ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 10/s burst 10 2>&1)
	check_match "no syncookies refused" "$out" "^Error: .*tcp_syncookies is 0"
	check_eq "no rule" "$(ctl -j rule list | jq length)" 0
	check_eq "no table" "$(sc_tables | wc -l)" 0
	out=$(ctl rule add 0.0.0.0/0 proto udp dport $PORT syn-cookies rate 10/s burst 10 2>&1)
	check_match "udp refused" "$out" "^Error: .*'syn-cookies' needs proto tcp"
	out=$(ctl rule add 0.0.0.0/0 syn-cookies rate 10/s burst 10 2>&1)
	check_match "a source rule refused" "$out" "^Error: .*needs 'proto tcp'"
	out=$(ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn syn-cookies rate 10/s burst 10 2>&1)
	check_match "with syn refused" "$out" "^Error: .*leave out 'syn'"
}

# A spoofed SYN flood from 1M IPv6 sources at the generator's full rate
# (bounded: one SYN from each, or 20 s) beside a real client: every request of the
# client completes, each from a source never seen before; the flood takes
# no bucket and no verified entry; the listener never overflows.
test_spoofed_flood() {
	sc_lab || return
	lab_up_src2 || { fail "second sender"; return; }
	ip -n "$SRC2" addr add 2001:db8:2::1/64 dev s1 nodad
	# the attacker discards the SYN-ACKs (and xrl-flood, not attached,
	# writes every frame whole: the answers come back as rewritten pages)
	ip netns exec "$SRC2" ip link set dev s1 xdpdrv obj "$OUT/xdp_drop.bpf.o" sec xdp ||
		{ fail "cannot attach xdp_drop to s1"; return; }
	ctl attach dev d0 >/dev/null && ctl attach dev d1 >/dev/null || { fail "attach"; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 1 >/dev/null &&
		ctl rule add ::/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 2 >/dev/null ||
		{ fail "rule add"; return; }
	local ov0 dr0 fpid ok=0 tries=0 i sent rx tx cookies
	ov0=$(nstat_of TcpExtListenOverflows)
	dr0=$(nstat_of TcpExtListenDrops)
	# bounded by time rather than count: a fast machine sends a million
	# frames in under the half second before the first request, and the
	# client then has no flood to meet
	nsenter --net="/run/netns/$SRC2" "$XFLOOD" -i s1 -m 02:00:00:00:01:fe -d 2001:db8:1::fe \
		-s 2001:db8:ff::/64 -N 1048576 -R 7 -P tcp -p $PORT -n 67108864 -T 4 -j >"$TMPD/flood.json" 2>"$TMPD/flood.err" &
	fpid=$!
	BG_PIDS+=("$fpid")
	sleep 0.5
	# a client from sources never seen before, while the flood runs
	for i in $(seq 2 40); do
		kill -0 "$fpid" 2>/dev/null || break
		in_src ip addr add "198.18.0.$((100 + i))/24" dev s0 2>/dev/null
		ip -n "$DST" neigh replace "198.18.0.$((100 + i))" lladdr $SRC_MAC dev d0 nud permanent
		tries=$((tries + 1))
		[[ $(in_src curl -s -m 5 --interface "198.18.0.$((100 + i))" -o /dev/null -w '%{http_code}' \
			"http://198.18.0.254:$PORT/") == 200 ]] && ok=$((ok + 1))
	done
	wait "$fpid"
	sent=$(jq -r .sent "$TMPD/flood.json")
	# what reached the program on d1, and what it sent back there
	rx=$(in_dst ethtool -S d1 | awk '/rx_queue_[0-9]+_xdp_packets:/ { s += $2 } END { print s + 0 }')
	tx=$(in_dst ethtool -S d1 | awk '/rx_queue_[0-9]+_xdp_tx:/ { s += $2 } END { print s + 0 }')
	cookies=$(sc_stat 2 syn_cookies_sent)
	echo "    flood: $sent sent, $rx reached d1's program, $cookies cookies, $tx sent back; client $ok of $tries"
	check_eq "the client's requests during the flood (of $tries)" "$ok" "$tries"
	check_eq "the flood outlasted some requests" "$((tries >= 2))" 1
	check_eq "the flood reached the program" "$((rx > sent * 9 / 10 && sent > 100000))" 1
	# (ND and MLD of the second sender's stack reach it too: a few)
	check_eq "one cookie per spoofed SYN received" "$((cookies <= rx && cookies + 100 >= rx))" 1
	check_eq "one answer per cookie, no more" "$tx" "$cookies"
	check_eq "no spoofed source verified" "$(sc_stat 2 syn_cookie_sources_verified)" 0
	check_eq "the clients verified" "$(sc_stat 1 syn_cookie_sources_verified)" "$ok"
	check_eq "no bucket for a spoofed source" "$(ctl -j status | jq .keys_tracked.ipv6)" 0
	check_eq "buckets: the real clients only" "$(($(ctl -j status | jq .keys_tracked.ipv4) <= ok))" 1
	check_eq "ListenOverflows flat" "$(nstat_of TcpExtListenOverflows)" "$ov0"
	check_eq "ListenDrops flat" "$(nstat_of TcpExtListenDrops)" "$dr0"
}

# purge removes SYNPROXY's table with the pins
test_purge_removes_table() {
	sc_lab || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 10/s burst 10 >/dev/null || { fail "rule add"; return; }
	check_match "the table" "$(in_dst nft list tables 2>&1)" "xdp_rl_synproxy"
	ctl detach dev d0 purge >/dev/null 2>&1 || ctl detach dev d0 >/dev/null
	ctl purge >/dev/null 2>&1
	check_eq "no table after purge" "$(in_dst nft list tables 2>&1 | grep -c xdp_rl_synproxy)" 0
}

# replay answers a captured SYN with a cookie, and says so per rule
test_replay_counts() {
	lab_up || return
	local cap="$TMPD/syn.pcap" conf="$TMPD/rules.conf" rep
	in_src timeout 5 tcpdump -i s0 -w "$cap" -c 1 "tcp[tcpflags] & tcp-syn != 0" 2>/dev/null &
	local tp=$!
	sleep 0.5
	in_src curl -s -m 2 -o /dev/null "http://198.18.0.254:$PORT/"
	wait "$tp"
	printf 'rule add 0.0.0.0/0 proto tcp dport %s syn-cookies rate 10/s burst 10 id 4\n' $PORT >"$conf"
	rep=$("$CTL_BIN" -j replay "$cap" config "$conf") || { fail "replay: $rep"; return; }
	check_eq "answered" "$(jq .answered_packets <<<"$rep")" 1
	check_eq "neither passed nor dropped" "$(jq '.passed_packets + .dropped_packets' <<<"$rep")" 0
	check_eq "cookies sent" "$(jq '.rules[] | select(.id == 4) | .syn_cookies_sent' <<<"$rep")" 1
	check_match "the text says it" "$("$CTL_BIN" replay "$cap" config "$conf")" "rule 4 syn-cookies: sent 1,"
}

# The host's own outgoing TCP keeps working: a rule without dport, or one
# over the ephemeral ports, is refused; the table's raw chain untracks pure
# SYNs to local addresses only, so that the answer to an outgoing
# connection from one of the ports (on an interface xdp-rl is not even
# attached to) is tracked, not taken for a client's SYN.
test_outgoing_tcp_kept() {
	sc_lab || return
	lab_up_src2 || { fail "second sender"; return; }
	ip -n "$SRC2" addr add 198.19.0.1/24 dev s1
	ip -n "$DST" addr add 198.19.0.254/24 dev d1
	ip -n "$SRC2" link set lo up
	(nsenter --net="/run/netns/$SRC2" python3 -m http.server --bind 198.19.0.1 18474 >/dev/null 2>&1) &
	BG_PIDS+=($!)
	ctl attach dev d0 >/dev/null || { fail attach; return; }
	local out
	out=$(ctl rule add 0.0.0.0/0 proto tcp syn-cookies rate 1000/s burst 1000 2>&1)
	check_match "no dport: refused" "$out" "^Error: .*protects listening ports: give 'dport'"
	out=$(ctl rule add 0.0.0.0/0 proto tcp dport 40000-40100 syn-cookies rate 1000/s burst 1000 2>&1)
	check_match "ephemeral ports: refused" "$out" "^Error: .*overlap the host's own connections' ports"
	# a protected port no one listens on, for the host's own connection
	ctl rule add 0.0.0.0/0 proto tcp dport 18478 syn-cookies rate 1000/s burst 1000 id 1 >/dev/null ||
		{ fail "rule add"; return; }
	check_match "the raw chain takes pure SYNs to local addresses" \
		"$(in_dst nft list table inet "$(sc_tables | head -1)")" "tcp flags syn / fin,syn,rst,ack fib daddr type local notrack"
	local i code=000
	for ((i = 0; i < 40; i++)); do	# the server up
		code=$(in_dst curl -s -m 3 --local-port 18478 -o /dev/null -w '%{http_code}' http://198.19.0.1:18474/)
		[[ $code == 200 ]] && break
		sleep 0.25
	done
	check_eq "an outgoing connection from the rule's port, via d1" "$code" 200
	ctl rule del id 1 >/dev/null
}

# Two instances in one namespace: each has its own table, and neither's
# commit or purge touches the other's.
test_two_instances() {
	sc_lab || return
	lab_up_src2 || { fail "second sender"; return; }
	local B=(nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN-b")
	ctl attach dev d0 >/dev/null || { fail attach; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 1 >/dev/null || { fail "rule add"; return; }
	check_eq "A alone: first request" "$(get 198.18.0.254)" 200
	"${B[@]}" attach dev d1 >/dev/null || { fail "attach B"; return; }
	"${B[@]}" rule add 0.0.0.0/0 proto tcp dport 18475 syn-cookies rate 10/s burst 10 id 1 >/dev/null || fail "B rule add"
	check_eq "two tables" "$(sc_tables | wc -l)" 2
	in_src ip addr add 198.18.0.77/24 dev s0 2>/dev/null
	check_eq "A's new client, first request, after B's commit" \
		"$(in_src curl -s -m 5 --interface 198.18.0.77 -o /dev/null -w '%{http_code}' http://198.18.0.254:$PORT/)" 200
	"${B[@]}" rule del id 1 >/dev/null
	check_eq "B's table gone, A's kept" "$(sc_tables | wc -l)" 1
	in_src ip addr add 198.18.0.78/24 dev s0 2>/dev/null
	check_eq "A's next new client" \
		"$(in_src curl -s -m 5 --interface 198.18.0.78 -o /dev/null -w '%{http_code}' http://198.18.0.254:$PORT/)" 200
	"${B[@]}" detach dev d1 >/dev/null 2>&1
	"${B[@]}" purge >/dev/null 2>&1
}

# until the daemon's rule list has N rules (10 s)
rules_become() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(ctl -j rule list | jq length) == "$1" ]] && return 0
		sleep 0.1
	done
	return 1
}

# The daemon reloads with syn-cookies rules: a reload that leaves their
# ports alone runs no nft; one that changes them rewrites the table with
# the CAP_NET_ADMIN the daemon kept for it.
test_rld_reload() {
	sc_lab || return
	local log="$TMPD/rld.log" conf="$TMPD/rl.conf"
	: >"$log"
	write_conf "$conf" "interface d0" "metrics 127.0.0.1:18476" \
		"rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 100/s burst 100 id 1"
	start_rld "$log" --config "$conf"
	wait_log "$log" "metrics on http://127.0.0.1:18476/metrics" || return
	check_match "CAP_NET_ADMIN kept" "$(cat "$log")" "capabilities: kept cap_bpf, cap_net_admin"
	check_match "table at start" "$(in_dst nft list table inet "$(sc_tables | head -1)" 2>&1)" "dport $PORT"
	check_eq "first request" "$(get 198.18.0.254)" 200
	write_conf "$conf" "interface d0" "metrics 127.0.0.1:18476" \
		"rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 100/s burst 100 id 1" \
		"rule add 198.51.100.0/24 rate 5/s burst 5 id 2"
	kill -HUP "$RLD_PID"
	rules_become 2 || fail "reload, other rule added: $(tail -n 3 "$log" | tr '\n' '|')"
	check_match "table kept" "$(in_dst nft list table inet "$(sc_tables | head -1)" 2>&1)" "dport $PORT"
	write_conf "$conf" "interface d0" "metrics 127.0.0.1:18476" \
		"rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 100/s burst 100 id 1" \
		"rule add 0.0.0.0/0 proto tcp dport 18477 syn-cookies rate 100/s burst 100 id 3" \
		"rule add 198.51.100.0/24 rate 5/s burst 5 id 2"
	kill -HUP "$RLD_PID"
	rules_become 3 || fail "reload, a port added: $(tail -n 3 "$log" | tr '\n' '|')"
	check_match "the new port in the table" "$(in_dst nft list table inet "$(sc_tables | head -1)" 2>&1)" "18477"
	in_src ip addr add 198.18.0.79/24 dev s0 2>/dev/null
	check_eq "a new client after the reloads" \
		"$(in_src curl -s -m 5 --interface 198.18.0.79 -o /dev/null -w '%{http_code}' http://198.18.0.254:$PORT/)" 200
	check_eq "no reload refused" "$(grep -c 'reload refused' "$log")" 0
}

# The verified table's size, set at the first attach (syn-verified N): a
# small table still verifies and lets the clients through; another size for
# the pinned table is refused, the pinned size kept by an attach without it
# and by an upgrade.
test_verified_table_size() {
	sc_lab || return
	local out
	ctl attach dev d0 syn-verified 16 >/dev/null || { fail "attach syn-verified 16"; return; }
	check_eq "its size" "$(ctl -j stats | jq .global.syn_cookie_verified.size)" 16
	ctl rule add 0.0.0.0/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 1 >/dev/null || { fail "rule add"; return; }
	ctl rule add ::/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 id 2 >/dev/null || { fail "rule add v6"; return; }
	check_eq "first request" "$(get 198.18.0.254)" 200
	check_eq "IPv6 first request" "$(get '[2001:db8:1::fe]')" 200
	check_eq "both verified in it" "$(ctl -j stats | jq -c '.global.syn_cookie_verified | [.entries, .size]')" '[2,16]'
	ctl detach dev d0 >/dev/null || fail "detach"
	out=$(ctl attach dev d0 syn-verified 4096 2>&1)
	check_eq "another size: refused" "$?" 1
	check_match "says why and the way out" "$out" \
		"^Error: the pinned table of sources SYN cookies verified holds 16 entries, not 4096: attach without 'syn-verified' to keep it"
	ctl attach dev d0 >/dev/null || { fail "attach without syn-verified"; return; }
	check_eq "kept" "$(ctl -j stats | jq -c '.global.syn_cookie_verified | [.entries, .size]')" '[2,16]'
	out=$(ctl upgrade 2>&1) || fail "upgrade: $out"
	check_eq "kept by an upgrade" "$(ctl -j stats | jq -c '.global.syn_cookie_verified | [.entries, .size]')" '[2,16]'
	check_eq "still verified after it" "$(get 198.18.0.254)" 200
	ctl rule flush >/dev/null
}

run_test test_first_connection
run_test test_verified_table_size
run_test test_without_synproxy_first_fails
run_test test_refused_without_needs
run_test test_spoofed_flood
run_test test_purge_removes_table
run_test test_replay_counts
run_test test_outgoing_tcp_kept
run_test test_two_instances
run_test test_rld_reload
summary

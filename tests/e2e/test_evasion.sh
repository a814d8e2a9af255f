#!/usr/bin/env bash
# End-to-end: packets that would slip past a rule, with the
# real stack answering (or not): tiny first fragments of a SYN, generic
# mode's GRO aggregates, tunnels.
source "$(dirname "$0")/../lib/e2e.sh"

SYNFRAG="$TOP/tests/tools/synfrag.py"

# listen SPEC...: a TCP listener in $DST on each HOST:PORT ("[v6]:port" for
# IPv6), in the background; it never accepts: the kernel answers SYNs
listen() {
	nsenter --net="/run/netns/$DST" python3 -c '
import socket, sys, time
ss = []
for spec in sys.argv[1:]:
    host, port = spec.rsplit(":", 1)
    fam = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host.strip("[]"), int(port)))
    s.listen(1024)
    ss.append(s)
print("listening", flush=True)
time.sleep(120)
' "$@" >"$TMPD/listen.log" 2>&1 &
	BG_PIDS+=($!)
	wait_log "$TMPD/listen.log" '^listening' 5
}

# synack SRC DST SPLIT SPORT: SYNs to DST:22 from SRC (50, whole or split
# into an 8-byte first fragment and the rest), sent from $SRC; how many
# were answered with a SYN-ACK
synack() {
	nsenter --net="/run/netns/$SRC" python3 "$SYNFRAG" -i s0 --smac $SRC_MAC --dmac $DST_MAC \
		-s "$1" -d "$2" -p 22 -n 50 --split "$3" --sport "$4"
}

malformed() {
	ctl -j stats | jq -r '.global.malformed_packets'
}

# IPv4: Linux reassembles an 8-byte first fragment and the rest into a SYN
# (without xdp-rl, in order and reversed); a deny rule of the port then
# answered 35 and 50 of 50. Both fragments are malformed now: 0 answered.
test_tiny_fragments_v4() {
	lab_up || return
	listen 198.18.0.254:22 || return
	check_eq "plain SYNs, no limiter" "$(synack 198.18.0.1 198.18.0.254 plain 41000)" 50
	local inorder reversed
	inorder=$(synack 198.18.0.1 198.18.0.254 inorder 41100)
	reversed=$(synack 198.18.0.1 198.18.0.254 reversed 41200)
	# the stack does reassemble them: the attack is real in this lab
	echo "    no limiter: $inorder and $reversed of 50 fragmented SYNs answered (in order, reversed)"
	((inorder + reversed > 0)) ||
		fail "no limiter: the stack answered none of the fragmented SYNs ($inorder, $reversed)"
	ctl attach dev d0 >/dev/null 2>&1 || { fail "attach"; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport 22 action deny >/dev/null || { fail "rule add"; return; }
	local m0
	m0=$(malformed)
	check_eq "plain SYNs, denied" "$(synack 198.18.0.1 198.18.0.254 plain 41300)" 0
	check_eq "8-byte first fragments, in order" "$(synack 198.18.0.1 198.18.0.254 inorder 41400)" 0
	check_eq "8-byte first fragments, reversed" "$(synack 198.18.0.1 198.18.0.254 reversed 41500)" 0
	check_eq "fragments counted as malformed" "$(($(malformed) - m0))" 200
}

# IPv6: the kernel itself drops a first fragment without the whole TCP
# header (RFC 7112): not answered even without xdp-rl; with it, counted.
test_tiny_fragments_v6() {
	lab_up || return
	listen '[2001:db8:1::fe]:22' || return
	check_eq "plain SYNs, no limiter" "$(synack 2001:db8:1::1 2001:db8:1::fe plain 42000)" 50
	check_eq "8-byte first fragments, in order, no limiter" "$(synack 2001:db8:1::1 2001:db8:1::fe inorder 42100)" 0
	check_eq "8-byte first fragments, reversed, no limiter" "$(synack 2001:db8:1::1 2001:db8:1::fe reversed 42200)" 0
	ctl attach dev d0 >/dev/null 2>&1 || { fail "attach"; return; }
	ctl rule add ::/0 proto tcp dport 22 action deny >/dev/null || { fail "rule add"; return; }
	local m0
	m0=$(malformed)
	check_eq "plain SYNs, denied" "$(synack 2001:db8:1::1 2001:db8:1::fe plain 42300)" 0
	check_eq "8-byte first fragments, in order" "$(synack 2001:db8:1::1 2001:db8:1::fe inorder 42400)" 0
	check_eq "8-byte first fragments, reversed" "$(synack 2001:db8:1::1 2001:db8:1::fe reversed 42500)" 0
	check_eq "fragments counted as malformed" "$(($(malformed) - m0))" 200
}

# Generic mode runs after GRO: one TCP stream's aggregates (tens of
# segments each) were metered as one packet each, and a rule of 100/s
# burst 20 let some 6,500 segments through in 3 s. A packet rule now
# counts an aggregate's segments: what passes stays within burst + rate * t.
test_gro_generic_segments() {
	lab_up || return
	ctl attach dev d0 mode generic >/dev/null 2>&1 || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 100/s burst 20 id 1 >/dev/null || { fail "rule add"; return; }
	in_dst iperf3 -s -1 -B 198.18.0.254 -p 5201 >/dev/null 2>&1 &
	BG_PIDS+=($!)
	wait_listen "$DST" 5201 5 || return
	local t0 t1 out bytes segs bound
	t0=$(date +%s%N)
	out=$(in_src timeout 20 iperf3 -c 198.18.0.254 -B 198.18.0.1 -p 5201 -t 3 -J 2>/dev/null)
	t1=$(date +%s%N)
	bytes=$(jq -r '.end.sum_received.bytes // 0' <<<"$out")
	# segments of 1448 bytes of payload (MTU 1500, TCP timestamps), the
	# limit over the whole run with half as much again for margin
	segs=$(( (bytes + 1447) / 1448 ))
	bound=$(( 20 + 100 * (t1 - t0) / 1000000000 * 3 / 2 + 20 ))
	echo "    generic, 100/s burst 20: $bytes bytes ($segs segments) in $(( (t1 - t0) / 1000000 )) ms; bound $bound; rule: $(ctl -j stats | jq -c '.rules[] | select(.id == 1) | [.passed_packets, .passed_bytes, .dropped_packets]')"
	((bytes > 0)) || fail "the stream got nothing through ($out)"
	((segs <= bound)) || fail "$segs segments passed, more than burst + rate * t ($bound with margin)"
}

# vxlan_up: a VXLAN tunnel over the lab's veth (VNI 42, UDP 4789), vx0 in
# each namespace: inner 198.51.100.1 in $SRC, 198.51.100.254 in $DST
vxlan_up() {
	local ns laddr remote inner peer mac peermac dev
	for ns in "$SRC" "$DST"; do
		if [[ $ns == "$SRC" ]]; then
			laddr=198.18.0.1 remote=198.18.0.254 inner=198.51.100.1 peer=198.51.100.254
			mac=02:00:00:00:42:01 peermac=02:00:00:00:42:fe dev=s0
		else
			laddr=198.18.0.254 remote=198.18.0.1 inner=198.51.100.254 peer=198.51.100.1
			mac=02:00:00:00:42:fe peermac=02:00:00:00:42:01 dev=d0
		fi
		ip -n "$ns" link add vx0 address $mac type vxlan id 42 local $laddr remote $remote \
			dstport 4789 dev $dev || return 1
		ip -n "$ns" addr add $inner/24 dev vx0 || return 1
		ip -n "$ns" link set vx0 up || return 1
		ip -n "$ns" neigh add $peer lladdr $peermac dev vx0 nud permanent || return 1
	done
}

# udp_through N PORT: N datagrams from the inner source 198.51.100.1 to
# 198.51.100.254:PORT through the tunnel; how many the receiver got
udp_through() {
	nsenter --net="/run/netns/$DST" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.254", int(sys.argv[2])))
s.settimeout(0.2)
print("bound", flush=True)
n, end = 0, time.monotonic() + 4
while time.monotonic() < end and n < int(sys.argv[1]):
    try:
        s.recv(2048)
        n += 1
    except socket.timeout:
        pass
print(n, flush=True)
' "$1" "$2" >"$TMPD/udp.$2" 2>&1 &
	local rx=$!
	BG_PIDS+=($rx)
	wait_log "$TMPD/udp.$2" '^bound' 5 || return
	in_src python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.51.100.1", 0))
for i in range(int(sys.argv[1])):
    s.sendto(b"x" * 64, ("198.51.100.254", int(sys.argv[2])))
    time.sleep(0.01)
' "$1" "$2"
	wait $rx 2>/dev/null
	tail -n 1 "$TMPD/udp.$2"
}

# Only the outer header is metered: on the underlay veth the tunnel's
# datagrams are from the outer source, and a deny rule of the inner source
# sees nothing of it (20 of 20 delivered); attached to the VXLAN device
# itself, the program sees the inner packets and the rule drops them.
test_vxlan_outer_header_only() {
	lab_up || return
	vxlan_up || { fail "cannot build the tunnel"; return; }
	check_eq "no limiter" "$(udp_through 20 9000)" 20
	ctl attach dev d0 >/dev/null 2>&1 || { fail "attach d0"; return; }
	ctl rule add 198.51.100.0/24 action deny id 1 >/dev/null || { fail "rule add"; return; }
	check_eq "on the underlay: the inner source not seen" "$(udp_through 20 9001)" 20
	check_eq "the inner source's rule dropped nothing" "$(rule_stat 1 dropped_packets)" 0
	ctl detach dev d0 >/dev/null 2>&1
	ctl attach dev vx0 >/dev/null 2>&1 || { fail "attach vx0"; return; }
	echo "    on vx0: $(ip -n "$DST" -d link show vx0 | grep -o "xdp[a-z]*" | head -n 1)"
	check_eq "on the VXLAN device: denied" "$(udp_through 20 9002)" 0
	check_eq "the inner source's rule dropped them" "$(rule_stat 1 dropped_packets)" 20
	ctl detach dev vx0 purge >/dev/null 2>&1
}

# replay runs the same program: the split SYNs of a capture are malformed
# there too (both fragments passed a deny rule of the port before)
test_tiny_fragments_replay() {
	local f
	printf '%s\n' "rule add 0.0.0.0/0 proto tcp dport 22 action deny" \
		"rule add ::/0 proto tcp dport 22 action deny" >"$TMPD/replay.conf"
	for f in 198.18.0.1,198.18.0.254,inorder 198.18.0.1,198.18.0.254,reversed \
		2001:db8:1::1,2001:db8:1::fe,inorder; do
		IFS=, read -r s d split <<<"$f"
		python3 "$SYNFRAG" --pcap "$TMPD/syn.pcap" --smac $SRC_MAC --dmac $DST_MAC \
			-s "$s" -d "$d" -p 22 -n 50 --split "$split" || { fail "pcap"; return; }
		check_eq "replay $f: passed, dropped, malformed" \
			"$("$CTL_BIN" -j replay "$TMPD/syn.pcap" config "$TMPD/replay.conf" |
			   jq -c '[.passed_packets, .dropped_packets, .malformed_packets]')" '[0,100,100]'
	done
}

run_test test_tiny_fragments_v4
run_test test_tiny_fragments_v6
run_test test_tiny_fragments_replay
run_test test_gro_generic_segments
run_test test_vxlan_outer_header_only
summary

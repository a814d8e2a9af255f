#!/usr/bin/env bash
# End-to-end: DNS slip with real clients. dnsmasq in the receiving
# namespace answers over UDP and TCP; a source over its rate under 'slip 2'
# gets a truncated response for exactly every second refused query, each
# no larger than its query on a tcpdump capture; dig from that source gets
# its answer over TCP; dnsperf, a polite client, keeps its answers beside a
# spoofed flood; the host's cap holds under a spoofed flood of a million
# sources.
source "$(dirname "$0")/../lib/e2e.sh"

trap cleanup EXIT

DNS4=198.18.0.254
DNSMASQ_PID=

# the lab, with the sender's end taking what XDP_TX sends back, and
# dnsmasq on d0's addresses, in the receiving namespace: no upstream, no
# hosts file, no configuration file; it answers slip.test
lab_up() {
	lab_up_veth && tx_peer && dns_up
}

# a veth delivers what its XDP program sends back (XDP_TX) only to a peer
# with an XDP program of its own (the kernel's veth schedules the peer's
# NAPI for it only then; GRO alone leaves the frame in the peer's ring):
# one that passes everything, on s0, which this test created
tx_peer() {
	ip -n "$SRC" link set dev s0 xdpdrv obj "$OUT/xrl_test_progs.bpf.o" program xdp_pass_all ||
		{ fail "cannot attach a pass program to s0"; return 1; }
}

dns_up() {
	in_dst dnsmasq --keep-in-foreground --pid-file="$TMPD/dnsmasq.pid" --conf-file=/dev/null \
		--port 53 --listen-address=$DNS4 --listen-address=2001:db8:1::fe --bind-interfaces \
		--no-resolv --no-hosts --address=/slip.test/198.18.0.77 --user=root \
		--log-facility="$TMPD/dnsmasq.log" &
	BG_PIDS+=($!)
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s "$TMPD/dnsmasq.pid" ]] && in_dst ss -lnu | grep -q "$DNS4:53 " &&
			in_dst ss -lnt | grep -q "$DNS4:53 " && break
		sleep 0.1
	done
	DNSMASQ_PID=$(cat "$TMPD/dnsmasq.pid" 2>/dev/null)
	[[ -n $DNSMASQ_PID && $(cat "/proc/$DNSMASQ_PID/comm" 2>/dev/null) == dnsmasq ]] ||
		{ fail "no dnsmasq in $TMPD/dnsmasq.pid: $(cat "$TMPD/dnsmasq.log" 2>/dev/null)"; return 1; }
	BG_PIDS+=("$DNSMASQ_PID")
}

# queries SRC N [EDNS [ID]]: N queries for slip.test A from SRC, with IDs
# from ID on (default 0x1000), sent at once; then a second of answers. Prints "answers
# truncated": answers with TC=0 (dnsmasq's), and with TC=1 and no records.
queries() {
	in_src python3 - "$1" "$2" "${3:-0}" "${4:-4096}" <<'EOF'
import socket, struct, sys, time
src, n, edns, base = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6 if ':' in src else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 0))
dst = '2001:db8:1::fe' if ':' in src else '198.18.0.254'
name = b'\x04slip\x04test\x00'
for i in range(n):
    q = struct.pack('>HHHHHH', base + i, 0x0100, 1, 0, 0, 1 if edns else 0) + name + b'\x00\x01\x00\x01'
    if edns:
        q += b'\x00\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00'
    s.sendto(q, (dst, 53))
s.settimeout(0.2)
answers = truncated = 0
end = time.time() + 1.0
while time.time() < end:
    try:
        r = s.recv(2048)
    except socket.timeout:
        continue
    _, flags, qd, an, ns, ar = struct.unpack('>HHHHHH', r[:12])
    if flags & 0x0200:
        truncated += an == 0 and ns == 0 and ar == 0 and qd == 1 and (flags & 0x8000) != 0
    else:
        answers += 1
print(answers, truncated)
EOF
}

# capture_start FILE: tcpdump of UDP/53 on s0, both ways
capture_start() {
	# nsenter itself, not a function around it: $! is tcpdump then
	nsenter --net="/run/netns/$SRC" tcpdump -i s0 -nn -U -w "$1" udp port 53 2>"$1.log" &
	CAP_PID=$!
	BG_PIDS+=("$CAP_PID")
	local i
	for ((i = 0; i < 50; i++)); do
		grep -q "listening on" "$1.log" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "tcpdump did not start: $(cat "$1.log")"
	return 1
}
capture_stop() {
	sleep 0.3
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
}

# sizes FILE: every truncated response of the capture against its query
# (by DNS ID): prints "pairs larger", larger being the responses longer
# than their query on the wire
sizes() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
magic = struct.unpack('<I', d[:4])[0]
e = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
off, q, r = 24, {}, {}
while off + 16 <= len(d):
    _, _, incl, orig = struct.unpack(e + 'IIII', d[off:off + 16])
    f = d[off + 16:off + 16 + incl]
    off += 16 + incl
    l3, et = 14, struct.unpack('>H', f[12:14])[0]
    while et in (0x8100, 0x88a8):
        et, l3 = struct.unpack('>H', f[l3 + 2:l3 + 4])[0], l3 + 4
    l4 = l3 + (40 if et == 0x86dd else (f[l3] & 15) * 4)
    sport, dport = struct.unpack('>HH', f[l4:l4 + 4])
    dns = f[l4 + 8:]
    ident, flags = struct.unpack('>HH', dns[:4])
    if dport == 53 and not flags & 0x8000:
        q[ident] = orig
    elif sport == 53 and flags & 0x0200:
        r[ident] = orig
pairs = [i for i in r if i in q]
print(len(pairs), sum(1 for i in pairs if r[i] > q[i]))
EOF
}

# slip 2: of 20 refused queries of a source, exactly 10 answered truncated,
# none larger than its query on the capture; the first five within the
# burst are dnsmasq's own answers
test_slip_every_second() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 proto udp dport 53 rate 1/h burst 5 slip 2 id 1 >/dev/null
	ctl rule add 2001:db8:1::/48 proto udp dport 53 rate 1/h burst 5 slip 2 id 2 >/dev/null
	capture_start "$TMPD/slip.pcap" || return
	check_eq "IPv4: 5 answers, 10 truncated of 20 refused" "$(queries 198.18.0.1 25)" "5 10"
	check_eq "IPv4 with EDNS: 10 more truncated of 20" "$(queries 198.18.0.1 20 1 8192)" "0 10"
	check_eq "IPv6: 5 answers, 10 truncated of 20 refused" "$(queries 2001:db8:1::1 25 1 12288)" "5 10"
	capture_stop
	check_eq "every truncated response on the wire, none larger than its query" \
		"$(sizes "$TMPD/slip.pcap")" "30 0"
	local s
	s=$(ctl -j stats)
	check_eq "slipped" "$(jget "$s" '.rules[] | select(.id == 1) | .slipped_packets')" 20
	check_eq "dropped: every refusal" "$(jget "$s" '.rules[] | select(.id == 1) | .dropped_packets')" 40
	check_eq "IPv6 slipped" "$(jget "$s" '.rules[] | select(.id == 2) | .slipped_packets')" 10
	check_eq "global answered" "$(jget "$s" '.global.answered_packets')" 30
	check_eq "d0 answered" "$(jget "$s" '.interfaces[] | select(.ifname == "d0") | .answered_packets')" 30
	check_eq "no hot-key cache for a slipping rule" \
		"$(jget "$s" '.rules[] | select(.id == 1) | .hot_dropped_packets')" 0
	check_match "stats says so" "$(ctl stats)" "rule 1 slip 2: answered 20 \(truncated\), not a query 0, over the cap 0"
	check_match "rule list" "$(ctl rule list)" "proto udp dport 53 slip 2"
	check_match "rule list config" "$(ctl rule list config)" "slip 2"
	# the capture replayed through the program: the same answers (the
	# rate refills nothing meanwhile); the responses in it meet no rule
	ctl rule list config >"$TMPD/slip.conf"
	local r
	r=$("$CTL_BIN" -j replay "$TMPD/slip.pcap" config "$TMPD/slip.conf")
	check_eq "replay: answered" "$(jget "$r" .answered_packets)" 30
	check_eq "replay: rule 1 slipped" "$(jget "$r" '.rules[] | select(.id == 1) | .slipped_packets')" 20
	check_eq "replay: rule 2 slipped" "$(jget "$r" '.rules[] | select(.id == 2) | .slipped_packets')" 10
	check_match "replay says so" "$("$CTL_BIN" replay "$TMPD/slip.pcap" config "$TMPD/slip.conf")" \
		"answered 30 \(DNS slip"
}

# dig from a source over its rate: the truncated response sends it to TCP,
# which the UDP rule does not meter, and it gets its answer
test_dig_over_tcp() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 proto udp dport 53 rate 1/h burst 2 slip 2 id 1 >/dev/null
	# the burst, then one refusal: the next one is the key's second
	check_eq "the burst and one refusal" "$(queries 198.18.0.1 3)" "2 0"
	local out
	out=$(in_src dig -b 198.18.0.1 @$DNS4 slip.test A +tries=1 +timeout=2 2>&1)
	check_match "dig was told to use TCP" "$out" "Truncated, retrying in TCP mode"
	check_match "dig got its answer" "$out" "slip\.test\.[[:space:]]+0[[:space:]]+IN[[:space:]]+A[[:space:]]+198\.18\.0\.77"
	check_match "over TCP" "$out" "\(TCP\)"
	check_eq "slipped" "$(rule_stat 1 slipped_packets)" 1
	# a rule that cannot see DNS is refused
	check_match "slip on tcp refused" "$(ctl rule add 198.18.0.0/24 proto tcp dport 53 rate 1/s burst 1 slip 2 2>&1)" \
		"'slip' needs proto udp"
}

# dnsperf, polite (5 queries a second, within its rate), beside a spoofed
# flood of a million sources far over their keys' rate: its key never
# refuses, and it keeps its answers (but for what a busy lab loses)
test_polite_beside_flood() {
	lab_up || return
	ctl attach dev d0 >/dev/null
	ctl rule add 198.18.0.0/24 proto udp dport 53 rate 10/s burst 10 slip 2 id 1 >/dev/null
	ctl rule add 2001:db8::/32 proto udp dport 53 rate 1/h burst 1 per /48 slip 2 id 2 >/dev/null
	printf 'slip.test A\n' >"$TMPD/queries"
	spoof 1000000 >"$TMPD/spoof.out" &
	local fpid=$!
	BG_PIDS+=("$fpid")
	sleep 0.5
	in_src dnsperf -s $DNS4 -a 198.18.0.1 -d "$TMPD/queries" -Q 5 -l 4 -t 2 -c 1 \
		>"$TMPD/dnsperf.out" 2>&1
	local flood_ran
	flood_ran=$(($(rule_stat 2 dropped_packets) > 0))
	wait "$fpid"
	local sent lost
	sent=$(awk '/Queries sent:/ { print $3 }' "$TMPD/dnsperf.out")
	lost=$(awk '/Queries lost:/ { print $3 }' "$TMPD/dnsperf.out")
	echo "    dnsperf: sent $sent, lost $lost; flood: $(cat "$TMPD/spoof.out") sent, $(rule_stat 2 slipped_packets) slipped"
	check_eq "the flood ran beside it" "$flood_ran" 1
	check_eq "dnsperf sent its queries" "$((${sent:-0} >= 15))" 1
	check_eq "the polite key never refused" "$(rule_stat 1 dropped_packets)" 0
	check_eq "dnsperf kept its answers (lost at most 5 %)" "$((${lost:-99} * 20 <= ${sent:-0}))" 1
}

# spoof SOURCES: one DNS query from each of SOURCES IPv6 addresses, every
# one its own /64 (2001:db8:K:H::1, K the /48 of 65536, H 0 .. 15), sent
# from s0 through a packet socket as fast as it goes; prints the count.
# (xrl-flood's live frames cannot be answered: the pages that XDP_TX sends
# back are the generator's own, and it stalls once they are out.)
spoof() {
	in_src python3 - "$1" <<'EOF2'
import socket, struct, sys
n = int(sys.argv[1])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('s0', 0))
eth = bytes.fromhex('0200000000fe' '020000000001' '86dd')
dns = bytes.fromhex('5a17010000010000000000000573706f6f660474657374000001' '0001')
udp_len = 8 + len(dns)
dst = socket.inet_pton(socket.AF_INET6, '2001:db8:1::fe')
head = struct.pack('>IHBB', 6 << 28, udp_len, 17, 64)
udp = struct.pack('>HHHH', 40000, 53, udp_len, 0) + dns
pre = b'\x20\x01\x0d\xb8'
tail = b'\x00\x00\x00\x00\x00\x00\x00\x01'
sent = 0
for i in range(n):
    src = pre + struct.pack('>HH', i & 0xffff, i >> 16) + tail
    try:
        s.send(eth + head + src + dst + udp)
        sent += 1
    except OSError:
        pass
print(sent)
EOF2
}

# a spoofed flood of a million IPv6 sources, keyed per /48 (65536 keys of
# about 15 sources each), each key refused after its first query under
# slip 1: the answers stay under the host's cap, and the cap refused the
# rest
test_cap_spoofed_million() {
	# no server: the first query of each key, within its burst, meets a
	# closed port
	lab_up_veth || return
	ctl attach dev d0 >/dev/null
	ctl rule add 2001:db8::/32 proto udp dport 53 rate 1/h burst 1 per /48 slip 1 id 1 >/dev/null
	local t0 t1 s sent slipped capped bound
	t0=$(date +%s.%N)
	sent=$(spoof 1000000)
	t1=$(date +%s.%N)
	s=$(ctl -j stats)
	slipped=$(jget "$s" '.rules[] | select(.id == 1) | .slipped_packets')
	capped=$(jget "$s" '.rules[] | select(.id == 1) | .slip_capped_packets')
	# burst + rate x the whole time + a chunk less one per CPU
	bound=$(awk -v a="$t0" -v b="$t1" -v c="$(nproc)" 'BEGIN { printf "%d", 1000 + 10000 * (b - a) + 15 * c }')
	echo "    $sent queries from a million sources in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s: slipped $slipped, capped $capped (bound $bound)"
	check_eq "every query sent" "$sent" 1000000
	check_eq "every query met the rule" \
		"$(jget "$s" '.rules[] | select(.id == 1) | .passed_packets + .dropped_packets')" 1000000
	check_eq "every /48 a key" "$(jget "$s" '.rules[] | select(.id == 1) | .new_keys')" 65536
	check_eq "answers within the cap" "$((slipped <= bound))" 1
	check_eq "the cap refused the rest" "$((slipped + capped))" $((1000000 - 65536))
	check_eq "the cap was reached" "$((capped > 0))" 1
	check_eq "every answer counted globally" "$(jget "$s" '.global.answered_packets')" "$slipped"
}

run_test test_slip_every_second
run_test test_dig_over_tcp
run_test test_polite_beside_flood
run_test test_cap_spoofed_million
summary

#!/usr/bin/env bash
# The SYN-cookie benchmark (make bench, part syncookies; or alone):
#
#   ns $GEN: s0 (xrl-flood -A: counts and drops the answers) --- d0 :ns $RCV
#   xrl-flood on s0: SYNs to TCP/$PORT from 1M spoofed IPv6 sources
#
# cookies    SYN-ACKs answered per second: xdp-rl's syn-cookies rule against
#            a bare XDP_TX of the same frames (xdp_tx: not a byte changed)
# spoof      the same spoofed-SYN flood against xdp-rl, nftables' SYNPROXY
#            and ip6tables' SYNPROXY, each set up as its documentation says
#            (SYNs untracked in raw prerouting, SYNPROXY on INVALID,UNTRACKED
#            in input, the rest of INVALID dropped; nf_conntrack_tcp_loose=0)
#
# The answers are counted where they arrive (xrl-flood's own program on s0
# drops and counts them, so the generator keeps its pace: with another
# program on s0 it would re-image the XDP dispatcher every call), per second
# of the flood; every contender runs in turn in ROUNDS interleaved rounds of DUR
# seconds; medians with min and max. Environment: ROUNDS (3), DUR (2), OUT
# (.output/bench).
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-2}
OUT=${OUT:-$TOP/.output/bench}
PORT=18473
DST6=2001:db8:ffff::fe
source "$TOP/tests/bench/bench_lab.sh"

bench_lab_init sc
RESULTS="$TMPD/sc.jsonl"

lab_build -d $DST6/64 || exit 1
in_dst sysctl -qw net.ipv4.tcp_syncookies=1 net.netfilter.nf_conntrack_tcp_loose=0 || exit 1
# the stack's answers (SYNPROXY's) to the spoofed sources: one route, one
# permanent neighbour, no neighbour discovery for a million addresses
in_dst ip -6 neigh add 2001:db8:ffff::1 lladdr $SRC_MAC dev d0 nud permanent || exit 1
in_dst ip -6 route add 2001:db8:ff::/64 via 2001:db8:ffff::1 dev d0 || exit 1

# ---- contenders ----
setup_xdp_tx() { in_dst ip link set dev d0 xdpdrv obj "$TOP/.output/xdp_tx.bpf.o" sec xdp; }
teardown_xdp_tx() { in_dst ip link set dev d0 xdpdrv off; }
setup_xdprl() {
	ctl attach dev d0 mode native >/dev/null 2>&1 &&
		ctl rule add ::/0 proto tcp dport $PORT syn-cookies rate 1000/s burst 1000 >/dev/null
}
teardown_xdprl() { ctl detach dev d0 purge >/dev/null; }
setup_nft_synproxy() {
	in_dst nft -f - <<EOF
table ip6 xrlbench {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		tcp dport $PORT tcp flags syn notrack
	}
	chain in {
		type filter hook input priority filter; policy accept;
		tcp dport $PORT ct state invalid,untracked synproxy mss 1440 wscale 7 timestamp sack-perm
		ct state invalid drop
	}
}
EOF
}
teardown_nft_synproxy() { in_dst nft delete table ip6 xrlbench; }
setup_ip6tables_synproxy() {
	in_dst ip6tables -t raw -A PREROUTING -p tcp --dport $PORT --syn -j CT --notrack &&
		in_dst ip6tables -A INPUT -p tcp --dport $PORT -m conntrack --ctstate INVALID,UNTRACKED \
			-j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1440 &&
		in_dst ip6tables -A INPUT -m conntrack --ctstate INVALID -j DROP
}
teardown_ip6tables_synproxy() {
	in_dst ip6tables -t raw -F PREROUTING
	in_dst ip6tables -F INPUT
}

# run_one ROUND SCENARIO CONTENDER: one measurement, one JSON line
run_one() {
	local r=$1 sc=$2 c=$3 gen
	"setup_$c" || { log "Error: cannot set up $c"; return 1; }
	gen=$(in_src "$FLOOD" -i s0 -m 02:00:00:00:00:fe -d $DST6 -s 2001:db8:ff::/64 -N 1048576 \
		-R "$r" -P tcp -p $PORT -n 50000000 -T "$DUR" -A -j 2>/dev/null)
	"teardown_$c"
	jq -c --argjson r "$r" --arg sc "$sc" --arg c "$c" \
		'{round: $r, scenario: $sc, contender: $c, sent: .sent, seconds: .seconds,
		  offered_pps: .pps, answers: .returned, answers_pps: .returned_pps}' <<<"$gen" >>"$RESULTS"
	log "   round $r  $sc  $c: $(tail -n 1 "$RESULTS" | jq -r '"\(.answers_pps | round) answers/s of \(.offered_pps | round) SYN/s"')"
}

declare -A CONTENDERS=(
	[cookies]="xdp_tx xdprl"
	[spoof]="xdprl nft_synproxy ip6tables_synproxy"
)
declare -A LABEL=(
	[xdp_tx]="bare XDP_TX of the same frames" [xdprl]="xdp-rl syn-cookies"
	[nft_synproxy]="nftables SYNPROXY" [ip6tables_synproxy]="ip6tables SYNPROXY"
)
declare -A BASE=([cookies]=xdp_tx [spoof]=xdprl)

for sc in cookies spoof; do
	log "== syncookies: $sc"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in ${CONTENDERS[$sc]}; do
			run_one "$r" "$sc" "$c" || exit 1
		done
	done
done
cp "$RESULTS" "$OUT/syncookies_runs.jsonl"
{
	for sc in cookies spoof; do
		echo
		echo "| $sc: 1M spoofed IPv6 sources | answers/s (median, min–max) | offered SYN/s | × ${LABEL[${BASE[$sc]}]} |"
		echo "|---|---:|---:|---:|"
		for c in ${CONTENDERS[$sc]}; do
			jq -sr --arg sc "$sc" --arg c "$c" --arg b "${BASE[$sc]}" --arg name "${LABEL[$c]}" '
				(map(select(.scenario == $sc and .contender == $b)) |
				 map({key: (.round | tostring), value: .answers_pps}) | from_entries) as $base |
				map(select(.scenario == $sc and .contender == $c)) | sort_by(.answers_pps) as $g |
				$g[length / 2 | floor] as $m |
				(map(.answers_pps / $base[.round | tostring]) | sort | .[length / 2 | floor]) as $ratio |
				"| \($name) | \($m.answers_pps | round) (\($g[0].answers_pps | round)–\($g[-1].answers_pps | round)) | \($m.offered_pps | round) | \($ratio * 100 | round / 100) |"' \
				"$RESULTS"
		done
	done
} >"$OUT/syncookies.md"
cat "$OUT/syncookies.md" >&2

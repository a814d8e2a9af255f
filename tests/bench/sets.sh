#!/usr/bin/env bash
# sudo tests/bench/sets.sh: a deny set of 1,000,000 prefixes (IPv4 and IPv6
# of random lengths, tests/tools/setgen) in xdp-rl, in an nftables interval
# set (netdev ingress) and in an ipset hash:net matched by iptables (raw
# PREROUTING), with no filter and a bare XDP_DROP beside them, on a veth lab
# of its own:
#
#   ns $GEN: s0 ---- veth ---- d0 :ns $RCV   (contender on d0)
#
# For each contender: the time to load the list, its memory where it says
# it, then floods of DUR seconds from one source in the set ("hit": dropped
# by the set) and from one outside it ("miss": the set looked up, then
# dropped by a rule after it, so that no contender pays the stack), ROUNDS
# rounds each, median Mpps. One CPU sends and receives (taskset -c 0): the
# rate is the cost of sending plus the cost of receiving, so the ratios to
# bare XDP_DROP are the claim, not the nanoseconds.
#
# Environment: ROUNDS (3), DUR (seconds per flood, 1.5), N (prefixes,
# 1000000), OUT (.output/bench), CONTENDERS_ONLY.
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

[[ $(id -u) -eq 0 ]] || { echo "Error: the benchmark needs root" >&2; exit 1; }
for t in nft ipset iptables-legacy ip6tables-legacy bc jq; do
	command -v "$t" >/dev/null || { echo "Error: $t is missing (scripts/deps.sh)" >&2; exit 1; }
done

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-1.5}
N=${N:-1000000}
OUTD=${OUT:-$TOP/.output/bench}
BIN=$TOP/.output
CTL_BIN=$BIN/xdp-rlctl
FLOOD=$BIN/xrl-flood
XDPREF=$BIN/xdp-ref
SETGEN=$BIN/setgen
source "$TOP/tests/lib/lab.sh"
HIT=198.18.0.1		# in the set
MISS=198.18.0.3		# in no set
DST4=198.19.255.254
IPT_SET4=xrlb4	# ipset sets live in the receiving namespace
IPT_SET6=xrlb6

log() { printf '%s\n' "$*" >&2; }
cleanup() {
	set +e
	unload_ipset 2>/dev/null
	unload_nft 2>/dev/null
	lab_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM
lab_init sb || exit 1
TMPD=$LAB_TMP
PIN=$LAB_PIN
in_gen() { in_src "$@"; }
in_rcv() { in_dst "$@"; }
ctl() { in_rcv "$CTL_BIN" --pin-dir "$PIN" "$@"; }

lab_build -s $HIT/15 -s $MISS/15 -d $DST4/15 || { log "Error: cannot build the lab"; exit 1; }

log "generating $N prefixes"
{ "$SETGEN" $((N - 1)) 21; echo "$HIT"; } >"$TMPD/set.txt"
grep -v : "$TMPD/set.txt" >"$TMPD/set4.txt"
grep : "$TMPD/set.txt" >"$TMPD/set6.txt"
log "  $(wc -l <"$TMPD/set4.txt") IPv4, $(wc -l <"$TMPD/set6.txt") IPv6"

# ---- contenders: load_NAME (prints its load time, s), on_NAME / off_NAME
# (the hook only: every list stays loaded, so that rounds interleave),
# unload_NAME, mem_NAME ----
now() { date +%s.%N; }

load_none() { echo 0; }
on_none() { :; }
off_none() { :; }
unload_none() { :; }
mem_none() { echo -; }

load_xdp_drop() { echo 0; }
on_xdp_drop() { in_rcv "$XDPREF" d0 drop native >/dev/null; }
off_xdp_drop() { in_rcv "$XDPREF" d0 off; }
unload_xdp_drop() { :; }
mem_xdp_drop() { echo -; }

# xdp-rl: the set and its rules stay pinned while detached
load_xdprl() {
	local t0 t1
	ctl attach dev d0 mode native >/dev/null 2>&1 || return 1
	t0=$(now)
	ctl set load big "$TMPD/set.txt" >/dev/null || return 1
	t1=$(now)
	ctl rule add @big action deny >/dev/null && ctl rule add 0.0.0.0/0 action deny >/dev/null || return 1
	ctl detach dev d0 >/dev/null || return 1
	echo "$t1 - $t0" | bc
}
on_xdprl() { ctl attach dev d0 mode native >/dev/null 2>&1; }
off_xdprl() { ctl detach dev d0 >/dev/null; }
unload_xdprl() { ctl purge >/dev/null; }
mem_xdprl() { ctl -j set list | jq -r '"\(.[0].memory_bytes) B (\(.[0].memory_bytes / .[0].prefixes) B/prefix, the kernel'"'"'s count)"'; }

# nftables: interval sets (auto-merge: the list's prefixes nest), elements
# added 10000 a line; the chain is the hook
nft_elems() {	# SET FILE
	awk -v s="$1" 'function out() { printf "add element netdev xrlsets %s { %s", s, a[0]; for (i = 1; i < n; i++) printf ", %s", a[i]; print " }"; n = 0 }
	     { a[n++] = $0; if (n == 10000) out() } END { if (n) out() }' "$2"
}
load_nft() {
	local t0 t1
	{
		echo "table netdev xrlsets {"
		echo "  set b4 { type ipv4_addr; flags interval; auto-merge; }"
		echo "  set b6 { type ipv6_addr; flags interval; auto-merge; }"
		echo "}"
		nft_elems b4 "$TMPD/set4.txt"
		nft_elems b6 "$TMPD/set6.txt"
	} >"$TMPD/sets.nft"
	t0=$(now)
	in_rcv nft -f "$TMPD/sets.nft" || return 1
	t1=$(now)
	echo "$t1 - $t0" | bc
}
on_nft() {
	in_rcv nft -f - <<-EOF
	table netdev xrlsets {
	  chain c { type filter hook ingress device d0 priority -500; policy accept;
	    ip saddr @b4 drop
	    ip6 saddr @b6 drop
	    ip saddr 0.0.0.0/0 drop
	  }
	}
	EOF
}
off_nft() { in_rcv nft delete chain netdev xrlsets c; }
unload_nft() { in_rcv nft delete table netdev xrlsets 2>/dev/null; }
mem_nft() { echo "not reported by nft"; }

# ipset hash:net (one set a family) matched in raw PREROUTING, then
# everything else dropped; the rules are the hook
load_ipset() {
	local t0 t1
	{
		echo "create $IPT_SET4 hash:net family inet maxelem 2097152"
		echo "create $IPT_SET6 hash:net family inet6 maxelem 2097152"
		sed "s/^/add $IPT_SET4 /" "$TMPD/set4.txt"
		sed "s/^/add $IPT_SET6 /" "$TMPD/set6.txt"
	} >"$TMPD/ipset.restore"
	t0=$(now)
	in_rcv ipset restore -f "$TMPD/ipset.restore" || return 1
	t1=$(now)
	echo "$t1 - $t0" | bc
}
on_ipset() {
	in_rcv iptables-legacy -t raw -A PREROUTING -m set --match-set "$IPT_SET4" src -j DROP &&
	in_rcv iptables-legacy -t raw -A PREROUTING -j DROP &&
	in_rcv ip6tables-legacy -t raw -A PREROUTING -m set --match-set "$IPT_SET6" src -j DROP
}
off_ipset() {
	in_rcv iptables-legacy -t raw -F
	in_rcv ip6tables-legacy -t raw -F
}
unload_ipset() {
	in_rcv iptables-legacy -t raw -F 2>/dev/null
	in_rcv ip6tables-legacy -t raw -F 2>/dev/null
	in_rcv ipset destroy "$IPT_SET4" 2>/dev/null
	in_rcv ipset destroy "$IPT_SET6" 2>/dev/null
	return 0
}
mem_ipset() {
	local m4 m6
	m4=$(in_rcv ipset list -t "$IPT_SET4" | awk '/^Size in memory/ { print $4 }')
	m6=$(in_rcv ipset list -t "$IPT_SET6" | awk '/^Size in memory/ { print $4 }')
	echo "$((m4 + m6)) B ($(((m4 + m6) / N)) B/prefix, ipset's count)"
}

xmit() {	# delivered frames out of s0 so far
	in_gen ethtool -S s0 | awk '/tx_queue_[0-9]+_xdp_xmit:/ { x += $2 } END { printf "%.0f\n", x }'
}

# flood SRC: Mpps delivered into d0 over DUR seconds
flood() {
	local x0 x1 res
	x0=$(xmit)
	res=$(in_gen taskset -c 0 "$FLOOD" -i s0 -m $DST_MAC -s "$1" -d $DST4 -n 1000000000 -T "$DUR" -j)
	x1=$(xmit)
	jq -n --argjson g "$res" --argjson d $((x1 - x0)) '$d / $g.seconds / 1e6'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

CONTENDERS=(${CONTENDERS_ONLY:-none xdp_drop xdprl nft ipset})
declare -A LABEL=([none]="no filter" [xdp_drop]="bare XDP_DROP" [xdprl]="xdp-rl deny set (native)"
		  [nft]="nftables interval set, netdev ingress" [ipset]="ipset hash:net + iptables raw")
declare -A LOAD MEM HITS MISSES
mkdir -p "$OUTD"
RES="$OUTD/sets.jsonl"
: >"$RES"
for c in "${CONTENDERS[@]}"; do
	log "== loading: ${LABEL[$c]}"
	LOAD[$c]=$("load_$c") || { log "Error: loading $c failed"; exit 1; }
	MEM[$c]=$("mem_$c")
	log "   ${LOAD[$c]} s; memory: ${MEM[$c]}"
done
# rounds interleaved: A B C ... A B C ...
for ((r = 0; r < ROUNDS; r++)); do
	for c in "${CONTENDERS[@]}"; do
		"on_$c" || { log "Error: $c does not hook"; exit 1; }
		HITS[$c]+="$(flood $HIT) "
		MISSES[$c]+="$(flood $MISS) "
		"off_$c"
	done
	log "   round $((r + 1)) of $ROUNDS done"
done
for c in "${CONTENDERS[@]}"; do
	hit=$(tr ' ' '\n' <<<"${HITS[$c]}" | grep . | median)
	miss=$(tr ' ' '\n' <<<"${MISSES[$c]}" | grep . | median)
	log "   ${LABEL[$c]}: hit ${HITS[$c]}; miss ${MISSES[$c]}"
	jq -nc --arg c "$c" --arg lb "${LABEL[$c]}" --argjson load "$(printf "%.3f" "${LOAD[$c]:-0}")" \
		--arg mem "${MEM[$c]}" --argjson hit "$hit" --argjson miss "$miss" --argjson n "$N" \
		'{contender: $c, label: $lb, prefixes: $n, load_s: $load, memory: $mem, hit_mpps: $hit, miss_mpps: $miss}' >>"$RES"
	"unload_$c"
done
# the table: ratios to bare XDP_DROP
jq -rs '(map(select(.contender == "xdp_drop")) | .[0]) as $b |
	"| contender | load (s) | memory | hit Mpps | × XDP_DROP | miss Mpps | × XDP_DROP |",
	"|---|---:|---|---:|---:|---:|---:|",
	(.[] | "| \(.label) | \(.load_s) | \(.memory) | \(.hit_mpps * 100 | round / 100) | \(if $b then (.hit_mpps / $b.hit_mpps * 100 | round / 100) else "-" end) | \(.miss_mpps * 100 | round / 100) | \(if $b then (.miss_mpps / $b.miss_mpps * 100 | round / 100) else "-" end) |")' "$RES"

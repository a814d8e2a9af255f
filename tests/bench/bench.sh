#!/usr/bin/env bash
# sudo make bench: xdp-rl side by side with bare XDP_DROP, nftables meters,
# iptables hashlimit and no filter, on a veth lab of its own.
#
#   ns $GEN: s0 ---- veth ---- d0 :ns $RCV   (contender on d0; GRO on)
#   xrl-flood on s0: BPF_PROG_RUN live frames redirected out of s0
#
# Every limiter gets the same rule: per source /32 (IPv6 /64), 100 packets/s,
# burst 20, drop above. For each scenario, every contender runs in turn, in
# several interleaved rounds (A B C ... A B C ...); medians are reported with
# min and max. Floods are bounded in time (DUR seconds) and count.
#
# Then goodput with real software on both ends (Debian packages, started and
# stopped here, inside the lab):
#   TCP bulk: iperf3 from $GEN to $RCV through d0 with no XDP program, a bare
#     XDP_PASS, xdp-rl native and generic (a rule that admits everything)
#   DNS under a flood: dnsmasq on d0's address answers dnsperf at a fixed
#     rate from one address while xrl-flood floods port 53 from another;
#     no limiter, an nftables meter (netdev ingress), xdp-rl native
#
# Environment: ROUNDS (3), DUR (seconds per flood run, 1.5), GP_DUR (seconds
# per iperf3 run, 2), DNS_DUR (seconds per DNS run, 3), DNS_QPS (the polite
# client's rate, 1000), PARTS (flood split goodput dns algos fleet agg2
# cpu2 cas syncookies slip xcheck replay fuzz micro; syncookies:
# tests/bench/syncookies.sh,
# slip: tests/bench/slip.sh, SLIP_DUR (1); xcheck: tests/bench/crosscheck.sh,
# XCHECK_DUR (1), TG_ROUNDS (ROUNDS, at least 5), XCHECK_PARTS, XDP_TOOLS (a
# built xdp-tools tree; else xdp-tools on PATH)),
# SCENARIOS_ONLY, CONTENDERS_ONLY (the flood part's), CPU2_DUR (1),
# CPU2_SCENARIOS_ONLY, CPU2_CONTENDERS_ONLY, FUZZ_SECONDS (15: each of the
# fuzzer's two runs; replay: tests/bench/replay.sh, fuzz: fuzz_speed.sh),
# OUT (.output/bench), BASELINE (a built tree of an earlier release: its
# xdp-rl runs beside this one in the same rounds).
#
# cpu2: two receiving CPUs against one (one source, 1,000 sources, the
# spoofed flood with an aggregate): drop rate and accuracy.
# cas: a compare-and-swap on one line shared by both CPUs against one each
# (tests/bench/casbench.c).
#
# agg2: an aggregate metered by two CPUs at once (xrl-flood on both), far
# above the flood in chunks, far above with chunks of one, and binding.
#
# fleet: one source flooded through a fleet rule (scope fleet, its key
# promoted and leased from a real redis-server by a real xdp-rld, both
# started in the receiving namespace) and through the same rule of scope
# host under the same daemon, in turn in the same rounds.
set -u
cd "$(dirname "$0")/../.."
TOP=$PWD

[[ $(id -u) -eq 0 ]] || { echo "Error: the benchmark needs root (sudo make bench)" >&2; exit 1; }

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-1.5}
OUT=${OUT:-$TOP/.output/bench}
GP_DUR=${GP_DUR:-2}
DNS_DUR=${DNS_DUR:-3}
DNS_QPS=${DNS_QPS:-1000}
# the DNS limit: per source, twice the polite client's rate
DNS_RATE=$((2 * DNS_QPS))
DNS_BURST=$((DNS_QPS / 5))
PARTS=" ${PARTS:-flood split goodput dns algos fleet agg2 cpu2 cas syncookies slip xcheck replay fuzz micro} "
RATE=100
BURST=20
CTL_BIN=$TOP/.output/xdp-rlctl
FLOOD=$TOP/.output/xrl-flood
XDPREF=$TOP/.output/xdp-ref
UDPFLOOD=$TOP/.output/udpflood
UDPSINK=$TOP/.output/udpsink
source "$TOP/tests/lib/lab.sh"
DST4=198.19.255.254
DST6=2001:db8:ffff::fe
POLITE=(198.19.200.1 198.19.200.2 198.19.200.3)
NAPI_PIDS=

cleanup() {
	set +e
	[[ -n "${DNSMASQ_PID:-}" ]] && kill "$DNSMASQ_PID" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	lab_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM
lab_init b || exit 1
GEN=$SRC
RCV=$DST
TMPD=$LAB_TMP
PIN=$LAB_PIN
RESULTS="$TMPD/results.jsonl"

log() { printf '%s\n' "$*" >&2; }
in_gen() { in_src "$@"; }
in_rcv() { in_dst "$@"; }
ctl() { in_rcv "$CTL_BIN" --pin-dir "$PIN" "$@"; }

# ---- the lab ----
# Two queues: the flood (generated on CPU 0) fills queue 0; the polite
# senders run on CPU 1 and XPS steers them to queue 1, as RSS would spread
# sources over a real NIC's queues.
lab_up() {
	local a s=()
	for a in "${POLITE[@]}"; do
		s+=(-s "$a/15")
	done
	lab_build -q 2 "${s[@]}" -d $DST4/15 -d $DST6/64 || return 1
	in_rcv sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.d0.rp_filter=0
}

# ---- contenders: setup_NAME / teardown_NAME, counters_NAME -> "seen dropped" ----
CONTENDERS=(${CONTENDERS_ONLY:-xdp_drop xdp_admit xdprl_native ${BASELINE:+xdprl_base} xdprl_generic xdprl_tc nft_netdev nft_input iptables_hashlimit none})
declare -A LABEL=(
	[xdp_drop]="bare XDP_DROP" [xdprl_native]="xdp-rl native" [xdprl_generic]="xdp-rl generic"
	[xdprl_tc]="xdp-rl hook tc (tcx ingress)"
 [xdp_admit]="ideal limiter (admits as many, no per-key work)" [xdprl_base]="xdp-rl native, BASELINE build"
	[nft_netdev]="nftables meter, netdev ingress" [nft_input]="nftables meter, inet input"
	[iptables_hashlimit]="iptables hashlimit, raw" [none]="no filter"
)

setup_none() { :; }
teardown_none() { :; }
counters_none() { echo "0 0"; }

setup_xdp_drop() { in_rcv "$XDPREF" d0 drop native; }
teardown_xdp_drop() { in_rcv "$XDPREF" d0 off; }
counters_xdp_drop() { echo "0 0"; }

# The ideal limiter: as many frames a second up the stack as the rule
# admits for the scenario's keys (keys x rate, burst keys x burst), and not
# one instruction of per-key work; what no limiter that admits them beats.
setup_xdp_admit() {
	in_rcv "$XDPREF" d0 admit native $((SKEYS[$SC] * RATE)) $((SKEYS[$SC] * BURST))
}
teardown_xdp_admit() { in_rcv "$XDPREF" d0 off; }
counters_xdp_admit() { echo "0 0"; }

# attach on d0; the note that native XDP on a veth costs goodput is what
# the goodput part measures: not repeated once per run
xdprl_attach() {
	ctl attach dev d0 mode "$1" keys 1048576 2>&1 >/dev/null | { grep -v '^Note: d0 is a veth' >&2 || :; }
	return "${PIPESTATUS[0]}"
}
# ${SXRL[${SC:-_}]}: what the scenario adds to each rule (aggregate, new-keys)
# the scenario's rules: ids 1 and 2 the source rules, 3 its endpoint rule
xdprl_rules() {
	local r=$RATE b=$BURST
	[[ -n ${SEP[${SC:-_}]:-} ]] && r=100000000 b=10000000
	ctl rule add 198.18.0.0/15 rate $r/s burst $b id 1 ${SXRL[${SC:-_}]:-} >/dev/null &&
	ctl rule add 2001:db8::/32 rate $r/s burst $b id 2 ${SXRL[${SC:-_}]:-} >/dev/null || return
	[[ -z ${SEP[${SC:-_}]:-} ]] ||
		ctl rule add 198.18.0.0/15 ${SEP[$SC]} rate $RATE/s burst $BURST id 3 >/dev/null
}
xdprl_up() {
	xdprl_attach "$1" && xdprl_rules
}
setup_xdprl_native() { xdprl_up native; }

# BASELINE=DIR (a built tree of an earlier release): its xdp-rlctl, on pins
# of its own, runs as one more contender in the same rounds ("before"); the
# scenario's aggregate and new-key words are left out if it has none.
BASE_CTL=${BASELINE:+$BASELINE/.output/xdp-rlctl}
BASE_PIN=$LAB_BPFFS/xdp-rl-base
bctl() { in_rcv "$BASE_CTL" --pin-dir "$BASE_PIN" "$@"; }
setup_xdprl_base() {
	local extra=${SXRL[${SC:-_}]:-}
	bctl attach dev d0 mode native keys 1048576 >/dev/null 2>&1 || return 1
	if [[ -n $extra ]] && ! bctl rule add 198.18.0.0/15 rate $RATE/s burst $BURST id 1 $extra >/dev/null 2>&1; then
		extra=
	fi
	bctl rule add 198.18.0.0/15 rate $RATE/s burst $BURST id 1 $extra >/dev/null 2>&1
	bctl rule add 2001:db8::/32 rate $RATE/s burst $BURST id 2 $extra >/dev/null
}
teardown_xdprl_base() { bctl detach dev d0 purge >/dev/null; }
counters_xdprl_base() {
	bctl -j stats | jq -r '[([.rules[] | .passed_packets + .dropped_packets] | add),
			       ([.rules[] | .dropped_packets] | add)] | "\(.[0]) \(.[1])"'
}
setup_xdprl_generic() { xdprl_up generic; }
# hook tc: the same rules at tc ingress (a tcx link), d0's XDP hook empty
setup_xdprl_tc() {
	ctl attach dev d0 hook tc keys 1048576 >/dev/null && xdprl_rules
}
teardown_xdprl_tc() { teardown_xdprl_native; }
counters_xdprl_tc() { counters_xdprl; }
teardown_xdprl_native() { ctl detach dev d0 purge >/dev/null; }
teardown_xdprl_generic() { teardown_xdprl_native; }
counters_xdprl() {
	local only=true
	# an endpoint scenario: every packet meets the endpoint rule, which
	# alone refuses (a packet both rules admit is counted by each)
	[[ -n ${SEP[${SC:-_}]:-} ]] && only='.id == 3'
	ctl -j stats | jq -r "[.rules[] | select($only)] |
		[(map(.passed_packets + .dropped_packets) | add), (map(.dropped_packets) | add)] | \"\\(.[0]) \\(.[1])\""
}
counters_xdprl_native() { counters_xdprl; }
counters_xdprl_generic() { counters_xdprl; }

nft_rules() {	# FAMILY HOOKSPEC
	local agg4= agg6=
	# the spoofed-flood scenarios' aggregate: a global limit after the meter
	if [[ -n ${SAGG[${SC:-_}]:-} ]]; then
		agg4="ip saddr 198.18.0.0/15 limit rate over ${SAGG[${SC:-_}]}/second burst ${SAGG_BURST[${SC:-_}]} packets drop"
		agg6="ip6 saddr 2001:db8::/32 limit rate over ${SAGG[${SC:-_}]}/second burst ${SAGG_BURST[${SC:-_}]} packets drop"
	fi
	cat <<-EOF
	table $1 xrlbench {
	  set m4 { type ipv4_addr; size 1048576; flags dynamic; }
	  set m6 { type ipv6_addr; size 1048576; flags dynamic; }
	  chain c {
	    $2; policy accept;
	    ip saddr 198.18.0.0/15 update @m4 { ip saddr limit rate over $RATE/second burst $BURST packets } drop
	    ip6 saddr 2001:db8::/32 update @m6 { ip6 saddr & ffff:ffff:ffff:ffff:: limit rate over $RATE/second burst $BURST packets } drop
	    $agg4
	    $agg6
	  }
	}
	EOF
}
setup_nft_netdev() { nft_rules netdev "type filter hook ingress device d0 priority -500" | in_rcv nft -f -; }
setup_nft_input() { nft_rules inet "type filter hook input priority 0" | in_rcv nft -f -; }
teardown_nft_netdev() { in_rcv nft delete table netdev xrlbench; }
teardown_nft_input() { in_rcv nft delete table inet xrlbench; }
# What nft admitted, counted where it lands: the receiver's UDP layer
# (datagrams delivered, to closed ports, in error). Listing nft's own
# counters makes nft parse every element of the meter sets first: 20 s
# after a million-source flood.
udp_in() {
	in_rcv cat /proc/net/snmp /proc/net/snmp6 | awk '
		/^Udp: InDatagrams/ { split($0, h) ; next }
		/^Udp: [0-9]/ { for (i = 2; i <= NF; i++) if (h[i] ~ /^(InDatagrams|NoPorts|InErrors)$/) s += $i }
		/^Udp6(InDatagrams|NoPorts|InErrors) / { s += $2 }
		END { printf "%.0f\n", s }'
}
counters_nft() {	# "seen dropped" from the frames delivered and the UDP count
	local admitted=$(($(udp_in) - UDP0))
	echo "$((DELIVERED + POLITE_RX)) $((DELIVERED + POLITE_RX - admitted))"
}
counters_nft_netdev() { counters_nft netdev; }
counters_nft_input() { counters_nft inet; }

setup_iptables_hashlimit() {
	local hl="-m hashlimit --hashlimit-above $RATE/sec --hashlimit-burst $BURST --hashlimit-mode srcip --hashlimit-htable-size 1048576 --hashlimit-htable-max 1048576"
	in_rcv iptables-legacy -t raw -A PREROUTING -s 198.18.0.0/15 &&
	in_rcv iptables-legacy -t raw -A PREROUTING -s 198.18.0.0/15 $hl --hashlimit-name x4 -j DROP &&
	in_rcv ip6tables-legacy -t raw -A PREROUTING -s 2001:db8::/32 &&
	in_rcv ip6tables-legacy -t raw -A PREROUTING -s 2001:db8::/32 $hl --hashlimit-srcmask 64 --hashlimit-name x6 -j DROP || return 1
	# the spoofed-flood scenarios' aggregate: what passes the global
	# limit returns, the rest is dropped (limit allows at most 10000/s)
	if [[ -n ${SAGG[${SC:-_}]:-} ]]; then
		local lim="-m limit --limit ${SAGG[${SC:-_}]}/sec --limit-burst ${SAGG_BURST[${SC:-_}]}"
		in_rcv iptables-legacy -t raw -A PREROUTING -s 198.18.0.0/15 $lim -j RETURN &&
		in_rcv iptables-legacy -t raw -A PREROUTING -s 198.18.0.0/15 -j DROP &&
		in_rcv ip6tables-legacy -t raw -A PREROUTING -s 2001:db8::/32 $lim -j RETURN &&
		in_rcv ip6tables-legacy -t raw -A PREROUTING -s 2001:db8::/32 -j DROP
	fi
}
teardown_iptables_hashlimit() {
	in_rcv iptables-legacy -t raw -F
	in_rcv ip6tables-legacy -t raw -F
}
counters_iptables_hashlimit() {
	{ in_rcv iptables-legacy -t raw -L PREROUTING -v -x -n; in_rcv ip6tables-legacy -t raw -L PREROUTING -v -x -n; } |
		awk '$1 ~ /^[0-9]+$/ { if ($3 == "DROP") d += $1; else s += $1 } END { printf "%.0f %.0f\n", s, d }'
}

# ---- scenarios: xrl-flood arguments, keys metered, polite senders ----
SCENARIOS=(${SCENARIOS_ONLY:-one dns53 k1 k1_low m1 v6_64 mixed spoof spoof_open})
declare -A SLABEL=(
	[one]="1 source" [dns53]="1 source to UDP/53 under an endpoint rule" [k1]="1,000 sources" [k1_low]="1,000 sources at 10/s burst 5 each"
	[m1]="1,000,000 random sources (IPv6 /64s)"
	[v6_64]="IPv6: 1,000 addresses in one /64" [mixed]="1 flooding + 3 polite sources"
	[spoof]="spoofed: 1,000,000 random sources, aggregate 10,000/s and new-keys 1,000/s"
	[spoof_open]="spoofed: 1,000,000 random sources, aggregate far above the flood (all admitted)"
)
declare -A SARGS=(
	[one]="-d $DST4 -s 198.18.0.1"
	[dns53]="-d $DST4 -s 198.18.0.1 -p 53"
	[k1]="-d $DST4 -s 198.18.0.0/15 -N 1000"
	[k1_low]="-d $DST4 -s 198.18.0.0/15 -N 1000"
	[m1]="-d $DST6 -s 2001:db8::1/32 -N 1000000 -R 7"
	[v6_64]="-d $DST6 -s 2001:db8:1::1/64 -N 1000"
	[mixed]="-d $DST4 -s 198.18.0.1"
	[spoof]="-d $DST6 -s 2001:db8::1/32 -N 1000000 -R 11"
	[spoof_open]="-d $DST6 -s 2001:db8::1/32 -N 1000000 -R 13"
)
declare -A SKEYS=([one]=1 [dns53]=1 [k1]=1000 [k1_low]=1000 [m1]=1000000 [v6_64]=1 [mixed]=1 [spoof]=1000000 [spoof_open]=1000000)
# k1_low: the 1,000 sources of k1 against a rule of 10/s burst 5 (every
# contender's rule): what the limiter's drop path costs when the traffic it
# admits (10,000 packets a second, where k1's 100,000 a second cost the
# stack some 17 % of the CPU whatever the limiter) does not hide it
declare -A SRATE=([k1_low]=10)
declare -A SBURST=([k1_low]=5)
# the spoofed floods: a rule with an aggregate (nftables: a global limit
# after the meter; iptables: limit after hashlimit) and a new-key budget
# (xdp-rl only: nftables and iptables have none); their contenders
declare -A SAGG=([spoof]=10000 [spoof_open]=100000000)
declare -A SAGG_BURST=([spoof]=1000 [spoof_open]=100000000)
# m1, a million fresh keys without a new-key budget, as nftables and
# iptables have none: a budget above the flood, for the default one (a
# sixteenth of the table a second after half of it, docs/rules.md) binds
# once a run creates more than half the table's keys, and a machine that
# floods at 1 Mpps does (in a run of 2026-12-07, 70 % admitted: the default
# budget's refusals, counted in new_keys_refused)
declare -A SXRL=(
	[spoof]="aggregate 10000/s burst 1000 new-keys 1000/s"
	[spoof_open]="aggregate 100000000/s burst 100000000 new-keys 1000/s"
	[m1]="new-keys 100000000/s"
)
# (the ideal limiter is for the scenarios whose admitted rate is keys x
# rate: not a million fresh keys, each admitted whole by its burst)
declare -A SCONTENDERS=([spoof]="xdp_drop xdprl_native ${BASELINE:+xdprl_base} xdprl_tc nft_netdev iptables_hashlimit none"
			[m1]="xdp_drop xdprl_native ${BASELINE:+xdprl_base} xdprl_generic nft_netdev nft_input iptables_hashlimit none"
			[spoof_open]="xdp_drop xdprl_native ${BASELINE:+xdprl_base} none")
# dns53, the DNS operator's rule: an endpoint rule (UDP/53) at the rate and
# burst, the source rules far above the flood, so that every drop is the
# endpoint rule's (xdp-rl's cached drop keyed by source and endpoint slot);
# accuracy read from the endpoint rule, the one that meters the flood
declare -A SEP=([dns53]="proto udp dport 53")
SCONTENDERS[dns53]="xdp_drop xdprl_native xdprl_tc none"
SC=

xmit() {	# delivered and failed frames out of s0 so far
	in_gen ethtool -S s0 | awk '/tx_queue_[0-9]+_xdp_xmit:/ { x += $2 } /tx_queue_[0-9]+_xdp_xmit_errors:/ { e += $2 } END { printf "%.0f %.0f\n", x, e }'
}

napi_cpu_ticks() {	# user + system time of the receiver's NAPI threads
	local p t=0
	for p in $NAPI_PIDS; do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	echo $t
}

# run_one ROUND SCENARIO CONTENDER MODE(shared|split): one measurement, one JSON line
run_one() {
	local round=$1 sc=$2 c=$3 mode=$4 x0 x1 e0 e1 t0 t1 res seen dropped polite_json="{}" mem=null
	"setup_$c" || { log "Error: setup of $c failed"; return 1; }
	local sink_pid= polite_pids=()
	if [[ $sc == mixed ]]; then
		in_rcv "$UDPSINK" -p 5353 -T "$(echo "$DUR + 1.5" | bc)" >"$TMPD/sink" &
		sink_pid=$!
		sleep 0.2
		for a in "${POLITE[@]}"; do
			in_gen taskset -c 1 "$UDPFLOOD" -s "$a" -d $DST4 -p 5353 -r 50 -n "$(echo "$DUR * 50 / 1" | bc)" -t 10 >/dev/null &
			polite_pids+=($!)
		done
	fi
	read -r x0 e0 < <(xmit)
	UDP0=$(udp_in)
	t0=$(napi_cpu_ticks)
	local cpuopt=() cpus=0
	[[ $mode == split ]] && cpuopt=(-c 0)
	# cpu2: a generator thread on each CPU, each CPU's frames on its own
	# queue of d0 (whose NAPI then runs on that CPU): two receiving CPUs
	[[ $mode == cpu2 ]] && cpuopt=(-t 2 -c 0) cpus=0,1
	res=$(in_gen taskset -c $cpus "$FLOOD" -i s0 -m $DST_MAC ${SARGS[$sc]} -n 1000000000 -T "$DUR" "${cpuopt[@]}" -j)
	t1=$(napi_cpu_ticks)
	read -r x1 e1 < <(xmit)
	if [[ $sc == mixed ]]; then
		wait "${polite_pids[@]}" 2>/dev/null
		wait "$sink_pid"
		polite_json=$(cat "$TMPD/sink")
	fi
	sleep 0.1	# let the last frames drain before reading counters
	DELIVERED=$((x1 - x0))
	POLITE_RX=$(jq '[.[]] | add // 0' <<<"$polite_json")
	read -r seen dropped < <("counters_$c")
	if [[ $c == xdprl_native && $sc == one && $mode == shared ]]; then
		mem=$(for t in 4 6; do in_rcv bpftool -j map show pinned "$PIN/xrl_buckets$t"; done |
			jq -s '{ipv4: (.[0].bytes_memlock / .[0].max_entries), ipv6: (.[1].bytes_memlock / .[1].max_entries)}')
	fi
	local td0=$SECONDS
	"teardown_$c"
	((SECONDS - td0 > 2)) && log "   (teardown of $c took $((SECONDS - td0)) s)"
	jq -nc --argjson r "$round" --arg sc "$sc" --arg c "$c" --arg mode "$mode" \
		--argjson gen "$res" --argjson delivered $((x1 - x0)) --argjson ring_lost $((e1 - e0)) \
		--argjson seen "${seen:-0}" --argjson dropped "${dropped:-0}" \
		--argjson ticks $((t1 - t0)) --argjson hz "$(getconf CLK_TCK)" \
		--argjson keys "${SKEYS[$sc]}" --argjson polite "$polite_json" --argjson mem "$mem" \
		--argjson rate $RATE --argjson burst $BURST \
		--argjson agg "${SAGG[$sc]:-0}" --argjson aggburst "${SAGG_BURST[$sc]:-0}" '
		{round: $r, scenario: $sc, contender: $c, mode: $mode, seconds: $gen.seconds,
		 delivered: $delivered, ring_lost: $ring_lost,
		 mpps: ($delivered / $gen.seconds / 1e6),
		 rx_ns_per_packet: (if $mode == "split" and $delivered > 0 then $ticks * 1e9 / $hz / $delivered else null end),
		 seen: $seen, admitted: ($seen - $dropped), dropped: $dropped,
		 polite_sent: (if $sc == "mixed" then 3 * (('"$DUR"' * 50) | floor) else 0 end),
		 keys: $keys} |
		.expected = (if $seen > 0 then ([$keys * ($burst + $rate * .seconds) + .polite_sent, $seen] | min) else null end) |
		.expected = (if $agg > 0 and $seen > 0 then ([$aggburst + $agg * .seconds, $seen] | min) else .expected end) |
		. + {
		 polite_received: ([$polite[]] | add // 0),
		 bytes_per_key: $mem}' >>"$RESULTS"
}

# ---- goodput: TCP bulk through d0 (iperf3) ----
# Every contender lets everything through: what it costs is the goodput lost.
GP_CONTENDERS=(${GP_CONTENDERS_ONLY:-none xdp_pass xdprl_native_all xdprl_generic_all})
GP_RESULTS="$TMPD/goodput.jsonl"
setup_xdp_pass() { in_rcv "$XDPREF" d0 pass native; }
teardown_xdp_pass() { in_rcv "$XDPREF" d0 off; }
# a metered rule far above what TCP sends here: every packet takes the
# limiter's full path (look-ups, clock, bucket update) and is admitted
xdprl_all_up() {
	xdprl_attach "$1" &&
	ctl rule add 198.18.0.0/15 rate 100000000/s burst 10000000 id 1 >/dev/null
}
setup_xdprl_native_all() { xdprl_all_up native; }
setup_xdprl_generic_all() { xdprl_all_up generic; }
teardown_xdprl_native_all() { teardown_xdprl_native; }
teardown_xdprl_generic_all() { teardown_xdprl_native; }

wait_listen() {	# PROTO PORT: until something in $RCV listens there (5 s at most)
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -n $(in_rcv ss -Hln"${1:0:1}" "sport = :$2") ]] && return 0
		sleep 0.1
	done
	log "Error: nothing listens on $1 port $2 in $RCV"
	return 1
}

gp_one() {	# ROUND CONTENDER: one iperf3 run, one JSON line
	local round=$1 c=$2 res srv seen=0 dropped=0
	"setup_$c" || { log "Error: setup of $c failed"; return 1; }
	in_rcv iperf3 -s -B $DST4 -p 5201 -1 >/dev/null 2>&1 &
	srv=$!
	wait_listen tcp 5201 || return 1
	res=$(in_gen timeout $((GP_DUR + 10)) iperf3 -c $DST4 -B "${POLITE[0]}" -p 5201 -t "$GP_DUR" -O 0.5 -J)
	wait "$srv" 2>/dev/null
	[[ $c == xdprl_* ]] && read -r seen dropped < <(counters_xdprl)
	"teardown_$c"
	jq -e '.end.sum_received.bits_per_second > 0' <<<"$res" >/dev/null ||
		{ log "Error: iperf3 failed under $c: $(jq -r '.error // empty' <<<"$res" 2>/dev/null)"; return 1; }
	jq -c --argjson r "$round" --arg c "$c" --argjson seen "${seen:-0}" --argjson dropped "${dropped:-0}" '
		{round: $r, contender: $c, seconds: .end.sum_received.seconds,
		 gbps: (.end.sum_received.bits_per_second / 1e9),
		 retransmits: .end.sum_sent.retransmits,
		 limiter_seen: $seen, limiter_dropped: $dropped}' <<<"$res" >>"$GP_RESULTS"
}

# ---- a real service under a flood: dnsmasq, dnsperf, xrl-flood to port 53 ----
DNS_CONTENDERS=(${DNS_CONTENDERS_ONLY:-none nft_netdev xdprl_native})
DNS_RESULTS="$TMPD/dns.jsonl"
DNS_FLOODER=198.18.0.1
DNSMASQ_PID=

# dnsmasq on d0's address only, in the receiving namespace: no upstream, no
# hosts file, no configuration file, no system service; it answers
# bench.test from a local record
dns_up() {
	# the flooder's address resolves like any routed peer: without a
	# neighbour entry, the answers to it would wait for ARP and fill
	# dnsmasq's send buffer, a stall of the lab's own making
	in_rcv ip neigh replace $DNS_FLOODER lladdr $SRC_MAC dev d0 nud permanent || return 1
	printf 'bench.test A\n' >"$TMPD/queries"
	in_rcv dnsmasq --keep-in-foreground --pid-file="$TMPD/dnsmasq.pid" --conf-file=/dev/null \
		--port 53 --listen-address=$DST4 --bind-interfaces --no-resolv --no-hosts \
		--address=/bench.test/198.18.0.254 --user=root --log-facility="$TMPD/dnsmasq.log" &
	DNSMASQ_PID=$!	# the subshell around it, until its pid file names it
	wait_listen udp 53 || return 1
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s "$TMPD/dnsmasq.pid" ]] && break
		sleep 0.1
	done
	DNSMASQ_PID=$(cat "$TMPD/dnsmasq.pid" 2>/dev/null)
	[[ -n $DNSMASQ_PID && $(cat "/proc/$DNSMASQ_PID/comm" 2>/dev/null) == dnsmasq ]] ||
		{ log "Error: no dnsmasq process in $TMPD/dnsmasq.pid"; return 1; }
}
dns_down() {
	kill "$DNSMASQ_PID" 2>/dev/null
	wait "$DNSMASQ_PID" 2>/dev/null
	DNSMASQ_PID=
}
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

dns_one() {	# ROUND CONTENDER: one run, one JSON line
	local round=$1 c=$2 fl t0 t1 w0 w1 x0 x1 e0 e1 u0 u1 perf p99 res seen=0 dropped=0
	# the limit: per source, twice the polite client's rate
	RATE=$DNS_RATE BURST=$DNS_BURST "setup_$c" || { log "Error: setup of $c failed"; return 1; }
	read -r x0 e0 < <(xmit)
	u0=$(udp_in)
	t0=$(proc_ticks "$DNSMASQ_PID")
	w0=$(date +%s.%N)
	# the polite client keeps its rate whatever is lost: up to two seconds'
	# worth of queries outstanding, each given up after one second
	# the flood, open loop, from its own address on CPU 0, a little longer
	# than the polite client's run so that it covers all of it
	in_gen taskset -c 0 "$FLOOD" -i s0 -m $DST_MAC -d $DST4 -s $DNS_FLOODER -p 53 \
		-n 1000000000 -T "$(echo "$DNS_DUR + 0.3" | bc)" -j >"$TMPD/flood.json" &
	fl=$!
	# and a closed-loop one: dnsperf unthrottled, from another address of s0
	in_gen taskset -c 0 dnsperf -s $DST4 -a "${POLITE[1]}" -d "$TMPD/queries" -l "$DNS_DUR" \
		-t 1 -c 4 -q 100 >"$TMPD/dnsperf-flood.out" 2>&1 &
	local dfl=$!
	sleep 0.15
	in_gen taskset -c 1 dnsperf -s $DST4 -a "${POLITE[0]}" -d "$TMPD/queries" -Q "$DNS_QPS" \
		-l "$DNS_DUR" -t 1 -c 1 -q $((2 * DNS_QPS)) -v >"$TMPD/dnsperf.out" 2>&1
	wait "$fl"
	wait "$dfl"
	t1=$(proc_ticks "$DNSMASQ_PID")
	w1=$(date +%s.%N)
	read -r x1 e1 < <(xmit)
	u1=$(udp_in)
	[[ $c == xdprl_native ]] && read -r seen dropped < <(counters_xdprl)
	"teardown_$c"
	perf=$(awk '
		/Queries sent:/ { s = $3 } /Queries completed:/ { d = $3 }
		/Average Latency \(s\):/ { a = $4 }
		END { if (s == "") exit 1; print s, d, a }' "$TMPD/dnsperf.out") ||
		{ log "Error: dnsperf failed under $c: $(tail -n 3 "$TMPD/dnsperf.out")"; return 1; }
	# p99 of the answered queries, from the per-query lines of -v
	p99=$(awk '/^> / && $NF ~ /^[0-9.]+$/ { print $NF }' "$TMPD/dnsperf.out" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) { i = int(NR * 0.99 + 0.999999); if (i > NR) i = NR; print v[i] } else print "null" }')
	read -r sent done avg <<<"$perf"
	local fsent fdone
	read -r fsent fdone < <(awk '/Queries sent:/ { s = $3 } /Queries completed:/ { d = $3 }
		END { print (s == "" ? 0 : s), (d == "" ? 0 : d) }' "$TMPD/dnsperf-flood.out")
	jq -nc --argjson r "$round" --arg c "$c" --argjson sent "$sent" --argjson done "$done" \
		--argjson avg "$avg" --argjson p99 "$p99" --argjson ticks $((t1 - t0)) \
		--argjson hz "$(getconf CLK_TCK)" --argjson wall "$(echo "$w1 - $w0" | bc)" \
		--argjson flood "$(cat "$TMPD/flood.json")" --argjson delivered $((x1 - x0)) \
		--argjson udp $((u1 - u0)) --argjson seen "${seen:-0}" --argjson dropped "${dropped:-0}" \
		--argjson qps "$DNS_QPS" --argjson fsent "$fsent" --argjson fdone "$fdone" '
		{round: $r, contender: $c, qps: $qps, polite_sent: $sent, polite_answered: $done,
		 answered_pct: (if $sent > 0 then 100 * $done / $sent else null end),
		 latency_avg_ms: ($avg * 1000), latency_p99_ms: (if $p99 == null then null else $p99 * 1000 end),
		 server_cpu_pct: (100 * $ticks / $hz / $wall), wall_seconds: $wall,
		 flood_mpps: ($delivered / $flood.seconds / 1e6), udp_reached: $udp,
		 limiter_seen: $seen, limiter_dropped: $dropped,
		 unthrottled_sent: $fsent, unthrottled_answered: $fdone}' >>"$DNS_RESULTS" ||
		{ log "Error: no result for $c: dnsperf '$perf' p99 '$p99' flood '$(cat "$TMPD/flood.json")'"; return 1; }
}

# ---- main ----
mkdir -p "$OUT"
log "== lab"
lab_up || { log "Error: cannot build the lab"; exit 1; }
log "== $ROUNDS rounds x ${#SCENARIOS[@]} scenarios x ${#CONTENDERS[@]} contenders, ${DUR}s each (one CPU sends and receives)"
start=$(date +%s)
: >"$RESULTS"
[[ $PARTS == *" flood "* ]] &&
for ((r = 1; r <= ROUNDS; r++)); do
	for sc in "${SCENARIOS[@]}"; do
		SC=$sc
		RATE=${SRATE[$sc]:-100}
		BURST=${SBURST[$sc]:-20}
		for c in ${SCONTENDERS[$sc]:-${CONTENDERS[@]}}; do
			[[ -n ${CONTENDERS_ONLY:-} && " $CONTENDERS_ONLY " != *" $c "* ]] && continue
			run_one "$r" "$sc" "$c" shared || exit 1
			log "   round $r  $(tail -n 1 "$RESULTS" | jq -r '"\(.scenario)\t\(.contender)\t\(.mpps * 1000 | round / 1000) Mpps"')"
		done
	done
done
RATE=100
BURST=20

# Receiver CPU per packet: NAPI in its own thread on CPU 1, the generator on CPU 0.
if [[ $PARTS == *" split "* ]]; then
log "== receiver CPU per packet (threaded NAPI on CPU 1)"
ip netns exec "$RCV" sh -c 'echo 1 > /sys/class/net/d0/threaded'
NAPI_PIDS=$(ps -eo pid,comm | awk '$2 ~ /^napi\/d0-/ { print $1 }')
if [[ -n "$NAPI_PIDS" && $(nproc) -ge 2 ]]; then
	for p in $NAPI_PIDS; do taskset -pc 1 "$p" >/dev/null; done
	for ((r = 1; r <= ROUNDS; r++)); do
		for sc in one k1; do
			SC=$sc
			RATE=${SRATE[$sc]:-100}
			BURST=${SBURST[$sc]:-20}
			for c in "${CONTENDERS[@]}"; do
				run_one "$r" "$sc" "$c" split || exit 1
			done
		done
	done
else
	log "   (skipped: no NAPI thread or fewer than 2 CPUs)"
fi
ip netns exec "$RCV" sh -c 'echo 0 > /sys/class/net/d0/threaded'
NAPI_PIDS=
fi

if [[ $PARTS == *" goodput "* ]]; then
	log "== TCP bulk: iperf3 through d0, $ROUNDS rounds x ${#GP_CONTENDERS[@]} contenders, ${GP_DUR}s each"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in "${GP_CONTENDERS[@]}"; do
			gp_one "$r" "$c" || exit 1
			log "   round $r  $(tail -n 1 "$GP_RESULTS" | jq -r '"\(.contender)\t\(.gbps * 100 | round / 100) Gbit/s"')"
		done
	done
	cp "$GP_RESULTS" "$OUT/goodput_runs.jsonl"
fi

if [[ $PARTS == *" dns "* ]]; then
	log "== DNS under a flood: dnsperf at $DNS_QPS q/s, xrl-flood to port 53, $ROUNDS rounds x ${#DNS_CONTENDERS[@]} contenders, ${DNS_DUR}s each"
	dns_up || exit 1
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in "${DNS_CONTENDERS[@]}"; do
			dns_one "$r" "$c" || exit 1
			log "   round $r  $(tail -n 1 "$DNS_RESULTS" | jq -r '"\(.contender)\tanswered \(.answered_pct * 10 | round / 10) %\tavg \(.latency_avg_ms * 1000 | round / 1000) ms\tp99 \((.latency_p99_ms // 0) * 1000 | round / 1000) ms\tserver CPU \(.server_cpu_pct | round) %"')"
		done
	done
	dns_down
	cp "$DNS_RESULTS" "$OUT/dns_runs.jsonl"
fi

# Accuracy of each algorithm: one polite address per algorithm,
# each under its own /32 rule of 100/s (the token bucket with burst 100),
# flooded at the same time by paced socket senders from $GEN.
#   steady: 400 packets/s for 4 s;
#   edge: 300 packets at 1000/s started 0.15 s before a second's edge
#     of the data path's clock: the fixed window admits 100 on each side (2x
#     in 0.3 s), the sliding window a little over 100, the token bucket 100
#     plus 0.3 s of refill.
# Admitted is held against the algorithm's own ideal: the same maths run
# sequentially on the exact send times (tests/bench/algo_ideal.py; the
# sender reports when it started on CLOCK_MONOTONIC, the data path's clock).
ALGOS=(token-bucket fixed-window sliding-window)
algo_run() {	# SCENARIO ROUND PPS COUNT
	local sc=$1 r=$2 pps=$3 n=$4 i s ideal sent t0
	xdprl_attach native || return 1
	for i in 0 1 2; do
		ctl rule add ${POLITE[$i]}/32 rate 100/s $([[ $i == 0 ]] && echo burst 100) \
			algo ${ALGOS[$i]} id $((i + 1)) >/dev/null || return 1
	done
	local at=()
	[[ $sc == edge ]] && at=(-A 850)	# 0.15 s before a second's edge
	for i in 0 1 2; do
		in_gen "$UDPFLOOD" -s "${POLITE[$i]}" -d $DST4 -n "$n" -r "$pps" -t 20 -S "${at[@]}" >"$TMPD/algo$i" &
	done
	wait
	s=$(ctl -j stats)
	for i in 0 1 2; do
		read -r sent t0 <"$TMPD/algo$i"
		ideal=$(python3 "$TOP/tests/bench/algo_ideal.py" "${ALGOS[$i]}" "$t0" "$pps" "$sent" 100 1 100)
		jq -c --arg sc "$sc" --argjson r "$r" --arg algo "${ALGOS[$i]}" --argjson ideal "$ideal" \
			--argjson phase "$(( t0 % 1000000000 / 1000000 ))" --argjson i $((i + 1)) '.rules[] | select(.id == $i) |
			{scenario: $sc, round: $r, algo: $algo, start_phase_ms: $phase, offered: (.passed_packets + .dropped_packets),
			 admitted: .passed_packets, ideal: $ideal, ratio: (.passed_packets / $ideal)}' <<<"$s" >>"$ALGO_RESULTS"
	done
	ctl detach dev d0 purge >/dev/null
}
if [[ $PARTS == *" algos "* ]]; then
	log "== algorithms' accuracy: steady 400/s for 4 s, and 300 at 1000/s across a window's edge, $ROUNDS rounds"
	ALGO_RESULTS="$TMPD/algos.jsonl"
	: >"$ALGO_RESULTS"
	for ((r = 1; r <= ROUNDS; r++)); do
		algo_run steady "$r" 400 1600 || exit 1
		algo_run edge "$r" 1000 300 || exit 1
		log "   round $r  $(tail -n 6 "$ALGO_RESULTS" | jq -sr 'map("\(.scenario)/\(.algo) \(.admitted)/\(.ideal)") | join("  ")')"
	done
	cp "$ALGO_RESULTS" "$OUT/algos_runs.jsonl"
	jq -sr '"| scenario | algorithm | offered | admitted | ideal | admitted / ideal (median, min–max) |",
		"|---|---|---:|---:|---:|---:|",
		(group_by(.scenario + .algo)[] | sort_by(.ratio) as $g | $g[length / 2 | floor] as $m |
		 "| \($m.scenario) | \($m.algo) | \($m.offered) | \($m.admitted) | \($m.ideal) | \($m.ratio * 1000 | round / 1000) (\($g[0].ratio * 1000 | round / 1000)–\($g[-1].ratio * 1000 | round / 1000)) |")' \
		"$ALGO_RESULTS" >"$OUT/algos.md"
	cat "$OUT/algos.md" >&2
fi

# ---- fleet: the same rule, scope fleet (leased through Redis) and host ----
# xdp-rld serves d0 with one rule, 198.18.0.0/15 $RATE/s burst $BURST, and
# syncs with a redis-server bound to an address of the receiving namespace's
# loopback (one live host: the share is the whole rate). Before the measured
# flood, a short one gets the key promoted: the fleet rule's packets then take
# the data path's lease step, which is what is measured.
RLD=$TOP/.output/xdp-rld
FLEET_ADDR=198.18.255.1
FLEET_PORT=6390
SLABEL[fleet]="1 source, a fleet rule (key leased) and the same host rule"
SARGS[fleet]="-d $DST4 -s 198.18.0.1"
SKEYS[fleet]=1
fleet_up() {	# SCOPE
	local i
	in_rcv ip link set lo up
	in_rcv ip addr replace $FLEET_ADDR/32 dev lo || return 1
	mkdir -p "$TMPD/redis"
	# nsenter itself in the background: $! is redis-server's pid
	nsenter --net="/run/netns/$RCV" redis-server --bind $FLEET_ADDR --port $FLEET_PORT --save '' \
		--appendonly no --protected-mode no --dir "$TMPD/redis" --logfile "$TMPD/redis.log" \
		</dev/null >/dev/null 2>&1 &
	FLEET_REDIS_PID=$!
	for ((i = 0; i < 100; i++)); do
		in_rcv redis-cli -h $FLEET_ADDR -p $FLEET_PORT ping 2>/dev/null | grep -q PONG && break
		sleep 0.05
	done
	printf '%s\n' "interface d0" "metrics off" "fleet redis $FLEET_ADDR:$FLEET_PORT sync 50 timeout 20" \
		"fleet host bench" "rule add 198.18.0.0/15 rate $RATE/s burst $BURST scope $1 id 1" >"$TMPD/fleet.conf"
	nsenter --net="/run/netns/$RCV" "$RLD" --pin-dir "$PIN" --config "$TMPD/fleet.conf" \
		</dev/null >>"$TMPD/fleet-rld.log" 2>&1 &
	FLEET_RLD_PID=$!
	# the rule in force (scope host), and synced (scope fleet)
	local want="^1 .*limit"
	[[ $1 == fleet ]] && want="fleet rule 1: synced"
	for ((i = 0; i < 100; i++)); do
		ctl stats 2>/dev/null | grep -q "$want" && break
		sleep 0.05
	done
	ctl stats 2>/dev/null | grep -q "$want" || { log "Error: xdp-rld not ready: $(tail -n 3 "$TMPD/fleet-rld.log")"; return 1; }
	FLEET_SEEN0=0 FLEET_DROPPED0=0
	[[ $1 == fleet ]] || return 0
	in_gen "$FLOOD" -i s0 -m $DST_MAC ${SARGS[fleet]} -n 20000 -T 0.3 >/dev/null
	for ((i = 0; i < 100; i++)); do
		if ctl stats | grep -q "fleet rule 1: synced.*, 1 promoted key"; then
			read -r FLEET_SEEN0 FLEET_DROPPED0 < <(counters_xdprl)
			return 0
		fi
		sleep 0.05
	done
	log "Error: the fleet key was never promoted: $(ctl stats | grep 'fleet rule')"
	return 1
}
fleet_down() {
	# still leased at the end of the flood? (the daemon would have demoted it)
	FLEET_LEASED=$(ctl stats | grep -c "fleet rule 1: synced.*, 1 promoted key")
	kill -TERM "$FLEET_RLD_PID" 2>/dev/null
	wait "$FLEET_RLD_PID" 2>/dev/null
	ctl detach dev d0 purge >/dev/null 2>&1
	kill "$FLEET_REDIS_PID" 2>/dev/null
	wait "$FLEET_REDIS_PID" 2>/dev/null
	in_rcv ip addr del $FLEET_ADDR/32 dev lo 2>/dev/null
	rm -rf "$TMPD/redis"
}
setup_xdprl_fleet() { fleet_up fleet; }
setup_xdprl_fleet_host() { fleet_up host; }
teardown_xdprl_fleet() { fleet_down; }
teardown_xdprl_fleet_host() { fleet_down; }
# what the priming flood left out
counters_xdprl_fleet() {
	local s d
	read -r s d < <(counters_xdprl)
	echo $((s - FLEET_SEEN0)) $((d - FLEET_DROPPED0))
}
counters_xdprl_fleet_host() { counters_xdprl_fleet; }
if [[ $PARTS == *" fleet "* ]]; then
	log "== fleet rule (leased through Redis) vs the same host rule, 1 source, $ROUNDS rounds, ${DUR}s each"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in xdprl_fleet_host xdprl_fleet; do
			run_one "$r" fleet "$c" shared || exit 1
			if [[ $c == xdprl_fleet ]] && ((FLEET_LEASED != 1)); then
				log "Error: the fleet key lost its lease during the flood"
				exit 1
			fi
			log "   round $r  $(tail -n 1 "$RESULTS" | jq -r '"\(.contender)\t\(.mpps * 1000 | round / 1000) Mpps"')"
		done
	done
fi

# ---- agg2: an aggregate metered by two CPUs at once, on the live path ----
# xrl-flood on CPUs 0 and 1 (each its half of 1,000 sources; each CPU's
# frames land on its own queue of d0, whose NAPI runs on that CPU), one rule
# whose per-key limit never binds, so that every packet meets the
# aggregate: none, far above the flood (burst 10^8: chunks of 1024), and one
# that binds (100,000/s burst 10,000: admitted against burst + rate x t,
# both CPUs). (Chunks of one, the shared cache line written by every packet,
# cannot be far above a flood of millions a second: their burst would be
# under 400, and the clock then decides; the micro-benchmark shows what
# that line costs: one key's bucket metered by two CPUs at once.)
AGG2_RESULTS="$TMPD/agg2.jsonl"
AGG2_CASES=(xdp_drop none agg_off agg_chunks agg_binds)
declare -A AGG2_WORDS=([agg_off]="" [agg_chunks]="aggregate 100000000/s burst 100000000"
		       [agg_binds]="aggregate 100000/s burst 10000")
declare -A AGG2_LABEL=([xdp_drop]="bare XDP_DROP" [none]="no filter"
		       [agg_off]="xdp-rl, no aggregate (every packet admitted)"
		       [agg_chunks]="xdp-rl, aggregate far above, chunks of 1024"
		       [agg_binds]="xdp-rl, aggregate 100,000/s burst 10,000 (binds)")
agg2_one() {	# ROUND CASE: one run on two CPUs, one JSON line
	local round=$1 c=$2 x0 x1 e0 e1 res seen=0 dropped=0
	case $c in
	xdp_drop) setup_xdp_drop || return 1 ;;
	none) ;;
	*) xdprl_attach native &&
	   ctl rule add 198.18.0.0/15 rate 100000000/s burst 100000000 id 1 ${AGG2_WORDS[$c]} >/dev/null || return 1 ;;
	esac
	read -r x0 e0 < <(xmit)
	res=$(in_gen "$FLOOD" -i s0 -m $DST_MAC -d $DST4 -s 198.18.0.0/15 -N 1000 -n 1000000000 -T "$DUR" -t 2 -c 0 -j)
	read -r x1 e1 < <(xmit)
	sleep 0.1
	case $c in
	xdp_drop) teardown_xdp_drop ;;
	none) ;;
	*) read -r seen dropped < <(counters_xdprl); ctl detach dev d0 purge >/dev/null ;;
	esac
	jq -nc --argjson r "$round" --arg c "$c" --argjson gen "$res" --argjson delivered $((x1 - x0)) \
		--argjson seen "${seen:-0}" --argjson dropped "${dropped:-0}" '
		{round: $r, case: $c, seconds: $gen.seconds, delivered: $delivered,
		 mpps: ($delivered / $gen.seconds / 1e6), seen: $seen, admitted: ($seen - $dropped),
		 expected: (if $c == "agg_binds" then ([10000 + 100000 * $gen.seconds, $seen] | min) else null end)}' >>"$AGG2_RESULTS"
}
if [[ $PARTS == *" agg2 "* ]]; then
	if (($(nproc) < 2)); then
		log "== agg2 skipped: fewer than 2 CPUs"
	else
		log "== an aggregate on two CPUs at once, 1,000 sources, $ROUNDS rounds, ${DUR}s each"
		: >"$AGG2_RESULTS"
		for ((r = 1; r <= ROUNDS; r++)); do
			for c in "${AGG2_CASES[@]}"; do
				agg2_one "$r" "$c" || { log "Error: agg2 $c failed"; exit 1; }
				log "   round $r  $(tail -n 1 "$AGG2_RESULTS" | jq -r '"\(.case)\t\(.mpps * 1000 | round / 1000) Mpps"')"
			done
		done
		cp "$AGG2_RESULTS" "$OUT/agg2_runs.jsonl"
		{
			echo "| two CPUs at once | Mpps (median, min–max) | × bare XDP_DROP | admitted ÷ (burst + rate × t) |"
			echo "|---|---:|---:|---:|"
			for c in "${AGG2_CASES[@]}"; do
				jq -sr --arg c "$c" --arg name "${AGG2_LABEL[$c]}" '
					(map(select(.case == "xdp_drop")) | map({key: (.round | tostring), value: .mpps}) | from_entries) as $drop |
					map(select(.case == $c)) | sort_by(.mpps) as $g | $g[length / 2 | floor] as $m |
					(map(.mpps / $drop[.round | tostring]) | sort | .[length / 2 | floor]) as $ratio |
					"| \($name) | \($m.mpps * 1000 | round / 1000) (\($g[0].mpps * 100 | round / 100)–\($g[-1].mpps * 100 | round / 100)) | \($ratio * 100 | round / 100) | \(if $m.expected then "\($m.admitted / $m.expected * 1000 | round / 10) %" else "—" end) |"' \
					"$AGG2_RESULTS"
			done
		} >"$OUT/agg2.md"
		cat "$OUT/agg2.md" >&2
	fi
fi

# ---- cpu2: two receiving CPUs against one, the same rule, the same keys ----
# The scenarios one, k1 and spoof (per-key rule over its limit; the spoofed
# flood with an aggregate), each run from one CPU (mode cpu1: the generator
# and d0's NAPI on CPU 0) and from two (mode cpu2: a generator thread on
# each CPU, each CPU's frames on its own queue of d0, so both NAPIs meet the
# same buckets: one source's bucket is written by both CPUs), in the same
# rounds; CPU2_DUR seconds a run. Reported: the two-CPU rate against the
# one-CPU rate of the same contender in the same round, and the accuracy.
CPU2_DUR=${CPU2_DUR:-1}
CPU2_SCENARIOS=(${CPU2_SCENARIOS_ONLY:-one k1 spoof})
CPU2_CONTENDERS=(${CPU2_CONTENDERS_ONLY:-xdp_drop xdprl_native xdprl_tc})
if [[ $PARTS == *" cpu2 "* ]]; then
	if (($(nproc) < 2)); then
		log "== cpu2 skipped: fewer than 2 CPUs"
	else
		log "== two receiving CPUs against one: ${CPU2_SCENARIOS[*]}, $ROUNDS rounds, ${CPU2_DUR}s each"
		for ((r = 1; r <= ROUNDS; r++)); do
			for sc in "${CPU2_SCENARIOS[@]}"; do
				SC=$sc
				RATE=${SRATE[$sc]:-100}
				BURST=${SBURST[$sc]:-20}
				for c in "${CPU2_CONTENDERS[@]}"; do
					for m in cpu1 cpu2; do
						DUR=$CPU2_DUR run_one "$r" "$sc" "$c" "$m" || exit 1
						log "   round $r  $(tail -n 1 "$RESULTS" | jq -r '"\(.mode)\t\(.scenario)\t\(.contender)\t\(.mpps * 1000 | round / 1000) Mpps\t\(if .expected then "\(.admitted / .expected * 1000 | round / 10) %" else "" end)"')"
					done
				done
			done
		done
		RATE=100
		BURST=20
	fi
fi

# ---- cas: a compare-and-swap on a line shared by both CPUs, or one each ----
if [[ $PARTS == *" cas "* ]]; then
	log "== contended compare-and-swap (casbench)"
	"$TOP/.output/casbench" -r "$((2 * ROUNDS - 1))" -j >"$OUT/casbench.json" &&
		"$TOP/.output/casbench" -r "$((2 * ROUNDS - 1))" >"$OUT/casbench.md" ||
		log "Error: casbench failed"
	cat "$OUT/casbench.md" >&2
fi

# SYN cookies: answers per second against bare XDP_TX, and against
# netfilter's SYNPROXY (a lab of its own)
if [[ $PARTS == *" syncookies "* ]]; then
	log "== SYN cookies"
	ROUNDS=$ROUNDS OUT=$OUT "$TOP/tests/bench/syncookies.sh" || log "Error: the SYN-cookie benchmark failed"
fi

# DNS slip: answers and frames handled per second against bare XDP_TX of
# the same frames (a lab of its own)
if [[ $PARTS == *" slip "* ]]; then
	log "== DNS slip"
	ROUNDS=$ROUNDS DUR=${SLIP_DUR:-1} OUT=$OUT "$TOP/tests/bench/slip.sh" || log "Error: the DNS slip benchmark failed"
fi

# The cross-checks with xdp-tools: xdp-bench drop as a second bare
# contender (its own count beside ours), xdp-trafficgen as a second
# generator (a lab of its own; XDP_TOOLS: a built xdp-tools tree)
if [[ $PARTS == *" xcheck "* ]]; then
	log "== cross-checks with xdp-tools (xdp-bench, xdp-trafficgen)"
	ROUNDS=$ROUNDS DUR=${XCHECK_DUR:-1} OUT=$OUT "$TOP/tests/bench/crosscheck.sh" ||
		log "Error: the cross-check benchmark failed"
fi

# The offline tools: replay of a million-frame flood (the default path
# beside the walk it replaced, the same JSON on both), and the differential
# fuzzer's frames a second (one load reset per sequence beside a load per
# sequence, 0 disagreements each)
if [[ $PARTS == *" replay "* ]]; then
	log "== replay of a flood"
	OUT=$TOP/.output "$TOP/tests/bench/replay.sh" >"$OUT/replay.txt" 2>&1 ||
		log "Error: the replay benchmark failed: $(tail -n 3 "$OUT/replay.txt" | tr '\n' '|')"
fi
if [[ $PARTS == *" fuzz "* ]]; then
	log "== differential fuzzer's rate"
	SECONDS_EACH=${FUZZ_SECONDS:-15} OUT=$TOP/.output "$TOP/tests/bench/fuzz_speed.sh" >"$OUT/fuzz_speed.txt" 2>&1 ||
		log "Error: the fuzzer benchmark failed: $(tail -n 3 "$OUT/fuzz_speed.txt" | tr '\n' '|')"
fi

# Micro-benchmark of the program alone.
if [[ $PARTS == *" micro "* ]]; then
	log "== micro-benchmark"
	"$TOP/.output/microbench" -j >"$OUT/microbench.json"
	"$TOP/.output/microbench" >"$OUT/microbench.md"
fi

elapsed=$(($(date +%s) - start))
cp "$RESULTS" "$OUT/runs.jsonl"
GP_DUR=$GP_DUR "$TOP/tests/bench/report.sh" "$OUT" "$elapsed"

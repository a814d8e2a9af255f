#!/usr/bin/env bash
# report.sh OUT [ELAPSED]: turn OUT/runs.jsonl (one JSON line per run) into
# OUT/summary.json, OUT/bench.md (Markdown tables) and OUT/bench.png; and,
# when there, OUT/goodput_runs.jsonl into OUT/goodput.json (TCP bulk) and
# OUT/dns_runs.jsonl into OUT/dns.json (a DNS server under a flood).
set -eu
OUT=$1
ELAPSED=${2:-}
RUNS="$OUT/runs.jsonl"

# medians per (mode, scenario, contender); ratios to bare XDP_DROP are taken
# per round, in the same round, then their median
jq -s '
  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def stat(f): [.[] | f | select(. != null)] | {median: median, min: min, max: max};
  (map(select(.contender == "xdp_drop")) | map({key: "\(.mode)/\(.scenario)/\(.round)", value: .}) | from_entries) as $floor |
  (map(select(.contender == "xdprl_fleet_host")) | map({key: "\(.mode)/\(.round)", value: .mpps}) | from_entries) as $host |
  group_by([.mode, .scenario, .contender]) | map(
    . as $g | $g[0] as $f |
    {mode: $f.mode, scenario: $f.scenario, contender: $f.contender, rounds: length,
     mpps: stat(.mpps),
     ratio_to_xdp_drop: stat(. as $x | $floor["\($x.mode)/\($x.scenario)/\($x.round)"].mpps as $d | if $d then $x.mpps / $d else null end),
     ratio_to_host_rule: stat(if .scenario == "fleet" then (. as $x | $host["\(.mode)/\(.round)"] as $d | if $d then $x.mpps / $d else null end) else null end),
     rx_ns_per_packet: stat(.rx_ns_per_packet),
     accuracy: stat(if .expected and .expected > 0 then .admitted / .expected else null end),
     admitted: stat(.admitted), expected: stat(.expected),
     ring_lost: stat(.ring_lost),
     polite_lost: stat(if .scenario == "mixed" then .polite_sent - .polite_received else null end),
     bytes_per_key_ipv4: stat(.bytes_per_key.ipv4?), bytes_per_key_ipv6: stat(.bytes_per_key.ipv6?)})
' "$RUNS" >"$OUT/summary.json"

# goodput: medians per contender; ratios to no XDP program and to bare
# XDP_PASS taken per round, in the same round, then their median
if [[ -s "$OUT/goodput_runs.jsonl" ]]; then
	jq -s '
	  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
	  def stat(f): [.[] | f | select(. != null)] | {median: median, min: min, max: max};
	  (map(select(.contender == "none")) | map({key: "\(.round)", value: .gbps}) | from_entries) as $none |
	  (map(select(.contender == "xdp_pass")) | map({key: "\(.round)", value: .gbps}) | from_entries) as $pass |
	  group_by(.contender) | map(
	    {contender: .[0].contender, rounds: length, gbps: stat(.gbps),
	     ratio_to_none: stat($none["\(.round)"] as $d | if $d then .gbps / $d else null end),
	     ratio_to_xdp_pass: stat($pass["\(.round)"] as $d | if $d then .gbps / $d else null end),
	     retransmits: stat(.retransmits), limiter_dropped: stat(.limiter_dropped)})
	' "$OUT/goodput_runs.jsonl" >"$OUT/goodput.json"
fi
if [[ -s "$OUT/dns_runs.jsonl" ]]; then
	jq -s '
	  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
	  def stat(f): [.[] | f | select(. != null)] | {median: median, min: min, max: max};
	  group_by(.contender) | map(
	    {contender: .[0].contender, rounds: length, qps: .[0].qps,
	     answered_pct: stat(.answered_pct), latency_avg_ms: stat(.latency_avg_ms),
	     latency_p99_ms: stat(.latency_p99_ms), server_cpu_pct: stat(.server_cpu_pct),
	     flood_mpps: stat(.flood_mpps), udp_reached: stat(.udp_reached),
	     unthrottled_answered: stat(.unthrottled_answered)})
	' "$OUT/dns_runs.jsonl" >"$OUT/dns.json"
fi

label() {
	case $1 in
	xdp_drop) echo "bare XDP_DROP" ;; xdprl_native) echo "xdp-rl native" ;;
	xdp_admit) echo "ideal limiter (admits as many, no per-key work)" ;;
	xdprl_base) echo "xdp-rl native, BASELINE build (before)" ;;
	xdprl_generic) echo "xdp-rl generic" ;; xdprl_tc) echo "xdp-rl hook tc (tcx ingress)" ;; nft_netdev) echo "nftables meter, netdev ingress" ;;
	nft_input) echo "nftables meter, inet input" ;; iptables_hashlimit) echo "iptables hashlimit (raw)" ;;
	none) echo "no filter" ;; xdp_pass) echo "bare XDP_PASS (native)" ;;
	xdprl_fleet) echo "xdp-rl, fleet rule (key leased)" ;; xdprl_fleet_host) echo "xdp-rl, the same rule of scope host" ;;
	xdprl_native_all) echo "xdp-rl native" ;; xdprl_generic_all) echo "xdp-rl generic" ;; *) echo "$1" ;;
	esac
}
slabel() {
	case $1 in
	one) echo "1 source" ;;
	dns53) echo "1 source to UDP/53 (a DNS flood), an endpoint rule proto udp dport 53 at the rate (the source rule far above): the endpoint rule's drop" ;;
	k1) echo "1,000 sources" ;; m1) echo "1,000,000 random sources (IPv6 /64s)" ;;
	k1_low) echo "1,000 sources, a rule of 10/s burst 5 (every contender's): the drop path without most of k1's 100,000 admitted packets a second" ;;
	v6_64) echo "IPv6: 1,000 addresses in one /64" ;; mixed) echo "1 flooding + 3 polite sources" ;;
	spoof) echo "spoofed: 1,000,000 random sources (IPv6 /64s), a rule with aggregate 10,000/s burst 1,000 and new-keys 1,000/s" ;;
	spoof_open) echo "spoofed: 1,000,000 random sources (IPv6 /64s), aggregate 100,000,000/s and new-keys 1,000/s: all admitted" ;;
	*) echo "$1" ;;
	esac
}

cpu=$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)
{
	echo "Measured $(date -u +%Y-%m-%d) on kernel $(uname -r), $(nproc) CPUs ($cpu)."
	echo "Reproduce: \`sudo make bench\` (ROUNDS; DUR, GP_DUR, DNS_DUR, CPU2_DUR, SLIP_DUR, XCHECK_DUR: seconds per run; DNS_QPS; PARTS; TG_ROUNDS: rounds of the xdp-trafficgen cross-check (ROUNDS, at least 5); XDP_TOOLS: a built xdp-tools tree for the cross-checks, see [performance.md](performance.md#answers-per-second-and-the-cross-checks))${ELAPSED:+; this run took ${ELAPSED}s}."
	echo
	echo "**Packets handled per second at the receiver** — one CPU sends (xrl-flood, live frames) and"
	echo "receives (the veth's NAPI runs on the sending CPU); median of the rounds (min–max); ratio to"
	echo "bare XDP_DROP in the same round. Accuracy: packets admitted ÷ (burst + rate × duration) summed"
	echo "over the keys (capped by what arrived)."
	echo
	for sc in one dns53 k1 k1_low m1 v6_64 mixed spoof spoof_open; do
		jq -e --arg sc "$sc" 'any(.[]; .scenario == $sc and .mode == "shared")' "$OUT/summary.json" >/dev/null || continue
		echo "*$(slabel "$sc")*"
		echo
		if [[ $sc == mixed ]]; then
			echo "| contender | Mpps | × XDP_DROP | accuracy | polite lost |"
			echo "|---|---:|---:|---:|---:|"
		else
			echo "| contender | Mpps | × XDP_DROP | accuracy |"
			echo "|---|---:|---:|---:|"
		fi
		jq -r --arg sc "$sc" '.[] | select(.scenario == $sc and .mode == "shared") |
			def f(d): if . == null then "—" else (. * pow(10; d) | round / pow(10; d) | tostring) end;
			[.contender,
			 "\(.mpps.median | f(3)) (\(.mpps.min | f(2))–\(.mpps.max | f(2)))",
			 (.ratio_to_xdp_drop.median | f(2)),
			 (if .accuracy.median == null then "—" else "\(.accuracy.median * 100 | f(1)) %" end),
			 (.polite_lost.median | f(0))] | @tsv' "$OUT/summary.json" |
		while IFS=$'\t' read -r c m r a p; do
			if [[ $sc == mixed ]]; then
				[[ $c == xdp_drop ]] && p="— (drops all)"
				echo "| $(label "$c") | $m | $r | $a | $p |"
			else
				echo "| $(label "$c") | $m | $r | $a |"
			fi
		done
		echo
	done
	if jq -e 'any(.[]; .scenario == "fleet")' "$OUT/summary.json" >/dev/null; then
		echo "**A fleet rule next to a host rule** — one source flooded through 198.18.0.0/15 at 100/s"
		echo "burst 20, served by xdp-rld: scope fleet, the key promoted and leased from a real"
		echo "redis-server (sync 50 ms), then the same rule of scope host; in turn in each round; ratio to"
		echo "the host rule in the same round (median, min–max)."
		echo
		echo "| rule | Mpps | × host rule | accuracy |"
		echo "|---|---:|---:|---:|"
		jq -r '.[] | select(.scenario == "fleet") |
			def f(d): if . == null then "—" else (. * pow(10; d) | round / pow(10; d) | tostring) end;
			[.contender, "\(.mpps.median | f(3)) (\(.mpps.min | f(2))–\(.mpps.max | f(2)))",
			 "\(.ratio_to_host_rule.median | f(3)) (\(.ratio_to_host_rule.min | f(3))–\(.ratio_to_host_rule.max | f(3)))",
			 (if .accuracy.median == null then "—" else "\(.accuracy.median * 100 | f(1)) %" end)] | @tsv' "$OUT/summary.json" |
		while IFS=$'\t' read -r c m r a; do
			echo "| $(label "$c") | $m | $r | $a |"
		done
		echo
	fi
	if [[ -f "$OUT/agg2.md" ]]; then
		echo "**An aggregate metered by two CPUs at once** — xrl-flood on CPUs 0 and 1, each its half"
		echo "of 1,000 sources landing on its own queue (NAPI on that CPU); a rule whose per-key limit"
		echo "never binds, so that every packet meets the aggregate; median of the rounds, ratio to bare"
		echo "XDP_DROP in the same round."
		echo
		cat "$OUT/agg2.md"
		echo
	fi
	if jq -e 'any(.[]; .mode == "cpu2")' "$OUT/summary.json" >/dev/null; then
		echo "**Two receiving CPUs against one** — the same scenario from one CPU (the generator and"
		echo "the receiving veth's NAPI on CPU 0) and from two (a generator thread on each CPU, each"
		echo "CPU's frames on its own queue of the receiving veth, so both NAPIs meet the same buckets:"
		echo "one source's bucket is written by both CPUs); × 1 CPU is the two-CPU rate over the one-CPU"
		echo "rate of the same contender in the same round (median of the rounds); accuracy as above."
		echo
		echo "| scenario | contender | 1 CPU, Mpps | 2 CPUs, Mpps | × 1 CPU | 2 CPUs × bare XDP_DROP on 2 | accuracy, 1 CPU | accuracy, 2 CPUs |"
		echo "|---|---|---:|---:|---:|---:|---:|---:|"
		jq -sr '
		  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
		  def f(d): if . == null then "—" else (. * pow(10; d) | round / pow(10; d) | tostring) end;
		  def pct: if . == null then "—" else "\(. * 1000 | round / 10) %" end;
		  map(select(.mode == "cpu1" or .mode == "cpu2")) as $all |
		  ($all | map({key: "\(.mode)/\(.scenario)/\(.contender)/\(.round)", value: .}) | from_entries) as $by |
		  ($all | map([.scenario, .contender]) | unique) as $pairs |
		  ["one", "k1", "spoof", "k1_low", "m1", "v6_64", "mixed", "spoof_open"] as $order |
		  ["xdp_drop", "xdprl_native", "xdprl_tc"] as $corder |
		  ($pairs | sort_by(. as [$s, $k] | [($order | map(. == $s) | index(true) // 99), ($corder | map(. == $k) | index(true) // 99)])) [] | . as [$sc, $c] |
		  [$all[] | select(.scenario == $sc and .contender == $c)] as $g |
		  ($g | map(select(.mode == "cpu1") | .mpps) | median) as $m1 |
		  ($g | map(select(.mode == "cpu2") | .mpps) | median) as $m2 |
		  ($g | map(select(.mode == "cpu2")) | map($by["cpu1/\($sc)/\($c)/\(.round)"].mpps as $o |
		     if $o and $o > 0 then .mpps / $o else null end) | map(select(. != null)) | median) as $x |
		  ($g | map(select(.mode == "cpu2")) | map($by["cpu2/\($sc)/xdp_drop/\(.round)"].mpps as $d |
		     if $d and $d > 0 then .mpps / $d else null end) | map(select(. != null)) | median) as $xd |
		  def acc(m): $g | map(select(.mode == m and .expected != null and .expected > 0) | .admitted / .expected) | median;
		  [$sc, $c, ($m1 | f(3)), ($m2 | f(3)), ($x | f(2)), ($xd | f(2)), (acc("cpu1") | pct), (acc("cpu2") | pct)] | @tsv' \
			"$OUT/runs.jsonl" |
		while IFS=$'\t' read -r sc c a b x xd p q; do
			echo "| $(slabel "$sc") | $(label "$c") | $a | $b | $x | $xd | $p | $q |"
		done
		echo
	fi
	if [[ -f "$OUT/casbench.md" ]]; then
		echo "**A compare-and-swap on one shared cache line** (\`tests/bench/casbench.c\`) — every CPU"
		echo "updates a 64-bit TAT (\`tat = max(tat, now) + interval\`, load, compare-and-swap, retry) on"
		echo "one line shared by all, or on a line of its own; ns per successful update per CPU (its CPU"
		echo "time), median of the rounds:"
		echo
		cat "$OUT/casbench.md"
		echo
	fi
	if [[ -f "$OUT/syncookies.md" ]]; then
		echo "**SYN cookies** — xrl-flood (not attached: every frame written whole) sends SYNs from 1M"
		echo "spoofed IPv6 sources; the answers are counted where they arrive (the sender's XDP drops),"
		echo "per second of the flood; median of the rounds, ratio to the first contender in the same round."
		echo "With one CPU sending, the rate is the cost of sending plus the cost of answering."
		cat "$OUT/syncookies.md"
		echo
	fi
	if [[ -f "$OUT/slip.md" ]]; then
		echo "**DNS slip** — xrl-flood sends DNS queries (one source, or 1,000) to UDP/53 under an"
		echo "endpoint rule over its limit with \`slip 1\` (every refused query is the answer step's turn;"
		echo "the host-wide cap answers 10,000 a second, burst 1,000, and drops the rest), against bare"
		echo "XDP_TX of the same frames; answers counted where they arrive (the generator's own program on"
		echo "the sending veth drops them), per second of the flood; frames handled per second is the"
		echo "generator's rate (one CPU sends and receives); medians, ratios taken in the same round."
		echo
		cat "$OUT/slip.md"
		echo
	fi
	if [[ -s "$OUT/replay.txt" || -s "$OUT/fuzz_speed.txt" ]]; then
		echo "**The offline tools** — \`xdp-rlctl replay\` of a capture of a flood"
		echo "(\`tests/bench/replay.sh\`: frames a second past loading the program, the default path"
		echo "beside the walk it replaced, which must give the same JSON), and the differential fuzzer's"
		echo "frames a second (\`tests/bench/fuzz_speed.sh\`: a load for every sequence, as it first ran,"
		echo "beside one load reset for each; 0 disagreements each):"
		echo
		echo '```'
		[[ -s "$OUT/replay.txt" ]] && cat "$OUT/replay.txt"
		[[ -s "$OUT/fuzz_speed.txt" ]] && cat "$OUT/fuzz_speed.txt"
		echo '```'
		echo
	fi
	if [[ -f "$OUT/xcheck.md" ]]; then
		echo "**Cross-checks with xdp-tools** — IPv6, one source, one CPU sends and receives. First"
		echo "\`xdp-bench drop\` (native, no-touch) on the receiving veth as a second bare contender beside"
		echo "ours (xdp-ref), flooded by xrl-flood, with its own count of packets received set against the"
		echo "frames the sending veth delivered in the same run; then the same flood from"
		echo "\`xdp-trafficgen udp\` instead of xrl-flood: the same 64-byte frames, each generator pinned"
		echo "to CPU 0 where the receiving veth's NAPI runs too (in the generator's softirq), read the"
		echo "same way over a window of each run — frames offered, frames the receiver's program saw, and"
		echo "the CPU time of the generator's threads, which holds the receiver's. xdp-rl's ratio to bare"
		echo "XDP_DROP with each generator, by rate and by CPU time per packet (bare's ÷ xdp-rl's: the"
		echo "rate ratio as if the generator had the CPU to itself: the neighbours' turns on the CPU do"
		echo "not enter it). One CPU runs both the generator (g ns a frame) and the receiver (r), so the"
		echo "rate ratio is (g + r bare) ÷ (g + r xdp-rl): a generator that costs more per frame dilutes"
		echo "it toward 1."
		echo
		cat "$OUT/xcheck.md"
		echo
	fi
	if jq -e 'any(.[]; .mode == "split")' "$OUT/summary.json" >/dev/null; then
		echo "**Receiver CPU time per packet** — the receiving veth's NAPI in its own thread on CPU 1,"
		echo "the generator on CPU 0; CPU time of that thread ÷ packets delivered (median, ns). Frames"
		echo "cross CPUs here, so every program that reads the packet pays a cache miss that bare"
		echo "XDP_DROP (which reads nothing) does not."
		echo
		echo "| contender | 1 source | 1,000 sources |"
		echo "|---|---:|---:|"
		for c in xdp_drop xdp_admit xdprl_native xdprl_generic xdprl_tc nft_netdev nft_input iptables_hashlimit none; do
			a=$(jq -r --arg c "$c" '.[] | select(.mode == "split" and .scenario == "one" and .contender == $c) | .rx_ns_per_packet.median // "—" | if type == "number" then round else . end' "$OUT/summary.json")
			b=$(jq -r --arg c "$c" '.[] | select(.mode == "split" and .scenario == "k1" and .contender == $c) | .rx_ns_per_packet.median // "—" | if type == "number" then round else . end' "$OUT/summary.json")
			echo "| $(label "$c") | ${a:-—} | ${b:-—} |"
		done
		echo
	fi
	if [[ -f "$OUT/goodput.json" ]]; then
		echo "**TCP bulk through the receiving veth** — iperf3, one stream from the sending namespace"
		echo "to a server in the receiving one, ${GP_DUR:-2} s per run after 0.5 s left out; xdp-rl with a"
		echo "rule that admits everything (every packet metered); median of the rounds (min–max) and"
		echo "ratios taken within each round."
		echo
		echo "| XDP on d0 | Gbit/s | × no XDP | × bare XDP_PASS | retransmits |"
		echo "|---|---:|---:|---:|---:|"
		for c in none xdp_pass xdprl_native_all xdprl_generic_all; do
			jq -r --arg c "$c" '.[] | select(.contender == $c) |
				def f(d): if . == null then "—" else (. * pow(10; d) | round / pow(10; d) | tostring) end;
				[.contender, "\(.gbps.median | f(2)) (\(.gbps.min | f(1))–\(.gbps.max | f(1)))",
				 (.ratio_to_none.median | f(2)), (.ratio_to_xdp_pass.median | f(2)),
				 (.retransmits.median | f(0))] | @tsv' "$OUT/goodput.json" |
			while IFS=$'\t' read -r k g a b t; do
				[[ $k == none ]] && k="no XDP program"
				[[ $k != "no XDP program" ]] && k=$(label "$k")
				echo "| $k | $g | $a | $b | $t |"
			done
		done
		echo
	fi
	if [[ -f "$OUT/dns.json" ]]; then
		qps=$(jq -r '.[0].qps' "$OUT/dns.json")
		echo "**A DNS server under a flood** — dnsmasq answers a polite dnsperf at $qps queries/s from one"
		echo "address while xrl-flood floods port 53 from another (open loop, from the sending CPU) and an"
		echo "unthrottled dnsperf (closed loop, 4 clients, 100 queries in flight) queries from a third;"
		echo "limiters: per source, $((2 * qps))/s, burst $((qps / 5)). Polite queries answered (a query"
		echo "unanswered after 1 s is lost), their latency, and dnsmasq's CPU (utime + stime over the run,"
		echo "% of one CPU); median of the rounds (min–max)."
		echo
		echo "| limiter | polite answered | latency avg | latency p99 | server CPU | flood delivered | unthrottled dnsperf answered |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for c in none nft_netdev xdprl_native; do
			jq -r --arg c "$c" '.[] | select(.contender == $c) |
				def f(d): if . == null then "—" else (. * pow(10; d) | round / pow(10; d) | tostring) end;
				[.contender, "\(.answered_pct.median | f(1)) % (\(.answered_pct.min | f(1))–\(.answered_pct.max | f(1)))",
				 "\(.latency_avg_ms.median | f(3)) ms", "\(.latency_p99_ms.median | f(2)) ms",
				 "\(.server_cpu_pct.median | f(0)) % (\(.server_cpu_pct.min | f(0))–\(.server_cpu_pct.max | f(0)))",
				 "\(.flood_mpps.median | f(2)) Mpps", "\(.unthrottled_answered.median | f(0))"] | @tsv' "$OUT/dns.json" |
			while IFS=$'\t' read -r k a l p u m q; do
				case $k in none) k="no limiter" ;; nft_netdev) k="nftables meter, netdev ingress" ;; xdprl_native) k="xdp-rl native" ;; esac
				echo "| $k | $a | $l | $p | $u | $m | $q |"
			done
		done
		echo
	fi
	mem=$(jq -r '.[] | select(.contender == "xdprl_native" and .bytes_per_key_ipv4.median != null) |
		"\(.bytes_per_key_ipv4.median | round) bytes per tracked IPv4 key, \(.bytes_per_key_ipv6.median | round) per IPv6 key"' "$OUT/summary.json" | head -n 1)
	[[ -n "$mem" ]] && { echo "Bucket table memory: $mem (memlock ÷ entries, 1,048,576 entries per family)."; echo; }
	if [[ -f "$OUT/microbench.md" ]]; then
		echo "**The program alone** (BPF_PROG_TEST_RUN, repeat 1,000,000, median of 5 interleaved rounds;"
		echo "the rows \"one run a call\" are calls of repeat 1, each on a fresh copy of a DNS query, since"
		echo "an answer rewrites its buffer into a response; they include the kernel timer's own cost, and"
		echo "their last column is against bare XDP_DROP timed the same way):"
		echo
		cat "$OUT/microbench.md"
	fi
} >"$OUT/bench.md"

# the chart: Mpps per contender, grouped by scenario
{
	printf 'scenario'
	for c in xdp_drop xdprl_native xdprl_generic xdprl_tc nft_netdev nft_input iptables_hashlimit none; do
		printf '\t"%s"' "$(label "$c")"
	done
	echo
	for sc in one k1 m1 v6_64 mixed; do
		case $sc in
		one) printf '"1 source"' ;; k1) printf '"1,000 sources"' ;; m1) printf '"1M random (IPv6)"' ;;
		v6_64) printf '"IPv6, one /64"' ;; mixed) printf '"flood + 3 polite"' ;;
		esac
		for c in xdp_drop xdprl_native xdprl_generic xdprl_tc nft_netdev nft_input iptables_hashlimit none; do
			printf '\t%s' "$(jq -r --arg sc "$sc" --arg c "$c" '.[] | select(.mode == "shared" and .scenario == $sc and .contender == $c) | .mpps.median' "$OUT/summary.json" | head -n 1)"
		done
		echo
	done
} >"$OUT/chart.dat"
if command -v gnuplot >/dev/null && jq -e 'any(.[]; .mode == "shared" and .scenario != "fleet")' "$OUT/summary.json" >/dev/null; then
	gnuplot <<-EOF
	set terminal pngcairo size 1100,520 font ",10" noenhanced
	set output "$OUT/bench.png"
	set title "Packets handled per second at the receiver (Mpps, one CPU sends and receives)"
	set style data histogram
	set style histogram cluster gap 1
	set style fill solid 0.9 border -1
	set boxwidth 0.9
	set key outside right top
	set ylabel "Mpps"
	set yrange [0:*]
	set grid ytics
	plot for [i=2:8] "$OUT/chart.dat" using i:xtic(1) title columnheader(i)
	EOF
fi
cat "$OUT/bench.md"

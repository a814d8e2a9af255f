#!/usr/bin/env bash
# End-to-end: the two ways `xdp-rlctl replay` finds the keys limited give the
# same output, byte for byte, text and JSON.
#  - the default path: a key's bucket counter read before and after its
#    frame, the rule's hot-key-cache counter after it, the counts read once
#    at the end;
#  - the walk (XRL_REPLAY_WALK=1): every key's count, bucket and whole
#    hot-key cache, read after every dropped frame.
# On a flood with many drops: a source over its limit answered by the cache,
# 256 sources sharing one /24 key, a dry-run rule's would-drops, a rule that
# bans its key, a spoofed spread under an aggregate; and on the crafted
# captures of test_replay (VLAN, IPv6, cut frames, cooked, an hour apart).
# The capture is written by tests/tools/pcapgen.py; no lab, no pins: replay
# runs on a private instance.
source "$(dirname "$0")/../lib/e2e.sh"

GEN="$TOP/tests/tools/pcapgen.py"

# same_output LABEL CAPTURE CONFIG [-j]: both paths, text and -j (only -j
# when given: the walk takes ~10 ms a dropped frame), compared
same_output() {
	local label=$1 cap=$2 conf=$3 only=${4-} j a b
	for j in ${only:-"" -j}; do
		a=$("$CTL_BIN" $j replay "$cap" config "$conf" 2>&1) || { fail "$label$j: replay failed: $a"; return; }
		b=$(XRL_REPLAY_WALK=1 "$CTL_BIN" $j replay "$cap" config "$conf" 2>&1) ||
			{ fail "$label$j: replay (walk) failed: $b"; return; }
		[[ "$a" == "$b" ]] ||
			fail "$label$j: the paths differ: $(diff <(echo "$a") <(echo "$b") | head -20)"
	done
}

test_flood_many_drops() {
	local d=$TMPD/flood conf=$TMPD/flood.conf rep
	mkdir -p "$d"
	cat >"$conf" <<-'EOF'
	# 198.18.0.1 sends 700/s: limited, its refusals answered by the cache
	rule add 198.18.0.0/16 rate 300/s burst 5 id 1
	# 256 sources, one key: many cache entries for one bucket
	rule add 198.18.1.0/24 rate 20/s burst 2 per /24 id 2
	# would-drops: passed, and the key's count moves all the same
	rule add 2001:db8:1::/48 rate 50/s burst 2 dry-run id 3
	# the spoofed spread as one key, banned for 1 s after two offences
	rule add 198.19.0.0/16 rate 10/s burst 1 per /16 ban 1s after 2 id 4
	EOF
	FLOOD_FRAMES=1500 FLOOD_GAP_NS=1000000 python3 "$GEN" flood "$d/f.pcap" ||
		{ fail "pcapgen flood"; return; }
	rep=$("$CTL_BIN" -j replay "$d/f.pcap" config "$conf") || { fail "replay failed"; return; }
	# the test means something only if every kind of drop is in it
	check_eq "four keys limited" "$(jq '.limited_keys | length' <<<"$rep")" 4
	check_match "would-drops counted" "$(jq '.would_drop_packets' <<<"$rep")" '^[1-9][0-9]*$'
	same_output "flood, 1 ms apart" "$d/f.pcap" "$conf" -j

	# a microsecond apart: the cache answers 16 drops between flushes
	sed -i 's|rate 10/s burst 1 per /16 ban 1s after 2|rate 1000/s burst 3 aggregate 2000/s burst 10|' "$conf"
	FLOOD_FRAMES=1000 python3 "$GEN" flood "$d/u.pcap" || { fail "pcapgen flood"; return; }
	same_output "flood, 1 us apart, aggregate" "$d/u.pcap" "$conf" -j
}

test_crafted_captures() {
	local d=$TMPD/crafted conf=$TMPD/crafted.conf s
	mkdir -p "$d"
	cat >"$conf" <<-'EOF'
	rule add 198.18.0.0/24 rate 1/h burst 3
	rule add 2001:db8:1::/48 rate 1/h burst 2
	EOF
	for s in mixed hour sll sll2; do
		python3 "$GEN" $s "$d/$s.pcapng" --format pcapng || { fail "pcapgen $s"; return; }
		same_output "$s" "$d/$s.pcapng" "$conf"
	done
}

run_test test_flood_many_drops
run_test test_crafted_captures
summary

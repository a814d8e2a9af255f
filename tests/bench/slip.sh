#!/usr/bin/env bash
# The DNS slip benchmark (make bench, part slip; or alone):
#
#   ns $GEN: s0 (xrl-flood -A: counts and drops what comes back) --- d0 :ns $RCV
#   xrl-flood on s0: DNS queries (bench.test A) to UDP/53, one source (and
#   1,000 sources with SLIP_SCENARIOS="one k1")
#
# Contenders on d0, each in turn, in ROUNDS interleaved rounds of DUR seconds:
#   xdp_tx       bare XDP_TX of the same frames (not a byte changed): the floor
#                of answering from XDP
#   xdprl_slip   xdp-rl, an endpoint rule over its limit with slip 1: every
#                refused query is the answer step's turn; the host-wide cap
#                (10,000 answers a second, burst 1,000) answers that many and
#                drops the rest
#   xdprl_drop   the same rule with slip 0: every refused query dropped
#   xdprl_tc     the slip 1 rule at hook tc, where nothing is answered (a
#                refusal whose turn it is to slip is dropped)
# Answers are counted where they arrive (xrl-flood's program on s0, which
# drops them: they neither reach s0's stack nor hold the generator's pages);
# frames handled per second is what the generator sent (one CPU sends and
# receives, so it runs at the pace of what d0 does with each frame).
# Reported: answers/s and frames handled/s, medians with min and max, and
# both against bare XDP_TX in the same round. Environment: ROUNDS (3), DUR
# (1), OUT (.output/bench), SLIP_SCENARIOS (one; k1: 1,000 sources).
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-1}
OUT=${OUT:-$TOP/.output/bench}
DST4=198.19.255.254
source "$TOP/tests/bench/bench_lab.sh"

bench_lab_init sl
RESULTS="$TMPD/slip.jsonl"

lab_build -d $DST4/15 || exit 1

# ---- contenders ----
setup_xdp_tx() { in_dst ip link set dev d0 xdpdrv obj "$TOP/.output/xdp_tx.bpf.o" sec xdp; }
teardown_xdp_tx() { in_dst ip link set dev d0 xdpdrv off; }
counters_xdp_tx() { echo "0 0"; }
xdprl_up() {	# HOOK SLIP
	local at=(mode native)
	[[ $1 == tc ]] && at=(hook tc)
	ctl attach dev d0 "${at[@]}" >/dev/null 2>&1 &&
		ctl rule add 198.18.0.0/15 proto udp dport 53 rate 1/s burst 1 slip "$2" id 1 >/dev/null
}
setup_xdprl_slip() { xdprl_up xdp 1; }
setup_xdprl_drop() { xdprl_up xdp 0; }
setup_xdprl_tc() { xdprl_up tc 1; }
teardown_xdprl() { ctl detach dev d0 purge >/dev/null; }
teardown_xdprl_slip() { teardown_xdprl; }
teardown_xdprl_drop() { teardown_xdprl; }
teardown_xdprl_tc() { teardown_xdprl; }
counters_xdprl() {	# "slipped capped" of rule 1
	ctl -j stats | jq -r '.rules[] | select(.id == 1) | "\(.slipped_packets // 0) \(.slip_capped_packets // 0)"'
}
counters_xdprl_slip() { counters_xdprl; }
counters_xdprl_drop() { counters_xdprl; }
counters_xdprl_tc() { counters_xdprl; }

declare -A SARGS=([one]="-s 198.18.0.1" [k1]="-s 198.18.0.0/15 -N 1000")

# run_one ROUND SCENARIO CONTENDER: one measurement, one JSON line
run_one() {
	local r=$1 sc=$2 c=$3 gen slipped capped
	"setup_$c" || { log "Error: cannot set up $c"; return 1; }
	gen=$(in_src "$FLOOD" -i s0 -m "$DST_MAC" -d $DST4 ${SARGS[$sc]} -p 53 -Q bench.test -A \
		-n 1000000000 -T "$DUR" -j) || { "teardown_$c"; log "Error: xrl-flood failed under $c"; return 1; }
	read -r slipped capped < <("counters_$c")
	"teardown_$c"
	jq -c --argjson r "$r" --arg sc "$sc" --arg c "$c" --argjson slipped "${slipped:-0}" \
		--argjson capped "${capped:-0}" \
		'{round: $r, scenario: $sc, contender: $c, sent: .sent, seconds: .seconds,
		  handled_pps: .pps, answers: .returned, answers_pps: .returned_pps, other: .returned_other,
		  slipped: $slipped, slip_capped: $capped}' <<<"$gen" >>"$RESULTS"
	log "   round $r  $sc  $c: $(tail -n 1 "$RESULTS" | jq -r '"\(.answers_pps | round) answers/s, \(.handled_pps | round) frames/s handled"')"
}

CONTENDERS=(xdp_tx xdprl_slip xdprl_drop xdprl_tc)
declare -A LABEL=(
	[xdp_tx]="bare XDP_TX of the same frames" [xdprl_slip]="xdp-rl slip 1 (the cap answers 10,000/s)"
	[xdprl_drop]="xdp-rl, the same rule with slip 0 (drops)" [xdprl_tc]="xdp-rl slip 1 at hook tc (never answers: drops)"
)
declare -A SLABEL=([one]="1 source" [k1]="1,000 sources")
SCENARIOS=(${SLIP_SCENARIOS:-one})

: >"$RESULTS"
for sc in "${SCENARIOS[@]}"; do
	log "== slip: $sc"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in "${CONTENDERS[@]}"; do
			run_one "$r" "$sc" "$c" || exit 1
		done
	done
done
cp "$RESULTS" "$OUT/slip_runs.jsonl"
{
	echo "| scenario | contender | answers/s (median, min–max) | × bare XDP_TX | frames handled/s (median, min–max) | × bare XDP_TX | answered ÷ slipped |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	for sc in "${SCENARIOS[@]}"; do
		for c in "${CONTENDERS[@]}"; do
			jq -sr --arg sc "$sc" --arg c "$c" --arg name "${LABEL[$c]}" --arg sname "${SLABEL[$sc]}" '
				def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
				(map(select(.scenario == $sc and .contender == "xdp_tx")) |
				 map({key: (.round | tostring), value: .}) | from_entries) as $base |
				map(select(.scenario == $sc and .contender == $c)) | . as $g |
				($g | sort_by(.answers_pps)) as $a | ($g | sort_by(.handled_pps)) as $h |
				def vs(f): map(. as $x | ($base[$x.round | tostring] // null) as $b |
					if $b != null and ($b | f) > 0 then ($x | f) / ($b | f) else null end) |
					map(select(. != null)) | median;
				($g | vs(.answers_pps)) as $ra | ($g | vs(.handled_pps)) as $rh |
				($g | map(select(.slipped > 0) | .answers / .slipped) | median) as $ok |
				def r3: if . == null then "—" else (. * 1000 | round / 1000 | tostring) end;
				"| \($sname) | \($name) | \($a[(length - 1) / 2 | floor].answers_pps | round) (\($a[0].answers_pps | round)–\($a[-1].answers_pps | round)) | \($ra | r3) | \($h[(length - 1) / 2 | floor].handled_pps | round) (\($h[0].handled_pps | round)–\($h[-1].handled_pps | round)) | \($rh | r3) | \(if $ok == null then "—" else "\($ok * 1000 | round / 10) %" end) |"' \
				"$RESULTS"
		done
	done
} >"$OUT/slip.md"
cat "$OUT/slip.md" >&2

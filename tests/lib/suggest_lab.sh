#!/usr/bin/env bash
# The traffic of known shape of the suggest tests (test_suggest.sh: the
# live sample; test_suggest_daemon.sh: the daemon's record), sourced after
# tests/lib/e2e.sh: twenty polite sources at 20, 40, .. 400 packets/s (one
# of them with bursts of 30 a second) and a flooder (xrl-flood, 20,000
# frames at once every second).
# shellcheck disable=SC2034 # the constants are the test files'
POLITE=20		# 198.18.0.1 .. .20 at 20 .. 400/s
STEP=20
BURSTY=5		# 198.18.0.5 also sends 30 at once every second
FLOODER=198.18.0.200
RUN_S=8			# one run of the traffic
TRAFFIC_PIDS=()		# the polite senders of a run
GROUPS_BG=()		# the loops of bursts, each a process group of its own

# the loops and what they started, gone with the lab (a test that failed
# half-way leaves no sender running)
kill_groups() {
	local g
	for g in "${GROUPS_BG[@]}"; do
		kill -9 -- "-$g" 2>/dev/null
	done
	GROUPS_BG=()
}
harness_reset() { kill_groups; lab_down; }
trap 'kill_groups; cleanup' EXIT

# the lab with the polite sources' addresses on s0
lab_up() {
	local i s=()
	for ((i = 1; i <= POLITE; i++)); do
		s+=(-s "198.18.0.$i/24")
	done
	lab_build "${s[@]}" -s "$FLOODER/24" -d 198.18.0.254/24 || { fail "cannot build the lab"; return 1; }
}

# traffic DIR: one run of every source (the polite ones paced with -P: a
# sender the busy machine held back skips what it missed, never catches up
# in a burst), in the background, each source's
# packets sent written to DIR/sent.N (the flooder's to DIR/sent.flood)
traffic() {
	local dir=$1 i
	mkdir -p "$dir"
	for ((i = 1; i <= POLITE; i++)); do
		nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.$i -d 198.18.0.254 \
			-n $((i * STEP * RUN_S)) -r $((i * STEP)) -P -t $((RUN_S + 5)) >"$dir/sent.$i" 2>/dev/null &
		BG_PIDS+=($!)
		TRAFFIC_PIDS+=($!)
	done
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid bash -c 'for ((j = 0; j < $1; j++)); do
			sleep 1
			nsenter --net="/run/netns/$2" "$3" -s "$4" -d 198.18.0.254 -n 30 -t 5
		done | awk "{ n += \$1 } END { print n }"' _ "$RUN_S" "$SRC" "$FLOOD" 198.18.0.$BURSTY \
		>"$dir/sent.burst" &
	GROUPS_BG+=($!)
	BURST_PID=$!
	# shellcheck disable=SC2016
	setsid bash -c 'for ((j = 0; j < $1; j++)); do
			nsenter --net="/run/netns/$2" "$3" -i s0 -m "$4" -s "$5" -d 198.18.0.254 \
				-n 20000 -l 106 -T 5 -j | jq -r .sent
			sleep 1
		done | awk "{ n += \$1 } END { print n }"' _ "$RUN_S" "$SRC" "$XFLOOD" $DST_MAC $FLOODER \
		>"$dir/sent.flood" &
	GROUPS_BG+=($!)
	FLOOD_PID=$!
}

# until every sender of a run is done (each is bounded: RUN_S + 5 s)
traffic_wait() {
	local i keep=() p t
	for i in "${TRAFFIC_PIDS[@]}" "$BURST_PID" "$FLOOD_PID"; do wait "$i" 2>/dev/null; done
	# a daemon the test started stays in BG_PIDS (cleaned up on exit)
	for p in "${BG_PIDS[@]}"; do
		for t in "${TRAFFIC_PIDS[@]}"; do [[ $p == "$t" ]] && continue 2; done
		keep+=("$p")
	done
	BG_PIDS=("${keep[@]}")
	TRAFFIC_PIDS=()
	GROUPS_BG=()
}

# the keys' drops, by address: "ADDR DROPPED" lines
key_drops() {
	ctl -j key list rule "$1" | jq -r '.[] | "\(.key | sub("/32$"; "")) \(.dropped_packets)"'
}


# applied_run LINE RATE BURST: rule 1 replaced by LINE, enforcing, and the
# same traffic again: no polite packet dropped, the flooder held to RATE
# over the run (and BURST)
applied_run() {
	local line=$1 rate=$2 burst=$3
	# applied: the same rule replaced by the line, enforcing
	ctl rule del 1 >/dev/null 2>&1
	# shellcheck disable=SC2086 # the line's words
	ctl $line >/dev/null || { fail "rule add refused the line: $line"; return; }
	ctl mode set enforce >/dev/null 2>&1
	local passed0 i drops polite=0 dropped_polite=0 fl_sent fl_dropped fl_passed
	passed0=$(rule_stat 1 passed_packets)
	local t0 span
	t0=$(date +%s%N)
	traffic "$TMPD/apply"
	traffic_wait
	# the run's span, measured: a loaded machine (the sanitizer's pass)
	# stretches the flooder's eight seconds of bursts to twelve or more, and
	# the rule admits its rate over all of them
	span=$((($(date +%s%N) - t0 + 999999999) / 1000000000))
	((span < RUN_S)) && span=$RUN_S
	drops=$(key_drops 1)
	for ((i = 1; i <= POLITE; i++)); do
		polite=$((polite + $(cat "$TMPD/apply/sent.$i")))
		dropped_polite=$((dropped_polite + $(awk -v k=198.18.0.$i '$1 == k { print $2 }' <<<"$drops")))
	done
	polite=$((polite + $(cat "$TMPD/apply/sent.burst")))
	check_eq "no polite packet dropped (of $polite)" "$dropped_polite" 0
	fl_sent=$(cat "$TMPD/apply/sent.flood")
	fl_dropped=$(awk -v k=$FLOODER '$1 == k { print $2 }' <<<"$drops")
	# what the rule passed in the run, less every polite packet
	fl_passed=$(($(rule_stat 1 passed_packets) - passed0 - polite))
	echo "    applied: polite $polite sent, $dropped_polite dropped; flooder $fl_sent sent, $fl_passed passed in $span s;" \
		"rule: $(ctl -j stats | jq -c '.rules[0] | {aggregate_dropped_packets, new_keys_refused}')"
	# the flooder: the rate over the run (and the burst), with the hot-key
	# cache's drops not yet flushed (at most 15 a CPU)
	check_eq "flooder held to $rate/s x $span s + burst $burst" \
		"$((fl_passed <= rate * (span + 1) + burst + 30 * $(nproc)))" 1
	# of what reached the program (a veth drops some of a burst of 20,000
	# before XDP sees it)
	check_eq "flooder mostly dropped" "$((fl_dropped * 10 >= (fl_dropped + fl_passed) * 9))" 1
}

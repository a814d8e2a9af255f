#!/usr/bin/env bash
# xdp-rld --suggest (docs/suggest.md, "The daemon's record"): the daemon
# records the traffic of known shape of tests/lib/suggest_lab.sh with
# nobody watching; `xdp-rlctl suggest from ADDR:PORT` takes the proposal
# from its /metrics, and that proposal, applied in enforce mode to the
# same traffic again, drops no polite packet and holds the flooder. Also:
# the metrics' shape, and the errors when the daemon is unreachable, does
# not record, or answers something that is not its metrics.
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/suggest_lab.sh"

PORT=9466		# in the lab's own namespace: no other engineer's
ADDR=127.0.0.1:$PORT
CONF="$TMPD/rules.conf"
LOG="$TMPD/rld.log"

metrics() { nsenter --net="/run/netns/$DST" curl -s "$ADDR/metrics"; }
metric() { metrics | awk -v m="$1" '$1 == m { print $2 }'; }

# the daemon with the learning rule, recording
rld_up() {
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 1000" "metrics $ADDR" \
		"rule add 198.18.0.0/24 rate 1/s burst 1 dry-run id 1"
	: >"$LOG"
	start_rld "$LOG" --config "$CONF" "$@"
	wait_log "$LOG" "metrics on http://$ADDR/metrics" || return 1
}

# until the record holds N spans of rule 1 (at most S seconds)
wait_spans() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		(($(metric 'xdp_rl_suggest_spans_total{rule="1"}' || echo 0) >= $1)) && return 0
		sleep 0.1
	done
	fail "the record has not reached $1 spans in $2 s"
	return 1
}

test_suggest_daemon_learns_and_holds() {
	lab_up || return
	rld_up --suggest || return
	wait_log "$LOG" "suggest: recording" || return
	wait_spans 1 8 || return	# the rule's first walk done: the sources are new keys
	traffic "$TMPD/learn"
	traffic_wait
	local spans m j line rate burst
	spans=$(metric 'xdp_rl_suggest_spans_total{rule="1"}')
	wait_spans $((spans + 2)) 14 || return	# the spans the traffic ended in, closed
	m=$(metrics)
	check_match "the rule's line in the record" "$m" \
		'xdp_rl_suggest_rule_info\{rule="1",line="rule add 198.18.0.0/24 rate 1/s burst 1 .*dry-run.*"\} 1'
	check_match "a histogram of the key rates, to +Inf" "$m" 'xdp_rl_suggest_key_rate_bucket\{rule="1",le="\+Inf"\} [1-9]'
	check_match "and of the bursts" "$m" 'xdp_rl_suggest_key_burst_bucket\{rule="1",le="400"\} [0-9]'
	check_eq "the bounds: 81 and +Inf" "$(grep -c '^xdp_rl_suggest_key_rate_bucket{rule="1"' <<<"$m")" 82
	check_match "new keys: all 21 sources within a second or so" "$m" 'xdp_rl_suggest_new_keys_peak\{rule="1"\} ([2-9][0-9]|1[0-9])\.'
	check_eq "nothing left out" "$(awk '$1 == "xdp_rl_suggest_keys_not_sampled_total{rule=\"1\"}" { print $2 }' <<<"$m")" 0
	# key-spans: each key about equally often, the flooder one key of 21,
	# so about 5 % of the observations: the 90th percentile is a polite key's
	ctl -j suggest from "$ADDR" percentile 90 headroom 50 >"$TMPD/s.json" 2>"$TMPD/s.err" ||
		{ fail "suggest from: $(cat "$TMPD/s.err")"; return; }
	j=$(cat "$TMPD/s.json")
	echo "    from the daemon: $(jq -c '.[0] | del(.line)' <<<"$j")"
	check_eq "one rule" "$(jq length <<<"$j")" 1
	rate=$(jq '.[0].rate' <<<"$j")
	burst=$(jq '.[0].burst' <<<"$j")
	# a polite key's rate (the bound above it: at most 26 % over), times 1.5
	check_eq "rate $rate/s: 1.5 x the bound of a fast polite key (300 .. 500/s)" \
		"$((rate * 100 >= 300 * 150 && rate <= 750))" 1
	check_eq "burst $burst: at least the bursts of 30" "$((burst >= 30))" 1
	line=$(jq -r '.[0].line' <<<"$j")
	check_match "a rule line" "$line" "^rule add 198.18.0.0/24 rate $rate/s burst $burst per /32 .*id 1 .*aggregate [0-9]+/s burst [0-9]+ new-keys [0-9]+/s$"
	check_eq "the proposal enforces" "$(grep -c dry-run <<<"$line")" 0
	printf '%s\n' "$line" >"$TMPD/proposed.conf"
	check_match "config accepts it" "$("$RLD_BIN" --check --config "$TMPD/proposed.conf" 2>&1)" "valid, 1 rule"
	# the text output
	local txt
	txt=$(ctl suggest from "$ADDR" percentile 90)
	sed 's/^/    | /' <<<"$txt"
	check_match "text: the figures" "$txt" \
		"# rule 1 \(198.18.0.0/24\): the daemon's record at $ADDR, [0-9]+ s, [0-9]+ spans of 5 s"
	applied_run "$line" "$rate" "$burst"
	check_eq "the daemon still beats" "$(ctl -j status | jq '.heartbeat_age_ms < 1000')" true
	# the rule changed: its record starts again (a new generation)
	sleep 1.5
	check_match "the changed rule's record starts afresh" "$(metrics | grep '^xdp_rl_suggest_rule_info')" \
		"line=\"rule add 198.18.0.0/24 rate $rate/s"
}

test_suggest_daemon_errors() {
	lab_up || return
	# nothing listens
	check_match "unreachable" "$(ctl suggest from 127.0.0.1:9 2>&1)" \
		"^Error: cannot reach the daemon at 127.0.0.1:9: Connection refused"
	check_match "not an address" "$(ctl suggest from localhost:80 2>&1)" "^Error: invalid daemon's metrics address"
	check_match "off is not a daemon" "$(ctl suggest from off 2>&1)" "^Error: 'from off'"
	check_match "seconds means nothing" "$(ctl suggest from "$ADDR" seconds 5 2>&1)" "^Error: 'seconds' means nothing with 'from'"
	# a daemon that does not record
	rld_up || return
	check_match "no --suggest" "$(ctl suggest from "$ADDR" 2>&1)" \
		"^Error: $ADDR serves no xdp_rl_suggest_\* metrics: start xdp-rld with --suggest"
	kill_bg
	# a server that answers something else: a 404, then lies
	local www="$TMPD/www" srv
	mkdir -p "$www"
	(cd "$www" && exec nsenter --net="/run/netns/$DST" python3 -m http.server --bind 127.0.0.1 $PORT) \
		>"$TMPD/www.log" 2>&1 &
	srv=$!
	BG_PIDS+=("$srv")
	wait_listen "$DST" $PORT 5 || return
	check_match "a 404" "$(ctl suggest from "$ADDR" 2>&1)" "^Error: $ADDR did not answer 200 OK to GET /metrics"
	printf 'xdp_rl_suggest_key_rate_bucket{rule="1",le="1"} 3\nxdp_rl_suggest_spans_total{rule="1" 2\n' >"$www/metrics"
	check_match "garbage" "$(ctl suggest from "$ADDR" 2>&1)" "^Error: $ADDR: line 2 of /metrics is not a Prometheus sample"
	{
		echo 'xdp_rl_suggest_rule_info{rule="1",line="rule add 198.18.0.0/24 rate 1/s burst 1 id 1"} 1'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="1"} 5'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="2"} 3'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="+Inf"} 5'
		echo 'xdp_rl_suggest_key_burst_bucket{rule="1",le="+Inf"} 5'
	} >"$www/metrics"
	check_match "counts that fall" "$(ctl suggest from "$ADDR" 2>&1)" "^Error: $ADDR: rule 1's histograms are malformed"
	{
		echo 'xdp_rl_suggest_rule_info{rule="1",line="attach dev d0"} 1'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="+Inf"} 5'
		echo 'xdp_rl_suggest_key_burst_bucket{rule="1",le="+Inf"} 5'
	} >"$www/metrics"
	check_match "a line that is no rule" "$(ctl suggest from "$ADDR" 2>&1)" "^Error: $ADDR: rule 1's line in the record is not a rule"
	check_match "no such rule" "$(ctl suggest from "$ADDR" rule 7 2>&1)" "^Error: the daemon at $ADDR records no rule 7"
	# a record of 5 keys in one span, one of them new in a second (an
	# established rule): the budget still fits the 5, all new to the
	# applied rule
	{
		echo 'xdp_rl_suggest_rule_info{rule="1",line="rule add 198.18.0.0/24 rate 1/s burst 1 id 1"} 1'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="100"} 5'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="+Inf"} 5'
		echo 'xdp_rl_suggest_key_burst_bucket{rule="1",le="10"} 5'
		echo 'xdp_rl_suggest_key_burst_bucket{rule="1",le="+Inf"} 5'
		echo 'xdp_rl_suggest_spans_total{rule="1"} 1'
		echo 'xdp_rl_suggest_new_keys_peak{rule="1"} 1'
	} >"$www/metrics"
	check_match "new keys: at least the keys of a span" "$(ctl suggest from "$ADDR" 2>&1 | tail -n 1)" \
		"^rule add 198.18.0.0/24 rate 150/s burst 15 .* new-keys 8/s$"
	# a record whose figures make a line rule add refuses is said, not
	# proposed: bursts of 1e8 at 1/s, and a bound that is no number
	{
		echo 'xdp_rl_suggest_rule_info{rule="1",line="rule add 198.18.0.0/24 rate 1/s burst 1 id 1"} 1'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="1"} 5'
		echo 'xdp_rl_suggest_key_rate_bucket{rule="1",le="+Inf"} 5'
		echo 'xdp_rl_suggest_key_burst_bucket{rule="1",le="100000000"} 5'
		echo 'xdp_rl_suggest_key_burst_bucket{rule="1",le="+Inf"} 5'
	} >"$www/metrics"
	check_match "a burst no rate refills" "$(ctl suggest from "$ADDR" 2>&1)" \
		"^Error: $ADDR: rule 1: the record gives a rule that rule add refuses \(.*over a year"
	sed -i 's/le="1"}/le="nan"}/' "$www/metrics"
	check_match "a bound that is no number" "$(ctl suggest from "$ADDR" 2>&1)" "^Error: $ADDR: rule 1's histograms are missing or malformed"
	echo 'xdp_rl_suggest_aggregate_peak{rule="1"} -inf' >>"$www/metrics"
	check_match "a figure that is no count" "$(ctl suggest from "$ADDR" 2>&1)" "^Error: $ADDR: line 6 of /metrics is not a Prometheus sample"
	kill_bg
	# a server that answers a byte a second: the whole answer has 5 s, not
	# each read (timeout says 124 when the command would have hung on)
	nsenter --net="/run/netns/$DST" python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", '"$PORT"')); s.listen(1)
c, _ = s.accept(); c.recv(4096)
for i in range(30):
    c.send(b"H"); time.sleep(1)
' >"$TMPD/drip.log" 2>&1 &
	BG_PIDS+=("$!")
	wait_listen "$DST" "$PORT" || return
	local out rc=0
	out=$(timeout 20 nsenter --net="/run/netns/$DST" "$CTL_BIN" suggest from "$ADDR" 2>&1) || rc=$?
	check_match "a server that drips" "$out" "^Error: $ADDR: no complete answer in 5 s"
	check_eq "a server that drips: said, not hung" "$rc" 1
}

run_test test_suggest_daemon_learns_and_holds
run_test test_suggest_daemon_errors
summary

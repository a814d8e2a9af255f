#!/usr/bin/env bash
# End-to-end: outputs that must not mislead. A dry-run rule's drops are
# would-drops in every per-key view (events, show, key list, replay, text
# and JSON); rule list config reads back as the same rule set; status's cost
# per packet is a recent one and names who holds the global statistics;
# unprivileged users are told "permission denied"; help, completion and
# rule del say what they mean; the metrics and sizes the docs give are the
# daemon's and the kernel's (tests/docs/run.sh holds the rest, root-free).
source "$(dirname "$0")/../lib/e2e.sh"

EV="$TMPD/events.out"
GEN="$TOP/tests/tools/pcapgen.py"

# events_bg ARGS...: xdp-rlctl ARGS (an events command) in the background,
# its stdout in $EV; returns once it holds the events claim
EV_PID=
events_bg() {
	: >"$EV"
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" "$@" >"$EV" 2>"$EV.err" &
	EV_PID=$!
	BG_PIDS+=($EV_PID)
	local i ino
	for ((i = 0; i < 100; i++)); do
		ino=$(stat -c %i "$PIN/events" 2>/dev/null) &&
			grep -qE "FLOCK .* $EV_PID [0-9a-f:]+:$ino " /proc/locks && break
		sleep 0.05
	done
	sleep 0.2
}

# over the limit (rate 10/s burst 5), then a pause and one polite packet
limit_then_recover() {	# SRC
	flood "$1" 198.18.0.254 100 >/dev/null
	sleep 1.5	# full again after 0.5 s (+ one interval)
	flood "$1" 198.18.0.254 1 >/dev/null
}

# A dry-run rule's key: "would be limited", its drops would-drops, in the
# events (text and JSON), show, key list; an enforcing rule's beside it
# stays "dropped".
test_dry_run_keys() {
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.1/32 rate 10/s burst 5 dry-run id 9 >/dev/null
	ctl rule add 198.18.0.2/32 rate 10/s burst 5 id 2 >/dev/null
	ctl rule add 198.18.0.3/32 rate 10/s burst 5 dry-run id 3 >/dev/null
	events_bg events count 2 timeout 20
	limit_then_recover 198.18.0.1
	wait_exit "$EV_PID" 10
	check_eq "events: exit" $? 0
	check_match "events: limited" "$(sed -n 1p "$EV")" \
		"^[0-9-]+T[0-9:.]+Z 198\.18\.0\.1 would be limited by rule 9$"
	check_match "events: unlimited" "$(sed -n 2p "$EV")" \
		"^[0-9-]+T[0-9:.]+Z 198\.18\.0\.1 no longer would be limited by rule 9 \(95 would-drops, passed: dry-run\)$"
	events_bg -j events count 2 timeout 20
	limit_then_recover 198.18.0.2
	wait_exit "$EV_PID" 10
	check_eq "events -j: exit" $? 0
	check_eq "events -j: enforcing" "$(jq -c '[.event, .rule, .mode, .dry_run]' <"$EV" | tr '\n' ' ')" \
		'["limited",2,"enforce",false] ["unlimited",2,"enforce",false] '
	events_bg -j events count 1 timeout 20
	flood 198.18.0.3 198.18.0.254 100 >/dev/null
	wait_exit "$EV_PID" 10
	check_eq "events -j: dry-run" "$(jq -c '[.event, .rule, .mode, .dry_run]' <"$EV")" \
		'["limited",3,"dry-run",true]'

	# an endpoint rule's key under show
	ctl rule add 0.0.0.0/0 proto udp dport 9 rate 10/s burst 5 dry-run id 7 >/dev/null
	flood 198.18.0.1 198.18.0.254 10 >/dev/null

	check_match "show: would-drop" "$(ctl show 198.18.0.1)" $'\n''would-drop: 100 \(dry-run: passed\)'$'\n'
	check_match "show: dropped" "$(ctl show 198.18.0.2)" $'\n''dropped:   95'$'\n'
	check_match "show: endpoint would-drops" "$(ctl show 198.18.0.1)" \
		"endpoint: +rule 7 .* [0-9]+ would-drops \(dry-run: passed\)"
	check_eq "show -j" "$(ctl -j show 198.18.0.1 | jq -c '[.dry_run, .dropped_packets, .endpoints[0].dry_run]')" '[true,100,true]'
	check_eq "show -j: enforcing" "$(ctl -j show 198.18.0.2 | jq -c '[.dry_run, .dropped_packets]')" '[false,95]'
	check_eq "key list -j" "$(ctl -j key list | jq -c '[.[] | [.key, .rule, .dry_run]] | sort')" \
		'[["198.18.0.1/32",7,true],["198.18.0.1/32",9,true],["198.18.0.2/32",2,false],["198.18.0.3/32",3,true]]'
	check_match "key list: dry-run key" "$(ctl key list rule 9)" \
		$'\n''198\.18\.0\.1/32 +9 .* 100 .* s ago \(dry-run: would-drops\)$'
	check_match "key list: enforcing key" "$(ctl key list rule 2)" $'\n''198\.18\.0\.2/32 +2 .* 95 .* s ago$'
	# the mode's dry-run: every key's drops are would-drops
	ctl mode set dry-run >/dev/null
	check_eq "mode dry-run: show -j" "$(ctl -j show 198.18.0.2 | jq .dry_run)" true
	check_match "mode dry-run: show" "$(ctl show 198.18.0.2)" $'\n''would-drop: 95 '
}

# replay counts a dry-run rule's would-drops and names its keys' drops so
test_replay_dry_run() {
	local d=$TMPD/replay conf=$TMPD/replay.conf rep out
	mkdir -p "$d"
	printf '%s\n' "rule add 198.18.0.0/24 rate 1/h burst 3 dry-run id 1" \
		"rule add 2001:db8:1::/48 rate 1/h burst 2 id 2" >"$conf"
	python3 "$GEN" mixed "$d/mixed.pcap" || { fail "pcapgen"; return; }
	rep=$("$CTL_BIN" -j replay "$d/mixed.pcap" config "$conf") || { fail "replay failed"; return; }
	check_eq "would-drops" "$(jq -c '[.would_drop_packets, .dropped_packets]' <<<"$rep")" '[12,6]'
	check_eq "per rule" "$(jq -c '[.rules[] | [.id, .dropped_packets, .would_drop_packets]]' <<<"$rep")" \
		'[[1,0,12],[2,4,0]]'
	check_eq "keys" "$(jq -c '[.limited_keys[] | [.key, .dropped_packets, .dry_run]]' <<<"$rep")" \
		'[["198.18.0.1/32",3,true],["198.18.0.2/32",3,true],["198.18.0.3/32",3,true],["2001:db8:1::/64",4,false],["198.18.0.4/32",3,true]]'
	out=$("$CTL_BIN" replay "$d/mixed.pcap" config "$conf")
	check_match "text: rule" "$out" $'\n''rule 1 dry-run: would have dropped 12 packets, 756 bytes'$'\n'
	check_match "text: key" "$out" $'\n''198\.18\.0\.1/32 +1 +3 [^'$'\n'']* \(dry-run: would-drops\)'$'\n'
}

# rule list config writes every setting of every rule as xdp-rl.conf reads
# it: loaded into a fresh instance (through the daemon, after --check) it
# dumps again identically, lists identically, and meters the same.
RULES=(
	"198.18.0.0/15 rate 100/s burst 20 aggregate 5000/s burst 800 new-keys 50/s"
	"198.18.1.0/24 rate 10mbit burst 64kb per /24 on-failure closed dry-run"
	"198.18.2.0/24 rate 600/min algo sliding-window"
	"0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10"
	"0.0.0.0/0 proto udp dport 1000-2000 action deny on-failure closed"
	"192.0.2.1 action allow id 40"
	"2001:db8::/32 rate 1/h burst 1 per /48 aggregate 5/min"
	"203.0.113.0/24 rate 2mbps algo fixed-window"
)
test_rule_list_config() {
	local conf=$TMPD/dump.conf log=$TMPD/rld.log r dump1 dump2 list1 list2 out
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	for r in "${RULES[@]}"; do
		ctl rule add $r >/dev/null || fail "rule add $r"
	done
	dump1=$(ctl rule list config)
	check_eq "one line per rule" "$(grep -c '^rule add ' <<<"$dump1")" ${#RULES[@]}
	check_match "aggregate and new-keys written" "$dump1" \
		$'(^|\n)rule add 198\\.18\\.0\\.0/15 rate 100/s burst 20 per /32 action limit id 1 on-failure open algo token-bucket aggregate 5000/s burst 800 new-keys 50/s\n'
	check_eq "-j: the same lines" "$(ctl -j rule list config | jq -r '.[]')" "$dump1"
	list1=$(ctl -j rule list)
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_eq "metered: first instance" "$(rule_stat 1 passed_packets)/$(rule_stat 1 dropped_packets)" 20/80
	ctl detach dev d0 purge >/dev/null || fail "detach purge"
	{ echo "interface d0"; echo "metrics off"; echo "$dump1"; } >"$conf"
	out=$("$RLD_BIN" --check --config "$conf" 2>&1)
	check_eq "--check" "$out" "$conf: valid, ${#RULES[@]} rules"
	: >"$log"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	dump2=$(ctl rule list config)
	check_eq "dumped again: identical" "$dump2" "$dump1"
	list2=$(ctl -j rule list)
	check_eq "rule list -j: identical" "$list2" "$list1"
	flood 198.18.0.1 198.18.0.254 100 >/dev/null
	check_eq "metered: second instance" "$(rule_stat 1 passed_packets)/$(rule_stat 1 dropped_packets)" 20/80
}

# rule add help: a line per keyword with what it takes and its unit; the
# JSON help the same, per keyword
test_help_per_keyword() {
	local h
	h=$("$CTL_BIN" rule add help)
	check_match "rate: its unit" "$h" $'\n''    rate N/s\|N/min\|N/h +packets per key per s, min or h; bytes: 10mbit, 2mbps'
	check_match "burst: its unit" "$h" $'\n''    burst N +bucket size in packets \(bytes for a byte rate: 64kb\)'
	check_match "the aggregate's burst under it" "$h" $'\n''      burst N +the aggregate.s burst in packets'
	check_eq "no line over 110 characters" "$(awk 'length($0) > 110' <<<"$h")" ""
	check_eq "a line per keyword" "$(grep -cE '^    (PREFIX\|@SET|rate|burst|per|action|id|on-failure|algo|dry-run|proto|dport|syn|scope|aggregate|new-keys)( |$)' <<<"$h")" 15
	check_eq "-j: per keyword" "$("$CTL_BIN" -j rule add help | jq -r '.[0].params[] | select(.keyword == "per") | .help')" \
		"key length in bits of the source (default /32, IPv6 /64)"
	check_eq "a group: its synopses" "$("$CTL_BIN" help mode)" "$(printf '  mode\n  mode set enforce|dry-run|fail-open|fail-closed')"
}

# complete LINE: the completions of LINE, the cursor at its end, sorted on
# one line; in the receiving namespace, with xdp-rlctl on the PATH and the
# current directory $1's
complete_in() {	# DIR LINE
	(cd "$1" && PATH="$OUT:$PATH" nsenter --net="/run/netns/$DST" bash -c '
		source "$1" || exit 1
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_xdp_rlctl
		printf "%s\n" "${COMPREPLY[@]}"' _ "$OUT/xdp-rlctl.bash" "$2") | sed '/^$/d' | sort | paste -sd ' '
}

# completion: file names for replay FILE, config FILE; rule ids for rule
# del (of the pins --pin-dir names)
test_completion_files_and_ids() {
	local d=$TMPD/files
	lab_up || return
	mkdir -p "$d"
	: >"$d/cap.pcap"
	: >"$d/rules.conf"
	check_eq "replay FILE" "$(complete_in "$d" "xdp-rlctl replay ")" "cap.pcap rules.conf"
	check_eq "replay FILE config FILE" "$(complete_in "$d" "xdp-rlctl replay cap.pcap config r")" "rules.conf"
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 10/s burst 5 id 3 >/dev/null
	ctl rule add 0.0.0.0/0 proto tcp dport 22 rate 10/s burst 5 id 12 >/dev/null
	check_eq "rule del: ids" "$(complete_in "$d" "xdp-rlctl --pin-dir $PIN rule del ")" "12 3 id"
	check_eq "rule del id: ids" "$(complete_in "$d" "xdp-rlctl --pin-dir=$PIN rule del id 1")" "12"
	check_eq "key list rule: ids" "$(complete_in "$d" "xdp-rlctl key list --pin-dir $PIN rule ")" "12 3"
}

# rule del PREFIX when only endpoint rules have that prefix: which, and how
test_rule_del_endpoint_prefix() {
	local out
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	ctl rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10 id 2 >/dev/null
	out=$(ctl rule del 0.0.0.0/0 2>&1)
	check_eq "refused" $? 1
	check_eq "names it" "$out" "Error: no source rule for prefix 0.0.0.0/0; it has endpoint rule 2 (proto tcp dport 22 syn): 'rule del id 2' removes that one"
	ctl rule add 0.0.0.0/0 proto udp dport 53 rate 10/s burst 10 id 5 >/dev/null
	out=$(ctl rule del 0.0.0.0/0 2>&1)
	check_eq "two: names both" "$out" "Error: no source rule for prefix 0.0.0.0/0; it has endpoint rules 2, 5: 'rule del id ID' removes one of them"
	check_eq "nothing removed" "$(ctl -j rule list | jq -c '[.[].id]')" '[2,5]'
	out=$(ctl rule del 198.18.9.0/24 2>&1)
	check_eq "no rule at all" "$out" "Error: no rule for prefix 198.18.9.0/24"
	check_match "by id" "$(ctl rule del id 2)" "removed rule 2 for 0.0.0.0/0"
}

# as_nobody ARGS...: xdp-rlctl as uid 65534 in the receiving namespace
as_nobody() {
	nsenter --net="/run/netns/$DST" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CTL_BIN" --pin-dir "$PIN" "$@"
}

# An unprivileged user is told "permission denied" and to run as root: the
# pins exist (not "xdp-rl is not loaded"), and an attach refused by the
# kernel is no other version's pins.
test_unprivileged_permission_denied() {
	local out cmd
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	# the lab's temp dir is root's 0700: its bpffs cannot be reached
	for cmd in status "rule list" stats "attach dev d0"; do
		out=$(as_nobody $cmd 2>&1)
		check_eq "$cmd: refused" $? 1
		check_match "$cmd: permission denied" "$out" \
			"^Error: permission denied: cannot look into $BPFFS \(uid 65534\): .*run it as root"
	done
	# the parents open, the pin directory root's 0700 (as attach makes it)
	chmod 0755 "$TMPD"
	out=$(as_nobody status 2>&1)
	check_match "pin dir 0700: permission denied" "$out" \
		"^Error: permission denied: cannot read the pin directory $PIN \(uid 65534\): .*run it as root"
	# the directory open, the pins themselves root's 0600
	chmod 0755 "$PIN"
	out=$(as_nobody -j status 2>&1)
	check_match "pins 0600: permission denied" "$(jq -r .error <<<"$out")" \
		"^permission denied: cannot open the pinned program $PIN/xdp_rl_prog \(uid 65534\)"
	# an instance of its own on a bpffs it may write: the load is refused
	chmod 1777 "$BPFFS"
	out=$(nsenter --net="/run/netns/$DST" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CTL_BIN" --pin-dir "$BPFFS/nobody" attach dev d0 2>&1)
	check_eq "attach: refused" $? 1
	check_match "attach: permission denied" "$out" "^Error: cannot load the BPF program: permission denied \(uid 65534\)"
	[[ $out == *"another version"* ]] && fail "attach: hints at another version: $out"
	rm -rf "$BPFFS/nobody"
	chmod 0700 "$PIN" "$TMPD"
	chmod 1777 "$BPFFS"
	check_match "root still reads" "$(ctl status)" "rules"
}

# status: the cost per packet now, over a sample the command takes (not
# the average since the statistics were enabled), and who holds them
test_status_recent_run_time() {
	local conf=$TMPD/rt.conf log=$TMPD/rt.log j runs pid
	lab_up || return
	printf '%s\n' "interface d0" "heartbeat 100" "watchdog 0" "metrics off" \
		"rule add 198.18.0.0/24 rate 1/h burst 50 id 1" >"$conf"
	: >"$log"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	flood 198.18.0.1 198.18.0.254 20000 >/dev/null
	# quiet: the lifetime figure has 20000 runs, the sample next to none
	j=$(ctl -j status sample 500)
	runs=$(jget "$j" .program_run.runs)
	((runs >= 20000)) || fail "lifetime runs $runs < 20000"
	check_eq "sample_ms" "$(jget "$j" .program_run.sample_ms)" 500
	(($(jget "$j" .program_run.sample_runs) < 50)) || fail "a quiet sample counted $(jget "$j" .program_run.sample_runs) runs"
	check_match "lifetime figure" "$(jget "$j" .program_run.ns_per_packet_lifetime)" "^[0-9]+$"
	check_eq "global" "$(jget "$j" .program_run.global)" true
	check_match "quiet text" "$(ctl status sample 200)" \
		$'\n''run time:    (no runs in the last 0\.200 s|[0-9]+ ns/packet over the last 0\.200 s \([0-9]+ runs\))'$'\n''             [0-9]+ ns/packet over [0-9]+ runs since the stats were enabled'$'\n''             stats enabled by pid [0-9]+ \([^)]+\): they are global, every BPF program of the host is timed'
	# 2000 frames a second for 3 s; a 1 s sample in the middle counts its own
	flood 198.18.0.2 198.18.0.254 6000 2000 >/dev/null &
	pid=$!
	sleep 0.5
	j=$(ctl -j status sample 1000)
	wait "$pid"
	runs=$(jget "$j" .program_run.sample_runs)
	((runs >= 300 && runs <= 6000)) || fail "sample runs $runs for a 1 s sample at 2000/s"
	((runs < $(jget "$j" .program_run.runs))) || fail "the sample counted as many runs as the lifetime"
	ns=$(jget "$j" .program_run.ns_per_packet)
	[[ $ns =~ ^[0-9]+$ ]] && ((ns >= 5 && ns <= 100000)) || fail "sample ns_per_packet '$ns'"
	check_eq "sample 0: no sample" "$(ctl -j status sample 0 | jq -c '[.program_run.sample_ms, .program_run.ns_per_packet]')" '[0,null]'
}

# the metrics the docs name (README, man pages, the alerting rules), each
# in a real scrape of a daemon with a fleet rule on a real redis-server
test_docs_metrics_scraped() {
	local conf=$TMPD/m.conf log=$TMPD/m.log rpid i m name docs missing=
	lab_up || return
	nsenter --net="/run/netns/$DST" redis-server --port 6391 --bind 127.0.0.1 --save '' \
		--appendonly no >"$TMPD/redis.log" 2>&1 &
	rpid=$!
	BG_PIDS+=($rpid)
	for ((i = 0; i < 100; i++)); do
		nsenter --net="/run/netns/$DST" redis-cli -p 6391 ping 2>/dev/null | grep -q PONG && break
		sleep 0.05
	done
	# a CrowdSec follower (its Local API need not answer: its metrics are
	# there either way) and the suggest recorder, so that every family the
	# docs name is exported
	printf 'k3y\n' >"$TMPD/cs.key"
	chmod 600 "$TMPD/cs.key"
	printf '%s\n' "interface d0" "heartbeat 100" "metrics 127.0.0.1:9437" \
		"fleet redis 127.0.0.1:6391 sync 100" \
		"crowdsec http://127.0.0.1:9 key-file $TMPD/cs.key poll 1000" \
		"rule add 198.18.0.0/24 rate 10/s burst 5 scope fleet id 1" \
		"rule add 198.18.1.0/24 rate 10/s burst 5 id 2" >"$conf"
	: >"$log"
	start_rld "$log" --config "$conf" --suggest
	wait_log "$log" "running" || return
	flood 198.18.0.1 198.18.0.254 200 >/dev/null
	sleep 1
	m=$(nsenter --net="/run/netns/$DST" curl -s --max-time 5 127.0.0.1:9437/metrics)
	[[ -n $m ]] || { fail "no scrape"; return; }
	docs=$(cat "$TOP/README.md" "$TOP"/docs/*.md "$TOP"/man/*.[0-9] "$TOP/packaging/xdp-rl-alerts.yml" |
		grep -o 'xdp_rl_[a-z0-9_]*' | sort -u)
	for name in $docs; do
		[[ $name == *_ ]] && continue
		[[ -n $(find "$TOP/include" "$TOP/bpf" "$TOP/user" -name "$name.*" -print -quit) ]] && continue
		# a pin's name (xdp_rl_prog_new), a string of the library, is no metric
		grep -qF "\"$name\"" "$TOP"/user/lib/*.[ch] "$TOP"/user/lib/*/*.[ch] && continue
		grep -qE "^# TYPE $name " <<<"$m" || missing+=" $name"
	done
	check_eq "every metric the docs name is in the scrape" "$missing" ""
}

# the bucket tables' size the docs give is what the kernel charges for them
test_docs_table_size() {
	local v4 v6 kb mem4 mem6
	lab_up || return
	ctl attach dev d0 >/dev/null || { fail "attach"; return; }
	kb=$(cat "$TOP/README.md" "$TOP"/docs/*.md | tr '\n' ' ' | grep -oE '\([0-9]+ bytes +per IPv4 key, [0-9]+ per IPv6 key' | head -n 1)
	v4=$(grep -oE '\([0-9]+' <<<"$kb" | tr -d '(')
	v6=$(grep -oE ', [0-9]+ per' <<<"$kb" | grep -oE '[0-9]+')
	mem4=$(bpftool -j map show pinned "$PIN/xrl_buckets4" | jq '.bytes_memlock / .max_entries | floor')
	mem6=$(bpftool -j map show pinned "$PIN/xrl_buckets6" | jq '.bytes_memlock / .max_entries | floor')
	check_eq "bytes per key (IPv4, IPv6), as the docs say" "$mem4 $mem6" "$v4 $v6"
	check_eq "the default size" "$(bpftool -j map show pinned "$PIN/xrl_buckets4" | jq .max_entries)" 1048576
}

# the daemon's log of a dry-run rule's key: would be limited, would-drops
test_daemon_logs_dry_run() {
	local conf=$TMPD/d.conf log=$TMPD/d.log
	lab_up || return
	printf '%s\n' "interface d0" "heartbeat 100" "metrics off" \
		"rule add 198.18.0.0/24 rate 10/s burst 5 dry-run id 6" >"$conf"
	: >"$log"
	start_rld "$log" --config "$conf"
	wait_log "$log" "running" || return
	limit_then_recover 198.18.0.1
	wait_log "$log" "event: 198\.18\.0\.1 would be limited by rule 6" || return
	wait_log "$log" "event: 198\.18\.0\.1 no longer would be limited by rule 6 \(95 would-drops, passed: dry-run\)" || return
	grep -q "event: .* dropped)" "$log" && fail "a dry-run key's drops logged as drops"
	return 0
}

run_test test_dry_run_keys
run_test test_replay_dry_run
run_test test_daemon_logs_dry_run
run_test test_rule_list_config
run_test test_help_per_keyword
run_test test_completion_files_and_ids
run_test test_rule_del_endpoint_prefix
run_test test_unprivileged_permission_denied
run_test test_status_recent_run_time
run_test test_docs_metrics_scraped
run_test test_docs_table_size
summary

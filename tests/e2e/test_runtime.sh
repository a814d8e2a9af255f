#!/usr/bin/env bash
# End-to-end: the limiter's own latency. While xdp-rld runs it holds the
# kernel's BPF run-time statistics enabled (a BPF_STATS_RUN_TIME fd, not the
# global sysctl); the metrics carry the program's runs and run time, `status`
# shows ns per packet, and once the daemon is gone the kernel stops counting.
source "$(dirname "$0")/../lib/e2e.sh"

LOG="$TMPD/runtime.log"
CONF="$TMPD/rules.conf"
SYSCTL=/proc/sys/kernel/bpf_stats_enabled

lab_up() {
	: >"$LOG"
	lab_up_veth
}

scrape() {	# /metrics from inside the receiving namespace
	nsenter --net="/run/netns/$DST" curl -s --max-time 5 "127.0.0.1:9437/metrics"
}

metric() {	# TEXT NAME: the value of one series
	awk -v m="$2" 'index($0, m " ") == 1 { print $NF }' <<<"$1"
}

holds_stats() {	# PID: the process holds a bpf-stats fd
	local f
	for f in /proc/"$1"/fd/*; do
		[[ "$(readlink "$f" 2>/dev/null)" == "anon_inode:bpf-stats" ]] && return 0
	done
	return 1
}

test_runtime_metrics_and_status() {
	lab_up || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 50 id 1"
	local sysctl0 m runs0 secs0 runs1 secs1 sent ns j
	sysctl0=$(cat $SYSCTL)
	start_rld "$LOG" --config "$CONF" --keep-attached
	wait_log "$LOG" "running" || return
	holds_stats "$RLD_PID" || fail "the daemon holds no bpf-stats fd"
	check_eq "the sysctl is not what enables them" "$(cat $SYSCTL)" "$sysctl0"
	m=$(scrape)
	check_eq "stats enabled gauge" "$(metric "$m" xdp_rl_program_run_stats_enabled)" 1
	runs0=$(metric "$m" xdp_rl_program_runs_total)
	secs0=$(metric "$m" xdp_rl_program_run_seconds_total)
	[[ -n "$runs0" && -n "$secs0" ]] || { fail "no run-time series in the metrics"; return; }

	sent=$(flood 198.18.0.1 198.18.0.254 20000)
	((sent > 0)) || { fail "flood sent nothing"; return; }
	m=$(scrape)
	runs1=$(metric "$m" xdp_rl_program_runs_total)
	secs1=$(metric "$m" xdp_rl_program_run_seconds_total)
	((runs1 - runs0 >= sent)) || fail "runs_total grew by $((runs1 - runs0)), the flood sent $sent"
	awk -v s="$secs1" 'BEGIN { exit !(s > 0) }' || fail "run_seconds_total is $secs1"
	ns=$(awk -v a="$secs0" -v b="$secs1" -v r=$((runs1 - runs0)) 'BEGIN { printf "%d", (b - a) * 1e9 / r }')
	echo "    flood: $sent frames, $((runs1 - runs0)) runs, $ns ns/packet"
	((ns >= 5 && ns <= 100000)) || fail "$ns ns per packet is not a sane figure"

	j=$(ctl -j status)
	check_eq "status: stats enabled" "$(jget "$j" .program_run.stats_enabled)" true
	((runs1 <= $(jget "$j" .program_run.runs))) || fail "status runs $(jget "$j" .program_run.runs) < metric $runs1"
	ns=$(jget "$j" .program_run.ns_per_packet_lifetime)
	[[ "$ns" =~ ^[0-9]+$ ]] && ((ns >= 5 && ns <= 100000)) || fail "status ns_per_packet_lifetime '$ns'"
	check_match "status text" "$(ctl status)" $'\n'"             [0-9]+ ns/packet over [0-9]+ runs since the stats were enabled"$'\n'"             stats enabled by pid [0-9]+ \([^)]+\): they are global"
	# (the holder named may be another job's: the switch is the host's)
	check_match "status: the holder" "$(jget "$j" '[.program_run.enabled_by, .program_run.enabled_by_command, .program_run.global] | join(" ")')" "^[0-9]+ [^ ]+ true$"

	# the daemon stops: its fd closes, the kernel stops counting
	kill -TERM "$RLD_PID"
	wait "$RLD_PID" 2>/dev/null
	check_eq "the sysctl after the daemon" "$(cat $SYSCTL)" "$sysctl0"
	j=$(ctl -j status)
	if [[ "$sysctl0" == 1 || "$(jget "$j" .program_run.enabled_by)" != null ]]; then
		echo "    (stats held by $(jget "$j" .program_run.enabled_by) outside this test: not checking they stop)"
		return
	fi
	check_eq "status: stats not enabled" "$(jget "$j" .program_run.stats_enabled)" false
	check_eq "status: no figure" "$(jget "$j" '[.program_run.ns_per_packet, .program_run.ns_per_packet_lifetime] | join(",")')" ","
	check_eq "status: not global" "$(jget "$j" .program_run.global)" false
	check_match "status text without stats" "$(ctl status)" "run time:    stats not enabled"
	runs0=$(jget "$j" .program_run.runs)
	sent=$(flood 198.18.0.1 198.18.0.254 5000)
	((sent > 0)) || { fail "flood sent nothing"; return; }
	check_eq "runs counted with no daemon" "$(ctl -j status | jq -r .program_run.runs)" "$runs0"
}

# --no-run-stats: the daemon leaves the timing off (it costs every BPF
# program of the host about 70 ns a run) and says so in its metrics
test_no_run_stats() {
	lab_up || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 50 id 1"
	start_rld "$LOG" --config "$CONF" --no-run-stats
	wait_log "$LOG" "running" || return
	holds_stats "$RLD_PID" && fail "the daemon holds a bpf-stats fd under --no-run-stats"
	check_match "gauge 0" "$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)" \
		"xdp_rl_program_run_stats_enabled 0"
	grep -q "do not move" "$LOG" && fail "warned as if the kernel had refused"
	return 0
}

run_test test_runtime_metrics_and_status
run_test test_no_run_stats
summary

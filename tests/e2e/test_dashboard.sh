#!/usr/bin/env bash
# End-to-end: the Grafana dashboard (packaging/grafana/xdp-rl.json), without
# Grafana. A real Prometheus scrapes a real xdp-rld during a flood, in a
# fleet lab (one host and Redis, so that the fleet's panels have data):
#
#   ns s1: s0 198.18.0.1-.9 --veth-- ns h1: d0, xdp-rld (metrics 127.0.0.1:9437),
#                                    prometheus (127.0.0.1:9090)
#                                    r0 198.18.10.11 --veth-- ns redis: redis-server
#
# tests/tools/dashboard-check.py checks its structure (variables, a
# datasource, a unit and a title on every panel, unique ids), that it names
# no metric the daemon does not export (against a scrape of /metrics), and
# runs every expression, its variables substituted, through Prometheus'
# HTTP API: each must return data. The checker itself must catch a planted
# fault.
source "$(dirname "$0")/../lib/e2e.sh"
source "$TOP/tests/lib/fleet_lab.sh"

DASH="$TOP/packaging/grafana/xdp-rl.json"
CHECK="$TOP/tests/tools/dashboard-check.py"
in_h1() { nsenter --net="/run/netns/$RUN_ID-h1" "$@"; }

lab_up() {
	: >"$TMPD/h1.log"
	fleet_redis_ns && fleet_add_host h1 || { fail "cannot build the lab"; return 1; }
	LAB_H1=1
}
LAB_H1=0
cleanup_h1() {
	kill_bg
	if ((LAB_H1)); then
		in_h1 "$CTL_BIN" --pin-dir "$TMPD/bpf-h1/xdp-rl" detach dev d0 purge >/dev/null 2>&1
		fleet_umount h1
		LAB_H1=0
	fi
}
lab_down() {
	cleanup_h1
	lab_teardown
}
trap 'cleanup_h1; cleanup' EXIT

test_dashboard_structure() {
	# no Prometheus needed: the structure, and the names against a scrape
	lab_up || return
	fleet_redis_start 6379 || { fail "redis-server did not start"; return; }
	BG_PIDS+=($FLEET_REDIS_PID)
	start_h1 || return
	in_h1 curl -s 127.0.0.1:9437/metrics >"$TMPD/scrape.txt"
	local out
	out=$(python3 "$CHECK" "$DASH" "$TMPD/scrape.txt")
	check_eq "the dashboard's structure and names" "$?" 0
	[[ -z $out ]] || echo "$out" | sed 's/^/    /' >&2
	# the checker catches what it is for: a metric nobody exports, a panel
	# without a unit, without the datasource, a duplicate id
	jq '.panels[1].targets[0].expr = "rate(xdp_rl_no_such_metric_total[5m])"' "$DASH" >"$TMPD/bad1.json"
	check_match "an unknown metric is caught" "$(python3 "$CHECK" "$TMPD/bad1.json" "$TMPD/scrape.txt")" \
		"BAD panel 2 .*: xdp_rl_no_such_metric_total is not a metric xdp-rld exports"
	jq 'del(.panels[2].fieldConfig.defaults.unit)' "$DASH" >"$TMPD/bad2.json"
	check_match "a panel without a unit is caught" "$(python3 "$CHECK" "$TMPD/bad2.json" "$TMPD/scrape.txt")" \
		"BAD panel 3 .*: no unit"
	jq '.panels[3].datasource = {"type": "prometheus", "uid": "prom1"}' "$DASH" >"$TMPD/bad3.json"
	check_match "a fixed datasource is caught" "$(python3 "$CHECK" "$TMPD/bad3.json" "$TMPD/scrape.txt")" \
		"BAD panel 4 .*: datasource is"
	jq '.panels[4].id = 2' "$DASH" >"$TMPD/bad4.json"
	check_match "a duplicate id is caught" "$(python3 "$CHECK" "$TMPD/bad4.json" "$TMPD/scrape.txt")" \
		"BAD panel id 2 twice"
	jq '.panels[6].targets[0].expr = "rate(xdprl_dropped_packets_total{instance=~\"$instance\"}[5m])"' \
		"$DASH" >"$TMPD/bad6.json"
	check_match "a misspelt metric without the prefix is caught" \
		"$(python3 "$CHECK" "$TMPD/bad6.json" "$TMPD/scrape.txt")" \
		"BAD panel 7 .*: xdprl_dropped_packets_total is not a metric xdp-rld exports"
	jq '.panels[7].targets[0].expr = "sum(rate(xdp_rl_dropped_packets_total{rule=\"2\"}[5m]))"' \
		"$DASH" >"$TMPD/bad7.json"
	check_match "a selector that ignores \$instance is caught" \
		"$(python3 "$CHECK" "$TMPD/bad7.json" "$TMPD/scrape.txt")" \
		"BAD panel 8 .*does not filter on"
	# a collapsed row holds its panels: they are checked too
	jq '.panels[0].collapsed = true | .panels[0].panels = [.panels[1] | .id = 99 | del(.fieldConfig.defaults.unit)]' \
		"$DASH" >"$TMPD/bad8.json"
	check_match "a panel inside a collapsed row is checked" \
		"$(python3 "$CHECK" "$TMPD/bad8.json" "$TMPD/scrape.txt")" "BAD panel 99 .*: no unit"
	jq '.templating.list |= map(select(.name != "instance"))' "$DASH" >"$TMPD/bad5.json"
	check_match "no instance variable is caught" "$(python3 "$CHECK" "$TMPD/bad5.json" "$TMPD/scrape.txt")" \
		"BAD no instance variable"
}

start_h1() {
	write_conf "$TMPD/h1.conf" "interface d0" "heartbeat 100" "watchdog 2000" "metrics 127.0.0.1:9437" \
		"fleet redis $FLEET_RADDR:6379 sync 50 timeout 20" "fleet host h1" "fleet auth $FLEET_AUTH" \
		"rule add 198.18.0.0/29 rate 1000/s burst 100 scope fleet on-failure open id 1" \
		"rule add 198.18.0.8/29 rate 100/s burst 10 aggregate 1000/s new-keys 10/s on-failure closed id 2"
	# nsenter itself in the background (not a function): $! is the daemon
	nsenter --net="/run/netns/$RUN_ID-h1" "$RLD_BIN" --pin-dir "$TMPD/bpf-h1/xdp-rl" --config "$TMPD/h1.conf" \
		>>"$TMPD/h1.log" 2>&1 &
	BG_PIDS+=($!)
	local i
	for ((i = 0; i < 100; i++)); do
		in_h1 curl -s 127.0.0.1:9437/metrics 2>/dev/null | grep -q '^xdp_rl_fleet_live_hosts 1$' && return 0
		sleep 0.1
	done
	fail "xdp-rld never synced with Redis: $(tail -n 3 "$TMPD/h1.log" | tr '\n' '|')"
	return 1
}

test_dashboard_against_prometheus() {
	command -v prometheus >/dev/null || { fail "prometheus is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	fleet_redis_start 6379 || { fail "redis-server did not start"; return; }
	BG_PIDS+=($FLEET_REDIS_PID)
	start_h1 || return
	mkdir -p "$TMPD/prom"
	cat >"$TMPD/prom.yml" <<-EOF
	global: { scrape_interval: 1s, evaluation_interval: 1s }
	scrape_configs:
	  - job_name: xdp-rl
	    static_configs: [ { targets: ["127.0.0.1:9437"] } ]
	EOF
	nsenter --net="/run/netns/$RUN_ID-h1" prometheus --config.file="$TMPD/prom.yml" \
		--storage.tsdb.path="$TMPD/prom" --web.listen-address=127.0.0.1:9090 >"$TMPD/prom.log" 2>&1 &
	BG_PIDS+=($!)
	# a flood over both rules for the length of the checks: the fleet rule
	# (its share), the local rule (its key, its aggregate, the hot-key cache)
	nsenter --net="/run/netns/$RUN_ID-s1" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -n 60000 -r 2000 -t 40 \
		>/dev/null 2>&1 &
	BG_PIDS+=($!)
	nsenter --net="/run/netns/$RUN_ID-s1" "$FLOOD" -s 198.18.0.9 -d 198.18.0.254 -n 60000 -r 2000 -t 40 \
		>/dev/null 2>&1 &
	BG_PIDS+=($!)
	# until Prometheus has 10 s of rates
	local i v
	for ((i = 0; i < 60; i++)); do
		v=$(in_h1 curl -s -G --data-urlencode 'query=rate(xdp_rl_dropped_packets_total{rule="2"}[10s]) > 0' \
			127.0.0.1:9090/api/v1/query 2>/dev/null | jq -r '.data.result | length' 2>/dev/null)
		[[ $v == 1 ]] && ((i >= 12)) && break
		sleep 0.5
	done
	[[ $v == 1 ]] || { fail "Prometheus has no rates: $(tail -n 3 "$TMPD/prom.log" | tr '\n' '|')"; return; }
	in_h1 curl -s 127.0.0.1:9437/metrics >"$TMPD/scrape.txt"
	local out
	out=$(in_h1 python3 "$CHECK" "$DASH" "$TMPD/scrape.txt" http://127.0.0.1:9090 127.0.0.1:9437)
	check_eq "every expression returns data" $? 0
	check_eq "every target of every panel ran" "$(grep -c '^ok ' <<<"$out")" \
		"$(($(jq '[.panels[] | select(.type != "row") | .targets[]] | length' "$DASH") + 1))"
	grep '^BAD' <<<"$out" | sed 's/^/    /' >&2
	# and it catches a panel with no data, and one with only NaN, in a
	# Prometheus that has the daemon's series
	jq '.panels[1].targets[0].expr = "sum(rate(xdp_rl_dropped_packets_total{instance=~\"$instance\",rule=\"77\"}[$__rate_interval]))"
	    | .panels[2].targets[0].expr = "sum(xdp_rl_keys_tracked{instance=~\"$instance\"}) * 0 / 0"' \
		"$DASH" >"$TMPD/bad-nodata.json"
	out=$(in_h1 python3 "$CHECK" "$TMPD/bad-nodata.json" "$TMPD/scrape.txt" http://127.0.0.1:9090 127.0.0.1:9437)
	check_match "a panel with no data is caught" "$out" "BAD panel 2 .*: no data"
	check_match "a panel with only NaN is caught" "$out" "BAD panel 3 .*: no number"
}

run_test test_dashboard_structure
run_test test_dashboard_against_prometheus
summary

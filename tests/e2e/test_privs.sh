#!/usr/bin/env bash
# End-to-end: privileges and files (README, "Privileges"). The daemon's
# steady state without CAP_SYS_ADMIN; configuration and credentials files
# that another user could write are refused; the metrics server answers
# scrapes from an address that slow clients crowd.
source "$(dirname "$0")/lib.sh"

# crowd N SECONDS FROM...: N connections from each address FROM to the
# metrics port in $DST, every other one sending nothing, the others a byte
# of a request line every 0.5 s (past the server's 5 s of silence); holds
# them SECONDS and prints how many it could open
crowd() {
	nsenter --net="/run/netns/$DST" python3 - "$@" <<-'PY'
	import socket, sys, time
	n, secs, srcs = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
	socks, opened = [], 0
	for src in srcs:
	    for i in range(n):
	        s = socket.socket()
	        s.settimeout(1)
	        try:
	            s.bind((src, 0))
	            s.connect(("127.0.0.1", 9437))
	            opened += 1
	        except OSError:
	            pass
	        socks.append((s, i % 2))
	line = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
	end, k = time.time() + secs, 0
	while time.time() < end:
	    for s, trickle in socks:
	        if trickle:
	            try:
	                s.send(line[k:k + 1])
	            except OSError:
	                pass
	    k = (k + 1) % len(line)
	    time.sleep(0.5)
	print(opened)
	PY
}

# scrape FROM: the http code and the time of one scrape from address FROM
scrape() {
	nsenter --net="/run/netns/$DST" curl -s -o /dev/null --max-time 4 --interface "$1" \
		-w '%{http_code} %{time_total}' http://127.0.0.1:9437/metrics
}

# More slow connections than one address may hold, from the scraper's own
# address (the default loopback bind: every local user's), and more than the
# whole server may hold from 17 other addresses: the scrapes are answered.
test_metrics_crowded_address() {
	lab_up || return
	: >"$TMPD/rld.log"
	write_conf "$TMPD/rules.conf" "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 100/s burst 20"
	start_rld "$TMPD/rld.log" --config "$TMPD/rules.conf"
	wait_log "$TMPD/rld.log" "metrics on http://127.0.0.1:9437/metrics" || return
	check_match "a scrape" "$(scrape 127.0.0.1)" "^200 "
	local p=() i out code t others=()
	for i in $(seq 10 26); do
		others+=(127.0.0.$i)
	done
	# 48 from 127.0.0.1 (three times the 16 an address holds), 17 x 16 =
	# 272 from the others (more than the server's 256), held for 8 s
	crowd 48 8 127.0.0.1 >"$TMPD/crowd.1" & p+=($!)
	crowd 16 8 "${others[@]}" >"$TMPD/crowd.o" & p+=($!)
	sleep 2
	for i in 1 2 3 4 5 6; do
		out=$(scrape 127.0.0.1)
		read -r code t <<<"$out"
		check_eq "scrape $i from the crowded address" "$code" 200
		[[ $t =~ ^[0-9.]+$ ]] && (($(bc <<<"$t < 2"))) || fail "scrape $i took ${t}s"
		sleep 0.7
	done
	out=$(scrape 127.0.0.9)
	check_match "a scrape from a fresh address" "$out" "^200 "
	wait "${p[@]}"
	# more than an address's 16 and the server's 256 (a connect may time
	# out while the backlog is full)
	local n1 no
	n1=$(cat "$TMPD/crowd.1")
	no=$(cat "$TMPD/crowd.o")
	((n1 > 16 && no > 256)) || fail "only $n1 and $no slow connections opened"
	check_match "still serving" "$(scrape 127.0.0.1)" "^200 "
}

# cap_of PID_OR_TID FIELD: the hex mask of CapPrm, CapEff or CapBnd
cap_of() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# no_sys_admin PID WHAT: no thread of PID has CAP_SYS_ADMIN (21) in its
# permitted, effective or bounding set; CAP_BPF (39) is what the event
# loop keeps
no_sys_admin() {
	local t f m bad=""
	for t in /proc/"$1"/task/*; do
		t=${t##*/}
		for f in CapPrm CapEff CapBnd; do
			m=$(cap_of "$t" $f)
			[[ -n $m ]] || continue
			(((0x$m >> 21) & 1)) && bad+=" $t:$f=$m"
		done
	done
	check_eq "$2: no thread with CAP_SYS_ADMIN" "$bad" ""
}

# metric NAME_WITH_LABELS: its value in one scrape
metric() {
	nsenter --net="/run/netns/$DST" curl -s --max-time 4 http://127.0.0.1:9437/metrics |
		awk -v n="$1" '$1 == n { print $2 }'
}

# The daemon's steady state without CAP_SYS_ADMIN: reloads of source and
# endpoint rules, a rule set published by xdp-rlctl meanwhile, the set pins
# removed, every pin removed and restored, a fleet sync with Redis, the
# metrics (the re-attach after a link loss: test_privileges.sh's
# test_daemon_capabilities).
test_daemon_no_sys_admin() {
	lab_up || return
	local auth="$TMPD/redis.auth" pass="xrl-privs-$$" i pid n
	(umask 077; echo "$pass" >"$auth")
	nsenter --net="/run/netns/$DST" redis-server --bind 127.0.0.1 --port 6379 --save '' \
		--appendonly no --requirepass "$pass" --dir "$TMPD" --logfile "$TMPD/redis.log" \
		</dev/null >/dev/null 2>&1 &
	BG_PIDS+=($!)
	for ((i = 0; i < 100; i++)); do
		REDISCLI_AUTH=$pass nsenter --net="/run/netns/$DST" redis-cli -h 127.0.0.1 ping 2>/dev/null |
			grep -q PONG && break
		sleep 0.05
	done
	local base=("interface d0" "metrics 127.0.0.1:9437" "fleet redis 127.0.0.1:6379 sync 100 timeout 50"
		"fleet host privs" "fleet auth $auth"
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
		"rule add 198.18.1.0/24 proto udp dport 53 rate 1/h burst 3 id 3"
		"rule add 198.51.100.0/24 rate 100/s burst 10 scope fleet id 4")
	: >"$TMPD/rld.log"
	write_conf "$TMPD/rules.conf" "${base[@]}"
	start_rld "$TMPD/rld.log" --config "$TMPD/rules.conf"
	wait_log "$TMPD/rld.log" "running" || return
	pid=$RLD_PID
	check_match "says so" "$(cat "$TMPD/rld.log")" "capabilities: kept cap_bpf; dropped the others"
	no_sys_admin "$pid" "after the start"
	check_eq "metrics: the rules" "$(metric xdp_rl_rules_loaded)" 3

	# a rule set published by xdp-rlctl while the daemon runs: read by pin
	ctl rule add 198.18.2.0/24 rate 1/s burst 1 id 9 >/dev/null || fail "rule add"
	check_eq "metrics read xdp-rlctl's set" "$(metric xdp_rl_rules_loaded)" 4
	check_eq "metrics: its series" "$(metric 'xdp_rl_passed_packets_total{rule="9",prefix="198.18.2.0/24",action="limit"}')" 0

	# a reload: reads the set in force (xdp-rlctl's), publishes the file's
	write_conf "$TMPD/rules.conf" "${base[@]}" "rule add 198.18.3.0/24 proto tcp dport 22 syn rate 1/h burst 2 id 5"
	wait_log "$TMPD/rld.log" "reload: 4 rules" || return
	check_match "it saw what xdp-rlctl added" "$(cat "$TMPD/rld.log")" "reload: rules: 1 added \(198.18.3.0/24 id 5\); 1 removed \(198.18.2.0/24 id 9\)"
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "enforced" "$(rule_stat 1 passed_packets)" 5
	check_eq "the endpoint rules in the metrics" \
		"$(metric 'xdp_rl_passed_packets_total{rule="5",prefix="198.18.3.0/24",action="limit"}')" 0

	# the set pins removed: the daemon's own descriptors serve, the next
	# reload pins them again
	rm -f "$PIN"/xrl_*_set
	check_eq "metrics without the set pins" "$(metric xdp_rl_rules_loaded)" 4
	write_conf "$TMPD/rules.conf" "${base[@]}"
	wait_log "$TMPD/rld.log" "reload: 3 rules" || return
	check_eq "set pins again" "$(ls "$PIN" | grep -c '_set$')" 5

	# every pin removed: restored, the sets from the daemon's descriptors
	: >"$TMPD/rld2.log"
	rm -f "$PIN"/xrl_* "$PIN"/xdp_rl_prog "$PIN"/link_*
	for ((i = 0; i < 100; i++)); do
		[[ -e "$PIN/xrl_rules4_set" && -e "$PIN/xrl_ep_class_set" ]] && break
		sleep 0.05
	done
	check_eq "restored set pins" "$(ls "$PIN" | grep -c '_set$')" 5
	check_match "xdp-rlctl reads them (no capability)" \
		"$(nsenter --net="/run/netns/$DST" setpriv --inh-caps=-all --bounding-set=-all "$CTL_BIN" --pin-dir "$PIN" rule list 2>&1)" \
		"198.18.1.0/24"
	check_eq "no error logged" "$(grep -cE 'cannot|CAP_SYS_ADMIN' "$TMPD/rld.log")" 0

	# the fleet client syncs (it reads the rules from its own thread)
	for ((i = 0; i < 100; i++)); do
		n=$(metric 'xdp_rl_fleet_syncs_total{result="ok"}')
		[[ ${n:-0} -gt 3 ]] && break
		sleep 0.1
	done
	[[ ${n:-0} -gt 3 ]] || fail "fleet syncs ok: ${n:-none}; log: $(grep fleet "$TMPD/rld.log" | tail -n 2)"
	check_eq "live hosts" "$(metric xdp_rl_fleet_live_hosts)" 1
	no_sys_admin "$pid" "after reloads, restores and syncs"
}

run_test test_daemon_no_sys_admin
run_test test_metrics_crowded_address
summary

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

run_test test_metrics_crowded_address
summary

#!/usr/bin/env bash
# End-to-end: privileges and files (README, "Privileges"). The daemon's
# steady state without CAP_SYS_ADMIN; configuration and credentials files
# that another user could write are refused; the metrics server answers
# scrapes from an address that slow clients crowd; a reader without
# CAP_SYS_ADMIN is not refused while rules are committed.
source "$(dirname "$0")/../lib/e2e.sh"

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

# stalled_scrapes: from 127.0.0.1, 15 stalled readers (a GET, a 1 KiB
# receive buffer, a byte read every 2 s), a new idle
# connection every 50 ms, and 5 scrapes that send their request 150 ms
# after their connect (a slow link); prints how many scrapes got a 200
stalled_scrapes() {
	# small send buffers in the test's namespace (loopback's would take
	# the whole answer): the server's answer to a stalled reader stays
	# unsent, as over a real network
	ip netns exec "$DST" sysctl -qw net.ipv4.tcp_wmem="4096 8192 8192" || fail "tcp_wmem"
	nsenter --net="/run/netns/$DST" python3 - <<-'PY'
	import socket, threading, time
	stop = time.time() + 5
	readers, idle = [], []
	for i in range(15):
	    s = socket.socket()
	    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
	    s.settimeout(1)
	    try:
	        s.bind(("127.0.0.1", 0))
	        s.connect(("127.0.0.1", 9437))
	        s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	        readers.append(s)
	    except OSError:
	        pass
	def read_slowly():
	    while time.time() < stop:
	        for s in readers:
	            try:
	                s.setblocking(False)
	                s.recv(1)
	            except OSError:
	                pass
	        time.sleep(2)
	def churn():
	    while time.time() < stop:
	        s = socket.socket()
	        s.settimeout(0.5)
	        try:
	            s.bind(("127.0.0.1", 0))
	            s.connect(("127.0.0.1", 9437))
	        except OSError:
	            pass
	        idle.append(s)
	        time.sleep(0.05)
	ts = [threading.Thread(target=read_slowly), threading.Thread(target=churn)]
	for t in ts:
	    t.start()
	time.sleep(0.4)
	ok = 0
	for i in range(5):
	    s = socket.socket()
	    s.settimeout(3)
	    data = b""
	    try:
	        s.bind(("127.0.0.1", 0))
	        s.connect(("127.0.0.1", 9437))
	        time.sleep(0.15)
	        s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	        while True:
	            b = s.recv(65536)
	            if not b:
	                break
	            data += b
	    except OSError:
	        pass
	    s.close()
	    if data.startswith(b"HTTP/1.1 200") and b"xdp_rl_rules_loaded" in data:
	        ok += 1
	    time.sleep(0.3)
	for t in ts:
	    t.join()
	for s in readers + idle:
	    s.close()
	print(ok)
	PY
}

# More slow connections than one address may hold, from the scraper's own
# address (the default loopback bind: every local user's), and more than the
# whole server may hold from 17 other addresses: the scrapes are answered.
test_metrics_crowded_address() {
	local i
	lab_up || return
	: >"$TMPD/rld.log"
	# 41 rules: an answer (about 40 KB) that a stalled reader's buffers
	# cannot take whole
	local conf=("interface d0" "metrics 127.0.0.1:9437" "rule add 198.18.0.0/24 rate 100/s burst 20")
	for i in $(seq 1 40); do
		conf+=("rule add 198.18.$i.0/24 rate 100/s burst 20")
	done
	write_conf "$TMPD/rules.conf" "${conf[@]}"
	start_rld "$TMPD/rld.log" --config "$TMPD/rules.conf"
	wait_log "$TMPD/rld.log" "metrics on http://127.0.0.1:9437/metrics" || return
	check_match "a scrape" "$(scrape 127.0.0.1)" "^200 "
	local p=() out code t others=() times=""
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
		[[ $t =~ ^[0-9.]+$ ]] && (($(bc <<<"$t < 3"))) || fail "scrape $i took ${t}s"
		times+=" $t"
		sleep 0.7
	done
	echo "    scrapes from the crowded address took (s):$times" >&2
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
	# stalled readers whose answers are being sent hold 15 of the
	# address's 16, and new connections keep coming: a slow scrape, the
	# youngest, is answered all the same
	check_eq "slow scrapes among stalled readers answered" "$(stalled_scrapes)" 5
	check_match "still serving after the stalled readers" "$(scrape 127.0.0.1)" "^200 "
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
# removed, every pin removed and restored, the interface lost and back, a
# fleet sync with Redis, the metrics.
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
	local t sets=""
	for t in /proc/"$pid"/task/*; do
		sets+="$(cat "$t/comm") $(cap_of "${t##*/}" CapPrm)/$(cap_of "${t##*/}" CapEff)/$(cap_of "${t##*/}" CapBnd)"$'\n'
	done
	echo "    the threads' permitted/effective/bounding sets:" $(sort <<<"$sets" | tr '\n' ';') >&2
	check_eq "event loop" "$(cap_of "$pid" CapPrm)/$(cap_of "$pid" CapEff)/$(cap_of "$pid" CapBnd)" \
		0000008000000000/0000008000000000/0000008000000000
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

	# the interface lost and back: attached again
	ip -n "$DST" link del d0	# takes s0 with it
	wait_log "$TMPD/rld.log" "interface d0 disappeared" || return
	ip -n "$SRC" link add s0 type veth peer name d0 netns "$DST" &&
		ip -n "$DST" link set d0 address $DST_MAC up && ip -n "$SRC" link set s0 address $SRC_MAC up ||
		{ fail "cannot re-create d0"; return; }
	for ((i = 0; i < 100; i++)); do
		ip -n "$DST" link show d0 | grep -q xdp && break
		sleep 0.05
	done
	check_match "re-attached" "$(ip -n "$DST" link show d0)" "xdp"

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

# as_nobody CMD...: CMD as uid and gid 65534, no supplementary groups
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# wait_count FILE REGEX N: until N lines match (10 s)
wait_count() {
	local i
	for ((i = 0; i < 200; i++)); do
		(($(grep -cE "$2" "$1" 2>/dev/null) >= $3)) && return 0
		sleep 0.05
	done
	fail "fewer than $3 lines /$2/ in $(basename "$1") within 10 s; it says: $(tail -n 3 "$1" | tr '\n' '|')"
	return 1
}

# rld_check CONF: xdp-rld --check's output and exit status
rld_check() {
	local out rc
	out=$("$RLD_BIN" --check --config "$1" 2>&1)
	rc=$?
	echo "$rc $out"
}

# A configuration file that another user could write, or whose directory
# another user could write, is refused at a reload (logged, counted, the
# rules and mode in force kept) and by --check; a sticky directory is fine.
test_config_others_may_write() {
	lab_up || return
	chmod 0755 "$TMPD"	# nobody must reach the file (restored below)
	rm -rf "$TMPD/etc" && mkdir -m 0755 "$TMPD/etc"
	local conf="$TMPD/etc/rules.conf" good=("interface d0" "metrics 127.0.0.1:9437" "mode set enforce"
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1") out
	write_conf "$conf" "${good[@]}"
	chmod 0644 "$conf"
	: >"$TMPD/rld.log"
	start_rld "$TMPD/rld.log" --config "$conf"
	wait_log "$TMPD/rld.log" "running" || { chmod 0700 "$TMPD"; return; }

	# world-writable: rewritten by nobody to fail open with no rule
	chmod 0666 "$conf"
	as_nobody sh -c "printf 'mode set fail-open\n' >'$conf'" || fail "nobody cannot write the file"
	wait_count "$TMPD/rld.log" "reload refused" 1
	check_match "says why" "$(cat "$TMPD/rld.log")" \
		"rules.conf:1:1: configuration file $conf is writable by others \(mode 0666\)"
	check_eq "mode kept" "$(metric 'xdp_rl_mode{mode="enforce"}')" 1
	check_eq "rules kept" "$(metric xdp_rl_rules_loaded)" 1
	check_eq "counted" "$(metric xdp_rl_reload_failures_total)" 1
	out=$(rld_check "$conf")
	check_match "--check says the same" "$out" "^1 .*rules.conf:1:1: configuration file $conf is writable by others"

	# group-writable
	write_conf "$conf" "${good[@]}" && chmod 0664 "$conf"
	kill -HUP "$RLD_PID"
	wait_count "$TMPD/rld.log" "reload refused" 2
	check_match "group: says why" "$(cat "$TMPD/rld.log")" "is writable by its group \(mode 0664\)"

	# owned by another user
	chmod 0644 "$conf" && chown 65534 "$conf"
	kill -HUP "$RLD_PID"
	wait_count "$TMPD/rld.log" "reload refused" 3
	check_match "owner: says why" "$(cat "$TMPD/rld.log")" \
		"configuration file $conf belongs to uid 65534, not root"
	check_match "--check: owner" "$(rld_check "$conf")" "^1 .*belongs to uid 65534"
	chown 0 "$conf"

	# root's file, but a directory above it that others may write: nobody
	# could swap it (not done: refused before)
	chmod 0777 "$TMPD/etc"
	kill -HUP "$RLD_PID"
	wait_count "$TMPD/rld.log" "reload refused" 4
	check_match "parent: says why" "$(cat "$TMPD/rld.log")" \
		"$TMPD/etc, a parent of the configuration file $conf, is writable by others without the sticky bit"
	check_match "--check: parent" "$(rld_check "$conf")" "^1 .*a parent of the configuration file"
	check_eq "rules still kept" "$(metric xdp_rl_rules_loaded)" 1
	# each refused reload counted (a rewrite and a SIGHUP may be two; the
	# chmod may bring one more, so both are read again until they agree)
	local i n m
	for ((i = 0; i < 30; i++)); do
		n=$(grep -c "reload refused" "$TMPD/rld.log")
		m=$(metric xdp_rl_reload_failures_total)
		[[ $m == "$n" ]] && break
		sleep 0.1
	done
	check_eq "every failure counted" "$m" "$n"

	# sticky, as /tmp: only the owner may rename or remove the file
	chmod 1777 "$TMPD/etc"
	write_conf "$conf" "${good[@]}" "rule add 198.18.1.0/24 rate 1/h burst 5 id 2"
	chmod 0644 "$conf"
	kill -HUP "$RLD_PID"
	wait_log "$TMPD/rld.log" "reload: 2 rules"
	check_match "--check: valid" "$(rld_check "$conf")" "^0 .*valid, 2 rules"
	chmod 0755 "$TMPD/etc"
	chmod 0700 "$TMPD"
}

# The Redis credentials: refused when others may write them, when another
# user owns them, when a directory above them lets others swap them; at the
# start, at a reload and by --check alike.
test_fleet_auth_others_may_write() {
	lab_up || return
	chmod 0755 "$TMPD"
	rm -rf "$TMPD/etc" "$TMPD/open" && mkdir -m 0755 "$TMPD/etc" "$TMPD/open"
	chmod 0777 "$TMPD/open"
	local conf="$TMPD/etc/rules.conf" auth="$TMPD/etc/redis.auth" out rc
	local rules=("interface d0" "metrics 127.0.0.1:9437" "rule add 198.18.0.0/24 rate 1/h burst 5 id 1")
	(umask 077; echo "secret" >"$auth")
	# fleet_conf AUTHFILE: the config with a fleet client using it
	fleet_conf() {
		write_conf "$conf" "${rules[@]}" "fleet redis 127.0.0.1:6379 sync 100" "fleet auth $1" \
			"rule add 198.51.100.0/24 rate 100/s burst 10 scope fleet id 4"
		chmod 0644 "$conf"
	}
	fleet_conf "$auth"
	check_match "0600, root's: valid" "$(rld_check "$conf")" "^0 .*valid"

	chmod 0602 "$auth"
	check_match "0602: refused" "$(rld_check "$conf")" \
		"^1 .*Redis credentials file $auth is writable by others \(mode 0602\)"
	chmod 0620 "$auth"
	check_match "0620: refused" "$(rld_check "$conf")" "^1 .*is writable by its group \(mode 0620\)"
	chmod 0600 "$auth" && chown 65534 "$auth"
	check_match "nobody's: refused" "$(rld_check "$conf")" "^1 .*Redis credentials file $auth belongs to uid 65534"
	chown 0 "$auth"
	cp -p "$auth" "$TMPD/open/redis.auth"
	fleet_conf "$TMPD/open/redis.auth"
	check_match "in an open directory: refused" "$(rld_check "$conf")" \
		"^1 .*$TMPD/open, a parent of the Redis credentials file .* without the sticky bit"
	# a chain: root's link to a link of uid 65534 in a sticky directory (as
	# /tmp), which its owner could point at /etc/shadow
	rm -rf "$TMPD/sticky" && mkdir -m 1777 "$TMPD/sticky"
	ln -s "$auth" "$TMPD/sticky/mid" && chown -h 65534 "$TMPD/sticky/mid" &&
		ln -sf "$TMPD/sticky/mid" "$TMPD/etc/chain.auth" || fail "the chain of links"
	fleet_conf "$TMPD/etc/chain.auth"
	check_match "a link of uid 65534 in the chain: refused" "$(rld_check "$conf")" \
		"^1 .*$TMPD/sticky/mid, on the way to the Redis credentials file $TMPD/etc/chain.auth, is a symlink of uid 65534"
	chown -h 0 "$TMPD/sticky/mid"
	check_match "root's chain: valid" "$(rld_check "$conf")" "^0 .*valid"
	rm -rf "$TMPD/sticky" "$TMPD/etc/chain.auth"

	# the start: refused, nothing attached
	fleet_conf "$auth"
	chmod 0602 "$auth"
	: >"$TMPD/rld.log"
	nsenter --net="/run/netns/$DST" timeout 20 "$RLD_BIN" --pin-dir "$PIN" --config "$conf" >>"$TMPD/rld.log" 2>&1
	rc=$?
	check_eq "the start: exit" $rc 1
	check_match "the start: says why" "$(cat "$TMPD/rld.log")" "is writable by others \(mode 0602\)"
	no_xdp_on "$DST" d0 || fail "attached although it refused to start"

	# a reload that adds the fleet lines with such a file: refused, the
	# rules in force kept
	write_conf "$conf" "${rules[@]}"
	chmod 0644 "$conf"
	: >"$TMPD/rld.log"
	start_rld "$TMPD/rld.log" --config "$conf"
	wait_log "$TMPD/rld.log" "running" || { chmod 0700 "$TMPD"; return; }
	as_nobody sh -c "echo 'nobody-pass' >'$auth'" || fail "nobody cannot write the credentials"
	fleet_conf "$auth"
	wait_count "$TMPD/rld.log" "reload refused" 1
	check_match "reload: says why" "$(cat "$TMPD/rld.log")" "Redis credentials file $auth is writable by others"
	check_eq "reload: rules kept" "$(metric xdp_rl_rules_loaded)" 1
	check_eq "reload: counted" "$(metric xdp_rl_reload_failures_total)" 1
	chmod 0700 "$TMPD"
}

# A reader without CAP_SYS_ADMIN (CAP_BPF only: it opens the published sets
# by pin) while rules are committed again and again: between a commit's
# publish and its pin's rename the reader waits, and is never told the set
# is not pinned
test_reader_during_commits() {
	lab_up || return
	ctl attach dev d0 >/dev/null 2>&1 || { fail "attach"; return; }
	ctl rule add 198.18.0.0/24 rate 100/s burst 20 id 1 >/dev/null || { fail "rule add"; return; }
	local w i n=0 bad=0 out first=""
	(for i in $(seq 1 100); do
		ctl rule add 198.18.1.0/24 rate $((i + 1))/s burst 20 id 2 >/dev/null 2>&1
	done) &
	w=$!
	while kill -0 "$w" 2>/dev/null; do
		out=$(nsenter --net="/run/netns/$DST" setpriv --inh-caps=-all --bounding-set=-all,+bpf \
			"$CTL_BIN" --pin-dir "$PIN" rule list 2>&1) || { bad=$((bad + 1)); first=${first:-$out}; }
		n=$((n + 1))
	done
	wait "$w"
	echo "    $n reads during 100 commits, $bad refused" >&2
	((n > 10)) || fail "only $n reads"
	check_eq "reads refused during commits (first: ${first:0:120})" $bad 0
}

run_test test_daemon_no_sys_admin
run_test test_config_others_may_write
run_test test_fleet_auth_others_may_write
run_test test_metrics_crowded_address
run_test test_reader_during_commits
summary

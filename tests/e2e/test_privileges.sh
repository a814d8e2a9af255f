#!/usr/bin/env bash
# End-to-end: least privilege (README, "Privileges"). A pin directory that
# another user owns or may write, or whose parents let another user swap it,
# is refused; the metrics server keeps answering scrapes while slow clients
# hold connections; the daemon runs with only the capabilities it needs.
source "$(dirname "$0")/../lib/e2e.sh"

# A world-writable bpffs (as any bpffs root: mode 1777) that the user
# nobody can reach, in this run's temp dir
open_bpffs() {
	OPEN_TMP="$TMPD/open"
	mkdir -p "$OPEN_TMP/fs" && chmod 0755 "$TMPD" "$OPEN_TMP" || return 1
	mount -t bpf -o mode=0777 bpf "$OPEN_TMP/fs" || return 1
	OPEN_FS="$OPEN_TMP/fs"
}

close_bpffs() {
	[[ -n "${OPEN_FS:-}" ]] && umount "$OPEN_FS" 2>/dev/null
	chmod 0700 "$TMPD"
	OPEN_FS=
}

# octl DIR ARGS...: xdp-rlctl on pin directory DIR in $DST
octl() {
	local dir=$1
	shift
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$dir" "$@"
}

test_pin_dir_refused() {
	lab_up || return
	open_bpffs || { fail "cannot mount the open bpffs"; close_bpffs; return; }
	local out rc
	check_eq "the bpffs is world-writable" "$(stat -c %a "$OPEN_FS")" 1777

	# pre-created by nobody: refused, nothing pinned, nothing attached
	setpriv --reuid=nobody --regid=nogroup --clear-groups mkdir "$OPEN_FS/xdp-rl" ||
		{ fail "nobody cannot mkdir"; close_bpffs; return; }
	out=$(octl "$OPEN_FS/xdp-rl" attach dev d0 2>&1)
	rc=$?
	check_eq "nobody's dir: exit" $rc 1
	check_match "nobody's dir: says why" "$out" "^Error: pin directory $OPEN_FS/xdp-rl belongs to uid 65534, not root"
	check_eq "nothing pinned in it" "$(ls -A "$OPEN_FS/xdp-rl")" ""
	no_xdp_on "$DST" d0 || fail "attached anyway"
	out=$(octl "$OPEN_FS/xdp-rl" status 2>&1)
	check_match "readers refuse it too" "$out" "belongs to uid 65534"
	rmdir "$OPEN_FS/xdp-rl"

	# root's, but writable by others
	mkdir -m 0777 "$OPEN_FS/xdp-rl" && chmod 0777 "$OPEN_FS/xdp-rl"
	out=$(octl "$OPEN_FS/xdp-rl" attach dev d0 2>&1)
	check_match "mode 0777: says why" "$out" "^Error: pin directory $OPEN_FS/xdp-rl is writable by others \(mode 0777\)"
	no_xdp_on "$DST" d0 || fail "attached anyway"
	rmdir "$OPEN_FS/xdp-rl"

	# a parent that others may write, without the sticky bit
	mkdir -m 0777 "$OPEN_FS/shared" && chmod 0777 "$OPEN_FS/shared"
	out=$(octl "$OPEN_FS/shared/xdp-rl" attach dev d0 2>&1)
	check_match "open parent: says why" "$out" "^Error: $OPEN_FS/shared, a parent of the pin directory .* is writable by others without the sticky bit"
	[[ ! -e "$OPEN_FS/shared/xdp-rl" ]] || fail "the pin directory it made was left behind"
	no_xdp_on "$DST" d0 || fail "attached anyway"
	rmdir "$OPEN_FS/shared"

	# made by xdp-rl itself in the sticky world-writable bpffs: fine
	out=$(octl "$OPEN_FS/xdp-rl" attach dev d0 2>/dev/null)
	check_match "its own dir: attached" "$out" "^attached to d0"
	check_eq "its own dir: mode" "$(stat -c '%a %u' "$OPEN_FS/xdp-rl")" "700 0"
	octl "$OPEN_FS/xdp-rl" detach dev d0 purge >/dev/null || fail "detach"
	close_bpffs
}

# slow_clients N SECONDS FROM: N connections from address FROM to the
# metrics port in $DST, each sending half a request line and then nothing;
# prints, when SECONDS are over, how many the server had closed
slow_clients() {
	nsenter --net="/run/netns/$DST" python3 - "$@" <<-'PY'
	import socket, sys, time
	n, secs, src = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
	socks = []
	for _ in range(n):
	    s = socket.socket()
	    s.settimeout(1)
	    s.bind((src, 0))
	    try:
	        s.connect(("127.0.0.1", 9437))
	        s.send(b"GET /metr")
	    except OSError:
	        pass
	    socks.append(s)
	end = time.time() + secs
	closed = set()
	while time.time() < end:
	    for i, s in enumerate(socks):
	        if i in closed:
	            continue
	        s.settimeout(0.01)
	        try:
	            if s.recv(1) == b"":
	                closed.add(i)
	        except socket.timeout:
	            pass
	        except OSError:
	            closed.add(i)
	    time.sleep(0.05)
	print(len(closed))
	PY
}

# scrape FROM: the http code and the time of one scrape from address FROM
scrape() {
	nsenter --net="/run/netns/$DST" curl -s -o /dev/null --max-time 4 --interface "$1" \
		-w '%{http_code} %{time_total}' http://127.0.0.1:9437/metrics
}

test_metrics_slow_clients() {
	lab_up || return
	: >"$TMPD/rld.log"
	write_conf "$TMPD/rules.conf" "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 100/s burst 20"
	start_rld "$TMPD/rld.log" --config "$TMPD/rules.conf"
	wait_log "$TMPD/rld.log" "metrics on http://127.0.0.1:9437/metrics" || return
	check_match "a scrape" "$(scrape 127.0.0.1)" "^200 "
	# 64 slow connections from one address, 16 more from each of 3 others
	# (more than the 16 slots that sufficed before), held for 7 s
	local p=() i out code t
	slow_clients 64 7 127.0.0.2 >"$TMPD/slow.0" & p+=($!)
	for i in 3 4 5; do
		slow_clients 16 7 127.0.0.$i >"$TMPD/slow.$i" & p+=($!)
	done
	sleep 1
	for i in 1 2 3; do
		out=$(scrape 127.0.0.1)
		read -r code t <<<"$out"
		check_eq "scrape $i while slow clients hold connections" "$code" 200
		[[ $t =~ ^[0-9.]+$ ]] && (($(bc <<<"$t < 1"))) || fail "scrape $i took ${t}s"
		sleep 0.5
	done
	wait "${p[@]}"
	# every slow connection was closed within the 7 s: by the per-address
	# limit at once, or by the connection timeout
	check_eq "slow connections of .2 closed" "$(cat "$TMPD/slow.0")" 64
	for i in 3 4 5; do
		check_eq "slow connections of .$i closed" "$(cat "$TMPD/slow.$i")" 16
	done
	check_match "still serving" "$(scrape 127.0.0.1)" "^200 "
}

# cap_of PID_OR_TID FIELD: the hex mask of CapPrm, CapEff or CapBnd
cap_of() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

test_daemon_capabilities() {
	lab_up || return
	: >"$TMPD/rld.log"
	write_conf "$TMPD/rules.conf" "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1"
	start_rld "$TMPD/rld.log" --config "$TMPD/rules.conf"
	wait_log "$TMPD/rld.log" "running" || return
	check_match "says so" "$(cat "$TMPD/rld.log")" "capabilities: kept cap_bpf; dropped"
	# CAP_BPF (39) alone: no CAP_SYS_ADMIN (21)
	local want=0000008000000000 pid=$RLD_PID t prm eff
	check_eq "event loop: permitted" "$(cap_of "$pid" CapPrm)" $want
	check_eq "event loop: effective" "$(cap_of "$pid" CapEff)" $want
	check_eq "bounding set" "$(cap_of "$pid" CapBnd)" $want
	check_match "a scrape" "$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)" \
		'xdp_rl_rules_loaded 1'
	local none=0 metrics=0 other=""
	for t in /proc/"$pid"/task/*; do
		t=${t##*/}
		[[ $t == "$pid" ]] && continue
		prm=$(cap_of "$t" CapPrm)
		eff=$(cap_of "$t" CapEff)
		if [[ $prm == 0000000000000000 && $eff == 0000000000000000 ]]; then
			none=$((none + 1))
		elif [[ $prm == "$want" && $eff == 0000000000000000 ]]; then
			metrics=$((metrics + 1))
		else
			other+=" $t:$prm/$eff"
		fi
	done
	check_eq "threads with no capability (log writer, heartbeat)" $none 2
	check_eq "the metrics thread: none effective between scrapes" $metrics 1
	check_eq "no other thread" "$other" ""

	# and it still does its work: a reload, the data path, a re-attach
	# after the interface went away and came back
	write_conf "$TMPD/rules.conf" "interface d0" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 1/h burst 5 id 1" "rule add 198.18.1.0/24 rate 1/s burst 1 id 2"
	wait_log "$TMPD/rld.log" "reload: 2 rules" || return
	flood 198.18.0.1 198.18.0.254 10 >/dev/null
	check_eq "enforced" "$(rule_stat 1 passed_packets)" 5
	ip -n "$DST" link del d0	# takes s0 with it
	wait_log "$TMPD/rld.log" "interface d0 disappeared" || return
	ip -n "$SRC" link add s0 type veth peer name d0 netns "$DST" &&
		ip -n "$DST" link set d0 address $DST_MAC up && ip -n "$SRC" link set s0 address $SRC_MAC up ||
		{ fail "cannot re-create d0"; return; }
	wait_log "$TMPD/rld.log" "interface d0 appeared" || return
	local i
	for ((i = 0; i < 40; i++)); do
		ip -n "$DST" link show d0 | grep -q xdp && break
		sleep 0.05
	done
	check_match "re-attached without the capabilities it dropped" "$(ip -n "$DST" link show d0)" "xdp"
	check_match "metrics still read the rules" "$(nsenter --net="/run/netns/$DST" curl -s 127.0.0.1:9437/metrics)" \
		'xdp_rl_rules_loaded 2'
	check_eq "permitted unchanged" "$(cap_of "$pid" CapPrm)" $want
}

# The unit's sandbox, scored offline (systemd need not be PID 1)
test_unit_sandboxing() {
	command -v systemd-analyze >/dev/null || { fail "systemd-analyze is missing (scripts/deps.sh)"; return; }
	local unit="$TMPD/xdp-rld.service" out score
	sed 's|@SBINDIR@|/usr/sbin|g' "$TOP/packaging/xdp-rld.service" >"$unit"
	out=$(systemd-analyze security --offline=true "$unit" 2>&1)
	score=$(grep -o 'Overall exposure level for xdp-rld.service: [0-9.]*' <<<"$out" | awk '{ print $NF }')
	[[ $score =~ ^[0-9.]+$ ]] || { fail "no score: $(tail -n 3 <<<"$out")"; return; }
	(($(bc <<<"$score <= 3.0"))) || fail "exposure $score, more than 3.0"
	echo "    systemd-analyze security: exposure $score" >&2
	local u
	u=$(cat "$unit")
	# what the daemon needs stays reachable
	check_match "the bpffs is writable" "$u" $'\nReadWritePaths=/sys/fs/bpf\n'
	check_match "netlink for the link monitor" "$u" $'\nRestrictAddressFamilies=[^\n]*AF_NETLINK'
	check_match "bpf() allowed" "$u" $'\nSystemCallFilter=@system-service bpf\n'
	check_match "the capabilities start-up needs" "$u" $'\nCapabilityBoundingSet=CAP_BPF CAP_PERFMON CAP_NET_ADMIN CAP_SYS_ADMIN\n'
	check_match "no new privileges" "$u" $'\nNoNewPrivileges=yes\n'
}

# capctl CAPS ARGS...: xdp-rlctl as root with only CAPS ("bpf,net_admin",
# or "none") in its bounding set, hence in its permitted set
capctl() {
	local caps=$1 b=-all
	shift
	[[ $caps != none ]] && b="-all,$(sed 's/[^,]*/+&/g' <<<"$caps")"
	nsenter --net="/run/netns/$DST" setpriv --inh-caps=-all --bounding-set="$b" \
		"$CTL_BIN" --pin-dir "$PIN" "$@" >/dev/null 2>&1
}

# capctl_out CAPS ARGS...: what capctl prints
capctl_out() {
	local caps=$1 b=-all
	shift
	[[ $caps != none ]] && b="-all,$(sed 's/[^,]*/+&/g' <<<"$caps")"
	nsenter --net="/run/netns/$DST" setpriv --inh-caps=-all --bounding-set="$b" \
		"$CTL_BIN" --pin-dir "$PIN" "$@" 2>&1
}

# expect ok|fail CAPS ARGS...: the README's table of what each needs
expect() {
	local want=$1 caps=$2 got=ok
	shift 2
	capctl "$caps" "$@" || got=fail
	[[ $got == "$want" ]] || fail "with [$caps] '$*': $got, the table says $want"
}

test_capability_table() {
	lab_up || return
	ip -n "$DST" link add d1 type veth peer name d1p && ip -n "$DST" link set d1 up &&
		ip -n "$DST" link set d1p up || { fail "cannot add d1"; return; }
	# loading: CAP_BPF + CAP_PERFMON + CAP_NET_ADMIN, or CAP_SYS_ADMIN
	local c
	for c in none bpf bpf,perfmon bpf,net_admin perfmon,net_admin; do
		expect fail $c attach dev d0
	done
	expect ok bpf,perfmon,net_admin attach dev d0
	expect ok none detach dev d0
	expect ok sys_admin attach dev d0
	# attaching the pinned program, pins, the maps: nothing
	expect ok none attach dev d1
	expect ok none detach dev d1
	expect ok none status
	expect ok none mode set dry-run
	expect ok none events count 1 timeout 1
	# the rule sets, opened by pin: nothing; a commit creates maps: CAP_BPF
	expect ok none rule list
	expect ok none stats
	expect fail none rule add 198.18.0.0/24 rate 1/s burst 1
	expect fail net_admin,perfmon rule add 198.18.0.0/24 rate 1/s burst 1
	expect ok bpf rule add 198.18.0.0/24 rate 1/s burst 1
	expect ok bpf rule add 198.18.1.0/24 proto udp dport 53 rate 1/s burst 1
	expect ok none rule list
	expect ok none stats
	expect ok none key list
	expect ok none show 198.18.0.1
	expect fail none rule del 198.18.0.0/24
	# a set pin lost (a commit interrupted before it pinned): opened by
	# id, CAP_SYS_ADMIN, which pins it again for the others
	rm -f "$PIN/xrl_rules4_set"
	expect fail bpf,perfmon,net_admin rule list
	check_match "says why" "$(capctl_out bpf rule list)" \
		"not pinned at .*xrl_rules4_set .* needs CAP_SYS_ADMIN"
	expect ok sys_admin rule list
	expect ok none rule list
	# an upgrade loads: as the first attach
	expect fail bpf,perfmon upgrade
	expect ok bpf,perfmon,net_admin upgrade
	expect ok sys_admin upgrade
}

run_test test_pin_dir_refused
run_test test_capability_table
run_test test_daemon_capabilities
run_test test_unit_sandboxing
run_test test_metrics_slow_clients
summary

#!/usr/bin/env bash
# End-to-end: xdp-rld follows a CrowdSec Local API (docs/bans.md,
# "CrowdSec"): Debian's real crowdsec, its LAPI alone (-no-cs -no-capi)
# with a configuration, data directory, SQLite database and port of the
# test's own, on the loopback of the receiving namespace, never the
# system's; a bouncer key from `cscli bouncers add`. `cscli decisions add`
# becomes a ban, `cscli decisions delete` lifts it; a LAPI that is down,
# stalls or lies (tests/tools/fake_lapi.py, on the same loopback) keeps the
# bans applied, is counted, and never stalls the heartbeat.
source "$(dirname "$0")/../lib/e2e.sh"

LOG="$TMPD/rld.log"
CONF="$TMPD/rules.conf"
CS="$TMPD/cs"
CS_PORT=18080		# in the receiving namespace: its loopback is its own
FAKE_PORT=18081
KEY="$TMPD/bouncer.key"
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=$(command -v python3)
FAKE="$TOP/tests/tools/fake_lapi.py"

write_key() {	# a key of its own, readable by root only
	rm -f "$KEY"
	(umask 077 && echo "0123456789abcdef" >"$KEY")
}

have_crowdsec() {
	command -v crowdsec >/dev/null && command -v cscli >/dev/null
}

lab_up() {
	: >"$LOG"
	lab_up_veth
}

# the LAPI's own configuration, modelled on Debian's /etc/crowdsec/config.yaml
cs_conf() {
	rm -rf "$CS"
	mkdir -p "$CS/data" "$CS/hub" "$CS/cfg"
	cp /etc/crowdsec/profiles.yaml /etc/crowdsec/simulation.yaml "$CS/cfg/" 2>/dev/null ||
		printf 'name: default\nfilters:\n - Alert.Remediation == true\ndecisions:\n - type: ban\n   duration: 4h\non_success: break\n' >"$CS/cfg/profiles.yaml"
	[[ -e $CS/cfg/simulation.yaml ]] || echo 'simulation: off' >"$CS/cfg/simulation.yaml"
	cat >"$CS/cfg/config.yaml" <<EOF
common:
  daemonize: false
  log_media: stdout
  log_level: info
  working_dir: $CS
config_paths:
  config_dir: $CS/cfg/
  data_dir: $CS/data/
  simulation_path: $CS/cfg/simulation.yaml
  hub_dir: $CS/hub/
  index_path: $CS/hub/.index.json
  notification_dir: $CS/cfg/notifications/
  plugin_dir: /usr/lib/crowdsec/plugins/
crowdsec_service:
  acquisition_path: $CS/cfg/acquis.yaml
cscli:
  output: human
db_config:
  type: sqlite
  db_path: $CS/data/crowdsec.db
  use_wal: true
api:
  client:
    credentials_path: $CS/cfg/local_api_credentials.yaml
  server:
    log_level: info
    listen_uri: 127.0.0.1:$CS_PORT
    profiles_path: $CS/cfg/profiles.yaml
    trusted_ips:
      - 127.0.0.1
prometheus:
  enabled: false
EOF
}

cscli_() { in_dst cscli -c "$CS/cfg/config.yaml" "$@"; }

# the LAPI started, a machine for cscli decisions, a bouncer key for xdp-rld
cs_up() {
	cs_conf
	cscli_ machines add tester --auto -f "$CS/cfg/local_api_credentials.yaml" >/dev/null 2>&1 ||
		{ fail "cscli machines add failed"; return 1; }
	rm -f "$KEY"
	(umask 077 && cscli_ bouncers add xdp-rl -o raw >"$KEY" 2>/dev/null) ||
		{ fail "cscli bouncers add failed"; return 1; }
	cs_start
}

cs_start() {
	# nsenter itself in the background: $! is the LAPI
	nsenter --net="/run/netns/$DST" crowdsec -c "$CS/cfg/config.yaml" -no-cs -no-capi \
		</dev/null >>"$CS/lapi.log" 2>&1 &
	CS_PID=$!
	BG_PIDS+=("$CS_PID")
	local i
	for ((i = 0; i < 200; i++)); do
		[[ "$(in_dst curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$CS_PORT/v1/decisions/stream")" == 403 ]] &&
			return 0
		sleep 0.05
	done
	fail "the LAPI did not start: $(tail -n 3 "$CS/lapi.log" | tr '\n' '|')"
	return 1
}

fake_start() {	# MODE
	echo "$1" >"$TMPD/fake.mode"
	: >"$TMPD/fake.log"	# an earlier test's requests
	nsenter --net="/run/netns/$DST" "$PYTHON" "$FAKE" --port $FAKE_PORT --mode-file "$TMPD/fake.mode" \
		--log "$TMPD/fake.log" </dev/null >>"$TMPD/fake.out" 2>&1 &
	BG_PIDS+=($!)
	local i
	for ((i = 0; i < 100; i++)); do
		in_dst bash -c "echo >/dev/tcp/127.0.0.1/$FAKE_PORT" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "fake_lapi.py did not start: $(tail -n 3 "$TMPD/fake.out")"
	return 1
}

conf() {	# URL_PORT [more lines]
	local port=$1
	shift
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 1000" "metrics 127.0.0.1:9437" \
		"crowdsec http://127.0.0.1:$port key-file $KEY poll 200 timeout 150" \
		"rule add 198.18.0.0/24 rate 1000/s burst 1000 id 1" "$@"
}

metric() {	# NAME{LABELS}: its value
	in_dst curl -s 127.0.0.1:9437/metrics | awk -v m="$1" '$1 == m { print $2 }'
}

banned_by() {	# PREFIX: who set its ban ("" when none)
	ctl -j ban list | jq -r --arg p "$1" '.[] | select(.prefix == $p) | .by'
}

wait_ban() {	# PREFIX WHO|"" [SECONDS]
	local i
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		[[ "$(banned_by "$1")" == "$2" ]] && return 0
		sleep 0.1
	done
	fail "$1: banned by '$(banned_by "$1")', expected '$2'"
	return 1
}

ban_dropped() {	# PREFIX
	ctl -j ban list | jq -r --arg p "$1" '.[] | select(.prefix == $p) | .dropped_packets'
}

hb_ok() {	# alive, heartbeat fresh, the watchdog never fired
	local s
	kill -0 "$RLD_PID" 2>/dev/null || { fail "the daemon died: $(tail -n 3 "$LOG" | tr '\n' '|')"; return 1; }
	s=$(ctl -j status)
	check_eq "heartbeating" "$(jq -r .daemon.heartbeating <<<"$s")" true
	(($(jq -r .daemon.heartbeat_age_ms <<<"$s") < 1000)) ||
		fail "heartbeat $(jq -r .daemon.heartbeat_age_ms <<<"$s") ms old"
}

start() {	# [xdp-rld options]
	start_rld "$LOG" --config "$CONF" "$@"
	wait_log "$LOG" "running" || return 1
}

test_crowdsec_check() {
	have_crowdsec || { skip "crowdsec is not installed (scripts/deps.sh)"; return; }
	local out
	write_key
	write_conf "$CONF" "crowdsec http://127.0.0.1:8080 key-file $KEY"
	check_eq "valid" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "$CONF: valid, 0 rules"
	write_conf "$CONF" "crowdsec https://127.0.0.1:8080 key-file $KEY"
	check_match "https" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "$CONF:1:10: invalid Local API URL .*https is not supported"
	write_conf "$CONF" "crowdsec http://localhost:8080 key-file $KEY"
	check_match "a name" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "'localhost' is not an IP address"
	write_conf "$CONF" "crowdsec http://127.0.0.1:8080"
	check_match "no key" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "key-file"
	write_conf "$CONF" "crowdsec http://127.0.0.1:8080 key-file $TMPD/nope"
	out=$("$RLD_BIN" --check --config "$CONF" 2>&1)
	check_match "missing key file" "$out" "$CONF:1:1: cannot read the CrowdSec key .*nope"
	chmod 0644 "$KEY"
	write_conf "$CONF" "crowdsec http://127.0.0.1:8080 key-file $KEY"
	check_match "key readable by all" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "readable by everyone"
	write_conf "$CONF" "crowdsec http://127.0.0.1:8080 key-file $KEY" "crowdsec http://127.0.0.1:8081 key-file $KEY"
	check_match "twice" "$("$RLD_BIN" --check --config "$CONF" 2>&1)" "$CONF:2:1: .*crowdsec"
}

# a decision becomes a ban within a few polls, v4, v6 and a range; other
# types are ignored; a delete lifts it; packets from it are dropped between
test_crowdsec_ban_and_delete() {
	have_crowdsec || { skip "crowdsec is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	cs_up || return
	conf $CS_PORT
	start || return
	wait_log "$LOG" "crowdsec: following the Local API" || return
	cscli_ decisions add --ip 198.18.0.5 --duration 2m --reason "e2e test" >/dev/null 2>&1
	cscli_ decisions add --ip 2001:db8:1::6 --duration 3m >/dev/null 2>&1
	cscli_ decisions add --range 198.18.0.128/25 --duration 2m >/dev/null 2>&1
	cscli_ decisions add --ip 198.18.0.7 --duration 2m --type captcha >/dev/null 2>&1
	wait_ban 198.18.0.5/32 crowdsec 5 || return
	wait_ban 2001:db8:1::6/128 crowdsec 5
	wait_ban 198.18.0.128/25 crowdsec 5
	local j left
	j=$(ctl -j ban list | jq -c '.[] | select(.prefix == "198.18.0.5/32")')
	left=$(($(jq -r .left_ms <<<"$j") / 1000))
	((left > 100 && left <= 120)) || fail "time left $left s, not the decision's 2 minutes"
	check_match "reason" "$(jq -r .reason <<<"$j")" "e2e test"
	# the captcha decision may come in a later poll than the bans before it:
	# wait for it to be seen, then it must be ignored, not banned
	wait_count_metric 'xdp_rl_crowdsec_decisions_total{action="ignored"}' 1 || return
	check_eq "captcha not banned" "$(banned_by 198.18.0.7/32)" ""
	check_eq "ignored counted" "$(metric 'xdp_rl_crowdsec_decisions_total{action="ignored"}')" 1
	check_eq "state ok" "$(metric 'xdp_rl_crowdsec_state{state="ok"}')" 1

	# packets from it are dropped, others pass
	flood 198.18.0.5 198.18.0.254 100 >/dev/null
	check_eq "dropped by the ban" "$(ban_dropped 198.18.0.5/32)" 100
	flood 198.18.0.4 198.18.0.254 50 >/dev/null
	check_eq "others pass" "$(rule_stat 1 passed_packets)" 50

	cscli_ decisions delete --ip 198.18.0.5 >/dev/null 2>&1
	wait_ban 198.18.0.5/32 "" 5 || return
	flood 198.18.0.5 198.18.0.254 30 >/dev/null
	check_eq "passes once lifted" "$(rule_stat 1 passed_packets)" 80
	check_eq "v6 kept" "$(banned_by 2001:db8:1::6/128)" crowdsec
	wait_count_metric 'xdp_rl_crowdsec_decisions_total{action="removed"}' 1 &&
		check_eq "removed counted" "$(metric 'xdp_rl_crowdsec_decisions_total{action="removed"}')" 1
	hb_ok
}

# an operator's ban that ends later is not taken over; a delete lifts only
# crowdsec's own
test_crowdsec_operator_ban_kept() {
	have_crowdsec || { skip "crowdsec is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	cs_up || return
	conf $CS_PORT
	start || return
	wait_log "$LOG" "crowdsec: following the Local API" || return
	ctl ban add 198.18.0.3 reason "by hand" >/dev/null
	cscli_ decisions add --ip 198.18.0.3 --duration 2m >/dev/null 2>&1
	wait_count_metric 'xdp_rl_crowdsec_decisions_total{action="kept"}' 1 || return
	check_eq "still the operator's" "$(banned_by 198.18.0.3/32)" operator
	cscli_ decisions delete --ip 198.18.0.3 >/dev/null 2>&1
	wait_count_metric 'xdp_rl_crowdsec_decisions_total{action="kept"}' 2 || return
	check_eq "delete leaves it" "$(banned_by 198.18.0.3/32)" operator
}

wait_count_metric() {	# NAME VALUE [SECONDS]: until it is VALUE or more
	local i v
	for ((i = 0; i < ${3:-10} * 10; i++)); do
		v=$(metric "$1")
		[[ -n $v ]] && (($(printf '%.0f' "$v") >= $2)) && return 0
		sleep 0.1
	done
	fail "$1 is '$(metric "$1")', expected $2 or more"
	return 1
}

# the LAPI killed, then stopped (SIGSTOP: a LAPI that accepts and never
# answers): bans kept, counted once per state, the heartbeat goes on
test_crowdsec_lapi_down() {
	have_crowdsec || { skip "crowdsec is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	cs_up || return
	conf $CS_PORT
	start || return
	cscli_ decisions add --ip 198.18.0.5 --duration 2m >/dev/null 2>&1
	wait_ban 198.18.0.5/32 crowdsec 5 || return
	kill -STOP "$CS_PID"
	wait_count_metric 'xdp_rl_crowdsec_state{state="unreachable"}' 1 || { kill -CONT "$CS_PID"; return; }
	sleep 1
	hb_ok
	check_eq "kept while stalled" "$(banned_by 198.18.0.5/32)" crowdsec
	kill -CONT "$CS_PID"
	wait_count_metric 'xdp_rl_crowdsec_state{state="ok"}' 1 || return
	kill -9 "$CS_PID"
	wait "$CS_PID" 2>/dev/null
	wait_count_metric 'xdp_rl_crowdsec_state{state="unreachable"}' 1 || return
	sleep 1
	hb_ok
	check_eq "kept while down" "$(banned_by 198.18.0.5/32)" crowdsec
	check_eq "logged once per state" "$(grep -c 'crowdsec: pull failed (unreachable)' "$LOG")" 2
	# back: followed again
	cs_start || return
	wait_count_metric 'xdp_rl_crowdsec_state{state="ok"}' 1 || return
	cscli_ decisions delete --ip 198.18.0.5 >/dev/null 2>&1
	wait_ban 198.18.0.5/32 "" 5
	hb_ok
}

# stopped daemon, decisions deleted meanwhile: the start's full pull lifts
# them; the bans themselves outlive the daemon (pinned)
test_crowdsec_restart_reconciles() {
	have_crowdsec || { skip "crowdsec is not installed (scripts/deps.sh)"; return; }
	lab_up || return
	cs_up || return
	conf $CS_PORT
	start --keep-attached || return
	cscli_ decisions add --ip 198.18.0.5 --duration 2m >/dev/null 2>&1
	cscli_ decisions add --ip 198.18.0.6 --duration 2m >/dev/null 2>&1
	wait_ban 198.18.0.6/32 crowdsec 5 || return
	kill "$RLD_PID"
	wait_exit "$RLD_PID" 10
	check_eq "kept with no daemon" "$(banned_by 198.18.0.5/32)" crowdsec
	cscli_ decisions delete --ip 198.18.0.5 >/dev/null 2>&1
	start --keep-attached || return
	wait_ban 198.18.0.5/32 "" 5
	check_eq "the other stays" "$(banned_by 198.18.0.6/32)" crowdsec
}

# a LAPI that lies, in every way fake_lapi.py knows: no ban changes, each
# counted, the heartbeat goes on; a good answer after them is applied
test_crowdsec_lying_lapi() {
	lab_up || return
	write_key
	fake_start ok || return
	conf $FAKE_PORT
	start || return
	wait_ban 198.18.0.8/32 crowdsec 5 || return
	check_match "the key is sent" "$(head -n 1 "$TMPD/fake.log")" "^ok /v1/decisions/stream\?startup=true 0123456789abcdef$"
	local mode before state
	for mode in garbage html forbidden wrongtype huge bigchunk lying stall trickle deep badstatus close; do
		case $mode in
		html | forbidden) state=refused ;;
		lying | stall | trickle) state=unreachable ;;	# no whole answer by the deadline
		*) state=bad-answer ;;
		esac
		before=$(metric "xdp_rl_crowdsec_pulls_total{result=\"$state\"}")
		echo "$mode" >"$TMPD/fake.mode"
		wait_count_metric "xdp_rl_crowdsec_pulls_total{result=\"$state\"}" $((before + 2)) ||
			{ fail "mode $mode"; continue; }
		check_eq "$mode: state" "$(metric "xdp_rl_crowdsec_state{state=\"$state\"}")" 1
		check_eq "$mode: ban kept" "$(banned_by 198.18.0.8/32)" crowdsec
		hb_ok
		# a failure makes the next pull a full one
		check_match "$mode: then full pulls" "$(tail -n 1 "$TMPD/fake.log")" "^$mode /v1/decisions/stream\?startup=true "
	done
	# a duration that is none: that decision skipped, the other applied
	ctl ban del 198.18.0.8 >/dev/null
	echo baddur >"$TMPD/fake.mode"
	wait_ban 198.18.0.8/32 crowdsec 5 || return
	check_eq "the bad one skipped" "$(banned_by 198.18.0.9/32)" ""
	(($(metric 'xdp_rl_crowdsec_decisions_total{action="invalid"}') >= 1)) || fail "invalid not counted"
	check_match "logged" "$(cat "$LOG")" "crowdsec: 1 decision\(s\) skipped: 'forever' is no duration"
	hb_ok
	# a stop while a pull stalls: prompt, the watchdog never fires
	echo stall >"$TMPD/fake.mode"
	sleep 0.3
	local t0=$SECONDS rc
	kill "$RLD_PID"
	wait_exit "$RLD_PID" 5
	rc=$?
	check_eq "stops" "$rc" 0
	((SECONDS - t0 <= 2)) || fail "the stop took $((SECONDS - t0)) s"
}

# a blocklist's startup pull: thousands of decisions, all applied in one
# pull, the heartbeat fresh meanwhile; the time it took is printed, not held
test_crowdsec_blocklist() {
	lab_up || return
	write_key
	fake_start many:${CS_MANY:-3000} || return
	conf $FAKE_PORT
	local t0=$SECONDS n i
	start || return
	for ((i = 0; i < 600; i++)); do
		n=$(metric 'xdp_rl_crowdsec_decisions_total{action="applied"}')
		[[ ${n:-0} -ge ${CS_MANY:-3000} ]] && break
		((i % 10)) || hb_ok
		sleep 0.1
	done
	check_eq "all applied" "$n" "${CS_MANY:-3000}"
	check_eq "all listed" "$(ctl -j ban list | jq length)" "${CS_MANY:-3000}"
	echo "    note: ${CS_MANY:-3000} decisions applied $((SECONDS - t0)) s after the start" >&2
	hb_ok
}

# a reload that changes the line: a new follower (a full pull); one whose key
# is unreadable is refused, the follower in force stays
test_crowdsec_reload() {
	lab_up || return
	write_key
	fake_start ok || return
	conf $FAKE_PORT
	start || return
	wait_ban 198.18.0.8/32 crowdsec 5 || return
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 1000" "metrics 127.0.0.1:9437" \
		"crowdsec http://127.0.0.1:$FAKE_PORT key-file $TMPD/nope poll 200"
	wait_log "$LOG" "reload refused" || return
	check_eq "follower in force" "$(metric 'xdp_rl_crowdsec_state{state="ok"}')" 1
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 1000" "metrics 127.0.0.1:9437"
	wait_log "$LOG" "no 'crowdsec' line: its bans stay" || return
	check_eq "no follower metrics" "$(metric 'xdp_rl_crowdsec_state{state="ok"}')" ""
	check_eq "its bans stay" "$(banned_by 198.18.0.8/32)" crowdsec
	hb_ok
}

# the same line, the key rotated in place (cscli bouncers delete/add writing
# the same file): a reload starts a follower on the new key
test_crowdsec_key_rotated() {
	lab_up || return
	write_key
	fake_start ok || return
	conf $FAKE_PORT
	start || return
	wait_ban 198.18.0.8/32 crowdsec 5 || return
	(umask 077 && echo "fedcba9876543210" >"$KEY.new") && mv "$KEY.new" "$KEY"
	kill -HUP "$RLD_PID"	# the same line: a reload
	wait_log "$LOG" "reload: crowdsec line applied: a new follower" || return
	local i
	for ((i = 0; i < 50; i++)); do
		[[ "$(tail -n 1 "$TMPD/fake.log")" == *" fedcba9876543210" ]] && break
		sleep 0.1
	done
	check_match "the new key sent" "$(tail -n 1 "$TMPD/fake.log")" " fedcba9876543210$"
	# the same key again: a reload changes nothing
	kill -HUP "$RLD_PID"
	sleep 1
	check_eq "one new follower only" "$(grep -c 'reload: crowdsec line applied' "$LOG")" 1
	hb_ok
}

# an answer over max-body: said with its size and the cap, the next pulls
# wait longer each time; a larger max-body takes it
test_crowdsec_max_body() {
	lab_up || return
	write_key
	fake_start many:12000 || return	# some 1.5 MB
	conf $FAKE_PORT "" && sed -i 's/ timeout 150$/ timeout 150 max-body 1/' "$CONF"
	start || return
	wait_log "$LOG" "over the cap of 1048576 .*max-body 1 MiB: raise it" || return
	local n0 n1
	sleep 0.5
	n0=$(wc -l <"$TMPD/fake.log")
	sleep 3
	n1=$(wc -l <"$TMPD/fake.log")
	# every 200 ms that would be some 15 pulls; backing off, at most 6
	((n1 - n0 <= 6)) || fail "$((n1 - n0)) pulls in 3 s after answers over the cap"
	check_match "the state" "$(metric 'xdp_rl_crowdsec_state{state="bad-answer"}')" "^1$"
	check_eq "no ban" "$(ctl -j ban list | jq length)" 0
	sed -i 's/ max-body 1$/ max-body 4/' "$CONF"
	wait_log "$LOG" "reload: crowdsec line applied" || return
	wait_count_metric 'xdp_rl_crowdsec_decisions_total{action="applied"}' 12000 || return
	hb_ok
}

run_test test_crowdsec_check
run_test test_crowdsec_blocklist
run_test test_crowdsec_ban_and_delete
run_test test_crowdsec_operator_ban_kept
run_test test_crowdsec_lapi_down
run_test test_crowdsec_restart_reconciles
run_test test_crowdsec_lying_lapi
run_test test_crowdsec_reload
run_test test_crowdsec_key_rotated
run_test test_crowdsec_max_body
summary

#!/usr/bin/env bash
# End-to-end: the daemon's status page and read-only API, beside /metrics.
# /api/v1/status, /api/v1/rules and /api/v1/top are the objects of
# `xdp-rlctl -j status`, `stats` and `top`; any other method is 405, an
# unknown path 404. The page (/) in a real browser: headless Chromium, in
# the lab's namespace, during a flood, shows the rule rows, a chart with
# points and the top key; its screenshot is the one the docs show.
source "$(dirname "$0")/../lib/e2e.sh"

LOG="$TMPD/rld.log"
CONF="$TMPD/rules.conf"
URL=http://127.0.0.1:9437

lab_up() {
	: >"$LOG"
	lab_up_veth
}

in_dst_curl() { nsenter --net="/run/netns/$DST" curl -s "$@"; }

start_daemon() {
	lab_up || return 1
	write_conf "$CONF" "interface d0" "heartbeat 100" "watchdog 500" "metrics 127.0.0.1:9437" \
		"rule add 198.18.0.0/24 rate 100/s burst 50 id 3" \
		"rule add 198.51.100.0/24 rate 10/s burst 10 id 4" \
		"rule add 2001:db8:1::/48 action allow id 5"
	start_rld "$LOG" --config "$CONF"
	wait_log "$LOG" "metrics on http://127.0.0.1:9437/metrics"
}

test_api() {
	start_daemon || return
	flood 198.18.0.1 198.18.0.254 500 >/dev/null
	local a c
	a=$(in_dst_curl "$URL/api/v1/rules" | jq -cS .rules)
	c=$(ctl -j stats | jq -cS .rules)
	check_eq "/api/v1/rules: the rules of stats -j" "$a" "$c"
	check_eq "its drops" "$(jq -r '.[] | select(.id == 3) | .dropped_packets' <<<"$a")" 450
	a=$(in_dst_curl "$URL/api/v1/status")
	c=$(ctl -j status sample 0)
	check_eq "/api/v1/status: the keys of status -j" "$(jq -c 'keys' <<<"$a")" "$(jq -c 'keys' <<<"$c")"
	check_eq "the same mode, rules, program" "$(jq -c '[.mode, .rules, .prog_id, .pin_dir]' <<<"$a")" \
		"$(jq -c '[.mode, .rules, .prog_id, .pin_dir]' <<<"$c")"
	check_eq "the daemon heartbeats" "$(jq -r .daemon.heartbeating <<<"$a")" true
	a=$(in_dst_curl "$URL/api/v1/top")
	check_eq "/api/v1/top: the key" "$(jq -c '[.[0].key, .[0].rule, .[0].dropped_packets]' <<<"$a")" \
		'["198.18.0.1/32",3,450]'
	check_eq "the fields of top -j" "$(jq -c '.[0] | keys' <<<"$a")" \
		"$(ctl -j top sample 100 | jq -c '.[0] | keys')"
	check_match "the page" "$(in_dst_curl "$URL/")" "<title>xdp-rl status</title>"
	check_eq "the page's type" "$(in_dst_curl -o /dev/null -w '%{content_type}' "$URL/")" \
		"text/html; charset=utf-8"
	check_eq "JSON's type" "$(in_dst_curl -o /dev/null -w '%{content_type}' "$URL/api/v1/top")" \
		"application/json"
	check_eq "no external asset" "$(in_dst_curl "$URL/" | grep -cE '(src|href)=|https?://|@import')" 0
	# read-only; unknown paths
	check_eq "POST: 405" "$(in_dst_curl -o /dev/null -w '%{http_code}' -X POST "$URL/api/v1/rules")" 405
	check_eq "PUT: 405" "$(in_dst_curl -o /dev/null -w '%{http_code}' -X PUT -d x "$URL/")" 405
	check_eq "DELETE: 405" "$(in_dst_curl -o /dev/null -w '%{http_code}' -X DELETE "$URL/api/v1/top")" 405
	check_match "405 says what is allowed" "$(in_dst_curl -o /dev/null -D - -X POST "$URL/")" $'Allow: GET, HEAD\r'
	check_match "the page forbids any other origin" "$(in_dst_curl -o /dev/null -D - "$URL/")" \
		"Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; .*connect-src 'self'"
	check_match "no type sniffing" "$(in_dst_curl -o /dev/null -D - "$URL/api/v1/top")" \
		"X-Content-Type-Options: nosniff"
	check_eq "HEAD: 200" "$(in_dst_curl -o /dev/null -w '%{http_code}' -I "$URL/api/v1/status")" 200
	check_eq "unknown path: 404" "$(in_dst_curl -o /dev/null -w '%{http_code}' "$URL/api/v2/rules")" 404
	check_eq "a prefix of a path: 404" "$(in_dst_curl -o /dev/null -w '%{http_code}' "$URL/api/v1/")" 404
	check_eq "/metrics still" "$(in_dst_curl "$URL/metrics" | grep -c '^xdp_rl_rules_loaded 3$')" 1
	# clumsy or hostile clients: a query string, a 64 KiB path, a GET with a
	# 1 MiB body (libmicrohttpd reads it and drops it), 32 KiB of headers; then 20 idle connections from one
	# address held open: the API still answers the same as /metrics does
	check_eq "a query string: the path" \
		"$(in_dst_curl -o /dev/null -w '%{http_code}' "$URL/api/v1/rules?x=<script>")" 200
	check_match "a 64 KiB path: refused" \
		"$(in_dst_curl -o /dev/null -w '%{http_code}' "$URL/$(head -c 65536 /dev/zero | tr '\0' a)")" \
		'^(000|404|414|431)$'
	head -c 1048576 /dev/zero >"$TMPD/body"
	check_match "a GET with a 1 MiB body: ignored or refused" \
		"$(in_dst_curl -o /dev/null -w '%{http_code}' -X GET --data-binary @"$TMPD/body" "$URL/api/v1/top")" \
		'^(000|200|400|405|413)$'
	check_match "32 KiB of headers: refused" \
		"$(in_dst_curl -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 32768 /dev/zero | tr '\0' b)" \
			"$URL/api/v1/status")" '^(000|400|413|431)$'
	nsenter --net="/run/netns/$DST" python3 -c '
import socket, sys, time
s = [socket.create_connection(("127.0.0.1", 9437)) for _ in range(20)]
for c in s:
    c.send(b"GET /api/v1/status HTTP/1.1\r\n")
time.sleep(3)
' &
	local idle=$!
	sleep 1
	check_eq "held connections: the API still answers" \
		"$(nsenter --net="/run/netns/$DST" curl -s --interface 127.0.0.2 -o /dev/null -w '%{http_code}' \
			-m 3 "$URL/api/v1/rules")" 200
	wait "$idle"
	check_eq "and after them" "$(in_dst_curl -o /dev/null -w '%{http_code}' -m 3 "$URL/api/v1/rules")" 200
	# a client asking top back to back gets the last walk's answer: one
	# walk a second, not one per request
	local t0=$SECONDS i
	for ((i = 0; i < 50; i++)); do in_dst_curl -o /dev/null "$URL/api/v1/top"; done
	((SECONDS - t0 < 10)) || fail "50 top requests took $((SECONDS - t0)) s"
}

CDP="$TOP/tests/tools/cdp-page.py"
CDP_PORT=9222	# on the lab namespace's own loopback
PROFILE="$TMPD/chromium-profile"

# headless Chromium in the lab's namespace (the daemon listens on its
# loopback), with a profile of its own, driven through the DevTools protocol
# by cdp-page.py in real time; every process of it ended after, by pid
chromium_start() {
	mkdir -p "$PROFILE"
	nsenter --net="/run/netns/$DST" chromium --headless=new --no-sandbox --disable-gpu \
		--no-first-run --disable-extensions --disable-background-networking --disable-sync \
		--user-data-dir="$PROFILE" --remote-debugging-address=127.0.0.1 \
		--remote-debugging-port=$CDP_PORT --window-size=1280,900 about:blank \
		>/dev/null 2>"$TMPD/chromium.err" &
	CHROMIUM_PID=$!
	BG_PIDS+=($CHROMIUM_PID)
}
chromium_stop() {
	local p i
	kill -TERM "$CHROMIUM_PID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		pgrep -f -- "--user-data-dir=$PROFILE" >/dev/null || break
		sleep 0.1
	done
	for p in $(pgrep -f -- "--user-data-dir=$PROFILE" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
	wait "$CHROMIUM_PID" 2>/dev/null
	rm -rf "$PROFILE"
}

test_page_in_chromium() {
	command -v chromium >/dev/null || { fail "chromium is not installed (scripts/deps.sh)"; return; }
	start_daemon || return
	# a paced flood for the length of the page's life: rule 3 drops
	nsenter --net="/run/netns/$SRC" "$FLOOD" -s 198.18.0.1 -d 198.18.0.254 -n 60000 -r 2000 -t 40 \
		>/dev/null 2>&1 &
	BG_PIDS+=($!)
	chromium_start
	# eight refreshes, a second apart, in the page's own time
	nsenter --net="/run/netns/$DST" python3 "$CDP" $CDP_PORT "$URL/" \
		'document.body.dataset.refreshes >= 8' "$TMPD/dom.html" "$TMPD/status.png" 40
	check_eq "the page refreshed itself 8 times" $? 0
	chromium_stop
	check_eq "no chromium left" "$(pgrep -fc -- "--user-data-dir=$PROFILE")" 0
	local dom
	dom=$(cat "$TMPD/dom.html")
	[[ -n $dom ]] || { fail "no DOM; chromium said: $(tail -n 3 "$TMPD/chromium.err")"; return; }
	check_match "the mode" "$dom" '<b id="mode">enforce</b>'
	check_match "the watchdog" "$dom" '<b id="watchdog" class="ok">heartbeating, watchdog 500 ms</b>'
	check_match "no fleet" "$dom" '<b id="fleet" class="">none</b>'
	check_eq "three rule rows" "$(grep -o '<tr class="rule" data-id="[0-9]*">' <<<"$dom" | tr '\n' ' ')" \
		'<tr class="rule" data-id="3"> <tr class="rule" data-id="4"> <tr class="rule" data-id="5"> '
	check_match "rule 3's row" "$dom" '<tr class="rule" data-id="3"><td>3</td><td class="prefix">198.18.0.0/24</td><td class="l">limit</td><td>100/s burst 50</td>'
	# its live rates: 2000/s sent, 100/s passed
	local drate prate
	drate=$(grep -o '<tr class="rule" data-id="3">.*' <<<"$dom" | grep -o '<td class="dropped-rate[^"]*">[0-9.k]*' | head -1 | sed 's/.*>//')
	prate=$(grep -o '<tr class="rule" data-id="3">.*' <<<"$dom" | grep -o '<td class="passed-rate">[0-9.k]*' | head -1 | sed 's/.*>//')
	[[ $drate =~ ^(1[0-9]{3}|2[0-9]{3}|1\.[0-9]k|2\.[0-9]k)$ ]] || fail "rule 3 drops at $drate/s, not about 1900"
	[[ $prate =~ ^([5-9][0-9]|1[0-4][0-9])$ ]] || fail "rule 3 passes $prate/s, not about 100"
	local pts
	pts=$(grep -o 'data-points="[0-9]*"' <<<"$dom" | grep -o '[0-9]*')
	((pts >= 5)) || fail "the chart has $pts points"
	check_match "the drops' line has them" "$dom" '<polyline id="drops" points="[0-9.]+,[0-9.]+ [0-9.]+,[0-9.]+ [0-9.]+,[0-9.]+'
	check_match "the top key" "$dom" '<tr class="hot"><td class="key">198\.18\.0\.1/32</td><td>3</td>'
	check_match "no error shown" "$dom" '<span id="error"></span>'
	# the screenshot the docs show
	check_match "a screenshot" "$(file -b "$TMPD/status.png")" "PNG image data, 1280 x 900"
	if [[ -n ${XRL_SCREENSHOT:-} ]]; then
		cp "$TMPD/status.png" "$XRL_SCREENSHOT"
	fi
}

run_test test_api
run_test test_page_in_chromium
summary

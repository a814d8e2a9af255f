#!/usr/bin/env bash
# Shared helpers of the end-to-end tests: the harness of tests/lib/harness.sh
# (run_test, fail, check_eq, check_match, skip, summary) on the lab of
# tests/lib/lab.sh:
#
#   ns $SRC                                   ns $DST
#   s0 198.18.0.1-.9/24, 2001:db8:1::X/64 --- d0  198.18.0.254, 2001:db8:1::fe
#                                               ^ xdp-rl attached here
#
# The pins go to the lab's private bpffs, so a real deployment under
# /sys/fs/bpf/xdp-rl is never touched. Everything is removed on exit,
# failure included. Each test starts and ends with the lab down.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$TOP/tests/lib/harness.sh"
source "$TOP/tests/lib/lab.sh"
# the build under test: .output, or XRL_OUT (.output/san: make test SANITIZE=1)
OUT=${XRL_OUT:-.output}
[[ $OUT == /* ]] || OUT="$TOP/$OUT"
CTL_BIN="$OUT/xdp-rlctl"
RLD_BIN="$OUT/xdp-rld"
XFLOOD="$OUT/xrl-flood"
FLOOD="$OUT/udpflood"
lab_init "" || exit 1
# for the test files that source this one
# shellcheck disable=SC2034
RUN_ID=$LAB_ID TMPD=$LAB_TMP BPFFS=$LAB_BPFFS
PIN=$LAB_PIN
BG_PIDS=()	# daemons and servers a test started

kill_bg() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	BG_PIDS=()
}

cleanup() {
	kill_bg
	lab_cleanup
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# before and after each test (tests/lib/harness.sh): whatever it left goes
harness_reset() { lab_down; }

# ---- the lab ----
new_ns() { lab_ns "$@"; }

# lab_up: two namespaces and one veth pair between them (a test file may
# redefine lab_up and call lab_up_veth)
lab_up() {
	lab_up_veth
}
lab_up_veth() {
	local i s=()
	for i in 1 2 3 4 5 6 7 8 9; do
		s+=(-s "198.18.0.$i/24" -s "2001:db8:1::$i/64")
	done
	lab_build "${s[@]}" -d 198.18.0.254/24 -d 2001:db8:1::fe/64 ||
		{ fail "cannot build the lab"; return 1; }
}

# lab_up_src2: a second sender, ns $SRC2 with s1 198.18.0.1/24, joined to
# d1 in $DST (the lab's second interface)
lab_up_src2() {
	SRC2="$RUN_ID-src2"
	new_ns "$SRC2" || return 1
	ip -n "$SRC2" link add s1 type veth peer name d1 netns "$DST" || return 1
	ip -n "$DST" link set d1 address 02:00:00:00:01:fe up
	ip -n "$SRC2" link set s1 up
	ip -n "$SRC2" addr add 198.18.0.1/24 dev s1
	ip -n "$SRC2" neigh add 198.18.0.254 lladdr 02:00:00:00:01:fe dev s1 nud permanent
}

# write_conf FILE LINES...: replace FILE the way editors do (temp + rename)
write_conf() {
	local f=$1
	shift
	printf '%s\n' "$@" >"$f.tmp" && mv "$f.tmp" "$f"
}

lab_down() {
	kill_bg
	ctl detach dev d0 purge >/dev/null 2>&1
	ctl detach dev d1 purge >/dev/null 2>&1
	lab_teardown
	# pins of a failed test must not leak into the next one
	rm -rf "$PIN" 2>/dev/null
}

# ctl ARGS...: xdp-rlctl in the receiving namespace (mounts are kept)
ctl() {
	nsenter --net="/run/netns/$DST" "$CTL_BIN" --pin-dir "$PIN" "$@"
}

# flood SRC_ADDR DST_ADDR COUNT [PPS]: COUNT UDP frames of 106 bytes from
# $SRC, as fast as the live-frames generator goes, or paced at PPS through a
# socket; prints how many were sent
flood() {
	if [[ -n "${4:-}" ]]; then
		nsenter --net="/run/netns/$SRC" "$FLOOD" -s "$1" -d "$2" -n "$3" -r "$4" -t 30
	else
		nsenter --net="/run/netns/$SRC" "$XFLOOD" -i s0 -m $DST_MAC -s "$1" -d "$2" -n "$3" \
			-l 106 -T 30 -j | jq -r .sent
	fi
}


# start_rld LOG ARGS...: xdp-rld in the receiving namespace, in the background
start_rld() {
	local log=$1
	shift
	nsenter --net="/run/netns/$DST" "$RLD_BIN" --pin-dir "$PIN" "$@" >>"$log" 2>&1 &
	RLD_PID=$!
	BG_PIDS+=("$RLD_PID")
}

# wait_log FILE REGEX [SECONDS]: until a line matches (default 10 s)
wait_log() {
	local i
	for ((i = 0; i < ${3:-10} * 20; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "no line /$2/ in $(basename "$1") within ${3:-10} s; it says: $(tail -n 3 "$1" | tr '\n' '|')"
	return 1
}

# wait_listen NS PORT [SECONDS]: until a TCP socket listens on PORT in the
# namespace (default 10 s): a server started in the background is waited
# for, never slept for (python takes its time to start on a loaded machine)
wait_listen() {
	local i
	for ((i = 0; i < ${3:-10} * 20; i++)); do
		[[ -n $(nsenter --net="/run/netns/$1" ss -Hltn "sport = :$2" 2>/dev/null) ]] && return 0
		sleep 0.05
	done
	fail "nothing listens on port $2 in $1 within ${3:-10} s"
	return 1
}

# jget JSON FILTER
jget() {
	jq -r "$2" <<<"$1"
}

# rule_stat ID FIELD
rule_stat() {
	ctl -j stats | jq -r ".rules[] | select(.id == $1) | .$2"
}

no_xdp_on() {	# NS DEV
	! ip -n "$1" link show "$2" 2>/dev/null | grep -q 'xdp'
}

# wait_exit PID SECONDS: its exit status, or 124 when it is still running
wait_exit() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			return
		fi
		sleep 0.05
	done
	return 124
}

# notify_listener SOCKET FILE: a notify socket as systemd's, every datagram
# the daemon sends appended to FILE, one per line
notify_listener() {
	rm -f "$1"	# an earlier test's
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
out = open(sys.argv[2], "a", buffering=1)
while True:
    out.write(s.recv(4096).decode().replace("\n", " ") + "\n")' "$1" "$2" &
	BG_PIDS+=($!)
	local i
	for ((i = 0; i < 50; i++)); do [[ -S $1 ]] && return 0; sleep 0.05; done
	fail "no notify socket"
	return 1
}

# inst_progs NAME: how many programs named NAME (xdp_rl, xrl_tc) run on the
# lab instance's maps (its pinned control block), loaded or not attached
inst_progs() {
	local c
	c=$(bpftool -j map show pinned "$PIN/xrl_control" 2>/dev/null | jq .id) || { echo 0; return; }
	bpftool -j prog show | jq --arg n "$1" --argjson c "${c:-0}" \
		'[.[] | select(.name == $n and ((.map_ids // []) | index($c)) != null)] | length'
}

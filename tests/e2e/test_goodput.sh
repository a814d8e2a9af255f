#!/usr/bin/env bash
# End-to-end: attach on a veth in native mode says what it costs goodput
# (native XDP on a veth, any program, takes segmentation offload from its
# peer; README, Performance), once, on stderr; generic mode, which keeps
# the rate, says nothing; mode auto picks native on a veth, and says it.
source "$(dirname "$0")/../lib/e2e.sh"

peer_tso() { nsenter --net="/run/netns/$SRC" ethtool -k s0 | awk '/^tcp-segmentation-offload:/ { print $2 }'; }

test_native_on_veth_notes_goodput() {
	lab_up || return
	local out err
	out=$(ctl attach dev d0 mode native 2>"$TMPD/err")
	err=$(<"$TMPD/err")
	check_eq "stdout" "$out" "attached to d0 (native mode)"
	check_match "the note" "$err" "^Note: d0 is a veth: native XDP there turns off TCP segmentation offload on its peer .*'mode generic' keeps most of it$"
	check_eq "one line" "$(wc -l <"$TMPD/err")" 1
	# -j: the note goes to stderr as JSON, stdout stays one object
	ctl detach dev d0 >/dev/null
	out=$(ctl -j attach dev d0 mode native 2>"$TMPD/err")
	check_eq "json stdout" "$(jq -r .mode <<<"$out")" native
	check_eq "json note" "$(jq -r '.note | startswith("d0 is a veth")' "$TMPD/err")" true
	# the note's claim, seen on this kernel: the peer lost TCP segmentation offload
	check_eq "peer's TSO" "$(peer_tso)" off
}

test_generic_on_veth_is_quiet() {
	lab_up || return
	local out
	out=$(ctl attach dev d0 mode generic 2>"$TMPD/err")
	check_eq "stdout" "$out" "attached to d0 (generic mode)"
	check_eq "no note" "$(<"$TMPD/err")" ""
	check_eq "peer's TSO kept" "$(peer_tso)" on
}

test_auto_on_veth_is_native_and_notes() {
	# mode auto (the default) takes native where the driver has it, as a
	# veth does: the same trade-off, the same note
	lab_up || return
	local out
	out=$(ctl attach dev d0 2>"$TMPD/err")
	check_eq "stdout" "$out" "attached to d0 (native mode)"
	check_eq "the note" "$(grep -c '^Note: d0 is a veth' "$TMPD/err")" 1
}

run_test test_native_on_veth_notes_goodput
run_test test_generic_on_veth_is_quiet
run_test test_auto_on_veth_is_native_and_notes
summary

#!/usr/bin/env bash
# End-to-end: least privilege (README, "Privileges"). A pin directory that
# another user owns or may write, or whose parents let another user swap it,
# is refused; the metrics server keeps answering scrapes while slow clients
# hold connections; the daemon runs with only the capabilities it needs.
source "$(dirname "$0")/lib.sh"

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

run_test test_pin_dir_refused
summary

#!/usr/bin/env bash
# The set-up the benchmarks of one lab each share (slip.sh, syncookies.sh,
# crosscheck.sh; sourced after TOP is set): root, the lab's namespaces and
# its traps, the pin dir and the output dir, and the helpers log and ctl.
#
#   bench_lab_init NAME  refuses to run but as root; lab_init NAME (the run
#                        id, a temp dir, a private bpffs: tests/lib/lab.sh);
#                        sets PIN (the pin dir) and TMPD (the temp dir);
#                        creates $OUT; on exit runs bench_cleanup_hook (if
#                        the script defines one: what it started itself),
#                        then removes the lab; SIGINT and SIGTERM exit 130
#   log MSG...           to stderr
#   ctl ARGS...          xdp-rlctl in d0's namespace, on the lab's pins
# The lab itself (lab_build ...) is the script's: each builds its own.
set -u

source "$TOP/tests/lib/lab.sh"
CTL_BIN=$TOP/.output/xdp-rlctl
# shellcheck disable=SC2034 # for the scripts that source this one
FLOOD=$TOP/.output/xrl-flood

log() { printf '%s\n' "$*" >&2; }
ctl() { in_dst "$CTL_BIN" --pin-dir "$PIN" "$@"; }

bench_cleanup() {
	set +e
	declare -F bench_cleanup_hook >/dev/null && bench_cleanup_hook
	lab_cleanup
}

bench_lab_init() {
	[[ $(id -u) -eq 0 ]] || { echo "Error: the benchmark needs root" >&2; exit 1; }
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	lab_init "$1" || exit 1
	PIN=$LAB_PIN
	# shellcheck disable=SC2034 # for the scripts that source this one
	TMPD=$LAB_TMP
	mkdir -p "$OUT" || exit 1
}

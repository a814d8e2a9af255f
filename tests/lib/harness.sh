#!/usr/bin/env bash
# The harness of the shell test files, with no lab and no root: a file
# defines test_NAME functions and runs each with `run_test test_NAME`, then
# closes with `summary`. tests/lib/e2e.sh builds the end-to-end lab on it.
#
#   run_test FN      run FN (if selected); a line "ok   FN", "FAIL FN" or
#                    "skip FN: why" for it
#   fail MSG         the running test fails (it goes on: return to stop it)
#   check_eq DESC ACTUAL EXPECTED, check_match DESC TEXT REGEX
#   skip WHY         the running test cannot run here (a missing tool, a
#                    kernel without a feature): return right after it. A
#                    skipped test is counted apart, never as passed; one
#                    that failed before it skipped is counted as failed.
#   summary          the closing line "N passed, N failed, N skipped";
#                    false if a test failed
#
# Which tests run: XRL_TESTS, globs separated by spaces (tests/run.sh -t
# GLOB sets it), and ONLY, exact names ("ONLY='test_a test_b' bash FILE").
# A file may set harness_reset to what must run before and after each test
# (tests/lib/e2e.sh: take the lab down).
set -u

TESTS_PASSED=0
TESTS_FAILED=0
TESTS_SKIPPED=0
CUR_FAILED=0
CUR_SKIP=

harness_reset() { :; }

fail() {
	CUR_FAILED=$((CUR_FAILED + 1))
	echo "    FAIL: $*" >&2
}

check_eq() {	# DESC ACTUAL EXPECTED
	[[ "$2" == "$3" ]] || fail "$1: got '$2', expected '$3'"
}

check_match() {	# DESC TEXT REGEX
	[[ "$2" =~ $3 ]] || fail "$1: '$2' does not match /$3/"
}

skip() {	# WHY
	CUR_SKIP=${1:-no reason given}
}

# selected FN: whether FN is to run (XRL_TESTS and ONLY both allow it)
selected() {
	local g globs
	[[ -z "${ONLY:-}" || " $ONLY " == *" $1 "* ]] || return 1
	[[ -z "${XRL_TESTS:-}" ]] && return 0
	# read -a splits without expanding the globs against files
	read -r -a globs <<<"$XRL_TESTS"
	for g in "${globs[@]}"; do
		# shellcheck disable=SC2053 # $g is a glob, matched as one
		[[ $1 == $g ]] && return 0
	done
	return 1
}

run_test() {	# FUNCTION
	selected "$1" || return 0
	CUR_FAILED=0
	CUR_SKIP=
	harness_reset	# whatever an aborted test left
	"$1"
	harness_reset
	if ((CUR_FAILED)); then
		TESTS_FAILED=$((TESTS_FAILED + 1))
		echo "FAIL $1"
	elif [[ -n $CUR_SKIP ]]; then
		TESTS_SKIPPED=$((TESTS_SKIPPED + 1))
		echo "skip $1: $CUR_SKIP"
	else
		TESTS_PASSED=$((TESTS_PASSED + 1))
		echo "ok   $1"
	fi
}

summary() {
	echo "$TESTS_PASSED passed, $TESTS_FAILED failed, $TESTS_SKIPPED skipped"
	((TESTS_FAILED == 0))
}

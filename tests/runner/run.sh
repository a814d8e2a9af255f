#!/usr/bin/env bash
# The test runner (tests/run.sh) on the fixtures of tests/runner/fixtures:
# the sums and the skip state, -t choosing tests in a shell file and in a
# binary, a suite with no chosen test left unstarted, and every way a suite
# can fail the run. No root; closes with "N passed, N failed, N skipped".
source "$(dirname "$0")/../lib/harness.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
FIX=tests/runner/fixtures
RWORK=$(mktemp -d "/tmp/${XRL_RUN:-xrl-}runner.XXXXXX") || exit 1
trap 'rm -rf "$RWORK"' EXIT
export FIXTURE_LOG="$RWORK/log"

# runner ARGS...: tests/run.sh on them; its output in OUT, its exit in RC,
# the fixtures' log in RAN
runner() {
	: >"$FIXTURE_LOG"
	OUT=$(cd "$TOP" && tests/run.sh "$@" 2>&1)
	RC=$?
	RAN=$(sort "$FIXTURE_LOG" | tr '\n' '|')
}

last_line() { tail -n 1 <<<"$OUT"; }

test_runner_sums_and_skips() {
	runner "$FIX/fake_bin"
	check_eq "closing line" "$(last_line)" "2 passed, 0 failed, 1 skipped"
	check_eq "exit" "$RC" 0
	check_match "the skip and its reason" "$OUT" $'\n  skip beta_skip: not on this kernel\n'
}

test_runner_failure_fails_the_run() {
	runner "$FIX/test_alpha.sh"
	check_eq "closing line" "$(last_line)" "2 passed, 2 failed, 1 skipped"
	check_eq "exit" "$RC" 1
	check_match "the skipped test" "$OUT" $'\n  skip test_alpha_skip: no tool here\n'
	check_match "failed, then skipped: failed" "$OUT" $'\n  FAIL test_alpha_skip_failed\n'
}

test_runner_t_in_a_shell_file() {
	runner -t 'test_alpha_o*' "$FIX/test_alpha.sh"
	check_eq "closing line" "$(last_line)" "2 passed, 0 failed, 0 skipped"
	check_eq "exit" "$RC" 0
	check_eq "tests run" "$RAN" "ran test_alpha_ok|ran test_alpha_other|"
}

test_runner_t_in_a_binary() {
	runner -t beta_one -t 'beta_s*' "$FIX/fake_bin"
	check_eq "closing line" "$(last_line)" "1 passed, 0 failed, 1 skipped"
	check_eq "listed, then run with the globs" "$RAN" "fake_bin -l|fake_bin -t beta_one -t beta_s*|"
}

test_runner_t_leaves_unmatched_suites_unstarted() {
	runner -t beta_two "$FIX/test_alpha.sh" "$FIX/fake_bin" "$FIX/no_summary.sh"
	check_eq "closing line" "$(last_line)" "1 passed, 0 failed, 0 skipped"
	check_eq "only the binary's list and its one test" "$RAN" "fake_bin -l|fake_bin -t beta_two|"
	[[ $OUT == *"== $FIX/test_alpha.sh"* ]] && fail "the shell file was started: $OUT"
	runner -t nosuch "$FIX/test_alpha.sh" "$FIX/fake_bin"
	check_eq "no test matches: says so" "$(last_line)" "Error: no test matches -t nosuch"
	check_eq "no test matches: a failed run" "$RC" 1
	check_eq "no test matches: nothing run" "$RAN" "fake_bin -l|"
	runner -t 'delta*' "$FIX/no_summary.sh"
	check_match "a script left out says so" "$OUT" "not run, having no test names for -t: $FIX/no_summary.sh"
}

test_runner_suite_without_summary() {
	runner "$FIX/no_summary.sh"
	check_eq "closing line" "$(last_line)" "0 passed, 1 failed, 0 skipped"
	check_eq "exit" "$RC" 1
	check_match "says why" "$OUT" "ended without a summary"
}

test_runner_suite_exit_without_failure() {
	runner "$FIX/bad_exit.sh"
	check_eq "closing line" "$(last_line)" "1 passed, 1 failed, 0 skipped"
	check_eq "exit" "$RC" 1
	check_match "says why" "$OUT" "exited 3: counted as one failure"
}

test_runner_failures_said_are_counted() {
	runner "$FIX/lying.sh"
	check_match "says so" "$OUT" "said FAIL 1 times but counted 0"
	check_eq "closing line" "$(last_line)" "1 passed, 1 failed, 0 skipped"
	check_eq "a failed run" "$RC" 1
}

test_runner_binary_without_list() {
	runner "$FIX/old_bin"
	check_eq "the older closing line" "$(last_line)" "2 passed, 0 failed, 0 skipped"
	# -t cannot aim a binary that cannot list: a failure, not its whole run
	runner -t gamma_one "$FIX/old_bin"
	check_eq "-t on it: asked for its list only" "$RAN" "old_bin -l|"
	check_match "-t on it: says why" "$OUT" "does not list its tests \(-l\): -t cannot choose"
	check_match "-t on it: a failure" "$OUT" $'\nFAIL '"$FIX/old_bin"$'\n'
	check_eq "-t on it: a failed run" "$RC" 1
}

test_runner_every_glob_must_match() {
	runner -t beta_one -t nosuch "$FIX/fake_bin"
	check_eq "one glob of two matches nothing: says so" "$(last_line)" "Error: no test matches -t nosuch"
	check_eq "a failed run" "$RC" 1
	runner -t beta_one -t 'beta_t*' "$FIX/fake_bin"
	check_eq "both match" "$(last_line)" "2 passed, 0 failed, 0 skipped"
}

test_runner_binary_that_runs_none() {
	FIXTURE_RUN_NONE=1 runner -t beta_one "$FIX/fake_bin"
	check_match "says so" "$OUT" "ran no test although its list has one -t chose"
	check_eq "a failure" "$(last_line)" "0 passed, 1 failed, 0 skipped"
	check_eq "a failed run" "$RC" 1
}

# without root and without --check, the suites that need root are said and
# counted skipped (a run as root checks this as nobody)
test_runner_not_root_counts_skips() {
	local -a as=()
	if (($(id -u) == 0)); then
		command -v setpriv >/dev/null || { skip "no setpriv"; return; }
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
	: >"$FIXTURE_LOG"
	OUT=$(cd "$TOP" && "${as[@]}" tests/run.sh -t test_errors 2>&1)
	RC=$?
	check_match "a root suite with the test: skipped" "$OUT" $'\nskip e2e/test_cli: needs root\n'
	check_match "counted" "$(last_line)" "^0 passed, 0 failed, [1-9][0-9]* skipped$"
	check_eq "exit" "$RC" 0
}

test_runner_list() {
	runner -l -t 'test_alpha_s*' "$FIX/test_alpha.sh"
	check_eq "listed" "$OUT" "$FIX/test_alpha.sh test_alpha_skip
$FIX/test_alpha.sh test_alpha_skip_failed"
	check_eq "nothing run" "$RAN" ""
	runner -l -t 'delta*' "$FIX/no_summary.sh"
	check_eq "-l -t: a script, which -t leaves out, is not listed" "$OUT" ""
	runner -l "$FIX/no_summary.sh"
	check_eq "-l: a script runs whole" "$OUT" "$FIX/no_summary.sh (no list: runs whole)"
}

test_runner_check_is_root_free() {
	local s chosen
	runner --check -l
	check_eq "exit" "$RC" 0
	chosen=$(awk '{ print $1 }' <<<"$OUT" | sort -u | tr '\n' ' ')
	for s in unit grammar classes docs runner; do
		[[ " $chosen" == *" $s "* ]] || fail "make check does not run $s: $chosen"
	done
	grep -qE '^(bpf|fuzz|parsers|alerts|e2e/)' <<<"$OUT" &&
		fail "--check chose a suite that needs root or a build of make test: $chosen"
	runner --check bpf e2e/test_cli
	check_match "a root suite under --check is skipped" "$OUT" $'\nskip bpf: needs root\n'
	check_eq "closing line" "$(last_line)" "0 passed, 0 failed, 2 skipped"
	# an e2e file's names are read without root: only a match is skipped
	runner --check -t test_errors e2e/test_cli e2e/test_daemon
	check_eq "-t: the file with the test skipped, not the other" "$(grep -c '^skip' <<<"$OUT")" 1
	check_eq "-t: closing line" "$(last_line)" "0 passed, 0 failed, 1 skipped"
	# a binary's names are read without root too: a glob it lacks is no
	# skip of the suite, but a run that matched nothing
	if [[ -x ${XRL_OUT:-.output}/test_prog ]]; then
		runner --check -t nosuch bpf
		check_eq "-t nosuch bpf: no test matches" "$(last_line)" "Error: no test matches -t nosuch"
		check_eq "-t nosuch bpf: a failed run" "$RC" 1
	fi
}

test_runner_unknown_suite() {
	runner nosuch
	check_eq "exit" "$RC" 2
	check_match "says so" "$OUT" "^Error: no suite 'nosuch'"
}

run_test test_runner_sums_and_skips
run_test test_runner_failure_fails_the_run
run_test test_runner_t_in_a_shell_file
run_test test_runner_t_in_a_binary
run_test test_runner_t_leaves_unmatched_suites_unstarted
run_test test_runner_suite_without_summary
run_test test_runner_suite_exit_without_failure
run_test test_runner_failures_said_are_counted
run_test test_runner_binary_without_list
run_test test_runner_every_glob_must_match
run_test test_runner_binary_that_runs_none
run_test test_runner_not_root_counts_skips
run_test test_runner_list
run_test test_runner_check_is_root_free
run_test test_runner_unknown_suite
summary

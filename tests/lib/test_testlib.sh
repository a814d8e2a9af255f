#!/usr/bin/env bash
# The C test harness (tests/lib/testlib.h) against the contract the runners
# rely on: -l lists, -t GLOB selects (several allowed), SKIP is counted
# apart, a failure sets the exit status, a bad option exits 2, and the
# closing line is "N passed, N failed, N skipped". Needs no root.
cd "$(dirname "$0")/../.." || exit 1
OUT=${XRL_OUT:-.output}
T=$OUT/test_testlib
passed=0
failed=0
ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
# expect NAME WANT CMD...: the output of CMD (stdout) is exactly WANT
expect() {
	local name=$1 want=$2 got
	shift 2
	got=$("$@" 2>/dev/null)
	if [[ $got == "$want" ]]; then ok "$name"; else fail "$name"; printf '    got: %s\n    want: %s\n' "$got" "$want"; fi
}

expect list "$(printf 'test_passes\ntest_skips\ntest_fails')" "$T" -l
expect list_filtered "test_skips" "$T" -l -t '*skip*'
expect nosuch "0 passed, 0 failed, 0 skipped" "$T" -t nosuch
expect one "$(printf 'ok   test_passes\n1 passed, 0 failed, 0 skipped')" "$T" -t test_passes
expect two_globs "$(printf 'ok   test_passes\nskip test_skips: nothing to run here\n1 passed, 0 failed, 1 skipped')" \
	"$T" -t test_passes -t 'test_s*'
expect all "$(printf 'ok   test_passes\nskip test_skips: nothing to run here\nok   test_fails\n2 passed, 0 failed, 1 skipped')" "$T"
if "$T" >/dev/null 2>&1; then ok exit_0; else fail exit_0; fi
out=$(XRL_TESTLIB_FAIL=1 "$T" -t test_fails 2>&1)
rc=$?
if ((rc == 1)) && grep -q '^FAIL test_fails$' <<<"$out" && grep -q 'a planted failure: 1 + 1 == 3: 2 != 3' <<<"$out" &&
	grep -Eq '^0 passed, 1 failed, 0 skipped$' <<<"$out"; then
	ok failure_labelled
else
	fail failure_labelled
	echo "$out" | sed 's/^/    /'
fi
"$T" -x >/dev/null 2>&1
if (($? == 2)); then ok bad_option; else fail bad_option; fi
# every C test binary takes the same options: each of tests/unit/ (make
# check builds them: one missing is a failure), and the BPF tests' when
# built (make all)
for b in $(basename -s .c tests/unit/test_*.c) test_prog; do
	if [[ ! -x $OUT/$b ]]; then
		[[ $b == test_prog ]] || fail "options_$b (not built)"
		continue
	fi
	n=$("$OUT/$b" -l | wc -l)
	s=$("$OUT/$b" -t nosuch-test-name)
	if ((n > 0)) && [[ $s == "0 passed, 0 failed, 0 skipped" ]]; then ok "options_$b"; else fail "options_$b"; fi
done
echo "$passed passed, $failed failed"
((failed == 0))

#!/usr/bin/env bash
# Run every test suite and close with the sum: "N passed, N failed".
# Suites: unit (metering maths) and grammar (the command table, the config
# checker, the docs against the table) and classes (the endpoint classes
# against their former algorithm), which are make check; bpf (the
# program through BPF_PROG_TEST_RUN); fuzz (the program against the reference
# model, tests/fuzz/run.sh); parsers (libFuzzer on the userspace parsers);
# alerts (promtool on the alerting rules); e2e (xdp-rlctl and xdp-rld on veth
# namespaces); then a check that nothing was left.
set -u
cd "$(dirname "$0")/.."

if [[ $(id -u) -ne 0 ]]; then
	echo "Error: the BPF and end-to-end tests need root (sudo make test)" >&2
	exit 1
fi

# The build the suites run: .output, or .output/san (make test SANITIZE=1),
# whose sanitizers stop at the first error and report leaks at exit.
export XRL_OUT=${XRL_OUT:-.output}
OUT=$XRL_OUT
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

passed=0
failed=0

# suite NAME CMD...: run it, add its closing "N passed, N failed" line
suite() {
	local name=$1 out line p f
	shift
	echo "== $name"
	out=$("$@" 2>&1)
	local rc=$?
	echo "$out" | sed 's/^/  /'
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
	if [[ -z "$line" ]]; then
		echo "  (suite $name ended without a summary, exit $rc: counted as one failure)"
		failed=$((failed + 1))
		return
	fi
	read -r p _ f _ <<<"$line"
	passed=$((passed + p))
	failed=$((failed + f))
	if ((rc != 0 && f == 0)); then
		echo "  (suite $name exited $rc: counted as one failure)"
		failed=$((failed + 1))
	fi
}

# Every lab of this run carries this prefix (tests/lib/lab.sh), so the
# leftover check counts only what this run made: another job's namespaces,
# or a container's veth on the same host, never fail the suite.
export XRL_RUN="xrlt$$-"
veths_before=$(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | sort)
pins_before=$(ls -d /sys/fs/bpf/xdp-rl* 2>/dev/null)

# What a run must never leave behind: namespaces, veths, XDP programs, pins,
# temporary directories.
leftovers() {
	local left=0 v p
	if ip netns list | grep -q "^$XRL_RUN"; then
		echo "    namespaces left: $(ip netns list | grep "^$XRL_RUN" | tr '\n' ' ')"
		left=1
	fi
	v=$(comm -13 <(echo "$veths_before") \
		<(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | sort))
	if [[ -n "$v" ]]; then
		echo "    veths left in the root namespace: $v"
		left=1
	fi
	p=$(comm -13 <(echo "$pins_before") <(ls -d /sys/fs/bpf/xdp-rl* 2>/dev/null))
	if [[ -n "$p" ]]; then
		echo "    pins left: $p"
		left=1
	fi
	if ls -d /tmp/"$XRL_RUN"* >/dev/null 2>&1; then
		echo "    temporary directories left: $(ls -d /tmp/"$XRL_RUN"*)"
		left=1
	fi
	if ((left)); then
		echo "FAIL no_leftovers"
		echo "0 passed, 1 failed"
	else
		echo "ok   no_leftovers"
		echo "1 passed, 0 failed"
	fi
}

suite unit "$OUT/test_meter"
suite grammar "$OUT/test_grammar"
suite docs tests/docs/run.sh
suite classes "$OUT/test_classes"
suite bpf "$OUT/test_prog"
suite fuzz tests/fuzz/run.sh
suite parsers tests/fuzz/parsers/run.sh
suite alerts tests/alerts/run.sh
for t in tests/e2e/test_*.sh; do
	suite "e2e $(basename "$t" .sh)" bash "$t"
done
suite leftovers leftovers

echo
echo "$passed passed, $failed failed"
((failed == 0))

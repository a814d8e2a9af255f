#!/usr/bin/env bash
# The one test runner: every suite, or the ones named, closed with the sum
# "N passed, N failed, N skipped".
#
#   tests/run.sh [-t GLOB]... [--check] [-l] [SUITE...]
#
#   -t GLOB   only the tests whose name matches GLOB (several -t: any of
#             them), in every suite chosen; a suite with no such test is
#             not started, and a GLOB that matches nothing is an error
#   --check   the suites that need no root and touch nothing (make check);
#             also what runs without root
#   -l        list the tests of the chosen suites instead of running them
#   SUITE     a suite's name (below), e2e for every end-to-end file,
#             e2e/test_X or test_X for one, or the path of a test file
#
# Suites, in their order: make check's unit (the metering maths with a fake
# clock), grammar (the command table and the config checker), classes (the
# endpoint classes against their former algorithm), docs (the docs against
# the code) and runner (this runner on fixtures, tests/runner/); then bpf (the program
# through BPF_PROG_TEST_RUN), fuzz (the program against the reference
# model), parsers (libFuzzer on the userspace parsers), alerts (promtool on
# the alerting rules), every e2e/test_*.sh (xdp-rlctl and xdp-rld on veth
# namespaces), and after them a check that nothing was left behind.
#
# A suite is one of three kinds:
#   binary  a C test binary (tests/lib/testlib.h): -l lists its tests,
#           -t GLOB chooses them
#   shell   a file of test_NAME functions on tests/lib/harness.sh: its
#           tests are the functions it defines, XRL_TESTS chooses them
#   script  a script that runs whole (docs, fuzz, parsers, alerts): it has
#           no test names to choose from, so -t leaves it out
# Each prints "ok   NAME", "FAIL NAME" or "skip NAME: why" per test and
# closes with "N passed, N failed[, N skipped]"; a suite that ends without
# that line, or exits non-zero with no failure counted, counts one failure.
set -u
cd "$(dirname "$0")/.." || exit 1

usage() {
	sed -n '5,14s/^# \{0,1\}//p' "$0"
}

GLOBS=()
CHECK_ONLY=0
LIST=0
NAMES=()
while (($#)); do
	case $1 in
	-t) [[ $# -ge 2 ]] || { echo "Error: -t needs a GLOB" >&2; exit 2; }
		GLOBS+=("$2"); shift 2 ;;
	-t?*) GLOBS+=("${1#-t}"); shift ;;
	--check) CHECK_ONLY=1; shift ;;
	-l) LIST=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; NAMES+=("$@"); break ;;
	-*) echo "Error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) NAMES+=("$1"); shift ;;
	esac
done

IS_ROOT=0
[[ $(id -u) -eq 0 ]] && IS_ROOT=1

# The build the suites run: .output, or .output/san (make test SANITIZE=1),
# whose sanitizers stop at the first error and report leaks at exit.
export XRL_OUT=${XRL_OUT:-.output}
OUT=$XRL_OUT
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# the tests chosen, for the shell suites (tests/lib/harness.sh)
export XRL_TESTS="${GLOBS[*]}"
unset ONLY

# ---- the suites: NAME KIND ROOT CHECK PATH ----
# ROOT: needs root; CHECK: one of make check's
SUITES=(
	"unit     binary 0 1 $OUT/test_meter"
	"grammar  binary 0 1 $OUT/test_grammar"
	"classes  binary 0 1 $OUT/test_classes"
	"deciders binary 0 1 $OUT/test_deciders"
	"kernel   binary 0 1 $OUT/test_kernel"
	"pcapw    binary 0 1 $OUT/test_pcapw"
	"sets     binary 0 1 $OUT/test_setfile"
	"suggest  binary 0 1 $OUT/test_suggest"
	"docs     script 0 1 tests/docs/run.sh"
	"runner   shell  0 1 tests/runner/run.sh"
	"testlib  script 0 1 tests/lib/test_testlib.sh"
	"layers   script 0 1 tests/layers/run.sh"
	"bpf      binary 1 0 $OUT/test_prog"
	"fuzz     script 1 0 tests/fuzz/run.sh"
	"parsers  script 0 0 tests/fuzz/parsers/run.sh"
	"alerts   script 0 0 tests/alerts/run.sh"
)
for f in tests/e2e/test_*.sh; do
	SUITES+=("e2e/$(basename "$f" .sh) shell 1 0 $f")
done

# a suite named by the path of a file (the runner's own fixtures, a test
# being written): a shell file if it defines test_ functions, a script if
# it is another .sh, a binary otherwise
suite_of_path() {
	local f=$1 kind=binary
	if [[ $f == *.sh ]]; then
		kind=script
		grep -qE '^test_[a-z0-9_]*\(\)' "$f" && kind=shell
	fi
	echo "$f $kind 0 0 $f"
}

# ---- what to run ----
CHOSEN=()
choose() {	# NAME: the suites it stands for, or false
	local s n found=1 want=$1
	want=${want%.sh}
	want=${want#tests/}
	[[ $want == test_* ]] && want="e2e/$want"
	for s in "${SUITES[@]}"; do
		n=${s%% *}
		if [[ $n == "$want" || ($want == e2e && $n == e2e/*) ]]; then
			CHOSEN+=("$s")
			found=0
		fi
	done
	return $found
}

if ((${#NAMES[@]})); then
	for n in "${NAMES[@]}"; do
		if choose "$n"; then
			:
		elif [[ -f $n ]]; then
			CHOSEN+=("$(suite_of_path "$n")")
		else
			echo "Error: no suite '$n' (suites: $(for s in "${SUITES[@]}"; do
				printf '%s ' "${s%% *}"; done)e2e)" >&2
			exit 2
		fi
	done
else
	for s in "${SUITES[@]}"; do
		read -r _ _ _ c _ <<<"$s"
		((c || !CHECK_ONLY)) && CHOSEN+=("$s")
	done
	((!CHECK_ONLY && !IS_ROOT && !LIST)) &&
		echo "(not root: the suites that need root are skipped, and counted so; sudo make test runs them all)"
fi

# ---- the tally: the one place that reads a suite's closing line ----
PASSED=0
FAILED=0
SKIPPED=0

# tally NAME RC OUTPUT: add the suite's closing line to the sums
tally() {
	local name=$1 rc=$2 line p f s nf
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' <<<"$3" | tail -n 1)
	if [[ -z $line ]]; then
		echo "  (suite $name ended without a summary, exit $rc: counted as one failure)"
		FAILED=$((FAILED + 1))
		return
	fi
	p=${line%% passed*}
	f=${line#* passed, }
	f=${f%% failed*}
	s=0
	[[ $line == *skipped ]] && { s=${line##*failed, }; s=${s%% skipped}; }
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	SKIPPED=$((SKIPPED + s))
	# a closing line that counts fewer failures than the suite said
	nf=$(grep -c '^FAIL ' <<<"$3")
	if ((nf > f)); then
		echo "  (suite $name said FAIL $nf times but counted $f: counted as $nf)"
		FAILED=$((FAILED + nf - f))
	fi
	if ((rc != 0 && f == 0)); then
		echo "  (suite $name exited $rc: counted as one failure)"
		FAILED=$((FAILED + 1))
	fi
}

# matches NAME: whether a -t glob matches it (every name, without -t);
# each glob that matched a name is remembered in MATCHED
declare -A MATCHED=()
matches() {
	local g hit=1
	((${#GLOBS[@]})) || return 0
	for g in "${GLOBS[@]}"; do
		# shellcheck disable=SC2053 # $g is a glob, matched as one
		[[ $1 == $g ]] && { MATCHED[$g]=1; hit=0; }
	done
	return $hit
}

# any_match: whether a -t glob matches a name of LISTING (each checked, so
# that MATCHED learns every glob that matches)
any_match() {
	local n any=1
	while IFS= read -r n; do
		[[ -n $n ]] && matches "$n" && any=0
	done <<<"$LISTING"
	return $any
}

LISTING=
# names KIND PATH: the suite's test names, one a line, in LISTING; false
# when the suite cannot tell them
names() {
	local rc
	case $1 in
	shell)
		LISTING=$(grep -oE '^test_[a-z0-9_]*\(\)' "$2" | tr -d '()')
		;;
	binary)
		LISTING=$("$2" -l 2>&1)
		rc=$?
		# a binary that does not know -l ran its tests instead: what it
		# printed is its result, and there is no list
		if ((rc != 0)) || grep -qE '^[0-9]+ passed, [0-9]+ failed' <<<"$LISTING"; then
			return 1
		fi
		;;
	*) return 1 ;;
	esac
}

WORK=$(mktemp -d "/tmp/xrl-runner.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT

# run_suite NAME CMD...: run it, its output indented as it comes, and tally
run_suite() {
	local name=$1 rc t0=$SECONDS
	shift
	echo "== $name"
	"$@" 2>&1 | tee "$WORK/out" | sed -u 's/^/  /'
	rc=${PIPESTATUS[0]}
	((SECONDS - t0 >= 5)) && echo "  ($name: $((SECONDS - t0)) s)"
	tally "$name" "$rc" "$(cat "$WORK/out")"
}

# suite_fail NAME WHY: a suite that could not run as asked, one failure
suite_fail() {
	echo "== $1"
	echo "  $2"
	echo "FAIL $1"
	FAILED=$((FAILED + 1))
	STARTED=$((STARTED + 1))
}

# suite NAME KIND ROOT CHECK PATH: run one suite, the tests -t chose
STARTED=0	# suites started (or skipped for want of root)
ROOT_STARTED=0	# suites started that need root
LEFT_OUT=()	# scripts that -t left out
suite() {
	local name=$1 kind=$2 root=$3 path=$5 n any
	local -a args=()
	local noroot=$((root && (!IS_ROOT || CHECK_ONLY)))
	# a shell file's names are read from it, a binary's from its -l: no
	# root needed, so that a suite without a match is never started (nor
	# said skipped for want of root)
	if ((${#GLOBS[@]})) && [[ $kind == shell || ($kind == binary && -e $path) ]]; then
		if names "$kind" "$path"; then
			any_match || return 0
		elif [[ $kind == binary ]]; then
			# a binary that cannot list cannot be aimed: a defect
			suite_fail "$name" "$path does not list its tests (-l): -t cannot choose among them"
			return
		fi
	fi
	if ((noroot)); then
		if ((LIST)) && [[ $kind == shell ]]; then
			:
		elif ((LIST)); then
			echo "$name (needs root)"
			return
		else
			echo "== $name"
			echo "skip $name: needs root"
			SKIPPED=$((SKIPPED + 1))
			STARTED=$((STARTED + 1))
			return
		fi
	fi
	if [[ $kind != script && ! -e $path ]]; then
		suite_fail "$name" "$path is not built (make all)"
		return
	fi
	if ((LIST)); then
		if names "$kind" "$path"; then
			while IFS= read -r n; do
				matches "$n" && echo "$name $n"
			done <<<"$LISTING"
		elif ((!${#GLOBS[@]})); then
			# (under -t it would not run)
			echo "$name (no list: runs whole)"
		fi
		return
	fi
	if ((${#GLOBS[@]})) && [[ $kind == script ]]; then
		LEFT_OUT+=("$name")
		return
	fi
	for n in "${GLOBS[@]}"; do
		args+=(-t "$n")
	done
	STARTED=$((STARTED + 1))
	((root)) && ROOT_STARTED=1
	case $kind in
	binary)
		run_suite "$name" "$path" "${args[@]}"
		# its list named a test that -t chose: running none of them is
		# a disagreement between the list and the selection
		if ((${#GLOBS[@]})) && grep -qx '0 passed, 0 failed, 0 skipped' "$WORK/out"; then
			echo "  (suite $name ran no test although its list has one -t chose: counted as one failure)"
			FAILED=$((FAILED + 1))
		fi
		;;
	shell) run_suite "$name" bash "$path" ;;
	script) run_suite "$name" "$path" ;;
	esac
}

# ---- what a run must never leave behind ----
# Every lab of this run carries this prefix (tests/lib/lab.sh), so the
# leftover check counts only the namespaces this run made; veths in the root
# namespace and pins under /sys/fs/bpf/xdp-rl* are compared before and
# after, so another job's made meanwhile can fail a run (never pass one).
export XRL_RUN="${XRL_RUN:-xrl}t$$-"
ROOT_CHOSEN=0
for s in "${CHOSEN[@]}"; do
	read -r _ _ r _ _ <<<"$s"
	((r && IS_ROOT && !CHECK_ONLY)) && ROOT_CHOSEN=1
done
if ((ROOT_CHOSEN && !LIST)); then
	veths_before=$(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | sort)
	pins_before=$(ls -d /sys/fs/bpf/xdp-rl* 2>/dev/null)
fi

# namespaces, veths, pins, temporary directories
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

for s in "${CHOSEN[@]}"; do
	# shellcheck disable=SC2086 # the fields of the suite's line
	suite $s
done
((LIST)) && exit 0
((ROOT_STARTED)) && run_suite leftovers leftovers

echo
((${#LEFT_OUT[@]})) && echo "(not run, having no test names for -t: ${LEFT_OUT[*]})"
if ((${#GLOBS[@]} && !STARTED)); then
	# a mistyped name must not pass for a run
	echo "Error: no test matches -t ${GLOBS[*]}"
	exit 1
fi
for g in "${GLOBS[@]}"; do
	# nor one mistyped name among several
	if [[ -z ${MATCHED[$g]:-} ]]; then
		echo "Error: no test matches -t $g"
		exit 1
	fi
done
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
((FAILED == 0))

#!/usr/bin/env bash
# Two builds of the program side by side in one run: the verifier's
# processed-instruction count of each program of the object, then the
# micro-benchmark of each build, run alternately (before, after, after,
# before, ...) RUNS times; per case the median of the runs' medians, the
# least of their minima, and the ratio after / before. Markdown on stdout.
# On a shared machine the medians carry the other jobs' load; the least is
# the cost of the program without them.
#   tests/bench/side_by_side.sh BEFORE_OUTPUT AFTER_OUTPUT [RUNS]
# BEFORE_OUTPUT and AFTER_OUTPUT are the .output directories of two built
# trees (make all): each holds xdp_rl.bpf.o, microbench and verifier-stats.
# Needs root (BPF_PROG_TEST_RUN); attaches nothing.
set -eu
if (($# < 2)); then
	echo "usage: $0 BEFORE_OUTPUT AFTER_OUTPUT [RUNS]" >&2
	exit 2
fi
before=$1 after=$2 runs=${3:-6}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/${XRL_RUN:-}side-by-side.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

stats=$after/verifier-stats
"$stats" "$before/xdp_rl.bpf.o" >"$tmp/vs.before"
"$stats" "$after/xdp_rl.bpf.o" >"$tmp/vs.after"
# ABBA: each build runs first in half the pairs, so that neither gains
# from its place in the order
for ((i = 1; i <= runs; i++)); do
	if ((i % 2)); then
		"$before/microbench" -j >"$tmp/mb.before.$i"
		"$after/microbench" -j >"$tmp/mb.after.$i"
	else
		"$after/microbench" -j >"$tmp/mb.after.$i"
		"$before/microbench" -j >"$tmp/mb.before.$i"
	fi
done

python3 - "$tmp" "$runs" <<'PY'
import json, re, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])

def insns(path):
    out = {}
    for line in open(path):
        m = re.match(r'(\S+) processed (\d+) insns', line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out

vb, va = insns(tmp + '/vs.before'), insns(tmp + '/vs.after')
print('| program | processed insns before | after | after / before |')
print('|---|---:|---:|---:|')
for p in vb:
    print('| %s | %d | %d | %.3f |' % (p, vb[p], va.get(p, 0), va.get(p, 0) / vb[p]))
print()

def bench(side):
    med, mins, order = {}, {}, []
    for i in range(1, runs + 1):
        for c in json.load(open('%s/mb.%s.%d' % (tmp, side, i))):
            if c['case'] not in med:
                order.append(c['case'])
            med.setdefault(c['case'], []).append(c['ns_median'])
            mins.setdefault(c['case'], []).append(c['ns_min'])
    return order, {k: statistics.median(v) for k, v in med.items()}, {k: min(v) for k, v in mins.items()}

order, mb, nb = bench('before')
_, ma, na = bench('after')
print('| case | ns/packet before (median) | after | after / before | least before | least after | after / before |')
print('|---|---:|---:|---:|---:|---:|---:|')
for c in order:
    print('| %s | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f |' %
          (c, mb[c], ma.get(c, 0), ma.get(c, 0) / mb[c], nb[c], na.get(c, 0), na.get(c, 0) / nb[c]))
rl = [c for c in order if c in ma and not c.startswith('bare') and c != 'parse only']
one = [c for c in rl if not c.startswith('two CPUs')]
for name, cs in (('xdp-rl cases on one CPU', one), ('every xdp-rl case', rl)):
    lr = [na[c] / nb[c] for c in cs]
    mr = [ma[c] / mb[c] for c in cs]
    print('%s, after / before: least %.3f (range %.3f .. %.3f), median %.3f (range %.3f .. %.3f)' %
          (name, statistics.median(lr), min(lr), max(lr), statistics.median(mr), min(mr), max(mr)))
print()
print('%d runs of each build, alternately, %s rounds each.' % (runs, 'five'))
PY

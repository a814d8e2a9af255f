// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * microbench: the per-packet cost of the xdp-rl program through
 * BPF_PROG_TEST_RUN with repeat, next to a bare XDP_DROP program and the
 * parser alone, measured in the same run, rounds interleaved (A B C ... A B
 * C ...), median reported. A ratio is the claim; the nanoseconds depend on
 * the machine.
 *   microbench [-n REPEAT] [-r ROUNDS] [-j]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pkt.h"
#include "grammar.h"
#include "libxrl.h"
#include "xrl_test_progs.skel.h"

struct bcase {
	const char *name;
	int prog;		/* 0: xdp-rl, 1: XDP_DROP, 2: parse only */
	struct pkt_spec spec;
	double ns[64];
};

static int add_rule(struct xrl *x, struct xrl_rule_entry *v, size_t *n, const char *line)
{
	struct xrl_parse_err e;
	struct xrl_cmd c;

	(void)x;
	if (xrl_cmd_parse_line(line, XRL_IN_CLI, &c, &e)) {
		fprintf(stderr, "Error: %s: %s\n", line, e.msg);
		return -1;
	}
	v[(*n)++] = c.rule;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const uint8_t ext[] = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS };
	struct bcase cases[] = {
		{ "bare XDP_DROP", 1, { .src = "198.18.0.1", .payload = 18 } },
		{ "parse only", 2, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl steady hit, passed", 0, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl steady hit, dropped", 0, { .src = "198.18.1.1", .payload = 18 } },
		{ "xdp-rl IPv6 /64 hit", 0, { .src = "2001:db8::1", .payload = 18 } },
		{ "xdp-rl IPv6 ext headers", 0, { .src = "2001:db8::1", .ext = ext, .next_ext = 2, .payload = 18 } },
		{ "xdp-rl QinQ-tagged hit", 0, { .src = "198.18.0.1", .vlans = 2, .payload = 18 } },
		{ "xdp-rl allow rule", 0, { .src = "198.18.2.1", .payload = 18 } },
		{ "xdp-rl unmatched", 0, { .src = "203.0.113.1", .payload = 18 } },
	};
	const size_t ncases = sizeof(cases) / sizeof(cases[0]);
	struct xrl_open_opts o = { .no_pin = true, .keys = 4096, .test_clock = getenv("XRL_BENCH_TEST_CLOCK") != NULL };
	struct xrl_rule_entry v[8];
	struct xrl_test_progs *ref;
	int repeat = 1000000, rounds = 5, opt, fds[3];
	bool json = false;
	struct xrl *x;
	size_t n = 0;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:r:j")) != -1) {
		switch (opt) {
		case 'n': repeat = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'j': json = true; break;
		default:
			fprintf(stderr, "usage: microbench [-n REPEAT] [-r ROUNDS<=64] [-j]\n");
			return 2;
		}
	}
	if (repeat < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: microbench [-n REPEAT] [-r ROUNDS<=64] [-j]\n");
		return 2;
	}
	libbpf_set_print(NULL);
	/* one CPU for every case */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);

	if (xrl_open(&o, &x)) {
		fprintf(stderr, "Error: %s\n", xrl_errmsg());
		return 1;
	}
	ref = xrl_test_progs__open_and_load();
	if (!ref) {
		fprintf(stderr, "Error: cannot load the reference programs\n");
		return 1;
	}
	if (add_rule(x, v, &n, "rule add 198.18.0.0/24 rate 100000000/s burst 4000000000") ||
	    add_rule(x, v, &n, "rule add 198.18.1.0/24 rate 1/h burst 1") ||
	    add_rule(x, v, &n, "rule add 198.18.2.0/24 action allow") ||
	    add_rule(x, v, &n, "rule add 2001:db8::/32 rate 100000000/s burst 4000000000") ||
	    xrl_rules_commit(x, v, n)) {
		fprintf(stderr, "Error: %s\n", xrl_errmsg());
		return 1;
	}
	fds[0] = xrl_prog_fd(x);
	fds[1] = bpf_program__fd(ref->progs.xdp_drop_all);
	fds[2] = bpf_program__fd(ref->progs.xdp_parse_only);

	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < ncases; i++) {
			uint8_t buf[512];
			size_t len = pkt_build(buf, &cases[i].spec);
			LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = buf, .data_size_in = len,
				    .repeat = repeat);

			if (bpf_prog_test_run_opts(fds[cases[i].prog], &t)) {
				fprintf(stderr, "Error: test run: %s\n", strerror(errno));
				return 1;
			}
			cases[i].ns[r] = t.duration;
		}
	}

	double floor_ns = 0;

	for (size_t i = 0; i < ncases; i++)
		qsort(cases[i].ns, rounds, sizeof(double), cmp_d);
	floor_ns = cases[0].ns[rounds / 2];
	if (json)
		printf("[\n");
	else
		printf("| case | ns/packet (median) | min | max | × bare XDP_DROP |\n|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < ncases; i++) {
		double med = cases[i].ns[rounds / 2];

		if (json)
			printf("  {\"case\": \"%s\", \"ns_median\": %.1f, \"ns_min\": %.1f, \"ns_max\": %.1f, \"ratio_to_xdp_drop\": %.2f}%s\n",
			       cases[i].name, med, cases[i].ns[0], cases[i].ns[rounds - 1],
			       med / floor_ns, i + 1 < ncases ? "," : "");
		else
			printf("| %s | %.0f | %.0f | %.0f | %.2f |\n", cases[i].name, med,
			       cases[i].ns[0], cases[i].ns[rounds - 1], med / floor_ns);
	}
	if (json)
		printf("]\n");
	xrl_test_progs__destroy(ref);
	xrl_close(x);
	return 0;
}

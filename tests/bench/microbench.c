// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * microbench: the per-packet cost of the xdp-rl program through
 * BPF_PROG_TEST_RUN with repeat, next to a bare XDP_DROP program and the
 * parser alone, measured in the same run, rounds interleaved (A B C ... A B
 * C ...), median reported. A ratio is the claim; the nanoseconds depend on
 * the machine.
 *   microbench [-n REPEAT] [-r ROUNDS] [-j] [-s]
 * -s adds cases run while this process holds the kernel's BPF run-time
 * statistics enabled (a BPF_STATS_RUN_TIME fd, opened before the case and
 * closed after it, so the other cases of the same round run without): the
 * cost xdp-rld's metrics put on every packet. BPF_PROG_TEST_RUN goes
 * through the same accounting as the live path; that it counted is checked
 * against the program's run_cnt.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <pthread.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pkt.h"
#include "text/grammar.h"
#include "libxrl.h"
#include "fleet/fleet.h"
#include "xrl_meter.h"
#include "xrl_test_progs.skel.h"

struct bcase {
	const char *name;
	int prog;		/* 0: xdp-rl, 1: XDP_DROP, 2: parse only,
				 * 3: xdp-rl with an endpoint rule (UDP/5353),
				 * 4: xdp-rl with a capture of another source,
				 * 5: xdp-rl with a capture of every packet,
				 * 6: a deny set of 16 prefixes, 7: of 1000000,
				 * 8: 8 deny sets of 16 (the last one holds it),
				 * 9: xdp-rl with 64 bans per family,
				 * 10: the floor of an exact metered pass (parse,
				 * an LPM look-up, the shared bucket's CAS),
				 * 11: the same floor without the LPM look-up,
				 * 12: per-CPU buckets (not exact),
				 * 13: parse and one read of the clock */
	struct pkt_spec spec;
	uint16_t dport;		/* UDP destination port; 0: 53 */
	bool stats;		/* run with run-time statistics enabled */
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

/*
 * A set of n prefixes, IPv4 and IPv6 of random lengths (IPv4 /12 .. /32
 * outside 198.0.0.0/8, IPv6 /24 .. /128 in 2400::/6), plus `extra`; and
 * the rule "rule add @NAME action deny" after the first n16 rules of v.
 */
static int set_setup(struct xrl *x, const char *name, size_t n, const char *extra)
{
	struct xrl_set_list l = {};
	__u64 r = 0x9e3779b97f4a7c15ULL;
	int err;

	for (size_t i = 0; i < n; i++) {
		struct xrl_set_item it = {};
		__u64 a, b;

		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		a = r;
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		b = r;
		it.family = i % 3 ? 4 : 6;
		if (it.family == 4) {
			it.prefix_len = 12 + a % 21;
			memcpy(it.addr, &b, 4);
			it.addr[0] = 1 + it.addr[0] % 190;	/* never 198.x */
		} else {
			it.prefix_len = 24 + a % 105;
			memcpy(it.addr, &a, 8);
			memcpy(it.addr + 8, &b, 8);
			it.addr[0] = 0x24 | (it.addr[0] & 3);
		}
		for (int k = 0; k < 16; k++) {
			int bits = it.prefix_len - 8 * k;

			it.addr[k] &= bits >= 8 ? 0xff : bits <= 0 ? 0 : (__u8)(0xff << (8 - bits));
		}
		if (xrl_set_list_push(&l, &it))
			return -ENOMEM;
	}
	err = extra ? xrl_set_elem_parse(extra, &l) : 0;
	if (!err)
		err = xrl_set_load(x, name, &l, NULL);
	xrl_set_list_free(&l);
	return err;
}

/* The fleet rules as a daemon of one host leaves them: the share written,
 * the key of 198.18.4.1 promoted with a lease that lasts the run. */
static int fleet_setup(struct xrl *x)
{
	struct xrl_rule_entry *v;
	struct xrl_lease *l = xrl_fleet_leases(x);
	size_t n;
	int err = l ? 0 : -ENOMEM;

	if (err || (err = xrl_rules_get(x, &v, &n)))
		return err;
	for (size_t i = 0; i < n && !err; i++) {
		struct xrl_fleet_rule fr = { .interval = v[i].r.interval, .limit = v[i].r.limit,
					     .hosts = 1, .state = XRL_FLEET_SYNCED, .rule_id = v[i].r.id };
		struct xrl_key k;
		__u8 a[16] = { 198, 18, 10, 1 };

		if (v[i].r.scope != XRL_SCOPE_FLEET)
			continue;
		err = xrl_fleet_rule_put(x, v[i].r.slot, &fr);
		if (!err && v[i].prefix_len == 24 && v[i].addr[2] == 10) {
			l[0].credit = 1ULL << 62;
			l[0].expires_ns = xrl_now_ns(x) + 3600 * XRL_NSEC_PER_SEC;
			xrl_key_of(&k, &v[i].r, 4, a);
			err = xrl_fleet_key_put(x, &k, 0);
		}
	}
	free(v);
	return err;
}

/*
 * Two CPUs at once: one thread a CPU, each running its own source (its own
 * key, so that only the aggregate is shared) through the program together.
 * What an aggregate far from its limit costs when every CPU meters it: taken
 * in chunks; and, for the trap that chunks avoid, one key metered by both
 * (its bucket one cache line, written by both CPUs for every packet).
 */
struct two_arg {
	int fd, cpu, repeat;
	uint8_t buf[512];
	size_t len;
	double ns;
	int verdict;
	pthread_barrier_t *bar;
};

static void *two_run(void *p)
{
	struct two_arg *a = p;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = a->buf, .data_size_in = a->len,
		    .repeat = a->repeat);
	pthread_barrier_wait(a->bar);
	a->ns = bpf_prog_test_run_opts(a->fd, &t) ? -1.0 : (double)t.duration;
	a->verdict = t.retval;
	return NULL;
}

/* 64 bans per family, among them the banned cases' prefixes */
static int bans_setup(struct xrl *x)
{
	for (int i = 0; i < 64; i++) {
		struct xrl_ban_spec s = { .family = 4, .prefix_len = 24, .duration_s = 3600,
					  .origin = XRL_BAN_OPERATOR };
		struct xrl_ban_spec s6 = { .family = 6, .prefix_len = 48, .duration_s = 3600,
					   .origin = XRL_BAN_OPERATOR };

		s.addr[0] = 198;
		s.addr[1] = 51;
		s.addr[2] = i;
		if (i == 0)	/* the case's */
			s.addr[1] = 18, s.addr[2] = 15;
		s6.addr[0] = 0x20, s6.addr[1] = 0x01, s6.addr[2] = 0x0d, s6.addr[3] = 0xb8;
		s6.addr[4] = i ? 0x10 : 0x0b, s6.addr[5] = i ? i : 0xad;
		if (xrl_ban_add(x, &s, NULL) || xrl_ban_add(x, &s6, NULL))
			return -1;
	}
	return 0;
}

/* ns a packet on each CPU, both CPUs running the case at once: their mean */
static double two_cpus(int fd, const char *const src[2], int repeat)
{
	pthread_barrier_t bar;
	struct two_arg a[2];
	pthread_t th[2];
	double ns = 0;

	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++) {
		struct pkt_spec sp = { .src = src[i], .payload = 18 };

		a[i] = (struct two_arg){ .fd = fd, .cpu = i, .repeat = repeat, .bar = &bar };
		a[i].len = pkt_build(a[i].buf, &sp);
		pthread_create(&th[i], NULL, two_run, &a[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		if (a[i].ns < 0 || a[i].verdict != XDP_PASS)
			return -1;
		ns += a[i].ns / 2;
	}
	pthread_barrier_destroy(&bar);
	return ns;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int capture_cb(const struct xrl_capture_pkt *p, void *ctx)
{
	(void)p;
	(void)ctx;
	return 0;
}

/*
 * Answers: a DNS query (bench.test A) answered in place, against a bare
 * XDP_TX of the same frame. With repeat, BPF_PROG_TEST_RUN runs the program
 * again and again on one buffer, which the first answer has rewritten into
 * a response (never answered: a response is dropped). So each run is a
 * call of its own (repeat 1): the kernel copies the query in afresh, and
 * times the one run. The calls are paced under the host's answer cap
 * (XRL_SLIP_CAP_RATE a second, in groups of ten), which would otherwise
 * refuse most of them.
 * A call of repeat 1 also times the timer: bare XDP_DROP is measured the
 * same way, as the floor of this table.
 */
#define ANSWER_CALLS	300
static size_t dns_query(uint8_t *buf)
{
	static const uint8_t q[] = { 0x42, 0x42, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
				     5, 'b', 'e', 'n', 'c', 'h', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };
	struct pkt_spec sp = { .src = "198.18.0.1", .payload = sizeof(q) };
	size_t len = pkt_build(buf, &sp);

	buf[36] = 0, buf[37] = 53;		/* IPv4, untagged: UDP at 34 */
	buf[40] = 0, buf[41] = 0;		/* no UDP checksum */
	memcpy(buf + 42, q, sizeof(q));
	return len;
}

/* the median ns of ANSWER_CALLS calls of repeat 1; -1 if one did not end in
 * want (XDP_TX for an answer) */
static double answer_calls(int fd, __u32 want)
{
	double ns[ANSWER_CALLS];
	uint8_t buf[512];
	size_t len = dns_query(buf);

	for (int i = 0; i < ANSWER_CALLS; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = buf, .data_size_in = len, .repeat = 1);

		if (bpf_prog_test_run_opts(fd, &t) || t.retval != want)
			return -1;
		ns[i] = t.duration;
		/* in groups of ten back to back (warm), under the cap on average */
		if (i % 10 == 9)
			usleep(10 * (1000000 / XRL_SLIP_CAP_RATE) + 100);
	}
	qsort(ns, ANSWER_CALLS, sizeof(double), cmp_d);
	return ns[ANSWER_CALLS / 2];
}

int main(int argc, char **argv)
{
	static const uint8_t ext[] = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS };
	struct bcase cases[] = {
		{ "bare XDP_DROP", 1, { .src = "198.18.0.1", .payload = 18 } },
		{ "parse only", 2, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl steady hit, passed", 0, { .src = "198.18.0.1", .payload = 18 } },
		{ "parse and one read of the clock (every meter's least), passed", 13, { .src = "198.18.0.1", .payload = 18 } },
		{ "floor of an exact metered pass: parse, LPM, shared bucket, passed", 10, { .src = "198.18.0.1", .payload = 18 } },
		{ "floor of an exact metered pass without the LPM look-up, passed", 11, { .src = "198.18.0.1", .payload = 18 } },
		{ "per-CPU buckets, no look-up but an array's (not exact), passed", 12, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl steady hit, dropped", 0, { .src = "198.18.1.1", .payload = 18 } },
		{ "xdp-rl IPv6 /64 hit", 0, { .src = "2001:db8::1", .payload = 18 } },
		{ "xdp-rl IPv6 ext headers", 0, { .src = "2001:db8::1", .ext = ext, .next_ext = 2, .payload = 18 } },
		{ "xdp-rl QinQ-tagged hit", 0, { .src = "198.18.0.1", .vlans = 2, .payload = 18 } },
		{ "xdp-rl allow rule", 0, { .src = "198.18.2.1", .payload = 18 } },
		{ "xdp-rl unmatched", 0, { .src = "203.0.113.1", .payload = 18 } },
		/* each algorithm, steady hit passed and dropped; a byte rate */
		{ "xdp-rl fixed-window, passed", 0, { .src = "198.18.3.1", .payload = 18 } },
		{ "xdp-rl fixed-window, dropped", 0, { .src = "198.18.4.1", .payload = 18 } },
		{ "xdp-rl sliding-window, passed", 0, { .src = "198.18.5.1", .payload = 18 } },
		{ "xdp-rl sliding-window, dropped", 0, { .src = "198.18.6.1", .payload = 18 } },
		{ "xdp-rl token bucket in bytes, passed", 0, { .src = "198.18.7.1", .payload = 18 } },
		{ "xdp-rl token bucket in bytes, dropped", 0, { .src = "198.18.12.1", .payload = 18 } },
		{ "xdp-rl dry-run rule, would-drop", 0, { .src = "198.18.8.1", .payload = 18 } },
		/* a burst refilled within two ticks: the precise clock */
		{ "xdp-rl precise clock (burst < 2 ticks of rate), passed", 0, { .src = "198.18.13.1", .payload = 18 } },
		{ "xdp-rl precise clock (burst < 2 ticks of rate), dropped", 0, { .src = "198.18.14.1", .payload = 18 } },
		/* endpoint rules: none on the packet's port (one array look-up
		 * more than with no endpoint rule at all), and a hit */
		{ "xdp-rl steady hit, endpoint rules but none on its port", 3, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl steady hit + endpoint rule hit", 3, { .src = "198.18.0.1", .payload = 18 }, .dport = 5353 },
		{ "xdp-rl steady hit + endpoint rule hit, dropped", 3, { .src = "198.18.0.1", .payload = 18 }, .dport = 5354 },
		/* the source rule refuses; the endpoint rule of its port would
		 * admit: the source's cached drop, after the peek at the
		 * endpoint rule's bucket (epfirst.h) */
		{ "xdp-rl source rule refuses, endpoint rule of its port admits, dropped", 3, { .src = "198.18.1.1", .payload = 18 }, .dport = 5353 },
		{ "xdp-rl fleet rule, local share", 0, { .src = "198.18.9.1", .payload = 18 } },
		{ "xdp-rl fleet rule, leased key", 0, { .src = "198.18.10.1", .payload = 18 } },
		{ "xdp-rl aggregate far from its limit, passed", 0, { .src = "198.18.11.1", .payload = 18 } },
		/* bans: an operator's (a /24 of 64 bans), a rule's (one look-up
		 * more: is the source allowed?); compare with the hot-key
		 * cache's cached drop ("steady hit, dropped") */
		{ "xdp-rl banned source (operator ban), dropped", 9, { .src = "198.18.15.1", .payload = 18 } },
		{ "xdp-rl banned source (a rule's ban), dropped", 9, { .src = "198.18.16.1", .payload = 18 } },
		{ "xdp-rl banned IPv6 source (operator ban /48), dropped", 9, { .src = "2001:db8:bad::1", .payload = 18 } },
		{ "xdp-rl steady hit, passed, 64 bans in the table (not its)", 9, { .src = "198.18.0.1", .payload = 18 } },
		/* a capture running: its filter refuses the packet; it takes
		 * it, over the rate cap (a flood: left out, counted) */
		{ "xdp-rl steady hit, dropped, capture on (another source)", 4, { .src = "198.18.1.1", .payload = 18 } },
		{ "xdp-rl steady hit, dropped, capture on (matched, over its rate cap)", 5, { .src = "198.18.1.1", .payload = 18 } },
		{ "xdp-rl steady hit, passed, capture on (matched, over its rate cap)", 5, { .src = "198.18.0.1", .payload = 18 } },
		/* -s only: these last */
		/* sets: a deny set of 16 prefixes, of a million, the eighth of
		 * eight sets; a source outside them goes on to the prefix rules */
		{ "xdp-rl deny prefix rule (16 prefix rules)", 0, { .src = "198.18.17.1", .payload = 18 } },
		{ "xdp-rl deny set of 16 prefixes, in it", 6, { .src = "198.18.17.1", .payload = 18 } },
		{ "xdp-rl deny set of 1000000 prefixes, in it", 7, { .src = "198.18.17.1", .payload = 18 } },
		{ "xdp-rl set of 1000000 (333333 IPv6), IPv6 not in it: /64 hit, passed", 7, { .src = "2001:db8::1", .payload = 18 } },
		{ "xdp-rl set of 16, not in it: steady hit, passed", 6, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl set of 1000000, not in it: steady hit, passed", 7, { .src = "198.18.0.1", .payload = 18 } },
		{ "xdp-rl 8 sets of 16, in the 8th", 8, { .src = "198.18.17.1", .payload = 18 } },
		{ "xdp-rl 8 sets of 16, in none: steady hit, passed", 8, { .src = "198.18.0.1", .payload = 18 } },
		{ "bare XDP_DROP, run-time stats on", 1, { .src = "198.18.0.1", .payload = 18 }, true },
		{ "xdp-rl steady hit, passed, run-time stats on", 0, { .src = "198.18.0.1", .payload = 18 }, true },
	};
	size_t ncases = sizeof(cases) / sizeof(cases[0]) - 2;
	bool counted = true;
	struct xrl_open_opts o = { .no_pin = true, .keys = 4096, .test_clock = getenv("XRL_BENCH_TEST_CLOCK") != NULL };
	struct xrl_rule_entry v[32];
	struct xrl_test_progs *ref;
	int repeat = 1000000, rounds = 5, opt, fds[14];
	bool json = false, with_stats = false;
	struct xrl *x, *xe, *xc[2], *xs[3], *xb;
	struct xrl_capture_run *cap[2];
	size_t n = 0, nsrc, n16;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "n:r:js")) != -1) {
		switch (opt) {
		case 'n': repeat = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'j': json = true; break;
		case 's': with_stats = true; break;
		default:
			fprintf(stderr, "usage: microbench [-n REPEAT] [-r ROUNDS<=64] [-j] [-s]\n");
			return 2;
		}
	}
	if (repeat < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: microbench [-n REPEAT] [-r ROUNDS<=64] [-j] [-s]\n");
		return 2;
	}
	if (with_stats) {
		FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
		int v = 0;

		ncases += 2;
		if (f && fscanf(f, "%d", &v) == 1 && v)
			fprintf(stderr, "Warning: kernel.bpf_stats_enabled is 1: every case runs with run-time statistics\n");
		if (f)
			fclose(f);
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
	    add_rule(x, v, &n, "rule add 198.18.11.0/24 rate 100000000/s burst 4000000000 aggregate 100000000/s burst 4000000000") ||
	    add_rule(x, v, &n, "rule add 2001:db8::/32 rate 100000000/s burst 4000000000") ||
	    add_rule(x, v, &n, "rule add 198.18.3.0/24 rate 4294967295/h algo fixed-window") ||
	    add_rule(x, v, &n, "rule add 198.18.4.0/24 rate 1/h algo fixed-window") ||
	    add_rule(x, v, &n, "rule add 198.18.5.0/24 rate 4294967295/h algo sliding-window") ||
	    add_rule(x, v, &n, "rule add 198.18.6.0/24 rate 1/h algo sliding-window") ||
	    add_rule(x, v, &n, "rule add 198.18.7.0/24 rate 800mbit burst 4294967295") ||
	    add_rule(x, v, &n, "rule add 198.18.12.0/24 rate 1bps burst 1514") ||
	    add_rule(x, v, &n, "rule add 198.18.13.0/24 rate 100000000/s burst 1000") ||
	    add_rule(x, v, &n, "rule add 198.18.14.0/24 rate 1000/s burst 1") ||
	    add_rule(x, v, &n, "rule add 198.18.8.0/24 rate 1/h burst 1 dry-run") ||
	    add_rule(x, v, &n, "rule add 198.18.9.0/24 rate 100000000/s burst 4000000000 scope fleet") ||
	    add_rule(x, v, &n, "rule add 198.18.10.0/24 rate 100000000/s burst 4000000000 scope fleet") ||
	    add_rule(x, v, &n, "rule add 198.18.17.0/24 action deny") ||
	    xrl_rules_commit(x, v, n) || fleet_setup(x)) {
		fprintf(stderr, "Error: %s\n", xrl_errmsg());
		return 1;
	}
	/* two more with the same rules and a capture each: of a source
	 * no packet comes from, of every packet (never read: the copies
	 * are the rate cap's few) */
	nsrc = n;
	for (int i = 0; i < 2; i++) {
		struct xrl_capture_filter f = { .verdicts = XRL_CAPTURE_F_PASS | XRL_CAPTURE_F_DROP };

		if (!i) {
			f.family = 4;
			f.prefix_len = 24;
			inet_pton(AF_INET, "192.0.2.0", f.addr);
		}
		if (xrl_open(&o, &xc[i]) || xrl_rules_commit(xc[i], v, nsrc) ||
		    xrl_capture_start(xc[i], &f, capture_cb, NULL, &cap[i])) {
			fprintf(stderr, "Error: %s\n", xrl_errmsg());
			return 1;
		}
		fds[4 + i] = xrl_prog_fd(xc[i]);
	}
	/* instances with the same rules and deny sets: of 16 prefixes (15
	 * random, and 198.18.17.0/24), of a million, eight of 16 (the eighth
	 * holds 198.18.17.0/24) */
	n16 = n;
	for (int k = 0; k < 3; k++) {
		size_t m = n16;
		int nsets = k == 2 ? 8 : 1;

		if (xrl_open(&o, &xs[k]))
			goto set_fail;
		for (int j = 0; j < nsets; j++) {
			char name[16], line[64];

			snprintf(name, sizeof(name), "s%d", j);
			snprintf(line, sizeof(line), "rule add @%s action deny", name);
			if (set_setup(xs[k], name, k == 1 ? 999999 : 15 + (j < nsets - 1),
				      j == nsets - 1 ? "198.18.17.0/24" : NULL) ||
			    add_rule(xs[k], v, &m, line))
				goto set_fail;
		}
		if (xrl_rules_commit(xs[k], v, m)) {
set_fail:
			fprintf(stderr, "Error: sets: %s\n", xrl_errmsg());
			return 1;
		}
		fds[6 + k] = xrl_prog_fd(xs[k]);
	}
	/* a second instance: the same rules and two endpoint rules */
	if (xrl_open(&o, &xe) ||
	    add_rule(xe, v, &n, "rule add 0.0.0.0/0 proto udp dport 5353 rate 100000000/s burst 4000000000") ||
	    add_rule(xe, v, &n, "rule add 0.0.0.0/0 proto udp dport 5354 rate 1/h burst 1") ||
	    xrl_rules_commit(xe, v, n)) {
		fprintf(stderr, "Error: %s\n", xrl_errmsg());
		return 1;
	}
	/* a third: the same rules, a rule that bans, 64 bans per family */
	n -= 2;		/* without the endpoint rules */
	if (xrl_open(&o, &xb) ||
	    add_rule(xb, v, &n, "rule add 198.18.16.0/24 rate 1/h burst 1 ban 1h") ||
	    xrl_rules_commit(xb, v, n) || bans_setup(xb)) {
		fprintf(stderr, "Error: %s\n", xrl_errmsg());
		return 1;
	}
	fds[9] = xrl_prog_fd(xb);
	/* a fourth: the same rules and a DNS endpoint rule that answers every
	 * refused query (slip 1), its one key over its limit at once */
	struct xrl *xd;

	if (xrl_open(&o, &xd) ||
	    add_rule(xd, v, &n, "rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 1 slip 1") ||
	    xrl_rules_commit(xd, v, n)) {
		fprintf(stderr, "Error: %s\n", xrl_errmsg());
		return 1;
	}
	n--;
	fds[3] = xrl_prog_fd(xe);
	fds[0] = xrl_prog_fd(x);
	fds[1] = bpf_program__fd(ref->progs.xdp_drop_all);
	fds[2] = bpf_program__fd(ref->progs.xdp_parse_only);
	fds[10] = bpf_program__fd(ref->progs.xdp_exact_floor);
	fds[11] = bpf_program__fd(ref->progs.xdp_exact_floor_nolpm);
	fds[12] = bpf_program__fd(ref->progs.xdp_percpu_floor);
	fds[13] = bpf_program__fd(ref->progs.xdp_parse_clock);
	{
		/* the floor's rules: the IPv4 prefixes of xdp-rl's instance
		 * below (so that its trie walk is xdp-rl's), each at
		 * 100,000,000/s (an interval of 10 ns): every packet admitted */
		static const __u8 third[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17 };
		__u64 interval = 10;

		for (size_t j = 0; j < sizeof(third); j++) {
			struct { __u32 prefixlen; __u8 addr[4]; } k = { 24, { 198, 18, third[j], 0 } };

			if (bpf_map_update_elem(bpf_map__fd(ref->maps.floor_rules), &k, &interval, BPF_ANY)) {
				fprintf(stderr, "Error: the floor's rules: %s\n", strerror(errno));
				return 1;
			}
		}
	}

	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < ncases; i++) {
			uint8_t buf[512];
			size_t len = pkt_build(buf, &cases[i].spec);

			if (cases[i].dport) {	/* IPv4, untagged: the UDP header at 34 */
				buf[36] = cases[i].dport >> 8;
				buf[37] = cases[i].dport & 0xff;
			}
			LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = buf, .data_size_in = len,
				    .repeat = repeat);

			struct bpf_prog_info in0 = {}, in1 = {};
			__u32 il = sizeof(in0);
			int sfd = -1;

			/* the capture's lease, renewed (it lapses in seconds) */
			if (cases[i].prog == 4 || cases[i].prog == 5)
				xrl_capture_poll(cap[cases[i].prog - 4], 0);
			if (cases[i].stats) {
				sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
				if (sfd < 0) {
					fprintf(stderr, "Error: bpf_enable_stats: %s\n", strerror(errno));
					return 1;
				}
				bpf_obj_get_info_by_fd(fds[cases[i].prog], &in0, &il);
			}
			if (bpf_prog_test_run_opts(fds[cases[i].prog], &t)) {
				fprintf(stderr, "Error: test run: %s\n", strerror(errno));
				return 1;
			}
			cases[i].ns[r] = t.duration;
			/* the floors measure an admitted packet: one that was not
			 * is a broken floor, not a cheaper one */
			if (cases[i].prog >= 10 && t.retval != XDP_PASS) {
				fprintf(stderr, "Error: %s: verdict %u, not XDP_PASS\n", cases[i].name, t.retval);
				return 1;
			}
			if (sfd >= 0) {
				il = sizeof(in1);
				bpf_obj_get_info_by_fd(fds[cases[i].prog], &in1, &il);
				counted &= in1.run_cnt - in0.run_cnt >= (__u64)repeat;
				close(sfd);
			}
		}
	}

	/* two CPUs at once (198.18.0.0/24: no aggregate; .11: an aggregate
	 * far from its limit, chunks of 1024); one key on both CPUs: its
	 * bucket is one cache line that both compare-and-swap every packet,
	 * what an aggregate without chunks would be */
	static const char *const two_src[][2] = {
		{ "198.18.0.1", "198.18.0.2" }, { "198.18.11.1", "198.18.11.2" },
		{ "198.18.0.1", "198.18.0.1" },
	};
	static const char *const two_name[] = {
		"two CPUs at once, each its own key, passed",
		"two CPUs at once, each its own key, aggregate far from its limit (chunks), passed",
		"two CPUs at once, one key (one cache line written by both every packet), passed",
	};
	double two_ns[3][64];
	int ntwo = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 3 : 0;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < ntwo; i++)
			if ((two_ns[i][r] = two_cpus(fds[0], two_src[i], repeat)) < 0) {
				fprintf(stderr, "Error: two CPUs: a test run failed or dropped\n");
				return 1;
			}
	for (int i = 0; i < ntwo; i++)
		qsort(two_ns[i], rounds, sizeof(double), cmp_d);

	/* answers, one run a call (above): bare XDP_DROP, bare XDP_TX, a
	 * slipped DNS answer; the key's first query is admitted (its burst) */
	static const char *const ans_name[] = {
		"one run a call: bare XDP_DROP",
		"one run a call: bare XDP_TX of a DNS query",
		"one run a call: xdp-rl slip 1, the query answered (XDP_TX)",
	};
	int ans_fd[] = { fds[1], bpf_program__fd(ref->progs.xdp_tx_all), xrl_prog_fd(xd) };
	__u32 ans_want[] = { XDP_DROP, XDP_TX, XDP_TX };
	double ans_ns[3][64];
	{
		uint8_t buf[512];
		size_t len = dns_query(buf);
		LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = buf, .data_size_in = len, .repeat = 1);

		if (bpf_prog_test_run_opts(ans_fd[2], &t) || t.retval != XDP_PASS) {
			fprintf(stderr, "Error: the slip rule's first query was not admitted\n");
			return 1;
		}
	}
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < 3; i++)
			if ((ans_ns[i][r] = answer_calls(ans_fd[i], ans_want[i])) < 0) {
				fprintf(stderr, "Error: %s: a call failed or did not end as it should\n", ans_name[i]);
				return 1;
			}
	for (int i = 0; i < 3; i++)
		qsort(ans_ns[i], rounds, sizeof(double), cmp_d);

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
			       med / floor_ns, i + 1 < ncases || ntwo ? "," : "");
		else
			printf("| %s | %.0f | %.0f | %.0f | %.2f |\n", cases[i].name, med,
			       cases[i].ns[0], cases[i].ns[rounds - 1], med / floor_ns);
	}
	for (int i = 0; i < ntwo; i++) {
		double med = two_ns[i][rounds / 2];

		if (json)
			printf("  {\"case\": \"%s\", \"ns_median\": %.1f, \"ns_min\": %.1f, \"ns_max\": %.1f, \"ratio_to_xdp_drop\": %.2f}%s\n",
			       two_name[i], med, two_ns[i][0], two_ns[i][rounds - 1], med / floor_ns, ",");
		else
			printf("| %s | %.0f | %.0f | %.0f | %.2f |\n", two_name[i], med, two_ns[i][0],
			       two_ns[i][rounds - 1], med / floor_ns);
	}
	/* the answer cases against their own floor (one run a call) */
	for (int i = 0; i < 3; i++) {
		double med = ans_ns[i][rounds / 2], fl = ans_ns[0][rounds / 2];

		if (json)
			printf("  {\"case\": \"%s\", \"ns_median\": %.1f, \"ns_min\": %.1f, \"ns_max\": %.1f, \"ratio_to_xdp_drop\": %.2f, \"ratio_to_xdp_tx\": %.2f}%s\n",
			       ans_name[i], med, ans_ns[i][0], ans_ns[i][rounds - 1], med / fl,
			       med / ans_ns[1][rounds / 2], i + 1 < 3 ? "," : "");
		else
			printf("| %s (%.2f× bare XDP_TX; last column: × bare XDP_DROP one run a call) | %.0f | %.0f | %.0f | %.2f |\n",
			       ans_name[i], med / ans_ns[1][rounds / 2], med, ans_ns[i][0], ans_ns[i][rounds - 1], med / fl);
	}
	if (json)
		printf("]\n");
	if (with_stats)
		fprintf(stderr, "run-time statistics %s BPF_PROG_TEST_RUN's runs (run_cnt)\n",
			counted ? "counted" : "did NOT count");
	xrl_test_progs__destroy(ref);
	for (int i = 0; i < 2; i++) {
		xrl_capture_stop(cap[i], NULL);
		xrl_close(xc[i]);
	}
	xrl_close(xe);
	xrl_close(xd);
	for (int k = 0; k < 3; k++)
		xrl_close(xs[k]);
	xrl_close(x);
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program, run through BPF_PROG_TEST_RUN on crafted frames with the
 * test clock, its rules applied through libxrl and the CLI grammar.
 * Each test loads a fresh, unpinned instance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "testlib.h"
#include "pkt.h"
#include "cmd.h"
#include "libxrl.h"

#define SEC	1000000000ULL
#define T0	(1000 * SEC)
#define PASS	XDP_PASS
#define DROP	XDP_DROP

static struct xrl *X;

static struct xrl *instance(bool test_clock)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = test_clock, .keys = 4096 };
	struct xrl *x;

	if (xrl_open(&o, &x)) {
		fprintf(stderr, "    cannot load: %s\n", xrl_errmsg());
		exit(2);
	}
	return x;
}

static void setup(void)
{
	X = instance(true);
	xrl_test_clock_set(X, T0);
}

static void teardown(void)
{
	xrl_close(X);
	X = NULL;
}

static int run_raw(const void *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1);
	int err = bpf_prog_test_run_opts(xrl_prog_fd(X), &o);

	if (err) {
		fprintf(stderr, "    test run (len %zu): %s\n", len, strerror(errno));
		return -1;
	}
	return o.retval;
}

static int run(const struct pkt_spec *s)
{
	uint8_t buf[512];

	return run_raw(buf, pkt_build(buf, s));
}

static int run_from(const char *src)
{
	struct pkt_spec s = { .src = src, .payload = 18 };

	return run(&s);
}

/* The rule set, as "rule add" lines of the CLI grammar, committed at once. */
static int set_rules(const char *const *lines)
{
	struct xrl_rule_entry v[32];
	size_t n = 0;

	for (; *lines; lines++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		if (xrl_cmd_parse_line(*lines, &c, &e) || c.kind != XRL_CMD_RULE_ADD) {
			fprintf(stderr, "    bad rule '%s': %s\n", *lines, e.msg);
			return -1;
		}
		v[n++] = c.rule;
	}
	return xrl_rules_commit(X, v, n) ? -1 : 0;	/* the caller reports xrl_errmsg() */
}

#define RULES(...) set_rules((const char *const[]){ __VA_ARGS__, NULL })

static struct xrl_rule_stats rstats(__u32 id)
{
	struct xrl_rule_stats s = {};
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(X, &v, &n))
		return s;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id == id)
			xrl_rule_stats_get(X, v[i].r.slot, &s);
	free(v);
	return s;
}

static struct xrl_global_stats gstats(void)
{
	struct xrl_global_stats g = {};

	xrl_global_stats_get(X, &g);
	return g;
}

/* ---------------------------------------------------------------- */

static void test_ipv4_limit(void)
{
	struct pkt_spec s = { .src = "198.18.0.1", .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	struct xrl_rule_stats st;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 3 id 7"), "%s", xrl_errmsg());
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), DROP);
	CHECK_EQ(run_raw(buf, len), DROP);
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), DROP);
	st = rstats(7);
	CHECK_EQ(st.passed_packets, 4);
	CHECK_EQ(st.dropped_packets, 3);
	CHECK_EQ(st.passed_bytes, 4 * len);
	CHECK_EQ(st.dropped_bytes, 3 * len);
	CHECK_EQ(st.new_keys, 1);
	CHECK_EQ(gstats().passed_packets[XRL_MODE_ENFORCE], 4);
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 3);
	teardown();
}

static void test_ipv6_slash64(void)
{
	setup();
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/h burst 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:0:1::1"), PASS);
	CHECK_EQ(run_from("2001:db8:0:1::2"), PASS);	/* same /64: same bucket */
	CHECK_EQ(run_from("2001:db8:0:1:ffff::3"), DROP);
	CHECK_EQ(run_from("2001:db8:0:2::1"), PASS);	/* another /64 */
	CHECK_EQ(rstats(1).new_keys, 2);
	teardown();
}

static void test_key_lengths(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 2 per /24",
		     "rule add 2001:db8::/32 rate 1/h burst 1 per /128"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS);
	CHECK_EQ(run_from("198.18.5.200"), PASS);	/* same /24 */
	CHECK_EQ(run_from("198.18.5.7"), DROP);
	CHECK_EQ(run_from("198.18.6.1"), PASS);		/* another /24 */
	CHECK_EQ(run_from("2001:db8::1"), PASS);
	CHECK_EQ(run_from("2001:db8::2"), PASS);	/* /128: its own bucket */
	CHECK_EQ(run_from("2001:db8::1"), DROP);
	teardown();
}

static void test_vlan_tags(void)
{
	struct pkt_spec s = { .src = "198.18.0.1", .payload = 10 };

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1"), "%s", xrl_errmsg());
	CHECK_EQ(run(&s), PASS);
	s.vlans = 1;					/* 802.1Q: same source */
	CHECK_EQ(run(&s), DROP);
	s.vlans = 2;					/* QinQ */
	s.src = "198.18.0.2";
	CHECK_EQ(run(&s), PASS);
	CHECK_EQ(run(&s), DROP);
	CHECK_EQ(rstats(1).new_keys, 2);
	CHECK_EQ(gstats().malformed_packets, 0);
	teardown();
}

static void test_ipv4_options_and_fragments(void)
{
	struct pkt_spec opts = { .src = "198.18.0.1", .ip_opt_words = 10, .payload = 4 };
	struct pkt_spec frag = { .src = "198.18.0.1", .frag_off = 185, .payload = 40 };

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1"), "%s", xrl_errmsg());
	CHECK_EQ(run(&opts), PASS);		/* IHL 15: 40 bytes of options */
	CHECK_EQ(run(&frag), DROP);		/* a non-first fragment: same source, same bucket */
	frag.src = "198.18.0.3";
	CHECK_EQ(run(&frag), PASS);
	CHECK_EQ(run(&frag), DROP);
	CHECK_EQ(gstats().malformed_packets, 0);
	teardown();
}

static void test_ipv6_extension_headers(void)
{
	static const uint8_t hbh_dst[] = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS };
	static const uint8_t rt_ah[] = { IPPROTO_ROUTING, IPPROTO_AH };
	static const uint8_t frag[] = { IPPROTO_HOPOPTS, IPPROTO_FRAGMENT };
	static const uint8_t deep[] = { 0, 60, 60, 60, 60, 60, 60, 60, 60, 60 };
	struct pkt_spec s = { .src = "2001:db8:0:1::1", .payload = 8 };

	setup();
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/h burst 5"), "%s", xrl_errmsg());
	s.ext = hbh_dst, s.next_ext = 2;
	CHECK_EQ(run(&s), PASS);
	s.ext = rt_ah, s.next_ext = 2;
	CHECK_EQ(run(&s), PASS);
	s.ext = frag, s.next_ext = 2, s.frag_off = 100;	/* non-first fragment */
	CHECK_EQ(run(&s), PASS);
	s.ext = deep, s.next_ext = 10, s.frag_off = 0;	/* longer than the walk */
	CHECK_EQ(run(&s), PASS);
	CHECK_EQ(rstats(1).passed_packets, 4);
	CHECK_EQ(rstats(1).new_keys, 1);
	CHECK_EQ(gstats().malformed_packets, 0);
	teardown();
}

static void test_non_ip(void)
{
	struct pkt_spec arp = {};
	uint8_t buf[512];
	size_t len = pkt_build(buf, &arp);

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 action deny"), "%s", xrl_errmsg());
	CHECK_EQ(run_raw(buf, len), PASS);
	buf[12] = 0x88, buf[13] = 0xcc;		/* LLDP */
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(gstats().non_ip_packets, 2);
	CHECK_EQ(gstats().unmatched_packets, 0);
	teardown();
}

/* Every truncation of every header: dropped as malformed, never read out of
 * bounds. (The kernel refuses test frames shorter than 14 bytes.) */
static void test_truncation(void)
{
	static const uint8_t ext[] = { IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_FRAGMENT, IPPROTO_AH };
	struct pkt_spec specs[] = {
		{ .src = "198.18.0.1", .payload = 4 },
		{ .src = "198.18.0.1", .ip_opt_words = 3, .payload = 4 },
		{ .src = "198.18.0.1", .vlans = 1, .payload = 4 },
		{ .src = "198.18.0.1", .vlans = 2, .payload = 4 },
		{ .src = "2001:db8::1", .payload = 4 },
		{ .src = "2001:db8::1", .vlans = 2, .ext = ext, .next_ext = 4, .payload = 4 },
	};
	uint64_t cuts = 0;

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 action allow", "rule add ::/0 action allow"), "%s", xrl_errmsg());
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		uint8_t buf[512];
		size_t len = pkt_build(buf, &specs[i]);

		CHECK(run_raw(buf, len) == PASS, "spec %zu whole", i);
		for (size_t l = 14; l < len; l++, cuts++)
			CHECK(run_raw(buf, l) == DROP, "spec %zu cut at %zu", i, l);
	}
	CHECK_EQ(gstats().malformed_packets, cuts);
	teardown();
}

static void test_malformed_headers(void)
{
	struct pkt_spec v4 = { .src = "198.18.0.1", .payload = 8 };
	static const uint8_t dst[] = { IPPROTO_DSTOPTS };
	struct pkt_spec v6 = { .src = "2001:db8::1", .ext = dst, .next_ext = 1, .payload = 8 };
	uint8_t buf[512];
	size_t len;

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 action allow", "rule add ::/0 action allow"), "%s", xrl_errmsg());
	len = pkt_build(buf, &v4);
	buf[14] = 0x44;				/* IHL 4 < 5 */
	CHECK_EQ(run_raw(buf, len), DROP);
	buf[14] = 0x4f;				/* IHL 15: longer than the frame */
	CHECK_EQ(run_raw(buf, len), DROP);
	len = pkt_build(buf, &v4);
	buf[14] = 0x65;				/* version 6 behind ethertype IPv4 */
	CHECK_EQ(run_raw(buf, len), DROP);
	len = pkt_build(buf, &v4);
	buf[16] = 0, buf[17] = 12;		/* total length < header length */
	CHECK_EQ(run_raw(buf, len), DROP);
	len = pkt_build(buf, &v6);
	buf[14] = 0x40;				/* version 4 behind ethertype IPv6 */
	CHECK_EQ(run_raw(buf, len), DROP);
	len = pkt_build(buf, &v6);
	buf[14 + 40 + 1] = 200;			/* extension header past the end */
	CHECK_EQ(run_raw(buf, len), DROP);
	CHECK_EQ(gstats().malformed_packets, 6);
	len = pkt_build(buf, &v4);
	memset(buf + len, 0, 20);		/* trailing padding is fine */
	CHECK_EQ(run_raw(buf, len + 20), PASS);
	teardown();
}

static void test_allow_deny(void)
{
	int pass = 0, drop = 0;

	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 action allow", "rule add 198.18.2.0/24 action deny"),
	      "%s", xrl_errmsg());
	for (int i = 0; i < 50; i++) {
		pass += run_from("198.18.1.1") == PASS;
		drop += run_from("198.18.2.1") == DROP;
	}
	CHECK_EQ(pass, 50);
	CHECK_EQ(drop, 50);
	CHECK_EQ(rstats(1).passed_packets, 50);
	CHECK_EQ(rstats(2).dropped_packets, 50);
	CHECK_EQ(rstats(1).new_keys + rstats(2).new_keys, 0);	/* never metered */
	teardown();
}

static void test_modes(void)
{
	struct pkt_spec arp = {};
	struct xrl_global_stats g;
	int v[4];

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 2", "rule add 198.18.1.0/24 action allow"),
	      "%s", xrl_errmsg());
	/* enforce */
	for (int i = 0; i < 4; i++)
		v[i] = run_from("198.18.0.1");
	CHECK(v[0] == PASS && v[1] == PASS && v[2] == DROP && v[3] == DROP, "enforce");
	/* dry-run: metered and counted, everything passes */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(rstats(1).dropped_packets, 2 + 2);	/* two would-drops */
	CHECK_EQ(rstats(1).new_keys, 2);
	/* fail-open: everything passes, nothing metered */
	xrl_mode_set(X, XRL_MODE_FAIL_OPEN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.3"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* even an exhausted key */
	CHECK_EQ(rstats(1).new_keys, 2);
	/* fail-closed: only allow rules (and non-IP) pass */
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.0.4"), DROP);
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(run_from("198.18.9.1"), DROP);		/* unmatched */
	CHECK_EQ(run(&arp), PASS);
	g = gstats();
	CHECK_EQ(g.passed_packets[XRL_MODE_ENFORCE], 2);
	CHECK_EQ(g.dropped_packets[XRL_MODE_ENFORCE], 2);
	CHECK_EQ(g.passed_packets[XRL_MODE_DRY_RUN], 4);
	CHECK_EQ(g.dropped_packets[XRL_MODE_DRY_RUN], 0);
	CHECK_EQ(g.passed_packets[XRL_MODE_FAIL_OPEN], 5);
	CHECK_EQ(g.passed_packets[XRL_MODE_FAIL_CLOSED], 2);
	CHECK_EQ(g.dropped_packets[XRL_MODE_FAIL_CLOSED], 2);
	/* back to enforce: the bucket state was kept */
	xrl_mode_set(X, XRL_MODE_ENFORCE);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	teardown();
}

static void test_most_specific_prefix(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1",
		     "rule add 198.18.1.0/24 action allow",
		     "rule add 198.18.1.128/25 action deny",
		     "rule add 198.18.1.77/32 rate 1/h burst 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.1.5"), PASS);
	CHECK_EQ(run_from("198.18.1.5"), PASS);		/* allow */
	CHECK_EQ(run_from("198.18.1.200"), DROP);		/* deny /25 */
	CHECK_EQ(run_from("198.18.2.1"), PASS);		/* /15 limit */
	CHECK_EQ(run_from("198.18.2.1"), DROP);
	CHECK_EQ(run_from("198.18.1.77"), PASS);		/* /32 limit, burst 2 */
	CHECK_EQ(run_from("198.18.1.77"), PASS);
	CHECK_EQ(run_from("198.18.1.77"), DROP);
	CHECK_EQ(run_from("198.20.0.1"), PASS);		/* unmatched */
	CHECK_EQ(gstats().unmatched_packets, 1);
	teardown();
}

static void test_rule_change_next_packet(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	/* a changed rule meters with a fresh bucket from the next packet on */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 3"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	/* changed to deny, then removed */
	CHECK(!RULES("rule add 198.18.0.0/15 action deny"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.9"), DROP);
	CHECK(!set_rules((const char *const[]){ NULL }), "empty set");
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(gstats().unmatched_packets, 1);
	teardown();
}

static void test_unchanged_rule_keeps_bucket(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 id 1"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 id 1",
		     "rule add 198.19.0.0/16 rate 1/h burst 1 id 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP);		/* still limited */
	CHECK_EQ(rstats(1).dropped_packets, 2);		/* counters kept too */
	CHECK_EQ(run_from("198.19.0.1"), PASS);
	teardown();
}

/* The daemon's watchdog: a stale heartbeat makes each rule follow its
 * on-failure policy; a new heartbeat restores enforcement. */
static void test_watchdog_policies(void)
{
	struct xrl_control *c;

	setup();
	c = xrl_control(X);
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 1 on-failure open",
		     "rule add 198.18.1.0/24 rate 1/h burst 1 on-failure closed",
		     "rule add 198.18.2.0/24 action allow on-failure closed",
		     "rule add 198.18.3.0/24 action deny"), "%s", xrl_errmsg());
	xrl_heartbeat(X, 1000, 5 * SEC);	/* heartbeat at T0, watchdog 5 s */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);	/* enforced */
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(run_from("198.18.1.2"), PASS);
	/* not yet: exactly the watchdog time */
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(run_from("198.18.1.3"), PASS);	/* a new key, metered */
	/* past it: each rule's policy */
	xrl_test_clock_set(X, T0 + 5 * SEC + 1);
	CHECK_EQ(run_from("198.18.0.1"), PASS);	/* open */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.1.4"), DROP);	/* closed, even a new key */
	CHECK_EQ(run_from("198.18.2.1"), PASS);	/* allow always passes */
	CHECK_EQ(run_from("198.18.3.1"), PASS);	/* deny, open by default */
	CHECK_EQ(rstats(1).failure_passed, 2);
	CHECK_EQ(rstats(2).failure_dropped, 1);
	CHECK_EQ(rstats(4).failure_passed, 1);
	/* a new heartbeat: enforcement again, with the buckets it had */
	xrl_heartbeat(X, 1000, 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(run_from("198.18.1.1"), DROP);
	CHECK_EQ(run_from("198.18.3.1"), DROP);
	/* watchdog 0: a heartbeat however old never fires */
	xrl_heartbeat(X, 1000, 0);
	xrl_test_clock_set(X, T0 + 3600 * SEC);
	CHECK_EQ(run_from("198.18.1.4"), PASS);
	CHECK_EQ(run_from("198.18.1.4"), DROP);
	CHECK(c->watchdog_ns == 0, "disarmed");
	/* the operator's fail-closed comes before the watchdog */
	xrl_heartbeat(X, 1000, 1);
	xrl_test_clock_set(X, T0 + 7200 * SEC);
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.0.9"), DROP);
	teardown();
}

/* A failed commit changes nothing. */
static void test_commit_all_or_nothing(void)
{
	struct xrl_rule_entry *v;
	size_t n = 0;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1"), "%s", xrl_errmsg());
	CHECK(RULES("rule add 198.19.0.0/16 rate 1/h burst 1",
		    "rule add 198.19.0.0/16 rate 2/h burst 1") != 0, "duplicate refused");
	CHECK(RULES("rule add 198.19.0.0/16 rate 1/h burst 1 id 5",
		    "rule add 198.20.0.0/16 rate 1/h burst 1 id 5") != 0, "duplicate id refused");
	CHECK(!xrl_rules_get(X, &v, &n), "get");
	CHECK_EQ(n, 1);
	free(v);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.19.0.1"), PASS);
	CHECK_EQ(gstats().unmatched_packets, 1);
	teardown();
}

/* ---- concurrency: two CPUs, one key, the real clock ---- */

struct hammer {
	int cpu, prog_fd, err;
	pthread_barrier_t *start;
};

static void *hammer(void *arg)
{
	struct hammer *h = arg;
	struct pkt_spec s = { .src = "198.18.0.1", .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 20000);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(h->start);		/* both CPUs on the key at once */
	h->err = bpf_prog_test_run_opts(h->prog_fd, &o) ? errno : 0;
	return NULL;
}

/* Five rounds, each on a fresh rule (a new generation: a fresh bucket), so
 * that a racy update has five chances to over-admit. */
static void test_concurrency_exact(void)
{
	struct hammer h[2];
	pthread_barrier_t start;
	pthread_t t[2];
	struct xrl_rule_stats st;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	X = instance(false);		/* the real clock */
	for (int round = 1; round <= 5; round++) {
		char rule[128];

		snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1/h burst 1000 id %d", round);
		CHECK(!RULES(rule), "%s", xrl_errmsg());
		pthread_barrier_init(&start, NULL, 2);
		for (int i = 0; i < 2; i++) {
			h[i] = (struct hammer){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X),
						.start = &start };
			pthread_create(&t[i], NULL, hammer, &h[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			CHECK(!h[i].err, "test run: %s", strerror(h[i].err));
		}
		pthread_barrier_destroy(&start);
		st = rstats(round);
		CHECK(st.passed_packets == 1000, "round %d: %llu passed", round,
		      (unsigned long long)st.passed_packets);
		CHECK_EQ(st.passed_packets + st.dropped_packets, 40000);
		CHECK_EQ(st.new_keys, 1);
	}
	if (ncpu < 2)
		fprintf(stderr, "    note: one CPU online; the threads did not run in parallel\n");
	teardown();
}

int main(void)
{
	if (!getenv("XRL_DEBUG"))
		libbpf_set_print(NULL);
	RUN(test_ipv4_limit);
	RUN(test_ipv6_slash64);
	RUN(test_key_lengths);
	RUN(test_vlan_tags);
	RUN(test_ipv4_options_and_fragments);
	RUN(test_ipv6_extension_headers);
	RUN(test_non_ip);
	RUN(test_truncation);
	RUN(test_malformed_headers);
	RUN(test_allow_deny);
	RUN(test_modes);
	RUN(test_most_specific_prefix);
	RUN(test_rule_change_next_packet);
	RUN(test_unchanged_rule_keeps_bucket);
	RUN(test_commit_all_or_nothing);
	RUN(test_watchdog_policies);
	RUN(test_concurrency_exact);
	return tl_summary();
}

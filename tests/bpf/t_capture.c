// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Capture: nothing while off, the filter, the rate cap, the lease, and no
 * verdict changed.
 */
#include "harness.h"

struct got {
	int n, pass, drop, rule7, rule10;
	__u32 len, caplen;
	char first_src[16];
};

static int on_pkt(const struct xrl_capture_pkt *p, void *ctx)
{
	struct got *g = ctx;
	const __u8 *d = p->data;

	if (!g->n && p->caplen >= 30)
		snprintf(g->first_src, sizeof(g->first_src), "%u.%u.%u.%u", d[26], d[27], d[28], d[29]);
	g->n++;
	g->pass += p->verdict == XRL_CAPTURE_F_PASS;
	g->drop += p->verdict == XRL_CAPTURE_F_DROP;
	g->rule7 += p->has_rule && p->rule_id == 7;
	g->rule10 += p->has_rule && p->rule_id == 10;
	g->len = p->len;
	g->caplen = p->caplen;
	return 0;
}

static struct xrl_capture_run *start(const struct xrl_capture_filter *f, struct got *g)
{
	struct xrl_capture_run *c = NULL;

	memset(g, 0, sizeof(*g));
	CHECK(!xrl_capture_start(X, f, on_pkt, g, &c), "xrl_capture_start: %s", xrl_errmsg());
	return c;
}

/* Off: the lease 0, nothing on the ring, nothing counted. On: every packet
 * with its final verdict and rule, the verdicts those of a run without a
 * capture. */
TEST(capture_off_and_on)
{
	struct xrl_capture_filter any = { .verdicts = XRL_CAPTURE_F_PASS | XRL_CAPTURE_F_DROP };
	struct xrl_capture_totals t;
	struct xrl_capture_run *c;
	int verdicts[10], again[10];
	struct got g;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/s burst 3 id 7"), "rules: %s", xrl_errmsg());
	for (int i = 0; i < 10; i++)
		verdicts[i] = run_from("198.18.0.1");
	CHECK_EQ(xrl_control(X)->capture_until, 0, "no lease while no capture runs");

	/* the same packets on a fresh key, captured */
	c = start(&any, &g);
	CHECK(xrl_control(X)->capture_until != 0, "the lease is set");
	for (int i = 0; i < 10; i++)
		again[i] = run_from("198.18.0.2");
	CHECK_EQ(xrl_capture_poll(c, 100), 0, "poll");
	xrl_capture_stop(c, &t);
	for (int i = 0; i < 10; i++)
		CHECK(again[i] == verdicts[i], "verdict of packet %d unchanged by the capture", i);
	CHECK_EQ(g.n, 10, "every packet captured");
	CHECK_EQ(g.pass, 3, "the burst: passed");
	CHECK_EQ(g.drop, 7, "the rest: dropped");
	CHECK_EQ(g.rule7, 10, "each with its rule");
	CHECK(!strcmp(g.first_src, "198.18.0.2"), "the packet's bytes: from %s", g.first_src);
	CHECK_EQ(g.caplen, g.len, "a short frame: all of it");
	CHECK_EQ(t.matched, 10, "matched");
	CHECK_EQ(t.captured, 10, "captured");
	CHECK_EQ(t.left_out + t.lost, 0, "nothing left out");
	CHECK_EQ(xrl_control(X)->capture_until, 0, "the stop clears the lease");
	CHECK_EQ(rstats(7).dropped_packets, 14, "the rule's counters: the drops of both runs");

	/* stopped: nothing more on the ring, nothing counted */
	c = start(&any, &g);
	xrl_capture_stop(c, NULL);
	memset(&g, 0, sizeof(g));
	c = NULL;
	CHECK_EQ(xrl_capture_start(X, &(struct xrl_capture_filter){ .rule_id = 99, .has_rule = true },
				   on_pkt, &g, &c), (__u64)-ENOENT, "a rule not in the set is refused");
	CHECK(strstr(xrl_errmsg(), "no rule 99"), "says so: %s", xrl_errmsg());
	for (int i = 0; i < 5; i++)
		run_from("198.18.0.3");
	CHECK_EQ(g.n, 0, "off: nothing emitted");
	teardown();
}

/* The filter: verdict, rule, source prefix; and the snaplen */
TEST(capture_filter)
{
	struct xrl_capture_filter f = { .verdicts = XRL_CAPTURE_F_DROP, .has_rule = true, .rule_id = 8,
					.family = 4, .prefix_len = 25, .snaplen = 64 };
	struct xrl_capture_totals t;
	struct xrl_capture_run *c;
	struct pkt_spec big = { .src = "198.18.1.5", .payload = 400 };
	struct got g;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/s burst 1 id 7",
		     "rule add 198.18.1.0/24 rate 1/s burst 1 id 8"), "rules: %s", xrl_errmsg());
	inet_pton(AF_INET, "198.18.1.0", f.addr);
	c = start(&f, &g);
	for (int i = 0; i < 3; i++) {
		run_from("198.18.0.1");		/* rule 7: not this rule */
		run_from("198.18.1.200");	/* rule 8, outside /25 */
		run(&big);			/* rule 8, inside: 1 pass, 2 drops */
	}
	CHECK_EQ(xrl_capture_poll(c, 100), 0, "poll");
	xrl_capture_stop(c, &t);
	CHECK_EQ(g.n, 2, "only rule 8's drops from 198.18.1.0/25");
	CHECK_EQ(g.drop, 2, "drops only");
	CHECK_EQ(g.rule7, 0, "none of rule 7");
	CHECK_EQ(g.caplen, 64, "cut at the snaplen");
	CHECK(g.len > 400, "the length on the wire: %u", g.len);
	CHECK_EQ(t.matched, 2, "matched");
	teardown();
}

/* The rate cap: the burst, then the rate on the clock; the rest counted
 * as left out; the verdicts those of every packet */
TEST(capture_rate_cap)
{
	struct xrl_capture_filter f = { .verdicts = XRL_CAPTURE_F_DROP, .rate = 100, .burst = 10 };
	struct xrl_capture_totals t;
	struct xrl_capture_run *c;
	int dropped = 0;
	struct got g;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/min burst 1 id 7"), "rules: %s", xrl_errmsg());
	c = start(&f, &g);
	for (int i = 0; i < 1000; i++)
		dropped += run_from("198.18.0.9") == DROP;
	/* 100 ms later: 10 more at 100/s */
	xrl_test_clock_set(X, T0 + SEC / 10);
	for (int i = 0; i < 1000; i++)
		dropped += run_from("198.18.0.9") == DROP;
	CHECK_EQ(xrl_capture_poll(c, 100), 0, "poll");
	xrl_capture_stop(c, &t);
	CHECK_EQ(dropped, 1999, "every packet but the first dropped: the capture changed none");
	CHECK_EQ(t.matched, 1999, "matched");
	CHECK_EQ(g.n, 20, "the burst of 10, then 10 in 100 ms at 100/s");
	CHECK_EQ(t.captured, 20, "captured");
	CHECK_EQ(t.left_out, 1979, "the rest left out, counted");
	teardown();
}

/* The lease lapses by itself: a reader that stops renewing (killed) stops
 * the copies within XRL_CAPTURE_LEASE + 1 units, and the data path clears
 * the word */
TEST(capture_lease_lapses)
{
	struct xrl_capture_filter f = { .verdicts = XRL_CAPTURE_F_PASS };
	struct xrl_capture_totals t;
	struct xrl_capture_run *c;
	__u32 until;
	struct got g;

	setup();
	c = start(&f, &g);
	until = xrl_control(X)->capture_until;
	CHECK_EQ(until, (T0 >> XRL_CAPTURE_LEASE_SHIFT) + XRL_CAPTURE_LEASE, "the lease");
	run_from("198.18.0.1");
	xrl_test_clock_set(X, (__u64)(until + 1) << XRL_CAPTURE_LEASE_SHIFT);
	run_from("198.18.0.1");
	CHECK_EQ(xrl_control(X)->capture_until, 0, "lapsed: cleared by the data path");
	run_from("198.18.0.1");
	xrl_capture_totals(c, &t);
	CHECK_EQ(t.matched, 1, "only the packet within the lease");
	xrl_capture_stop(c, NULL);
	teardown();
}

/* A reload during a capture: a changed rule takes a new slot, and a new
 * rule one that the capture never saw. The filter follows the rule's id to
 * its new slot, and the records name the rule that decided them, not
 * "none" */
TEST(capture_follows_a_reload)
{
	struct xrl_capture_filter f = { .verdicts = XRL_CAPTURE_F_DROP, .has_rule = true, .rule_id = 7 };
	struct xrl_capture_totals t;
	struct xrl_capture_run *c;
	struct got g;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/s burst 1 id 7"), "rules: %s", xrl_errmsg());
	c = start(&f, &g);
	for (int i = 0; i < 3; i++)
		run_from("198.18.0.1");		/* 1 pass, 2 drops */
	CHECK_EQ(xrl_capture_poll(c, 100), 0, "poll");
	CHECK_EQ(g.rule7, 2, "rule 7's drops before the reload");
	/* rule 7 changed (a new slot); rule 9 new */
	CHECK(!RULES("rule add 198.18.0.0/24 rate 2/s burst 1 id 7",
		     "rule add 198.18.2.0/24 rate 1/s burst 1 id 9"), "rules: %s", xrl_errmsg());
	CHECK_EQ(xrl_capture_poll(c, 10), 0, "poll");
	for (int i = 0; i < 3; i++) {
		run_from("198.18.0.2");		/* rule 7: 1 pass, 2 drops */
		run_from("198.18.2.1");		/* rule 9: not this rule */
	}
	CHECK_EQ(xrl_capture_poll(c, 100), 0, "poll");
	xrl_capture_totals(c, &t);
	CHECK_EQ(g.rule7, 4, "rule 7's drops after the reload too");
	CHECK_EQ(g.n, 4, "and only those");
	xrl_capture_stop(c, NULL);

	/* unfiltered: a record of the new rule names it */
	memset(&f, 0, sizeof(f));
	c = start(&f, &g);
	CHECK(!RULES("rule add 198.18.0.0/24 rate 2/s burst 1 id 7",
		     "rule add 198.18.3.0/24 rate 1/s burst 1 id 10"), "rules: %s", xrl_errmsg());
	CHECK_EQ(xrl_capture_poll(c, 10), 0, "poll");
	g.rule7 = 0;
	run_from("198.18.3.1");
	run_from("198.18.3.1");
	CHECK_EQ(xrl_capture_poll(c, 100), 0, "poll");
	CHECK_EQ(g.n, 2, "both packets");
	CHECK_EQ(g.rule10, 2, "each with rule 10, added after the start");
	xrl_capture_stop(c, NULL);
	teardown();
}

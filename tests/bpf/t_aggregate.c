// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The clocks of a rule, the aggregate and the new-key budget.
 */
#include "harness.h"

/*
 * A rule whose burst is less than its rate refills in one tick of the
 * coarse clock (4 ms at HZ=250) would admit at most its burst a tick, a
 * fraction of its rate (2,500/s here): such a rule meters on the precise
 * clock. On the real clock, 20,000 packets a second, 50 us apart, against
 * 100,000/s burst 10 pass every one, as against an aggregate of 100,000/s
 * burst 10; 1,000/s burst 10 (10 ms of tolerance: the coarse clock) still
 * limits to its burst + rate x t.
 */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

TEST(small_burst_high_rate)
{
	static const char *const rule[] = {
		"rule add 198.18.0.0/24 rate 100000/s burst 10 id 1",
		"rule add 198.18.1.0/24 rate 1000/s burst 10 id 2",
		"rule add 198.18.2.0/24 rate 100000000/s burst 4000000000 aggregate 100000/s burst 10 id 3",
	};
	static const char *const src[] = { "198.18.0.1", "198.18.1.1", "198.18.2.1" };
	double t0, t;
	int passed[3] = { 0 }, sent = 0;

	one_cpu();
	X = instance(false);		/* the real clock */
	CHECK(!set_rules((const char *const[]){ rule[0], rule[1], rule[2], NULL }),
	      "the rule set commits: %s", xrl_errmsg());
	/* 200 ms, a packet of each every 50 us */
	t0 = now_s();
	for (t = t0; t - t0 < 0.2; t = now_s()) {
		for (int i = 0; i < 3; i++)
			passed[i] += run_from(src[i]) == PASS;
		sent++;
		while (now_s() - t < 50e-6)
			;
	}
	if (getenv("XRL_DEBUG"))
		fprintf(stderr, "    sent %d: passed %d %d %d\n", sent, passed[0], passed[1], passed[2]);
	CHECK(passed[0] == sent, "100000/s burst 10: %d of %d passed", passed[0], sent);
	CHECK(passed[2] == sent, "aggregate 100000/s burst 10: %d of %d passed", passed[2], sent);
	/* 1,000/s over at most 0.2 s and a bit, plus the burst */
	CHECK(passed[1] <= 10 + 1000 * (now_s() - t0) + 2 && passed[1] >= 150,
	      "1000/s burst 10: %d of %d passed", passed[1], sent);
	teardown();
}

/*
 * Review: a precise-clock rule stamps its buckets (last_ns, TAT) with
 * bpf_ktime_get_ns(), while xrl_now_ns() is the coarse clock, up to a tick
 * behind. The rule's own "now" (xrl_rule_now_ns(): show, keys) must not
 * see a key that sent one packet a moment ago in the future, nor show an
 * empty bucket when it has 9 of its 10 tokens.
 */
TEST(precise_rule_userspace_now)
{
	const char *src = "198.18.0.1";
	struct xrl_rule_entry *v;
	int ahead = 0, empty = 0;
	size_t n;

	one_cpu();
	X = instance(false);		/* the real clock */
	CHECK(!RULES("rule add 198.18.0.0/24 rate 100000/s burst 10 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "xrl_rules_get: %s", xrl_errmsg());
	CHECK(v[0].r.precise, "precise");
	for (int i = 0; i < 50; i++) {
		struct xrl_bucket b;
		__u64 now;

		usleep(1000);		/* the bucket full again */
		CHECK_EQ(run_from(src), PASS, "a packet from src passes");
		b = bucket_of(1, src);
		now = xrl_rule_now_ns(X, &v[0].r);
		ahead += b.last_ns > now;
		empty += xrl_bucket_left(&v[0].r, &b, now) < 9;
	}
	CHECK(!ahead, "last_ns ahead of xrl_now_ns() %d times of 50", ahead);
	CHECK(!empty, "under 9 tokens shown %d times of 50", empty);
	free(v);
	teardown();
}

/* aggregate: one bucket for all keys of the rule, after each key's own. */
TEST(aggregate)
{
	unsigned long long keys;
	int passed = 0;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 10/s burst 2 aggregate 10/s burst 5 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	passed += passes_from("198.18.0.", 1, 20);
	CHECK_EQ(passed, 5, "the aggregate's burst of 5 passes, no more");
	CHECK_EQ(rstats(1).agg_dropped, 15, "rule 1: agg dropped");
	/* once refused, the rule drops before the keys: 5 passed and the
	 * first refused have a bucket, the 14 after it none */
	CHECK(!xrl_keys_tracked_family(X, 4, &keys), "xrl_keys_tracked_family: %s", xrl_errmsg());
	CHECK_EQ(keys, 6, "keys with a bucket: 5 passed and the first refused");
	/* 10/s, burst 5: the aggregate refuses until exactly T0 + 100 ms */
	xrl_test_clock_set(X, T0 + SEC / 10 - 1);
	CHECK_EQ(run_from("198.18.0.30"), DROP,
		 "10/s, burst 5: the aggregate refuses until exactly T0 + 100 ms");
	xrl_test_clock_set(X, T0 + SEC / 10);
	CHECK_EQ(run_from("198.18.0.31"), PASS, "a packet from 198.18.0.31 passes");
	CHECK_EQ(run_from("198.18.0.32"), DROP, "a packet from 198.18.0.32 is dropped");
	/* a key refused by its own bucket costs the aggregate nothing */
	xrl_test_clock_set(X, T0 + SEC);	/* full again: 5 */
	CHECK_EQ(run_from("198.18.0.1"), PASS,
		 "a key refused by its own bucket costs the aggregate nothing");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	passed = 0;
	passed += passes_from("198.18.0.", 2, 19);
	CHECK_EQ(passed, 3, "the aggregate's 3 others: the refused key cost it nothing");
	/* the default burst: one second of the rate */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 10/s burst 2 aggregate 7/s id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	passed = 0;
	passed += passes_from("198.19.0.", 1, 20);
	CHECK_EQ(passed, 7, "the default burst: one second of the aggregate rate");
	teardown();
}

/* A fresh aggregate and new-key budget are full whatever the clock reads:
 * past 2^57 ns (4.6 years of uptime, or a capture's timestamps in replay)
 * time units are past 2^63, where 0 is no longer the past. */
TEST(aggregate_fresh_late_clock)
{
	int passed = 0;

	setup();
	xrl_test_clock_set(X, 3ULL << 56);	/* time units: 3 << 62 */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 aggregate 10/s burst 5 new-keys 3/s id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	passed += passes_from("198.18.0.", 1, 10);
	CHECK_EQ(passed, 5, "3 new keys, then 2 on the aggregate alone");
	CHECK_EQ(rstats(1).new_keys, 3, "rule 1: new keys");
	teardown();
}

struct flood_thread {
	int cpu, prog_fd, err, repeat;
	const char *src;
	pthread_barrier_t *start;
};

static void *flood_thread(void *arg)
{
	struct flood_thread *h = arg;
	struct pkt_spec s = { .src = h->src, .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = h->repeat);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(h->start);
	h->err = bpf_prog_test_run_opts(h->prog_fd, &o) ? errno : 0;
	return NULL;
}

/* Two CPUs at once on one aggregate (keys that never limit): it admits its
 * burst less at most what the CPUs hold in chunks (1 % of it), never more. */
TEST(aggregate_two_cpus)
{
	static const char *const srcs[] = { "198.18.0.1", "198.18.0.2" };
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	X = instance(false);		/* the real clock */
	for (int round = 1; round <= 3; round++) {
		struct flood_thread h[2];
		pthread_barrier_t start;
		struct xrl_rule_stats st;
		pthread_t t[2];
		char rule[160];

		snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1000/s burst 100000 aggregate 1/h burst 5000 id %d", round);
		CHECK(!RULES(rule), "the rule set commits: %s", xrl_errmsg());
		pthread_barrier_init(&start, NULL, 2);
		for (int i = 0; i < 2; i++) {
			h[i] = (struct flood_thread){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X),
						      .start = &start, .src = srcs[i], .repeat = 20000 };
			pthread_create(&t[i], NULL, flood_thread, &h[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			CHECK(!h[i].err, "test run: %s", strerror(h[i].err));
		}
		pthread_barrier_destroy(&start);
		st = rstats(round);
		CHECK(st.passed_packets <= 5000 && st.passed_packets >= 4950,
		      "round %d: %llu passed", round, (unsigned long long)st.passed_packets);
		CHECK_EQ(st.passed_packets + st.dropped_packets, 40000, "every packet counted");
		CHECK_EQ(st.agg_dropped, st.dropped_packets, "every drop is the aggregate's");
	}
	teardown();
}

/* new-keys: at most its budget of new buckets; a key that finds none does
 * not enter the table and is metered by the aggregate alone (dropped
 * without one). */
TEST(new_keys)
{
	unsigned long long keys;
	struct xrl_rule_stats st;
	int passed = 0;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 3 new-keys 10/s id 1",
		     "rule add 198.19.0.0/16 rate 1/s burst 3 new-keys 10/s aggregate 30/s burst 25 id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	passed += passes_from("198.18.0.", 1, 100);
	st = rstats(1);
	CHECK_EQ(passed, 10, "10 new keys a second pass");
	CHECK_EQ(st.new_keys, 10, "the new-key budget: 10 buckets");
	CHECK_EQ(st.nk_refused, 90, "90 new keys refused");
	CHECK(!xrl_keys_tracked_family(X, 4, &keys), "xrl_keys_tracked_family: %s", xrl_errmsg());
	CHECK_EQ(keys, 10, "10 keys in the table");
	/* a key in the table is metered as ever */
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a key in the table is metered as ever");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	/* with an aggregate: 10 new keys, then 15 more through the aggregate;
	 * once it refused, the rest never reach the table or the budget */
	passed = 0;
	passed += passes_from("198.19.0.", 1, 100);
	st = rstats(2);
	CHECK_EQ(passed, 25, "with an aggregate");
	CHECK_EQ(st.new_keys, 10, "new keys");
	CHECK_EQ(st.nk_refused, 16, "nk refused");
	CHECK_EQ(st.agg_dropped, 75, "agg dropped");
	CHECK(!xrl_keys_tracked_family(X, 4, &keys), "xrl_keys_tracked_family: %s", xrl_errmsg());
	CHECK_EQ(keys, 20, "20 keys in the table");
	CHECK_EQ(gstats().keys_inserted, 20, "global: keys inserted");
	CHECK_EQ(xrl_keys_evicted_estimate(&(struct xrl_global_stats){ .keys_inserted = 20 }, keys), 0,
		 "no key evicted");
	/* a second later: 10 more new keys */
	xrl_test_clock_set(X, T0 + SEC);
	passed = 0;
	passed += passes_from("198.18.1.", 1, 50);
	CHECK_EQ(passed, 10, "a second later: 10 more new keys");
	teardown();
}

/* Without new-keys, the default budget (half the table at once, then a
 * sixteenth a second) keeps a flood of new sources from evicting a real
 * source's drained bucket: it stays limited. */
TEST(new_keys_default_keeps_real_source)
{
	char src[32];
	int passed = 0;

	one_cpu();
	setup();	/* a table of 4096 keys */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 2 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.19.255.1"), PASS, "a packet from 198.19.255.1 passes");
	CHECK_EQ(run_from("198.19.255.1"), PASS, "a packet from 198.19.255.1 passes");
	CHECK_EQ(run_from("198.19.255.1"), DROP, "a packet from 198.19.255.1 is dropped");
	for (int i = 0; i < 6000; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		passed += run_from(src) == PASS;
	}
	CHECK_EQ(passed, 2048 - 1, "the real source took one");
	CHECK_EQ(rstats(1).nk_refused, 6000 - 2047, "rule 1: nk refused");
	xrl_test_clock_set(X, T0 + 1);	/* past the cache's nanosecond: the bucket */
	CHECK_EQ(run_from("198.19.255.1"), DROP, "a packet from 198.19.255.1 is dropped");
	CHECK_EQ(bucket_of(1, "198.19.255.1").tat != 0, 1, "the real source has its bucket");
	teardown();
}

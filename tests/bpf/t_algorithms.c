// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The algorithms: GCRA, fixed and sliding windows, byte rates,
 * dry-run rules, exactness across CPUs.
 */
#include "harness.h"

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
TEST(concurrency_exact)
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
		CHECK(!RULES(rule), "the rule set commits: %s", xrl_errmsg());
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
		CHECK_EQ(st.passed_packets + st.dropped_packets, 40000, "every packet counted");
		CHECK_EQ(st.new_keys, 1, "one key, one bucket");
	}
	if (ncpu < 2)
		fprintf(stderr, "    note: one CPU online; the threads did not run in parallel\n");
	teardown();
}

/* ---- algorithms, byte rates, per-rule dry-run ---- */

/* n packets from src at the test clock t; how many passed */
static int burst_at(const char *src, __u64 t, int n)
{
	int ok = 0;

	xrl_test_clock_set(X, t);
	for (int i = 0; i < n; i++)
		ok += run_from(src) == PASS;
	return ok;
}

/* The brief's example through the program: limit 10 per second; 10 of 15
 * pass; halfway into the next window 5 more for the sliding window, 10 for
 * the fixed one; the token bucket (burst 10, 10/s) refills 5 by then. */
TEST(algorithms)
{
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 10/s algo sliding-window id 1",
		     "rule add 198.18.2.0/24 rate 10/s algo fixed-window id 2",
		     "rule add 198.18.3.0/24 rate 10/s burst 10 id 3"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(burst_at("198.18.1.1", T0, 15), 10, "sliding window: 10 in the first window");
	CHECK_EQ(burst_at("198.18.2.1", T0, 15), 10, "fixed window: 10 in the first window");
	CHECK_EQ(burst_at("198.18.3.1", T0, 15), 10, "token bucket: its burst of 10");
	CHECK_EQ(burst_at("198.18.1.1", T0 + SEC + SEC / 2, 15), 5,
		 "sliding window: half the previous window still counts");
	CHECK_EQ(burst_at("198.18.2.1", T0 + SEC + SEC / 2, 15), 10,
		 "fixed window: a fresh window admits 10");
	CHECK_EQ(burst_at("198.18.3.1", T0 + SEC + SEC / 2, 15), 10, "1.5 s of refill");
	/* each key its own windows; a lagging clock counts in the newest */
	CHECK_EQ(burst_at("198.18.2.2", T0 + 2 * SEC, 3), 3,
		 "each key its own windows; a lagging clock counts in the newest");
	CHECK_EQ(burst_at("198.18.2.2", T0 + 2 * SEC - 1, 10), 7,
		 "a lagging clock counts in the newest window");
	CHECK_EQ(burst_at("198.18.1.1", T0 + 10 * SEC, 15), 10, "idle: empty again");
	CHECK_EQ(rstats(1).passed_packets, 25, "rule 1: passed packets");
	CHECK_EQ(rstats(1).dropped_packets, 20, "rule 1: dropped packets");
	CHECK_EQ(rstats(2).new_keys, 2, "rule 2: new keys");
	teardown();
}

/* The fixed window's 2x at an edge, the sliding window's 1.1x. */
TEST(window_edge)
{
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 100/min algo sliding-window",
		     "rule add 198.18.2.0/24 rate 100/min algo fixed-window"),
	      "the rule set commits: %s", xrl_errmsg());
	/* T0 = 1000 s is 16 min 40 s: the minute ends at 1020 s */
	CHECK_EQ(burst_at("198.18.1.1", 1020 * SEC - SEC, 150) +
		 burst_at("198.18.1.1", 1020 * SEC + SEC, 150), 100 + 2, "floor(100/60)");
	CHECK_EQ(burst_at("198.18.2.1", 1020 * SEC - SEC, 150) +
		 burst_at("198.18.2.1", 1020 * SEC + SEC, 150), 200, "fixed window: 100 in each minute");
	teardown();
}

/* Byte rates: the frame length is the cost, for each algorithm. */
TEST(byte_rates)
{
	struct pkt_spec big = { .src = "198.18.1.1", .payload = 458 };	/* 500-byte frame */
	uint8_t buf[512];
	size_t len = pkt_build(buf, &big);
	int ok = 0;

	CHECK_EQ(len, 500, "a 500-byte frame");
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 80kbit burst 5000 id 1",
		     "rule add 198.18.2.0/24 rate 10kbps algo fixed-window id 2",
		     "rule add 198.18.3.0/24 rate 10kbps algo sliding-window id 3"),
	      "the rule set commits: %s", xrl_errmsg());
	/* token bucket: 5000 bytes of burst, 10000 bytes/s */
	for (int i = 0; i < 20; i++)
		ok += run_raw(buf, len) == PASS;
	CHECK_EQ(ok, 10, "token bucket: 5000 bytes of burst, 10000 bytes/s");
	xrl_test_clock_set(X, T0 + SEC / 5);	/* 2000 bytes refilled */
	ok = 0;
	for (int i = 0; i < 10; i++)
		ok += run_raw(buf, len) == PASS;
	CHECK_EQ(ok, 4, "2,000 bytes refilled: 4 frames of 500");
	for (int k = 2; k <= 3; k++) {
		char src[32];

		snprintf(src, sizeof(src), "198.18.%d.1", k);
		big.src = src;
		len = pkt_build(buf, &big);
		xrl_test_clock_set(X, T0);
		ok = 0;
		for (int i = 0; i < 40; i++)
			ok += run_raw(buf, len) == PASS;
		CHECK(ok == 20, "rule %d: %d of 500-byte frames passed", k, ok);
		CHECK_EQ(rstats(k).passed_bytes, 10000, "rule k: passed bytes");
		CHECK_EQ(rstats(k).dropped_bytes, 10000, "rule k: dropped bytes");
	}
	teardown();
}

/* A dry-run rule meters and counts would-drops apart, passing everything,
 * while its neighbour enforces; the dry-run mode counts the same way. */
TEST(rule_dry_run)
{
	struct xrl_rule_stats a, b;

	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 1/h burst 2 id 1 dry-run",
		     "rule add 198.18.2.0/24 rate 1/h burst 2 id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(burst_at("198.18.1.1", T0, 5), 5, "the dry-run rule passes every packet");
	CHECK_EQ(burst_at("198.18.2.1", T0, 5), 2, "the enforcing rule its burst of 2");
	a = rstats(1);
	b = rstats(2);
	CHECK_EQ(a.passed_packets, 5, "dry-run: 5 passed");
	CHECK_EQ(a.dropped_packets, 0, "dry-run: nothing dropped");
	CHECK_EQ(a.would_drop_packets, 3, "dry-run: 3 would-drops");
	CHECK(a.would_drop_bytes > 0 && a.would_drop_bytes == 3 * (a.passed_bytes / 5), "bytes");
	CHECK_EQ(b.dropped_packets, 3, "enforcing: 3 dropped");
	CHECK_EQ(b.would_drop_packets, 0, "enforcing: no would-drop");
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 3, "global: dropped packets");
	/* the mode: the enforcing rule's drops become would-drops too */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	CHECK_EQ(burst_at("198.18.2.1", T0, 4), 4,
		 "the mode: the enforcing rule's drops become would-drops too");
	CHECK_EQ(rstats(2).dropped_packets, 3, "rule 2: dropped packets");
	CHECK_EQ(rstats(2).would_drop_packets, 4, "rule 2: would drop packets");
	/* fail-closed is the operator's word: a dry-run rule drops too */
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(burst_at("198.18.1.1", T0, 1), 0,
		 "fail-closed is the operator's word: a dry-run rule drops too");
	teardown();
}

/* Two CPUs on one key, with each window algorithm: no over-admission.
 * The sliding window starts half-way into a window after 600 admitted in
 * the previous one: exactly 1000 - 300 more may pass. The clock is the
 * test clock so that the ideal is known; both CPUs race on the words. */
static void race_round(const char *rule, __u32 id, __u64 t, __u64 want)
{
	struct hammer h[2];
	pthread_barrier_t start;
	pthread_t th[2];
	struct xrl_rule_stats st;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	CHECK(!RULES(rule), "the rule set commits: %s", xrl_errmsg());
	if (id % 2 == 0) {	/* sliding: fill the previous window first */
		CHECK_EQ(burst_at("198.18.0.1", t - 60 * SEC, 600), 600,
			 "the previous window filled: 600");
	}
	xrl_test_clock_set(X, t);
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		h[i] = (struct hammer){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X), .start = &start };
		pthread_create(&th[i], NULL, hammer, &h[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		CHECK(!h[i].err, "test run: %s", strerror(h[i].err));
	}
	pthread_barrier_destroy(&start);
	st = rstats(id);
	CHECK(st.passed_packets == want, "%s: %llu passed, want %llu", rule,
	      (unsigned long long)st.passed_packets, (unsigned long long)want);
}

TEST(concurrency_exact_windows)
{
	setup();
	for (int round = 1; round <= 6; round++) {
		char rule[128];

		if (round % 2) {
			snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1000/h algo fixed-window id %d", round);
			race_round(rule, round, T0 + round * 3600 * SEC, 1000);
		} else {
			snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1000/min algo sliding-window id %d", round);
			/* 600 in the previous minute + 700 in this one */
			race_round(rule, round, 60 * SEC * (100 + round * 10) + 30 * SEC, 600 + 700);
		}
	}
	teardown();
}

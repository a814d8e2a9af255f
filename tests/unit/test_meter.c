// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests of the metering maths (include/xrl_meter.h) with a fake clock:
 * the very code the XDP program runs.
 */
#include <stdint.h>
#include "testlib.h"
#include "xrl_meter.h"

#define SEC	XRL_NSEC_PER_SEC

struct bucket {
	__u64 tat, interval, limit;
};

static void bucket_init(struct bucket *b, __u64 count, __u64 period, __u64 burst)
{
	b->tat = 0;
	b->interval = xrl_rate_interval(count, period);
	b->limit = xrl_burst_limit(b->interval, burst);
}

/* Offer n packets at now_ns; return how many pass. */
static unsigned offer(struct bucket *b, __u64 now_ns, unsigned n)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < n; i++) {
		__u64 nt;

		if (xrl_gcra(b->tat, xrl_ns_to_tu(now_ns), b->interval, b->limit, 1, &nt)) {
			b->tat = nt;
			ok++;
		}
	}
	return ok;
}

/* The design brief's worked example: capacity 5, refill 2 per second. */
static void test_seed_example(void)
{
	struct bucket b;
	__u64 t0 = 1000 * SEC;

	bucket_init(&b, 2, XRL_PERIOD_SEC, 5);
	b.tat = xrl_ns_to_tu(t0);	/* a new key: full bucket */
	CHECK_EQ(offer(&b, t0, 10), 5);
	CHECK_EQ(offer(&b, t0 + SEC, 10), 2);
	CHECK_EQ(offer(&b, t0 + SEC + 3600 * SEC, 10), 5);
}

static void test_refill_is_lazy_and_exact(void)
{
	struct bucket b;
	__u64 t = 5 * SEC;

	bucket_init(&b, 2, XRL_PERIOD_SEC, 5);
	CHECK_EQ(offer(&b, t, 5), 5);
	/* one token every 500 ms, not before */
	CHECK_EQ(offer(&b, t + 499999999, 1), 0);
	CHECK_EQ(offer(&b, t + 500000000, 1), 1);
	CHECK_EQ(offer(&b, t + 500000000, 1), 0);
	CHECK_EQ(offer(&b, t + 1000000000, 1), 1);
}

static void test_one_per_hour(void)
{
	struct bucket b;
	__u64 t = 10 * SEC;

	bucket_init(&b, 1, XRL_PERIOD_HOUR, 1);
	CHECK(b.interval != 0, "1/h is in range");
	CHECK_EQ(offer(&b, t, 3), 1);
	CHECK_EQ(offer(&b, t + 3599 * SEC, 1), 0);
	CHECK_EQ(offer(&b, t + 3600 * SEC, 1), 1);
}

/* 100M/s: emission interval 10 ns = 640 units, exact. */
static void test_hundred_million_per_second(void)
{
	struct bucket b;
	__u64 t = 7 * SEC, ok = 0;

	bucket_init(&b, 100000000, XRL_PERIOD_SEC, 100);
	CHECK_EQ(b.interval, 640);
	/* offer one packet every 5 ns (twice the rate) for 1 ms */
	for (__u64 dt = 0; dt < 1000000; dt += 5)
		ok += offer(&b, t + dt, 1);
	/* burst + rate * duration, to within one packet */
	CHECK(ok >= 100 + 100000 - 1 && ok <= 100 + 100000 + 1, "admitted %llu",
	      (unsigned long long)ok);
}

/* Long-run accuracy at a rate whose interval is not a whole number of ns. */
static void test_long_run_accuracy(void)
{
	struct bucket b;
	__u64 t = 3 * SEC, ok = 0;

	bucket_init(&b, 3, XRL_PERIOD_SEC, 10);
	for (__u64 ms = 0; ms <= 100000; ms++)	/* 100 s, 1 packet/ms */
		ok += offer(&b, t + ms * 1000000, 1);
	CHECK(ok >= 10 + 300 - 1 && ok <= 10 + 300 + 1, "admitted %llu", (unsigned long long)ok);
}

static void test_burst_one(void)
{
	struct bucket b;
	__u64 t = SEC;

	bucket_init(&b, 10, XRL_PERIOD_SEC, 1);	/* T = 100 ms */
	CHECK_EQ(offer(&b, t, 2), 1);
	CHECK_EQ(offer(&b, t + 99999999, 1), 0);
	CHECK_EQ(offer(&b, t + 100000000, 1), 1);
	CHECK_EQ(offer(&b, t + 200000000, 1), 1);
}

/* A clock that jumps far ahead finds a full bucket, never more. */
static void test_clock_jump(void)
{
	struct bucket b;
	__u64 t = SEC;

	bucket_init(&b, 1, XRL_PERIOD_SEC, 4);
	CHECK_EQ(offer(&b, t, 10), 4);
	CHECK_EQ(offer(&b, t + (1ULL << 50), 10), 4);	/* 13 days later */
	/* 2^57 ns (4.5 years) of uptime in units is 2^63: the top of the
	 * signed range. Still a full bucket and no more. */
	t = (1ULL << 57) - SEC;
	b.tat = 0;
	CHECK_EQ(offer(&b, t, 10), 4);
	CHECK_EQ(offer(&b, t + 2 * SEC, 10), 2);
}

/* The 64-bit unit clock wraps after ~9 years of uptime: no harm. */
static void test_clock_wrap(void)
{
	struct bucket b;
	__u64 t = (UINT64_MAX >> XRL_TU_SHIFT) - SEC / 2;	/* wraps in 0.5 s */

	bucket_init(&b, 2, XRL_PERIOD_SEC, 2);
	b.tat = xrl_ns_to_tu(t);
	CHECK_EQ(offer(&b, t, 5), 2);
	CHECK_EQ(offer(&b, t + SEC, 5), 2);	/* after the wrap */
	CHECK_EQ(offer(&b, t + SEC, 5), 0);
}

static void test_rate_range(void)
{
	CHECK_EQ(xrl_rate_interval(0, XRL_PERIOD_SEC), 0);
	CHECK_EQ(xrl_rate_interval(1, 0), 0);
	CHECK(xrl_rate_interval(1, XRL_PERIOD_HOUR) != 0, "1/h accepted");
	CHECK_EQ(xrl_rate_interval(1, XRL_PERIOD_HOUR), 3600ULL * SEC << XRL_TU_SHIFT);
	CHECK(xrl_rate_interval(100000000, XRL_PERIOD_SEC) != 0, "100M/s accepted");
	CHECK_EQ(xrl_rate_interval(100000001, XRL_PERIOD_SEC), 0);
	CHECK(xrl_rate_interval(6000000000ULL, XRL_PERIOD_MIN) != 0, "6e9/min accepted");
	CHECK_EQ(xrl_rate_interval(6000000001ULL, XRL_PERIOD_MIN), 0);
	CHECK_EQ(xrl_rate_interval(UINT64_MAX, XRL_PERIOD_HOUR), 0);
	/* 2 per second: exactly 0.5 s */
	CHECK_EQ(xrl_rate_interval(2, XRL_PERIOD_SEC), (SEC / 2) << XRL_TU_SHIFT);
	/* 3 per second rounds to the nearest unit */
	CHECK_EQ(xrl_rate_interval(3, XRL_PERIOD_SEC), ((SEC << XRL_TU_SHIFT) + 1) / 3);
}

static void test_burst_range(void)
{
	__u64 hour = xrl_rate_interval(1, XRL_PERIOD_HOUR);

	CHECK_EQ(xrl_burst_limit(640, 0), 0);
	CHECK_EQ(xrl_burst_limit(0, 5), 0);
	CHECK_EQ(xrl_burst_limit(640, 5), 3200);
	/* the tolerance must stay within 2^61 units: no overflow */
	CHECK(xrl_burst_limit(hour, 1000) != 0, "1/h burst 1000 (41 days) accepted");
	CHECK_EQ(xrl_burst_limit(hour, 100000), 0);
	CHECK_EQ(xrl_burst_limit(640, UINT32_MAX) , 640ULL * UINT32_MAX);
	CHECK_EQ(xrl_burst_limit(UINT64_MAX, 2), 0);
}

static void test_tokens(void)
{
	struct bucket b;
	__u64 t = 100 * SEC;

	bucket_init(&b, 2, XRL_PERIOD_SEC, 5);
	b.tat = 0;
	CHECK_EQ(xrl_gcra_tokens(b.tat, xrl_ns_to_tu(t), b.interval, b.limit), 5);
	offer(&b, t, 3);
	CHECK_EQ(xrl_gcra_tokens(b.tat, xrl_ns_to_tu(t), b.interval, b.limit), 2);
	offer(&b, t, 5);
	CHECK_EQ(xrl_gcra_tokens(b.tat, xrl_ns_to_tu(t), b.interval, b.limit), 0);
	CHECK_EQ(xrl_gcra_tokens(b.tat, xrl_ns_to_tu(t + SEC), b.interval, b.limit), 2);
}

/* A cost of several units (room for byte-rate rules). */
static void test_cost(void)
{
	__u64 iv = xrl_rate_interval(10, XRL_PERIOD_SEC), lim = xrl_burst_limit(iv, 10);
	__u64 now = xrl_ns_to_tu(SEC), tat = now, nt;

	CHECK(xrl_gcra(tat, now, iv, lim, 10, &nt), "a full bucket takes 10");
	CHECK(!xrl_gcra(tat, now, iv, lim, 11, &nt), "but not 11");
}

/* ---- window algorithms ---- */

struct win {
	int sliding;
	__u64 s[2], window_ns, limit;
};

static void win_init(struct win *w, int sliding, __u64 limit, __u64 window_ns, __u64 now_ns)
{
	w->sliding = sliding;
	w->limit = limit;
	w->window_ns = window_ns;
	w->s[0] = w->s[1] = xrl_win_empty(now_ns, window_ns);
}

/* Offer n requests of `cost` at now_ns; return how many pass. */
static unsigned win_offer_cost(struct win *w, __u64 now_ns, unsigned n, __u64 cost)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < n; i++) {
		__u64 nx;
		int k;

		if (w->sliding) {
			k = xrl_sliding_window(w->s[0], w->s[1], now_ns, w->window_ns,
					       w->limit, cost, &nx);
			if (k < 0)
				continue;
			w->s[k] = nx;
		} else {
			if (!xrl_fixed_window(w->s[0], now_ns, w->window_ns, w->limit, cost, &nx))
				continue;
			w->s[0] = nx;
		}
		ok++;
	}
	return ok;
}

static unsigned win_offer(struct win *w, __u64 now_ns, unsigned n)
{
	return win_offer_cost(w, now_ns, n, 1);
}

/* The brief's example: limit 10 per second; 10 of 15 immediate requests
 * pass; halfway into the next window only 5 more; a fixed window at the
 * same point allows 10 more: 20 within a short span. */
static void test_brief_windows(void)
{
	struct win sw, fw;
	__u64 t0 = 1000 * SEC;	/* a window's start */

	win_init(&sw, 1, 10, SEC, t0);
	win_init(&fw, 0, 10, SEC, t0);
	CHECK_EQ(win_offer(&sw, t0, 15), 10);
	CHECK_EQ(win_offer(&fw, t0, 15), 10);
	CHECK_EQ(win_offer(&sw, t0 + SEC + SEC / 2, 15), 5);
	CHECK_EQ(win_offer(&fw, t0 + SEC + SEC / 2, 15), 10);
	/* the 2x at the boundary: 10 at the end of one window, 10 at the
	 * start of the next, 2 ms apart */
	win_init(&fw, 0, 10, SEC, t0);
	CHECK_EQ(win_offer(&fw, t0 + SEC - 1000000, 15) + win_offer(&fw, t0 + SEC + 1000000, 15), 20);
	/* the sliding window: 10 + floor(10 * 0.999) = 9 counted: 1 more */
	win_init(&sw, 1, 10, SEC, t0);
	CHECK_EQ(win_offer(&sw, t0 + SEC - 1000000, 15) + win_offer(&sw, t0 + SEC + 1000000, 15), 11);
}

/* The weight of the previous window falls linearly over the current one:
 * 10 in window 0; at 30 % of window 1 it still counts floor(7) = 7. */
static void test_sliding_weight(void)
{
	struct win sw;
	__u64 t0 = 50 * SEC;

	win_init(&sw, 1, 10, SEC, t0);
	CHECK_EQ(win_offer(&sw, t0, 10), 10);
	CHECK_EQ(win_offer(&sw, t0 + SEC + 300000000, 10), 3);
	/* at 90 %: 10 * 0.1 = 1 of the previous, plus the 3: 6 more */
	CHECK_EQ(win_offer(&sw, t0 + SEC + 900000000, 10), 6);
	/* a fractional weight: 10 * 0.05 = 0.5 of the previous counts as
	 * 0.5 (estimated < limit), so 9.5 + 1 > 10 is still refused only
	 * when estimated >= 10: in window 2 at 95 %: prev 10 (window 1's
	 * 3 + 6 = 9... ) checked through the formula below */
	CHECK_EQ(xrl_sliding_weighted(9, 950000000, SEC), 0);	/* floor(0.45) */
	CHECK_EQ(xrl_sliding_weighted(10, 500000000, SEC), 5);
	CHECK_EQ(xrl_sliding_weighted(10, 0, SEC), 10);
	CHECK_EQ(xrl_sliding_weighted(10, SEC, SEC), 0);
}

/* Estimated 9.5 < 10 passes (the brief's test is estimated < limit);
 * estimated 10 does not. */
static void test_sliding_fraction(void)
{
	__u64 t = 7 * SEC, nx;
	/* window 6 (even, word 0): 19 admitted; window 7 (odd, word 1) empty */
	__u64 prev = xrl_win_word(6, 19), cur = xrl_win_word(5, 0);

	CHECK(xrl_sliding_window(prev, cur, t + SEC / 2, SEC, 10, 1, &nx) == 1,
	      "estimated 9.5 < 10 passes");
	CHECK_EQ(nx, xrl_win_word(7, 1));
	CHECK(xrl_sliding_window(prev, nx, t + SEC / 2, SEC, 10, 1, &nx) == -1,
	      "estimated 10.5 refuses");
	prev = xrl_win_word(6, 20);
	CHECK(xrl_sliding_window(prev, cur, t + SEC / 2, SEC, 10, 1, &nx) == -1,
	      "estimated 10 refuses");
}

/* A long idle gap: both windows are forgotten, a full limit again. */
static void test_window_idle(void)
{
	struct win sw, fw;
	__u64 t0 = 60 * SEC;	/* a minute window's start */

	win_init(&sw, 1, 5, XRL_PERIOD_MIN, t0);
	win_init(&fw, 0, 5, XRL_PERIOD_MIN, t0);
	CHECK_EQ(win_offer(&sw, t0, 9), 5);
	CHECK_EQ(win_offer(&fw, t0, 9), 5);
	/* two windows later: previous (window +1) was empty */
	CHECK_EQ(win_offer(&sw, t0 + 2 * XRL_PERIOD_MIN, 9), 5);
	CHECK_EQ(win_offer(&fw, t0 + 2 * XRL_PERIOD_MIN, 9), 5);
	/* 2^32 windows later the window number wraps to the same value:
	 * 136 years at 1 s; a day is plenty to show the roll-over */
	CHECK_EQ(win_offer(&sw, t0 + 86400 * SEC, 9), 5);
	CHECK_EQ(win_offer(&fw, t0 + 86400 * SEC, 9), 5);
	/* exactly one window later: the sliding one weighs the previous */
	CHECK_EQ(win_offer(&sw, t0 + 86400 * SEC + XRL_PERIOD_MIN, 9), 0);
	CHECK_EQ(win_offer(&fw, t0 + 86400 * SEC + XRL_PERIOD_MIN, 9), 5);
}

/* A clock that lags (another CPU read it a tick earlier) counts in the
 * newest window seen; a clock that jumps ahead finds empty windows. */
static void test_window_clock_jumps(void)
{
	struct win sw, fw;
	__u64 t0 = 100 * SEC;

	win_init(&sw, 1, 10, SEC, t0);
	win_init(&fw, 0, 10, SEC, t0);
	CHECK_EQ(win_offer(&fw, t0 + SEC, 4), 4);	/* window 101 */
	CHECK_EQ(win_offer(&fw, t0 + SEC - 1, 10), 6);	/* lagging: still 101 */
	CHECK_EQ(win_offer(&sw, t0 + SEC, 4), 4);
	CHECK_EQ(win_offer(&sw, t0 + SEC - 1, 10), 6);
	CHECK_EQ(sw.s[1] >> 32, 101);			/* nothing went to 100 */
	/* far ahead */
	CHECK_EQ(win_offer(&fw, t0 + (1ULL << 50), 20), 10);
	CHECK_EQ(win_offer(&sw, t0 + (1ULL << 50), 20), 10);
	/* near the top of the 64-bit clock */
	/* near the top of the 64-bit clock: the window number above 2^32
	 * is kept modulo 2^32 */
	t0 = (UINT64_MAX / SEC - 20) * SEC;
	win_init(&sw, 1, 10, SEC, t0);
	CHECK_EQ(win_offer(&sw, t0, 20), 10);
	CHECK_EQ(win_offer(&sw, t0 + SEC + SEC / 2, 20), 5);
}

/* Limits up to 2^32 - 1 per window, with byte-sized costs. */
static void test_window_largest(void)
{
	struct win sw, fw;
	__u64 t0 = 3600 * SEC, nx;

	win_init(&fw, 0, XRL_WIN_COUNT_MAX, XRL_PERIOD_HOUR, t0);
	CHECK_EQ(win_offer_cost(&fw, t0, 1, XRL_WIN_COUNT_MAX), 1);
	CHECK_EQ(win_offer_cost(&fw, t0, 1, 1), 0);
	CHECK_EQ((__u32)fw.s[0], (__u32)XRL_WIN_COUNT_MAX);
	win_init(&sw, 1, XRL_WIN_COUNT_MAX, XRL_PERIOD_HOUR, t0);
	CHECK_EQ(win_offer_cost(&sw, t0, 1, XRL_WIN_COUNT_MAX - 1), 1);
	CHECK_EQ(win_offer_cost(&sw, t0, 2, 1), 1);
	/* half an hour into the next: floor((2^32 - 1) / 2) still counts */
	CHECK_EQ(xrl_window_left(1, sw.s[0], sw.s[1], t0 + 5400 * SEC, XRL_PERIOD_HOUR,
				 XRL_WIN_COUNT_MAX), XRL_WIN_COUNT_MAX - XRL_WIN_COUNT_MAX / 2);
	/* no overflow of previous * (W - e): at the start the full count */
	CHECK_EQ(xrl_sliding_weighted(XRL_WIN_COUNT_MAX, 0, XRL_PERIOD_HOUR), XRL_WIN_COUNT_MAX);
	CHECK_EQ(xrl_sliding_weighted(XRL_WIN_COUNT_MAX, 1000, XRL_PERIOD_HOUR),
		 XRL_WIN_COUNT_MAX - 2);	/* floor((2^32-1)(1 - 1/3.6e9)) */
	CHECK(!xrl_fixed_window(xrl_win_word(1, 0), SEC, SEC, 100, 101, &nx), "cost over limit");
}

static void test_window_left(void)
{
	struct win sw;
	__u64 t0 = 20 * SEC;

	win_init(&sw, 1, 10, SEC, t0);
	CHECK_EQ(xrl_window_left(1, sw.s[0], sw.s[1], t0, SEC, 10), 10);
	win_offer(&sw, t0, 7);
	CHECK_EQ(xrl_window_left(1, sw.s[0], sw.s[1], t0, SEC, 10), 3);
	CHECK_EQ(xrl_window_left(1, sw.s[0], sw.s[1], t0 + SEC + SEC / 2, SEC, 10), 7);
	CHECK_EQ(xrl_window_left(0, sw.s[0], 0, t0, SEC, 10), 3);	/* window 20: word 0 */
}

/*
 * "Refused until": for every refused packet, every later packet before
 * xrl_gcra_refused_until() is refused whatever passed in between (TAT only
 * grows), and one at that time passes when nothing else did: the hot-key
 * cache is exact. Over rates and bursts, with the clock in odd steps.
 */
static void test_refused_until_exact(void)
{
	static const __u64 rates[][3] = {	/* count, period, burst */
		{ 1, XRL_PERIOD_SEC, 1 }, { 100, XRL_PERIOD_SEC, 10 }, { 7, XRL_PERIOD_MIN, 3 },
		{ 100000000, XRL_PERIOD_SEC, 1000 }, { 3, XRL_PERIOD_SEC, 5 },
	};

	for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
		struct bucket b;
		__u64 now = xrl_ns_to_tu(77 * SEC), nt, until = 0, u2;
		unsigned refused = 0;

		bucket_init(&b, rates[k][0], rates[k][1], rates[k][2]);
		b.tat = now;
		for (int i = 0; i < 20000 && refused < 200; i++) {
			if (xrl_gcra(b.tat, now, b.interval, b.limit, 1, &nt)) {
				/* passed: never before a known "refused until" */
				CHECK(!until || !xrl_before(now, until), "rate %llu: passed %llu before %llu",
				      (unsigned long long)rates[k][0], (unsigned long long)now,
				      (unsigned long long)until);
				b.tat = nt;
			} else {
				refused++;
				u2 = xrl_gcra_refused_until(b.tat, b.interval, b.limit, 1);
				CHECK(xrl_before(now, u2), "refused at %llu, until %llu",
				      (unsigned long long)now, (unsigned long long)u2);
				/* the last instant before: still refused; at it: passes */
				CHECK(!xrl_gcra(b.tat, u2 - 1, b.interval, b.limit, 1, &nt), "just before");
				CHECK(xrl_gcra(b.tat, u2, b.interval, b.limit, 1, &nt), "at until");
				until = u2;
			}
			now += b.interval / 3 + 1;
		}
		CHECK(refused > 0, "rate %llu: nothing refused", (unsigned long long)rates[k][0]);
	}
}

/*
 * "Refused until" for every algorithm and for costs above 1 (byte rules):
 * a statement "a cost of c or more is refused until u", made at each
 * refusal, must hold for every later offer whatever passed in between; and
 * it is tight where the cache relies on it being so: the instant before u
 * the snapshot refuses, at u it admits (the token bucket; the fixed
 * window's next window; the sliding window within its window).
 */
struct stmt {
	__u64 until, cost;
};

static __u64 xs_next(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_refused_until_every_algorithm(void)
{
	static const struct {
		int algo;		/* 0 gcra, 1 fixed, 2 sliding */
		__u64 limit, window_ns, burst, maxcost;
	} cfg[] = {
		{ 0, 10, SEC, 10, 1 }, { 0, 12000, SEC, 1600, 700 }, { 0, 3, XRL_PERIOD_MIN, 2, 3 },
		{ 1, 10, SEC, 0, 1 }, { 1, 1500, SEC, 0, 600 }, { 1, 7, 250000000, 0, 2 },
		{ 2, 10, SEC, 0, 1 }, { 2, 1500, SEC, 0, 600 }, { 2, 100, 3 * SEC / 2, 0, 5 },
		{ 2, 4000000000ULL, XRL_PERIOD_HOUR, 0, 1 },
	};
	__u64 x = 88172645463325252ULL;

	for (size_t k = 0; k < sizeof(cfg) / sizeof(cfg[0]); k++) {
		struct stmt st[64];
		int n = 0, algo = cfg[k].algo;
		__u64 now = 1000 * SEC + 12345, W = cfg[k].window_ns, s0, s1, tat = 0, iv = 0, lim = 0;
		unsigned refused = 0, made = 0, r;

		if (algo == 0) {
			iv = xrl_rate_interval(cfg[k].limit, W);
			lim = xrl_burst_limit(iv, cfg[k].burst);
			tat = xrl_ns_to_tu(now);
		}
		/* windows: from a window's start, the previous one full, the
		 * current one half */
		now = (now / W + 2) * W + 12345;
		s0 = s1 = xrl_win_empty(now, W);
		if (algo == 2) {
			__u32 wn = now / W;
			__u64 pw = xrl_win_word(wn - 1, cfg[k].limit);
			__u64 cw = xrl_win_word(wn, cfg[k].limit / 2);

			s0 = wn & 1 ? pw : cw;
			s1 = wn & 1 ? cw : pw;
		}
		for (int i = 0; i < 40000; i++) {
			__u64 c = 1 + xs_next(&x) % cfg[k].maxcost, nx, u = 0, t = xrl_ns_to_tu(now);
			int ok, w = 0;

			if (algo == 0) {
				ok = xrl_gcra(tat, t, iv, lim, c, &nx);
			} else if (algo == 1) {
				ok = xrl_fixed_window(s0, now, W, cfg[k].limit, c, &nx);
			} else {
				w = xrl_sliding_window(s0, s1, now, W, cfg[k].limit, c, &nx);
				ok = w >= 0;
			}
			/* every statement made so far holds */
			for (int j = 0; j < n; j++)
				if (c >= st[j].cost && xrl_before(t, st[j].until))
					CHECK(!ok, "algo %d cfg %zu: cost %llu passed at %llu before %llu (cost %llu)",
					      algo, k, (unsigned long long)c, (unsigned long long)t,
					      (unsigned long long)st[j].until, (unsigned long long)st[j].cost);
			if (ok) {
				if (algo == 0)
					tat = nx;
				else if (algo == 1 || w == 0)
					s0 = nx;
				else
					s1 = nx;
			} else {
				refused++;
				if (algo == 0) {
					u = xrl_gcra_refused_until(tat, iv, lim, c);
					if (xrl_before(t, u)) {
						CHECK(!xrl_gcra(tat, u - 1, iv, lim, c, &nx), "gcra: just before");
						CHECK(xrl_gcra(tat, u, iv, lim, c, &nx) || c * iv > lim,
						      "gcra: at until");
					} else {
						u = 0;	/* a cost over the burst: no time */
					}
				} else if (algo == 1) {
					u = xrl_fixed_refused_until(s0, now, W);
					if (u) {
						CHECK(!xrl_fixed_window(s0, u - 1, W, cfg[k].limit, c, &nx),
						      "fixed: just before");
						CHECK(xrl_fixed_window(s0, u, W, cfg[k].limit, c, &nx),
						      "fixed: at the next window");
					}
				} else {
					__u64 end = (now / W + 1) * W;

					u = xrl_sliding_refused_until(s0, s1, now, W, cfg[k].limit, c);
					if (u) {
						CHECK(u > now && u <= end, "sliding: %llu not in (now, end]",
						      (unsigned long long)u);
						CHECK(xrl_sliding_window(s0, s1, u - 1, W, cfg[k].limit, c, &nx) < 0,
						      "sliding: just before");
						if (u < end)
							CHECK(xrl_sliding_window(s0, s1, u, W, cfg[k].limit, c, &nx) >= 0,
							      "sliding: at until");
					}
				}
				if (u && algo) {
					u = xrl_ns_to_tu(u);
				}
				if (u) {
					made++;
					/* keep the live ones */
					int m = 0;

					for (int j = 0; j < n; j++)
						if (xrl_before(t, st[j].until))
							st[m++] = st[j];
					n = m;
					if (n < 64)
						st[n++] = (struct stmt){ u, c };
				}
			}
			/* odd steps: a third of a window, a whole idle one (not
			 * for a limit that 40,000 offers cannot reach), a 50th;
			 * mostly offers at about twice the limit */
			r = xs_next(&x) % 64;
			if (r == 0 && cfg[k].limit < 1000000)
				now += W / 3 + 7;
			else if (r == 1 && cfg[k].limit < 1000000)
				now += W + 1;
			else if (r < 6)
				now += xs_next(&x) % (W / 50 + 1);
			else
				now += xs_next(&x) % (W * cfg[k].maxcost / cfg[k].limit / 2 + 1);
		}
		CHECK(refused > 100 && made > 50, "cfg %zu: %u refused, %u statements", k, refused, made);
	}
}

/* Chunks: 1/100 of the burst shared among the CPUs, 1 .. XRL_CHUNK_MAX. */
static void test_chunk(void)
{
	CHECK_EQ(xrl_chunk(1, 2), 1);
	CHECK_EQ(xrl_chunk(50000, 2), 250);
	CHECK_EQ(xrl_chunk(50000, 0), 500);
	CHECK_EQ(xrl_chunk(1ULL << 32, 1), XRL_CHUNK_MAX);
	/* what CPUs hold is at most 1 % of the burst, once it exceeds 100 * ncpus */
	for (__u64 burst = 200; burst < 10000000; burst = burst * 3 + 1)
		for (__u32 n = 1; n <= 64; n *= 2)
			if (burst >= 100ULL * n && xrl_chunk(burst, n) < XRL_CHUNK_MAX)
				CHECK(n * xrl_chunk(burst, n) * 100 <= burst, "burst %llu, %u CPUs",
				      (unsigned long long)burst, n);
}

/* A GRO aggregate's segments: full ones of mtu - headers bytes, and the
 * rest; a packet within the MTU is one. */
static void test_segments(void)
{
	/* TCP with timestamps over IPv4: 20 + 32 bytes of headers, 1448 of
	 * payload a segment at MTU 1500 */
	CHECK_EQ(xrl_segments(1500, 52, 1500), 1);
	CHECK_EQ(xrl_segments(100, 52, 1500), 1);
	CHECK_EQ(xrl_segments(52 + 2 * 1448, 52, 1500), 2);
	CHECK_EQ(xrl_segments(52 + 2 * 1448 + 1, 52, 1500), 3);
	CHECK_EQ(xrl_segments(52 + 45 * 1448, 52, 1500), 45);
	CHECK_EQ(xrl_segments(65535, 52, 1500), 46);
	/* IPv6 and TCP without options: 60 bytes, 1440 a segment */
	CHECK_EQ(xrl_segments(60 + 10 * 1440, 60, 1500), 10);
	/* a jumbo MTU */
	CHECK_EQ(xrl_segments(52 + 7 * 8948, 52, 9000), 7);
	/* headers that leave no room: one */
	CHECK_EQ(xrl_segments(3000, 1500, 1500), 1);
	CHECK_EQ(xrl_segments(3000, 2000, 1500), 1);
	CHECK_EQ(xrl_segments(3000, 60, 0), 1);
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_seed_example);
	RUN(test_refill_is_lazy_and_exact);
	RUN(test_one_per_hour);
	RUN(test_hundred_million_per_second);
	RUN(test_long_run_accuracy);
	RUN(test_burst_one);
	RUN(test_clock_jump);
	RUN(test_clock_wrap);
	RUN(test_rate_range);
	RUN(test_burst_range);
	RUN(test_tokens);
	RUN(test_cost);
	RUN(test_brief_windows);
	RUN(test_sliding_weight);
	RUN(test_sliding_fraction);
	RUN(test_window_idle);
	RUN(test_window_clock_jumps);
	RUN(test_window_largest);
	RUN(test_window_left);
	RUN(test_refused_until_exact);
	RUN(test_refused_until_every_algorithm);
	RUN(test_chunk);
	RUN(test_segments);
	return tl_summary();
}

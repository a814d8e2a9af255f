// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The maths of xdp-rlctl suggest (user/lib/model/suggest.c) on a fake
 * clock: arrival times made up here, counted into windows, and every
 * proposal held to the data path's own token bucket (xrl_gcra() of
 * include/xrl_meter.h, the function the BPF program runs): the proposed
 * rate and burst admit every packet of the keys at or below the percentile
 * and hold the others to the rate. Without root (make check).
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "model/suggest.h"
#include "xrl_meter.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

/* arrivals of a source: `rate` a second, evenly spaced, from `start` for
 * `len` ns, plus a burst of `burst` packets 1 ms apart every `every` ns
 * (0: none); returns how many, written to t[] (sorted) */
struct src {
	__u64 rate, start, len, burst, every;
};

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static size_t arrivals(const struct src *s, __u64 **out)
{
	size_t n = 0, cap = s->rate * (s->len / SEC + 1) + 1 +
			   (s->every ? (s->len / s->every + 1) * s->burst : 0);
	__u64 *t = malloc(cap * sizeof(*t));

	for (__u64 i = 0; s->rate && i < s->rate * s->len / SEC; i++)
		t[n++] = s->start + i * SEC / s->rate;
	for (__u64 b = 0; s->every && s->start + b * s->every < s->start + s->len; b++)
		for (__u64 j = 0; j < s->burst; j++)
			t[n++] = s->start + b * s->every + s->every / 2 + j * MS;
	qsort(t, n, sizeof(*t), cmp_u64);
	*out = t;
	return n;
}

/* what the data path's GCRA, at rate/s and burst, admits of t[] */
static size_t gcra_admits(const __u64 *t, size_t n, __u64 rate, __u64 burst)
{
	__u64 interval = xrl_rate_interval(rate, SEC), limit = xrl_burst_limit(interval, burst);
	__u64 tat = 0, nt;
	size_t ok = 0;

	for (size_t i = 0; i < n; i++) {
		if (xrl_gcra(tat, xrl_ns_to_tu(t[i] + SEC), interval, limit, 1, &nt)) {
			tat = nt;
			ok++;
		}
	}
	return ok;
}

/* the smallest burst with which that GCRA admits every arrival */
static __u64 exact_burst(const __u64 *t, size_t n, __u64 rate)
{
	__u64 b = 1;

	while (gcra_admits(t, n, rate, b) < n)
		b++;
	return b;
}

static void test_suggest_count_and_peak(void)
{
	/* 100/s for 5 s, then 300/s for 1 s: windows of 100 ms */
	struct src a = { .rate = 100, .start = 0, .len = 5 * SEC };
	struct src b = { .rate = 300, .start = 5 * SEC, .len = SEC };
	__u64 *ta, *tb, c[60], c2[60];
	size_t na = arrivals(&a, &ta), nb = arrivals(&b, &tb);

	xrl_sg_count(ta, na, 100 * MS, c, 60);
	xrl_sg_count(tb, nb, 100 * MS, c2, 60);
	for (int i = 0; i < 60; i++)
		c[i] += c2[i];
	CHECK_EQ(c[0], 10, "100/s: 10 in the first 100 ms");
	CHECK_EQ(c[55], 30, "300/s: 30 in a window");
	CHECK_EQ(xrl_sg_windows_of(XRL_SG_PEAK_NS, 100 * MS), 50);
	CHECK_EQ(xrl_sg_windows_of(SEC, 3 * SEC), 1, "a window longer than the span is one");
	CHECK_EQ(xrl_sg_peak(c, 60, 10), 300, "the peak second");
	CHECK_EQ(xrl_sg_peak(c, 60, 1), 30, "the peak window");
	struct xrl_sg_time base = { 100 * MS, NULL };
	CHECK_EQ(xrl_sg_peak_rate(c, 60, 10, &base), 300, "the peak second's rate");
	/* walks that came late: the same packets over longer windows read
	 * as a lower rate, not as the windows' count */
	__u64 edges[61];
	for (int i = 0; i <= 60; i++)
		edges[i] = i * 120 * MS;
	base.edges = edges;
	CHECK_EQ(xrl_sg_peak_rate(c, 60, 10, &base) + 0.5, 250, "300 packets over 1.2 s");
	/* an arrival past the last window is not counted */
	__u64 late = 7 * SEC;
	xrl_sg_count(&late, 1, 100 * MS, c2, 60);
	CHECK_EQ(xrl_sg_peak(c2, 60, 60), 0);
	free(ta);
	free(tb);
}

static void test_suggest_percentile(void)
{
	double v[20];
	size_t rank;

	for (int i = 0; i < 20; i++)
		v[i] = 20 - i;	/* unsorted: 20 .. 1 */
	CHECK_EQ(xrl_sg_percentile(v, 20, 95, &rank), 19, "nearest rank");
	CHECK_EQ(rank, 19);
	CHECK_EQ(xrl_sg_percentile(v, 20, 100, &rank), 20);
	CHECK_EQ(xrl_sg_percentile(v, 20, 50, &rank), 10);
	CHECK_EQ(xrl_sg_percentile(v, 20, 1, &rank), 1);
	CHECK_EQ(rank, 1);
	CHECK_EQ(xrl_sg_percentile(v, 1, 95, &rank), 1, "one value");
	CHECK_EQ(xrl_sg_percentile(v, 0, 95, &rank), 0, "none");
	CHECK_EQ(rank, 0);
}

/* the burst from windows admits every packet under the data path's own
 * GCRA, and is at most a window's packets above the exact one */
static void test_suggest_burst_from_arrivals(void)
{
	static const struct src cases[] = {
		{ .rate = 100, .len = 5 * SEC, .burst = 30, .every = SEC },
		{ .rate = 50, .len = 4 * SEC, .burst = 80, .every = 2 * SEC },
		{ .rate = 200, .len = 3 * SEC },
		{ .rate = 0, .len = 3 * SEC, .burst = 25, .every = 500 * MS },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		__u64 *t, c[100], b, exact, top;
		size_t n = arrivals(&cases[k], &t);
		__u64 rate = cases[k].rate ? cases[k].rate * 3 / 2 : 20;
		struct xrl_sg_time tb = { 100 * MS, NULL };

		xrl_sg_count(t, n, 100 * MS, c, 100);
		b = xrl_sg_burst(c, 100, rate, &tb);
		exact = exact_burst(t, n, rate);
		top = xrl_sg_peak(c, 100, 1);
		CHECK(gcra_admits(t, n, rate, b) == n, "case %zu: burst %llu admits all", k,
		      (unsigned long long)b);
		CHECK(b >= exact && b <= exact + top, "case %zu: burst %llu, exact %llu, a window %llu",
		      k, (unsigned long long)b, (unsigned long long)exact, (unsigned long long)top);
		free(t);
	}
	/* the token model: a burst of 3 at 1 a window admits 3, then 1 a window */
	__u64 c[4] = { 5, 5, 0, 1 }, out[4] = { 0 };
	struct xrl_sg_time sec = { SEC, NULL };
	CHECK_EQ(xrl_sg_admit(c, 4, 1, 3, &sec, out), 3 + 1 + 0 + 1, "3, 1 (refill), none sent, 1");
	CHECK_EQ(out[0], 3);
	CHECK_EQ(out[1], 1);
	CHECK_EQ(xrl_sg_burst(c, 4, 1, &sec), 9, "5, then 4 + 5");
	/* real edges: a window twice as long refills twice as much */
	__u64 edges[5] = { 0, SEC, 3 * SEC, 4 * SEC, 5 * SEC };
	struct xrl_sg_time real = { SEC, edges };
	CHECK_EQ(xrl_sg_burst(c, 4, 1, &real), 9, "the second window's 5 on a level of 4");
	__u64 c2[4] = { 5, 0, 5, 0 };
	CHECK_EQ(xrl_sg_burst(c2, 4, 1, &sec), 8, "5, then 4 - 1 + 5");
	CHECK_EQ(xrl_sg_burst(c2, 4, 1, &real), 7, "5, then 5 - 1 - 2 + 5");
}

/*
 * Twenty polite sources at 20, 40, .. 400/s (one of them with bursts of 30
 * a second), started 100 ms apart, and a flooder at 20,000/s: the 95th
 * percentile of 21 keys is the 20th, the fastest polite one; the proposal
 * admits every polite packet under the data path's GCRA and holds the
 * flooder to the proposed rate.
 */
static void test_suggest_propose(void)
{
	enum { KEYS = 21, N = 100 };	/* 10 s of 100 ms windows */
	struct xrl_sg_params p = { .window_ns = 100 * MS, .percentile = 95, .headroom_pct = 50 };
	struct xrl_sg_series s[KEYS];
	struct xrl_sg_proposal pr;
	__u64 *t[KEYS], *c[KEYS], nk[N] = { 0 };
	size_t nt[KEYS];

	for (int k = 0; k < KEYS; k++) {
		struct src a = { .rate = 20 * (k + 1), .start = k * 100 * MS, .len = 9 * SEC };

		if (k == 4)
			a.burst = 30, a.every = SEC;
		if (k == KEYS - 1)
			a.rate = 20000;
		nt[k] = arrivals(&a, &t[k]);
		c[k] = calloc(N, sizeof(__u64));
		xrl_sg_count(t[k], nt[k], p.window_ns, c[k], N);
		s[k] = (struct xrl_sg_series){ c[k], N };
		nk[a.start / p.window_ns]++;
	}
	CHECK_EQ(xrl_sg_propose(s, KEYS, nk, N, &p, &pr), 0);
	CHECK_EQ(pr.keys, KEYS);
	CHECK_EQ(pr.rank, 20, "the 95th percentile of 21 keys");
	CHECK_EQ(pr.pct_rate, 400, "the fastest polite key");
	CHECK_EQ(pr.max_rate, 20000, "the flooder");
	CHECK_EQ(pr.rate, 600, "400/s times 1.5");
	CHECK_EQ(pr.admitted_keys, 20);
	CHECK(pr.max_burst >= 30, "the bursts of 30 seen: %llu", (unsigned long long)pr.max_burst);
	CHECK_EQ(pr.burst, (pr.max_burst * 3 + 1) / 2, "times 1.5, rounded up");
	CHECK_EQ(pr.new_keys_seen, KEYS);
	CHECK_EQ(pr.new_keys_peak, 10, "ten keys began within a second");
	CHECK_EQ(pr.new_keys, 32, "every key measured (21) times 1.5: all are new when the rule is applied");
	/* a sample of an established rule sees no new key: the budget still
	 * fits every key, each of which is new to the applied rule */
	__u64 none[N] = { 0 };
	CHECK_EQ(xrl_sg_propose(s, KEYS, none, N, &p, &pr), 0);
	CHECK_EQ(pr.new_keys_peak, 0);
	CHECK_EQ(pr.new_keys, 32, "no new key seen: still every key measured, times 1.5");
	CHECK_EQ(xrl_sg_propose(s, KEYS, nk, N, &p, &pr), 0);
	for (int k = 0; k < KEYS - 1; k++)
		CHECK(gcra_admits(t[k], nt[k], pr.rate, pr.burst) == nt[k], "polite key %d admitted", k);
	size_t f = gcra_admits(t[KEYS - 1], nt[KEYS - 1], pr.rate, pr.burst);
	CHECK(f <= pr.rate * 9 + pr.burst, "the flooder held to the rate: %zu", f);
	/* the aggregate covers what the proposal admits: every polite packet
	 * and the flooder's share, at the peak second */
	CHECK(pr.agg_peak >= 4200 && pr.agg_peak <= 4200 + 30 + 600 + pr.burst,
	      "aggregate's peak %.0f: the polite 20 + 40 + .. + 400/s and the flooder's 600/s", pr.agg_peak);
	CHECK(pr.agg_rate >= pr.agg_peak * 1.5 - 0.01 && pr.agg_rate <= pr.agg_peak * 1.5 + 1, "agg %llu",
	      (unsigned long long)pr.agg_rate);
	CHECK(pr.agg_burst >= 1, "aggregate burst");
	/* headroom 0: the percentile itself */
	p.headroom_pct = 0;
	CHECK_EQ(xrl_sg_propose(s, KEYS, nk, N, &p, &pr), 0);
	CHECK_EQ(pr.rate, 400);
	/* percentile 100: the flooder's rate */
	p.percentile = 100;
	CHECK_EQ(xrl_sg_propose(s, KEYS, nk, N, &p, &pr), 0);
	CHECK_EQ(pr.rate, 20000);
	for (int k = 0; k < KEYS; k++) {
		free(t[k]);
		free(c[k]);
	}
}

static void test_suggest_edges(void)
{
	struct xrl_sg_params p = { .window_ns = 100 * MS, .percentile = 95, .headroom_pct = 50 };
	struct xrl_sg_proposal pr;
	__u64 c[5] = { 1, 0, 0, 0, 0 };
	struct xrl_sg_series s = { c, 5 }, bad = { c, 4 };

	CHECK_EQ(xrl_sg_propose(&s, 1, NULL, 0, &p, &pr), (unsigned long long)-EINVAL, "no window");
	CHECK_EQ(xrl_sg_propose(&bad, 1, NULL, 5, &p, &pr), (unsigned long long)-EINVAL, "a short series");
	p.percentile = 0;
	CHECK_EQ(xrl_sg_propose(&s, 1, NULL, 5, &p, &pr), (unsigned long long)-EINVAL, "percentile 0");
	p.percentile = 101;
	CHECK_EQ(xrl_sg_propose(&s, 1, NULL, 5, &p, &pr), (unsigned long long)-EINVAL, "percentile 101");
	p.percentile = 95;
	CHECK_EQ(xrl_sg_propose(NULL, 0, NULL, 5, &p, &pr), 0, "no key");
	CHECK_EQ(pr.rate, 0, "nothing proposed");
	/* a sample shorter than a second: its length is the peak window; one
	 * packet in 0.5 s is 2/s, times 1.5 is 3 */
	CHECK_EQ(xrl_sg_propose(&s, 1, NULL, 5, &p, &pr), 0);
	CHECK_EQ(pr.peak_s * 10, 5);
	CHECK_EQ(pr.rate, 3);
	CHECK_EQ(pr.burst, 2, "a burst of 1, times 1.5, rounded up");
	CHECK_EQ(pr.new_keys, 0, "no new keys counted: none proposed");
}

/* the daemon's record: a minute of 21 keys on the fake clock, walked once
 * a second, each 5-s span of each key observed into bounded histograms;
 * the percentile read back from the cumulative counts (as suggest from
 * reads /metrics) gives a proposal that admits every polite key under the
 * data path's GCRA and holds the flooder */
static void test_suggest_hist(void)
{
	enum { KEYS = 21, N = 60, SPAN = 5 };
	struct xrl_sg_hist rate = { 0 }, burst = { 0 };
	struct xrl_sg_time tb = { SEC, NULL };
	double le[XRL_SG_HIST_BOUNDS + 1];
	__u64 cr[XRL_SG_HIST_BOUNDS + 1], cb[XRL_SG_HIST_BOUNDS + 1], *t[KEYS], c[N], rank;
	size_t nt[KEYS];

	/* the bounds: ten a decade, increasing, 1 .. 1e8 */
	CHECK_EQ(xrl_sg_hist_le(0), 1);
	CHECK_EQ(xrl_sg_hist_le(6), 4);
	CHECK_EQ(xrl_sg_hist_le(26), 400);
	CHECK_EQ(xrl_sg_hist_le(XRL_SG_HIST_BOUNDS - 1), 1e8);
	for (size_t i = 1; i < XRL_SG_HIST_BOUNDS; i++)
		CHECK(xrl_sg_hist_le(i) > xrl_sg_hist_le(i - 1) && xrl_sg_hist_le(i) <= xrl_sg_hist_le(i - 1) * 1.3,
		      "bound %zu", i);
	for (int k = 0; k < KEYS; k++) {
		struct src a = { .rate = 20 * (k + 1), .start = 0, .len = N * SEC };

		if (k == 4)
			a.burst = 30, a.every = SEC;
		if (k == KEYS - 1)
			a.rate = 20000;
		nt[k] = arrivals(&a, &t[k]);
		xrl_sg_count(t[k], nt[k], SEC, c, N);
		for (size_t s0 = 0; s0 < N; s0 += SPAN)
			xrl_sg_observe_span(&rate, &burst, c + s0, SPAN, &tb);
	}
	CHECK_EQ(rate.count, KEYS * N / SPAN, "one observation per key and span");
	CHECK_EQ(burst.count, rate.count);
	CHECK(rate.sum > 20000 * (N / SPAN) - 1, "the sum: %.0f", rate.sum);
	/* memory: counts only, whatever the keys and the time */
	CHECK(sizeof(rate) <= 8 * (XRL_SG_HIST_BOUNDS + 3), "%zu bytes", sizeof(rate));
	for (size_t i = 0; i <= XRL_SG_HIST_BOUNDS; i++) {
		le[i] = i < XRL_SG_HIST_BOUNDS ? xrl_sg_hist_le(i) : __builtin_inf();
		cr[i] = rate.n[i] + (i ? cr[i - 1] : 0);
		cb[i] = burst.n[i] + (i ? cb[i - 1] : 0);
	}
	double pr = xrl_sg_hist_percentile(le, cr, XRL_SG_HIST_BOUNDS + 1, 95, &rank);
	CHECK_EQ(rank, (KEYS * N / SPAN * 95 + 99) / 100, "nearest rank over key-spans");
	CHECK_EQ(pr, 400, "the fastest polite key, 400/s, is a bound");
	CHECK_EQ(xrl_sg_hist_percentile(le, cr, XRL_SG_HIST_BOUNDS + 1, 100, &rank), 20000);
	CHECK_EQ(xrl_sg_hist_percentile(le, cr, XRL_SG_HIST_BOUNDS + 1, 1, &rank), 20, "the slowest");
	double pb = xrl_sg_hist_percentile(le, cb, XRL_SG_HIST_BOUNDS + 1, 95, &rank);
	CHECK(pb >= 400, "a window's packets at the key's own rate: %.0f", pb);
	__u64 r = xrl_sg_headroom(pr, 50), b = xrl_sg_headroom(pb, 50);
	CHECK_EQ(r, 600);
	for (int k = 0; k < KEYS - 1; k++)
		CHECK(gcra_admits(t[k], nt[k], r, b) == nt[k], "polite key %d admitted", k);
	size_t f = gcra_admits(t[KEYS - 1], nt[KEYS - 1], r, b);
	CHECK(f <= r * N + b, "the flooder held to the rate: %zu", f);
	/* a value between bounds goes to the upper one: never below */
	struct xrl_sg_hist h = { 0 };
	xrl_sg_hist_add(&h, 401);
	xrl_sg_hist_add(&h, 0.5);
	xrl_sg_hist_add(&h, 3e9);
	CHECK_EQ(h.n[27], 1, "401 under 500");
	CHECK_EQ(h.n[0], 1, "under 1");
	CHECK_EQ(h.n[XRL_SG_HIST_BOUNDS], 1, "+Inf");
	/* the rank in +Inf, no data, bad input */
	__u64 ci[3] = { 0, 1, 3 };
	double li[3] = { 1, 2, __builtin_inf() };
	CHECK_EQ(xrl_sg_hist_percentile(li, ci, 3, 95, &rank), -1, "past the last bound");
	CHECK_EQ(xrl_sg_hist_percentile(li, ci, 3, 30, &rank), 2);
	__u64 z[3] = { 0, 0, 0 };
	CHECK_EQ(xrl_sg_hist_percentile(li, z, 3, 95, &rank), 0, "nothing observed");
	__u64 fall[3] = { 2, 1, 3 };
	CHECK_EQ(xrl_sg_hist_percentile(li, fall, 3, 95, &rank), -EINVAL, "counts that fall");
	CHECK_EQ(xrl_sg_hist_percentile(li, ci, 3, 0, &rank), -EINVAL);
	CHECK_EQ(xrl_sg_hist_percentile(li, ci, 3, 101, &rank), -EINVAL);
	/* the headroom of figures past the rule's limits, or of no number */
	CHECK_EQ(xrl_sg_headroom(1e30, 50), UINT32_MAX, "past u64: clamped before rounding");
	CHECK_EQ(xrl_sg_headroom(__builtin_nan(""), 50), 0);
	CHECK_EQ(xrl_sg_headroom(4e9, 0), 4000000000ULL, "headroom 0 at the edge");
	for (int k = 0; k < KEYS; k++)
		free(t[k]);
}

/* What both samplers read off a bucket between two walks: a key driven
 * through the data path's GCRA, walked twice; the packets offered (admitted
 * and dropped) are counted exactly, from the first walk's state, or afresh
 * where the bucket was made again. */
static void test_suggest_offered(void)
{
	struct xrl_rule r = { .interval = 1000, .burst = 10 };
	struct xrl_bucket b = { 0 };
	__u64 now = 1000000, tat0, dropped0, adm = 0, drop = 0;

	r.limit = r.burst * r.interval;
	b.tat = now;
	/* the first walk sees the key at rest */
	tat0 = b.tat;
	dropped0 = b.dropped;
	/* 40 packets 100 tu apart: 4 intervals' worth of refill, a burst of 10 */
	for (int i = 0; i < 40; i++, now += 100) {
		__u64 nt;

		if (xrl_gcra(b.tat, now, r.interval, r.limit, 1, &nt)) {
			b.tat = nt;
			adm++;
		} else {
			b.dropped++;
			drop++;
		}
	}
	CHECK(drop > 0 && adm > 0, "the key was limited");
	CHECK_EQ(xrl_sg_offered(&r, &b, true, tat0, dropped0, 1000000, now - 1000000), adm + drop,
		 "admitted and dropped since the last walk");
	/* a walk that saw it later: only what came since */
	CHECK_EQ(xrl_sg_offered(&r, &b, true, b.tat, b.dropped, now, 1000), 0, "nothing new");
	/* made again (its state below what was seen): counted afresh from the walk */
	struct xrl_bucket fresh = { .tat = 2000000 + 3 * r.interval, .dropped = 2 };
	CHECK_EQ(xrl_sg_offered(&r, &fresh, true, b.tat + 1, b.dropped + 5, 2000000, 10000), 5,
		 "3 admitted and 2 dropped since the bucket was made");
	CHECK_EQ(xrl_sg_offered(&r, &fresh, false, 0, 0, 2000000, 10000), 5, "a new key likewise");
	/* never more admitted than the bucket could have admitted in dt */
	struct xrl_bucket far = { .tat = 2000000 + 1000 * r.interval };
	CHECK_EQ(xrl_sg_offered(&r, &far, false, 0, 0, 2000000, 5 * r.interval), 5 + r.burst + 1,
		 "capped at the refill of dt plus the burst");
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_suggest_count_and_peak);
	RUN(test_suggest_percentile);
	RUN(test_suggest_burst_from_arrivals);
	RUN(test_suggest_propose);
	RUN(test_suggest_edges);
	RUN(test_suggest_hist);
	RUN(test_suggest_offered);
	return tl_summary();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, pure values: the maths of xdp-rlctl suggest (suggest.h says what
 * each figure is). Windows of packets in, a proposal out; no clock, no map.
 */
#include "model/suggest.h"
#include "base/strict.h"
#include "xrl_meter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NSEC_PER_SEC 1000000000ULL

/* x >= 0 rounded up, and down (no libm: every program links the library) */
static double up(double x)
{
	double i = (double)(__u64)x;

	return i < x ? i + 1 : i;
}

static double down(double x)
{
	return (double)(__u64)x;
}

size_t xrl_sg_windows_of(__u64 span_ns, __u64 window_ns)
{
	if (!window_ns || window_ns >= span_ns)
		return 1;
	return (span_ns + window_ns - 1) / window_ns;
}

__u64 xrl_sg_peak(const __u64 *c, size_t n, size_t per)
{
	__u64 sum = 0, best = 0;

	if (!per)
		per = 1;
	for (size_t i = 0; i < n; i++) {
		sum += c[i];
		if (i >= per)
			sum -= c[i - per];
		if (sum > best)
			best = sum;
	}
	return best;
}

/* window i's length in seconds */
static double win_s(const struct xrl_sg_time *tb, size_t i)
{
	if (tb->edges)
		return (double)(tb->edges[i + 1] - tb->edges[i]) / NSEC_PER_SEC;
	return (double)tb->window_ns / NSEC_PER_SEC;
}

double xrl_sg_peak_rate(const __u64 *c, size_t n, size_t per, const struct xrl_sg_time *tb)
{
	double best = 0, span;
	__u64 sum = 0;

	if (!per)
		per = 1;
	if (per > n)
		per = n;
	for (size_t i = 0; i < n; i++) {
		sum += c[i];
		if (i >= per)
			sum -= c[i - per];
		/* whole peak windows only: 5 s, not their first 100 ms */
		if (i + 1 < per)
			continue;
		span = tb->edges ? (double)(tb->edges[i + 1] - tb->edges[i + 1 - per]) / NSEC_PER_SEC :
				   (double)per * tb->window_ns / NSEC_PER_SEC;
		if (span > 0 && sum / span > best)
			best = sum / span;
	}
	return best;
}

/*
 * The bucket's level (tokens in use) after each window's packets, with the
 * refill of a window between windows: the level a GCRA's TAT - now holds,
 * in packets. The burst is the highest level reached, rounded up.
 */
__u64 xrl_sg_burst(const __u64 *c, size_t n, double rate, const struct xrl_sg_time *tb)
{
	double level = 0, top = 0;

	for (size_t i = 0; i < n; i++) {
		/* the refill since the previous window's packets came */
		double per_window = i ? rate * win_s(tb, i - 1) : 0;

		level = level > per_window ? level - per_window : 0;
		level += (double)c[i];
		if (level > top)
			top = level;
	}
	return (__u64)up(top - 1e-9 > 0 ? top - 1e-9 : 0);
}

__u64 xrl_sg_admit(const __u64 *c, size_t n, double rate, __u64 burst,
		   const struct xrl_sg_time *tb, __u64 *out)
{
	double level = 0;
	__u64 total = 0;

	for (size_t i = 0; i < n; i++) {
		double room, per_window = i ? rate * win_s(tb, i - 1) : 0;
		__u64 a;

		level = level > per_window ? level - per_window : 0;
		room = (double)burst - level;
		a = room <= 0 ? 0 : (double)c[i] < room ? c[i] : (__u64)down(room);
		level += (double)a;
		out[i] += a;
		total += a;
	}
	return total;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double xrl_sg_percentile(double *v, size_t n, unsigned p, size_t *rank)
{
	size_t r;

	if (!n) {
		if (rank)
			*rank = 0;
		return 0;
	}
	xrl_sort(v, n, sizeof(*v), cmp_double);
	/* nearest rank: the smallest value with p % of the values at or below it */
	r = (size_t)(((unsigned long long)p * n + 99) / 100);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	if (rank)
		*rank = r;
	return v[r - 1];
}

void xrl_sg_count(const __u64 *t_ns, size_t nt, __u64 window_ns, __u64 *c, size_t n)
{
	memset(c, 0, n * sizeof(*c));
	for (size_t i = 0; window_ns && i < nt; i++) {
		__u64 w = t_ns[i] / window_ns;

		if (w < n)
			c[w]++;
	}
}

/* x times the headroom, rounded up, in [lo, hi] */
static __u64 with_headroom(double x, unsigned pct, __u64 lo, __u64 hi)
{
	double v = x * (100.0 + pct) / 100.0 - 1e-9;

	/* past hi (or no number) before rounding: up() casts to u64, which
	 * a double past 2^64 does not fit */
	if (!(v > 0))
		v = 0;
	if (v >= (double)hi)
		return hi;
	v = up(v);

	if (v < (double)lo)
		return lo;
	if (v > (double)hi)
		return hi;
	return (__u64)v;
}

int xrl_sg_propose(const struct xrl_sg_series *keys, size_t nkeys, const __u64 *new_keys,
		   size_t n, const struct xrl_sg_params *p, struct xrl_sg_proposal *out)
{
	struct xrl_sg_time tb = { p->window_ns, p->edges };
	double *rates = NULL, *sorted = NULL, window_s;
	__u64 *total = NULL;
	size_t per, per_nk;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!n || !p->window_ns || !p->percentile || p->percentile > 100 || p->headroom_pct > 10000)
		return -EINVAL;
	for (size_t k = 0; k < nkeys; k++) {
		if (keys[k].n != n)
			return -EINVAL;
	}
	window_s = (double)p->window_ns / NSEC_PER_SEC;
	per = xrl_sg_windows_of(XRL_SG_PEAK_NS, p->window_ns);
	per_nk = xrl_sg_windows_of(XRL_SG_NEWKEYS_NS, p->window_ns);
	if (per > n)
		per = n;	/* a sample shorter than the peak window: its whole length */
	if (per_nk > n)
		per_nk = n;
	out->peak_s = per * window_s;	/* as planned; the rates use the real lengths */
	out->keys = nkeys;
	if (new_keys) {
		for (size_t i = 0; i < n; i++)
			out->new_keys_seen += new_keys[i];
		out->new_keys_peak = xrl_sg_peak_rate(new_keys, n, per_nk, &tb);
	}
	if (!nkeys)
		return 0;

	rates = calloc(nkeys, sizeof(*rates));
	sorted = calloc(nkeys, sizeof(*sorted));
	total = calloc(n, sizeof(*total));
	if (!rates || !sorted || !total) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t k = 0; k < nkeys; k++)
		rates[k] = sorted[k] = xrl_sg_peak_rate(keys[k].c, n, per, &tb);
	out->pct_rate = xrl_sg_percentile(sorted, nkeys, p->percentile, &out->rank);
	out->median_rate = sorted[(nkeys + 1) / 2 - 1];
	out->max_rate = sorted[nkeys - 1];
	out->rate = with_headroom(out->pct_rate, p->headroom_pct, 1, XRL_RATE_MAX_PER_SEC);

	/* the burst of the keys the proposal means to admit, at its rate */
	for (size_t k = 0; k < nkeys; k++) {
		__u64 b;

		if (rates[k] > out->pct_rate)
			continue;
		out->admitted_keys++;
		b = xrl_sg_burst(keys[k].c, n, out->rate, &tb);
		if (b > out->max_burst)
			out->max_burst = b;
	}
	out->burst = with_headroom(out->max_burst, p->headroom_pct, 1, UINT32_MAX);

	/* the aggregate: what that rate and burst admit of every key */
	for (size_t k = 0; k < nkeys; k++)
		xrl_sg_admit(keys[k].c, n, out->rate, out->burst, &tb, total);
	out->agg_peak = xrl_sg_peak_rate(total, n, per, &tb);
	out->agg_rate = with_headroom(out->agg_peak, p->headroom_pct, 1, XRL_RATE_MAX_PER_SEC);
	out->agg_max_burst = xrl_sg_burst(total, n, out->agg_rate, &tb);
	out->agg_burst = with_headroom(out->agg_max_burst, p->headroom_pct, 1, UINT32_MAX);
	/* at least every key measured: the proposal is applied as a new rule
	 * (a new generation), so every key there is new at once, and a key
	 * the budget refuses has no bucket of its own (the aggregate alone
	 * meters it). A sample of an established rule sees no new key. */
	if (new_keys)
		out->new_keys = with_headroom(out->new_keys_peak > (double)nkeys ? out->new_keys_peak : (double)nkeys,
					      p->headroom_pct, 1, XRL_RATE_MAX_PER_SEC);
cleanup:
	free(rates);
	free(sorted);
	free(total);
	return err;
}

/* ---- the daemon's histograms ---- */

/* ten bounds a decade (the R10 series, rounded), in hundredths */
static const unsigned decade[10] = { 100, 125, 160, 200, 250, 315, 400, 500, 630, 800 };

double xrl_sg_hist_le(size_t i)
{
	double v = decade[i % 10] / 100.0;

	for (size_t d = 0; d < i / 10; d++)
		v *= 10;
	return v;
}

void xrl_sg_hist_add(struct xrl_sg_hist *h, double v)
{
	size_t i = 0;

	/* a value just over a bound by the walk's arithmetic stays in it */
	while (i < XRL_SG_HIST_BOUNDS && v > xrl_sg_hist_le(i) * (1 + 1e-9))
		i++;
	h->n[i]++;
	h->count++;
	h->sum += v;
}

double xrl_sg_hist_percentile(const double *le, const __u64 *cum, size_t nb, unsigned p, __u64 *rank)
{
	__u64 total, want;

	*rank = 0;
	if (!nb || !p || p > 100)
		return -EINVAL;
	for (size_t i = 1; i < nb; i++) {
		if (cum[i] < cum[i - 1] || le[i] <= le[i - 1])
			return -EINVAL;
	}
	total = cum[nb - 1];
	if (!total)
		return 0;
	want = (total * p + 99) / 100;	/* nearest rank: ceil(P * N / 100) */
	*rank = want;
	for (size_t i = 0; i < nb; i++) {
		if (cum[i] >= want)
			return le[i] > 1e300 ? -1 : le[i];
	}
	return -EINVAL;
}

__u64 xrl_sg_headroom(double v, unsigned headroom_pct)
{
	return v > 0 ? with_headroom(v, headroom_pct, 1, UINT32_MAX) : 0;
}

__u64 xrl_sg_observe_span(struct xrl_sg_hist *rate, struct xrl_sg_hist *burst, const __u64 *c, size_t n,
			  const struct xrl_sg_time *tb)
{
	__u64 sum = 0;
	double s = 0, r;

	for (size_t i = 0; i < n; i++) {
		sum += c[i];
		s += win_s(tb, i);
	}
	if (!sum || s <= 0)
		return sum;
	r = sum / s;
	xrl_sg_hist_add(rate, r);
	xrl_sg_hist_add(burst, (double)xrl_sg_burst(c, n, r, tb));
	return sum;
}

/* packets admitted: the TAT's advance from `from` in emission intervals,
 * at most what the bucket could have admitted in dt_tu */
static __u64 sg_admitted(const struct xrl_rule *r, __u64 from, __u64 tat, __u64 dt_tu)
{
	__u64 most = dt_tu / r->interval + r->burst + 1;
	__u64 a = tat > from ? (tat - from) / r->interval : 0;

	return a < most ? a : most;
}

__u64 xrl_sg_offered(const struct xrl_rule *r, const struct xrl_bucket *b, bool seen, __u64 tat0,
		     __u64 dropped0, __u64 from_tu, __u64 dt_tu)
{
	if (seen && b->tat >= tat0 && b->dropped >= dropped0)
		return (b->dropped - dropped0) + sg_admitted(r, tat0, b->tat, dt_tu);
	/* new, or the bucket was made again: counts afresh */
	return b->dropped + sg_admitted(r, from_tu, b->tat, dt_tu);
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (suggest.c): a rule's rate, burst, new-key budget and
 * aggregate proposed from the traffic it saw (xdp-rlctl suggest).
 *
 * The input is, for each key of a rule, its packets counted window by
 * window over the sample (windows of window_ns, aligned across keys; a key
 * first seen in window i has zeros before it), and the new keys counted
 * per window. Definitions (docs/suggest.md):
 *
 *   peak rate   of a key: the most packets it sent in any peak window (5 s,
 *               or one window when they are longer, or the whole sample
 *               when it is shorter, sliding by a window), per second: a
 *               rate held for seconds; what comes faster for less long is
 *               a burst
 *   burst       of a key at rate R: the smallest bucket a token bucket
 *               refilled at R needs to admit every packet of the key, each
 *               window's packets counted as if they came at its start (so
 *               it is never less than what the exact arrival times need)
 *   rate        the P-th percentile (nearest rank) of the keys' peak
 *               rates, times the headroom
 *   burst       the largest burst, at that rate, of the keys whose peak is
 *               at or below the percentile, times the headroom
 *   new-keys    the most keys first seen in any second (the budget's burst
 *               is its rate: keys that come at once must fit in it), times
 *               the headroom
 *   aggregate   the most packets the proposed rate and burst would have
 *               admitted of all keys together in a peak window, per second,
 *               times the headroom; its burst likewise
 *
 * Nothing here reads a clock or a map: the unit tests drive it from
 * arrival times on a fake clock.
 */
#ifndef XRL_MODEL_SUGGEST_H
#define XRL_MODEL_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xdp_rl_common.h"

/* One key's packets per window, n windows. */
struct xrl_sg_series {
	const __u64 *c;
	size_t n;
};

/* The windows' time base: each window_ns long, or, with edges (n + 1
 * times in ns: window i from edges[i] to edges[i + 1]), as long as the
 * sampler's walks really were apart on a busy machine. */
struct xrl_sg_time {
	__u64 window_ns;
	const __u64 *edges;
};

struct xrl_sg_params {
	__u64 window_ns;	/* a window's length, as planned */
	const __u64 *edges;	/* NULL, or the windows' real edges (n + 1) */
	unsigned percentile;	/* 1 .. 100 */
	unsigned headroom_pct;	/* the margin over what was seen, percent: 50 is 1.5 times */
};

struct xrl_sg_proposal {
	/* what is proposed (packets per second, packets) */
	__u64 rate, burst, new_keys, agg_rate, agg_burst;
	/* the figures it came from */
	size_t keys;		/* keys measured */
	size_t rank;		/* the percentile's key, 1 = slowest */
	size_t admitted_keys;	/* keys at or below the percentile */
	double pct_rate;	/* the percentile's peak rate, /s */
	double median_rate, max_rate;	/* of the keys' peak rates, /s */
	__u64 max_burst;	/* the largest burst of the admitted keys */
	__u64 new_keys_seen;	/* keys first seen during the sample */
	double new_keys_peak;	/* the most new keys in a second, /s */
	double agg_peak;	/* what the proposal admits of all keys, at most, /s */
	__u64 agg_max_burst;	/* the aggregate's burst before the headroom */
	double peak_s;		/* the peak window, seconds */
};

/* The peak window of the keys' rates and of the aggregate, and that of
 * the new keys. */
#define XRL_SG_PEAK_NS		5000000000ULL
#define XRL_SG_NEWKEYS_NS	1000000000ULL
/* Windows that make one span (at least 1). */
size_t xrl_sg_windows_of(__u64 span_ns, __u64 window_ns);
/* The most packets in any `per` consecutive windows of c. */
__u64 xrl_sg_peak(const __u64 *c, size_t n, size_t per);
/* The highest rate, per second, over any `per` consecutive windows (their
 * real length with edges). */
double xrl_sg_peak_rate(const __u64 *c, size_t n, size_t per, const struct xrl_sg_time *tb);
/* The burst a token bucket refilled at `rate` packets a second needs to
 * admit c (each window's packets at its start). */
__u64 xrl_sg_burst(const __u64 *c, size_t n, double rate, const struct xrl_sg_time *tb);
/* What a token bucket of rate and burst admits of c, window by window,
 * added to out[] (n windows); returns the packets admitted. */
__u64 xrl_sg_admit(const __u64 *c, size_t n, double rate, __u64 burst,
		   const struct xrl_sg_time *tb, __u64 *out);
/* The nearest-rank P-th percentile of v (sorted in place) and its rank
 * (1-based) in *rank; 0 for n == 0. */
double xrl_sg_percentile(double *v, size_t n, unsigned p, size_t *rank);
/* Packets per window from arrival times (ns from the sample's start): the
 * windows of an arrival list, for the tests and offline tools. Arrivals
 * past n windows are not counted. */
void xrl_sg_count(const __u64 *t_ns, size_t nt, __u64 window_ns, __u64 *c, size_t n);
/*
 * The proposal for one rule: keys' series (all of n windows), new keys per
 * window (n windows; NULL: none counted). 0, or -EINVAL (no window, a
 * parameter out of range) or -ENOMEM. With no key, every figure is 0 and
 * rate and burst are 0: nothing to propose.
 */
int xrl_sg_propose(const struct xrl_sg_series *keys, size_t nkeys, const __u64 *new_keys,
		   size_t n, const struct xrl_sg_params *p, struct xrl_sg_proposal *out);

/*
 * What one key offered its bucket between two walks of the key table
 * dt_tu apart (both samplers, xdp-rlctl suggest and xdp-rld --suggest):
 * its drops since then and the packets admitted, read from the GCRA
 * state, the TAT's advance in emission intervals, at most what the bucket
 * could admit in dt_tu. With seen (the key was there at the last walk,
 * with tat0 and dropped0) and the bucket not made again since, counted
 * from that state; otherwise its drops so far and its TAT's advance from
 * from_tu, the last walk's time.
 */
__u64 xrl_sg_offered(const struct xrl_rule *r, const struct xrl_bucket *b, bool seen, __u64 tat0,
		     __u64 dropped0, __u64 from_tu, __u64 dt_tu);

/*
 * The daemon's long-term record (xdp-rld --suggest): per rule, a bounded
 * histogram of observations on fixed log-scale bounds, ten a decade from 1
 * to 1e8 (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8, 10, ...), then +Inf:
 * a value goes into the first bucket whose bound is >= it. Its memory does
 * not grow with the keys or the time: what it keeps is counts.
 */
#define XRL_SG_HIST_BOUNDS	81	/* finite bounds; one bucket more for +Inf */
struct xrl_sg_hist {
	__u64 n[XRL_SG_HIST_BOUNDS + 1];	/* per bucket, not cumulative */
	__u64 count;
	double sum;
};
/* The i-th finite bound (0 .. XRL_SG_HIST_BOUNDS - 1). */
double xrl_sg_hist_le(size_t i);
void xrl_sg_hist_add(struct xrl_sg_hist *h, double v);
/*
 * The nearest-rank P-th percentile of what a histogram counted, from its
 * cumulative counts (cum[i]: observations <= le[i], nb buckets, the last
 * of them +Inf or not): the bound of the first bucket whose cumulative
 * count reaches rank ceil(P * total / 100), so never below the true
 * percentile and at most one bucket above it. The rank in *rank. 0 with
 * no observation; -1 when the rank falls in the +Inf bucket; -EINVAL
 * (as a double) for a bad P or counts that fall.
 */
double xrl_sg_hist_percentile(const double *le, const __u64 *cum, size_t nb, unsigned p, __u64 *rank);
/*
 * One key's span (n windows, its packets per window) into the histograms:
 * its rate over the span (packets / the span's real length), and its burst
 * at that rate (xrl_sg_burst). A span with no packet is not observed.
 * Returns the packets.
 */
__u64 xrl_sg_observe_span(struct xrl_sg_hist *rate, struct xrl_sg_hist *burst, const __u64 *c, size_t n,
			  const struct xrl_sg_time *tb);
/* The figures proposed from percentiles and peaks: v times (1 + PCT / 100),
 * rounded up, at least 1 when v > 0. */
__u64 xrl_sg_headroom(double v, unsigned headroom_pct);

#endif

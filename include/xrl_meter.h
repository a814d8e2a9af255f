/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp-rl metering maths: pure functions of (state, now, rule, cost).
 *
 * No BPF helper and no libc in here: the same code is compiled into the XDP
 * program, the unit tests (with a fake clock) and the userspace tools.
 *
 * Token bucket as GCRA. A bucket of capacity `burst` refilled at `rate` is
 * one number per key, the theoretical arrival time (TAT). With the emission
 * interval T = 1/rate and the tolerance L = burst * T, a packet at time t is
 * admitted iff max(TAT, t) + T - t <= L, and then TAT = max(TAT, t) + T.
 * A new key starts with TAT <= t: a full bucket of `burst` packets.
 *
 * Time is kept in units of 1/64 ns (XRL_TU_SHIFT) so that T is exact to
 * better than 0.1 % even at 100M packets/s (T = 640 units). Comparisons are
 * made on signed differences, so the 64-bit clock may wrap (after 9 years
 * of uptime) without harm.
 */
#ifndef XRL_METER_H
#define XRL_METER_H

#include <linux/types.h>

#ifndef XRL_INLINE
#define XRL_INLINE static inline __attribute__((always_inline))
#endif

#define XRL_TU_SHIFT		6
#define XRL_NSEC_PER_SEC	1000000000ULL
#define XRL_PERIOD_SEC		(1ULL * XRL_NSEC_PER_SEC)
#define XRL_PERIOD_MIN		(60ULL * XRL_NSEC_PER_SEC)
#define XRL_PERIOD_HOUR		(3600ULL * XRL_NSEC_PER_SEC)

/* Accepted rates: 1 per hour .. 100 million per second. */
#define XRL_RATE_MAX_PER_SEC	100000000ULL
/* The tolerance (burst / rate) must fit in half the signed range: ~417 days. */
#define XRL_LIMIT_MAX		(1ULL << 61)

XRL_INLINE __u64 xrl_ns_to_tu(__u64 ns)
{
	return ns << XRL_TU_SHIFT;
}

XRL_INLINE __u64 xrl_tu_to_ns(__u64 tu)
{
	return tu >> XRL_TU_SHIFT;
}

/*
 * Emission interval in time units for `count` per `period_ns`, rounded to
 * the nearest unit. Returns 0 for a rate outside the accepted range.
 */
XRL_INLINE __u64 xrl_rate_interval(__u64 count, __u64 period_ns)
{
	__u64 span;

	if (!count || !period_ns || period_ns > XRL_PERIOD_HOUR)
		return 0;
	/* count/period <= 1e8/s  <=>  count * 1e9 <= 1e8 * period */
	if (count > XRL_RATE_MAX_PER_SEC * (period_ns / XRL_NSEC_PER_SEC))
		return 0;
	/* count/period >= 1/h  <=>  count * 1h >= period; holds as period <= 1h */
	span = period_ns << XRL_TU_SHIFT;	/* <= 2.3e14: no overflow */
	return (span + count / 2) / count;
}

/* Tolerance for `burst`, or 0 when it would not fit. */
XRL_INLINE __u64 xrl_burst_limit(__u64 interval, __u64 burst)
{
	if (!interval || !burst || burst > XRL_LIMIT_MAX / interval)
		return 0;
	return burst * interval;
}

/*
 * The GCRA decision. Returns 1 and sets *new_tat when `cost` units may
 * pass at `now`; returns 0 (and leaves the bucket alone) when they may not.
 */
XRL_INLINE int xrl_gcra(__u64 tat, __u64 now, __u64 interval, __u64 limit,
			__u64 cost, __u64 *new_tat)
{
	__u64 base = (__s64)(tat - now) > 0 ? tat : now;
	__u64 next = base + interval * cost;

	if (next - now > limit)
		return 0;
	*new_tat = next;
	return 1;
}

/* Whole cost units available now (the token count), 0 .. limit/interval. */
XRL_INLINE __u64 xrl_gcra_tokens(__u64 tat, __u64 now, __u64 interval,
				 __u64 limit)
{
	__u64 used = (__s64)(tat - now) > 0 ? tat - now : 0;

	if (used >= limit || !interval)
		return 0;
	return (limit - used) / interval;
}

/*
 * The window algorithms (rule algo fixed-window, sliding-window).
 *
 * A window's state is ONE 64-bit word: the window number (the data-path
 * clock divided by the window length, 32 bits, compared as a signed
 * difference so that it may wrap) above the count of cost units admitted in
 * it (32 bits: limits up to 2^32 - 1 per window). A CPU decides on words it
 * read and publishes with one compare-and-swap, as the GCRA does.
 *
 * Windows are aligned on multiples of the window length of the data path's
 * monotonic clock (not the wall clock): "calendar" windows of that clock.
 *
 * The time of a key never goes back: a packet whose clock reads an older
 * window than the newest one its key's words hold (another CPU read the
 * coarse clock a tick later) is counted in that newest window, as if it came
 * at that window's start.
 */
#define XRL_WIN_COUNT_MAX	0xffffffffULL

XRL_INLINE __u64 xrl_win_word(__u32 window, __u64 count)
{
	return (__u64)window << 32 | (__u32)count;
}

/* A word that is empty for `now` and for the window before it: a new key. */
XRL_INLINE __u64 xrl_win_empty(__u64 now_ns, __u64 window_ns)
{
	return xrl_win_word((__u32)(now_ns / window_ns) - 2, 0);
}

/*
 * Fixed window: at most `limit` cost units per window. Returns 1 and sets
 * *next when `cost` may pass at now_ns, 0 when not (the word unchanged).
 */
XRL_INLINE int xrl_fixed_window(__u64 word, __u64 now_ns, __u64 window_ns,
				__u64 limit, __u64 cost, __u64 *next)
{
	__u32 w = now_ns / window_ns, sw = word >> 32;
	__u64 count = (__u32)word;

	if ((__s32)(w - sw) <= 0)	/* this window, or a lagging clock */
		w = sw;
	else
		count = 0;		/* a later window starts empty */
	if (count + cost > limit)
		return 0;
	*next = xrl_win_word(w, count + cost);
	return 1;
}

/*
 * Sliding window counter (the brief's): with the counts of the current and
 * the previous window and the share e/W of the current window elapsed,
 *     estimated = previous * (1 - e/W) + current
 * and a packet passes while estimated < limit; for a cost c > 1, while
 * floor(previous * (W - e) / W) + current + c <= limit (the same test for
 * c = 1, as current and limit are whole numbers).
 *
 * Two words, s[window & 1]: each holds its window's count. Elapsed time is
 * taken in microseconds so that previous * (W - e) stays below 2^64
 * (previous < 2^32, a window of at most an hour is 3.6e9 us < 2^32); the
 * clock of the data path ticks far coarser than that anyway.
 *
 * Returns the index of the word to write (0 or 1) with *next, or -1 when
 * `cost` may not pass.
 */
XRL_INLINE __u64 xrl_sliding_weighted(__u64 prev, __u64 elapsed_ns, __u64 window_ns)
{
	__u64 w_us = window_ns / 1000, e_us = elapsed_ns / 1000;

	if (e_us >= w_us)
		return 0;
	return prev * (w_us - e_us) / w_us;
}

XRL_INLINE int xrl_sliding_window(__u64 s0, __u64 s1, __u64 now_ns, __u64 window_ns,
				  __u64 limit, __u64 cost, __u64 *next)
{
	__u64 wn = now_ns / window_ns, elapsed = now_ns - wn * window_ns;
	__u32 w = wn, w0 = s0 >> 32, w1 = s1 >> 32;
	__u64 cw, pw, cur, prev;

	/* a lagging clock: at the start of the newest window seen */
	if ((__s32)(w0 - w) > 0) {
		w = w0;
		elapsed = 0;
	}
	if ((__s32)(w1 - w) > 0) {
		w = w1;
		elapsed = 0;
	}
	cw = w & 1 ? s1 : s0;
	pw = w & 1 ? s0 : s1;
	cur = (__u32)(cw >> 32) == w ? (__u32)cw : 0;
	prev = (__u32)(pw >> 32) == w - 1 ? (__u32)pw : 0;
	if (xrl_sliding_weighted(prev, elapsed, window_ns) + cur + cost > limit)
		return -1;
	*next = xrl_win_word(w, cur + cost);
	return w & 1;
}

/* Cost units a window algorithm would admit now (s1 unused by the fixed
 * window): limit - estimated, 0 .. limit. */
XRL_INLINE __u64 xrl_window_left(int sliding, __u64 s0, __u64 s1, __u64 now_ns,
				 __u64 window_ns, __u64 limit)
{
	__u64 lo = 0, hi = limit, next;

	/* the largest cost that passes: a binary search on the very test */
	while (lo < hi) {
		__u64 mid = lo + (hi - lo + 1) / 2;
		int ok = sliding ? xrl_sliding_window(s0, s1, now_ns, window_ns, limit, mid, &next) >= 0
				 : xrl_fixed_window(s0, now_ns, window_ns, limit, mid, &next);

		if (ok)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * "Refused until": the first time a key whose bucket refused a packet of
 * `cost` may admit a packet of that cost or more again. Before it every
 * such packet is refused, whatever other CPUs admit meanwhile (a bucket's
 * state only moves towards "more refused" until then), so the hot-key cache
 * drops until then without looking at the bucket. 0: no such time is known
 * at once (the cache leaves it to the bucket).
 *
 * Token bucket: a packet at now is refused iff tat' + T * cost - now > L for
 * the bucket's tat' >= tat (TAT only grows), so every packet before
 * tat + T * cost - L is refused.
 */
XRL_INLINE __u64 xrl_gcra_refused_until(__u64 tat, __u64 interval, __u64 limit, __u64 cost)
{
	return tat + interval * cost - limit;
}

/*
 * Fixed window: refused in the window the word holds, which is now's: its
 * count only grows until the next window starts. (A word of a later window
 * than now's, a lagging clock, or a refusal in a fresh window, a cost over
 * the limit: 0.)
 */
XRL_INLINE __u64 xrl_fixed_refused_until(__u64 word, __u64 now_ns, __u64 window_ns)
{
	__u64 wn = now_ns / window_ns;

	if ((__u32)wn != (__u32)(word >> 32))
		return 0;
	return (wn + 1) * window_ns;
}

/*
 * Sliding window, refused at now: both counts only grow within now's window
 * and the previous one's weight only falls, so the estimate stays above
 * the limit while floor(prev * (W - e) / W) > limit - cur - cost =: k, that
 * is while prev * (W - e) >= (k + 1) * W (e, W in microseconds, as
 * xrl_sliding_weighted() takes them): e <= W - ceil((k + 1) * W / prev).
 * When the current window alone is full, until its end. Not past the end
 * of now's window (the next one starts from these counts: no closed form
 * worth it). A lagging clock: 0.
 */
XRL_INLINE __u64 xrl_sliding_refused_until(__u64 s0, __u64 s1, __u64 now_ns, __u64 window_ns,
					   __u64 limit, __u64 cost)
{
	__u64 wn = now_ns / window_ns, start = wn * window_ns;
	__u32 w = wn, w0 = s0 >> 32, w1 = s1 >> 32;
	__u64 cw, pw, cur, prev, k, w_us, need;

	if ((__s32)(w0 - w) > 0 || (__s32)(w1 - w) > 0)
		return 0;
	cw = w & 1 ? s1 : s0;
	pw = w & 1 ? s0 : s1;
	cur = (__u32)(cw >> 32) == w ? (__u32)cw : 0;
	prev = (__u32)(pw >> 32) == w - 1 ? (__u32)pw : 0;
	if (cur + cost > limit)
		return start + window_ns;
	k = limit - cur - cost;
	w_us = window_ns / 1000;
	if (!prev || !w_us)
		return 0;
	/* k + 1 <= 2^32, w_us < 2^32: no overflow */
	need = ((k + 1) * w_us + prev - 1) / prev;
	if (need > w_us)
		return 0;		/* not refused at the window's start */
	return start + (w_us - need + 1) * 1000;
}

/* Is now before `until` (signed: the clock may wrap)? */
XRL_INLINE int xrl_before(__u64 now, __u64 until)
{
	return (__s64)(until - now) > 0;
}

/*
 * Tokens a CPU takes at once from a shared GCRA (aggregate, new-key budget).
 * Tokens held by CPUs are granted but not yet spent, so a window may see up
 * to ncpus * chunk fewer passes than burst + rate * t: a chunk of 1/100 of
 * the burst shared among the CPUs keeps that within 1 %. At least 1, at
 * most 1024.
 */
#define XRL_CHUNK_MAX	1024

XRL_INLINE __u32 xrl_chunk(__u64 burst, __u32 ncpus)
{
	__u64 c = burst / (100ULL * (ncpus ? ncpus : 1));

	if (c < 1)
		c = 1;
	if (c > XRL_CHUNK_MAX)
		c = XRL_CHUNK_MAX;
	return (__u32)c;
}

/*
 * The segments a TCP or UDP packet of l3_len bytes (its IP length) carries
 * when it is longer than the interface's MTU: a GRO or GSO aggregate, which
 * generic-mode XDP sees as one linear frame. Every segment but the last is
 * full (MTU bytes), and each repeats the aggregate's headers (hdrs bytes:
 * IP, extension headers, TCP with its options or UDP), so the aggregate's
 * payload comes in pieces of mtu - hdrs bytes. 1 for a packet that fits
 * the MTU, or headers that leave no room.
 */
XRL_INLINE __u32 xrl_segments(__u32 l3_len, __u32 hdrs, __u32 mtu)
{
	__u32 room;

	if (l3_len <= mtu || mtu <= hdrs || l3_len <= hdrs)
		return 1;
	room = mtu - hdrs;
	return (l3_len - hdrs + room - 1) / room;
}

#endif /* XRL_METER_H */

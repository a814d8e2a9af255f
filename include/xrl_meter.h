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
 * The first time a bucket refused at `tat` may admit again: a packet at
 * now is refused iff tat' + T - now > L for the bucket's tat' >= tat (TAT
 * only grows), so every packet before tat + T - L is refused. The hot-key
 * cache drops until then without looking at the bucket.
 */
XRL_INLINE __u64 xrl_gcra_refused_until(__u64 tat, __u64 interval, __u64 limit)
{
	return tat + interval - limit;
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

#endif /* XRL_METER_H */

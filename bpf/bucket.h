/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Meter one key: its bucket, by GCRA or by a fixed or sliding window,
 * exact across CPUs.
 */
#ifndef XRL_BPF_BUCKET_H
#define XRL_BPF_BUCKET_H

#include "maps.h"
#include "context.h"
#include "events.h"
#include "ban.h"
#include "shared.h"

/* The state of a new key with this first packet admitted; 0 when even the
 * first may not pass (a frame longer than a byte rule's burst or window). */
static __always_inline int new_bucket(struct xrl_bucket *nb, const struct xrl_step *m)
{
	const struct xrl_rule *r = m->r;
	__u64 now_ns = m->now_ns, cost = m->cost;
	__u64 empty;

	if (r->algo == XRL_ALGO_GCRA) {
		__u64 now = xrl_ns_to_tu(now_ns);

		return xrl_gcra(now, now, r->interval, r->limit, cost, &nb->tat);
	}
	empty = xrl_win_empty(now_ns, r->interval);
	nb->tat = nb->win1 = empty;
	if (r->algo == XRL_ALGO_FIXED_WINDOW)
		return xrl_fixed_window(empty, now_ns, r->interval, r->limit, cost, &nb->tat);
	if (xrl_sliding_window(empty, empty, now_ns, r->interval, r->limit, cost,
			       &empty) < 0)
		return 0;
	if ((__u32)(empty >> 32) & 1)
		nb->win1 = empty;
	else
		nb->tat = empty;
	return 1;
}

/* Take back a tentative sliding-window admission: subtract cost from the
 * word while it still holds that window. A word that moved on to a later
 * window took the count with it; a subtraction that keeps losing leaves
 * the count a little high: both only make later decisions stricter. */
static __always_inline void window_undo(__u64 *word, __u64 mine, __u64 cost)
{
	int i;

	for (i = 0; i < XRL_CAS_TRIES; i++) {
		__u64 v = READ_ONCE(*word);

		if ((v >> 32) != (mine >> 32) || (__u32)v < cost)
			return;
		if (__sync_val_compare_and_swap(word, v, v - cost) == v)
			return;
	}
}

/* A pass of a limited key under a window algorithm: no longer limited at
 * its first pass in a window that had admitted nothing before it. */
static __always_inline void window_passed(struct xrl_bucket *b, const struct xrl_step *m,
					  __u64 next)
{
	if ((__u32)next == m->cost)
		key_unlimited(b, m);
}

/*
 * Meter with a window algorithm (xrl_meter.h), exact across CPUs.
 *
 * Fixed window: one word, one compare-and-swap, as the GCRA.
 *
 * Sliding window: a decision reads both words (previous and current
 * window) but swaps only the current one; it then reads the other word
 * again and keeps its admission only when that word did not change in
 * between. Why this is exact: a kept admission saw one value of each word
 * that both held at the moment of its swap (the swapped word by the swap
 * itself, the other by the unchanged second read around it), so it is the
 * sequential decision at that moment. The only writes to the other word are
 * a lagging CPU counting in the previous window, or a CPU that opened the
 * next window; each of them re-checks our word after its own swap in turn,
 * so of two racing decisions at least the later one sees the other's word
 * change and takes its admission back (window_undo) and decides again. An
 * admission taken back never over-admits: it counted for a moment, which
 * can only have made a racing decision stricter. Losing every try drops.
 *
 * A refusal sets m->until (time units) to the algorithm's "refused until",
 * or 0 when it has none (xrl_meter.h).
 */
static __always_inline int meter_window(struct xrl_bucket *b, struct xrl_step *m)
{
	const struct xrl_rule *r = m->r;
	__u64 now_ns = m->now_ns, cost = m->cost;
	__u64 s0, s1, next, u;
	int i, k;

	for (i = 0; i < XRL_CAS_TRIES; i++) {
		s0 = READ_ONCE(b->tat);
		if (r->algo == XRL_ALGO_FIXED_WINDOW) {
			if (!xrl_fixed_window(s0, now_ns, r->interval, r->limit, cost, &next)) {
				u = xrl_fixed_refused_until(s0, now_ns, r->interval);
				m->until = u ? xrl_ns_to_tu(u) : 0;
				break;
			}
			if (__sync_val_compare_and_swap(&b->tat, s0, next) != s0)
				continue;
			goto passed;
		}
		s1 = READ_ONCE(b->win1);
		k = xrl_sliding_window(s0, s1, now_ns, r->interval, r->limit, cost, &next);
		if (k < 0) {
			u = xrl_sliding_refused_until(s0, s1, now_ns, r->interval, r->limit, cost);
			m->until = u ? xrl_ns_to_tu(u) : 0;
			break;
		}
		if (k) {
			if (__sync_val_compare_and_swap(&b->win1, s1, next) != s1)
				continue;
			if (READ_ONCE(b->tat) == s0)
				goto passed;
			window_undo(&b->win1, next, cost);
		} else {
			if (__sync_val_compare_and_swap(&b->tat, s0, next) != s0)
				continue;
			if (READ_ONCE(b->win1) == s1)
				goto passed;
			window_undo(&b->tat, next, cost);
		}
	}
	return ban_bucket_dropped(b, m);
passed:
	if (b->limited)
		window_passed(b, m, next);
	return XRL_PASS;
}

/*
 * Meter: the (rule, key) bucket, exact across CPUs. Inlined once per family
 * with a constant map: the verifier inlines a hash look-up only where the
 * map is known (a map chosen by a branch cost 8-14 ns a packet here).
 * A refusal sets m->until, which the hot-key cache may answer from then on
 * (hot_cacheable()). The key is the bucket map's key of m->kaddr.
 */
static __always_inline int meter_bucket(void *map, const void *key, struct xrl_step *m)
{
	const struct xrl_rule *r = m->r;
	struct xrl_rule_stats *rs = m->rs;
	__u64 now_ns = m->now_ns, cost = m->cost;
	struct xrl_bucket *b;
	__u64 now = xrl_ns_to_tu(now_ns);
	__u64 old, tat;
	int i;

	b = bpf_map_lookup_elem(map, key);
	if (!b) {
		/* A new key starts with a full bucket; burst >= 1, so this
		 * first packet passes. Insert only new keys: an update of an
		 * existing key in a full LRU may evict another entry. A new
		 * key needs the rule's new-key budget first. */
		struct xrl_bucket nb = { .last_ns = now_ns };

		if (!newkey_admits(r, now, rs))
			return XRL_NO_BUDGET;
		if (new_bucket(&nb, m) &&
		    bpf_map_update_elem(map, key, &nb, BPF_NOEXIST) == 0) {
			struct xrl_global_stats *gs;
			__u32 zero = 0;

			gs = bpf_map_lookup_elem(&xrl_global_stats, &zero);
			if (gs)
				gs->keys_inserted++;
			if (rs)
				rs->new_keys++;
			return XRL_PASS;
		}
		/* Another CPU inserted it first: meter against its bucket. */
		b = bpf_map_lookup_elem(map, key);
		if (!b)
			return XRL_DROP;
	}

	b->last_ns = now_ns;
	if (r->algo != XRL_ALGO_GCRA)
		return meter_window(b, m);
	for (i = 0; i < XRL_CAS_TRIES; i++) {
		old = READ_ONCE(b->tat);
		if (!xrl_gcra(old, now, r->interval, r->limit, cost, &tat)) {
			/* refused at this cost: refused until then, whatever
			 * other CPUs do (TAT only grows) */
			m->until = xrl_gcra_refused_until(old, r->interval, r->limit, cost);
			break;
		}
		if (__sync_val_compare_and_swap(&b->tat, old, tat) == old) {
			if (b->limited)		/* the steady path reads one word */
				key_passed(b, m, old, now);
			return XRL_PASS;
		}
	}
	return ban_bucket_dropped(b, m);
}

#endif

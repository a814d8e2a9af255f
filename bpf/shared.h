/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The rule's shared GCRAs: the aggregate and the new-key budget, taken in
 * per-CPU chunks.
 */
#ifndef XRL_BPF_SHARED_H
#define XRL_BPF_SHARED_H

#include "maps.h"
#include "context.h"
#include "clock.h"

/*
 * One token of a shared GCRA (the aggregate, the new-key budget), taken in
 * chunks: a CPU takes `chunk` tokens with one compare-and-swap and spends
 * them from its own per-CPU counter, so that far from the limit the shared
 * cache line is written once per chunk, not once per packet. Near the
 * limit a whole chunk is not there: take one token.
 */
static __always_inline int take_shared(__u64 *tat, __u64 *tokens, __u64 now,
				       __u64 interval, __u64 limit, __u32 chunk, __u64 *until)
{
	__u64 old, cur, next, cost;
	int i;

	if (*tokens) {
		(*tokens)--;
		return 1;
	}
	for (i = 0; i < XRL_CAS_TRIES; i++) {
		old = READ_ONCE(*tat);
		/* 0: a fresh slot, a full bucket whatever the clock reads (time
		 * units wrap 2^64 after 9 years: 0 is not always the past) */
		cur = old ? old : now;
		cost = chunk;
		if (!xrl_gcra(cur, now, interval, limit, cost, &next)) {
			cost = 1;
			if (!xrl_gcra(cur, now, interval, limit, 1, &next)) {
				*until = xrl_gcra_refused_until(cur, interval, limit, 1);
				return 0;
			}
		}
		if (__sync_val_compare_and_swap(tat, old, next) == old) {
			*tokens = cost - 1;
			return 1;
		}
	}
	return 0;
}

/* The rule's aggregate: 1 when it admits the packet (or there is none). */
static __always_inline int aggregate_admits(const struct xrl_rule *r, __u64 now,
					    struct xrl_rule_stats *rs)
{
	struct xrl_rule_shared *sh;
	__u64 none = 0, until = 0;

	if (!r->agg_interval)
		return 1;
	sh = bpf_map_lookup_elem(&xrl_rule_shared, &r->slot);
	if (!sh)
		return 0;
	if (take_shared(&sh->agg_tat, rs ? &rs->agg_tokens : &none, now,
			r->agg_interval, r->agg_limit, rs ? r->agg_chunk : 1, &until))
		return 1;
	if (rs) {
		rs->agg_dropped++;
		rs->agg_until = until;
		rs->agg_checked_j = 0;
	}
	return 0;
}

/*
 * The aggregate is known exhausted on this CPU (its shared GCRA refused
 * one token, and TAT only grows): every packet of the rule is dropped until
 * then, before its key is looked up; no key's bucket or new-key budget is
 * charged. What a spoofed flood costs once the aggregate is spent. The
 * clock is read once a tick, as for the hot-key cache (struct xrl_hot).
 */
static __always_inline int aggregate_closed(const struct xrl_rule *r,
					    const struct xrl_control *ctrl,
					    struct xrl_rule_stats *rs)
{
	__u64 j = 0;

	if (!r->agg_interval || !rs || !rs->agg_until)
		return 0;
	if (!use_test_clock && !r->precise) {
		j = bpf_jiffies64();
		if (j == rs->agg_checked_j)
			goto closed;
	}
	if (!xrl_before(xrl_ns_to_tu(rule_clock_ns(ctrl, r)), rs->agg_until)) {
		rs->agg_until = 0;	/* open again: no more checks */
		return 0;
	}
	rs->agg_checked_j = j;
closed:
	rs->agg_dropped++;
	return 1;
}

/* May a new key of this rule get a bucket now? */
static __always_inline int newkey_admits(const struct xrl_rule *r, __u64 now,
					 struct xrl_rule_stats *rs)
{
	struct xrl_rule_shared *sh;
	__u64 none = 0, until;

	if (!r->nk_interval)
		return 1;
	sh = bpf_map_lookup_elem(&xrl_rule_shared, &r->slot);
	if (!sh)
		return 0;
	if (take_shared(&sh->nk_tat, rs ? &rs->nk_tokens : &none, now,
			r->nk_interval, r->nk_limit, rs ? r->nk_chunk : 1, &until))
		return 1;
	if (rs)
		rs->nk_refused++;
	return 0;
}

#endif

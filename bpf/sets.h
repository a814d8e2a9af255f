/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Named sets (xdp_rl_common.h, docs/sets.md): the rules that take a set,
 * checked before the prefix rules; the first whose set holds the packet's
 * source (an element not expired) is the packet's rule.
 */
#ifndef XRL_BPF_SETS_H
#define XRL_BPF_SETS_H

#include "maps.h"
#include "clock.h"

/* Does set `slot` hold the source? The most specific element covering it;
 * an expired one is stepped over to the next shorter one (a look-up with
 * a shorter prefix length), at most XRL_SET_EXPIRED_HOPS times: an element
 * expires in the data path, with no daemon running, and until it is swept
 * it hides no shorter element behind it (beyond those hops). */
static __always_inline int set_holds(__u32 slot, const struct xrl_set_key *k0,
				     const struct xrl_control *ctrl)
{
	__u64 now = 0;
	struct xrl_set_key k = *k0;
	struct xrl_set_elem *e;
	void *set;

	set = bpf_map_lookup_elem(&xrl_sets, &slot);
	if (!set)
		return 0;
	for (int i = 0; i < XRL_SET_EXPIRED_HOPS; i++) {
		e = bpf_map_lookup_elem(set, &k);
		if (!e)
			return 0;
		if (!e->expires_ns)
			return 1;
		/* the clock only for an element that expires */
		if (!now)
			now = clock_ns(ctrl);
		if ((__s64)(e->expires_ns - now) > 0)
			return 1;
		/* expired: the next shorter element, never across the
		 * family byte */
		if (e->prefixlen <= 8 || e->prefixlen > k.prefixlen)
			return 0;
		k.prefixlen = e->prefixlen - 1;
	}
	return 0;
}

/* What one step of the walk over the set rules shares (bpf_loop()). */
struct set_walk {
	struct xrl_set_key k;	/* the source, as a set's key */
	void *rules;		/* the published set rules */
	const struct xrl_control *ctrl;
	__u32 base;		/* the family's first entry */
	__u32 found;		/* the index of the rule; XRL_SET_NONE: none */
};
#define XRL_SET_NONE	0xffffffffu

/* One set rule: stop at the end of the list or at the first set that
 * holds the source. A callback of bpf_loop(): the verifier checks it once,
 * not once per rule (unrolled, 64 rules of 4 hops passed its limit). */
static long set_walk_step(__u32 i, void *ctx)
{
	struct set_walk *w = ctx;
	__u32 idx = w->base + i;
	struct xrl_rule *r = bpf_map_lookup_elem(w->rules, &idx);

	if (!r || !r->id)
		return 1;
	if (r->set && set_holds(r->set - 1, &w->k, w->ctrl)) {
		w->found = idx;
		return 1;
	}
	return 0;
}

/*
 * The set rule of a packet, or NULL: the published set rules of its family
 * in order (allow rules first, then by id), up to the first of id 0. Two
 * array look-ups when no rule takes a set. Not inlined: its walk's state
 * stays off the pipeline's frame, which the rule step's chain of calls
 * shares within the verifier's 512 bytes of stack.
 */
static __noinline struct xrl_rule *classify_sets(const struct xrl_pkt *p,
						 const struct xrl_control *ctrl)
{
	struct set_walk w = { .k = { .prefixlen = 8 + 128, .family = 6 }, .found = XRL_SET_NONE };
	struct xrl_rule *first;
	__u32 zero = 0;

	/* no rule takes a set (struct xrl_control.features): no look-up */
	if (!(READ_ONCE(ctrl->features) & XRL_FEAT_SETS))
		return NULL;
	w.rules = bpf_map_lookup_elem(&xrl_set_rules, &zero);
	if (!w.rules)
		return NULL;
	if (p->family == 4) {
		w.k.prefixlen = 8 + 32;
		w.k.family = 4;
		__builtin_memcpy(w.k.addr, &p->saddr[0], 4);
	} else {
		w.base = XRL_MAX_SET_RULES;
		__builtin_memcpy(w.k.addr, p->saddr, 16);
	}
	/* no set rule: no loop */
	first = bpf_map_lookup_elem(w.rules, &w.base);
	if (!first || !first->id)
		return NULL;
	w.ctrl = ctrl;
	bpf_loop(XRL_MAX_SET_RULES, set_walk_step, &w, 0);
	if (w.found == XRL_SET_NONE)
		return NULL;
	return bpf_map_lookup_elem(w.rules, &w.found);
}

#endif

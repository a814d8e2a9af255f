/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The endpoint rule first (docs/rules.md, "Endpoint rules", its Order): a packet whose endpoint
 * rule's bucket refuses it now is dropped by the endpoint rule and costs its
 * source rule nothing; a packet its source rule refuses costs the endpoint
 * rule nothing (as before). Where the order applies:
 *   - enforcing, with a source rule that limits (deny and allow decide
 *     first; a packet of no source rule is unmatched, then meets its
 *     endpoint rule, as before);
 *   - an endpoint rule the hot-key cache may answer for (hot_cacheable():
 *     enforcing, not dry-run, host scope, no slip) that limits;
 *   - its key's bucket refuses the packet at the least it costs (one
 *     segment; a byte rule: its length) under the watchdog quiet: a pure
 *     read of the bucket (xrl_ep_refuses()), nothing committed.
 * The endpoint rule's step then decides alone (it drops, counts, fills the
 * cache); everything else takes the source step, then the endpoint step.
 *
 * The hot-key cache under that order: an endpoint rule's entry is keyed by
 * the source and the packet's endpoint slot (ep_slot(): what it is, known
 * from parsing), not its class, so that it can be looked up before the
 * source rule is classified; slot -> class -> rule is fixed by a commit,
 * which bumps the epoch. An entry made where the source rule limits
 * (struct ep_first.first) carries EP_KEY_FIRST in its key and answers
 * right after parsing (UDP, other protocols) or after the SYN-cookie step
 * (TCP, which that step may answer): the packet its full path gives to the
 * endpoint rule first. The source rule's own early answer is then limited
 * to packets of no endpoint class (with XRL_FEAT_ENDPOINTS set), and meets
 * the others only once the peek found their endpoint rule admitting: it
 * never takes a packet the order gives to the endpoint rule.
 */
#ifndef XRL_BPF_EPFIRST_H
#define XRL_BPF_EPFIRST_H

#include "maps.h"
#include "context.h"
#include "clock.h"
#include "classify.h"
#include "hot.h"

/* The hot-key cache's klass of an endpoint rule's entry: the slot, marked
 * (a class never has these bits), and EP_KEY_FIRST for the entries of
 * sources whose source rule limits. */
#define EP_KEY_SLOT	0x80000000u
#define EP_KEY_FIRST	0x40000000u

/* What the pipeline learnt of the packet's endpoint rule on the way: 8
 * bytes of the pipeline's frame, which the chain of calls shares within
 * the verifier's 512 bytes of stack (the rule is looked up again). */
struct ep_first {
	__u32 class;		/* its endpoint class (looked); 0: none */
	__u8 looked;		/* the class was looked up */
	__u8 first;		/* its source rule limits, enforcing: the order applies */
	__u8 stepped;		/* the endpoint rule's step ran (a refill raced the peek) */
	__u8 pad;
};

/* The rule steps (xdp_rl.bpf.c): global functions. */
__noinline int xrl_rule_step(struct xdp_md *ctx, const struct xrl_pkt *p,
			     const struct xrl_rule *r, __u32 mode, __u32 epoch);
__noinline int xrl_rule_step_tc(struct __sk_buff *ctx, const struct xrl_pkt *p,
				const struct xrl_rule *r, __u32 mode, __u32 epoch);

static __always_inline __u32 ep_key(const struct xrl_pkt *p, int first)
{
	return EP_KEY_SLOT | (first ? EP_KEY_FIRST : 0) | ep_slot(p);
}

/* TCP with its ports: the SYN-cookie step comes first. */
static __always_inline int ep_tcp(const struct xrl_pkt *p)
{
	return p->ports && p->l4proto == IPPROTO_TCP;
}

/*
 * Right after parsing, enforcing: the hot-key cache. Without endpoint
 * rules, the source's entry as before. With them, the packet's class first
 * (one array look-up, kept for later): a packet with an endpoint class
 * meets the entry of (source, slot) made under a limiting source rule
 * (not TCP: after the SYN-cookie step), one without meets its source's.
 * 1: dropped (counted by the cache).
 */
static __always_inline int ep_early(struct xrl_pkt *p, const struct xrl_control *ctrl,
				    __u32 epoch, struct ep_first *f)
{
	int hit;

	if (READ_ONCE(ctrl->features) & XRL_FEAT_ENDPOINTS) {
		f->class = endpoint_class(p);
		f->looked = 1;
		if (f->class) {
			if (ep_tcp(p))
				return 0;
			p->klass = ep_key(p, 1);
		}
	} else {
		f->looked = 1;	/* no endpoint rule: no class to look up later */
	}
	hit = hot_drop(p, ctrl, epoch);
	p->klass = 0;
	return hit;
}

/*
 * Does the rule's key bucket refuse the packet now, at the least it costs
 * (one segment; a byte rule: its length)? A pure read of the algorithm
 * (xrl_meter.h): nothing is written. 0 when the key has no bucket (a new
 * key's first packet passes) or the watchdog fired (the rule's failure
 * policy decides, not its bucket). A global function: verified once.
 */
__noinline int xrl_ep_refuses(const struct xrl_pkt *p, const struct xrl_rule *r)
{
	struct xrl_control *ctrl;
	struct xrl_bucket *b;
	__u32 zero = 0;
	__u64 now_ns, cost, next;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!p || !r || !ctrl)
		return 0;
	now_ns = rule_clock_ns(ctrl, r);
	if (watchdog_fired(ctrl, now_ns))
		return 0;
	if (p->family == 4) {
		struct xrl_bucket_key4 k4 = {
			.gen = r->gen,
			.addr = p->saddr[0] & r->key_mask[0],
		};

		b = bpf_map_lookup_elem(&xrl_buckets4, &k4);
	} else {
		struct xrl_bucket_key6 k6 = {
			.gen = r->gen,
			.addr = {
				p->saddr[0] & r->key_mask[0], p->saddr[1] & r->key_mask[1],
				p->saddr[2] & r->key_mask[2], p->saddr[3] & r->key_mask[3],
			},
		};

		b = bpf_map_lookup_elem(&xrl_buckets6, &k6);
	}
	if (!b)
		return 0;
	cost = r->unit == XRL_UNIT_PACKETS ? 1 : p->len;
	if (r->algo == XRL_ALGO_FIXED_WINDOW)
		return !xrl_fixed_window(READ_ONCE(b->tat), now_ns, r->interval, r->limit, cost,
					 &next);
	if (r->algo == XRL_ALGO_SLIDING_WINDOW)
		return xrl_sliding_window(READ_ONCE(b->tat), READ_ONCE(b->win1), now_ns,
					  r->interval, r->limit, cost, &next) < 0;
	return !xrl_gcra(READ_ONCE(b->tat), xrl_ns_to_tu(now_ns), r->interval, r->limit, cost,
			 &next);
}

/* The hot-key cache out of line, for the look-ups of this step (the early
 * one stays inlined): verified once. 1: dropped. */
__noinline int xrl_ep_hot_drop(struct xrl_pkt *p, __u32 epoch)
{
	struct xrl_control *ctrl;
	__u32 zero = 0;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!p || !ctrl)
		return 0;
	return hot_drop(p, ctrl, epoch);
}

/* The packet's endpoint class and rule, each looked up once. */
static __always_inline __u32 ep_class_of(const struct xrl_pkt *p, struct ep_first *f)
{
	if (!f->looked) {
		f->class = endpoint_class(p);
		f->looked = 1;
	}
	return f->class;
}

static __always_inline struct xrl_rule *ep_rule_of(const struct xrl_pkt *p, struct ep_first *f)
{
	return classify_endpoint(p, f->class);
}

/*
 * After the source rule's classification and the SYN-cookie step, before
 * the source step: the endpoint rule first when its bucket refuses the
 * packet now. XRL_PASS: on to the source step (the endpoint step after it
 * unless f->stepped); else the decision (the endpoint rule's drop, or the
 * source's cached one). The endpoint step's entry is (source, slot) under
 * EP_KEY_FIRST.
 */
static __always_inline int ep_first_step(void *ctx, struct xrl_pkt *p,
					 const struct xrl_rule *src, __u32 mode, __u32 epoch,
					 int hook, struct ep_first *f)
{
	struct xrl_rule *ep;
	int decision;

	/* without endpoint rules (f->looked 0), or unless the source rule
	 * limits while enforcing: the source step, then the endpoint's */
	if (!f->looked || mode != XRL_MODE_ENFORCE || !src || src->action != XRL_ACT_LIMIT ||
	    !f->class)
		return XRL_PASS;
	f->first = 1;
	p->klass = ep_key(p, 1);
	if (ep_tcp(p) && xrl_ep_hot_drop(p, epoch)) {
		p->klass = 0;
		return XRL_DROP;
	}
	ep = ep_rule_of(p, f);
	if (ep && ep->action == XRL_ACT_LIMIT && hot_cacheable(ep, mode) &&
	    xrl_ep_refuses(p, ep)) {
		decision = hook == XRL_HOOK_TC ? xrl_rule_step_tc(ctx, p, ep, mode, epoch) :
						 xrl_rule_step(ctx, p, ep, mode, epoch);
		p->rule_slot = ep->slot + 1;
		p->klass = 0;
		if (decision != XRL_PASS)
			return decision;
		/* admitted after all: a refill between the peek and the
		 * step (the clock ticked, or another CPU's), charged to the
		 * endpoint rule; the source rule decides now, as before */
		f->stepped = 1;
		return XRL_PASS;
	}
	/* the endpoint rule admits: the source rule's cached answer, which
	 * the early look-up left to this point */
	p->klass = 0;
	return xrl_ep_hot_drop(p, epoch) ? XRL_DROP : XRL_PASS;
}

/* The late endpoint step's key in the hot-key cache: (source, slot),
 * EP_KEY_FIRST where the order applies (its entries answer early). */
static __always_inline __u32 ep_late_key(const struct xrl_pkt *p, const struct ep_first *f)
{
	return ep_key(p, f->first);
}

#endif

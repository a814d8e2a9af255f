/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the steps of the pipeline share: the decisions, the context of one
 * rule's step for one packet, the compare-and-swap discipline.
 */
#ifndef XRL_BPF_CONTEXT_H
#define XRL_BPF_CONTEXT_H

#include "parsing.h"
#include "xdp_rl_common.h"
#include "xrl_meter.h"

#define READ_ONCE(x)	(*(volatile typeof(x) *)&(x))

/* A compare-and-swap that keeps losing means other CPUs keep admitting
 * packets of this key: dropping after a few tries never over-admits. */
#define XRL_CAS_TRIES	8

enum xrl_decision {
	XRL_PASS = 0,
	XRL_DROP = 1,
	XRL_NO_BUDGET = 2,	/* meter_bucket: a new key found no new-key budget */
	/* an answer the step built in place, sent back out of the receiving
	 * interface (XDP_TX); counted as answered, not passed, not dropped */
	XRL_TX = 3,
	/* the rule step's refusal whose turn it is to be answered by DNS slip
	 * (counted as dropped by the rule; the pipeline's answer step then
	 * answers it or drops it) */
	XRL_SLIP = 4,
};

/*
 * One rule's step for one packet: what decide, the meter, the bucket, the
 * events and the hot-key cache share, filled as the step goes (the rule
 * step: packet, rule, stats, mode, epoch, segments; decide: the clock; the
 * meter: cost and key). It lives on the stack of the rule step and is only
 * handed to inlined functions, so the compiler keeps its fields in
 * registers: no function out of line takes it.
 */
struct xrl_step {
	const struct xrl_pkt *p;	/* the packet */
	const struct xrl_rule *r;	/* its rule (a fleet rule: at its share) */
	struct xrl_rule_stats *rs;	/* the rule's counters on this CPU; may be NULL */
	const struct xrl_control *ctrl;
	const __u32 *kaddr;		/* the key: the masked source, 16 bytes */
	__u64 now_ns;			/* the rule's clock (rule_clock_ns()) */
	__u64 cost;			/* segments, or bytes for a byte rule */
	__u64 until;			/* a refusal: refused until (time units), 0: not known */
	__u32 mode;			/* the control block's mode */
	__u32 epoch;			/* the hot-key cache's epoch before the rule set */
	__u32 segs;			/* the segments the packet carries */
	__u32 family;			/* of the key: 4 or 6 */
	__u64 kdrops;			/* a refusal of the key's bucket: the key's
					 * drops with this one; 0: not the bucket's */
};

#endif

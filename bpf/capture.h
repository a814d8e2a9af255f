/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Capture: a copy of the packet and its final verdict on the perf ring,
 * while `xdp-rlctl capture` runs (xdp_rl_common.h, struct xrl_capture).
 * The last step of the pipeline, called from verdict(): it reads the
 * packet and the decision, never changes them. While no capture runs, the
 * whole cost is the test of xrl_control.capture_until, a word in the cache
 * line of the epoch that the packet has read already.
 */
#ifndef XRL_BPF_CAPTURE_H
#define XRL_BPF_CAPTURE_H

#include "maps.h"
#include "context.h"
#include "clock.h"

/* The filter: verdict, deciding rule, source prefix. */
static __always_inline int capture_match(const struct xrl_capture *c,
					 const struct xrl_pkt *p, __u32 verdict)
{
	if (!(c->verdicts & verdict))
		return 0;
	if (c->rule_slot && c->rule_slot != p->rule_slot)
		return 0;
	if (!c->family)
		return 1;
	if (c->family != p->family)
		return 0;
	return (p->saddr[0] & c->mask[0]) == c->addr[0] &&
	       (p->saddr[1] & c->mask[1]) == c->addr[1] &&
	       (p->saddr[2] & c->mask[2]) == c->addr[2] &&
	       (p->saddr[3] & c->mask[3]) == c->addr[3];
}

/* The rate cap: a GCRA on the coarse clock, shared by every CPU: at most
 * burst + rate x (W + one tick) records in any window W. A lost
 * compare-and-swap leaves the packet out: never more than that. */
static __always_inline int capture_admits(struct xrl_capture *c, __u64 now)
{
	__u64 old, cur, next;
	int i;

	for (i = 0; i < XRL_CAS_TRIES; i++) {
		old = READ_ONCE(c->tat);
		cur = old > now ? old : now;
		if (cur - now > c->limit_ns)
			return 0;
		next = cur + c->interval_ns;
		if (__sync_val_compare_and_swap(&c->tat, old, next) == old)
			return 1;
	}
	return 0;
}

/* The lease has lapsed: a reader killed, or gone without clearing it.
 * Cleared once (the data path stops looking) unless renewed meanwhile. */
static __always_inline int capture_lapsed(struct xrl_control *ctrl, __u32 until, __u64 now)
{
	if ((now >> XRL_CAPTURE_LEASE_SHIFT) <= until)
		return 0;
	__sync_val_compare_and_swap(&ctrl->capture_until, until, 0);
	return 1;
}

static __always_inline void capture_packet(void *ctx, __u32 ifindex, const struct xrl_pkt *p,
					   struct xrl_control *ctrl, __u32 until,
					   __u32 mode, int decision)
{
	__u32 zero = 0, verdict = decision == XRL_PASS ? XRL_CAPTURE_F_PASS : XRL_CAPTURE_F_DROP;
	struct xrl_capture_stats *cs;
	struct xrl_capture_hdr *h;
	struct xrl_capture *c;
	__u64 now, caplen;

	/* the lease and the rate cap on the coarse clock (cheap: a packet
	 * left out of a flood pays no more); the precise one stamps only
	 * the packets copied */
	now = clock_ns(ctrl);
	if (capture_lapsed(ctrl, until, now))
		return;
	c = bpf_map_lookup_elem(&xrl_capture, &zero);
	cs = bpf_map_lookup_elem(&xrl_capture_stats, &zero);
	if (!c || !cs || !capture_match(c, p, verdict))
		return;
	cs->matched++;
	if (!capture_admits(c, now)) {
		cs->left_out++;
		return;
	}
	/* the record's header: per CPU, off the stack (the pipeline's
	 * frame and the rule step's chain share the verifier's 512 bytes) */
	h = bpf_map_lookup_elem(&xrl_capture_scratch, &zero);
	if (!h)
		return;
	caplen = p->len < c->snaplen ? p->len : c->snaplen;
	if (caplen > XRL_CAPTURE_MAX_SNAPLEN)
		caplen = XRL_CAPTURE_MAX_SNAPLEN;
	h->ts_ns = use_test_clock ? now : bpf_ktime_get_ns();
	h->ifindex = ifindex;
	h->len = p->len;
	h->caplen = caplen;
	h->rule_slot = p->rule_slot;
	h->verdict = verdict;
	h->mode = mode;
	/* the frame's bytes after the header: the upper 32 bits of the
	 * flags say how many (bpf_xdp_output's convention) */
	if (bpf_perf_event_output(ctx, &xrl_capture_ring, BPF_F_CURRENT_CPU | caplen << 32,
				  h, sizeof(*h)))
		cs->lost++;
	else
		cs->captured++;
}

/* The step: nothing but one test while no capture runs. */
static __always_inline void capture(void *ctx, __u32 ifindex, const struct xrl_pkt *p,
				    struct xrl_control *ctrl, __u32 mode, int decision)
{
	__u32 until = READ_ONCE(ctrl->capture_until);

	if (until)
		capture_packet(ctx, ifindex, p, ctrl, until, mode, decision);
}

#endif

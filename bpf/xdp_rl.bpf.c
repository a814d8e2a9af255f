// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rl: per-source rate limiting at the XDP hook (xdp_rl), or at tc
 * ingress (xrl_tc) where another program holds the XDP hook.
 *
 * One straight pipeline of small inlined steps, one body for both hooks:
 *   parse -> bans -> hot-key cache -> SYN cookies (at XDP: unverified TCP
 *   sources of a syn-cookies rule, answered or dropped) -> set rules ->
 *   classify -> the endpoint rule first where its bucket refuses ->
 *   rule step (decide, meter, dry-run, count) -> endpoint rule
 *   -> answer (DNS slip, at XDP) -> verdict -> capture
 * This file is the pipeline; each feature is a header of its own, all in
 * this one translation unit (every step inlines into the program):
 *   parsing.h   the packet's headers, bounds-checked
 *   maps.h      every map (the pinned layout); rings.h the events' rings
 *               and their cap, shared with xrl_emit.bpf.c
 *   context.h   the decisions and the rule step's context (struct xrl_step)
 *   clock.h     the clocks and the daemon's watchdog
 *   classify.h  the source rule and the endpoint rule of a packet
 *   sets.h      the rules that take a named set, checked before the prefixes
 *   hot.h       the hot-key drop cache
 *   events.h    live events of keys that become limited or no longer are
 *   ban.h       bans: the ban step after parsing, and rules that ban
 *   bancache.h  the banned-source cache in front of the ban step
 *   shared.h    the rule's shared GCRAs: the aggregate, the new-key budget
 *   bucket.h    one key's bucket: GCRA, fixed and sliding windows
 *   fleet.h     fleet-wide rules: leases and the local share
 *   syncookie.h SYN cookies: SYN-ACKs for unverified sources, their ACKs
 *   capture.h   copies of packets and their verdicts, while a capture runs
 *   dns.h       DNS slip: a refused query answered with a truncated response
 *   epfirst.h   the endpoint rule first when its bucket refuses the packet
 * Each header includes what it uses, in this order, so that no step needs
 * a declaration ahead of its definition.
 */
#include "parsing.h"
#include <linux/pkt_cls.h>
#include "maps.h"
#include "context.h"
#include "clock.h"
#include "classify.h"
#include "sets.h"
#include "hot.h"
#include "events.h"
#include "ban.h"
#include "bancache.h"
#include "shared.h"
#include "bucket.h"
#include "fleet.h"
#include "syncookie.h"
#include "capture.h"
#include "dns.h"
#include "epfirst.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Who this program is (xdp_rl_common.h): read by status and upgrades from
 * the running program, never by the data path. */
const volatile struct xrl_build_info xrl_info SEC(".rodata.info") = {
	.magic = XRL_INFO_MAGIC,
	.layout = XRL_LAYOUT_VERSION,
};

/*
 * What the packet costs a packet rule: its segments. Generic-mode XDP runs
 * after GRO and sees an aggregate of many TCP segments (or a GSO packet of
 * a local sender) as one linear frame, up to 64 KiB; counted as one, a
 * rule of 100/s let some 20 times its rate through. A TCP or UDP packet
 * longer than its interface's MTU is such an aggregate: it costs the
 * segments it carries (xrl_segments()). Native mode never sees a frame over
 * the MTU. Only packets over 576 bytes ask the MTU (a helper call).
 */
#define XRL_SEG_MIN_LEN	576

/*
 * A global function, verified once on its own, and called by the rule
 * step only for a packet rule and a packet over XRL_SEG_MIN_LEN: inlined
 * into the program, or called from it for every packet, its two outcomes
 * (one segment, known, or a count) multiplied the paths after it past the
 * verifier's limit of a million instructions (called for every packet, it
 * cost 7 ns of the 110 a passed packet took). l3len: the IP length.
 */
__noinline int xrl_segments_of(struct xdp_md *ctx, __u32 l3len, __u32 hdrs)
{
	__u32 mtu = 0;

	if (!ctx)
		return 1;
	if (bpf_check_mtu(ctx, 0, &mtu, 0, 0) < 0)
		return 1;
	return xrl_segments(l3len, hdrs, mtu);
}

/* The same at tc ingress (a global function's context is checked against
 * its program's type: one per hook). A GRO aggregate reaches tc whole too. */
__noinline int xrl_segments_of_tc(struct __sk_buff *ctx, __u32 l3len, __u32 hdrs)
{
	__u32 mtu = 0;

	if (!ctx)
		return 1;
	if (bpf_check_mtu(ctx, 0, &mtu, 0, 0) < 0)
		return 1;
	return xrl_segments(l3len, hdrs, mtu);
}

/* The key's verdict, then the aggregate's: a packet passes only when both
 * admit. A refusal of the key's bucket goes into the hot-key cache (a byte
 * rule's for frames of at least this one's length: a length past the
 * entry's 16 bits is not cached). */
static __always_inline int meter_done(struct xrl_step *m, int res)
{
	const struct xrl_rule *r = m->r;
	__u64 now = xrl_ns_to_tu(m->now_ns);

	if (res == XRL_DROP) {
		__u32 min_len = r->unit == XRL_UNIT_PACKETS ? 0 : m->p->len;

		/* a packet rule's refusal of an aggregate of several segments
		 * says nothing about one segment: not cached */
		if (r->unit == XRL_UNIT_PACKETS && m->segs > 1)
			m->until = 0;
		if (m->until && xrl_before(now, m->until) && min_len <= 0xffff)
			hot_fill(m, now, min_len);
		return XRL_DROP;
	}
	/* a new key without budget: the aggregate alone, or nothing */
	if (res == XRL_NO_BUDGET && !r->agg_interval)
		return XRL_DROP;
	return aggregate_admits(r, now, m->rs) ? XRL_PASS : XRL_DROP;
}

/* Meter the packet's key under the rule: its bucket (a fleet rule: its
 * lease or its share), then meter_done(). */
static __always_inline int meter(struct xrl_step *m)
{
	const struct xrl_rule *r = m->r;
	const struct xrl_pkt *p = m->p;
	int res;

	m->cost = r->unit == XRL_UNIT_PACKETS ? m->segs : p->len;
	m->until = 0;
	if (p->family == 4) {
		struct xrl_bucket_key4 k4 = {
			.gen = r->gen,
			.addr = p->saddr[0] & r->key_mask[0],
		};
		/* the key as 16 bytes: the compiler may merge the two
		 * families' tails, and the verifier then reads 16 */
		__u32 a4[4] = { k4.addr };

		m->kaddr = a4;
		m->family = 4;
		if (r->scope == XRL_SCOPE_FLEET)
			res = fleet_meter(&xrl_fleet_keys4, &k4, &xrl_buckets4, m);
		else
			res = meter_bucket(&xrl_buckets4, &k4, m);
		if (!hot_cacheable(r, m->mode))
			m->until = 0;	/* the refusal is computed, never cached */
		return meter_done(m, res);
	} else {
		struct xrl_bucket_key6 k6 = {
			.gen = r->gen,
			.addr = {
				p->saddr[0] & r->key_mask[0], p->saddr[1] & r->key_mask[1],
				p->saddr[2] & r->key_mask[2], p->saddr[3] & r->key_mask[3],
			},
		};

		m->kaddr = k6.addr;
		m->family = 6;
		if (r->scope == XRL_SCOPE_FLEET)
			res = fleet_meter(&xrl_fleet_keys6, &k6, &xrl_buckets6, m);
		else
			res = meter_bucket(&xrl_buckets6, &k6, m);
		if (!hot_cacheable(r, m->mode))
			m->until = 0;	/* the refusal is computed, never cached */
		return meter_done(m, res);
	}
}

/* Decide for a matched rule under the current mode. The clock is read at
 * most once: for the watchdog (armed while a daemon runs) and the meter. */
static __always_inline int decide(struct xrl_step *m)
{
	const struct xrl_control *ctrl = m->ctrl;
	const struct xrl_rule *r = m->r;
	struct xrl_rule_stats *rs = m->rs;
	__u64 wd = ctrl->watchdog_ns, now_ns = 0;

	if (r->action == XRL_ACT_ALLOW)
		return XRL_PASS;
	/* the operator's word first: fail-open passes everything, counted
	 * as passed, whatever the watchdog says (as fail-closed drops) */
	if (m->mode == XRL_MODE_FAIL_CLOSED)
		return XRL_DROP;
	if (m->mode == XRL_MODE_FAIL_OPEN)
		return XRL_PASS;
	if (wd)
		now_ns = rule_clock_ns(ctrl, r);
	if (wd && watchdog_fired(ctrl, now_ns)) {
		/* each rule's failure policy, counted as such */
		if (r->on_failure == XRL_FAIL_CLOSED) {
			if (rs)
				rs->failure_dropped++;
			return XRL_DROP;
		}
		if (rs)
			rs->failure_passed++;
		return XRL_PASS;
	}
	if (r->action == XRL_ACT_DENY)
		return XRL_DROP;
	if (aggregate_closed(r, ctrl, rs))
		return XRL_DROP;
	m->now_ns = wd ? now_ns : rule_clock_ns(ctrl, r);
	return meter(m);
}

/* Dry-run, the rule's (while enforcing) or the mode's: a drop the rule
 * decided passes, counted apart as a would-drop, never in dropped_*. */
static __always_inline int dry_run(const struct xrl_step *m, int decision)
{
	if (decision != XRL_DROP ||
	    !(m->mode == XRL_MODE_DRY_RUN || (m->r->dry_run && m->mode == XRL_MODE_ENFORCE)))
		return decision;
	if (m->rs) {
		m->rs->would_drop_packets++;
		m->rs->would_drop_bytes += m->p->len;
	}
	return XRL_PASS;
}

static __always_inline void count_rule(const struct xrl_step *m, int decision)
{
	struct xrl_rule_stats *rs = m->rs;

	if (!rs)
		return;
	if (decision == XRL_PASS) {
		rs->passed_packets++;
		rs->passed_bytes += m->p->len;
	} else {
		/* to be answered too (XRL_SLIP): the rule refused it */
		rs->dropped_packets++;
		rs->dropped_bytes += m->p->len;
	}
}

/*
 * One rule's step for a packet: decide under the mode, dry-run, count. The
 * source rule and then, for a packet its source rule (or no rule) passed,
 * the endpoint rule: it passes only when both admit (a packet the source
 * rule dropped costs the endpoint rule nothing).
 *
 * A global function: the verifier checks it once, on its own, rather than
 * inside every path of the program that calls it (inlined twice, the
 * metering of every algorithm, the fleet and the aggregate passed its limit
 * of a million instructions). Its pointer arguments are checked as memory
 * of their size that may be NULL; they never are.
 */
static __always_inline int rule_step(const struct xrl_pkt *p, const struct xrl_rule *r,
				     __u32 mode, __u32 epoch, __u32 segs)
{
	struct xrl_step m = { .p = p, .r = r, .mode = mode, .epoch = epoch, .segs = segs };
	struct xrl_control *ctrl;
	__u32 zero = 0;
	int decision;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!p || !r || !ctrl)
		return XRL_PASS;
	m.ctrl = ctrl;
	m.rs = bpf_map_lookup_elem(&xrl_rule_stats, &r->slot);
	decision = decide(&m);
	decision = dry_run(&m, decision);
	/* a refusal of a slipping rule: dropped, or the answer step's */
	decision = dns_slip_due(&m, decision);
	count_rule(&m, decision);
	return decision;
}

/* Does the rule step need the packet's segments (xrl_segments_of())? */
static __always_inline int needs_segments(const struct xrl_pkt *p, const struct xrl_rule *r)
{
	return p && r && r->unit == XRL_UNIT_PACKETS && p->ports && p->l3len > XRL_SEG_MIN_LEN;
}

__noinline int xrl_rule_step(struct xdp_md *ctx, const struct xrl_pkt *p,
			     const struct xrl_rule *r, __u32 mode, __u32 epoch)
{
	__u32 segs = 1;

	/* what the packet costs a packet rule (xrl_segments_of()) */
	if (needs_segments(p, r))
		segs = xrl_segments_of(ctx, p->l3len, p->hdrs);
	return rule_step(p, r, mode, epoch, segs);
}

/* The same step at tc ingress: one global function per hook, since the
 * verifier checks a global function's context against the type of the
 * program that calls it; the body (rule_step()) is one. */
/* What a packet costs a packet rule at tc (xrl_segments_of_tc(), and a GSO
 * skb's own count). A global function of its own: its work stays off the
 * rule step's frame, which the pipeline's chain of calls shares within the
 * verifier's 512 bytes of stack. */
__noinline int xrl_tc_segments(struct __sk_buff *ctx, const struct xrl_pkt *p,
			       const struct xrl_rule *r)
{
	__u32 segs = 1, gso;

	if (needs_segments(p, r))
		segs = xrl_segments_of_tc(ctx, p->l3len, p->hdrs);
	/* A GSO skb (a GRO aggregate, a local sender's GSO packet) says what
	 * it carries: segments of gso_size, gso_segs of them. The MTU's
	 * estimate assumes full segments and would charge an aggregate of
	 * small ones (a sender's choice of MSS) a fraction of its packets,
	 * or one token under XRL_SEG_MIN_LEN. The larger of the two counts;
	 * a segment size with no count yet (a tap's untrusted packet): the
	 * payload over that size. */
	if (ctx && p && r && r->unit == XRL_UNIT_PACKETS && ctx->gso_size) {
		gso = ctx->gso_segs;
		if (p->l3len > p->hdrs) {
			__u32 est = (p->l3len - p->hdrs + ctx->gso_size - 1) / ctx->gso_size;

			if (est > gso)
				gso = est;
		}
		if (gso > segs)
			segs = gso;
	}
	return segs;
}

__noinline int xrl_rule_step_tc(struct __sk_buff *ctx, const struct xrl_pkt *p,
				const struct xrl_rule *r, __u32 mode, __u32 epoch)
{
	return rule_step(p, r, mode, epoch, xrl_tc_segments(ctx, p, r));
}

/* Verdict: the mode has the last word; count it. The only place where a
 * decision becomes the hook's return code (hook: a constant, XRL_HOOK_*).
 * At tc a pass is TC_ACT_UNSPEC, "no opinion": the programs after this one
 * (a tcx chain, clsact filters) still run, as they would without it. An
 * answer sent back out of the receiving interface (XDP_TX at XDP) is, at
 * tc, a redirect to the same device's egress (the redirect helper with
 * ifindex and flags 0) once the step swapped the addresses: one case here. */
static __always_inline int verdict(void *ctx, struct xrl_pkt *p,
				   struct xrl_control *ctrl, struct xrl_global_stats *gs,
				   struct xrl_if_stats *is, __u32 mode, int decision,
				   int hook, __u32 ifindex)
{
	if (mode == XRL_MODE_DRY_RUN || mode == XRL_MODE_FAIL_OPEN)
		decision = XRL_PASS;
	capture(ctx, ifindex, p, ctrl, mode, decision);
	if (decision == XRL_TX) {
		/* an answer built in place (only ever decided while enforcing);
		 * only the XDP hook's steps answer: at tc an answer would be a
		 * redirect to the same device's egress */
		if (hook == XRL_HOOK_XDP) {
			gs->answered_packets++;
			is->answered_packets++;
			return XDP_TX;
		}
		decision = XRL_DROP;
	}
	if (decision == XRL_PASS) {
		gs->passed_packets[mode]++;
		is->passed_packets++;
		return hook == XRL_HOOK_TC ? TC_ACT_UNSPEC : XDP_PASS;
	}
	gs->dropped_packets[mode]++;
	is->dropped_packets++;
	return hook == XRL_HOOK_TC ? TC_ACT_SHOT : XDP_DROP;
}

/*
 * Does some rule of the active set use this optional step (struct
 * xrl_control.features)? A clear bit: every packet skips the step. A word
 * of the control block's first cache line, which the packet read for the
 * mode: read where each step is decided rather than kept in a register
 * across the calls in between (spilled, it took stack that the chain of
 * calls does not have). Every read is as good as the first: a bit is set
 * before a set that needs it is published, and cleared only once no packet
 * can still meet an older set (user/lib/maps/rules.c).
 */
static __always_inline int has_feature(const struct xrl_control *ctrl, __u32 bit)
{
	return READ_ONCE(ctrl->features) & bit;
}

/*
 * The pipeline, one body for both hooks (inlined into each entry, hook a
 * constant): the frame [data, end) with tail bytes past end it cannot read
 * (tc's non-linear data), the receiving interface's index.
 */
static __always_inline int pipeline(void *ctx, void *data, void *end, __u32 tail,
				    __u32 ifindex, int hook)
{
	struct xrl_pkt pkt = {};
	struct xrl_control *ctrl;
	struct xrl_global_stats *gs;
	struct xrl_if_stats *is;
	struct xrl_rule *rule;
	struct ep_first epf = {};
	__u32 zero = 0, mode, epoch, slot = ifindex % XRL_IF_SLOTS;
	int res, decision;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	gs = bpf_map_lookup_elem(&xrl_global_stats, &zero);
	is = bpf_map_lookup_elem(&xrl_if_stats, &slot);
	if (!ctrl || !gs || !is)
		return hook == XRL_HOOK_TC ? TC_ACT_UNSPEC : XDP_PASS;
	mode = ctrl->mode & (XRL_MODE_MAX - 1);

	res = parse_frame(data, end, tail, &pkt);
	if (res == XRL_PARSE_NON_IP) {
		/* ARP, LLDP, ...: untouched in every mode, so that a host
		 * stays reachable on its link even when failing closed. */
		gs->non_ip_packets++;
		return verdict(ctx, &pkt, ctrl, gs, is, mode, XRL_PASS, hook, ifindex);
	}
	if (res == XRL_PARSE_MALFORMED) {
		/* The stack would discard it anyway; passing it would open
		 * an unmetered way past the limiter. */
		gs->malformed_packets++;
		return verdict(ctx, &pkt, ctrl, gs, is, mode, XRL_DROP, hook, ifindex);
	}

	/* a banned source: dropped before anything else is looked up */
	if (ban_step(&pkt, ctrl, mode))
		return verdict(ctx, &pkt, ctrl, gs, is, mode, XRL_DROP, hook, ifindex);

	/* The epoch before the rule set: a rule published after this read
	 * is followed by a bump that voids what this packet caches. Only
	 * an enforcing rule's refusals are cached (hot_cacheable()): a
	 * cached drop here is the source rule's drop, which the endpoint
	 * rule would not have seen either; with endpoint rules, the entry of
	 * the packet's endpoint slot (epfirst.h). */
	epoch = READ_ONCE(ctrl->cache_epoch);
	if (mode == XRL_MODE_ENFORCE && ep_early(&pkt, ctrl, epoch, &epf))
		return verdict(ctx, &pkt, ctrl, gs, is, mode, XRL_DROP, hook, ifindex);

	/* a set rule first (allow sets first of all), then the prefixes */
	rule = classify_sets(&pkt, ctrl);
	if (!rule)
		rule = classify(&pkt);
	/* SYN cookies (at XDP; at tc netfilter's SYNPROXY answers alone): an
	 * unverified source's TCP packets to a syn-cookies rule's ports are
	 * answered or dropped here, before any bucket; a deny or allow source
	 * rule decides first (a denied source is never answered, a trusted one
	 * never challenged) */
	if (hook == XRL_HOOK_XDP && has_feature(ctrl, XRL_FEAT_SYNCOOKIES) && mode == XRL_MODE_ENFORCE &&
	    pkt.ports && pkt.l4proto == IPPROTO_TCP && (!rule || rule->action == XRL_ACT_LIMIT)) {
		decision = xrl_syncookie_step(ctx, &pkt);
		if (decision != XRL_PASS)
			return verdict(ctx, &pkt, ctrl, gs, is, mode, decision, hook, ifindex);
	}
	/* the endpoint rule first when its bucket refuses the packet now */
	decision = ep_first_step(ctx, &pkt, rule, mode, epoch, hook, &epf);
	if (decision != XRL_PASS)
		return verdict(ctx, &pkt, ctrl, gs, is, mode, decision, hook, ifindex);
	if (!rule) {
		gs->unmatched_packets++;
		decision = mode == XRL_MODE_FAIL_CLOSED ? XRL_DROP : XRL_PASS;
	} else {
		decision = hook == XRL_HOOK_TC ? xrl_rule_step_tc(ctx, &pkt, rule, mode, epoch)
					       : xrl_rule_step(ctx, &pkt, rule, mode, epoch);
		pkt.rule_slot = rule->slot + 1;
	}
	/* failing closed, the source rules alone decide (allow passes) */
	/* (with no endpoint rule, ep_early() found no class: nothing to look up) */
	if (decision == XRL_PASS && mode != XRL_MODE_FAIL_CLOSED && !epf.stepped) {
		__u32 class = ep_class_of(&pkt, &epf);

		if (class) {
			/* the endpoint rule's entries: (source, slot) */
			pkt.klass = ep_late_key(&pkt, &epf);
			if (mode == XRL_MODE_ENFORCE && !epf.first && hot_drop(&pkt, ctrl, epoch))
				return verdict(ctx, &pkt, ctrl, gs, is, mode, XRL_DROP, hook, ifindex);
			rule = ep_rule_of(&pkt, &epf);
			if (rule) {
				decision = hook == XRL_HOOK_TC ?
					xrl_rule_step_tc(ctx, &pkt, rule, mode, epoch) :
					xrl_rule_step(ctx, &pkt, rule, mode, epoch);
				pkt.rule_slot = rule->slot + 1;
			}
		}
	}
	/* the answer step (at XDP): a slipping rule's refusal whose turn it is
	 * gets a truncated DNS response (XRL_TX), or is dropped */
	if (decision == XRL_SLIP)
		decision = rule && hook == XRL_HOOK_XDP ? xrl_dns_slip(ctx, rule->slot) : XRL_DROP;
	return verdict(ctx, &pkt, ctrl, gs, is, mode, decision, hook, ifindex);
}

/*
 * For libxdp's multi-program dispatcher (docs/coexistence.md), read from the
 * object's BTF as libxdp's XDP_RUN_CONFIG() declares it: run early (libxdp's
 * default priority is 50, lower runs first), and on a pass go on to the
 * next program of the chain (a drop ends it). xdp-rl attaches with its own
 * link; libbpf skips the section.
 */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} _xdp_rl SEC(".xdp_run_config");

SEC("xdp")
int xdp_rl(struct xdp_md *ctx)
{
	return pipeline(ctx, (void *)(long)ctx->data, (void *)(long)ctx->data_end, 0,
			ctx->ingress_ifindex, XRL_HOOK_XDP);
}

/*
 * The same pipeline at tc ingress (a tcx link, or a clsact filter in
 * direct-action mode), for an interface whose XDP hook another program
 * holds. The headers the parser reads must be in the linear part: a
 * non-linear skb (a GRO aggregate, a GSO packet of a local sender) has
 * its first XRL_TC_PULL bytes pulled there (bpf_skb_pull_data(), a copy,
 * only for such an skb); the rest stays where it is, counted in the
 * frame's length but never read.
 */
#define XRL_TC_PULL	256

SEC("tc")
int xrl_tc(struct __sk_buff *skb)
{
	__u32 len = skb->len, lin = skb->data_end - skb->data;

	if (lin < len && lin < XRL_TC_PULL)
		bpf_skb_pull_data(skb, len < XRL_TC_PULL ? len : XRL_TC_PULL);
	/* a pull moves the data: read the pointers after it */
	lin = skb->data_end - skb->data;
	return pipeline(skb, (void *)(long)skb->data, (void *)(long)skb->data_end,
			len > lin ? len - lin : 0, skb->ifindex, XRL_HOOK_TC);
}

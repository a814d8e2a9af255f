// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rl: per-source rate limiting at the XDP hook.
 *
 * One straight pipeline of small inlined steps:
 *   parse -> hot-key cache -> SYN cookies (unverified TCP sources of a
 *   syn-cookies rule: answered or dropped) -> classify -> rule step
 *   (decide, meter, dry-run, count) -> endpoint rule -> verdict
 * This file is the pipeline; each feature is a header of its own, all in
 * this one translation unit (every step inlines into the program):
 *   parsing.h   the packet's headers, bounds-checked
 *   maps.h      every map (the pinned layout)
 *   context.h   the decisions and the rule step's context (struct xrl_step)
 *   clock.h     the clocks and the daemon's watchdog
 *   classify.h  the source rule and the endpoint rule of a packet
 *   hot.h       the hot-key drop cache
 *   events.h    live events of keys that become limited or no longer are
 *   shared.h    the rule's shared GCRAs: the aggregate, the new-key budget
 *   bucket.h    one key's bucket: GCRA, fixed and sliding windows
 *   fleet.h     fleet-wide rules: leases and the local share
 *   syncookie.h SYN cookies: SYN-ACKs for unverified sources, their ACKs
 * Each header includes what it uses, in this order, so that no step needs
 * a declaration ahead of its definition.
 */
#include "parsing.h"
#include "maps.h"
#include "context.h"
#include "clock.h"
#include "classify.h"
#include "hot.h"
#include "events.h"
#include "shared.h"
#include "bucket.h"
#include "fleet.h"
#include "syncookie.h"

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
__noinline int xrl_rule_step(struct xdp_md *ctx, const struct xrl_pkt *p,
			     const struct xrl_rule *r, __u32 mode, __u32 epoch)
{
	struct xrl_step m = { .p = p, .r = r, .mode = mode, .epoch = epoch, .segs = 1 };
	struct xrl_control *ctrl;
	__u32 zero = 0;
	int decision;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!p || !r || !ctrl)
		return XRL_PASS;
	m.ctrl = ctrl;
	m.rs = bpf_map_lookup_elem(&xrl_rule_stats, &r->slot);
	/* what the packet costs a packet rule (xrl_segments_of()) */
	if (r->unit == XRL_UNIT_PACKETS && p->ports && p->l3len > XRL_SEG_MIN_LEN)
		m.segs = xrl_segments_of(ctx, p->l3len, p->hdrs);
	decision = decide(&m);
	decision = dry_run(&m, decision);
	count_rule(&m, decision);
	return decision;
}

/* Verdict: the mode has the last word; count it. */
static __always_inline int verdict(struct xrl_global_stats *gs,
				   struct xrl_if_stats *is, __u32 mode,
				   int decision)
{
	__u32 zero = 0;

	if (mode == XRL_MODE_DRY_RUN || mode == XRL_MODE_FAIL_OPEN)
		decision = XRL_PASS;
	if (decision == XRL_TX) {
		struct xrl_answer_stats *as = bpf_map_lookup_elem(&xrl_answers, &zero);

		if (as)
			as->tx_packets++;
		return XDP_TX;
	}
	if (decision == XRL_PASS) {
		gs->passed_packets[mode]++;
		is->passed_packets++;
		return XDP_PASS;
	}
	gs->dropped_packets[mode]++;
	is->dropped_packets++;
	return XDP_DROP;
}

SEC("xdp")
int xdp_rl(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};
	struct xrl_control *ctrl;
	struct xrl_global_stats *gs;
	struct xrl_if_stats *is;
	struct xrl_rule *rule;
	__u32 zero = 0, mode, epoch, slot = ctx->ingress_ifindex % XRL_IF_SLOTS;
	int res, decision;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	gs = bpf_map_lookup_elem(&xrl_global_stats, &zero);
	is = bpf_map_lookup_elem(&xrl_if_stats, &slot);
	if (!ctrl || !gs || !is)
		return XDP_PASS;
	mode = ctrl->mode & (XRL_MODE_MAX - 1);

	res = parse_packet(ctx, &pkt);
	if (res == XRL_PARSE_NON_IP) {
		/* ARP, LLDP, ...: untouched in every mode, so that a host
		 * stays reachable on its link even when failing closed. */
		gs->non_ip_packets++;
		return verdict(gs, is, mode, XRL_PASS);
	}
	if (res == XRL_PARSE_MALFORMED) {
		/* The stack would discard it anyway; passing it would open
		 * an unmetered way past the limiter. */
		gs->malformed_packets++;
		return verdict(gs, is, mode, XRL_DROP);
	}

	/* The epoch before the rule set: a rule published after this read
	 * is followed by a bump that voids what this packet caches. Only
	 * an enforcing rule's refusals are cached (hot_cacheable()): a
	 * cached drop here is the source rule's drop, which the endpoint
	 * rule would not have seen either. */
	epoch = READ_ONCE(ctrl->cache_epoch);
	if (mode == XRL_MODE_ENFORCE && hot_drop(&pkt, ctrl, epoch))
		return verdict(gs, is, mode, XRL_DROP);

	rule = classify(&pkt);
	/* SYN cookies: an unverified source's TCP packets to a syn-cookies
	 * rule's ports are answered or dropped here, before any bucket; a
	 * deny or allow source rule decides first (a denied source is never
	 * answered, a trusted one never challenged) */
	if (mode == XRL_MODE_ENFORCE && pkt.ports && pkt.l4proto == IPPROTO_TCP &&
	    (!rule || rule->action == XRL_ACT_LIMIT)) {
		decision = xrl_syncookie_step(ctx, &pkt);
		if (decision != XRL_PASS)
			return verdict(gs, is, mode, decision);
	}
	if (!rule) {
		gs->unmatched_packets++;
		decision = mode == XRL_MODE_FAIL_CLOSED ? XRL_DROP : XRL_PASS;
	} else {
		decision = xrl_rule_step(ctx, &pkt, rule, mode, epoch);
	}
	/* failing closed, the source rules alone decide (allow passes) */
	if (decision == XRL_PASS && mode != XRL_MODE_FAIL_CLOSED) {
		__u32 class = endpoint_class(&pkt);

		if (class) {
			/* the endpoint rule's entries: (source, class) */
			pkt.klass = class;
			if (mode == XRL_MODE_ENFORCE && hot_drop(&pkt, ctrl, epoch))
				return verdict(gs, is, mode, XRL_DROP);
			rule = classify_endpoint(&pkt, class);
			if (rule)
				decision = xrl_rule_step(ctx, &pkt, rule, mode, epoch);
		}
	}
	return verdict(gs, is, mode, decision);
}

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The hot-key drop cache (struct xrl_hot): a refusal remembered per CPU
 * until the key's bucket may admit again, answered before the rule and
 * bucket look-ups.
 */
#ifndef XRL_BPF_HOT_H
#define XRL_BPF_HOT_H

#include "maps.h"
#include "context.h"
#include "clock.h"

/* Hash of the source (and the endpoint class) into the hot-key cache. */
static __always_inline __u32 hot_index(const struct xrl_pkt *p)
{
	__u32 h = p->saddr[0] ^ p->klass * 0x165667b1U;

	if (p->family == 6)
		h ^= p->saddr[1] * 0x85ebca6bU ^ p->saddr[2] * 0xc2b2ae35U ^
		     p->saddr[3] * 0x27d4eb2fU;
	/* the product's top bits name the set (XRL_HOT_SLOTS / 2 of them);
	 * the first of its two ways */
	return (h * 0x9e3779b1U) >> (32 - XRL_HOT_SET_BITS) << 1;
}

/* The family byte of the packet's entries (struct xrl_hot), but for
 * XRL_HOT_SIZED. */
static __always_inline __u8 hot_tag(const struct xrl_pkt *p)
{
	return p->family | (p->klass ? XRL_HOT_EP : 0);
}

/* Is this entry the packet's source (and class) under the current epoch? */
static __always_inline int hot_match(const struct xrl_hot *e, const struct xrl_pkt *p,
				     __u32 epoch)
{
	if ((e->family & ~XRL_HOT_COND) != hot_tag(p) || e->epoch != epoch ||
	    e->src[0] != p->saddr[0] || e->klass != p->klass)
		return 0;
	return p->family == 4 || (e->src[1] == p->saddr[1] && e->src[2] == p->saddr[2] &&
				  e->src[3] == p->saddr[3]);
}

/* The bucket of an entry's key (a look-up keeps it warm in the LRU). */
static __always_inline struct xrl_bucket *hot_bucket(const struct xrl_hot *e)
{
	if ((e->family & XRL_HOT_FAMILY) == 4) {
		struct xrl_bucket_key4 k4 = { .gen = e->gen, .addr = e->kaddr[0] };

		return bpf_map_lookup_elem(&xrl_buckets4, &k4);
	} else {
		struct xrl_bucket_key6 k6 = { .gen = e->gen };

		__builtin_memcpy(k6.addr, e->kaddr, 16);
		return bpf_map_lookup_elem(&xrl_buckets6, &k6);
	}
}

/* Add an entry's pending drops to its key's bucket. Out of line: once per
 * XRL_HOT_FLUSH cached drops, and when an entry is replaced. */
static __noinline int hot_flush(struct xrl_hot *e)
{
	struct xrl_bucket *b;
	__u32 n = e->pending;

	if (!n || !e->family)
		return 0;
	e->pending = 0;
	b = hot_bucket(e);
	if (b)
		__sync_fetch_and_add(&b->dropped, n);
	return 0;
}

/* Is the entry's key still in the table? Out of line: once a tick. A key
 * the cache answers for leaves its bucket untouched, the coldest of the
 * LRU: the look-up keeps it warm, and a bucket evicted all the same voids
 * the entry (the whole path then meets a new key, as it would). */
static __noinline int hot_key_kept(struct xrl_hot *e)
{
	return hot_bucket(e) != NULL;
}

/* Is the entry's source still refused, the watchdog quiet? The clock only
 * for a known source, and once a tick (struct xrl_hot); a precise-clock
 * rule's entry reads the precise clock every time. */
static __always_inline int hot_still_refused(struct xrl_hot *e, const struct xrl_control *ctrl)
{
	__u64 now_ns, j = 0;

	if (!use_test_clock)
		j = bpf_jiffies64();
	if (use_test_clock || j != e->checked_j) {
		/* once a tick (every packet under the test clock): the key's
		 * bucket */
		if (!hot_key_kept(e))
			return 0;
	} else if (!(e->family & XRL_HOT_PRECISE)) {
		return 1;	/* checked within this tick */
	}
	now_ns = (e->family & XRL_HOT_PRECISE) && !use_test_clock ? bpf_ktime_get_ns() :
								     clock_ns(ctrl);
	if (watchdog_fired(ctrl, now_ns) || !xrl_before(xrl_ns_to_tu(now_ns), e->until))
		return 0;
	e->checked_j = j;
	return 1;
}

/*
 * The hot-key drop path, right after parsing (and for an endpoint class,
 * once the source rule passed the packet): 1 when the cache knows this
 * source over its rule's limit under the current rule set (and has counted
 * the drop), 0 to take the whole path.
 */
static __always_inline int hot_drop(struct xrl_pkt *p, const struct xrl_control *ctrl,
				    __u32 epoch)
{
	__u32 idx = hot_index(p);
	struct xrl_rule_stats *rs;
	struct xrl_hot *e;

	e = bpf_map_lookup_elem(&xrl_hot, &idx);
	if (!e)
		return 0;
	if (!hot_match(e, p, epoch)) {
		idx++;
		e = bpf_map_lookup_elem(&xrl_hot, &idx);
		if (!e || !hot_match(e, p, epoch))
			return 0;
	}
	/* a byte rule refused a frame this long: a shorter one may fit */
	if (p->len < e->min_len)
		return 0;
	if (!hot_still_refused(e, ctrl))
		return 0;
	p->rule_slot = e->slot + 1;
	rs = bpf_map_lookup_elem(&xrl_rule_stats, &e->slot);
	if (rs) {
		rs->hot_dropped++;
		rs->dropped_packets++;
		rs->dropped_bytes += p->len;
	}
	/* an endpoint rule of several classes or slots has its key cached
	 * under each, entries hot_collect() cannot find all: its drops go to
	 * the bucket at once, so that its "unlimited" event counts every one */
	if (++e->pending >= XRL_HOT_FLUSH || e->flush_now)
		hot_flush(e);
	return 1;
}

/*
 * Take the drops every CPU's cache holds for this source into its bucket:
 * only when a limited key passes again and its "unlimited" is due, so that
 * the event counts them. Another CPU may be adding to its entry meanwhile
 * (a flood on two CPUs) with a plain increment, which an atomic one would
 * make dearer on every cached drop: a drop counted at the very moment of
 * the swap to 0 may then be counted twice (in the key's count only; the
 * rule's counters are per CPU).
 */
#define XRL_MAX_CPUS	1024

struct hot_collect_ctx {
	__u32 src[4];
	__u32 idx, gen, klass;
	__u64 n;
	__u8 tag;
};

static long hot_collect_cpu(__u64 cpu, void *arg)
{
	struct hot_collect_ctx *c = arg;

	for (__u32 way = 0; way < 2; way++) {
		__u32 i = c->idx + way;
		struct xrl_hot *e = bpf_map_lookup_percpu_elem(&xrl_hot, &i, cpu);

		if (!e)
			return 1;	/* past the last CPU */
		if ((e->family & ~XRL_HOT_COND) == c->tag && e->gen == c->gen &&
		    e->klass == c->klass && e->src[0] == c->src[0] && e->src[1] == c->src[1] &&
		    e->src[2] == c->src[2] && e->src[3] == c->src[3] && e->pending)
			c->n += __sync_lock_test_and_set(&e->pending, 0);
	}
	return 0;
}

static __noinline int hot_collect(struct xrl_bucket *b, const struct xrl_pkt *p, __u32 gen)
{
	struct hot_collect_ctx c = {
		.idx = hot_index(p), .gen = gen, .klass = p->klass, .tag = hot_tag(p),
	};

	__builtin_memcpy(c.src, p->saddr, 16);
	bpf_loop(XRL_MAX_CPUS, hot_collect_cpu, &c, 0);
	if (c.n)
		__sync_fetch_and_add(&b->dropped, c.n);
	return 0;
}

/* An endpoint rule's entries are keyed by the packet's endpoint slot
 * (ep_slot()): is this rule's key cached under one slot only (a UDP port,
 * a TCP port's SYNs, a protocol without ports)? Else hot_collect() cannot
 * find all its entries. (A source rule: klass 0, one entry.) */
static __always_inline int ep_one_slot(const struct xrl_rule *r)
{
	if (!r->ep)
		return 1;
	if (r->proto == IPPROTO_UDP)
		return r->dport_lo == r->dport_hi;
	if (r->proto == IPPROTO_TCP)
		return r->syn && r->dport_lo == r->dport_hi;
	return 1;
}

/* Remember a refusal of the key's bucket until it may admit again
 * (m->until; a byte rule's: for frames of min_len bytes or more): in the
 * way that holds the source already, else in one whose answer is void
 * (another epoch, or past its time), else in the second way. */
static __always_inline void hot_fill(const struct xrl_step *m, __u64 now, __u32 min_len)
{
	const struct xrl_pkt *p = m->p;
	const struct xrl_rule *r = m->r;
	__u32 epoch = m->epoch;
	__u32 idx = hot_index(p), idx1 = idx + 1;
	struct xrl_hot *e, *e1;

	e = bpf_map_lookup_elem(&xrl_hot, &idx);
	e1 = bpf_map_lookup_elem(&xrl_hot, &idx1);
	if (!e || !e1)
		return;
	if (!hot_match(e, p, epoch) &&
	    (hot_match(e1, p, epoch) || (e->epoch == epoch && xrl_before(now, e->until))))
		e = e1;
	if (e->pending)
		hot_flush(e);
	__builtin_memcpy(e->src, p->saddr, 16);
	if (p->family == 4) {
		e->kaddr[0] = m->kaddr[0];
	} else {
		__builtin_memcpy(e->kaddr, m->kaddr, 16);
	}
	e->until = m->until;
	e->checked_j = 0;
	e->epoch = epoch;
	e->gen = r->gen;
	e->slot = r->slot;
	e->family = hot_tag(p) | (min_len ? XRL_HOT_SIZED : 0) | (r->precise ? XRL_HOT_PRECISE : 0);
	e->min_len = min_len;
	e->klass = p->klass;
	e->flush_now = r->ep_multi || !ep_one_slot(r);
}

/*
 * May the hot-key cache answer for this rule's refusals? Where the
 * refusal of one packet of the key means the refusal of every packet of
 * the source (of its endpoint class, for an endpoint rule; at least as
 * long, for a byte rule) until a time known at once: every algorithm
 * (xrl_meter.h), enforced (not dry-run: its drops pass), not a fleet rule
 * (a lease may admit what the local share refuses). A fleet or dry-run
 * rule takes the whole path.
 */
static __always_inline int hot_cacheable(const struct xrl_rule *r, __u32 mode)
{
	/* a slipping rule answers every slip-th refusal of a key: each one
	 * must meet the key's bucket, which counts them */
	return mode == XRL_MODE_ENFORCE && !r->dry_run && r->scope == XRL_SCOPE_HOST &&
	       !r->slip;
}

#endif

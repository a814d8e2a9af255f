/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The banned-source cache (struct xrl_ban_hot): the ban step's drop of a
 * source remembered per CPU, so that the source's next packets are dropped
 * without the ban tries' look-up (an LPM walk) and, for a rule's ban,
 * without its allow check; exact while the control block's ban_gen and
 * cache_epoch stay what they were before the step's look-up, and until
 * the ban's end.
 */
#ifndef XRL_BPF_BANCACHE_H
#define XRL_BPF_BANCACHE_H

#include "maps.h"
#include "context.h"
#include "clock.h"
#include "ban.h"

/* Hash of the source into the cache (direct-mapped). */
static __always_inline __u32 ban_hot_index(const struct xrl_pkt *p)
{
	__u32 h = p->saddr[0];

	if (p->family == 6)
		h ^= p->saddr[1] * 0x85ebca6bU ^ p->saddr[2] * 0xc2b2ae35U ^
		     p->saddr[3] * 0x27d4eb2fU;
	return (h * 0x9e3779b1U) >> (32 - XRL_BAN_HOT_BITS);
}

/* Is this entry the packet's source, filled under this generation and
 * epoch? */
static __always_inline int ban_hot_match(const struct xrl_ban_hot *e, const struct xrl_pkt *p,
					 __u32 gen, __u32 epoch)
{
	if (e->family != p->family || e->gen != gen || e->epoch != epoch ||
	    e->src[0] != p->saddr[0])
		return 0;
	return p->family == 4 || (e->src[1] == p->saddr[1] && e->src[2] == p->saddr[2] &&
				  e->src[3] == p->saddr[3]);
}

/* The entry's pending drops into its ban's count, when the table still
 * holds that ban (same prefix, same set time): a look-up with the ban's
 * prefix length answers the longest entry of at most that length. */
static __always_inline void ban_hot_add(struct xrl_ban_hot *e)
{
	__u32 n = e->pending;
	struct xrl_ban *b;

	if (!n || !e->family)
		return;
	e->pending = 0;
	if (e->family == 4) {
		struct xrl_lpm4_key k = { .prefixlen = e->prefix_len };

		__builtin_memcpy(k.addr, e->src, 4);
		b = bpf_map_lookup_elem(&xrl_bans4, &k);
	} else {
		struct xrl_lpm6_key k = { .prefixlen = e->prefix_len };

		__builtin_memcpy(k.addr, e->src, 16);
		b = bpf_map_lookup_elem(&xrl_bans6, &k);
	}
	if (b && b->prefix_len == e->prefix_len && b->set_ns == e->set_ns)
		__sync_fetch_and_add(&b->dropped, n);
}

/* Out of line: once per XRL_HOT_FLUSH cached drops, and at a ban's end. */
static __noinline int ban_hot_flush(struct xrl_ban_hot *e)
{
	if (e)
		ban_hot_add(e);
	return 0;
}

/* Remember the ban step's drop of this source: the ban that covers it now
 * (looked up again: a writer that changed the table since gen was read
 * bumps it after its change, which voids this entry). Out of line: once
 * per source and generation. */
static __noinline int ban_hot_fill(struct xrl_ban_hot *e, const struct xrl_pkt *p, __u32 gen,
				   __u32 epoch)
{
	struct xrl_ban *b;

	if (!e || !p)
		return 0;
	ban_hot_add(e);
	if (p->family == 4) {
		struct xrl_lpm4_key k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, &p->saddr[0], 4);
		b = bpf_map_lookup_elem(&xrl_bans4, &k);
	} else {
		struct xrl_lpm6_key k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, p->saddr, 16);
		b = bpf_map_lookup_elem(&xrl_bans6, &k);
	}
	e->family = 0;
	if (!b)
		return 0;
	__builtin_memcpy(e->src, p->saddr, 16);
	e->expires_ns = b->expires_ns;
	e->set_ns = b->set_ns;
	e->gen = gen;
	e->epoch = epoch;
	e->pending = 0;
	e->prefix_len = b->prefix_len;
	e->family = p->family;
	return 0;
}

/*
 * The ban step with its cache, right after parsing: 1 when a live ban
 * covers the source (dropped, or passed by the mode as a would-drop), 0 to
 * take the rest of the path. Enforcing, a source the cache holds under the
 * current generation and epoch, before the ban's end, is dropped and
 * counted here (the ban's own count every XRL_HOT_FLUSH drops); anything
 * else takes the ban step (ban_drop()), whose drops fill the cache (at a
 * source's second drop in a row in its slot). An
 * entry past its ban's end gives its drops to the ban first, so that the
 * ban's "unbanned" event counts them.
 */
static __always_inline int ban_step(const struct xrl_pkt *p, const struct xrl_control *ctrl,
				    __u32 mode)
{
	struct xrl_ban_stats *bs;
	struct xrl_ban_hot *e;
	__u32 gen, epoch, idx, zero = 0;

	/* no ban of this family at all: nothing to look up */
	if (!(READ_ONCE(ctrl->ban_families) & (p->family == 4 ? XRL_BANS_V4 : XRL_BANS_V6)))
		return 0;
	/* both before any look-up of the tables (struct xrl_ban_hot) */
	gen = READ_ONCE(ctrl->ban_gen);
	epoch = READ_ONCE(ctrl->cache_epoch);
	idx = ban_hot_index(p);
	e = bpf_map_lookup_elem(&xrl_ban_hot, &idx);
	if (!e)
		return ban_drop(p, ctrl, mode);
	if (mode == XRL_MODE_ENFORCE && ban_hot_match(e, p, gen, epoch)) {
		bs = bpf_map_lookup_elem(&xrl_ban_stats, &zero);
		if (!bs)
			return ban_drop(p, ctrl, mode);
		if (!e->expires_ns || xrl_before(ban_now(bs, ctrl), e->expires_ns)) {
			bs->dropped_packets++;
			bs->dropped_bytes += p->len;
			if (++e->pending >= XRL_HOT_FLUSH)
				ban_hot_flush(e);
			return 1;
		}
		ban_hot_flush(e);
		e->family = 0;
	}
	if (!ban_drop(p, ctrl, mode))
		return 0;
	if (mode != XRL_MODE_ENFORCE)
		return 1;
	/* filled at a source's second drop in a row in its slot (the fill
	 * looks the ban up again): a flood of spoofed sources inside a banned
	 * prefix, a new source each packet, costs one look-up a packet as it
	 * did before the cache, and a store */
	if (e->src[0] == p->saddr[0] && e->src[1] == p->saddr[1] &&
	    e->src[2] == p->saddr[2] && e->src[3] == p->saddr[3]) {
		ban_hot_fill(e, p, gen, epoch);
	} else {
		if (e->pending)
			ban_hot_flush(e);
		e->family = 0;
		__builtin_memcpy(e->src, p->saddr, 16);
	}
	return 1;
}

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Bans (struct xrl_ban): a banned source is dropped right after parsing,
 * before the hot-key cache, the rule and the bucket look-ups, until the
 * ban's end on the data path's clock; and the rules that ban: a key that
 * becomes limited often enough is banned, longer each time it returns.
 */
#ifndef XRL_BPF_BAN_H
#define XRL_BPF_BAN_H

#include "maps.h"
#include "context.h"
#include "clock.h"
#include "classify.h"
#include "events.h"

/*
 * The clock a ban is checked against, once a tick: reading the coarse
 * clock cost more than the rest of a cached drop (struct xrl_hot), so a
 * ban reads jiffies and the clock only when they moved since this CPU last
 * read it. Jiffies move just before the coarse clock does: a ban may end
 * one tick late, the clock's own granularity.
 */
static __always_inline __u64 ban_now(struct xrl_ban_stats *bs, const struct xrl_control *ctrl)
{
	__u64 j;

	if (use_test_clock)
		return ctrl->test_now_ns;
	j = bpf_jiffies64();
	if (j != bs->clock_j) {
		bs->clock_ns = bpf_ktime_get_coarse_ns();
		bs->clock_j = j;
	}
	return bs->clock_ns;
}

/* One ban event into one ring, written in place (no copy on the stack:
 * ban_offence() calls it with its own frame deep). */
static __always_inline void ban_event_write(void *ring, const struct xrl_ban *b,
					    const __u32 *addr, __u32 plen, __u64 now_ns,
					    __u32 family, __u32 kind, __u32 mode,
					    struct xrl_event_stats *es, int which)
{
	struct xrl_event *e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);

	if (!e) {
		es->ring_full[which]++;
		return;
	}
	e->ts_ns = now_ns;
	e->dropped = b->dropped;
	e->rule_id = b->rule_id;
	e->kind = kind;
	e->family = family;
	e->key_len = plen;
	e->mode = mode;
	e->expires_ns = b->expires_ns;
	e->origin = b->origin;
	e->pad = 0;
	if (family == 4) {
		__builtin_memcpy(e->addr, addr, 4);
		__builtin_memset(e->addr + 4, 0, 12);
	} else {
		__builtin_memcpy(e->addr, addr, 16);
	}
	bpf_ringbuf_submit(e, 0);
}

/*
 * A ban's event into both rings, under the events' global cap (struct
 * xrl_event_stats): the addr is the ban's prefix (plen bits). Out of line:
 * only at a transition (a rule's ban set, a ban's first drop, its end).
 * flags: the family << 8 | the kind, | 0x10000 dry-run.
 */
static __always_inline int ban_event_now(const struct xrl_ban *b, const __u32 *addr, __u32 plen,
					 __u64 now_ns, __u32 flags)
{
	__u32 family = (flags >> 8) & 0xff, kind = flags & 0xff, zero = 0, mode;
	struct xrl_event_stats *es;
	struct xrl_control *ctrl;

	es = bpf_map_lookup_elem(&xrl_event_stats, &zero);
	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!es || !ctrl || !b || !addr)
		return 0;
	if (!event_cap(es, now_ns))
		return 0;
	mode = ctrl->mode & (XRL_MODE_MAX - 1);
	/* a dry-run rule's would-ban says "would be", as the mode's does */
	if ((flags & 0x10000) && mode == XRL_MODE_ENFORCE)
		mode = XRL_MODE_DRY_RUN;
	ban_event_write(&xrl_events_rld, b, addr, plen, now_ns, family, kind, mode, es, 0);
	ban_event_write(&xrl_events_ctl, b, addr, plen, now_ns, family, kind, mode, es, 1);
	return 1;
}

/* The first plen bits of a network-order word at bit offset `at`. */
static __always_inline __u32 ban_mask_word(__u32 w, __u32 plen, __u32 at)
{
	if (plen <= at)
		return 0;
	if (plen - at >= 32)
		return w;
	return w & bpf_htonl(~0U << (32 - (plen - at)));
}

/* Out of line for the ban step's transitions, which name the ban's prefix
 * (the source masked by its length); inlined into ban_offence(), itself
 * out of line under the rule step (a fourth frame would pass the
 * verifier's 512 bytes of stack for a call chain). */
static __noinline int ban_event(const struct xrl_ban *b, const __u32 *src, __u32 plen,
				__u64 now_ns, __u32 flags)
{
	__u32 a[4];

	if (!src)
		return 0;
	a[0] = ban_mask_word(src[0], plen, 0);
	a[1] = ban_mask_word(src[1], plen, 32);
	a[2] = ban_mask_word(src[2], plen, 64);
	a[3] = ban_mask_word(src[3], plen, 96);
	return ban_event_now(b, a, plen, now_ns, flags);
}

/* A ban's event once: the CPU whose compare-and-swap moves its state on. */
static __always_inline void ban_transition(struct xrl_ban *b, __u32 from, __u32 to,
					   const struct xrl_pkt *p, __u64 now_ns, __u32 kind)
{
	if (__sync_val_compare_and_swap(&b->state, from, to) != from)
		return;
	/* the event's key: the ban's prefix (its own length, in the value) */
	ban_event(b, p->saddr, b->prefix_len, now_ns, p->family << 8 | kind);
}

/*
 * The ban step, right after parsing: 1 when a live ban covers the source
 * (the packet is the ban's: dropped, or passed by the mode and counted as
 * a would-drop), 0 to take the rest of the path. An entry past its end no
 * longer matches; its "unbanned" goes out at its first packet after it.
 *
 * Allow rules against bans: a rule's ban never holds for a source that an
 * allow rule covers (the rule's key may be wider than the rule that allows
 * a host inside it): that one look-up more, for a rule's bans only. A ban
 * from outside the data path (operator, configuration, decider) is an
 * explicit order about the prefix: it wins over allow.
 */
static __always_inline int ban_drop(const struct xrl_pkt *p, const struct xrl_control *ctrl,
				    __u32 mode)
{
	struct xrl_ban_stats *bs;
	struct xrl_ban *b;
	__u32 zero = 0;
	__u64 now_ns;

	/* no ban of this family at all: nothing to look up */
	if (!(READ_ONCE(ctrl->ban_families) & (p->family == 4 ? XRL_BANS_V4 : XRL_BANS_V6)))
		return 0;
	if (p->family == 4) {
		struct xrl_lpm4_key k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, &p->saddr[0], 4);
		b = bpf_map_lookup_elem(&xrl_bans4, &k);
	} else {
		struct xrl_lpm6_key k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, p->saddr, 16);
		b = bpf_map_lookup_elem(&xrl_bans6, &k);
	}
	if (!b)
		return 0;
	bs = bpf_map_lookup_elem(&xrl_ban_stats, &zero);
	if (!bs)
		return 0;
	now_ns = ban_now(bs, ctrl);
	if (b->expires_ns && !xrl_before(now_ns, b->expires_ns)) {
		if (b->state != XRL_BAN_S_ENDED)
			ban_transition(b, b->state, XRL_BAN_S_ENDED, p, now_ns, XRL_EV_UNBANNED);
		return 0;
	}
	if (b->origin == XRL_BAN_RULE) {
		const struct xrl_rule *r = classify(p);

		if (r && r->action == XRL_ACT_ALLOW) {
			bs->allowed_packets++;
			return 0;
		}
	}
	if (mode == XRL_MODE_DRY_RUN || mode == XRL_MODE_FAIL_OPEN) {
		bs->would_drop_packets++;
		return 1;
	}
	__sync_fetch_and_add(&b->dropped, 1);
	bs->dropped_packets++;
	bs->dropped_bytes += p->len;
	if (b->state == XRL_BAN_S_NEW)
		ban_transition(b, XRL_BAN_S_NEW, XRL_BAN_S_BANNED, p, now_ns, XRL_EV_BANNED);
	return 1;
}

/* A rule's ban of a key: d, doubled for each earlier ban of the key (level),
 * at most the rule's ban-max, plus a jitter of 0 .. d / XRL_BAN_JITTER_DIV
 * (bpf_get_prandom_u32()) so that the sources of a botnet cannot time
 * their return together. In ns. */
static __always_inline __u64 ban_length_ns(const struct xrl_rule *r, __u32 level)
{
	__u64 d = r->ban_s, max = r->ban_max_s > r->ban_s ? r->ban_max_s : r->ban_s;

	if (level > 32)
		level = 32;
	d <<= level;
	if (d > max || !d)
		d = max;
	d *= XRL_NSEC_PER_SEC;
	return d + (__u64)bpf_get_prandom_u32() % (d / XRL_BAN_JITTER_DIV + 1);
}

/*
 * A key of a rule that bans became limited (not every refused packet: the
 * transition, bucket_dropped()'s key_dropped()): one offence. At the
 * rule's `after`-th offence, each within ban-max of the one before (or of
 * the end of the key's last ban), the key is banned: its prefix is the
 * rule's key (addr/key_len). A dry-run rule (or mode) counts a would-ban
 * and says it in its event, and bans nothing; it keeps the same offence
 * record, so that its would-bans are what its bans would be.
 * Out of line: at transitions only. flags: the family, | 0x100 dry-run.
 */
static __noinline int ban_offence(const struct xrl_rule *r, const __u32 *kaddr, __u64 now_ns,
				  __u32 flags)
{
	__u32 family = flags & 0xff, zero = 0, after;
	struct xrl_offender_key *ok;
	struct xrl_ban_scratch *sc;
	struct xrl_lpm6_key *k;
	struct xrl_offender *o;
	struct xrl_ban_totals *t;
	struct xrl_ban *ban, *old;
	struct xrl_control *ctrl;
	__u64 memory_ns, len_ns;
	__u32 level, old_origin = 0;
	int err;

	if (!r || !kaddr)
		return 0;
	t = bpf_map_lookup_elem(&xrl_ban_totals, &zero);
	/* the new entry, built off the stack (the verifier's 512 bytes for
	 * the rule step and its calls) */
	sc = bpf_map_lookup_elem(&xrl_ban_scratch, &zero);
	if (!t || !sc)
		return 0;
	ban = &sc->ban;
	ok = &sc->ok;
	k = &sc->k;
	__sync_fetch_and_add(&t->offences, 1);
	__builtin_memset(ok, 0, sizeof(*ok));
	ok->rule_id = r->id;
	ok->family = family;
	if (family == 4)
		ok->addr[0] = kaddr[0];
	else
		__builtin_memcpy(ok->addr, kaddr, 16);
	memory_ns = (__u64)(r->ban_max_s > r->ban_s ? r->ban_max_s : r->ban_s) * XRL_NSEC_PER_SEC;
	/* the key's record, updated in place (two CPUs offending at once
	 * may count one offence: the transitions race the same way) */
	o = bpf_map_lookup_elem(&xrl_offenders, ok);
	if (!o) {
		struct xrl_offender fresh = { .last_ns = now_ns };

		bpf_map_update_elem(&xrl_offenders, ok, &fresh, BPF_NOEXIST);
		o = bpf_map_lookup_elem(&xrl_offenders, ok);
		if (!o)
			return 0;
	}
	if ((__s64)(now_ns - o->last_ns) > (__s64)memory_ns) {
		/* forgotten: quiet for longer than the memory */
		o->count = 0;
		o->level = 0;
	}
	o->count++;
	o->last_ns = now_ns;
	after = r->ban_after ? r->ban_after : 1;
	if (o->count < after)
		return 0;
	level = o->level;
	len_ns = ban_length_ns(r, level);
	o->count = 0;
	if (o->level < 64)
		o->level++;
	/* the memory runs from the ban's end: a key that returns at the end
	 * of its longest ban is still a repeat offender */
	o->last_ns = now_ns + len_ns;

	__builtin_memset(ban, 0, sizeof(*ban));
	ban->level = level;
	ban->expires_ns = now_ns + len_ns;
	ban->set_ns = now_ns;
	ban->origin = XRL_BAN_RULE;
	ban->rule_id = r->id;
	ban->prefix_len = r->key_len;
	ban->state = XRL_BAN_S_BANNED;	/* its "banned" goes out here */
	if (flags & 0x100) {
		__sync_fetch_and_add(&t->would_ban, 1);
		ban_event_now(ban, kaddr, r->key_len, now_ns, 0x10000 | family << 8 | XRL_EV_BANNED);
		return 0;
	}
	/* the rules' bans now: set, less those reclaimed or lifted (each
	 * counted by whoever removed it) */
	if (t->rule_bans_max &&
	    t->set[XRL_BAN_RULE] - t->expired[XRL_BAN_RULE] - t->deleted[XRL_BAN_RULE] >=
	    t->rule_bans_max) {
		__sync_fetch_and_add(&t->refused_reserve, 1);
		goto refused;
	}
	__builtin_memset(k, 0, sizeof(*k));
	k->prefixlen = r->key_len;
	if (family == 4) {
		__builtin_memcpy(k->addr, kaddr, 4);
		old = bpf_map_lookup_elem(&xrl_bans4, k);
	} else {
		__builtin_memcpy(k->addr, kaddr, 16);
		old = bpf_map_lookup_elem(&xrl_bans6, k);
	}
	/* an ended entry of this very prefix is replaced: counted as
	 * expired, as the sweep would have (a look-up answers the longest
	 * prefix up to this length: the value says whether it is this one) */
	if (old && old->prefix_len == r->key_len)
		old_origin = old->origin;
	if (family == 4)
		err = bpf_map_update_elem(&xrl_bans4, k, ban, BPF_ANY);
	else
		err = bpf_map_update_elem(&xrl_bans6, k, ban, BPF_ANY);
	if (err) {
		/* a full table refuses: no live ban is ever replaced */
		__sync_fetch_and_add(&t->refused_full, 1);
		goto refused;
	}
	if (old_origin && old_origin < XRL_BAN_ORIGINS)
		__sync_fetch_and_add(&t->expired[old_origin], 1);
	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (ctrl) {	/* after the insert (struct xrl_control) */
		__sync_fetch_and_or(&ctrl->ban_families, family == 4 ? XRL_BANS_V4 : XRL_BANS_V6);
		/* the banned-source cache's entries before it are void */
		__sync_fetch_and_add(&ctrl->ban_gen, 1);
	}
	__sync_fetch_and_add(&t->set[XRL_BAN_RULE], 1);
	ban_event_now(ban, kaddr, r->key_len, now_ns, family << 8 | XRL_EV_BANNED);
	return 1;
refused:
	/* a ban not set does not escalate the next one */
	o->level = level;
	o->last_ns = now_ns;
	return 0;
}

/* bucket_dropped() for the meter: and, at a key's transition to limited
 * under a rule that bans, its offence. */
static __always_inline int ban_bucket_dropped(struct xrl_bucket *b, struct xrl_step *m)
{
	__u32 was = b->limited;
	int d = bucket_dropped(b, m);

	if (!was && m->r->ban_s)
		ban_offence(m->r, m->kaddr, m->now_ns,
			    m->family | ((m->r->dry_run || m->mode == XRL_MODE_DRY_RUN) ? 0x100 : 0));
	return d;
}

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Live events: a key became limited, or no longer is; into each reader's
 * ring, sampled per key and capped globally.
 */
#ifndef XRL_BPF_EVENTS_H
#define XRL_BPF_EVENTS_H

#include "maps.h"
#include "context.h"
#include "hot.h"

/* One event into each ring. */
static __always_inline void event_write(void *ring, const struct xrl_event *ev,
					struct xrl_event_stats *es, int which)
{
	struct xrl_event *e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);

	if (!e) {
		es->ring_full[which]++;
		return;
	}
	__builtin_memcpy(e, ev, sizeof(*e));
	bpf_ringbuf_submit(e, 0);
}

/*
 * A key changed state (the key: addr, 16 bytes): called only on a transition (a drop of a key not
 * limited, a pass of a limited key), never on the steady path, and out of
 * line so that the metering code stays as small as it was. Returns 1 when
 * the event was written (or is due no more), 0 when it was left out.
 */
static __noinline int key_event(struct xrl_bucket *b, const struct xrl_rule *r,
				const __u32 *addr, __u64 now_ns, __u32 family_kind)
{
	/* five arguments at most: the family and the kind share one */
	__u32 family = family_kind >> 8, kind = family_kind & 0xff;
	struct xrl_event_stats *es;
	struct xrl_control *ctrl;
	struct xrl_event ev = {};
	__u32 zero = 0;

	es = bpf_map_lookup_elem(&xrl_event_stats, &zero);
	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!es || !ctrl)
		return 0;
	if (kind == XRL_EV_LIMITED && b->event_ns &&
	    now_ns - b->event_ns < XRL_EVENT_KEY_NS) {
		es->sampled++;
		return 0;
	}
	if (!event_cap(es, now_ns))
		return 0;
	es->events[kind == XRL_EV_LIMITED ? 0 : 1]++;
	ev.ts_ns = now_ns;
	ev.dropped = b->dropped;
	ev.rule_id = r->id;
	ev.kind = kind;
	ev.family = family;
	ev.key_len = r->key_len;
	ev.mode = ctrl->mode & (XRL_MODE_MAX - 1);
	/* a dry-run rule's drops are would-drops while the mode enforces:
	 * its events say "would be", as the mode's do */
	if (r->dry_run && ev.mode == XRL_MODE_ENFORCE)
		ev.mode = XRL_MODE_DRY_RUN;
	if (family == 4)
		__builtin_memcpy(ev.addr, addr, 4);
	else
		__builtin_memcpy(ev.addr, addr, 16);
	event_write(&xrl_events_rld, &ev, es, 0);
	event_write(&xrl_events_ctl, &ev, es, 1);
	return 1;
}

/* The first drop of a key that was not limited. */
static __always_inline void key_dropped(struct xrl_bucket *b, const struct xrl_step *m)
{
	b->limited = 1;
	if (key_event(b, m->r, m->kaddr, m->now_ns, m->family << 8 | XRL_EV_LIMITED)) {
		b->event_ns = m->now_ns;
		b->reported = 1;
	}
}

/* A limited key is no longer limited: its "unlimited" event (when its
 * "limited" was reported), after the drops the hot-key cache holds for
 * this source went into the bucket, so that the event says how many. An
 * "unlimited" that the cap left out is tried again at the key's next pass. */
static __always_inline void key_unlimited(struct xrl_bucket *b, const struct xrl_step *m)
{
	if (b->reported)
		hot_collect(b, m->p, m->r->gen);
	if (b->reported &&
	    !key_event(b, m->r, m->kaddr, m->now_ns, m->family << 8 | XRL_EV_UNLIMITED))
		return;
	b->reported = 0;
	b->limited = 0;
}

/* A pass of a limited key: it is no longer limited when its bucket was
 * full for at least one interval before this packet (old TAT + T <= now).
 * Within a flood, a pass finds the bucket all but empty. */
static __always_inline void key_passed(struct xrl_bucket *b, const struct xrl_step *m,
				       __u64 old, __u64 now)
{
	if ((__s64)(old + m->r->interval - now) <= 0)
		key_unlimited(b, m);
}

/* A key dropped: counted in its bucket, and its event on a transition. */
static __always_inline int bucket_dropped(struct xrl_bucket *b, struct xrl_step *m)
{
	/* the key's drops so far, this one included: DNS slip answers every
	 * slip-th (exact: a slipping rule's refusals are never cached) */
	m->kdrops = __sync_fetch_and_add(&b->dropped, 1) + 1;
	if (!b->limited)
		key_dropped(b, m);
	return XRL_DROP;
}

#endif

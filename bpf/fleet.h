/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet-wide rules: a key's lease when it has a live one, else the rule at
 * its local share.
 */
#ifndef XRL_BPF_FLEET_H
#define XRL_BPF_FLEET_H

#include "maps.h"
#include "context.h"
#include "bucket.h"

/*
 * Fleet: spend the key's lease when it has a live one; else meter at the
 * local share (an expired lease: only under on-failure open). A key the
 * share drops becomes a candidate for a lease. One inlined step per family,
 * for the same reason as meter_bucket's.
 */
static __always_inline int fleet_lease(const struct xrl_rule *r, __u32 slot, __u64 now_ns,
				       __u64 cost)
{
	struct xrl_lease *l = bpf_map_lookup_elem(&xrl_leases, &slot);
	__u64 c;
	int i;

	if (!l)
		return -1;
	if ((__s64)(READ_ONCE(l->expires_ns) - now_ns) <= 0)
		/* run out: Redis unreachable or the daemon gone */
		return r->on_failure == XRL_FAIL_CLOSED ? XRL_DROP : -1;
	for (i = 0; i < XRL_CAS_TRIES; i++) {
		c = READ_ONCE(l->credit);
		if (c < cost)
			break;
		if (__sync_val_compare_and_swap(&l->credit, c, c - cost) == c)
			return XRL_PASS;
	}
	l->denied += cost;
	return XRL_DROP;
}

static __always_inline int fleet_meter(void *keys, const void *key, void *buckets,
				       const struct xrl_step *m)
{
	const struct xrl_rule *r = m->r;
	struct xrl_fleet_rule *fr = bpf_map_lookup_elem(&xrl_fleet_rules, &r->slot);
	__u32 pending = XRL_FLEET_PENDING, *slot;
	/* the step at the share; its refusals are never cached (see
	 * hot_cacheable()): sm.until stays here */
	struct xrl_step sm = *m;
	struct xrl_rule *share;
	__u32 zero = 0;
	int res;

	if (!fr || !fr->interval)	/* no share written: the rule as it is */
		return meter_bucket(buckets, key, &sm);
	slot = bpf_map_lookup_elem(keys, key);
	if (slot && *slot != XRL_FLEET_PENDING) {
		res = fleet_lease(r, *slot, m->now_ns, m->cost);
		if (res >= 0)
			return res;
	}
	/* the rule at the share, in a per-CPU scratch value: a copy on the
	 * stack would pass the program's 512 bytes */
	share = bpf_map_lookup_elem(&xrl_fleet_scratch, &zero);
	if (!share)
		return XRL_DROP;
	__builtin_memcpy(share, r, sizeof(*share));
	share->interval = fr->interval;
	share->limit = fr->limit;
	sm.r = share;
	res = meter_bucket(buckets, key, &sm);
	if (res == XRL_DROP && !slot)
		bpf_map_update_elem(keys, key, &pending, BPF_NOEXIST);
	return res;
}

#endif

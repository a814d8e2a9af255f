// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide limits, this host's side: the promoted keys (a slot each,
 * found by a hash index), their leases swapped for each grant, and each
 * fleet rule's share of N hosts written into the maps.
 */
#include "fleet/fleet_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static unsigned key_hash(int family, __u32 gen, const __u8 *addr)
{
	unsigned h = 2166136261u ^ (unsigned)family;	/* FNV-1a */

	for (int i = 0; i < 4; i++)
		h = (h ^ ((gen >> (8 * i)) & 0xff)) * 16777619u;
	for (int i = 0; i < (family == 4 ? 4 : 16); i++)
		h = (h ^ addr[i]) * 16777619u;
	return h & (XRL_FLEET_HASH - 1);
}

void xrl__fleet_index_init(struct xrl_fleet *f)
{
	for (int i = 0; i < XRL_FLEET_HASH; i++)
		f->hash_head[i] = -1;
	/* slot 0 first, as the walk of every slot took them */
	for (int s = 0; s < XRL_FLEET_SLOTS; s++)
		f->free_slot[s] = XRL_FLEET_SLOTS - 1 - s;
	f->nfree = XRL_FLEET_SLOTS;
}

static void index_del(struct xrl_fleet *f, __u32 slot)
{
	const struct fkey *fk = &f->keys[slot];
	int *p = &f->hash_head[key_hash(fk->family, fk->gen, fk->addr)];

	while (*p >= 0 && *p != (int)slot)
		p = &f->hash_next[*p];
	if (*p == (int)slot)
		*p = f->hash_next[slot];
	f->free_slot[f->nfree++] = slot;
}

/* Give every slot back: credit gone, keys deleted from the maps. */
void xrl__fleet_key_of(const struct fkey *fk, struct xrl_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = fk->family;
	k->gen = fk->gen;
	memcpy(k->addr, fk->addr, 16);
}

void xrl__fleet_key_free(struct xrl_fleet *f, __u32 slot)
{
	struct fkey *fk = &f->keys[slot];
	struct xrl_lease *l = f->x->leases;
	struct xrl_key k;

	xrl__fleet_key_of(fk, &k);
	xrl_fleet_key_del(f->x, &k);
	index_del(f, slot);
	f->st.expired += __atomic_exchange_n(&l[slot].credit, 0, __ATOMIC_ACQ_REL);
	__atomic_store_n(&l[slot].expires_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&l[slot].denied, 0, __ATOMIC_RELEASE);
	memset(fk, 0, sizeof(*fk));
}

/* The share of N hosts, and the state, of each fleet rule: into the map. */
void xrl__fleet_write_rules(struct xrl_fleet *f)
{
	xrl__fleet_write_rules_of(f, f->rules, f->nrules);
}

/*
 * N for a rule's share. Known (Redis answered once): the live hosts as last
 * heard. Never heard: an on-failure closed rule cannot know how many hosts
 * admit its keys beside this one, and closed says "rather drop than let
 * the limit through": the share of the 'hosts' the operator gave (default
 * 2, the least a fleet is); an open rule meters alone at its whole rate,
 * as it does without a fleet.
 */
static unsigned share_hosts(const struct xrl_fleet *f, const struct frule *r)
{
	if (f->hosts)
		return f->hosts;
	if (r->on_failure == XRL_FAIL_CLOSED)
		return f->cfg.hosts;
	return 1;
}

void xrl__fleet_write_rules_of(struct xrl_fleet *f, const struct frule *rules, size_t nrules)
{
	unsigned promoted[64] = { 0 };

	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++)
		for (size_t i = 0; f->keys[s].used && i < nrules && i < 64; i++)
			if (f->keys[s].gen == rules[i].gen)
				promoted[i]++;
	for (size_t i = 0; i < nrules; i++) {
		const struct frule *r = &rules[i];
		struct xrl_fleet_rule fr = { 0 };
		unsigned n = share_hosts(f, r);
		__u64 burst = r->burst / n ? r->burst / n : 1;

		fr.interval = r->interval * n;
		fr.limit = xrl_burst_limit(fr.interval, burst);
		if (!fr.limit)	/* out of range: the rule as it is */
			fr.interval = 0;
		if (!f->hosts)
			fr.state = XRL_FLEET_NEVER_SYNCED;
		else if (f->synced)
			fr.state = XRL_FLEET_SYNCED;
		else
			fr.state = r->on_failure == XRL_FAIL_CLOSED ? XRL_FLEET_CLOSED :
								    XRL_FLEET_FALLBACK_OPEN;
		if (f->st.may_evict)
			fr.state |= XRL_FLEET_F_MAY_EVICT;
		fr.hosts = n;
		fr.sync_ns = f->last_ok_ns;
		fr.latency_ns = f->last_lat_ns;
		fr.promoted = i < 64 ? promoted[i] : 0;
		fr.rule_id = r->id;
		xrl_fleet_rule_put(f->x, r->slot, &fr);
	}
}

const struct frule *xrl__fleet_rule_of_gen(struct xrl_fleet *f, __u32 gen)
{
	for (size_t i = 0; i < f->nrules; i++)
		if (f->rules[i].gen == gen)
			return &f->rules[i];
	return NULL;
}

/* Per sync, the tokens a key at rate R over N hosts needs at least. */
static __u64 want_min(const struct xrl_fleet *f, const struct frule *r)
{
	double per_sync = (double)r->count * f->cfg.sync_ms * 1e6 / r->period_ns;
	unsigned n = f->hosts ? f->hosts : 1;

	return (__u64)ceil(per_sync / n) + 1;
}

static __u64 want_max(const struct xrl_fleet *f, const struct frule *r)
{
	double per_lease = (double)r->count * xrl_fleet_lease_ms(f->cfg.sync_ms) * 1e6 / r->period_ns;

	return (__u64)ceil(per_lease) + r->burst;
}

/* A candidate of the data path: a slot for it (the map still says pending
 * until its first grant). */
static void promote(struct xrl_fleet *f, int family, const __u32 gen, const __u8 *addr,
		    const struct frule *r, __u32 key_len)
{
	struct fkey *k;
	unsigned h;
	char a[64];
	__u32 s;

	if (!f->nfree) {
		f->st.candidates_full++;
		return;
	}
	s = f->free_slot[--f->nfree];
	k = &f->keys[s];
	memset(k, 0, sizeof(*k));
	k->used = true;
	k->family = family;
	k->gen = gen;
	k->rule_id = r->id;
	k->key_len = key_len;
	memcpy(k->addr, addr, family == 4 ? 4 : 16);
	k->want = want_max(f, r);	/* the first grant may hold the burst */
	xrl_addr_format(family, addr, a, sizeof(a));
	snprintf(k->rkey, sizeof(k->rkey), "{xrl:%u:%s/%u}", r->id, a, key_len);
	h = key_hash(family, gen, k->addr);
	f->hash_next[s] = f->hash_head[h];
	f->hash_head[h] = s;
}

static bool slot_of(struct xrl_fleet *f, int family, __u32 gen, const __u8 *addr, __u32 *slot)
{
	for (int s = f->hash_head[key_hash(family, gen, addr)]; s >= 0; s = f->hash_next[s]) {
		const struct fkey *k = &f->keys[s];

		if (k->used && k->family == family && k->gen == gen &&
		    !memcmp(k->addr, addr, family == 4 ? 4 : 16)) {
			*slot = s;
			return true;
		}
	}
	return false;
}

/* Walk the candidates and promoted keys of one family's map: promote the
 * new ones, forget those of rules gone. */
void xrl__fleet_scan_family(struct xrl_fleet *f, int family)
{
	int fd = f->x->map_fd[family == 4 ? M_FLEET_KEYS4 : M_FLEET_KEYS6];
	struct xrl_bucket_key6 cur, next;
	bool first = true;
	__u32 v, s;

	while (!bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		const struct frule *r;
		__u8 addr[16] = { 0 };
		__u32 gen = next.gen;

		first = false;
		cur = next;
		memcpy(addr, next.addr, family == 4 ? 4 : 16);
		if (bpf_map_lookup_elem(fd, &next, &v))
			continue;
		r = xrl__fleet_rule_of_gen(f, gen);
		if (!r) {	/* its rule changed or went */
			if (slot_of(f, family, gen, addr, &s))
				xrl__fleet_key_free(f, s);
			else
				bpf_map_delete_elem(fd, &next);	/* a candidate */
			continue;
		}
		if (v == XRL_FLEET_PENDING && !slot_of(f, family, gen, addr, &s))
			promote(f, family, gen, addr, r, r->key_len);
	}
}

/* Swap the lease of slot s for a grant; returns the credit left of it. */
void xrl__fleet_swap_lease(struct xrl_fleet *f, __u32 s, __u64 grant, __u64 now_ns)
{
	struct xrl_lease *l = &f->x->leases[s];
	struct fkey *k = &f->keys[s];
	__u64 lease_ns = (__u64)xrl_fleet_lease_ms(f->cfg.sync_ms) * 1000000ULL;
	__u64 old_exp = __atomic_load_n(&l->expires_ns, __ATOMIC_ACQUIRE), old, used, demand;
	const struct frule *r = xrl__fleet_rule_of_gen(f, k->gen);

	/* never new credit on old credit with a later expiry: the expiry
	 * first (old credit may be spent a little longer, never re-counted),
	 * then the credit replaced, its leftover kept to give back */
	__atomic_store_n(&l->expires_ns, now_ns + lease_ns, __ATOMIC_RELEASE);
	old = __atomic_exchange_n(&l->credit, grant, __ATOMIC_ACQ_REL);
	if (!k->live) {
		struct xrl_key key;

		xrl__fleet_key_of(k, &key);
		xrl_fleet_key_put(f->x, &key, s);
		k->live = true;
		old = 0;
		used = 0;
		k->idle = 0;
	} else if ((__s64)(old_exp - now_ns) <= 0) {
		f->st.expired += old;	/* run out: never spendable again */
		used = k->grant - (old < k->grant ? old : k->grant);
		old = 0;
	} else {
		used = k->grant - (old < k->grant ? old : k->grant);
	}
	k->ret = old;
	k->grant = grant;
	k->seen_ns = now_ns;
	f->st.granted += grant;
	/* ask for what was spent and what was refused, and a quarter more:
	 * the grants follow each host's demand, not its past grants */
	demand = used + __atomic_exchange_n(&l->denied, 0, __ATOMIC_ACQ_REL);
	demand += demand / 4;
	if (r) {
		__u64 lo = want_min(f, r), hi = want_max(f, r);

		k->want = demand < lo ? lo : demand > hi ? hi : demand;
	}
	k->idle = used ? 0 : k->idle + 1;
}

/* A key hot elsewhere: promoted here too when it had traffic here lately. */
void xrl__fleet_promote_hot(struct xrl_fleet *f, const struct frule *r, const char *s, __u64 now_ns)
{
	struct xrl_rule_entry e = { 0 };
	struct xrl_bucket b;
	struct xrl_key k = { 0 };
	__u32 slot;

	/* a key of this rule's form, or nothing: the reply is untrusted */
	if (xrl_prefix_parse(s, &e) || e.prefix_len != r->key_len)
		return;
	if (slot_of(f, e.family, r->gen, e.addr, &slot))
		return;
	k.family = e.family;
	k.gen = r->gen;
	memcpy(k.addr, e.addr, 16);
	/* signed: a precise-clock rule stamps last_ns up to a tick ahead of
	 * now_ns (xrl_rule_now_ns()), which is "just now", not idle */
	if (xrl_bucket_peek(f->x, &k, &b) || (__s64)(now_ns - b.last_ns) > 1000000000LL)
		return;
	promote(f, e.family, r->gen, e.addr, r, r->key_len);
}

/*
 * Redis never answered: the candidates of an on-failure closed rule (keys
 * over its conservative share, share_hosts()) point at their slot, whose
 * lease was never granted (expired): the data path drops them, as it drops
 * a promoted key whose lease ran out. The first grant swaps a real lease in.
 */
void xrl__fleet_hold_closed(struct xrl_fleet *f)
{
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
		struct fkey *k = &f->keys[s];
		const struct frule *r;
		struct xrl_key key;

		if (!k->used || k->live || !(r = xrl__fleet_rule_of_gen(f, k->gen)) ||
		    r->on_failure != XRL_FAIL_CLOSED)
			continue;
		__atomic_store_n(&f->x->leases[s].credit, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&f->x->leases[s].expires_ns, 0, __ATOMIC_RELEASE);
		xrl__fleet_key_of(k, &key);
		if (!xrl_fleet_key_put(f->x, &key, s))
			k->live = true;
	}
}

/* A key that spent nothing for a while goes back to its share. */
void xrl__fleet_demote_idle(struct xrl_fleet *f)
{
	for (__u32 s = 0; s < XRL_FLEET_SLOTS; s++) {
		struct fkey *k = &f->keys[s];

		if (k->used && (k->idle >= XRL_FLEET_IDLE_SYNCS || !xrl__fleet_rule_of_gen(f, k->gen)))
			xrl__fleet_key_free(f, s);
	}
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: endpoint rules (rule add PREFIX proto P [dport N|N-M] [syn]).
 * The layout is described in xdp_rl_common.h: a class array indexed by
 * what a packet is, and per family an LPM trie keyed by (class, source
 * prefix), both fresh per commit and published behind map-in-maps.
 */
#include "maps/internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPACE_OF(class)	(((class) >> XRL_EP_SPACE_SHIFT) & 3)

/*
 * Per address family, the entries one rule set may write into its trie:
 * the list of its endpoint rules and one entry per class and prefix. Half
 * the trie: a commit builds the new set beside the published one in one
 * trie (xrl__endpoints_commit()), so any set within it fits over any other,
 * and a reload never fails for the size of the set it replaces.
 */
#define EP_SET_ENTRIES	(XRL_EP_ENTRIES / 2)

bool xrl_rule_is_endpoint(const struct xrl_rule *r)
{
	return r->ep;
}

/* The class-array slots a rule covers, as up to three ranges [lo, hi]. */
int xrl__ep_rule_ranges(const struct xrl_rule *r, __u32 lo[3], __u32 hi[3])
{
	bool any = r->dport_lo == 0 && r->dport_hi == 65535;
	int k = 0;

	if (r->proto == IPPROTO_TCP) {
		lo[k] = XRL_EP_TCP_SYN + r->dport_lo, hi[k++] = XRL_EP_TCP_SYN + r->dport_hi;
		if (!r->syn)
			lo[k] = XRL_EP_TCP + r->dport_lo, hi[k++] = XRL_EP_TCP + r->dport_hi;
		/* a packet without ports (a non-first fragment) meets the
		 * rules that name no port and no SYN */
		if (any && !r->syn)
			lo[k] = hi[k] = XRL_EP_PROTO + IPPROTO_TCP, k++;
	} else if (r->proto == IPPROTO_UDP) {
		lo[k] = XRL_EP_UDP + r->dport_lo, hi[k++] = XRL_EP_UDP + r->dport_hi;
		if (any)
			lo[k] = hi[k] = XRL_EP_PROTO + IPPROTO_UDP, k++;
	} else {
		lo[k] = hi[k] = XRL_EP_PROTO + r->proto, k++;
	}
	return k;
}

/* More specific by port: a narrower range, then SYN only, then the lower id. */
bool xrl__ep_narrower(const struct xrl_rule *a, const struct xrl_rule *b)
{
	__u32 wa = a->dport_hi - a->dport_lo, wb = b->dport_hi - b->dport_lo;

	if (wa != wb)
		return wa < wb;
	if (a->syn != b->syn)
		return a->syn;
	return a->id < b->id;
}

/* A new fd on the inner map published in an outer map, or -ENOENT. */
static int inner_fd(struct xrl *x, int which)
{
	return xrl__published_fd(x, which);
}

/* The id space of the published set in *space: 1 or 2; 0 when none is
 * published. An error when the set cannot be opened: never taken for none
 * (a commit would leave the old endpoint rules in force). */
static int space_in_use(struct xrl *x, __u32 *space)
{
	__u32 slot = XRL_EP_SPACE_SLOT;
	int fd = inner_fd(x, M_EP_CLASS);

	*space = 0;
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;	/* xrl__published_fd() said why */
	if (bpf_map_lookup_elem(fd, &slot, space))
		*space = 0;
	close(fd);
	return 0;
}

static int trie_create(int family)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, family == 6 ? "xrl_ep6_set" : "xrl_ep4_set",
				family == 6 ? sizeof(struct xrl_ep6_key) : sizeof(struct xrl_ep4_key),
				sizeof(struct xrl_rule), XRL_EP_ENTRIES, &o);

	return fd < 0 ? -errno : fd;
}

static int trie_put(int fd, const struct xrl_rule_entry *e, __u32 class)
{
	struct xrl_ep6_key k = { .prefixlen = 32 + e->prefix_len, .class = class };

	memcpy(k.addr, e->addr, e->family == 6 ? 16 : 4);
	if (bpf_map_update_elem(fd, &k, &e->r, BPF_ANY))
		return xrl_fail(errno, "cannot write endpoint rule %u: %s%s", e->r.id, strerror(errno),
			    errno == E2BIG || errno == ENOSPC ?
			    " (too many endpoint rules and port classes)" : "");
	return 0;
}

/* Copy the published trie's entries of one id space into fd. */
static int copy_space(struct xrl *x, int family, __u32 space, int fd)
{
	struct xrl_ep6_key key, next;
	struct xrl_rule r;
	void *prev = NULL;
	int old = inner_fd(x, family == 6 ? M_EP6 : M_EP4), err = 0;

	if (old == -ENOENT || !space) {
		if (old >= 0)
			close(old);
		return 0;
	}
	if (old < 0)
		return old;	/* xrl__published_fd() said why */
	while (bpf_map_get_next_key(old, prev, &next) == 0) {
		if (SPACE_OF(next.class) == space && bpf_map_lookup_elem(old, &next, &r) == 0 &&
		    bpf_map_update_elem(fd, &next, &r, BPF_ANY)) {
			err = xrl_fail(errno, "cannot copy the endpoint rules: %s", strerror(errno));
			break;
		}
		key = next;
		prev = &key;
	}
	close(old);
	return err;
}

/* Read the endpoint rules of the published set, appending to *v. */
int xrl__endpoints_read(struct xrl *x, struct xrl_rule_entry **v, size_t *n, size_t *cap)
{
	__u32 space;
	int err = space_in_use(x, &space);

	if (err)
		return err;

	for (int family = 4; space && family <= 6; family += 2) {
		struct xrl_ep6_key key, next;
		void *prev = NULL;
		int fd = inner_fd(x, family == 6 ? M_EP6 : M_EP4);

		if (fd == -ENOENT)
			continue;
		if (fd < 0)
			return fd;	/* xrl__published_fd() said why */
		while (bpf_map_get_next_key(fd, prev, &next) == 0) {
			key = next;
			prev = &key;
			if (!(next.class & XRL_EP_LIST) || SPACE_OF(next.class) != space)
				continue;
			if (*n == *cap) {
				size_t nc = *cap ? *cap * 2 : 64;
				void *nv = realloc(*v, nc * sizeof(**v));

				if (!nv) {
					close(fd);
					return xrl_fail(ENOMEM, "out of memory");
				}
				*v = nv;
				*cap = nc;
			}
			memset(&(*v)[*n], 0, sizeof(**v));
			(*v)[*n].family = family;
			(*v)[*n].prefix_len = next.prefixlen - 32;
			memcpy((*v)[*n].addr, next.addr, family == 6 ? 16 : 4);
			if (bpf_map_lookup_elem(fd, &next, &(*v)[*n].r) == 0)
				(*n)++;
		}
		close(fd);
	}
	return 0;
}

struct ep_build {
	int trie[2];		/* IPv4, IPv6 */
	int array;
	__u32 *vals;
};

/*
 * The classes, in one sweep over the slots. Each range of each rule is an
 * event at its first slot (+1) and one past its last (-1); between two
 * event positions every slot has the same covering set. A class is a set,
 * numbered in the order the sweep first meets it, as a slot-by-slot scan
 * would. The set is named by a 128-bit hash, the XOR of a random pair per
 * rule in it (updated in O(1) at each event; two different sets of the
 * ~10^5 a sweep meets collide with a chance of about 2^-94). What a class
 * writes into the tries is, per prefix among its rules, the most specific
 * by port: each prefix keeps a heap of its covering rules in that order
 * (removed ones are dropped lazily when they reach the top), and a list of
 * the prefixes with a covering rule. So the sweep is O(n log n) plus what
 * it writes, in O(n) memory.
 */
struct ep_event {
	__u32 pos;
	__u32 rule;
	int delta;
};

struct ep_sweep {
	const struct xrl_rule_entry *const *ep;
	size_t nep;
	__u32 *cover;		/* per rule: how many of its ranges cover the slot */
	__u32 *group;		/* per rule: its prefix */
	__u32 *rank;		/* per rule: its place in the port order of its prefix */
	__u32 *heap, *hlen;	/* per prefix: heap[hoff[g] ...], hlen[g] long */
	size_t *hoff;
	__u32 *gcount;		/* per prefix: covering rules */
	__u32 *active, *apos;	/* the prefixes with a covering rule, and where */
	__u32 nactive, ncover;
	__u64 h1, h2;
};

static int cmp_event(const void *a, const void *b)
{
	const struct ep_event *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_prefix_of(const struct xrl_rule_entry *x, const struct xrl_rule_entry *y)
{
	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	return memcmp(x->addr, y->addr, 16);
}

struct ep_ref {
	const struct xrl_rule_entry *e;
	__u32 i;
};

/* by prefix, then most specific by port first */
static int cmp_rule_order(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = ((const struct ep_ref *)a)->e, *y = ((const struct ep_ref *)b)->e;
	int c = cmp_prefix_of(x, y);

	if (c)
		return c;
	return xrl__ep_narrower(&x->r, &y->r) ? -1 : xrl__ep_narrower(&y->r, &x->r);
}

static __u64 mix64(__u64 z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void heap_push(struct ep_sweep *w, __u32 g, __u32 r)
{
	__u32 *h = w->heap + w->hoff[g], i = w->hlen[g]++;

	while (i && w->rank[h[(i - 1) / 2]] > w->rank[r]) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = r;
}

static void heap_pop(struct ep_sweep *w, __u32 g)
{
	__u32 *h = w->heap + w->hoff[g], n = --w->hlen[g], last = h[n], i = 0;

	for (;;) {
		__u32 c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && w->rank[h[c + 1]] < w->rank[h[c]])
			c++;
		if (w->rank[h[c]] >= w->rank[last])
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = last;
}

/* The most specific covering rule of prefix g (it has one). */
static __u32 heap_best(struct ep_sweep *w, __u32 g)
{
	while (!w->cover[w->heap[w->hoff[g]]])
		heap_pop(w, g);
	return w->heap[w->hoff[g]];
}

static void sweep_apply(struct ep_sweep *w, const struct ep_event *e)
{
	__u32 r = e->rule, g = w->group[r];

	if (e->delta > 0 ? w->cover[r]++ : --w->cover[r])
		return;	/* still covered by another of its ranges, or was */
	w->h1 ^= mix64(2 * (__u64)r + 1);
	w->h2 ^= mix64(2 * (__u64)r + 2 + ((__u64)1 << 40));
	if (e->delta > 0) {
		w->ncover++;
		heap_push(w, g, r);
		if (!w->gcount[g]++) {
			w->apos[g] = w->nactive;
			w->active[w->nactive++] = g;
		}
	} else {
		w->ncover--;
		if (!--w->gcount[g]) {
			__u32 last = w->active[--w->nactive];

			w->active[w->apos[g]] = last;
			w->apos[last] = w->apos[g];
		}
	}
}

struct ep_class_slot {
	__u64 h1, h2;
	__u32 cls;	/* 0: empty */
};

int xrl__ep_classes(const struct xrl_rule_entry *const *ep, size_t nep, __u32 *cls,
		    struct xrl_ep_entry **out, size_t *nout, size_t max_per_family, int *over)
{
	struct ep_sweep w = { .ep = ep, .nep = nep };
	struct ep_event *ev = malloc((nep * 6 + 1) * sizeof(*ev));
	struct xrl_ep_entry *ent = NULL;
	struct ep_class_slot *tab = NULL;
	size_t nev = 0, nent = 0, cap = 0, tcap = 1, per[2] = { 0, 0 }, ngroups = 0;
	struct ep_ref *order = malloc((nep + 1) * sizeof(*order));
	__u32 ncls = 0;
	int err = 0;

	*out = NULL;
	*nout = 0;
	*over = 0;
	memset(cls, 0, XRL_EP_SPACE_SLOT * sizeof(*cls));
	w.cover = calloc(nep + 1, sizeof(*w.cover));
	w.group = malloc((nep + 1) * sizeof(*w.group));
	w.rank = malloc((nep + 1) * sizeof(*w.rank));
	w.heap = malloc((nep * 3 + 1) * sizeof(*w.heap));
	w.hlen = calloc(nep + 1, sizeof(*w.hlen));
	w.hoff = malloc((nep + 1) * sizeof(*w.hoff));
	w.gcount = calloc(nep + 1, sizeof(*w.gcount));
	w.active = malloc((nep + 1) * sizeof(*w.active));
	w.apos = malloc((nep + 1) * sizeof(*w.apos));
	if (!ev || !order || !w.cover || !w.group || !w.rank || !w.heap || !w.hlen || !w.hoff ||
	    !w.gcount || !w.active || !w.apos) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	/* the prefixes, and the port order within each */
	for (size_t i = 0; i < nep; i++) {
		order[i] = (struct ep_ref){ .e = ep[i], .i = i };
		per[ep[i]->family == 6]++;	/* the list's entries */
	}
	xrl_sort(order, nep, sizeof(*order), cmp_rule_order);
	for (size_t i = 0; i < nep; i++) {
		bool first = !i || cmp_prefix_of(order[i - 1].e, order[i].e);

		if (i && first)
			ngroups++;
		if (first)
			w.hoff[ngroups] = 3 * i;	/* a rule has at most 3 ranges */
		w.group[order[i].i] = ngroups;
		w.rank[order[i].i] = i;
	}
	for (int f = 0; f < 2; f++)
		if (per[f] > max_per_family) {
			*over = f ? 6 : 4;
			err = -E2BIG;
			goto out;
		}
	for (size_t i = 0; i < nep; i++) {
		__u32 lo[3], hi[3];
		int k = xrl__ep_rule_ranges(&ep[i]->r, lo, hi);

		for (int j = 0; j < k; j++) {
			ev[nev++] = (struct ep_event){ .pos = lo[j], .rule = i, .delta = 1 };
			ev[nev++] = (struct ep_event){ .pos = hi[j] + 1, .rule = i, .delta = -1 };
		}
	}
	xrl_sort(ev, nev, sizeof(*ev), cmp_event);
	while (tcap < 2 * nev + 2)
		tcap *= 2;
	tab = calloc(tcap, sizeof(*tab));
	if (!tab) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t e = 0; e < nev;) {
		__u32 a = ev[e].pos, b, c;
		size_t t;

		while (e < nev && ev[e].pos == a)
			sweep_apply(&w, &ev[e++]);
		if (e == nev || !w.ncover || a >= XRL_EP_SPACE_SLOT)
			continue;
		b = ev[e].pos < XRL_EP_SPACE_SLOT ? ev[e].pos : XRL_EP_SPACE_SLOT;
		for (t = w.h1 & (tcap - 1); tab[t].cls; t = (t + 1) & (tcap - 1))
			if (tab[t].h1 == w.h1 && tab[t].h2 == w.h2)
				break;
		if (!(c = tab[t].cls)) {	/* a new class: its entries */
			c = tab[t].cls = ++ncls;
			tab[t].h1 = w.h1;
			tab[t].h2 = w.h2;
			for (__u32 i = 0; i < w.nactive; i++) {
				__u32 r = heap_best(&w, w.active[i]);
				int f = ep[r]->family == 6;

				if (++per[f] > max_per_family) {
					*over = f ? 6 : 4;
					err = -E2BIG;
					goto out;
				}
				if (nent == cap) {
					void *nv = realloc(ent, (cap = cap ? 2 * cap : 256) * sizeof(*ent));

					if (!nv) {
						err = xrl_fail(ENOMEM, "out of memory");
						goto out;
					}
					ent = nv;
				}
				ent[nent++] = (struct xrl_ep_entry){ .cls = c, .rule = r };
			}
		}
		for (__u32 slot = a; slot < b; slot++)
			cls[slot] = c;
	}
out:
	free(ev);
	free(order);
	free(tab);
	free(w.cover);
	free(w.group);
	free(w.rank);
	free(w.heap);
	free(w.hlen);
	free(w.hoff);
	free(w.gcount);
	free(w.active);
	free(w.apos);
	if (err) {
		free(ent);
		return err;
	}
	*out = ent;
	*nout = nent;
	return 0;
}

/* The error of a set over EP_SET_ENTRIES in family's table. */
static int ep_limit(const struct xrl_rule_entry *const *ep, size_t nep, int family)
{
	size_t rules = 0;

	for (size_t i = 0; i < nep; i++)
		rules += ep[i]->family == family;
	return xrl_fail(E2BIG, "too many endpoint rules and port classes: the IPv%d endpoint rules (%zu) "
		    "and their classes' entries (one per class and prefix) need more than %d entries, "
		    "the limit per address family (README, \"Limits of the design\"): fewer endpoint rules, fewer "
		    "prefixes among them, or port ranges that overlap less", family, rules, EP_SET_ENTRIES);
}

int xrl__endpoints_check(const struct xrl_rule_entry *v, size_t n, size_t *bad)
{
	const struct xrl_rule_entry **ep = malloc((n + 1) * sizeof(*ep));
	__u32 *cls = malloc(XRL_EP_SPACE_SLOT * sizeof(*cls));
	struct xrl_ep_entry *ent = NULL;
	size_t nep = 0, nent = 0;
	int err, over = 0;

	if (!ep || !cls) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].r.ep)
			ep[nep++] = &v[i];
	err = 0;
	if (!nep)
		goto out;
	err = xrl__ep_classes(ep, nep, cls, &ent, &nent, EP_SET_ENTRIES, &over);
	if (err == -E2BIG) {
		err = ep_limit(ep, nep, over);
		/* blamed on the last endpoint rule of that family */
		for (size_t i = nep; i-- > 0;)
			if (ep[i]->family == over) {
				*bad = ep[i] - v;
				break;
			}
	}
out:
	free(ent);
	free(cls);
	free(ep);
	return err;
}

static void ep_close(struct ep_build *b)
{
	for (int i = 0; i < 2; i++)
		if (b->trie[i] >= 0)
			close(b->trie[i]);
	if (b->array >= 0)
		close(b->array);
	free(b->vals);
}

/*
 * Build and publish the endpoint rules of v (the others are skipped): the
 * new tries (holding the published space's entries too) first, then the
 * class array that switches packets to the new space. A failure before the
 * array is published leaves packets on the old set.
 */
int xrl__endpoints_commit(struct xrl *x, const struct xrl_rule_entry *v, size_t n)
{
	struct ep_build b = { .trie = { -1, -1 }, .array = -1 };
	const struct xrl_rule_entry **ep = malloc((n + 1) * sizeof(*ep));
	__u32 old, space, count = XRL_EP_SLOTS;
	__u32 *keys = NULL;
	unsigned *best = NULL;
	struct xrl_ep_entry *ent = NULL;
	size_t nep = 0, nent = 0;
	int err = 0, over = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);

	if (!ep)
		return xrl_fail(ENOMEM, "out of memory");
	if ((err = space_in_use(x, &old))) {
		free(ep);
		return err;
	}
	space = old == 1 ? 2 : 1;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.ep)
			ep[nep++] = &v[i];
	if (!nep && !old) {	/* never had any: nothing to publish */
		free(ep);
		return 0;
	}
	b.vals = calloc(XRL_EP_SLOTS, sizeof(*b.vals));
	keys = malloc(XRL_EP_SLOTS * sizeof(*keys));
	if (!b.vals || !keys) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (int f = 0; f < 2; f++) {
		b.trie[f] = trie_create(f ? 6 : 4);
		if (b.trie[f] < 0) {
			err = xrl_fail(b.trie[f], "cannot create an endpoint rule set: %s", strerror(-b.trie[f]));
			goto out;
		}
		if ((err = copy_space(x, f ? 6 : 4, old, b.trie[f])))
			goto out;
	}
	for (size_t i = 0; i < nep; i++)	/* the list, to read them back */
		if ((err = trie_put(b.trie[ep[i]->family == 6], ep[i],
				    XRL_EP_LIST | space << XRL_EP_SPACE_SHIFT | (__u32)i)))
			goto out;
	if ((err = xrl__ep_classes(ep, nep, b.vals, &ent, &nent, EP_SET_ENTRIES, &over))) {
		if (err == -E2BIG)
			err = ep_limit(ep, nep, over);
		goto out;
	}
	/* a rule written under several classes has ep_multi set, for the
	 * hot-key cache, which keys its entries by class */
	best = calloc(nep ? nep : 1, sizeof(*best));
	if (!best) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nent; i++)
		best[ent[i].rule]++;
	for (size_t i = 0; i < nent; i++) {
		struct xrl_rule_entry w = *ep[ent[i].rule];

		w.r.ep_multi = best[ent[i].rule] > 1;
		if ((err = trie_put(b.trie[w.family == 6], &w, space << XRL_EP_SPACE_SHIFT | ent[i].cls)))
			goto out;
	}
	free(ent);	/* O(rules) memory, released before the maps are swapped */
	ent = NULL;
	for (__u32 i = 0; i < XRL_EP_SPACE_SLOT; i++)
		if (b.vals[i])
			b.vals[i] |= space << XRL_EP_SPACE_SHIFT;
	b.vals[XRL_EP_SPACE_SLOT] = space;
	b.array = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrl_ep_class_set", sizeof(__u32),
				 sizeof(__u32), XRL_EP_SLOTS, NULL);
	if (b.array < 0) {
		err = xrl_fail(errno, "cannot create the endpoint classes: %s", strerror(errno));
		goto out;
	}
	for (__u32 i = 0; i < XRL_EP_SLOTS; i++)
		keys[i] = i;
	if (bpf_map_update_batch(b.array, keys, b.vals, &count, &bo)) {
		err = xrl_fail(errno, "cannot write the endpoint classes: %s", strerror(errno));
		goto out;
	}
	/* publish: the tries, then the array (see xdp_rl_common.h) */
	if ((err = xrl__publish_set(x, M_EP4, b.trie[0])) || (err = xrl__publish_set(x, M_EP6, b.trie[1])) ||
	    (err = xrl__publish_set(x, M_EP_CLASS, b.array)))
		err = xrl_fail(err, "cannot publish the endpoint rules: %s", strerror(-err));
out:
	ep_close(&b);
	free(ent);
	free(best);
	free(keys);
	free(ep);
	return err;
}

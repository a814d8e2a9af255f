// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: endpoint rules (rule add PREFIX proto P [dport N|N-M] [syn]).
 * The layout is described in xdp_rl_common.h: a class array indexed by
 * what a packet is, and per family an LPM trie keyed by (class, source
 * prefix), both fresh per commit and published behind map-in-maps.
 */
#include "internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPACE_OF(class)	(((class) >> XRL_EP_SPACE_SHIFT) & 3)

bool xrl_rule_is_endpoint(const struct xrl_rule *r)
{
	return r->ep;
}

/* The class-array slots a rule covers, as up to three ranges [lo, hi]. */
static int rule_ranges(const struct xrl_rule *r, __u32 lo[3], __u32 hi[3])
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
static bool port_narrower(const struct xrl_rule *a, const struct xrl_rule *b)
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
	return published_fd(x, which);
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
		return fd;	/* published_fd() said why */
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
		return fail(errno, "cannot write endpoint rule %u: %s%s", e->r.id, strerror(errno),
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
		return old;	/* published_fd() said why */
	while (bpf_map_get_next_key(old, prev, &next) == 0) {
		if (SPACE_OF(next.class) == space && bpf_map_lookup_elem(old, &next, &r) == 0 &&
		    bpf_map_update_elem(fd, &next, &r, BPF_ANY)) {
			err = fail(errno, "cannot copy the endpoint rules: %s", strerror(errno));
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
			return fd;	/* published_fd() said why */
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
					return fail(ENOMEM, "out of memory");
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

/* A class: the sorted indices (into the endpoint rules) that cover a slot. */
struct class {
	size_t n;
	size_t *idx;
};

/*
 * The class of every slot, in vals; the classes' entries into the tries
 * (trie NULL: only count, in best_of[i], the classes in which endpoint rule i
 * is written: a rule written in several has its ep_multi set, for the
 * hot-key cache, which keys its entries by class).
 */
static int build_classes(const struct xrl_rule_entry **ep, size_t nep, __u32 space,
			 __u32 *vals, const int *trie, unsigned *best_of)
{
	__u32 *cut = malloc((nep * 6 + 2) * sizeof(*cut));
	struct class *cls = NULL;
	size_t ncut = 0, ncls = 0, *cur = malloc((nep + 1) * sizeof(*cur));
	int err = 0;

	if (!cut || !cur) {
		err = fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nep; i++) {
		__u32 lo[3], hi[3];
		int k = rule_ranges(&ep[i]->r, lo, hi);

		for (int j = 0; j < k; j++) {
			cut[ncut++] = lo[j];
			cut[ncut++] = hi[j] + 1;
		}
	}
	/* sort the cuts: between two of them every slot has the same rules */
	for (size_t i = 1; i < ncut; i++)
		for (size_t j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
			__u32 t = cut[j];

			cut[j] = cut[j - 1];
			cut[j - 1] = t;
		}
	for (size_t s = 0; s + 1 < ncut; s++) {
		__u32 a = cut[s], b = cut[s + 1], id = 0;
		size_t m = 0, c;

		if (a == b)
			continue;
		for (size_t i = 0; i < nep; i++) {
			__u32 lo[3], hi[3];
			int k = rule_ranges(&ep[i]->r, lo, hi);

			for (int j = 0; j < k; j++)
				if (lo[j] <= a && a <= hi[j]) {
					cur[m++] = i;
					break;
				}
		}
		if (!m)
			continue;
		for (c = 0; c < ncls; c++)
			if (cls[c].n == m && !memcmp(cls[c].idx, cur, m * sizeof(*cur)))
				break;
		if (c == ncls) {	/* a new class: its entries into the tries */
			void *nv = realloc(cls, (ncls + 1) * sizeof(*cls));

			if (!nv || !(((struct class *)nv)[ncls].idx = malloc(m * sizeof(*cur)))) {
				cls = nv ? nv : cls;
				err = fail(ENOMEM, "out of memory");
				goto out;
			}
			cls = nv;
			cls[ncls].n = m;
			memcpy(cls[ncls].idx, cur, m * sizeof(*cur));
			ncls++;
			id = space << XRL_EP_SPACE_SHIFT | (__u32)ncls;
			for (size_t i = 0; i < m; i++) {
				const struct xrl_rule_entry *e = ep[cur[i]];
				bool best = true;

				/* the most specific by port of those with its prefix */
				for (size_t j = 0; j < m && best; j++) {
					const struct xrl_rule_entry *o = ep[cur[j]];

					if (j != i && o->family == e->family && o->prefix_len == e->prefix_len &&
					    !memcmp(o->addr, e->addr, 16) && port_narrower(&o->r, &e->r))
						best = false;
				}
				if (best && !trie) {
					best_of[cur[i]]++;
				} else if (best) {
					struct xrl_rule_entry w = *e;

					w.r.ep_multi = best_of[cur[i]] > 1;
					if ((err = trie_put(trie[e->family == 6], &w, id)))
						goto out;
				}
			}
		}
		id = space << XRL_EP_SPACE_SHIFT | (__u32)(c + 1);
		for (__u32 slot = a; slot < b && slot < XRL_EP_SPACE_SLOT; slot++)
			vals[slot] = id;
	}
out:
	for (size_t c = 0; c < ncls; c++)
		free(cls[c].idx);
	free(cls);
	free(cut);
	free(cur);
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
	size_t nep = 0;
	int err = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);

	if (!ep)
		return fail(ENOMEM, "out of memory");
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
		err = fail(ENOMEM, "out of memory");
		goto out;
	}
	for (int f = 0; f < 2; f++) {
		b.trie[f] = trie_create(f ? 6 : 4);
		if (b.trie[f] < 0) {
			err = fail(b.trie[f], "cannot create an endpoint rule set: %s", strerror(-b.trie[f]));
			goto out;
		}
		if ((err = copy_space(x, f ? 6 : 4, old, b.trie[f])))
			goto out;
	}
	for (size_t i = 0; i < nep; i++)	/* the list, to read them back */
		if ((err = trie_put(b.trie[ep[i]->family == 6], ep[i],
				    XRL_EP_LIST | space << XRL_EP_SPACE_SHIFT | (__u32)i)))
			goto out;
	best = calloc(nep ? nep : 1, sizeof(*best));
	if (!best) {
		err = fail(ENOMEM, "out of memory");
		goto out;
	}
	if ((err = build_classes(ep, nep, space, b.vals, NULL, best)) ||
	    (err = build_classes(ep, nep, space, b.vals, b.trie, best)))
		goto out;
	b.vals[XRL_EP_SPACE_SLOT] = space;
	b.array = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrl_ep_class_set", sizeof(__u32),
				 sizeof(__u32), XRL_EP_SLOTS, NULL);
	if (b.array < 0) {
		err = fail(errno, "cannot create the endpoint classes: %s", strerror(errno));
		goto out;
	}
	for (__u32 i = 0; i < XRL_EP_SLOTS; i++)
		keys[i] = i;
	if (bpf_map_update_batch(b.array, keys, b.vals, &count, &bo)) {
		err = fail(errno, "cannot write the endpoint classes: %s", strerror(errno));
		goto out;
	}
	/* publish: the tries, then the array (see xdp_rl_common.h) */
	if ((err = publish_set(x, M_EP4, b.trie[0])) || (err = publish_set(x, M_EP6, b.trie[1])) ||
	    (err = publish_set(x, M_EP_CLASS, b.array)))
		err = fail(err, "cannot publish the endpoint rules: %s", strerror(-err));
out:
	ep_close(&b);
	free(best);
	free(keys);
	free(ep);
	return err;
}

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

/* Half the trie (model/epclass.h says why). */
#define EP_SET_ENTRIES	XRL_EP_SET_ENTRIES

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
	__u32 old, space, count;
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
			err = xrl__ep_limit(ep, nep, over);
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
	/* only the slots of a class: the new array holds zeros (no class)
	 * elsewhere already, and writing all 196,865 cost a commit ~50 ms */
	count = 0;
	for (__u32 i = 0; i < XRL_EP_SLOTS; i++)
		if (b.vals[i]) {
			keys[count] = i;
			b.vals[count++] = b.vals[i];
		}
	if (count && bpf_map_update_batch(b.array, keys, b.vals, &count, &bo)) {
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

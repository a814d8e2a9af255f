// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the published rule set read back: every rule, the rule that
 * matches an address, the endpoint rules that cover one.
 */
#include "maps/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read every rule of one trie, appending to *v. */
static int read_trie(int fd, int family, struct xrl_rule_entry **v, size_t *n,
		     size_t *cap)
{
	struct xrl_lpm6_key key, next;	/* large enough for both */
	void *prev = NULL;
	int alen = family == 6 ? 16 : 4;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct xrl_rule_entry *e;

		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			void *nv = realloc(*v, nc * sizeof(**v));

			if (!nv)
				return xrl_fail(ENOMEM, "out of memory");
			*v = nv;
			*cap = nc;
		}
		e = &(*v)[*n];
		memset(e, 0, sizeof(*e));
		e->family = family;
		e->prefix_len = next.prefixlen;
		memcpy(e->addr, next.addr, alen);
		if (bpf_map_lookup_elem(fd, &next, &e->r) == 0)
			(*n)++;
		key = next;
		prev = &key;
	}
	if (errno != ENOENT)
		return xrl_fail(errno, "cannot read the rules: %s", strerror(errno));
	return 0;
}

/* Read the published rules of one family, appending to *v. */
static int read_family(struct xrl *x, int family, struct xrl_rule_entry **v,
		       size_t *n, size_t *cap)
{
	int fd = xrl__rules_fd(x, family), err;

	if (fd == -ENOENT)
		return 0;	/* nothing published: no rules */
	if (fd < 0)
		return fd;	/* xrl__published_fd() said why */
	err = read_trie(fd, family, v, n, cap);
	close(fd);
	return err;
}

static int cmp_by_id(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = a, *y = b;

	return x->r.id < y->r.id ? -1 : x->r.id > y->r.id;
}

int xrl_rules_get(struct xrl *x, struct xrl_rule_entry **out, size_t *n)
{
	struct xrl_rule_entry *v = NULL;
	size_t cap = 0;
	int err;

	*n = 0;
	err = read_family(x, 4, &v, n, &cap);
	if (!err)
		err = read_family(x, 6, &v, n, &cap);
	if (!err)
		err = xrl__endpoints_read(x, &v, n, &cap);
	if (!err)
		err = xrl__set_rules_read(x, &v, n, &cap);
	if (err) {
		free(v);
		return err;
	}
	xrl_sort(v, *n, sizeof(*v), cmp_by_id);
	*out = v;
	return 0;
}

int xrl_rule_match(struct xrl *x, int family, const __u8 *addr,
		   struct xrl_rule_entry *out)
{
	struct xrl_lpm6_key k = { .prefixlen = family == 6 ? 128 : 32 };
	struct xrl_rule_entry *v = NULL;
	size_t n = 0, cap = 0;
	int fd, err;

	memcpy(k.addr, addr, family == 6 ? 16 : 4);
	memset(out, 0, sizeof(*out));
	/* the set rules first, as the data path checks them */
	err = xrl__set_rule_match(x, family, addr, out);
	if (err != -ENOENT)
		return err;
	fd = xrl__rules_fd(x, family);
	if (fd < 0)
		return fd;	/* -ENOENT: none; else xrl__published_fd() said why */
	if (bpf_map_lookup_elem(fd, &k, &out->r)) {
		close(fd);
		return -ENOENT;
	}
	/* the trie gives the value, not the prefix that matched: find it in
	 * the same trie */
	err = read_trie(fd, family, &v, &n, &cap);
	close(fd);
	if (err) {
		free(v);
		return err;
	}
	err = -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.slot == out->r.slot && v[i].r.gen == out->r.gen) {
			*out = v[i];
			err = 0;
			break;
		}
	}
	free(v);
	return err;
}

int xrl_endpoint_rules_covering(struct xrl *x, int family, const __u8 *addr,
				struct xrl_rule_entry **out, size_t *n)
{
	int bytes = family == 6 ? 16 : 4;
	struct xrl_rule_entry *v;
	size_t m, k = 0;
	int err = xrl_rules_get(x, &v, &m);

	if (err)
		return err;
	for (size_t i = 0; i < m; i++) {
		bool in = v[i].r.ep && v[i].r.action == XRL_ACT_LIMIT && v[i].family == family;
		__u8 mask[16] = {};

		xrl__mask_bits(mask, v[i].prefix_len, bytes);
		for (int b = 0; in && b < bytes; b++)
			in = (addr[b] & mask[b]) == v[i].addr[b];
		if (in)
			v[k++] = v[i];
	}
	*out = v;
	*n = k;
	return 0;
}

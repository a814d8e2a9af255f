// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the rules that take a named set (xdp_rl_common.h), part of the
 * rule commit: their sets resolved to slots, one array of them built and
 * published with one update (allow rules first, then by id; an IPv4 and an
 * IPv6 copy of each), and read back.
 */
#include "maps/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_set_rule(const void *a, const void *b)
{
	const struct xrl_rule *x = a, *y = b;
	int ax = x->action == XRL_ACT_ALLOW, ay = y->action == XRL_ACT_ALLOW;

	if (ax != ay)
		return ay - ax;	/* allow first */
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Resolve each set rule's name to its slot (r.set), before the commit
 * compares rules with the published ones. Then build the array of set
 * rules (ids assigned, slots given) and publish it: order them (allow first, then by id), an
 * IPv4 copy keyed by the rule's per /LEN and an IPv6 copy keyed by /64.
 */
int xrl__set_rules_resolve(struct xrl *x, struct xrl_rule_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int slot;

		if (!xrl_rule_is_set(&v[i]))
			continue;
		slot = xrl__set_slot(x, v[i].set);
		if (slot < 0)
			return slot;
		v[i].r.set = slot + 1;
	}
	return 0;
}

int xrl__set_rules_commit(struct xrl *x, const struct xrl_rule_entry *v, size_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct xrl_rule r4[XRL_MAX_SET_RULES];
	size_t k = 0;
	int fd, err = 0;

	for (size_t i = 0; i < n; i++) {
		if (!xrl_rule_is_set(&v[i]))
			continue;
		if (k == XRL_MAX_SET_RULES)
			return xrl_fail(ENOSPC, "too many set rules: at most %d", XRL_MAX_SET_RULES);
		r4[k++] = v[i].r;
	}
	if (!k) {
		__u32 zero = 0;

		/* none: nothing to walk (two look-ups a packet) */
		if (bpf_map_delete_elem(x->map_fd[M_SET_RULES], &zero) && errno != ENOENT)
			return xrl_fail(errno, "cannot publish the set rules: %s", strerror(errno));
		return 0;
	}
	qsort(r4, k, sizeof(r4[0]), cmp_set_rule);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrl_set_rules", sizeof(__u32), sizeof(struct xrl_rule),
			    2 * XRL_MAX_SET_RULES, &o);
	if (fd < 0)
		return xrl_fail(errno, "cannot create the set rules: %s", strerror(errno));
	for (__u32 i = 0; i < k && !err; i++) {
		struct xrl_rule r6 = r4[i];
		__u32 i6 = XRL_MAX_SET_RULES + i;
		__u8 mask[16] = {};

		r6.key_len = 64;
		xrl__mask_bits(mask, 64, 16);
		memcpy(r6.key_mask, mask, sizeof(mask));
		if (bpf_map_update_elem(fd, &i, &r4[i], BPF_ANY) || bpf_map_update_elem(fd, &i6, &r6, BPF_ANY))
			err = xrl_fail(errno, "cannot write the set rules: %s", strerror(errno));
	}
	if (!err)
		err = xrl__publish_set(x, M_SET_RULES, fd);
	close(fd);
	return err;
}

/* The set rules, read back (the IPv4 copies), appended to *v. */
int xrl__set_rules_read(struct xrl *x, struct xrl_rule_entry **v, size_t *n, size_t *cap)
{
	int fd = xrl__published_fd(x, M_SET_RULES);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	for (__u32 k = 0; k < XRL_MAX_SET_RULES; k++) {
		struct xrl_rule_entry *e;
		struct xrl_rule r;

		if (bpf_map_lookup_elem(fd, &k, &r) || !r.id)
			break;
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
		e = &(*v)[(*n)++];
		memset(e, 0, sizeof(*e));
		e->r = r;
		xrl__set_name(x, r.set - 1, e->set, sizeof(e->set));
	}
	close(fd);
	return 0;
}

int xrl__set_rule_match(struct xrl *x, int family, const __u8 *addr, struct xrl_rule_entry *out)
{
	int fd = xrl__published_fd(x, M_SET_RULES), err = -ENOENT;
	__u32 base = family == 6 ? XRL_MAX_SET_RULES : 0;

	if (fd < 0)
		return fd;	/* -ENOENT: no set rule */
	for (__u32 k = 0; k < XRL_MAX_SET_RULES; k++) {
		__u32 idx = base + k;
		struct xrl_rule r;

		if (bpf_map_lookup_elem(fd, &idx, &r) || !r.id)
			break;
		if (r.set && xrl__set_holds(x, r.set - 1, family, addr)) {
			memset(out, 0, sizeof(*out));
			out->r = r;	/* the family's copy: its key mask */
			xrl__set_name(x, r.set - 1, out->set, sizeof(out->set));
			err = 0;
			break;
		}
	}
	close(fd);
	return err;
}


/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: named sets (sets.c; docs/sets.md). Every change
 * voids the hot-key cache (a cached drop may rest on the old set).
 */
#ifndef XRL_MAPS_SETS_H
#define XRL_MAPS_SETS_H

#include <stddef.h>
#include "xdp_rl_common.h"
#include "model/setfile.h"

struct xrl;

struct xrl_set_view {
	__u32 slot;
	char name[XRL_SET_NAME_MAX + 1];
	__u64 timeout_ns;	/* the default timeout; 0: none */
	__u32 count;		/* elements */
	__u64 mem_bytes;	/* the trie's memory, as the kernel counts it */
	__u32 rules;		/* rules that take it */
};

/* Create an empty set (-EEXIST: there is one of that name). */
int xrl_set_create(struct xrl *x, const char *name, __u64 timeout_ns);
/* Add elements to a set in place, each with its own timeout, else
 * timeout_ns, else the set's default (0: none). */
int xrl_set_add(struct xrl *x, const char *name, const struct xrl_set_list *l, __u64 timeout_ns);
/* Delete elements (exact prefixes): -ENOENT for one not in the set. */
int xrl_set_del_elems(struct xrl *x, const char *name, const struct xrl_set_list *l);
/* Remove a set; refused while a rule takes it. */
int xrl_set_destroy(struct xrl *x, const char *name);
/* Replace a set's elements by l, in one swap: a packet sees the old set or
 * the new one. Creates the set when missing. *secs: the time it took. */
int xrl_set_load(struct xrl *x, const char *name, const struct xrl_set_list *l, double *secs);
int xrl_set_flush(struct xrl *x, const char *name);
/* Every set (malloc'd, free it), by name. */
int xrl_sets_list(struct xrl *x, struct xrl_set_view **out, size_t *n);
int xrl_set_get(struct xrl *x, const char *name, struct xrl_set_view *out);
/* A set's elements, timeout_ns: the time left (0: none). Expired ones are
 * swept first. */
int xrl_set_elems(struct xrl *x, const char *name, struct xrl_set_list *out);
/* Delete the expired elements of every set due for it; how many. */
int xrl_sets_sweep(struct xrl *x);

#endif

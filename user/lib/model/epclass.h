/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (epclass.c): the port classes of a set's endpoint
 * rules, computed without touching a map.
 */
#ifndef XRL_MODEL_EPCLASS_H
#define XRL_MODEL_EPCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include "model/rule.h"

/*
 * Per address family, the entries one rule set may write into its trie:
 * the list of its endpoint rules and one entry per class and prefix. Half
 * the trie: a commit builds the new set beside the published one in one
 * trie (xrl__endpoints_commit()), so any set within it fits over any other,
 * and a reload never fails for the size of the set it replaces.
 */
#define XRL_EP_SET_ENTRIES	(XRL_EP_ENTRIES / 2)

/* The endpoint classes of ep: cls[slot] the class number (from 1, in the
 * order of the slots; 0: no endpoint rule) of each slot below
 * XRL_EP_SPACE_SLOT, and what each class writes into the tries (per prefix
 * among its rules, the most specific by port), in class order. -E2BIG (no
 * message) with *over the family when a family's list and entries would
 * exceed max_per_family. No map is touched. */
struct xrl_ep_entry {
	__u32 cls;	/* class number */
	__u32 rule;	/* index into ep */
};
/* The class-array slots an endpoint rule covers (up to three ranges), and
 * which of two rules of one prefix is the more specific by port. */
int xrl__ep_rule_ranges(const struct xrl_rule *r, __u32 lo[3], __u32 hi[3]);
bool xrl__ep_narrower(const struct xrl_rule *a, const struct xrl_rule *b);
int xrl__ep_classes(const struct xrl_rule_entry *const *ep, size_t nep, __u32 *cls,
		    struct xrl_ep_entry **out, size_t *nout, size_t max_per_family, int *over);
/* The error (E2BIG, with xrl_errmsg() saying it) of a set whose family
 * family needs more than XRL_EP_SET_ENTRIES entries. */
int xrl__ep_limit(const struct xrl_rule_entry *const *ep, size_t nep, int family);
/* The set's endpoint rules against the limit of their tries; on failure
 * *bad is the index of the rule it is blamed on. */
int xrl__endpoints_check(const struct xrl_rule_entry *v, size_t n, size_t *bad);

#endif

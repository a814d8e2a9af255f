/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: the active rule set read (ruleset.c) and replaced
 * in one transaction (rules.c). struct xrl_rule_entry is the model's.
 */
#ifndef XRL_MAPS_RULES_H
#define XRL_MAPS_RULES_H

#include <stddef.h>
#include "xdp_rl_common.h"

struct xrl;
struct xrl_rule_entry;

/* The active rule set, sorted by id. Free *out with free(). */
int xrl_rules_get(struct xrl *x, struct xrl_rule_entry **out, size_t *n);

/* Replace the whole rule set in one transaction: packets see the old set or
 * the new one, never a mix. Rules that did not change keep their buckets
 * and counters. Ids of 0 are assigned. On failure nothing changed. */
int xrl_rules_commit(struct xrl *x, struct xrl_rule_entry *v, size_t n);

/* The active rule matching a source address: the first set rule whose set
 * holds it, else the most specific prefix. */
int xrl_rule_match(struct xrl *x, int family, const __u8 *addr,
		   struct xrl_rule_entry *out);
/* The endpoint rules of action limit whose prefix covers a source address:
 * each may hold a key of it (which one meters a packet depends on its
 * protocol and port). *out is malloc'd (free it), ordered by id. */
int xrl_endpoint_rules_covering(struct xrl *x, int family, const __u8 *addr,
				struct xrl_rule_entry **out, size_t *n);

#endif

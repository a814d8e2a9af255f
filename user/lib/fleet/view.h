/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fleet-wide limits as the CLI shows them (fleet_map.c): what the daemon
 * wrote into the maps, read back. Needs no Redis client: the CLI builds
 * without hiredis.
 */
#ifndef XRL_FLEET_VIEW_H
#define XRL_FLEET_VIEW_H

#include <stdio.h>
#include "xdp_rl_common.h"

struct xrl;
struct jw;

/* What the daemon last wrote for the rule in this slot (status, stats):
 * 0, or -ENOENT when nothing was. */
int xrl_fleet_rule_get(struct xrl *x, __u32 slot, struct xrl_fleet_rule *out);
const char *xrl_fleet_state_name(__u32 state);
/* Each fleet rule's state, live hosts, last sync's age and latency and
 * promoted keys: a "fleet" array of JSON, or one line per rule. */
void xrl_fleet_json(struct jw *w, struct xrl *x);
void xrl_fleet_print(FILE *f, struct xrl *x);

#endif

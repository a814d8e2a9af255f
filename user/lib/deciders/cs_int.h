/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the deciders, inside: how the CrowdSec follower writes bans
 * (cs_apply.c, on the map layer's ban table). Not part of the API.
 */
#ifndef XRL_DECIDERS_CS_INT_H
#define XRL_DECIDERS_CS_INT_H

#include "deciders/crowdsec.h"

#define XRL_CS_WHO	"crowdsec"	/* the decider's name on its bans */

/* The ban of decision d (origin decider "crowdsec", reason its scenario):
 * 0 set; 1 kept: a ban of another origin there ends later (or never);
 * -ENOSPC: the table is full; another negative errno. */
int xrl__cs_ban(struct xrl *x, const struct xrl_cs_decision *d);
/* Lift the ban of a deleted decision: 0 lifted; 1 kept: the ban there is
 * not crowdsec's; -ENOENT: none there. */
int xrl__cs_unban(struct xrl *x, const struct xrl_cs_decision *d);
/* After a full pull: lift every crowdsec ban whose prefix is not among
 * the n bans of v (the LAPI no longer has it); *lifted counts them. */
int xrl__cs_reconcile(struct xrl *x, const struct xrl_cs_decision *v, size_t n, unsigned long long *lifted);

#endif

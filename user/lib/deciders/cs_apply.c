// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the deciders: CrowdSec's decisions written as bans (cs_int.h),
 * on the map layer's ban table. A decision's ban is a decider's, named
 * "crowdsec", for the decision's time left rounded up to the second, its
 * scenario as the reason. It never shortens or takes over a ban of
 * another origin that ends later (an operator's ban until deleted stays
 * the operator's), and a delete lifts only crowdsec's own.
 */
#include "deciders/cs_int.h"
#include "base/log.h"
#include "maps/bans.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void spec_of(const struct xrl_cs_decision *d, struct xrl_ban_spec *s)
{
	long long secs = (d->ms + 999) / 1000;
	size_t o = 0;

	memset(s, 0, sizeof(*s));
	s->family = d->family;
	s->prefix_len = d->prefix_len;
	memcpy(s->addr, d->addr, sizeof(s->addr));
	s->duration_s = secs < 1 ? 1 : secs > XRL_BAN_MAX_S ? XRL_BAN_MAX_S : (__u64)secs;
	s->origin = XRL_BAN_DECIDER;
	snprintf(s->who, sizeof(s->who), "%s", XRL_CS_WHO);
	/* the reason is printable ASCII: the scenario's other bytes as '?' */
	for (const char *c = d->scenario; *c && o + 1 < sizeof(s->reason); c++)
		s->reason[o++] = *c >= ' ' && *c <= '~' ? *c : '?';
	s->reason[o] = '\0';
}

static bool ours(const struct xrl_ban *b)
{
	return b->origin == XRL_BAN_DECIDER && !strncmp(b->who, XRL_CS_WHO, sizeof(b->who));
}

int xrl__cs_ban(struct xrl *x, const struct xrl_cs_decision *d)
{
	struct xrl_ban_spec s;
	bool replaced;

	spec_of(d, &s);
	/* 1: another origin's ban ending later (or never) is kept (ban_add) */
	return xrl_ban_add_nosweep(x, &s, &replaced);
}

int xrl__cs_unban(struct xrl *x, const struct xrl_cs_decision *d)
{
	int err = xrl_ban_del_nosweep(x, d->family, d->addr, d->prefix_len, XRL_CS_WHO);

	if (err == -EPERM)
		return 1;
	return err;
}

static int cmp_prefix(const void *a, const void *b)
{
	const struct xrl_cs_decision *x = a, *y = b;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len - y->prefix_len;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

int xrl__cs_reconcile(struct xrl *x, const struct xrl_cs_decision *v, size_t n, unsigned long long *lifted)
{
	struct xrl_cs_decision *live = malloc((n ?: 1) * sizeof(*live));
	struct xrl_ban_entry *bans = NULL;
	size_t nlive = 0, nbans = 0;
	int err;

	*lifted = 0;
	if (!live)
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (!v[i].deleted && v[i].ms > 0)
			live[nlive++] = v[i];
	if (nlive > 1)
		qsort(live, nlive, sizeof(*live), cmp_prefix);
	err = xrl_bans_get(x, &bans, &nbans);
	if (err)
		goto cleanup;
	for (size_t i = 0; i < nbans; i++) {
		struct xrl_cs_decision key = { .family = bans[i].family, .prefix_len = bans[i].prefix_len };

		if (bans[i].ended || !ours(&bans[i].b))
			continue;
		memcpy(key.addr, bans[i].addr, sizeof(key.addr));
		if (nlive && bsearch(&key, live, nlive, sizeof(*live), cmp_prefix))
			continue;
		if (!xrl_ban_del_nosweep(x, key.family, key.addr, key.prefix_len, XRL_CS_WHO))
			(*lifted)++;
	}
cleanup:
	free(bans);
	free(live);
	return err;
}

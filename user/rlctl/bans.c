// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: ban add, ban del, ban list, ban flush. */
#include "rlctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ban_prefix(const struct xrl_ban_entry *e, char *buf, size_t len)
{
	struct xrl_rule_entry p = { .family = e->family, .prefix_len = e->prefix_len };

	memcpy(p.addr, e->addr, sizeof(p.addr));
	xrl_prefix_format(&p, buf, len);
}

static void spec_prefix(const struct xrl_ban_spec *s, char *buf, size_t len)
{
	struct xrl_rule_entry p = { .family = s->family, .prefix_len = s->prefix_len };

	memcpy(p.addr, s->addr, sizeof(p.addr));
	xrl_prefix_format(&p, buf, len);
}

/* One ban as ban list -j and ban add -j show it. */
static void ban_json(const struct xrl_ban_entry *e)
{
	char pfx[64], by[40];

	ban_prefix(e, pfx, sizeof(pfx));
	xrl_ban_by_format(&e->b, by, sizeof(by));
	jw_kstr(&jw, "prefix", pfx);
	jw_kstr(&jw, "origin", xrl_ban_origin_name(e->b.origin));
	jw_kstr(&jw, "by", by);
	jw_key(&jw, "rule");
	if (e->b.origin == XRL_BAN_RULE)
		jw_u64(&jw, e->b.rule_id);
	else
		jw_null(&jw);
	jw_key(&jw, "decider");
	if (e->b.origin == XRL_BAN_DECIDER)
		jw_str(&jw, e->b.who);
	else
		jw_null(&jw);
	jw_kstr(&jw, "reason", e->b.reason);
	/* null: until ban del */
	jw_key(&jw, "left_ms");
	if (e->b.expires_ns)
		jw_u64(&jw, (e->left_ns + 999999) / 1000000);
	else
		jw_null(&jw);
	jw_ku64(&jw, "dropped_packets", e->b.dropped);
	jw_key(&jw, "level");
	if (e->b.origin == XRL_BAN_RULE)
		jw_u64(&jw, e->b.level);
	else
		jw_null(&jw);
}

int do_ban_add(struct xrl_cmd *c)
{
	struct xrl_ban_entry e;
	char pfx[64], d[32];
	bool replaced = false, kept;
	struct xrl *x;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	err = xrl_ban_add(x, &c->ban, &replaced);
	kept = err == 1;	/* a decider's: another origin's longer ban stays */
	if (kept)
		err = 0;
	if (!err && (err = xrl_ban_get(x, c->ban.family, c->ban.addr, c->ban.prefix_len, &e)))
		set_err("%s", xrl_errmsg());
	if (end_write(x, err)) {
		xrl_close(x);
		return 1;
	}
	spec_prefix(&c->ban, pfx, sizeof(pfx));
	if (opt.json) {
		jw_obj_start(&jw);
		ban_json(&e);
		jw_kbool(&jw, "replaced", replaced);
		jw_kbool(&jw, "kept", kept);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else if (kept) {
		char by[40];

		xrl_ban_by_format(&e.b, by, sizeof(by));
		printf("kept the ban of %s by %s: it ends later, or never\n", pfx, by);
	} else {
		xrl_duration_format(c->ban.duration_s, d, sizeof(d));
		printf("%s %s%s%s\n", replaced ? "banned again" : "banned", pfx,
		       c->ban.duration_s ? " for " : " until ban del", c->ban.duration_s ? d : "");
	}
	xrl_close(x);
	return 0;
}

int do_ban_del(struct xrl_cmd *c)
{
	char pfx[64];
	struct xrl *x;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	err = xrl_ban_del(x, c->ban.family, c->ban.addr, c->ban.prefix_len,
			  c->ban.who[0] ? c->ban.who : NULL);
	if (end_write(x, err)) {
		xrl_close(x);
		return 1;
	}
	spec_prefix(&c->ban, pfx, sizeof(pfx));
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "unbanned", pfx);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("unbanned %s\n", pfx);
	}
	xrl_close(x);
	return 0;
}

int do_ban_flush(struct xrl_cmd *c)
{
	struct xrl *x;
	size_t n = 0;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	err = xrl_ban_flush(x, c->ban.who[0] ? XRL_BAN_DECIDER : 0,
			    c->ban.who[0] ? c->ban.who : NULL, &n);
	if (end_write(x, err)) {
		xrl_close(x);
		return 1;
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_ku64(&jw, "unbanned", n);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("unbanned %zu prefix%s\n", n, n == 1 ? "" : "es");
	}
	xrl_close(x);
	return 0;
}

/* A reader: the live bans (one past its end no longer matches: left out,
 * as the data path leaves it out; the next writer reclaims it). */
int do_ban_list(struct xrl_cmd *c)
{
	struct xrl_ban_entry *v = NULL;
	struct xrl *x;
	size_t n = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	if (xrl_bans_get(x, &v, &n)) {
		p_err("%s", xrl_errmsg());
		xrl_close(x);
		return 1;
	}
	if (opt.json)
		jw_arr_start(&jw);
	else
		printf("%-43s %-16s %-10s %12s  %s\n", "PREFIX", "BY", "LEFT", "DROPPED", "REASON");
	for (size_t i = 0; i < n; i++) {
		char pfx[64], by[40], left[32];

		if (v[i].ended)
			continue;
		if (opt.json) {
			jw_obj_start(&jw);
			ban_json(&v[i]);
			jw_obj_end(&jw);
			continue;
		}
		ban_prefix(&v[i], pfx, sizeof(pfx));
		xrl_ban_by_format(&v[i].b, by, sizeof(by));
		if (v[i].b.expires_ns)
			xrl_left_format(v[i].left_ns, left, sizeof(left));
		else
			snprintf(left, sizeof(left), "-");
		printf("%-43s %-16s %-10s %12llu  %s\n", pfx, by, left,
		       (unsigned long long)v[i].b.dropped, v[i].b.reason);
	}
	if (opt.json) {
		jw_arr_end(&jw);
		jw_finish(&jw);
	}
	free(v);
	xrl_close(x);
	return 0;
}

/* status: each family's table, entries (ended ones not yet reclaimed
 * included) of its size, and the bans refused because one was full. */
void status_bans_text(struct xrl *x)
{
	struct xrl_ban_totals t = {};
	__u32 n4 = 0, c4 = 0, n6 = 0, c6 = 0;

	xrl_bans_fill(x, 4, &n4, &c4);
	xrl_bans_fill(x, 6, &n6, &c6);
	xrl_ban_totals_get(x, &t);
	printf("bans:        IPv4 %u / %u, IPv6 %u / %u capacity; %llu refused (table full)\n",
	       n4, c4, n6, c6, (unsigned long long)t.refused_full);
}

/* stats: the bans' counters, by origin */
void stats_bans_text(struct xrl *x)
{
	struct xrl_ban_totals t = {};
	struct xrl_ban_stats s = {};

	xrl_ban_totals_get(x, &t);
	xrl_ban_stats_get(x, &s);
	printf("bans: dropped %llu packets (%llu would-drop, %llu allowed past a rule's ban); "
	       "%llu refused (table full), %llu rules' refused (rules hold %llu), %llu would-bans, %llu offences\n",
	       (unsigned long long)s.dropped_packets, (unsigned long long)s.would_drop_packets,
	       (unsigned long long)s.allowed_packets, (unsigned long long)t.refused_full,
	       (unsigned long long)t.refused_reserve, (unsigned long long)t.rule_bans_max,
	       (unsigned long long)t.would_ban, (unsigned long long)t.offences);
	for (__u32 o = XRL_BAN_RULE; o < XRL_BAN_ORIGINS; o++)
		printf("  %-9s set %llu, expired %llu, deleted %llu\n", xrl_ban_origin_name(o),
		       (unsigned long long)t.set[o], (unsigned long long)t.expired[o],
		       (unsigned long long)t.deleted[o]);
}

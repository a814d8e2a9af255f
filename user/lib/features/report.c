// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the objects of status, stats and top, read and written as JSON
 * (report.h): one writer for `xdp-rlctl -j` and the daemon's /api/v1/.
 */
#include "maps/internal.h"
#include "features/report.h"
#include "fleet/view.h"
#include "text/rulefmt.h"
#include "model/addr.h"
#include "model/units.h"
#include "model/words.h"
#include "model/ban.h"
#include "maps/bans.h"
#include "maps/sets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- status ---- */

int xrl_status_read(struct xrl *x, __u32 sample_ms, struct xrl_status *st)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct xrl_prog_runtime *rt = &st->rt;
	int err;

	memset(st, 0, sizeof(*st));
	/* the named sets: prefixes and memory (best effort: status still
	 * says the rest) */
	{
		struct xrl_set_view *sv = NULL;
		size_t nsets = 0;

		if (xrl_sets_list(x, &sv, &nsets) == 0) {
			st->nsets = nsets;
			for (size_t i = 0; i < nsets; i++) {
				st->set_pfx += sv[i].count;
				st->set_mem += sv[i].mem_bytes;
			}
			free(sv);
		}
	}
	/* each family has its own table: tracked and capacity per family */
	if ((err = xrl_attachments(x, &st->att, &st->natt)) ||
	    (err = xrl_keys_tracked_family(x, 4, &st->keys4)) ||
	    (err = xrl_keys_tracked_family(x, 6, &st->keys6)) ||
	    (err = xrl_prog_runtime_get(x, true, rt)) || (err = xrl_build_info(x, &st->build)) ||
	    (err = xrl_global_stats_get(x, &st->global)))
		return err;
	bpf_obj_get_info_by_fd(xrl_prog_fd(x), &info, &len);
	st->prog_id = info.id;
	/* the daemon's state as it is now, before the run-time sample below */
	st->hb_age = xrl_heartbeat_age(x);
	st->heartbeating = xrl_heartbeating(x);
	st->watchdog_ns = xrl_control(x)->watchdog_ns;
	/* over the runs counted: a figure only while the kernel counts them,
	 * never a stale or empty one */
	st->ns_pkt = rt->run_cnt ? (rt->run_time_ns + rt->run_cnt / 2) / rt->run_cnt : 0;
	/* what a packet costs now: the counters' difference over a short
	 * sample (the lifetime average keeps every past phase in it) */
	if (rt->enabled && sample_ms) {
		struct timespec ts = { sample_ms / 1000, (sample_ms % 1000) * 1000000L };
		struct xrl_prog_runtime rt1;

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		if (!xrl_prog_runtime_get(x, false, &rt1) && rt1.run_cnt >= rt->run_cnt) {
			st->win_runs = rt1.run_cnt - rt->run_cnt;
			st->win_ns = rt1.run_time_ns - rt->run_time_ns;
			st->sampled = true;
			st->sample_ms = sample_ms;
		}
	}
	st->win_pkt = st->win_runs ? (st->win_ns + st->win_runs / 2) / st->win_runs : 0;
	if (rt->holder_pid)
		snprintf(st->enabled_by, sizeof(st->enabled_by), "pid %d%s%s%s", rt->holder_pid,
			 rt->holder_comm[0] ? " (" : "", rt->holder_comm, rt->holder_comm[0] ? ")" : "");
	else
		snprintf(st->enabled_by, sizeof(st->enabled_by), "the sysctl kernel.bpf_stats_enabled");
	return 0;
}

/* the ban tables' fill and size, refusals */
static void status_bans_json(struct jw *w, struct xrl *x)
{
	struct xrl_ban_totals t = {};
	__u32 n4 = 0, c4 = 0, n6 = 0, c6 = 0;

	xrl_bans_fill(x, 4, &n4, &c4);
	xrl_bans_fill(x, 6, &n6, &c6);
	xrl_ban_totals_get(x, &t);
	jw_key(w, "bans");
	jw_obj_start(w);
	jw_ku64(w, "ipv4", n4);
	jw_ku64(w, "ipv6", n6);
	jw_obj_end(w);
	jw_key(w, "bans_capacity");
	jw_obj_start(w);
	jw_ku64(w, "ipv4", c4);
	jw_ku64(w, "ipv6", c6);
	jw_obj_end(w);
	jw_ku64(w, "bans_refused_full", t.refused_full);
}

void xrl_status_json(struct jw *w, struct xrl *x, const struct xrl_status *st)
{
	const struct xrl_prog_runtime *rt = &st->rt;
	long long hb_age = st->hb_age;
	__u64 wd = st->watchdog_ns;

	jw_obj_start(w);
	jw_kstr(w, "pin_dir", xrl_pin_dir(x));
	jw_ku64(w, "prog_id", st->prog_id);
	jw_kstr(w, "build", st->build.build);
	jw_ku64(w, "layout", st->build.layout);
	jw_kstr(w, "mode", xrl_mode_name(xrl_mode_get(x)));
	jw_ku64(w, "rules", xrl_control(x)->rules);
	jw_key(w, "keys_tracked");
	jw_obj_start(w);
	jw_ku64(w, "ipv4", st->keys4);
	jw_ku64(w, "ipv6", st->keys6);
	jw_obj_end(w);
	jw_key(w, "keys_capacity");
	jw_obj_start(w);
	jw_ku64(w, "ipv4", xrl_keys_capacity_family(x, 4));
	jw_ku64(w, "ipv6", xrl_keys_capacity_family(x, 6));
	jw_obj_end(w);
	jw_key(w, "sets");
	jw_obj_start(w);
	jw_ku64(w, "count", st->nsets);
	jw_ku64(w, "prefixes", st->set_pfx);
	jw_ku64(w, "memory_bytes", st->set_mem);
	jw_obj_end(w);
	jw_ku64(w, "keys_inserted", st->global.keys_inserted);
	jw_ku64(w, "keys_evicted_estimate", xrl_keys_evicted_estimate(&st->global, st->keys4 + st->keys6));
	status_bans_json(w, x);
	jw_key(w, "daemon");
	jw_obj_start(w);
	jw_kbool(w, "heartbeating", st->heartbeating);
	jw_key(w, "heartbeat_age_ms");
	if (hb_age >= 0)
		jw_u64(w, hb_age / 1000000);
	else
		jw_null(w);
	jw_ku64(w, "heartbeat_interval_ms", xrl_control(x)->heartbeat_interval_ms);
	jw_ku64(w, "watchdog_ms", wd / 1000000);
	jw_kbool(w, "watchdog_fired", hb_age >= 0 && wd && (__u64)hb_age > wd);
	jw_obj_end(w);
	xrl_fleet_json(w, x);
	jw_key(w, "program_run");
	jw_obj_start(w);
	jw_kbool(w, "stats_enabled", rt->enabled);
	jw_key(w, "enabled_by");
	if (rt->holder_pid)
		jw_u64(w, rt->holder_pid);
	else if (rt->by_sysctl)
		jw_str(w, "sysctl");
	else
		jw_null(w);
	jw_key(w, "enabled_by_command");
	if (rt->holder_comm[0])
		jw_str(w, rt->holder_comm);
	else
		jw_null(w);
	/* the kernel's switch is one for the host: while on, every BPF
	 * program is timed, whoever turned it on */
	jw_kbool(w, "global", rt->enabled);
	jw_ku64(w, "runs", rt->run_cnt);
	jw_ku64(w, "run_time_ns", rt->run_time_ns);
	/* now: over the sample taken by this call */
	jw_ku64(w, "sample_ms", st->sampled ? st->sample_ms : 0);
	jw_ku64(w, "sample_runs", st->win_runs);
	jw_ku64(w, "sample_run_time_ns", st->win_ns);
	jw_key(w, "ns_per_packet");
	if (st->sampled && st->win_runs)
		jw_u64(w, st->win_pkt);
	else
		jw_null(w);
	/* since the statistics were enabled (the pinned program's life) */
	jw_key(w, "ns_per_packet_lifetime");
	if (rt->enabled && rt->run_cnt)
		jw_u64(w, st->ns_pkt);
	else
		jw_null(w);
	jw_obj_end(w);
	jw_key(w, "interfaces");
	jw_arr_start(w);
	for (size_t i = 0; i < st->natt; i++) {
		const struct xrl_attachment *a = &st->att[i];

		jw_obj_start(w);
		jw_kstr(w, "ifname", a->ifname);
		jw_ku64(w, "ifindex", a->ifindex);
		jw_kstr(w, "hook", xrl_hook_name(a->hook));
		if (a->hook == XRL_HOOK_TC) {
			jw_key(w, "xdp_mode");
			jw_null(w);
		} else {
			jw_kstr(w, "xdp_mode", xrl_xdp_mode_name(a->mode));
		}
		jw_ku64(w, "prog_id", a->prog_id);
		jw_kbool(w, "link_up", a->ifindex != 0);
		/* at tc: a tcx link, or a clsact filter (a kernel without tcx) */
		jw_key(w, "tc_via");
		if (a->hook == XRL_HOOK_TC)
			jw_str(w, a->tc_clsact ? "clsact" : "tcx");
		else
			jw_null(w);
		/* at tc: its place in the tcx chain, and what runs first
		 * when another program was attached before it */
		jw_key(w, "tc_position");
		if (a->tc_position)
			jw_u64(w, a->tc_position);
		else
			jw_null(w);
		if (a->tc_position > 1) {
			jw_key(w, "tc_first");
			jw_obj_start(w);
			jw_ku64(w, "prog_id", a->tc_first_id);
			jw_kstr(w, "name", a->tc_first_name);
			jw_obj_end(w);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

void xrl_status_free(struct xrl_status *st)
{
	free(st->att);
	st->att = NULL;
}

/* ---- stats ---- */

bool xrl_if_shared(const struct xrl_attachment *a, size_t n, size_t i, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (size_t j = 0; j < n && l < len; j++)
		if (j != i && a[j].ifindex && a[j].ifindex % XRL_IF_SLOTS == a[i].ifindex % XRL_IF_SLOTS)
			l += snprintf(buf + l, len - l, "%s%s", l ? ", " : "", a[j].ifname);
	return l > 0;
}

int xrl_stats_read(struct xrl *x, struct xrl_stats_view *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	if ((err = xrl_rules_get(x, &s->v, &s->n)) || (err = xrl_global_stats_get(x, &s->g)) ||
	    (err = xrl_sc_table_get(x, &s->sct)))
		return err;
	if (!(s->rs = calloc(s->n + 1, sizeof(*s->rs))))
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n; i++)
		if ((err = xrl_rule_stats_get(x, s->v[i].r.slot, &s->rs[i])))
			return err;
	/* per attached interface: the verdicts on what it received */
	if ((err = xrl_attachments(x, &s->att, &s->natt)))
		return err;
	if (!(s->is = calloc(s->natt + 1, sizeof(*s->is))))
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < s->natt; i++)
		if (s->att[i].ifindex && (err = xrl_if_stats_get(x, s->att[i].ifindex, &s->is[i])))
			return err;
	return 0;
}

/* what bans did */
static void stats_bans_json(struct jw *w, struct xrl *x)
{
	struct xrl_ban_totals t = {};
	struct xrl_ban_stats s = {};

	xrl_ban_totals_get(x, &t);
	xrl_ban_stats_get(x, &s);
	jw_key(w, "bans");
	jw_obj_start(w);
	jw_ku64(w, "dropped_packets", s.dropped_packets);
	jw_ku64(w, "dropped_bytes", s.dropped_bytes);
	jw_ku64(w, "would_drop_packets", s.would_drop_packets);
	jw_ku64(w, "allowed_packets", s.allowed_packets);
	for (int k = 0; k < 3; k++) {
		const __u64 *v = k == 0 ? t.set : k == 1 ? t.expired : t.deleted;

		jw_key(w, k == 0 ? "set" : k == 1 ? "expired" : "deleted");
		jw_obj_start(w);
		for (__u32 o = XRL_BAN_RULE; o < XRL_BAN_ORIGINS; o++)
			jw_ku64(w, xrl_ban_origin_name(o), v[o]);
		jw_obj_end(w);
	}
	jw_ku64(w, "refused_full", t.refused_full);
	jw_ku64(w, "refused_reserve", t.refused_reserve);
	jw_ku64(w, "rule_bans_max", t.rule_bans_max);
	jw_ku64(w, "would_ban", t.would_ban);
	jw_ku64(w, "offences", t.offences);
	jw_obj_end(w);
}

void xrl_stats_json(struct jw *w, struct xrl *x, const struct xrl_stats_view *s)
{
	const struct xrl_global_stats *g = &s->g;

	jw_obj_start(w);
	jw_kstr(w, "mode", xrl_mode_name(xrl_mode_get(x)));
	jw_key(w, "rules");
	jw_arr_start(w);
	for (size_t i = 0; i < s->n; i++) {
		const struct xrl_rule_stats *rs = &s->rs[i];

		jw_obj_start(w);
		xrl_rule_json(w, &s->v[i]);
		jw_ku64(w, "passed_packets", rs->passed_packets);
		jw_ku64(w, "dropped_packets", rs->dropped_packets);
		jw_ku64(w, "passed_bytes", rs->passed_bytes);
		jw_ku64(w, "dropped_bytes", rs->dropped_bytes);
		jw_ku64(w, "new_keys", rs->new_keys);
		jw_ku64(w, "failure_passed_packets", rs->failure_passed);
		jw_ku64(w, "failure_dropped_packets", rs->failure_dropped);
		jw_ku64(w, "would_drop_packets", rs->would_drop_packets);
		jw_ku64(w, "would_drop_bytes", rs->would_drop_bytes);
		jw_ku64(w, "new_keys_refused", rs->nk_refused);
		jw_ku64(w, "hot_dropped_packets", rs->hot_dropped);
		jw_ku64(w, "aggregate_dropped_packets", rs->agg_dropped);
		jw_ku64(w, "slipped_packets", rs->slipped_packets);
		jw_ku64(w, "slip_invalid_packets", rs->slip_invalid);
		jw_ku64(w, "slip_capped_packets", rs->slip_capped);
		if (s->v[i].r.syncookies) {
			struct xrl_sc_stats sc = {};

			xrl_sc_stats_get(x, s->v[i].r.slot, &sc);
			jw_ku64(w, "syn_cookies_sent", sc.cookies_sent);
			jw_ku64(w, "syn_cookie_acks_valid", sc.acks_valid);
			jw_ku64(w, "syn_cookie_acks_invalid", sc.acks_invalid);
			jw_ku64(w, "syn_cookie_sources_verified", sc.verified);
			jw_ku64(w, "syn_cookie_unverified_dropped", sc.unverified_dropped);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	xrl_fleet_json(w, x);
	jw_key(w, "global");
	jw_obj_start(w);
	jw_ku64(w, "unmatched_packets", g->unmatched_packets);
	jw_ku64(w, "non_ip_packets", g->non_ip_packets);
	jw_ku64(w, "malformed_packets", g->malformed_packets);
	jw_ku64(w, "keys_inserted", g->keys_inserted);
	jw_ku64(w, "answered_packets", g->answered_packets);
	jw_key(w, "syn_cookie_verified");
	jw_obj_start(w);
	jw_ku64(w, "entries", s->sct.entries);
	jw_ku64(w, "size", s->sct.size);
	jw_ku64(w, "inserted", s->sct.inserted);
	jw_ku64(w, "evicted", s->sct.evicted);
	jw_obj_end(w);
	jw_key(w, "passed_packets");
	jw_obj_start(w);
	for (int m = 0; m < XRL_MODE_MAX; m++)
		jw_ku64(w, xrl_mode_name(m), g->passed_packets[m]);
	jw_obj_end(w);
	jw_key(w, "dropped_packets");
	jw_obj_start(w);
	for (int m = 0; m < XRL_MODE_MAX; m++)
		jw_ku64(w, xrl_mode_name(m), g->dropped_packets[m]);
	jw_obj_end(w);
	jw_obj_end(w);
	stats_bans_json(w, x);
	jw_key(w, "interfaces");
	jw_arr_start(w);
	for (size_t i = 0; i < s->natt; i++) {
		jw_obj_start(w);
		jw_kstr(w, "ifname", s->att[i].ifname);
		jw_ku64(w, "ifindex", s->att[i].ifindex);
		jw_kstr(w, "hook", xrl_hook_name(s->att[i].hook));
		if (s->att[i].ifindex) {
			char shared[256];

			jw_ku64(w, "passed_packets", s->is[i].passed_packets);
			jw_ku64(w, "dropped_packets", s->is[i].dropped_packets);
			jw_ku64(w, "answered_packets", s->is[i].answered_packets);
			if (xrl_if_shared(s->att, s->natt, i, shared, sizeof(shared)))
				jw_kstr(w, "counters_shared_with", shared);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

void xrl_stats_free(struct xrl_stats_view *s)
{
	free(s->v);
	free(s->rs);
	free(s->att);
	free(s->is);
	memset(s, 0, sizeof(*s));
}

/* ---- top ---- */

void xrl_key_format(const struct xrl_key *k, __u8 key_len, char *buf, size_t len)
{
	char a[64];

	xrl_addr_format(k->family, k->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, key_len);
}

static int cmp_gen(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = a, *y = b;

	return x->r.gen < y->r.gen ? -1 : x->r.gen > y->r.gen;
}

void xrl_rules_by_gen(struct xrl_rule_entry *v, size_t n)
{
	xrl_sort(v, n, sizeof(*v), cmp_gen);
}

const struct xrl_rule_entry *xrl_rule_of_gen(const struct xrl_rule_entry *v, size_t n, __u32 gen)
{
	struct xrl_rule_entry k = { .r.gen = gen };

	return bsearch(&k, v, n, sizeof(*v), cmp_gen);
}

static int collect_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	struct xrl_top_snap *s = ctx;
	const struct xrl_rule_entry *e = xrl_rule_of_gen(s->rules, s->nrules, k->gen);

	if (!e)
		return 0;	/* a stale bucket of a changed rule */
	if (s->only && e->r.id != s->only)
		return 0;
	s->tracked++;
	if (!b->dropped)
		return 0;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		void *nv = realloc(s->v, nc * sizeof(*s->v));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = (struct xrl_top_item){ .k = *k, .dropped = b->dropped, .rule = e->r.id,
					      .key_len = e->r.key_len, .dry_run = e->r.dry_run };
	return 0;
}

/* by key */
static int cmp_key(const void *a, const void *b)
{
	return memcmp(&((const struct xrl_top_item *)a)->k, &((const struct xrl_top_item *)b)->k,
		      sizeof(struct xrl_key));
}

int xrl_top_collect(struct xrl *x, const struct xrl_rule_entry *rules, size_t nrules,
		    struct xrl_top_snap *s)
{
	int err;

	s->n = 0;
	s->tracked = 0;
	s->rules = rules;
	s->nrules = nrules;
	err = xrl_buckets_walk(x, collect_cb, s);
	if (err == -ENOMEM)
		return xrl_fail(ENOMEM, "out of memory");
	if (err)
		return err;
	xrl_sort(s->v, s->n, sizeof(*s->v), cmp_key);
	return 0;
}

void xrl_top_rates(struct xrl_top_snap *cur, const struct xrl_top_snap *prev, __u64 elapsed_ns)
{
	for (size_t i = 0; i < cur->n; i++) {
		struct xrl_top_item *it = &cur->v[i];
		const struct xrl_top_item *p = prev->n ? bsearch(it, prev->v, prev->n, sizeof(*it), cmp_key) : NULL;
		__u64 before = p && p->dropped <= it->dropped ? p->dropped : 0;

		it->rate = elapsed_ns ? (__u64)((it->dropped - before) * 1e9 / elapsed_ns) : 0;
	}
}

int xrl_top_cmp_hot(const void *a, const void *b)
{
	const struct xrl_top_item *x = a, *y = b;

	if (x->rate != y->rate)
		return x->rate > y->rate ? -1 : 1;
	if (x->dropped != y->dropped)
		return x->dropped > y->dropped ? -1 : 1;
	return cmp_key(a, b);
}

void xrl_top_json(struct jw *w, const struct xrl_top_item *v, size_t n, bool dry_mode)
{
	jw_arr_start(w);
	for (size_t i = 0; i < n; i++) {
		const struct xrl_top_item *it = &v[i];
		char key[80];

		xrl_key_format(&it->k, it->key_len, key, sizeof(key));
		jw_obj_start(w);
		jw_kstr(w, "key", key);
		jw_ku64(w, "rule", it->rule);
		jw_ku64(w, "dropped_packets", it->dropped);
		jw_ku64(w, "dropped_per_second", it->rate);
		/* the key's drops were would-drops: its rule's dry-run or the mode's */
		jw_kbool(w, "dry_run", it->dry_run || dry_mode);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

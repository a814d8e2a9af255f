// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: stats, show, top. */
#include "rlctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xrl_meter.h"

int do_stats(struct xrl_cmd *c)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl_rule_stats *rs = NULL;
	struct xrl_global_stats g;
	struct xrl *x;
	size_t n = 0;
	int err = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &v, &n) || xrl_global_stats_get(x, &g) ||
	    !(rs = calloc(n + 1, sizeof(*rs)))) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (xrl_rule_stats_get(x, v[i].r.slot, &rs[i])) {
			p_err("%s", xrl_errmsg());
			err = 1;
			goto out;
		}
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "mode", xrl_mode_name(xrl_mode_get(x)));
		jw_key(&jw, "rules");
		jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			jw_obj_start(&jw);
			xrl_rule_json(&jw, &v[i]);
			jw_ku64(&jw, "passed_packets", rs[i].passed_packets);
			jw_ku64(&jw, "dropped_packets", rs[i].dropped_packets);
			jw_ku64(&jw, "passed_bytes", rs[i].passed_bytes);
			jw_ku64(&jw, "dropped_bytes", rs[i].dropped_bytes);
			jw_ku64(&jw, "new_keys", rs[i].new_keys);
			jw_ku64(&jw, "failure_passed_packets", rs[i].failure_passed);
			jw_ku64(&jw, "failure_dropped_packets", rs[i].failure_dropped);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_key(&jw, "global");
		jw_obj_start(&jw);
		jw_ku64(&jw, "unmatched_packets", g.unmatched_packets);
		jw_ku64(&jw, "non_ip_packets", g.non_ip_packets);
		jw_ku64(&jw, "malformed_packets", g.malformed_packets);
		jw_key(&jw, "passed_packets");
		jw_obj_start(&jw);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			jw_ku64(&jw, xrl_mode_name(m), g.passed_packets[m]);
		jw_obj_end(&jw);
		jw_key(&jw, "dropped_packets");
		jw_obj_start(&jw);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			jw_ku64(&jw, xrl_mode_name(m), g.dropped_packets[m]);
		jw_obj_end(&jw);
		jw_obj_end(&jw);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("mode %s\n", xrl_mode_name(xrl_mode_get(x)));
		printf("%-6s %-28s %-7s %12s %12s %14s %14s %10s\n", "ID", "PREFIX", "ACTION",
		       "PASSED", "DROPPED", "PASSED_BYTES", "DROPPED_BYTES", "NEW_KEYS");
		for (size_t i = 0; i < n; i++) {
			char pfx[64];

			xrl_prefix_format(&v[i], pfx, sizeof(pfx));
			printf("%-6u %-28s %-7s %12llu %12llu %14llu %14llu %10llu\n",
			       v[i].r.id, pfx, xrl_action_name(v[i].r.action),
			       (unsigned long long)rs[i].passed_packets,
			       (unsigned long long)rs[i].dropped_packets,
			       (unsigned long long)rs[i].passed_bytes,
			       (unsigned long long)rs[i].dropped_bytes,
			       (unsigned long long)rs[i].new_keys);
		}
		for (size_t i = 0; i < n; i++)
			if (rs[i].failure_passed || rs[i].failure_dropped)
				printf("rule %u on failure: passed %llu, dropped %llu\n", v[i].r.id,
				       (unsigned long long)rs[i].failure_passed,
				       (unsigned long long)rs[i].failure_dropped);
		printf("unmatched %llu, non-ip %llu, malformed %llu\n",
		       (unsigned long long)g.unmatched_packets,
		       (unsigned long long)g.non_ip_packets,
		       (unsigned long long)g.malformed_packets);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			if (g.passed_packets[m] || g.dropped_packets[m])
				printf("%s: passed %llu, dropped %llu\n", xrl_mode_name(m),
				       (unsigned long long)g.passed_packets[m],
				       (unsigned long long)g.dropped_packets[m]);
	}
out:
	free(rs);
	free(v);
	xrl_close(x);
	return err;
}

static void key_format(const struct xrl_key *k, __u8 key_len, char *buf, size_t len)
{
	char a[64];

	xrl_addr_format(k->family, k->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, key_len);
}

int do_show(struct xrl_cmd *c)
{
	struct xrl_rule_entry e;
	struct xrl_key k;
	struct xrl_bucket b;
	char addr[64], key[80], pfx[64];
	bool tracked = false;
	__u64 tokens = 0, now;
	struct xrl *x;

	if (open_reader(&x))
		return 1;
	xrl_addr_format(c->family, c->addr, addr, sizeof(addr));
	if (xrl_rule_match(x, c->family, c->addr, &e)) {
		if (opt.json) {
			jw_obj_start(&jw);
			jw_kstr(&jw, "address", addr);
			jw_key(&jw, "rule");
			jw_null(&jw);
			jw_obj_end(&jw);
			jw_finish(&jw);
		} else {
			printf("%s: no rule matches (passed, counted as unmatched)\n", addr);
		}
		xrl_close(x);
		return 0;
	}
	xrl_key_of(&k, &e.r, c->family, c->addr);
	key_format(&k, e.r.key_len, key, sizeof(key));
	xrl_prefix_format(&e, pfx, sizeof(pfx));
	now = xrl_now_ns(x);
	if (e.r.action == XRL_ACT_LIMIT) {
		tracked = xrl_bucket_get(x, &k, &b) == 0;
		tokens = tracked ? xrl_gcra_tokens(b.tat, xrl_ns_to_tu(now), e.r.interval, e.r.limit)
				 : e.r.burst;
	}
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "address", addr);
		jw_kstr(&jw, "key", key);
		jw_ku64(&jw, "rule", e.r.id);
		jw_kstr(&jw, "prefix", pfx);
		jw_kstr(&jw, "action", xrl_action_name(e.r.action));
		jw_kbool(&jw, "tracked", tracked);
		if (e.r.action == XRL_ACT_LIMIT) {
			jw_ku64(&jw, "tokens", tokens);
			jw_ku64(&jw, "burst", e.r.burst);
		}
		if (tracked) {
			jw_ku64(&jw, "dropped_packets", b.dropped);
			jw_ku64(&jw, "last_seen_ms_ago", now > b.last_ns ? (now - b.last_ns) / 1000000 : 0);
		}
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("address:   %s\nkey:       %s\nrule:      %u (%s, %s)\n", addr, key,
		       e.r.id, pfx, xrl_action_name(e.r.action));
		if (e.r.action != XRL_ACT_LIMIT)
			printf("bucket:    none (%s rules are not metered)\n", xrl_action_name(e.r.action));
		else if (!tracked)
			printf("bucket:    not tracked (full: %llu of %u tokens)\n",
			       (unsigned long long)tokens, e.r.burst);
		else
			printf("tokens:    %llu of %u\ndropped:   %llu\nlast seen: %.3f s ago\n",
			       (unsigned long long)tokens, e.r.burst, (unsigned long long)b.dropped,
			       now > b.last_ns ? (now - b.last_ns) / 1e9 : 0.0);
	}
	xrl_close(x);
	return 0;
}

struct top_ctx {
	struct xrl_rule_entry *rules;
	size_t nrules;
	struct top_item {
		struct xrl_key k;
		__u64 dropped;
		size_t rule;
	} *items;
	size_t n, cap;
};

static int top_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	struct top_ctx *t = ctx;

	if (!b->dropped)
		return 0;
	for (size_t i = 0; i < t->nrules; i++) {
		if (t->rules[i].r.gen != k->gen)
			continue;	/* a stale bucket of a changed rule is skipped */
		if (t->n == t->cap) {
			size_t nc = t->cap ? t->cap * 2 : 256;
			void *ni = realloc(t->items, nc * sizeof(*t->items));

			if (!ni)
				return -ENOMEM;
			t->items = ni;
			t->cap = nc;
		}
		t->items[t->n++] = (struct top_item){ *k, b->dropped, i };
		break;
	}
	return 0;
}

static int cmp_dropped(const void *a, const void *b)
{
	const struct top_item *x = a, *y = b;

	return x->dropped > y->dropped ? -1 : x->dropped < y->dropped;
}

int do_top(struct xrl_cmd *c)
{
	struct top_ctx t = {};
	struct xrl *x;
	int err = 0;

	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &t.rules, &t.nrules) || xrl_buckets_walk(x, top_cb, &t)) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	qsort(t.items, t.n, sizeof(*t.items), cmp_dropped);
	if (t.n > c->count)
		t.n = c->count;
	if (opt.json)
		jw_arr_start(&jw);
	else
		printf("%-44s %-6s %12s\n", "KEY", "RULE", "DROPPED");
	for (size_t i = 0; i < t.n; i++) {
		const struct xrl_rule_entry *e = &t.rules[t.items[i].rule];
		char key[80];

		key_format(&t.items[i].k, e->r.key_len, key, sizeof(key));
		if (opt.json) {
			jw_obj_start(&jw);
			jw_kstr(&jw, "key", key);
			jw_ku64(&jw, "rule", e->r.id);
			jw_ku64(&jw, "dropped_packets", t.items[i].dropped);
			jw_obj_end(&jw);
		} else {
			printf("%-44s %-6u %12llu\n", key, e->r.id,
			       (unsigned long long)t.items[i].dropped);
		}
	}
	if (opt.json) {
		jw_arr_end(&jw);
		jw_finish(&jw);
	}
out:
	free(t.items);
	free(t.rules);
	xrl_close(x);
	return err;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: stats, show. */
#include "rlctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xrl_meter.h"
#include "fleet/view.h"

int do_stats(struct xrl_cmd *c)
{
	struct xrl_stats_view sv = {};
	struct xrl_rule_entry *v;
	struct xrl_rule_stats *rs;
	struct xrl_global_stats g;
	struct xrl_attachment *att;
	struct xrl_if_stats *is;
	size_t n, natt;
	struct xrl_sc_table sct;
	struct xrl *x;
	int err = 0;

	(void)c;
	if (open_reader(&x))
		return 1;
	if (xrl_stats_read(x, &sv)) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	v = sv.v;
	n = sv.n;
	rs = sv.rs;
	g = sv.g;
	att = sv.att;
	natt = sv.natt;
	is = sv.is;
	sct = sv.sct;
	if (opt.json) {
		xrl_stats_json(&jw, x, &sv);
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
			if (rs[i].nk_refused || rs[i].hot_dropped || rs[i].agg_dropped)
				printf("rule %u: new keys refused %llu, dropped by the hot-key cache %llu, by the aggregate %llu\n",
				       v[i].r.id, (unsigned long long)rs[i].nk_refused,
				       (unsigned long long)rs[i].hot_dropped,
				       (unsigned long long)rs[i].agg_dropped);
		for (size_t i = 0; i < n; i++)	/* of the dropped, answered */
			if (v[i].r.slip || rs[i].slipped_packets)
				printf("rule %u slip %u: answered %llu (truncated), not a query %llu, over the cap %llu\n",
				       v[i].r.id, v[i].r.slip, (unsigned long long)rs[i].slipped_packets,
				       (unsigned long long)rs[i].slip_invalid,
				       (unsigned long long)rs[i].slip_capped);
		for (size_t i = 0; i < n; i++)
			if (rs[i].failure_passed || rs[i].failure_dropped)
				printf("rule %u on failure: passed %llu, dropped %llu\n", v[i].r.id,
				       (unsigned long long)rs[i].failure_passed,
				       (unsigned long long)rs[i].failure_dropped);
		for (size_t i = 0; i < n; i++)	/* passed, but the rule said drop */
			if (rs[i].would_drop_packets)
				printf("rule %u dry-run: would have dropped %llu packets, %llu bytes\n",
				       v[i].r.id, (unsigned long long)rs[i].would_drop_packets,
				       (unsigned long long)rs[i].would_drop_bytes);
		for (size_t i = 0; i < n; i++) {
			struct xrl_sc_stats sc = {};

			if (!v[i].r.syncookies)
				continue;
			xrl_sc_stats_get(x, v[i].r.slot, &sc);
			printf("rule %u syn-cookies: sent %llu, ACKs valid %llu, invalid %llu, sources verified %llu, other unverified dropped %llu\n",
			       v[i].r.id, (unsigned long long)sc.cookies_sent,
			       (unsigned long long)sc.acks_valid, (unsigned long long)sc.acks_invalid,
			       (unsigned long long)sc.verified, (unsigned long long)sc.unverified_dropped);
		}
		if (sct.entries || sct.inserted)
			printf("SYN cookies: verified sources %llu of %llu (evicted about %llu)\n",
			       (unsigned long long)sct.entries,
			       (unsigned long long)sct.size, (unsigned long long)sct.evicted);
		xrl_fleet_print(stdout, x);
		printf("unmatched %llu, non-ip %llu, malformed %llu\n",
		       (unsigned long long)g.unmatched_packets,
		       (unsigned long long)g.non_ip_packets,
		       (unsigned long long)g.malformed_packets);
		if (g.answered_packets)
			printf("answered %llu (sent back: neither passed nor dropped)\n",
			       (unsigned long long)g.answered_packets);
		for (int m = 0; m < XRL_MODE_MAX; m++)
			if (g.passed_packets[m] || g.dropped_packets[m])
				printf("%s: passed %llu, dropped %llu\n", xrl_mode_name(m),
				       (unsigned long long)g.passed_packets[m],
				       (unsigned long long)g.dropped_packets[m]);
		stats_bans_text(x);
		for (size_t i = 0; i < natt; i++) {
			char shared[256];

			if (!att[i].ifindex) {
				printf("interface %s: gone\n", att[i].ifname);
				continue;
			}
			printf("interface %s%s: passed %llu, dropped %llu", att[i].ifname,
			       att[i].hook == XRL_HOOK_TC ? " (tc)" : "",
			       (unsigned long long)is[i].passed_packets,
			       (unsigned long long)is[i].dropped_packets);
			if (is[i].answered_packets)
				printf(", answered %llu", (unsigned long long)is[i].answered_packets);
			if (xrl_if_shared(att, natt, i, shared, sizeof(shared)))
				printf(" (counters shared with %s)", shared);
			printf("\n");
		}
	}
out:
	xrl_stats_free(&sv);
	xrl_close(x);
	return err;
}

/* The keys of the address under the endpoint rules that cover it: each
 * meters the address's packets of its protocol and ports, besides the
 * source rule. */
static void show_endpoints(struct xrl *x, struct xrl_cmd *c, __u64 now)
{
	enum xrl_mode mode = xrl_mode_get(x);
	struct xrl_rule_entry *ep = NULL;
	size_t nep = 0;

	if (xrl_endpoint_rules_covering(x, c->addr.family, c->addr.addr, &ep, &nep))
		nep = 0;
	if (opt.json)
		jw_arr_start(&jw);
	for (size_t i = 0; i < nep; i++) {
		const struct xrl_rule *r = &ep[i].r;
		char proto[16], ports[16], key[80], pfx[64];
		struct xrl_bucket b;
		struct xrl_key k;
		bool tracked;
		__u64 tokens;

		xrl_key_of(&k, r, c->addr.family, c->addr.addr);
		key_format(&k, r->key_len, key, sizeof(key));
		xrl_prefix_format(&ep[i], pfx, sizeof(pfx));
		xrl_rule_proto_format(r, proto, sizeof(proto));
		xrl_rule_ports_format(r, ports, sizeof(ports));
		tracked = xrl_bucket_get(x, &k, &b) == 0;
		tokens = tracked ? xrl_bucket_left(r, &b, r->precise ? xrl_rule_now_ns(x, r) : now) :
				   xrl_rule_capacity(r);
		if (opt.json) {
			jw_obj_start(&jw);
			jw_ku64(&jw, "rule", r->id);
			jw_kstr(&jw, "prefix", pfx);
			jw_kstr(&jw, "proto", proto);
			if (strcmp(ports, "-"))
				jw_kstr(&jw, "dport", ports);
			jw_kbool(&jw, "syn", r->syn);
			jw_kstr(&jw, "key", key);
			jw_kbool(&jw, "tracked", tracked);
			jw_ku64(&jw, "tokens", tokens);
			jw_ku64(&jw, "burst", xrl_rule_capacity(r));
			if (tracked)
				jw_ku64(&jw, "dropped_packets", b.dropped);
			jw_kbool(&jw, "dry_run", xrl_key_dry_run(r, mode));
			jw_obj_end(&jw);
		} else {
			printf("endpoint:  rule %u (%s, proto %s%s%s%s), key %s: ", r->id, pfx, proto,
			       strcmp(ports, "-") ? " dport " : "", strcmp(ports, "-") ? ports : "",
			       r->syn ? " syn" : "", key);
			if (tracked)
				printf("%llu of %llu tokens, %llu %s\n", (unsigned long long)tokens,
				       (unsigned long long)xrl_rule_capacity(r),
				       (unsigned long long)b.dropped,
				       xrl_key_dry_run(r, mode) ? "would-drops (dry-run: passed)" : "dropped");
			else
				printf("not tracked (full: %llu tokens)\n", (unsigned long long)tokens);
		}
	}
	if (opt.json)
		jw_arr_end(&jw);
	free(ep);
}

int do_show(struct xrl_cmd *c)
{
	struct xrl_rule_entry e;
	struct xrl_key k;
	struct xrl_bucket b;
	char addr[64], key[80], pfx[64];
	bool tracked = false, dry;
	__u64 tokens = 0, now;
	struct xrl *x;

	if (open_reader(&x))
		return 1;
	xrl_addr_format(c->addr.family, c->addr.addr, addr, sizeof(addr));
	if (xrl_rule_match(x, c->addr.family, c->addr.addr, &e)) {
		if (opt.json) {
			jw_obj_start(&jw);
			jw_kstr(&jw, "address", addr);
			jw_key(&jw, "rule");
			jw_null(&jw);
			jw_key(&jw, "endpoints");
			show_endpoints(x, c, xrl_now_ns(x));
			jw_obj_end(&jw);
			jw_finish(&jw);
		} else {
			printf("%s: no source rule matches (counted as unmatched)\n", addr);
			show_endpoints(x, c, xrl_now_ns(x));
		}
		xrl_close(x);
		return 0;
	}
	xrl_key_of(&k, &e.r, c->addr.family, c->addr.addr);
	key_format(&k, e.r.key_len, key, sizeof(key));
	xrl_prefix_format(&e, pfx, sizeof(pfx));
	now = xrl_rule_now_ns(x, &e.r);
	dry = xrl_key_dry_run(&e.r, xrl_mode_get(x));
	if (e.r.action == XRL_ACT_LIMIT) {
		tracked = xrl_bucket_get(x, &k, &b) == 0;
		tokens = tracked ? xrl_bucket_left(&e.r, &b, now) : xrl_rule_capacity(&e.r);
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
			jw_ku64(&jw, "burst", xrl_rule_capacity(&e.r));
			jw_kstr(&jw, "algo", xrl_word_name(xrl_algo_words, e.r.algo));
		}
		if (e.r.action == XRL_ACT_LIMIT)	/* its drops are would-drops */
			jw_kbool(&jw, "dry_run", dry);
		if (tracked) {
			jw_ku64(&jw, "dropped_packets", b.dropped);
			jw_ku64(&jw, "last_seen_ms_ago", now > b.last_ns ? (now - b.last_ns) / 1000000 : 0);
		}
		jw_key(&jw, "endpoints");
		show_endpoints(x, c, now);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("address:   %s\nkey:       %s\nrule:      %u (%s, %s)\n", addr, key,
		       e.r.id, pfx, xrl_action_name(e.r.action));
		if (e.r.action != XRL_ACT_LIMIT)
			printf("bucket:    none (%s rules are not metered)\n", xrl_action_name(e.r.action));
		else if (!tracked)
			printf("bucket:    not tracked (full: %llu of %llu tokens, %s)\n",
			       (unsigned long long)tokens, (unsigned long long)xrl_rule_capacity(&e.r),
			       xrl_word_name(xrl_algo_words, e.r.algo));
		else
			printf("tokens:    %llu of %llu (%s)\n%s%llu%s\nlast seen: %.3f s ago\n",
			       (unsigned long long)tokens, (unsigned long long)xrl_rule_capacity(&e.r),
			       xrl_word_name(xrl_algo_words, e.r.algo),
			       dry ? "would-drop: " : "dropped:   ", (unsigned long long)b.dropped,
			       dry ? " (dry-run: passed)" : "",
			       now > b.last_ns ? (now - b.last_ns) / 1e9 : 0.0);
		show_endpoints(x, c, now);
	}
	xrl_close(x);
	return 0;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: key list, key reset, key del. */
#include "rlctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xrl_meter.h"

/* the library's (features/report.h), under the names the command files use */
void key_format(const struct xrl_key *k, __u8 key_len, char *buf, size_t len)
{
	xrl_key_format(k, key_len, buf, len);
}

void rules_by_gen(struct xrl_rule_entry *v, size_t n)
{
	xrl_rules_by_gen(v, n);
}

const struct xrl_rule_entry *rule_of_gen(const struct xrl_rule_entry *v, size_t n, __u32 gen)
{
	return xrl_rule_of_gen(v, n, gen);
}

struct list_ctx {
	struct xrl_rule_entry *rules;	/* by gen */
	size_t nrules;
	__u32 only;			/* a rule id, or 0 */
	bool limited;
	__u64 now;			/* xrl_now_ns() */
	__u64 now_precise;		/* a precise-clock rule's: xrl_rule_now_ns() */
	enum xrl_mode mode;		/* the dry-run mode's drops are would-drops */
};

/* One line (one object) per bucket, as the walk reads it: a table of a
 * million keys is never held in memory. */
static int list_cb(const struct xrl_key *k, const struct xrl_bucket *b, void *ctx)
{
	struct list_ctx *l = ctx;
	const struct xrl_rule_entry *e = rule_of_gen(l->rules, l->nrules, k->gen);
	__u64 tokens, ago, now;
	char key[80];

	/* a bucket of a rule version no longer in the rule set is skipped */
	if (!e || e->r.action != XRL_ACT_LIMIT || (l->only && e->r.id != l->only))
		return 0;
	now = e->r.precise ? l->now_precise : l->now;
	tokens = xrl_bucket_left(&e->r, b, now);
	if (l->limited && tokens)
		return 0;
	ago = now > b->last_ns ? (now - b->last_ns) / 1000000 : 0;
	key_format(k, e->r.key_len, key, sizeof(key));
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "key", key);
		jw_ku64(&jw, "rule", e->r.id);
		jw_ku64(&jw, "tokens", tokens);
		jw_ku64(&jw, "burst", xrl_rule_capacity(&e->r));
		jw_ku64(&jw, "dropped_packets", b->dropped);
		jw_kbool(&jw, "dry_run", xrl_key_dry_run(&e->r, l->mode));
		jw_ku64(&jw, "last_seen_ms_ago", ago);
		jw_obj_end(&jw);
	} else {
		char tok[32];

		snprintf(tok, sizeof(tok), "%llu/%llu", (unsigned long long)tokens,
			 (unsigned long long)xrl_rule_capacity(&e->r));
		/* a would-drop is marked on its line, as top marks it */
		printf("%-44s %-6u %21s %12llu %9.3f s ago%s\n", key, e->r.id, tok,
		       (unsigned long long)b->dropped, ago / 1e3,
		       xrl_key_dry_run(&e->r, l->mode) && b->dropped ? " (dry-run: would-drops)" : "");
	}
	return 0;
}

int do_key_list(struct xrl_cmd *c)
{
	struct list_ctx l = { .only = c->key_list.rule, .limited = c->key_list.limited };
	struct xrl *x;
	int err = 0;
	bool found = !c->key_list.rule;

	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &l.rules, &l.nrules)) {
		p_err("%s", xrl_errmsg());
		err = 1;
		goto out;
	}
	for (size_t i = 0; i < l.nrules; i++)
		found |= l.rules[i].r.id == c->key_list.rule;
	if (!found) {
		p_err("no rule %u", c->key_list.rule);
		err = 1;
		goto out;
	}
	rules_by_gen(l.rules, l.nrules);
	l.now = xrl_now_ns(x);
	l.mode = xrl_mode_get(x);
	l.now_precise = xrl_rule_now_ns(x, &(struct xrl_rule){ .precise = 1 });
	if (opt.json)
		jw_arr_start(&jw);
	else
		printf("%-44s %-6s %21s %12s %15s\n", "KEY", "RULE", "TOKENS", "DROPPED", "LAST SEEN");
	if (xrl_buckets_walk(x, list_cb, &l)) {
		err = 1;
		fflush(stdout);
		p_err("%s", xrl_errmsg());
	}
	if (opt.json) {	/* what was printed stays valid JSON */
		jw_arr_end(&jw);
		jw_finish(&jw);
	}
out:
	free(l.rules);
	xrl_close(x);
	return err;
}

/* One key that key reset / key del touched. */
struct key_done {
	struct xrl_rule r;
	char key[80];
	bool tracked;
};

static void key_json(const struct key_done *d, bool del)
{
	jw_kstr(&jw, "key", d->key);
	jw_ku64(&jw, "rule", d->r.id);
	jw_kbool(&jw, "tracked", d->tracked);
	if (!del)
		jw_ku64(&jw, "tokens", xrl_rule_capacity(&d->r));
}

/*
 * key reset, key del: the key of ADDR under the source rule that matches it
 * now, and its key under every endpoint rule that covers it (which of those
 * meters a packet depends on its port: each may hold ADDR limited).
 */
static int key_op(struct xrl_cmd *c, bool del)
{
	struct xrl_rule_entry e, *ep = NULL;
	struct key_done *d = NULL;
	size_t nep = 0, nd = 0, ntracked = 0;
	char addr[64];
	struct xrl *x;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	xrl_addr_format(c->addr.family, c->addr.addr, addr, sizeof(addr));
	err = xrl_rule_match(x, c->addr.family, c->addr.addr, &e);
	if (err && err != -ENOENT) {
		set_err("%s", xrl_errmsg());
	} else if (xrl_endpoint_rules_covering(x, c->addr.family, c->addr.addr, &ep, &nep)) {
		err = set_err("%s", xrl_errmsg());
	} else if (err == -ENOENT && !nep) {
		set_err("no rule matches %s: it has no key", addr);
	} else if (!err && e.r.action != XRL_ACT_LIMIT && !nep) {
		err = set_err("%s matches rule %u, action %s: never metered, it has no key", addr,
			      e.r.id, xrl_action_name(e.r.action));
	} else if (!(d = calloc(nep + 1, sizeof(*d)))) {
		err = set_err("out of memory");
	} else {
		if (!err && e.r.action == XRL_ACT_LIMIT)
			d[nd++].r = e.r;
		for (size_t i = 0; i < nep; i++)
			d[nd++].r = ep[i].r;
		err = 0;
		for (size_t i = 0; i < nd && !err; i++) {
			struct xrl_key k;

			xrl_key_of(&k, &d[i].r, c->addr.family, c->addr.addr);
			key_format(&k, d[i].r.key_len, d[i].key, sizeof(d[i].key));
			err = del ? xrl_bucket_del(x, &k) : xrl_bucket_reset(x, &d[i].r, &k);
			d[i].tracked = !err;
			ntracked += !err;
			if (err == -ENOENT)
				err = 0;
			else if (err)
				set_err("%s", xrl_errmsg());
		}
		/* nothing to forgive is no failure; nothing to forget is */
		if (!err && del && !ntracked)
			err = set_err("key %s of rule %u is not tracked", d[0].key, d[0].r.id);
	}
	unlock(x, err);
	free(ep);
	if (err) {
		p_err("%s", emsg);
		free(d);
		xrl_close(x);
		return 1;
	}
	if (opt.json) {
		/* the first key at the top, as with one; every key under "keys"
		 * when endpoint rules add some */
		jw_obj_start(&jw);
		key_json(&d[0], del);
		if (nd > 1) {
			jw_key(&jw, "keys");
			jw_arr_start(&jw);
			for (size_t i = 0; i < nd; i++) {
				jw_obj_start(&jw);
				key_json(&d[i], del);
				jw_obj_end(&jw);
			}
			jw_arr_end(&jw);
		}
		jw_obj_end(&jw);
		jw_finish(&jw);
	}
	for (size_t i = 0; i < nd && !opt.json; i++) {
		unsigned long long cap = xrl_rule_capacity(&d[i].r);

		if (!d[i].tracked && del)
			continue;	/* said only when no key was */
		if (!d[i].tracked)
			printf("key %s of rule %u is not tracked: its bucket is full (%llu tokens)\n",
			       d[i].key, d[i].r.id, cap);
		else if (del)
			printf("deleted key %s of rule %u\n", d[i].key, d[i].r.id);
		else
			printf("reset key %s of rule %u: %llu tokens\n", d[i].key, d[i].r.id, cap);
	}
	free(d);
	xrl_close(x);
	return 0;
}

int do_key_reset(struct xrl_cmd *c)
{
	return key_op(c, false);
}

int do_key_del(struct xrl_cmd *c)
{
	return key_op(c, true);
}

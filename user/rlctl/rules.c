// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp-rlctl: rule add, del, list, flush; mode set. */
#include "rlctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A daemon heartbeats into the control block: its next reload puts the
 * file's rule set and mode back (see xdp-rld(8)). */
static void note_daemon(struct xrl *x)
{
	if (xrl_heartbeating(x))
		p_note("xdp-rld is running; this change lasts until its next reload");
}

/* What an edit did, for the message that says so. */
struct edit {
	size_t at;			/* rule add: the index of the new rule */
	struct xrl_rule_entry rule;	/* rule del: the rule removed */
	size_t removed;			/* rule flush: how many */
};

/* Read the rule set, let `edit` change it, commit it as one transaction. */
static int edit_rules(struct xrl_cmd *c,
		      int (*edit)(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n,
				  struct edit *d))
{
	struct xrl_rule_entry *v = NULL;
	struct edit d = {};
	struct xrl *x;
	size_t n = 0;
	int err;

	/* never creates: only attach allocates the bucket tables */
	if (open_writer(&x, false, 0))
		return 1;
	err = xrl_rules_get(x, &v, &n);
	if (err)
		set_err("%s", xrl_errmsg());
	if (!err)
		err = edit(c, &v, &n, &d);	/* sets its own message */
	if (!err && (err = xrl_rules_commit(x, v, n)))
		set_err("%s", xrl_errmsg());
	unlock(x, err);
	if (err) {
		p_err("%s", emsg);
		goto out;
	}
	/* what was done: the rule added, with the id it got (assigned by the
	 * commit), the rule removed, or how many */
	if (c->kind == XRL_CMD_RULE_ADD)
		d.rule = v[d.at];
	if (c->kind == XRL_CMD_RULE_FLUSH) {
		if (opt.json) {
			jw_obj_start(&jw);
			jw_ku64(&jw, "removed", d.removed);
			jw_obj_end(&jw);
			jw_finish(&jw);
		} else {
			printf("removed %zu rule%s\n", d.removed, d.removed == 1 ? "" : "s");
		}
	} else if (opt.json) {
		jw_obj_start(&jw);
		xrl_rule_json(&jw, &d.rule);
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		char pfx[64];

		xrl_prefix_format(&d.rule, pfx, sizeof(pfx));
		printf("%s rule %u for %s\n", c->kind == XRL_CMD_RULE_ADD ? "added" : "removed",
		       d.rule.r.id, pfx);
	}
	note_daemon(x);
out:
	free(v);
	xrl_close(x);
	return err ? 1 : 0;
}

static int edit_add(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n, struct edit *d)
{
	struct xrl_rule_entry *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return set_err("out of memory");
	*v = nv;
	d->at = *n;
	nv[(*n)++] = c->rule;
	return 0;
}

/* rule del PREFIX takes the source rule only: when endpoint rules have the
 * prefix, say which and how to remove them (by id: a prefix may carry
 * several endpoint rules). */
static int endpoint_hint(struct xrl_cmd *c, const struct xrl_rule_entry *v, size_t n,
			 const char *pfx)
{
	char ids[160] = "", first[160] = "";
	size_t l = 0, k = 0;

	for (size_t i = 0; i < n && l < sizeof(ids); i++) {
		const struct xrl_rule_entry *e = &v[i];
		char proto[16], ports[16];

		if (!e->r.ep || e->family != c->rule.family || e->prefix_len != c->rule.prefix_len ||
		    memcmp(e->addr, c->rule.addr, 16))
			continue;
		if (!k++) {
			xrl_rule_proto_format(&e->r, proto, sizeof(proto));
			xrl_rule_ports_format(&e->r, ports, sizeof(ports));
			snprintf(first, sizeof(first), "%u (proto %s%s%s%s)", e->r.id, proto,
				 strcmp(ports, "-") ? " dport " : "", strcmp(ports, "-") ? ports : "",
				 e->r.syn ? " syn" : "");
		}
		l += snprintf(ids + l, sizeof(ids) - l, "%s%u", k > 1 ? ", " : "", e->r.id);
	}
	if (k == 1)
		return set_err("no source rule for prefix %s; it has endpoint rule %s: 'rule del id %u' removes that one",
			       pfx, first, (unsigned)strtoul(ids, NULL, 10));
	if (k)
		return set_err("no source rule for prefix %s; it has endpoint rules %s: 'rule del id ID' removes one of them",
			       pfx, ids);
	return set_err("no rule for prefix %s", pfx);
}

static int edit_del(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n, struct edit *d)
{
	char pfx[64];

	for (size_t i = 0; i < *n; i++) {
		struct xrl_rule_entry *e = &(*v)[i];
		/* by prefix: the source rule (an endpoint rule: by its id) */
		bool hit = c->rule_del.id ? e->r.id == c->rule_del.id :
			   !e->r.ep && e->family == c->rule.family && e->prefix_len == c->rule.prefix_len &&
			   !memcmp(e->addr, c->rule.addr, 16);

		if (hit) {
			d->rule = *e;
			memmove(e, e + 1, (*n - i - 1) * sizeof(*e));
			(*n)--;
			return 0;
		}
	}
	if (c->rule_del.id)
		return set_err("no rule with id %u", c->rule_del.id);
	xrl_prefix_format(&c->rule, pfx, sizeof(pfx));
	return endpoint_hint(c, *v, *n, pfx);
}

static int edit_flush(struct xrl_cmd *c, struct xrl_rule_entry **v, size_t *n, struct edit *d)
{
	(void)c;
	(void)v;
	d->removed = *n;
	*n = 0;
	return 0;
}

int do_rule_add(struct xrl_cmd *c)
{
	return edit_rules(c, edit_add);
}

int do_rule_del(struct xrl_cmd *c)
{
	return edit_rules(c, edit_del);
}

int do_rule_flush(struct xrl_cmd *c)
{
	return edit_rules(c, edit_flush);
}

int do_rule_list(struct xrl_cmd *c)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl *x;
	size_t n = 0;

	if (open_reader(&x))
		return 1;
	if (xrl_rules_get(x, &v, &n)) {
		p_err("%s", xrl_errmsg());
		xrl_close(x);
		return 1;
	}
	if (c->rule_list.config) {	/* what a config file reads back, as nft list ruleset */
		char line[1024];

		if (opt.json)
			jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			xrl_rule_config_format(&v[i], line, sizeof(line));
			if (opt.json)
				jw_str(&jw, line);
			else
				printf("%s\n", line);
		}
		if (opt.json) {
			jw_arr_end(&jw);
			jw_finish(&jw);
		}
	} else if (opt.json) {
		jw_arr_start(&jw);
		for (size_t i = 0; i < n; i++) {
			jw_obj_start(&jw);
			xrl_rule_json(&jw, &v[i]);
			jw_obj_end(&jw);
		}
		jw_arr_end(&jw);
		jw_finish(&jw);
	} else {
		printf("%-6s %-28s %-7s %-12s %-10s %-5s %-10s %-14s %-7s %s\n", "ID", "PREFIX", "ACTION",
		       "RATE", "BURST", "PER", "ON-FAILURE", "ALGO", "DRY-RUN", "ENDPOINT");
		for (size_t i = 0; i < n; i++) {
			char pfx[64], rate[32], burst[16], proto[16], ports[16], ep[64] = "-";

			rule_fields(&v[i], pfx, sizeof(pfx), rate, sizeof(rate));
			xrl_rule_burst_format(&v[i].r, burst, sizeof(burst));
			xrl_rule_proto_format(&v[i].r, proto, sizeof(proto));
			xrl_rule_ports_format(&v[i].r, ports, sizeof(ports));
			if (v[i].r.ep) {	/* as the grammar writes it */
				char slip[16] = "";

				if (v[i].r.slip)
					snprintf(slip, sizeof(slip), " slip %u", v[i].r.slip);
				snprintf(ep, sizeof(ep), "proto %s%s%s%s%s%s", proto,
					 strcmp(ports, "-") ? " dport " : "",
					 strcmp(ports, "-") ? ports : "", v[i].r.syn ? " syn" : "",
					 v[i].r.syncookies ? " syn-cookies" : "", slip);
			}
			printf("%-6u %-28s %-7s %-12s %-10s /%-4u %-10s %-14s %-7s %s\n", v[i].r.id, pfx,
			       xrl_action_name(v[i].r.action), rate, burst, v[i].r.key_len,
			       xrl_word_name(xrl_on_failure_words, v[i].r.on_failure),
			       v[i].r.action == XRL_ACT_LIMIT ?
			       xrl_word_name(xrl_algo_words, v[i].r.algo) : "-",
			       v[i].r.dry_run ? "yes" : "no", ep);
		}
	}
	free(v);
	xrl_close(x);
	return 0;
}

int do_mode_set(struct xrl_cmd *c)
{
	struct xrl *x;
	int err;

	if (open_writer(&x, false, 0))
		return 1;
	err = end_write(x, xrl_mode_set(x, c->mode_set.mode));
	if (!err && opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "mode", xrl_mode_name(c->mode_set.mode));
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else if (!err) {
		printf("mode %s\n", xrl_mode_name(c->mode_set.mode));
	}
	if (!err)
		note_daemon(x);
	xrl_close(x);
	return err ? 1 : 0;
}

int do_mode_show(struct xrl_cmd *c)
{
	enum xrl_mode mode;
	struct xrl *x;

	(void)c;
	if (open_reader(&x))
		return 1;
	mode = xrl_mode_get(x);
	if (opt.json) {
		jw_obj_start(&jw);
		jw_kstr(&jw, "mode", xrl_mode_name(mode));
		jw_obj_end(&jw);
		jw_finish(&jw);
	} else {
		printf("mode %s\n", xrl_mode_name(mode));
	}
	xrl_close(x);
	return 0;
}

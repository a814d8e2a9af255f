// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: a rule written back as the grammar reads it, as
 * table cells, as a line of xdp-rl.conf and as JSON.
 */
#include "text/rulefmt.h"
#include "model/addr.h"
#include "model/ban.h"
#include "model/units.h"
#include "model/words.h"

#include <stdio.h>
#include <string.h>

void xrl_rule_rate_format(const struct xrl_rule *r, char *buf, size_t len)
{
	if (r->unit == XRL_UNIT_BITS || r->unit == XRL_UNIT_BYTES)
		xrl_byte_rate_format(r->rate_count, r->unit, buf, len);
	else
		xrl_rate_format(r->rate_count, r->rate_period_ns, buf, len);
}

void xrl_rule_proto_format(const struct xrl_rule *r, char *buf, size_t len)
{
	const char *w = xrl_word_name(xrl_proto_words, r->proto);

	if (!r->ep)
		snprintf(buf, len, "-");
	else if (strcmp(w, "unknown"))
		snprintf(buf, len, "%s", w);
	else
		snprintf(buf, len, "%u", r->proto);
}

void xrl_rule_ports_format(const struct xrl_rule *r, char *buf, size_t len)
{
	if (!r->ep || (r->dport_lo == 0 && r->dport_hi == 65535))
		snprintf(buf, len, "-");
	else if (r->dport_lo == r->dport_hi)
		snprintf(buf, len, "%u", r->dport_lo);
	else
		snprintf(buf, len, "%u-%u", r->dport_lo, r->dport_hi);
}

void xrl_rule_burst_format(const struct xrl_rule *r, char *buf, size_t len)
{
	if (r->algo != XRL_ALGO_GCRA || r->action != XRL_ACT_LIMIT)
		snprintf(buf, len, "-");
	else if (r->unit == XRL_UNIT_PACKETS)
		snprintf(buf, len, "%u", r->burst);
	else
		xrl_size_format(r->burst, buf, len);
}

/* buf += printf(...), never past len */
#define ADD(...) do { if (l < len) l += snprintf(buf + l, len - l, __VA_ARGS__); } while (0)

size_t xrl_rule_config_format(const struct xrl_rule_entry *e, char *buf, size_t len)
{
	const struct xrl_rule *r = &e->r;
	char pfx[64], v[64];
	size_t l = 0;

	buf[0] = '\0';
	xrl_prefix_format(e, pfx, sizeof(pfx));
	ADD("rule add %s", pfx);
	if (r->action == XRL_ACT_LIMIT) {
		xrl_rule_rate_format(r, v, sizeof(v));
		ADD(" rate %s", v);
		xrl_rule_burst_format(r, v, sizeof(v));
		if (strcmp(v, "-"))
			ADD(" burst %s", v);
		ADD(" per /%u", r->key_len);
	}
	ADD(" action %s", xrl_word_name(xrl_action_words, r->action));
	if (r->id)	/* 0: assigned at commit (a rule of the pins has one) */
		ADD(" id %u", r->id);
	if (r->action != XRL_ACT_ALLOW)	/* an allow rule passes, daemon or not */
		ADD(" on-failure %s", xrl_word_name(xrl_on_failure_words, r->on_failure));
	if (r->action == XRL_ACT_LIMIT)
		ADD(" algo %s", xrl_word_name(xrl_algo_words, r->algo));
	if (r->dry_run)
		ADD(" dry-run");
	if (r->ep) {
		xrl_rule_proto_format(r, v, sizeof(v));
		ADD(" proto %s", v);
		xrl_rule_ports_format(r, v, sizeof(v));
		if (strcmp(v, "-"))
			ADD(" dport %s", v);
		if (r->syn)
			ADD(" syn");
		if (r->syncookies)
			ADD(" syn-cookies");
		if (r->slip)
			ADD(" slip %u", r->slip);
	}
	if (r->scope != XRL_SCOPE_HOST)
		ADD(" scope %s", xrl_word_name(xrl_scope_words, r->scope));
	if (r->action == XRL_ACT_LIMIT && r->agg_rate_count) {
		xrl_rate_format(r->agg_rate_count, r->agg_rate_period_ns, v, sizeof(v));
		ADD(" aggregate %s burst %u", v, r->agg_burst);
	}
	if (r->action == XRL_ACT_LIMIT && r->nk_rate_count) {
		xrl_rate_format(r->nk_rate_count, r->nk_rate_period_ns, v, sizeof(v));
		ADD(" new-keys %s", v);
	}
	if (r->action == XRL_ACT_LIMIT && r->ban_s) {
		char m[32];

		xrl_duration_format(r->ban_s, v, sizeof(v));
		xrl_duration_format(r->ban_max_s ? r->ban_max_s : r->ban_s, m, sizeof(m));
		ADD(" ban %s after %u ban-max %s", v, r->ban_after ? r->ban_after : 1, m);
	}
	return l;
}
#undef ADD

void xrl_rule_json(struct jw *w, const struct xrl_rule_entry *e)
{
	char pfx[64], rate[32];

	xrl_prefix_format(e, pfx, sizeof(pfx));
	jw_ku64(w, "id", e->r.id);
	jw_kstr(w, "prefix", pfx);
	jw_kstr(w, "action", xrl_action_name(e->r.action));
	if (e->r.action == XRL_ACT_LIMIT) {
		xrl_rule_rate_format(&e->r, rate, sizeof(rate));
		jw_kstr(w, "rate", rate);
		if (e->r.algo == XRL_ALGO_GCRA) {
			jw_ku64(w, "burst", e->r.burst);
		} else {
			jw_key(w, "burst");
			jw_null(w);
		}
	} else {
		jw_key(w, "rate");
		jw_null(w);
		jw_key(w, "burst");
		jw_null(w);
	}
	jw_ku64(w, "per", e->r.key_len);
	if (e->r.action == XRL_ACT_ALLOW) {	/* an allow rule passes, daemon or not */
		jw_key(w, "on_failure");
		jw_null(w);
	} else {
		jw_kstr(w, "on_failure", xrl_word_name(xrl_on_failure_words, e->r.on_failure));
	}
	if (e->r.action == XRL_ACT_LIMIT) {
		jw_kstr(w, "algo", xrl_word_name(xrl_algo_words, e->r.algo));
		jw_kstr(w, "unit", e->r.unit == XRL_UNIT_PACKETS ? "packets" : "bytes");
	} else {
		jw_key(w, "algo");
		jw_null(w);
		jw_key(w, "unit");
		jw_null(w);
	}
	jw_kbool(w, "dry_run", e->r.dry_run);
	if (e->r.ep) {	/* an endpoint rule */
		char proto[16], ports[16];

		xrl_rule_proto_format(&e->r, proto, sizeof(proto));
		xrl_rule_ports_format(&e->r, ports, sizeof(ports));
		jw_kstr(w, "proto", proto);
		if (strcmp(ports, "-")) {
			jw_kstr(w, "dport", ports);
		} else {
			jw_key(w, "dport");
			jw_null(w);
		}
		jw_kbool(w, "syn", e->r.syn);
		jw_kbool(w, "syn_cookies", e->r.syncookies);
		jw_ku64(w, "slip", e->r.slip);
	} else {
		jw_key(w, "proto");
		jw_null(w);
		jw_key(w, "dport");
		jw_null(w);
		jw_kbool(w, "syn", false);
		jw_kbool(w, "syn_cookies", false);
		jw_ku64(w, "slip", 0);
	}
	jw_kstr(w, "scope", xrl_word_name(xrl_scope_words, e->r.scope));
	/* the data path's clock for the rule (README, Rules: The clock) */
	jw_key(w, "clock");
	if (e->r.action == XRL_ACT_LIMIT)
		jw_str(w, e->r.precise ? "precise" : "coarse");
	else
		jw_null(w);
	/* the aggregate and the new-key budget; null: none, or the default */
	jw_key(w, "aggregate");
	if (e->r.agg_rate_count) {
		xrl_rate_format(e->r.agg_rate_count, e->r.agg_rate_period_ns, rate, sizeof(rate));
		jw_str(w, rate);
	} else {
		jw_null(w);
	}
	jw_key(w, "aggregate_burst");
	if (e->r.agg_rate_count)
		jw_u64(w, e->r.agg_burst);
	else
		jw_null(w);
	jw_key(w, "new_keys_rate");
	if (e->r.nk_rate_count) {
		xrl_rate_format(e->r.nk_rate_count, e->r.nk_rate_period_ns, rate, sizeof(rate));
		jw_str(w, rate);
	} else {
		jw_null(w);
	}
	/* a rule that bans: seconds; null: it does not */
	jw_key(w, "ban_s");
	if (e->r.ban_s)
		jw_u64(w, e->r.ban_s);
	else
		jw_null(w);
	jw_key(w, "ban_after");
	if (e->r.ban_s)
		jw_u64(w, e->r.ban_after ? e->r.ban_after : 1);
	else
		jw_null(w);
	jw_key(w, "ban_max_s");
	if (e->r.ban_s)
		jw_u64(w, e->r.ban_max_s ? e->r.ban_max_s : e->r.ban_s);
	else
		jw_null(w);
}

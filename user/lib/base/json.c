// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "base/json.h"

#include "text/grammar.h"

#include <inttypes.h>
#include <string.h>

void jw_init(struct jw *w, FILE *f, bool pretty)
{
	w->f = f;
	w->pretty = pretty;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}

static void indent(struct jw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Separator and indentation before a value or a key. */
static void pre_value(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	if (w->depth > 0)
		indent(w);
	w->first[w->depth] = false;
}

static void open(struct jw *w, char c)
{
	pre_value(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (!empty)
		indent(w);
	fputc(c, w->f);
}

void jw_obj_start(struct jw *w) { open(w, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr_start(struct jw *w) { open(w, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

/* Length of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		       (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* A JSON string of s; bytes that are not UTF-8 become U+FFFD, so the
 * document is always valid UTF-8 whatever an argument held. */
static void raw_str(struct jw *w, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', w->f);
	while (*s) {
		unsigned char c = *s;
		int n;

		switch (c) {
		case '"': fputs("\\\"", w->f); break;
		case '\\': fputs("\\\\", w->f); break;
		case '\n': fputs("\\n", w->f); break;
		case '\t': fputs("\\t", w->f); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				fprintf(w->f, "\\u%04x", c);
			} else if (c < 0x80) {
				fputc(c, w->f);
			} else if ((n = utf8_len(s))) {
				fwrite(s, 1, n, w->f);
				s += n;
				continue;
			} else {
				fputs("\\ufffd", w->f);
			}
		}
		s++;
	}
	fputc('"', w->f);
}

void jw_key(struct jw *w, const char *key)
{
	pre_value(w);
	raw_str(w, key);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s)
{
	pre_value(w);
	raw_str(w, s ? s : "");
}

void jw_u64(struct jw *w, uint64_t v)
{
	pre_value(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(struct jw *w, bool v)
{
	pre_value(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	pre_value(w);
	fputs("null", w->f);
}

void jw_kstr(struct jw *w, const char *k, const char *s) { jw_key(w, k); jw_str(w, s); }
void jw_ku64(struct jw *w, const char *k, uint64_t v) { jw_key(w, k); jw_u64(w, v); }
void jw_kbool(struct jw *w, const char *k, bool v) { jw_key(w, k); jw_bool(w, v); }

void jw_finish(struct jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
}

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
	} else {
		jw_key(w, "proto");
		jw_null(w);
		jw_key(w, "dport");
		jw_null(w);
		jw_kbool(w, "syn", false);
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
}

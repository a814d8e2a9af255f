// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The grammar of xdp-rlctl and of xdp-rl.conf(5) as data: the command table
 * at the bottom, the enum words at the top, and one parser that reads both.
 */
#include "text/grammar.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/config.h"
#include "base/log.h"
#include "xrl_meter.h"

__attribute__((format(printf, 3, 4)))
static int perr(struct xrl_parse_err *e, int argi, const char *fmt, ...)
{
	va_list ap;

	e->argi = argi;
	va_start(ap, fmt);
	if (vsnprintf(e->msg, sizeof(e->msg), fmt, ap) >= (int)sizeof(e->msg))
		xrl_utf8_trim(e->msg);
	va_end(ap);
	return -EINVAL;
}

/* The table ends with an all-zero row. */
static bool is_end(const struct xrl_param *p)
{
	return !p || (!p->name && !p->meta && !p->words);
}

static const char *what(const struct xrl_param *p)
{
	return p->what ? p->what : p->name ? p->name : p->meta;
}

/* An int or a __u32 into a field of 1, 2 or 4 bytes. */
static void store(void *field, unsigned size, __u64 v)
{
	switch (size) {
	case 1: *(__u8 *)field = v; break;
	case 2: *(__u16 *)field = v; break;
	default: *(__u32 *)field = v; break;
	}
}

/* ---- command words ---- */

/* The commands' first words ("rule" once); ok: those with a command written
 * where. */
static void first_words(struct xrl_names *ns, unsigned where)
{
	ns->n = 0;
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const char *name = xrl_commands[i].name, *sp = strchr(name, ' ');

		size_t len = sp ? (size_t)(sp - name) : strlen(name);

		xrl_names_addn(ns, name, len, xrl_commands[i].where & where, ns->n);
		/* a preferred command's first word wins ("r" is rule's) */
		for (size_t k = 0; xrl_commands[i].preferred && k < ns->n; k++)
			if (!strncmp(ns->v[k], name, len) && !ns->v[k][len])
				ns->pref[k] = true;
	}
}

/* The first word that s (argv[i]) means, into word: 0, or -EINVAL with *e
 * filled. A first word of commands written elsewhere only ("interface" on
 * the CLI) is returned too, with *ok false: the caller says where it
 * belongs. */
static int command_word(const char *s, unsigned where, bool prefix, char *word, size_t len,
			bool *ok, int i, struct xrl_parse_err *e)
{
	char list[160];
	struct xrl_names ns;
	int k;

	first_words(&ns, where);
	k = xrl_names_match(&ns, s, prefix);
	if (k == XRL_NM_AMBIGUOUS) {
		xrl_names_prefixed(&ns, s, list, sizeof(list));
		return perr(e, i, "ambiguous command '%s' (%s)", s, list);
	}
	if (k < 0) {
		xrl_names_hint(&ns, s, list, sizeof(list));
		return perr(e, i, "unknown command '%s'%s", s, list);
	}
	snprintf(word, len, "%s", ns.v[k]);
	*ok = ns.ok[k];
	return 0;
}

/* The value of one parameter: argv[i] into the command. prefix: an enum
 * word may be shortened (the CLI). */
static int parse_value(const struct xrl_param *p, char **argv, int i, bool prefix,
		       struct xrl_cmd *c, struct xrl_parse_err *e)
{
	void *field = (char *)c + p->off;
	const char *s = argv[i], *why;
	char list[128];
	bool ok;
	__u64 v;

	switch (p->type) {
	case XRL_ARG_FLAG:
		*(bool *)field = true;
		return 0;
	case XRL_ARG_WORD: {
		struct xrl_names ns;
		char hint[96];
		int k;

		xrl_names_from_words(&ns, p->words);
		k = xrl_names_match(&ns, s, prefix);
		if (k == XRL_NM_AMBIGUOUS) {
			xrl_names_prefixed(&ns, s, list, sizeof(list));
			return perr(e, i, "ambiguous %s '%s' (%s)", what(p), s, list);
		}
		if (k < 0) {
			xrl_words_join(p->words, ", ", list, sizeof(list));
			xrl_names_hint(&ns, s, hint, sizeof(hint));
			return perr(e, i, "invalid %s '%s' (%s)%s", what(p), s, list, hint);
		}
		store(field, p->size, ns.key[k]);
		return 0;
	}
	case XRL_ARG_NUM:
		if ((why = xrl_dec_parse(s, p->min, p->max, &v))) {
			if (p->range)
				return perr(e, i, "invalid %s '%s': %s (%s)", what(p), s, why, p->range);
			return perr(e, i, "invalid %s '%s': %s (%llu .. %llu)", what(p), s, why,
				    (unsigned long long)p->min, (unsigned long long)p->max);
		}
		store(field, p->size, v);
		return 0;
	case XRL_ARG_IFACE:
		if (strlen(s) >= IF_NAMESIZE)
			return perr(e, i, "interface name '%s' is too long", s);
		strcpy(field, s);
		return 0;
	case XRL_ARG_PREFIX:
		if (xrl_prefix_parse(s, field))
			return perr(e, i, "%s", xrl_errmsg());
		return 0;
	case XRL_ARG_ADDR:
		if (xrl_addr_parse(s, &c->family, c->addr))
			return perr(e, i, "%s", xrl_errmsg());
		return 0;
	case XRL_ARG_RATE:
		c->rule.r.unit = XRL_UNIT_PACKETS;
		if (!xrl_rate_parse(s, &c->rule.r.rate_count, &c->rule.r.rate_period_ns))
			return 0;
		if (!xrl_byte_rate_parse(s, &c->rule.r.rate_count, &c->rule.r.unit)) {
			c->rule.r.rate_period_ns = XRL_PERIOD_SEC;
			return 0;
		}
		return perr(e, i, "invalid rate '%s' (N/s, N/min or N/h; or as tc(8): 10mbit, 2mbps)", s);
	case XRL_ARG_SIZE:
		/* 0: the rule check says why not */
		if (!(why = xrl_dec_parse(s, 0, UINT_MAX, &v))) {
			c->rule.r.burst = v;
			return 0;
		}
		if (!xrl_size_parse(s, &v) && v <= UINT_MAX) {
			c->rule.r.burst = v;
			c->burst_sized = true;
			return 0;
		}
		if (!*s || !isalpha((unsigned char)s[strlen(s) - 1]))	/* a number, as before */
			return perr(e, i, "invalid burst '%s': %s (1 .. 4294967295)", s, why);
		return perr(e, i, "invalid burst '%s' (1 .. 4294967295; bytes as tc(8): 64kb, 1mb)", s);
	case XRL_ARG_PROTO: {
		long long pv;

		c->rule.r.ep = 1;
		if (!xrl_word_match(xrl_proto_words, s, prefix, &pv)) {
			c->rule.r.proto = pv;
			return 0;
		}
		if ((why = xrl_dec_parse(s, 0, 255, &v)))
			return perr(e, i, "invalid proto '%s' (tcp, udp, icmp, icmpv6 or a protocol number 0 .. 255)", s);
		c->rule.r.proto = v;
		return 0;
	}
	case XRL_ARG_PORTS: {
		const char *dash = strchr(s, '-');
		char lo[8];
		__u64 hi;

		if (dash && (size_t)(dash - s) < sizeof(lo)) {
			memcpy(lo, s, dash - s);
			lo[dash - s] = '\0';
		}
		if (dash ? (size_t)(dash - s) >= sizeof(lo) || xrl_dec_parse(lo, 0, 65535, &v) ||
			   xrl_dec_parse(dash + 1, 0, 65535, &hi) || hi < v
			 : (why = xrl_dec_parse(s, 0, 65535, &v)) != NULL)
			return perr(e, i, "invalid dport '%s' (N or N-M, 0 .. 65535, N <= M)", s);
		c->rule.r.dport_lo = v;
		c->rule.r.dport_hi = dash ? hi : v;
		c->ports_given = true;
		return 0;
	}
	case XRL_ARG_RATE_AT:
		if (xrl_rate_parse(s, (__u64 *)field, (__u64 *)field + 1))
			return perr(e, i, "invalid %s rate '%s' (N/s, N/min or N/h)", what(p), s);
		return 0;
	case XRL_ARG_KEYLEN:
		if (s[0] != '/')
			return perr(e, i, "invalid key length '%s' (/LEN)", s);
		if ((why = xrl_dec_parse(s + 1, 0, 128, &v)))
			return perr(e, i, "invalid key length '%s': %s (/LEN)", s, why);
		if (!v)	/* 0 would mean "default" internally */
			return perr(e, i, "key length /0 is shorter than the prefix or not useful: use a rule for the prefix instead");
		c->rule.r.key_len = v;
		return 0;
	case XRL_ARG_RULE_REF:
		if (!strpbrk(s, ".:/")) {
			if ((why = xrl_dec_parse(s, 1, UINT_MAX, &v)))
				return perr(e, i, "invalid rule id '%s': %s", s, why);
			c->del_id = v;
			return 0;
		}
		if (xrl_prefix_parse(s, &c->rule))
			return perr(e, i, "%s", xrl_errmsg());
		return 0;
	case XRL_ARG_STRING:
	case XRL_ARG_FILE:
		if (strlen(s) >= p->size)
			return perr(e, i, "%s '%s' is too long", what(p), s);
		strcpy(field, s);
		return 0;
	case XRL_ARG_TOPIC:	/* help's: commands of the CLI */
		if (strlen(s) >= p->size)
			return perr(e, i, "%s '%s' is too long", what(p), s);
		if (command_word(s, XRL_IN_CLI, prefix, field, p->size, &ok, i, e))
			return -EINVAL;
		if (!ok)
			return perr(e, i, "unknown command '%s' (it belongs in xdp-rl.conf)", s);
		return 0;
	case XRL_ARG_HOSTPORT: {
		struct sockaddr_storage ss;
		char why[160] = "ADDR:PORT or off";
		socklen_t sl;

		if ((strcmp(s, "off") && xrl_hostport_sockaddr(s, &ss, &sl, why, sizeof(why))) ||
		    strlen(s) >= sizeof(c->hostport))
			return perr(e, i, "invalid %s address '%s' (%s)", what(p), s, why);
		strcpy(c->hostport, s);
		return 0;
	}
	}
	return perr(e, i, "internal error: argument type %d", p->type);
}

/* Has the command keywords added later (struct xrl_param.late)? */
static void keyword_list(const struct xrl_param *params, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (const struct xrl_param *p = params; !is_end(p); p++)
		if (p->name && l < len)
			l += snprintf(buf + l, len - l, "%s%s", l ? ", " : "", p->name);
}

/* The words after the command's own: positional parameters in order, then
 * keywords in any order, each at most once. An optional positional is not
 * there when its place holds a keyword: "rule del id 3" ("r d i 3" on the
 * CLI; no optional positional takes a word that is a keyword's prefix). */
static int parse_params(const struct xrl_command *cmd, int argc, char **argv, int i,
			bool prefix, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	const struct xrl_param *ps = cmd->params, *p;
	int at[XRL_MAX_PARAMS], np = 0, err, k;
	char list[128], hint[96];
	struct xrl_names kws = { 0 };

	for (p = ps; !is_end(p) && np < XRL_MAX_PARAMS; p++) {
		at[np++] = -1;
		if (p->name) {
			xrl_names_add(&kws, p->name, true, p - ps);
			kws.late[kws.n - 1] = p->late;
		}
	}
	/* positional */
	for (p = ps; !is_end(p) && !p->name; p++) {
		if (i < argc && p->need != XRL_REQUIRED && xrl_names_match(&kws, argv[i], prefix) >= 0)
			break;
		if (i >= argc) {
			if (p->need != XRL_REQUIRED)
				break;
			if (p->meta)
				return perr(e, argc, "missing %s", p->meta);
			xrl_words_join(p->words, ", ", list, sizeof(list));
			return perr(e, argc, "missing %s (%s)", what(p), list);
		}
		at[p - ps] = i;
		if ((err = parse_value(p, argv, i++, prefix, c, e)))
			return err;
	}
	/* keywords */
	keyword_list(ps, list, sizeof(list));
	for (; i < argc; i++) {
		k = xrl_names_match(&kws, argv[i], prefix);
		if (k == XRL_NM_AMBIGUOUS) {
			xrl_names_prefixed(&kws, argv[i], list, sizeof(list));
			return perr(e, i, "ambiguous argument '%s' (%s)", argv[i], list);
		}
		if (k < 0) {
			xrl_names_hint(&kws, argv[i], hint, sizeof(hint));
			if (list[0])
				return perr(e, i, "unknown argument '%s' (%s)%s", argv[i], list, hint);
			return perr(e, i, "unknown argument '%s'", argv[i]);
		}
		p = ps + kws.key[k];
		if (at[p - ps] >= 0)
			return perr(e, i, "'%s' given twice", p->name);
		if (p->type != XRL_ARG_FLAG && ++i >= argc)
			return perr(e, i - 1, "missing value after '%s'", p->name);
		at[p - ps] = i;
		if ((err = parse_value(p, argv, i, prefix, c, e)))
			return err;
		if (p->then && i + 1 < argc && argv[i + 1][0] &&
		    (prefix ? !strncmp(p->then->name, argv[i + 1], strlen(argv[i + 1]))
			    : !strcmp(p->then->name, argv[i + 1]))) {
			if ((i += 2) >= argc)
				return perr(e, i - 1, "missing value after '%s %s'", p->name,
					    p->then->name);
			if ((err = parse_value(p->then, argv, i, prefix, c, e)))
				return err;
		}
	}
	for (p = ps; !is_end(p); p++)
		if (p->name && p->need == XRL_REQUIRED && at[p - ps] < 0)
			return perr(e, argc, "missing '%s %s'", p->name, p->meta);
	return cmd->check ? cmd->check(c, at, e) : 0;
}

/* ---- checks of what no single word says ---- */

enum { RA_PREFIX, RA_RATE, RA_BURST, RA_PER, RA_ACTION, RA_ID, RA_ON_FAILURE,
       RA_ALGO, RA_DRY_RUN, RA_PROTO, RA_DPORT, RA_SYN, RA_SCOPE,
       RA_AGGREGATE, RA_NEWKEYS };

/* An endpoint rule's words: proto first, dport and syn with it (what the
 * values then say is the rule check's). */
static int check_rule_endpoint(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	struct xrl_rule *r = &c->rule.r;

	if (at[RA_PROTO] < 0 && (at[RA_DPORT] >= 0 || at[RA_SYN] >= 0))
		return perr(e, at[RA_DPORT] >= 0 ? at[RA_DPORT] - 1 : at[RA_SYN],
			    "'%s' makes an endpoint rule: it needs 'proto tcp' (or udp for dport)",
			    at[RA_DPORT] >= 0 ? "dport" : "syn");
	if (r->ep && at[RA_DPORT] < 0) {
		r->dport_lo = 0;	/* every port: not "dport 0" */
		r->dport_hi = 65535;
	}
	return 0;
}

static int check_rule_add(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	/* the word of each field the rule check may blame: its value, or
	 * (kw) its keyword */
	static const struct { int at; bool kw; } field_at[] = {
		[XRL_FIELD_ACTION] = { RA_ACTION }, [XRL_FIELD_KEYLEN] = { RA_PER },
		[XRL_FIELD_RATE] = { RA_RATE }, [XRL_FIELD_BURST] = { RA_BURST },
		[XRL_FIELD_AGGREGATE] = { RA_AGGREGATE }, [XRL_FIELD_NEWKEYS] = { RA_NEWKEYS },
		[XRL_FIELD_DPORT] = { RA_DPORT, true }, [XRL_FIELD_SYN] = { RA_SYN },
		[XRL_FIELD_WINDOW_BURST] = { RA_BURST, true },
	};
	static const int unmetered[] = { RA_RATE, RA_BURST, RA_PER, RA_AGGREGATE, RA_NEWKEYS };
	static const char *const unmetered_name[] = { "rate", "burst", "per", "aggregate",
						      "new-keys" };
	struct xrl_rule *r = &c->rule.r;
	const struct xrl_rule_written written = {
		.dport = at[RA_DPORT] >= 0, .burst = at[RA_BURST] >= 0,
		.burst_sized = c->burst_sized,
	};
	enum xrl_rule_field bad;
	int argi = INT_MAX, k = -1;

	/* allow and deny are never metered: a rate, burst or key length with
	 * them would be silently dropped; blame the first one written */
	for (size_t j = 0; r->action != XRL_ACT_LIMIT && j < 5; j++) {
		if (at[unmetered[j]] >= 0 && at[unmetered[j]] < argi) {
			argi = at[unmetered[j]];
			k = j;
		}
	}
	if (k >= 0)
		return perr(e, argi - 1, "'%s' means nothing with action %s: %s rule is never metered (leave out rate, burst and per, or use action limit)",
			    unmetered_name[k], xrl_word_name(xrl_action_words, r->action),
			    r->action == XRL_ACT_ALLOW ? "an allow" : "a deny");
	/* an allow rule passes whether the daemon heartbeats or not */
	if (r->action == XRL_ACT_ALLOW && at[RA_ON_FAILURE] >= 0)
		return perr(e, at[RA_ON_FAILURE] - 1, "'on-failure' means nothing with action allow: an allow rule always passes, daemon or not (leave it out)");
	/* only a limit rule has a rate to share across the fleet */
	if (r->action != XRL_ACT_LIMIT && r->scope == XRL_SCOPE_FLEET)
		return perr(e, at[RA_SCOPE] - 1, "'scope fleet' means nothing with action %s: only a limit rule has a rate to share across hosts (leave out scope)",
			    xrl_word_name(xrl_action_words, r->action));
	/* the fleet bucket in Redis is a GCRA of packets of source keys: a
	 * window algorithm, a byte rate or an endpoint rule has no fleet
	 * counterpart (README, "Fleet-wide limits") */
	if (r->scope == XRL_SCOPE_FLEET && r->algo != XRL_ALGO_GCRA)
		return perr(e, at[RA_SCOPE] - 1, "'scope fleet' takes a token bucket: the fleet bucket in Redis is a GCRA (leave out algo, or scope)");
	if (r->scope == XRL_SCOPE_FLEET && r->unit != XRL_UNIT_PACKETS)
		return perr(e, at[RA_SCOPE] - 1, "'scope fleet' counts packets: the fleet bucket's clock is in microseconds, too coarse for a byte rate (use N/s, or leave out scope)");
	if (r->scope == XRL_SCOPE_FLEET && at[RA_PROTO] >= 0)
		return perr(e, at[RA_SCOPE] - 1, "'scope fleet' takes a source rule: endpoint rules (proto) are metered per host (leave out scope, or proto)");
	/* 0/s would read as "none" (the default) */
	if (at[RA_AGGREGATE] >= 0 && !r->agg_rate_count)
		return perr(e, at[RA_AGGREGATE], "aggregate rate must be at least 1");
	if (at[RA_NEWKEYS] >= 0 && !r->nk_rate_count)
		return perr(e, at[RA_NEWKEYS], "new-keys rate must be at least 1");
	if (r->action == XRL_ACT_LIMIT) {
		if (at[RA_RATE] < 0)
			return perr(e, INT_MAX, "missing 'rate N/s|N/min|N/h'");
		if (at[RA_BURST] < 0 && r->algo == XRL_ALGO_GCRA)
			return perr(e, INT_MAX, "missing 'burst N'");
	}
	if (check_rule_endpoint(c, at, e))
		return -EINVAL;
	if (xrl_rule_check_written(&c->rule, &written, &bad)) {
		/* blame the word that set the field; a default one, the prefix */
		if (field_at[bad].kw && at[field_at[bad].at] >= 0)
			argi = at[field_at[bad].at] - 1;
		else
			argi = at[field_at[bad].at];
		return perr(e, argi >= 0 ? argi : at[RA_PREFIX], "%s", xrl_errmsg());
	}
	if (r->action != XRL_ACT_LIMIT && at[RA_ALGO] >= 0)
		return perr(e, at[RA_ALGO] - 1, "'algo' means nothing with action %s: the rule is never metered (leave it out)",
			    xrl_word_name(xrl_action_words, r->action));
	return 0;
}

enum { RD_REF, RD_ID };

static int check_rule_del(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (at[RD_REF] >= 0 && at[RD_ID] >= 0)
		return perr(e, at[RD_ID] - 1, "the rule is named twice (ID, PREFIX or id ID: one of them)");
	if (at[RD_REF] < 0 && at[RD_ID] < 0)
		return perr(e, INT_MAX, "missing ID|PREFIX (or id ID)");
	return 0;
}

static int check_status(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	(void)e;
	if (at[0] < 0)
		c->sample_ms = 250;
	return 0;
}

enum { TOP_COUNT, TOP_SAMPLE, TOP_WATCH };

static int check_top(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	if (at[TOP_COUNT] < 0)
		c->count = c->watch ? 20 : 10;
	if (at[TOP_SAMPLE] < 0)
		c->sample_ms = 1000;
	return 0;
}

/* ---- the table ---- */

#define F(field) .off = offsetof(struct xrl_cmd, field), \
		 .size = sizeof(((struct xrl_cmd *)0)->field)
#define END {}

static const struct xrl_param p_attach[] = {
	{ "dev", XRL_ARG_IFACE, "IFACE", F(ifname), .need = XRL_REQUIRED,
	  .help = "the interface to attach to" },
	{ "mode", XRL_ARG_WORD, NULL, xrl_xdp_mode_words, F(xdp_mode), .what = "XDP mode",
	  .help = "the XDP mode (default: native where the driver has it)" },
	{ "keys", XRL_ARG_NUM, "N", .min = 16, .max = 1U << 30, F(keys),
	  .help = "bucket table size in keys, per family, 16 .. 1073741824 (first attach only)" },
	END,
};

static const struct xrl_param p_detach[] = {
	{ "dev", XRL_ARG_IFACE, "IFACE", F(ifname), .need = XRL_REQUIRED,
	  .help = "the interface to detach from" },
	{ "purge", XRL_ARG_FLAG, F(purge),
	  .help = "then remove the pins (rules, buckets, counters) if nothing is attached" },
	END,
};

static const struct xrl_param p_agg_burst = {
	"burst", XRL_ARG_NUM, "N", .min = 1, .max = UINT_MAX, .range = "1 .. 4294967295",
	F(rule.r.agg_burst), .what = "aggregate burst",
	.help = "the aggregate's burst in packets (default: one second of its rate)",
};

static const struct xrl_param p_rule_add[] = {
	[RA_PREFIX] = { NULL, XRL_ARG_PREFIX, "PREFIX", F(rule), .need = XRL_REQUIRED,
			.help = "the sources: ADDR/LEN, IPv4 or IPv6 (a bare address: one host)" },
	[RA_RATE] = { "rate", XRL_ARG_RATE, "N/s|N/min|N/h", .need = XRL_REQUIRED_IF,
		      .help = "packets per key per s, min or h; bytes: 10mbit, 2mbps (tc's units)" },
	[RA_BURST] = { "burst", XRL_ARG_SIZE, "N", .need = XRL_REQUIRED_IF,
		       .help = "bucket size in packets (bytes for a byte rate: 64kb); token bucket only" },
	[RA_PER] = { "per", XRL_ARG_KEYLEN, "/LEN",
		     .help = "key length in bits of the source (default /32, IPv6 /64)" },
	[RA_ACTION] = { "action", XRL_ARG_WORD, NULL, xrl_action_words, F(rule.r.action),
			.help = "limit (default), or always pass (allow) or drop (deny)" },
	[RA_ID] = { "id", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(rule.r.id),
		    .help = "the rule's id, 1 .. 4294967295 (default: the next free one)" },
	[RA_ON_FAILURE] = { "on-failure", XRL_ARG_WORD, NULL, xrl_on_failure_words,
			    F(rule.r.on_failure),
			    .help = "no heartbeat: pass (open, default) or drop (closed)" },
	[RA_ALGO] = { "algo", XRL_ARG_WORD, NULL, xrl_algo_words, F(rule.r.algo),
		      .what = "algorithm", .late = true,	/* "a" stays action */
		      .help = "the meter (default token-bucket; windows take no burst)" },
	[RA_DRY_RUN] = { "dry-run", XRL_ARG_FLAG, F(rule.r.dry_run), .late = true,
			 .help = "meter and count would-drops, pass everything" },
	[RA_PROTO] = { "proto", XRL_ARG_PROTO, "tcp|udp|icmp|icmpv6|N", .late = true,
		       .help = "an endpoint rule: this L4 protocol only (N: its number)" },
	[RA_DPORT] = { "dport", XRL_ARG_PORTS, "N|N-M", .late = true,
		       .help = "an endpoint rule: these destination ports only (tcp, udp)" },
	[RA_SYN] = { "syn", XRL_ARG_FLAG, F(rule.r.syn), .late = true,
		     .help = "an endpoint rule: TCP SYNs without ACK only" },
	[RA_SCOPE] = { "scope", XRL_ARG_WORD, NULL, xrl_scope_words, F(rule.r.scope), .late = true,
		       .help = "the limit holds per host (default) or across the fleet (Redis)" },
	[RA_AGGREGATE] = { "aggregate", XRL_ARG_RATE_AT, "N/s|N/min|N/h", F(rule.r.agg_rate_count),
			   .then = &p_agg_burst, .late = true,
			   .help = "one more bucket for all keys together, in packets per s, min or h" },
	[RA_NEWKEYS] = { "new-keys", XRL_ARG_RATE_AT, "N/s|N/min|N/h", F(rule.r.nk_rate_count),
			 .late = true,
			 .help = "new buckets per s, min or h (default: from the table size)" },
	END,
};

static const struct xrl_param p_rule_del[] = {
	[RD_REF] = { NULL, XRL_ARG_RULE_REF, "ID|PREFIX", .need = XRL_REQUIRED_IF,
		     .help = "the rule's id, or the prefix of its source rule" },
	[RD_ID] = { "id", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(del_id),
		    .need = XRL_ALTERNATIVE, .what = "rule id",
		    .help = "the rule of this id (an endpoint rule: only by id)" },
	END,
};

static const struct xrl_param p_rule_list[] = {
	{ "config", XRL_ARG_FLAG, F(list_config),
	  .help = "as xdp-rl.conf lines: what a config file reads back" },
	END,
};

static const struct xrl_param p_status[] = {
	{ "sample", XRL_ARG_NUM, "MS", .min = 0, .max = 60000, .range = "milliseconds, 0 .. 60000",
	  F(sample_ms),
	  .help = "the run-time figure over MS milliseconds now (default 250; 0: none)" },
	END,
};

static const struct xrl_param p_mode_set[] = {
	{ NULL, XRL_ARG_WORD, NULL, xrl_mode_words, F(mode), .need = XRL_REQUIRED, .what = "mode",
	  .help = "meter and drop, meter and pass, pass all, or drop all that rules meter" },
	END,
};

static const struct xrl_param p_show[] = {
	{ NULL, XRL_ARG_ADDR, "ADDR", .need = XRL_REQUIRED,
	  .help = "a source address, IPv4 or IPv6" },
	END,
};

static const struct xrl_param p_top[] = {
	[TOP_COUNT] = { "count", XRL_ARG_NUM, "N", .min = 1, .max = 1000000, F(count),
			.help = "how many keys, 1 .. 1000000 (default 10)" },
	[TOP_SAMPLE] = { "sample", XRL_ARG_NUM, "MS", .min = 10, .max = 60000,
			 .range = "milliseconds, 10 .. 60000", F(sample_ms),
			 .help = "the sample in milliseconds, 10 .. 60000 (default 1000)" },
	[TOP_WATCH] = { "watch", XRL_ARG_FLAG, F(watch),
			.help = "a live full screen, a sample at a time, until q" },
	END,
};

static const struct xrl_param p_key_list[] = {
	{ "rule", XRL_ARG_NUM, "ID", .min = 1, .max = UINT_MAX, F(key_rule), .what = "rule id",
	  .help = "the keys of this rule only" },
	{ "limited", XRL_ARG_FLAG, F(limited),
	  .help = "only the keys without a token now" },
	END,
};

static const struct xrl_param p_key_addr[] = {
	{ NULL, XRL_ARG_ADDR, "ADDR", .need = XRL_REQUIRED,
	  .help = "a source address: the key of its rule" },
	END,
};

static const struct xrl_param p_events[] = {
	{ "count", XRL_ARG_NUM, "N", .min = 1, .max = 1000000, F(count),
	  .help = "stop after N events, 1 .. 1000000" },
	{ "timeout", XRL_ARG_NUM, "SEC", .min = 1, .max = 86400, F(timeout_s),
	  .help = "stop after SEC seconds, 1 .. 86400" },
	END,
};

static const struct xrl_param p_help[] = {
	{ NULL, XRL_ARG_TOPIC, "COMMAND", F(topic), .what = "command",
	  .help = "a command or its first word" },
	END,
};

static const struct xrl_param p_replay[] = {
	{ NULL, XRL_ARG_FILE, "FILE", F(capture), .need = XRL_REQUIRED, .what = "capture file",
	  .help = "a pcap or pcapng capture (Ethernet, Linux cooked or raw IP)" },
	{ "config", XRL_ARG_FILE, "FILE", F(config), .what = "configuration file",
	  .help = "the rules of this xdp-rl.conf (default: the pinned rules)" },
	END,
};

static const struct xrl_param p_interface[] = {
	{ NULL, XRL_ARG_IFACE, "IFACE", F(ifname), .need = XRL_REQUIRED,
	  .help = "an interface the daemon attaches to" },
	{ "mode", XRL_ARG_WORD, NULL, xrl_xdp_mode_words, F(xdp_mode), .what = "XDP mode",
	  .help = "the XDP mode (default: native where the driver has it)" },
	END,
};

static const struct xrl_param p_heartbeat[] = {
	{ NULL, XRL_ARG_NUM, "MS", .min = 10, .max = 3600000, .range = "milliseconds, 10 .. 3600000",
	  F(ms), .need = XRL_REQUIRED, .what = "heartbeat",
	  .help = "milliseconds between heartbeats, 10 .. 3600000" },
	END,
};

static const struct xrl_param p_watchdog[] = {
	{ NULL, XRL_ARG_NUM, "MS", .min = 0, .max = 3600000, .range = "milliseconds, 0 .. 3600000",
	  F(ms), .need = XRL_REQUIRED, .what = "watchdog",
	  .help = "milliseconds without a heartbeat, 0 .. 3600000 (0: never)" },
	END,
};

static const struct xrl_param p_metrics[] = {
	{ NULL, XRL_ARG_HOSTPORT, "ADDR:PORT|off", .need = XRL_REQUIRED, .what = "metrics",
	  .help = "the address to listen on, or off: no metrics server" },
	END,
};

static const struct xrl_param p_fleet_redis[] = {
	{ NULL, XRL_ARG_STRING, "HOST:PORT[,HOST:PORT...]", F(fleet_redis), .need = XRL_REQUIRED,
	  .what = "Redis address",
	  .help = "the Redis server, or the seeds of a cluster" },
	{ "cluster", XRL_ARG_FLAG, F(fleet_cluster),
	  .help = "the addresses are a Redis Cluster's" },
	{ "sync", XRL_ARG_NUM, "MS", .min = 10, .max = 10000, .range = "milliseconds, 10 .. 10000",
	  F(fleet_sync_ms), .help = "milliseconds between syncs, 10 .. 10000" },
	{ "timeout", XRL_ARG_NUM, "MS", .min = 1, .max = 1000, .range = "milliseconds, 1 .. 1000",
	  F(fleet_timeout_ms), .help = "a call's deadline in milliseconds, 1 .. 1000" },
	{ "hosts", XRL_ARG_NUM, "N", .min = 1, .max = 65536, .range = "hosts, 1 .. 65536",
	  F(fleet_hosts), .help = "the hosts a closed rule assumes before its first sync (default 2)" },
	END,
};

static const struct xrl_param p_fleet_host[] = {
	{ NULL, XRL_ARG_STRING, "NAME", F(fleet_host), .need = XRL_REQUIRED, .what = "host name",
	  .help = "this host's name in the fleet's keys" },
	END,
};


/* What a parameter takes, as help shows it: its meta ("N/s"), or its words
 * joined ("tcp|udp"), or nothing. */
static void param_value(const struct xrl_param *p, char *val, size_t len)
{
	if (p->meta)
		snprintf(val, len, "%s", p->meta);
	else if (p->words)
		xrl_words_join(p->words, "|", val, len);
	else
		val[0] = '\0';
}

static const struct xrl_param p_fleet_auth[] = {
	{ NULL, XRL_ARG_FILE, "FILE", F(fleet_auth), .need = XRL_REQUIRED,
	  .what = "credentials file",
	  .help = "PASSWORD or USER PASSWORD on one line, readable by root only" },
	END,
};

#define BOTH (XRL_IN_CLI | XRL_IN_CONFIG)

const struct xrl_command xrl_commands[] = {
	{ "attach", XRL_CMD_ATTACH, XRL_IN_CLI, p_attach, NULL,
	  "load (or reuse) the program and its maps and attach to IFACE" },
	{ "detach", XRL_CMD_DETACH, XRL_IN_CLI, p_detach, NULL,
	  "detach from IFACE (refused while xdp-rld serves it); purge: remove the pins once nothing is attached" },
	{ "purge", XRL_CMD_PURGE, XRL_IN_CLI, NULL, NULL,
	  "remove the pins (rules, buckets, counters); refused while attached anywhere" },
	{ "upgrade", XRL_CMD_UPGRADE, XRL_IN_CLI, NULL, NULL,
	  "this build's program takes over the running one's maps and links, state kept" },
	{ "status", XRL_CMD_STATUS, XRL_IN_CLI, p_status, check_status,
	  "program, mode, rules, keys, the daemon's heartbeat, run time per packet now, interfaces",
	  .preferred = true },
	{ "rule add", XRL_CMD_RULE_ADD, BOTH, p_rule_add, check_rule_add,
	  "add a rule: a bucket of burst refilled at rate for each key under PREFIX",
	  .preferred = true },	/* "r" was rule's before replay came */
	{ "rule del", XRL_CMD_RULE_DEL, XRL_IN_CLI, p_rule_del, check_rule_del,
	  "remove one rule" },
	{ "rule list", XRL_CMD_RULE_LIST, XRL_IN_CLI, p_rule_list, NULL,
	  "list the rules; config: as rule add lines of xdp-rl.conf, every setting written out" },
	{ "rule flush", XRL_CMD_RULE_FLUSH, XRL_IN_CLI, NULL, NULL,
	  "remove every rule" },
	{ "mode", XRL_CMD_MODE_SHOW, XRL_IN_CLI, NULL, NULL,
	  "the data path's mode" },
	{ "mode set", XRL_CMD_MODE_SET, BOTH, p_mode_set, NULL,
	  "switch the data path's mode" },
	{ "stats", XRL_CMD_STATS, XRL_IN_CLI, NULL, NULL,
	  "what each rule passed and dropped; global counters" },
	{ "show", XRL_CMD_SHOW, XRL_IN_CLI, p_show, NULL,
	  "the rule and the bucket of ADDR" },
	{ "top", XRL_CMD_TOP, XRL_IN_CLI, p_top, check_top,
	  "the N keys dropping most over a sample of MS (default 10, 1000 ms); watch: live" },
	{ "key list", XRL_CMD_KEY_LIST, XRL_IN_CLI, p_key_list, NULL,
	  "the tracked keys (of rule ID; limited: without a token now)" },
	{ "key reset", XRL_CMD_KEY_RESET, XRL_IN_CLI, p_key_addr, NULL,
	  "forgive the key of ADDR: its bucket full again" },
	{ "key del", XRL_CMD_KEY_DEL, XRL_IN_CLI, p_key_addr, NULL,
	  "forget the key of ADDR: delete its bucket" },
	{ "events", XRL_CMD_EVENTS, XRL_IN_CLI, p_events, NULL,
	  "follow keys becoming limited and no longer limited; stop after N or SEC" },
	{ "replay", XRL_CMD_REPLAY, XRL_IN_CLI, p_replay, NULL,
	  "what the rules (of the config FILE, else the pinned ones) would do to a capture" },
	{ "help", XRL_CMD_HELP, XRL_IN_CLI, p_help, NULL,
	  "the commands (all of them, or those of COMMAND) and what they take" },
	{ "interface", XRL_CMD_INTERFACE, XRL_IN_CONFIG, p_interface, NULL,
	  "attach to IFACE (as often as needed)" },
	{ "heartbeat", XRL_CMD_HEARTBEAT, XRL_IN_CONFIG, p_heartbeat, NULL,
	  "ms between the daemon's heartbeats (default 1000)" },
	{ "watchdog", XRL_CMD_WATCHDOG, XRL_IN_CONFIG, p_watchdog, NULL,
	  "ms without a heartbeat before rules follow on-failure (default 5000; 0: never)" },
	{ "metrics", XRL_CMD_METRICS, XRL_IN_CONFIG, p_metrics, NULL,
	  "where to serve Prometheus metrics (default 127.0.0.1:9437)" },
	{ "fleet redis", XRL_CMD_FLEET_REDIS, XRL_IN_CONFIG, p_fleet_redis, NULL,
	  "share scope fleet rules through Redis (cluster: a Redis Cluster); sync, timeout in ms" },
	{ "fleet host", XRL_CMD_FLEET_HOST, XRL_IN_CONFIG, p_fleet_host, NULL,
	  "this host's name in the fleet (default: the hostname)" },
	{ "fleet auth", XRL_CMD_FLEET_AUTH, XRL_IN_CONFIG, p_fleet_auth, NULL,
	  "Redis credentials: FILE holds PASSWORD or USER PASSWORD on one line" },
};

const size_t xrl_ncommands = sizeof(xrl_commands) / sizeof(xrl_commands[0]);

/* ---- the synopsis ---- */

bool xrl_param_end(const struct xrl_param *p)
{
	return is_end(p);
}

void xrl_cmd_synopsis(const struct xrl_command *cmd, char *buf, size_t len)
{
	size_t l = snprintf(buf, len, "%s", cmd->name);

	for (const struct xrl_param *p = cmd->params; !is_end(p) && l < len; p++) {
		char val[128];
		bool opt = p->need == XRL_OPTIONAL;

		if (p->need == XRL_ALTERNATIVE)
			continue;	/* shown beside its positional */
		param_value(p, val, sizeof(val));
		if (p->type == XRL_ARG_FLAG)
			l += snprintf(buf + l, len - l, " %s%s%s", opt ? "[" : "", p->name, opt ? "]" : "");
		else if (p->name && p->then)	/* "[aggregate RATE [burst N]]" */
			l += snprintf(buf + l, len - l, " %s%s %s [%s %s]%s", opt ? "[" : "", p->name,
				      val, p->then->name, p->then->meta, opt ? "]" : "");
		else if (p->name)
			l += snprintf(buf + l, len - l, " %s%s %s%s", opt ? "[" : "", p->name, val,
				      opt ? "]" : "");
		else
			l += snprintf(buf + l, len - l, " %s%s", opt ? "[" : "", val);
		if (!p->name) {	/* "ID|PREFIX|id ID" */
			for (const struct xrl_param *q = p + 1; !is_end(q) && l < len; q++)
				if (q->need == XRL_ALTERNATIVE)
					l += snprintf(buf + l, len - l, "|%s %s", q->name, q->meta);
			if (opt && l < len)
				l += snprintf(buf + l, len - l, "]");
		}
	}
}

/* One line of a parameter: "rate N/s|N/min|N/h" and its help beside it,
 * or under it when the words are too long for the column. */
#define HELP_COL 30

static void param_help(FILE *f, const struct xrl_param *p, const char *indent)
{
	char val[128], kw[192];

	param_value(p, val, sizeof(val));
	if (p->type == XRL_ARG_FLAG)
		snprintf(kw, sizeof(kw), "%s%s", indent, p->name);
	else if (p->name)
		snprintf(kw, sizeof(kw), "%s%s %s", indent, p->name, val);
	else
		snprintf(kw, sizeof(kw), "%s%s", indent, val);
	if (strlen(kw) < HELP_COL)
		fprintf(f, "    %-*s %s\n", HELP_COL, kw, p->help ? p->help : "");
	else
		fprintf(f, "    %s\n    %-*s %s\n", kw, HELP_COL, "", p->help ? p->help : "");
}

int xrl_cmd_help(FILE *f, const struct xrl_command *cmd)
{
	bool optional = false;
	char syn[512];
	size_t l;

	/* the required words in the synopsis, the optional ones below it */
	l = snprintf(syn, sizeof(syn), "%s", cmd->name);
	for (const struct xrl_param *p = cmd->params; p && !is_end(p); p++) {
		if (p->need == XRL_ALTERNATIVE) {	/* "ID|PREFIX|id ID" */
			l += snprintf(syn + l, sizeof(syn) - l, "|%s %s", p->name, p->meta);
			if (l >= sizeof(syn))
				break;
			continue;
		}
		if (p->need == XRL_OPTIONAL) {
			optional = true;
			continue;
		}
		if (p->name)
			l += snprintf(syn + l, sizeof(syn) - l, " %s %s", p->name,
				      p->meta ? p->meta : "WORD");
		else if (p->meta)
			l += snprintf(syn + l, sizeof(syn) - l, " %s", p->meta);
		else {
			char val[128];

			xrl_words_join(p->words, "|", val, sizeof(val));
			l += snprintf(syn + l, sizeof(syn) - l, " %s", val);
		}
		if (l >= sizeof(syn))
			break;
	}
	fprintf(f, "  %s%s\n    %s\n", syn, optional ? " [KEYWORD VALUE]..." : "", cmd->help);
	for (const struct xrl_param *p = cmd->params; p && !is_end(p); p++) {
		param_help(f, p, "");
		if (p->then)
			param_help(f, p->then, "  ");
	}
	return 0;
}

bool xrl_cmd_in_topic(const struct xrl_command *cmd, const char *topic)
{
	size_t tl = strlen(topic);

	return !strncmp(cmd->name, topic, tl) && (!cmd->name[tl] || cmd->name[tl] == ' ');
}

int xrl_usage(FILE *f, unsigned where, const char *topic)
{
	int n = 0;

	for (size_t i = 0; i < xrl_ncommands; i++) {
		const struct xrl_command *cmd = &xrl_commands[i];
		char syn[512];

		if (!(cmd->where & where))
			continue;
		if (topic && !xrl_cmd_in_topic(cmd, topic))
			continue;
		xrl_cmd_synopsis(cmd, syn, sizeof(syn));
		fprintf(f, "  %s\n", syn);
		n++;
	}
	return n ? 0 : -ENOENT;
}

/* ---- the parser ---- */

/* The names of the commands written where: "rule add, mode set, ..." or,
 * with group, the second words of that group: "add, del, list, flush". */
static void command_list(unsigned where, const char *group, char *buf, size_t len)
{
	size_t gl = group ? strlen(group) : 0, l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < xrl_ncommands && l < len; i++) {
		const char *name = xrl_commands[i].name;

		if (!(xrl_commands[i].where & where))
			continue;
		if (group) {
			if (strncmp(name, group, gl) || name[gl] != ' ')
				continue;
			name += gl + 1;
		}
		l += snprintf(buf + l, len - l, "%s%s", l ? ", " : "", name);
	}
}

int xrl_cmd_parse(int argc, char **argv, unsigned where, struct xrl_cmd *c,
		  struct xrl_parse_err *e)
{
	const struct xrl_command *cmd = NULL, *single = NULL;
	bool cli = where == XRL_IN_CLI, ok;
	char w0[24], list[160], hint[96];
	struct xrl_names subs = { 0 };
	int words = 1, err, k;
	size_t wl;

	memset(c, 0, sizeof(*c));
	memset(e, 0, sizeof(*e));
	if (argc < 1)
		return perr(e, 0, "missing command");
	if (command_word(argv[0], where, cli, w0, sizeof(w0), &ok, 0, e))
		return -EINVAL;
	/* the command that is w0 alone ("mode"), the sub-commands of w0 ("set") */
	wl = strlen(w0);
	for (size_t i = 0; i < xrl_ncommands; i++) {
		const char *name = xrl_commands[i].name;

		if (strncmp(name, w0, wl))
			continue;
		if (!name[wl])
			single = &xrl_commands[i];
		else if (name[wl] == ' ')
			xrl_names_add(&subs, name + wl + 1, xrl_commands[i].where & where, i);
	}
	if (subs.n && cli)
		xrl_names_add(&subs, "help", true, -1);
	/* after a group's word comes its sub-command ("mode" alone is one) */
	if (subs.n && argc >= 2) {
		k = xrl_names_match(&subs, argv[1], cli);
		if (k == XRL_NM_AMBIGUOUS) {
			xrl_names_prefixed(&subs, argv[1], list, sizeof(list));
			return perr(e, 1, "ambiguous %s command '%s' (%s)", w0, argv[1], list);
		}
		if (k < 0) {
			command_list(where, w0, list, sizeof(list));
			xrl_names_hint(&subs, argv[1], hint, sizeof(hint));
			return perr(e, 1, "unknown %s command '%s' (%s)%s", w0, argv[1], list, hint);
		}
		if (subs.key[k] < 0) {	/* "rule help" */
			c->kind = XRL_CMD_HELP;
			snprintf(c->topic, sizeof(c->topic), "%s", w0);
			if (argc > 2)
				return perr(e, 2, "unexpected '%s' after help", argv[2]);
			return 0;
		}
		cmd = &xrl_commands[subs.key[k]];
		words = 2;
	} else if (single) {
		cmd = single;
	} else {
		command_list(where, w0, list, sizeof(list));
		return perr(e, 1, "missing %s command (%s)", w0, list);
	}
	if (!(cmd->where & where)) {
		if (where == XRL_IN_CONFIG) {
			command_list(XRL_IN_CONFIG, NULL, list, sizeof(list));
			return perr(e, 0, "'%s' is not a configuration command (%s)",
				    cmd->name, list);
		}
		return perr(e, 0, "unknown command '%s' (it belongs in xdp-rl.conf)", cmd->name);
	}
	/* "rule add help": the usage of that command */
	if (cli && argc > words && !strcmp(argv[words], "help")) {
		c->kind = XRL_CMD_HELP;
		snprintf(c->topic, sizeof(c->topic), "%s", cmd->name);
		if (argc > words + 1)
			return perr(e, words + 1, "unexpected '%s' after help", argv[words + 1]);
		return 0;
	}
	c->kind = cmd->kind;
	err = parse_params(cmd, argc, argv, words, cli, c, e);
	if (err && e->argi > argc)
		e->argi = argc;	/* "missing ...": past the end */
	return err;
}

int xrl_split_words(char *line, char **argv, int *cols, int max)
{
	char *p = line;
	int argc = 0;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			break;
		if (argc == max)
			return -E2BIG;
		if (cols)
			cols[argc] = p - line + 1;
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#')
			p++;
		if (*p == '#') {
			*p = '\0';
			break;
		}
		if (*p)
			*p++ = '\0';
	}
	if (cols)
		cols[argc] = p - line + 1;	/* "missing ..." points past the end */
	return argc;
}

int xrl_cmd_parse_line(const char *line, unsigned where, struct xrl_cmd *c,
		       struct xrl_parse_err *e)
{
	char buf[1024], *argv[XRL_MAX_WORDS];
	int argc;

	snprintf(buf, sizeof(buf), "%s", line);
	argc = xrl_split_words(buf, argv, NULL, XRL_MAX_WORDS);
	if (argc < 0) {
		memset(e, 0, sizeof(*e));
		snprintf(e->msg, sizeof(e->msg), "too many words");
		return -EINVAL;
	}
	return xrl_cmd_parse(argc, argv, where, c, e);
}

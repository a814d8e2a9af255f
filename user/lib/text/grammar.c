// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: the grammar engine of xdp-rlctl and xdp-rl.conf(5).
 * One parser reads the command table (commands.c) for both: command words,
 * positional values, keywords, prefixes on the CLI, hints for the rest.
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

#include "base/hostport.h"
#include "base/log.h"
#include "xrl_meter.h"


static const char *what(const struct xrl_param *p)
{
	return p->what ? p->what : p->name ? p->name : p->meta;
}

/* An int, a __u32 or a long into a field of 1, 2, 4 or 8 bytes. */
static void store(void *field, unsigned size, __u64 v)
{
	switch (size) {
	case 1: *(__u8 *)field = v; break;
	case 2: *(__u16 *)field = v; break;
	case 8: *(long *)field = v; break;
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
		return xrl_parse_fail(e, i, "ambiguous command '%s' (%s)", s, list);
	}
	if (k < 0) {
		xrl_names_hint(&ns, s, list, sizeof(list));
		return xrl_parse_fail(e, i, "unknown command '%s'%s", s, list);
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
			return xrl_parse_fail(e, i, "ambiguous %s '%s' (%s)", what(p), s, list);
		}
		if (k < 0) {
			xrl_words_join(p->words, ", ", list, sizeof(list));
			xrl_names_hint(&ns, s, hint, sizeof(hint));
			return xrl_parse_fail(e, i, "invalid %s '%s' (%s)%s", what(p), s, list, hint);
		}
		store(field, p->size, ns.key[k]);
		return 0;
	}
	case XRL_ARG_NUM:
		if ((why = xrl_dec_parse(s, p->min, p->max, &v))) {
			if (p->range)
				return xrl_parse_fail(e, i, "invalid %s '%s': %s (%s)", what(p), s, why, p->range);
			return xrl_parse_fail(e, i, "invalid %s '%s': %s (%llu .. %llu)", what(p), s, why,
				    (unsigned long long)p->min, (unsigned long long)p->max);
		}
		store(field, p->size, v);
		return 0;
	case XRL_ARG_IFACE:
		if (strlen(s) >= IF_NAMESIZE)
			return xrl_parse_fail(e, i, "interface name '%s' is too long", s);
		strcpy(field, s);
		return 0;
	case XRL_ARG_PREFIX:
		if (s[0] == '@') {	/* a set rule: the set's name */
			struct xrl_rule_entry *re = field;

			if (xrl_set_name_check(s + 1))
				return xrl_parse_fail(e, i, "%s", xrl_errmsg());
			re->family = 0;
			re->prefix_len = 0;
			snprintf(re->set, sizeof(re->set), "%s", s + 1);
			return 0;
		}
		if (xrl_prefix_parse(s, field))
			return xrl_parse_fail(e, i, "%s", xrl_errmsg());
		return 0;
	case XRL_ARG_ADDR: {
		struct xrl_args_addr *a = field;

		if (xrl_addr_parse(s, &a->family, a->addr))
			return xrl_parse_fail(e, i, "%s", xrl_errmsg());
		return 0;
	}
	case XRL_ARG_RATE:
		c->rule.r.unit = XRL_UNIT_PACKETS;
		if (!xrl_rate_parse(s, &c->rule.r.rate_count, &c->rule.r.rate_period_ns))
			return 0;
		if (!xrl_byte_rate_parse(s, &c->rule.r.rate_count, &c->rule.r.unit)) {
			c->rule.r.rate_period_ns = XRL_PERIOD_SEC;
			return 0;
		}
		return xrl_parse_fail(e, i, "invalid rate '%s' (N/s, N/min or N/h; or as tc(8): 10mbit, 2mbps)", s);
	case XRL_ARG_SIZE:
		/* 0: the rule check says why not */
		if (!(why = xrl_dec_parse(s, 0, UINT_MAX, &v))) {
			c->rule.r.burst = v;
			return 0;
		}
		if (!xrl_size_parse(s, &v) && v <= UINT_MAX) {
			c->rule.r.burst = v;
			c->rule_add.written.burst_sized = true;
			return 0;
		}
		if (!*s || !isalpha((unsigned char)s[strlen(s) - 1]))	/* a number, as before */
			return xrl_parse_fail(e, i, "invalid burst '%s': %s (1 .. 4294967295)", s, why);
		return xrl_parse_fail(e, i, "invalid burst '%s' (1 .. 4294967295; bytes as tc(8): 64kb, 1mb)", s);
	case XRL_ARG_PROTO: {
		long long pv;

		c->rule.r.ep = 1;
		if (!xrl_word_match(xrl_proto_words, s, prefix, &pv)) {
			c->rule.r.proto = pv;
			return 0;
		}
		if ((why = xrl_dec_parse(s, 0, 255, &v)))
			return xrl_parse_fail(e, i, "invalid proto '%s' (tcp, udp, icmp, icmpv6 or a protocol number 0 .. 255)", s);
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
			return xrl_parse_fail(e, i, "invalid dport '%s' (N or N-M, 0 .. 65535, N <= M)", s);
		c->rule.r.dport_lo = v;
		c->rule.r.dport_hi = dash ? hi : v;
		c->rule_add.written.dport = true;
		return 0;
	}
	case XRL_ARG_RATE_AT:
		if (xrl_rate_parse(s, (__u64 *)field, (__u64 *)field + 1))
			return xrl_parse_fail(e, i, "invalid %s rate '%s' (N/s, N/min or N/h)", what(p), s);
		return 0;
	case XRL_ARG_KEYLEN:
		if (s[0] != '/')
			return xrl_parse_fail(e, i, "invalid key length '%s' (/LEN)", s);
		if ((why = xrl_dec_parse(s + 1, 0, 128, &v)))
			return xrl_parse_fail(e, i, "invalid key length '%s': %s (/LEN)", s, why);
		if (!v)	/* 0 would mean "default" internally */
			return xrl_parse_fail(e, i, "key length /0 is shorter than the prefix or not useful: use a rule for the prefix instead");
		c->rule.r.key_len = v;
		return 0;
	case XRL_ARG_RULE_REF:
		if (!strpbrk(s, ".:/")) {
			if ((why = xrl_dec_parse(s, 1, UINT_MAX, &v)))
				return xrl_parse_fail(e, i, "invalid rule id '%s': %s", s, why);
			*(__u32 *)field = v;
			return 0;
		}
		if (xrl_prefix_parse(s, &c->rule))
			return xrl_parse_fail(e, i, "%s", xrl_errmsg());
		return 0;
	case XRL_ARG_STRING:
	case XRL_ARG_FILE:
		if (strlen(s) >= p->size)
			return xrl_parse_fail(e, i, "%s '%s' is too long", what(p), s);
		strcpy(field, s);
		return 0;
	case XRL_ARG_DURATION:
		if (xrl_duration_parse(s, p->max, &v))
			return xrl_parse_fail(e, i, "%s", xrl_errmsg());
		if (v < p->min)
			return xrl_parse_fail(e, i, "%s '%s' is too short (at least %llus)", what(p), s,
					      (unsigned long long)p->min);
		store(field, p->size, v);
		return 0;
	case XRL_ARG_TOPIC:	/* help's: commands of the CLI */
		if (strlen(s) >= p->size)
			return xrl_parse_fail(e, i, "%s '%s' is too long", what(p), s);
		if (command_word(s, XRL_IN_CLI, prefix, field, p->size, &ok, i, e))
			return -EINVAL;
		if (!ok)
			return xrl_parse_fail(e, i, "unknown command '%s' (it belongs in xdp-rl.conf)", s);
		return 0;
	case XRL_ARG_HOSTPORT: {
		struct sockaddr_storage ss;
		char why[160] = "ADDR:PORT or off";
		socklen_t sl;

		if ((strcmp(s, "off") && xrl_hostport_sockaddr(s, &ss, &sl, why, sizeof(why))) ||
		    strlen(s) >= p->size)
			return xrl_parse_fail(e, i, "invalid %s address '%s' (%s)", what(p), s, why);
		strcpy(field, s);
		return 0;
	}
	}
	return xrl_parse_fail(e, i, "internal error: argument type %d", p->type);
}

/* Has the command keywords added later (struct xrl_param.late)? */
static void keyword_list(const struct xrl_param *params, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (const struct xrl_param *p = params; !xrl_param_end(p); p++)
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
	char list[320], hint[96];
	struct xrl_names kws = { 0 };

	for (p = ps; !xrl_param_end(p) && np < XRL_MAX_PARAMS; p++) {
		at[np++] = -1;
		if (p->name) {
			xrl_names_add(&kws, p->name, true, p - ps);
			kws.late[kws.n - 1] = p->late;
		}
	}
	/* positional */
	for (p = ps; !xrl_param_end(p) && !p->name; p++) {
		if (i < argc && p->need != XRL_REQUIRED && xrl_names_match(&kws, argv[i], prefix) >= 0)
			break;
		if (i >= argc) {
			if (p->need != XRL_REQUIRED)
				break;
			if (p->meta)
				return xrl_parse_fail(e, argc, "missing %s", p->meta);
			xrl_words_join(p->words, ", ", list, sizeof(list));
			return xrl_parse_fail(e, argc, "missing %s (%s)", what(p), list);
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
			return xrl_parse_fail(e, i, "ambiguous argument '%s' (%s)", argv[i], list);
		}
		if (k < 0) {
			xrl_names_hint(&kws, argv[i], hint, sizeof(hint));
			if (list[0])
				return xrl_parse_fail(e, i, "unknown argument '%s' (%s)%s", argv[i], list, hint);
			return xrl_parse_fail(e, i, "unknown argument '%s'", argv[i]);
		}
		p = ps + kws.key[k];
		if (at[p - ps] >= 0)
			return xrl_parse_fail(e, i, "'%s' given twice", p->name);
		if (p->type != XRL_ARG_FLAG && ++i >= argc)
			return xrl_parse_fail(e, i - 1, "missing value after '%s'", p->name);
		at[p - ps] = i;
		if ((err = parse_value(p, argv, i, prefix, c, e)))
			return err;
		if (p->then && i + 1 < argc && argv[i + 1][0] &&
		    (prefix ? !strncmp(p->then->name, argv[i + 1], strlen(argv[i + 1]))
			    : !strcmp(p->then->name, argv[i + 1]))) {
			if ((i += 2) >= argc)
				return xrl_parse_fail(e, i - 1, "missing value after '%s %s'", p->name,
					    p->then->name);
			if ((err = parse_value(p->then, argv, i, prefix, c, e)))
				return err;
		}
	}
	for (p = ps; !xrl_param_end(p); p++)
		if (p->name && p->need == XRL_REQUIRED && at[p - ps] < 0)
			return xrl_parse_fail(e, argc, "missing '%s %s'", p->name, p->meta);
	return cmd->check ? cmd->check(c, at, e) : 0;
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
		return xrl_parse_fail(e, 0, "missing command");
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
	/* a configuration file's "set NAME file ...": the group's word is a
	 * command of its own there, and NAME is no sub-command */
	if (subs.n && argc >= 2 && !cli && single && (single->where & where) &&
	    xrl_names_match(&subs, argv[1], cli) < 0)
		subs.n = 0;
	if (subs.n && argc >= 2) {
		k = xrl_names_match(&subs, argv[1], cli);
		if (k == XRL_NM_AMBIGUOUS) {
			xrl_names_prefixed(&subs, argv[1], list, sizeof(list));
			return xrl_parse_fail(e, 1, "ambiguous %s command '%s' (%s)", w0, argv[1], list);
		}
		if (k < 0) {
			command_list(where, w0, list, sizeof(list));
			xrl_names_hint(&subs, argv[1], hint, sizeof(hint));
			return xrl_parse_fail(e, 1, "unknown %s command '%s' (%s)%s", w0, argv[1], list, hint);
		}
		if (subs.key[k] < 0) {	/* "rule help" */
			c->kind = XRL_CMD_HELP;
			snprintf(c->help.topic, sizeof(c->help.topic), "%s", w0);
			if (argc > 2)
				return xrl_parse_fail(e, 2, "unexpected '%s' after help", argv[2]);
			return 0;
		}
		cmd = &xrl_commands[subs.key[k]];
		words = 2;
	} else if (single) {
		cmd = single;
	} else {
		command_list(where, w0, list, sizeof(list));
		return xrl_parse_fail(e, 1, "missing %s command (%s)", w0, list);
	}
	if (!(cmd->where & where)) {
		if (where == XRL_IN_CONFIG) {
			command_list(XRL_IN_CONFIG, NULL, list, sizeof(list));
			return xrl_parse_fail(e, 0, "'%s' is not a configuration command (%s)",
				    cmd->name, list);
		}
		return xrl_parse_fail(e, 0, "unknown command '%s' (it belongs in xdp-rl.conf)", cmd->name);
	}
	/* "rule add help": the usage of that command */
	if (cli && argc > words && !strcmp(argv[words], "help")) {
		c->kind = XRL_CMD_HELP;
		snprintf(c->help.topic, sizeof(c->help.topic), "%s", cmd->name);
		if (argc > words + 1)
			return xrl_parse_fail(e, words + 1, "unexpected '%s' after help", argv[words + 1]);
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

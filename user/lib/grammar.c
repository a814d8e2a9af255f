// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "grammar.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A whole decimal number in [min, max]: NULL, or what is wrong with it. */
static const char *parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	return xrl_dec_parse(s, min, max, out);
}

static const struct {
	const char *name;
	__u64 period_ns;
} rate_units[] = {
	{ "s", XRL_PERIOD_SEC }, { "sec", XRL_PERIOD_SEC }, { "second", XRL_PERIOD_SEC },
	{ "min", XRL_PERIOD_MIN }, { "minute", XRL_PERIOD_MIN },
	{ "h", XRL_PERIOD_HOUR }, { "hour", XRL_PERIOD_HOUR },
};

int xrl_rate_parse(const char *s, __u64 *count, __u64 *period_ns)
{
	char num[32];
	const char *slash = strchr(s, '/');
	size_t len;

	if (!slash || (len = slash - s) == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len);
	num[len] = '\0';
	if (parse_u64(num, 0, ~0ULL, count))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++) {
		if (!strcmp(slash + 1, rate_units[i].name)) {
			*period_ns = rate_units[i].period_ns;
			return 0;
		}
	}
	return -EINVAL;
}

void xrl_rate_format(__u64 count, __u64 period_ns, char *buf, size_t len)
{
	const char *u = period_ns == XRL_PERIOD_HOUR ? "h" :
			period_ns == XRL_PERIOD_MIN ? "min" : "s";

	snprintf(buf, len, "%llu/%s", (unsigned long long)count, u);
}

static int need(int argc, int i, struct xrl_parse_err *e, const char *what)
{
	if (i < argc)
		return 0;
	return perr(e, argc, "missing %s", what);
}

/* "dev IFACE", the start of attach and detach; the index after it, or < 0 */
static int parse_dev(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	if (argc < 1 || strcmp(argv[0], "dev"))
		return perr(e, 0, "expected 'dev IFACE'");
	if (need(argc, 1, e, "interface name after 'dev'"))
		return -EINVAL;
	if (strlen(argv[1]) >= IF_NAMESIZE)
		return perr(e, 1, "interface name '%s' is too long", argv[1]);
	strcpy(c->ifname, argv[1]);
	return 2;
}

static int parse_attach(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	const char *why;
	int i;
	__u64 v;

	c->kind = XRL_CMD_ATTACH;
	if ((i = parse_dev(argc, argv, c, e)) < 0)
		return i;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "mode")) {
			if (need(argc, ++i, e, "native|generic|auto after 'mode'"))
				return -EINVAL;
			if (!strcmp(argv[i], "native"))
				c->xdp_mode = XRL_XDP_NATIVE;
			else if (!strcmp(argv[i], "generic"))
				c->xdp_mode = XRL_XDP_GENERIC;
			else if (!strcmp(argv[i], "auto"))
				c->xdp_mode = XRL_XDP_AUTO;
			else
				return perr(e, i, "invalid XDP mode '%s' (native, generic, auto)", argv[i]);
		} else if (!strcmp(argv[i], "keys")) {
			if (need(argc, ++i, e, "a number after 'keys'"))
				return -EINVAL;
			if ((why = parse_u64(argv[i], 16, 1U << 30, &v)))
				return perr(e, i, "invalid keys '%s': %s (16 .. 1073741824)", argv[i], why);
			c->keys = v;
		} else {
			return perr(e, i, "unknown argument '%s'", argv[i]);
		}
	}
	return 0;
}

static int parse_detach(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	int i;

	c->kind = XRL_CMD_DETACH;
	if ((i = parse_dev(argc, argv, c, e)) < 0)
		return i;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "purge"))
			c->purge = true;
		else
			return perr(e, i, "unknown argument '%s'", argv[i]);
	}
	return 0;
}

static int parse_rule_add(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	struct xrl_rule *r = &c->rule.r;
	bool has_rate = false, has_burst = false, seen[6] = {};
	int i = 0, rate_i = -1, burst_i = -1, per_i = -1;
	static const char *const kw[] = { "rate", "burst", "per", "action", "id", "on-failure" };
	const char *why;
	__u64 v;

	c->kind = XRL_CMD_RULE_ADD;
	if (need(argc, i, e, "PREFIX"))
		return -EINVAL;
	if (xrl_prefix_parse(argv[i], &c->rule))
		return perr(e, i, "%s", xrl_errmsg());
	for (i = 1; i < argc; i++) {
		int k;

		for (k = 0; k < 6 && strcmp(argv[i], kw[k]); k++)
			;
		if (k == 6)
			return perr(e, i, "unknown argument '%s' (rate, burst, per, action, id, on-failure)",
				    argv[i]);
		if (seen[k])
			return perr(e, i, "'%s' given twice", kw[k]);
		seen[k] = true;
		if (need(argc, ++i, e, "a value after the keyword"))
			return perr(e, i - 1, "missing value after '%s'", kw[k]);
		switch (k) {
		case 0:
			if (xrl_rate_parse(argv[i], &r->rate_count, &r->rate_period_ns))
				return perr(e, i, "invalid rate '%s' (N/s, N/min or N/h)", argv[i]);
			has_rate = true;
			rate_i = i;
			break;
		case 1:
			if ((why = parse_u64(argv[i], 0, UINT_MAX, &v)))
				return perr(e, i, "invalid burst '%s': %s (1 .. %u)", argv[i], why, UINT_MAX);
			r->burst = v;
			has_burst = true;
			burst_i = i;
			break;
		case 2:
			if (argv[i][0] != '/')
				return perr(e, i, "invalid key length '%s' (/LEN)", argv[i]);
			if ((why = parse_u64(argv[i] + 1, 0, 128, &v)))
				return perr(e, i, "invalid key length '%s': %s (/LEN)", argv[i], why);
			r->key_len = v;
			per_i = i;
			if (!v)	/* 0 would mean "default" internally */
				return perr(e, i, "key length /0 is shorter than the prefix or not useful: use a rule for the prefix instead");
			break;
		case 3:
			if (!strcmp(argv[i], "limit"))
				r->action = XRL_ACT_LIMIT;
			else if (!strcmp(argv[i], "allow"))
				r->action = XRL_ACT_ALLOW;
			else if (!strcmp(argv[i], "deny"))
				r->action = XRL_ACT_DENY;
			else
				return perr(e, i, "invalid action '%s' (limit, allow, deny)", argv[i]);
			break;
		case 4:
			if ((why = parse_u64(argv[i], 1, UINT_MAX, &v)))
				return perr(e, i, "invalid id '%s': %s (1 .. %u)", argv[i], why, UINT_MAX);
			r->id = v;
			break;
		case 5:
			if (!strcmp(argv[i], "open"))
				r->on_failure = XRL_FAIL_OPEN;
			else if (!strcmp(argv[i], "closed"))
				r->on_failure = XRL_FAIL_CLOSED;
			else
				return perr(e, i, "invalid on-failure '%s' (open, closed)", argv[i]);
			break;
		}
	}
	if (r->action == XRL_ACT_LIMIT) {
		if (!has_rate)
			return perr(e, argc, "missing 'rate N/s|N/min|N/h'");
		if (!has_burst)
			return perr(e, argc, "missing 'burst N'");
		if (!r->rate_count)
			return perr(e, rate_i, "rate must be at least 1");
		if (!r->burst)
			return perr(e, burst_i, "burst must be at least 1");
	}
	if (xrl_rule_prepare(&c->rule)) {
		const char *m = xrl_errmsg();

		if (strstr(m, "key length"))
			return perr(e, per_i, "%s", m);
		if (strstr(m, "burst"))
			return perr(e, burst_i, "%s", m);
		return perr(e, rate_i >= 0 ? rate_i : 0, "%s", m);
	}
	return 0;
}

static int parse_rule(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	const char *why;
	__u64 v;

	if (argc < 1)
		return perr(e, 0, "missing rule command (add, del, list, flush)");
	if (!strcmp(argv[0], "add")) {
		int err = parse_rule_add(argc - 1, argv + 1, c, e);

		e->argi++;
		return err;
	}
	if (!strcmp(argv[0], "del")) {
		c->kind = XRL_CMD_RULE_DEL;
		if (argc < 2)
			return perr(e, 1, "missing ID or PREFIX after 'rule del'");
		if (argc > 2)
			return perr(e, 2, "unknown argument '%s'", argv[2]);
		if (!strpbrk(argv[1], ".:/")) {
			if ((why = parse_u64(argv[1], 1, UINT_MAX, &v)))
				return perr(e, 1, "invalid rule id '%s': %s", argv[1], why);
			c->del_id = v;
			return 0;
		}
		if (xrl_prefix_parse(argv[1], &c->rule))
			return perr(e, 1, "%s", xrl_errmsg());
		return 0;
	}
	if (!strcmp(argv[0], "list") || !strcmp(argv[0], "flush")) {
		c->kind = argv[0][0] == 'l' ? XRL_CMD_RULE_LIST : XRL_CMD_RULE_FLUSH;
		if (argc > 1)
			return perr(e, 1, "unknown argument '%s'", argv[1]);
		return 0;
	}
	return perr(e, 0, "unknown rule command '%s' (add, del, list, flush)", argv[0]);
}

static int parse_mode(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	c->kind = XRL_CMD_MODE_SET;
	if (argc < 1 || strcmp(argv[0], "set"))
		return perr(e, 0, "expected 'mode set MODE'");
	if (argc < 2)
		return perr(e, 1, "missing mode (enforce, dry-run, fail-open, fail-closed)");
	if (argc > 2)
		return perr(e, 2, "unknown argument '%s'", argv[2]);
	if (xrl_mode_parse(argv[1], &c->mode))
		return perr(e, 1, "%s", xrl_errmsg());
	return 0;
}

static int parse_noargs(int argc, char **argv, struct xrl_parse_err *e)
{
	if (argc > 0)
		return perr(e, 0, "unknown argument '%s'", argv[0]);
	return 0;
}

static int parse_status(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	c->kind = XRL_CMD_STATUS;
	return parse_noargs(argc, argv, e);
}

static int parse_stats(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	c->kind = XRL_CMD_STATS;
	return parse_noargs(argc, argv, e);
}

static int parse_show(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	c->kind = XRL_CMD_SHOW;
	if (argc < 1)
		return perr(e, 0, "missing ADDR");
	if (argc > 1)
		return perr(e, 1, "unknown argument '%s'", argv[1]);
	if (xrl_addr_parse(argv[0], &c->family, c->addr))
		return perr(e, 0, "%s", xrl_errmsg());
	return 0;
}

static int parse_top(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	const char *why;
	__u64 v;

	c->kind = XRL_CMD_TOP;
	c->count = 10;
	if (argc == 0)
		return 0;
	if (strcmp(argv[0], "count"))
		return perr(e, 0, "unknown argument '%s' (count N)", argv[0]);
	if (argc < 2)
		return perr(e, 1, "missing number after 'count'");
	if ((why = parse_u64(argv[1], 1, 1000000, &v)))
		return perr(e, 1, "invalid count '%s': %s (1 .. 1000000)", argv[1], why);
	if (argc > 2)
		return perr(e, 2, "unknown argument '%s'", argv[2]);
	c->count = v;
	return 0;
}

static const struct {
	const char *name;
	int (*parse)(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e);
} commands[] = {
	{ "attach", parse_attach },
	{ "detach", parse_detach },
	{ "status", parse_status },
	{ "rule", parse_rule },
	{ "mode", parse_mode },
	{ "stats", parse_stats },
	{ "show", parse_show },
	{ "top", parse_top },
};

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

int xrl_cmd_parse_line(const char *line, struct xrl_cmd *c, struct xrl_parse_err *e)
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
	return xrl_cmd_parse(argc, argv, c, e);
}

int xrl_cmd_parse(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e)
{
	memset(c, 0, sizeof(*c));
	memset(e, 0, sizeof(*e));
	if (argc < 1)
		return perr(e, 0, "missing command");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[0], commands[i].name)) {
			int err = commands[i].parse(argc - 1, argv + 1, c, e);

			e->argi++;	/* indices are relative to the command word */
			return err;
		}
	}
	return perr(e, 0, "unknown command '%s'", argv[0]);
}

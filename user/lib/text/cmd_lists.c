// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: the commands of lists, as rows of the command
 * table (commands.c): the bans (ban add, del, flush) and the named sets
 * (set ..., and the config's set line), their words and checks.
 */
#include "text/cmd_int.h"
#include "base/log.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ---- bans ---- */

enum { BA_PREFIX, BA_FOR, BA_REASON, BA_BY, BA_SCOPE };

/* ban add, del, flush: the prefix into the ban, whose it is, its words */
int xrl__check_ban(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	struct xrl_ban_spec *b = &c->ban;
	/* where each command has its 'by' */
	int by = c->kind == XRL_CMD_BAN_ADD ? BA_BY : c->kind == XRL_CMD_BAN_DEL ? 1 : 0;

	b->family = c->rule.family;
	b->prefix_len = c->rule.prefix_len;
	memcpy(b->addr, c->rule.addr, sizeof(b->addr));
	/* scope fleet: the fleet client's ban (the decider "fleet"), which
	 * xdp-rld shares through Redis with every host */
	if (c->kind == XRL_CMD_BAN_ADD && c->rule.r.scope == XRL_SCOPE_FLEET) {
		if (b->who[0])
			return xrl_parse_fail(e, at[BA_BY], "'by' and 'scope fleet' do not go together: a fleet ban is the fleet's");
		snprintf(b->who, sizeof(b->who), "%s", XRL_BAN_FLEET_WHO);
	}
	b->origin = b->who[0] ? XRL_BAN_DECIDER : XRL_BAN_OPERATOR;
	if (b->who[0] && xrl_ban_who_check(b->who))
		return xrl_parse_fail(e, at[by], "%s", xrl_errmsg());
	if (c->kind == XRL_CMD_BAN_ADD && at[BA_REASON] >= 0 && xrl_ban_reason_check(b->reason))
		return xrl_parse_fail(e, at[BA_REASON], "%s", xrl_errmsg());
	return 0;
}

const struct xrl_param xrl__p_ban_add[] = {
	[BA_PREFIX] = { NULL, XRL_ARG_PREFIX, "PREFIX", F(rule), .need = XRL_REQUIRED,
			.help = "the sources: ADDR/LEN, IPv4 or IPv6, any length (a bare address: one host)" },
	[BA_FOR] = { "for", XRL_ARG_DURATION, "DURATION", .min = 1, .max = XRL_BAN_MAX_S,
		     F(ban.duration_s), .what = "ban duration",
		     .help = "how long: N, Ns, Nm, Nh or Nd, 1s .. 366d (default: until ban del)" },
	[BA_REASON] = { "reason", XRL_ARG_STRING, "TEXT", F(ban.reason), .what = "reason",
			.help = "why, as ban list shows it: printable ASCII, at most 63 bytes" },
	[BA_BY] = { "by", XRL_ARG_STRING, "NAME", F(ban.who), .what = "decider name",
		    .help = "a decider sets it (fail2ban, crowdsec ...: a-z 0-9 - _ .), not the operator" },
	[BA_SCOPE] = { "scope", XRL_ARG_WORD, NULL, xrl_scope_words, F(rule.r.scope),
		       .help = "host (default), or fleet: xdp-rld shares it with every host (fleet redis)" },
	END,
};

const struct xrl_param xrl__p_ban_del[] = {
	[BA_PREFIX] = { NULL, XRL_ARG_PREFIX, "PREFIX", F(rule), .need = XRL_REQUIRED,
			.help = "the banned prefix, exactly as ban list shows it" },
	[BA_FOR] = { "by", XRL_ARG_STRING, "NAME", F(ban.who), .what = "decider name",
		     .help = "only that decider's ban (another's is left as it is)" },
	END,
};

const struct xrl_param xrl__p_ban_flush[] = {
	{ "by", XRL_ARG_STRING, "NAME", F(ban.who), .what = "decider name",
	  .help = "only that decider's bans" },
	END,
};

/* ---- sets ---- */

/* A set command's words, checked: the name's charset and length (at[0]),
 * the element (parsed and dropped: the command parses it again into its
 * list), the timeout as a duration; elem, timeout: their index in the
 * command's params, -1: none. */
static int set_words(struct xrl_cmd *c, const int *at, int elem, int timeout,
			   struct xrl_parse_err *e)
{
	struct xrl_args_set *s = &c->set;

	if (xrl_set_name_check(s->name))
		return xrl_parse_fail(e, at[0], "%s", xrl_errmsg());
	if (elem >= 0 && at[elem] >= 0) {
		struct xrl_set_list l = {};
		int err = xrl_set_elem_parse(s->elem, &l);

		xrl_set_list_free(&l);
		if (err)
			return xrl_parse_fail(e, at[elem], "%s", xrl_errmsg());
	}
	if (timeout >= 0 && at[timeout] >= 0 && xrl_set_timeout_parse(s->timeout, &s->timeout_ns))
		return xrl_parse_fail(e, at[timeout], "%s", xrl_errmsg());
	return 0;
}

int xrl__check_set_name(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	return set_words(c, at, -1, -1, e);
}

int xrl__check_set_create(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	return set_words(c, at, -1, 1, e);
}

int xrl__check_set_add(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	return set_words(c, at, 1, 2, e);
}

int xrl__check_set_del(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	return set_words(c, at, 1, -1, e);
}

#define SET_NAME { NULL, XRL_ARG_STRING, "NAME", F(set.name), .need = XRL_REQUIRED, .what = "set name", \
		   .help = "the set: 1 to 31 of letters, digits, '_', '.', '-', a letter first" }
#define SET_TIMEOUT(h) { "timeout", XRL_ARG_STRING, "DURATION", F(set.timeout), .what = "timeout", .help = h }

const struct xrl_param xrl__p_set_create[] = {
	SET_NAME,
	SET_TIMEOUT("each element added ends after it: N (s), Ns, Nm, Nh, Nd (default: never)"),
	END,
};

const struct xrl_param xrl__p_set_add[] = {
	SET_NAME,
	{ NULL, XRL_ARG_STRING, "PREFIX", F(set.elem), .need = XRL_REQUIRED, .what = "prefix",
	  .help = "ADDR/LEN, an address, or a range A-B, IPv4 or IPv6" },
	SET_TIMEOUT("the element ends after it: N (s), Ns, Nm, Nh, Nd (default: the set's)"),
	END,
};

const struct xrl_param xrl__p_set_del[] = {
	SET_NAME,
	{ NULL, XRL_ARG_STRING, "PREFIX", F(set.elem), .what = "prefix",
	  .help = "this element only (without it: the whole set, if no rule takes it)" },
	END,
};

const struct xrl_param xrl__p_set_name[] = {
	SET_NAME,
	END,
};

/* set NAME file PATH [timeout DURATION], in xdp-rl.conf */
int xrl__check_set_file(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e)
{
	return set_words(c, at, -1, 2, e);
}

const struct xrl_param xrl__p_set_file[] = {
	SET_NAME,
	{ "file", XRL_ARG_FILE, "FILE", F(set.file), .need = XRL_REQUIRED, .what = "set file",
	  .help = "the set's prefixes: as set load reads them, read at every start and reload" },
	SET_TIMEOUT("each element of the file ends after it (default: never, or ipset's timeout)"),
	END,
};

const struct xrl_param xrl__p_set_load[] = {
	SET_NAME,
	{ NULL, XRL_ARG_FILE, "FILE", F(set.file), .need = XRL_REQUIRED, .what = "set file",
	  .help = "prefixes, ranges A-B, FireHOL .netset or ipset save, one a line" },
	END,
};


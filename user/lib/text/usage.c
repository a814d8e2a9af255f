// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer: the synopsis, the usage text and each command's
 * help, all read from the command table.
 */
#include "text/grammar.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* ---- the synopsis ---- */

void xrl_cmd_synopsis(const struct xrl_command *cmd, char *buf, size_t len)
{
	size_t l = snprintf(buf, len, "%s", cmd->name);

	for (const struct xrl_param *p = cmd->params; !xrl_param_end(p) && l < len; p++) {
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
			for (const struct xrl_param *q = p + 1; !xrl_param_end(q) && l < len; q++)
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
	for (const struct xrl_param *p = cmd->params; p && !xrl_param_end(p); p++) {
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
	for (const struct xrl_param *p = cmd->params; p && !xrl_param_end(p); p++) {
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

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl, the text layer, inside: what the command table's files share
 * (commands.c holds the table; cmd_lists.c the commands of lists: bans and
 * named sets).
 */
#ifndef XRL_TEXT_CMD_INT_H
#define XRL_TEXT_CMD_INT_H

#include "text/grammar.h"

#include <stddef.h>

/* a field of the command's member of struct xrl_cmd (or its rule) */
#define F(field) .off = offsetof(struct xrl_cmd, field), \
		 .size = sizeof(((struct xrl_cmd *)0)->field)
#define END {}

/* ban add, del, flush (cmd_lists.c) */
extern const struct xrl_param xrl__p_ban_add[], xrl__p_ban_del[], xrl__p_ban_flush[];
int xrl__check_ban(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);

/* set create, add, del, list, show, flush, load, and the config's set line */
extern const struct xrl_param xrl__p_set_create[], xrl__p_set_add[], xrl__p_set_del[],
	xrl__p_set_name[], xrl__p_set_file[], xrl__p_set_load[];
int xrl__check_set_name(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);
int xrl__check_set_create(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);
int xrl__check_set_add(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);
int xrl__check_set_del(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);
int xrl__check_set_file(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);

#endif

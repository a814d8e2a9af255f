/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The xdp-rlctl command grammar: one parser for the CLI and, later, the
 * daemon's configuration file (one command per line). Parsing validates
 * everything that can be checked without touching the system.
 */
#ifndef XRL_GRAMMAR_H
#define XRL_GRAMMAR_H

#include "libxrl.h"

enum xrl_cmd_kind {
	XRL_CMD_ATTACH,
	XRL_CMD_DETACH,
	XRL_CMD_STATUS,
	XRL_CMD_RULE_ADD,
	XRL_CMD_RULE_DEL,
	XRL_CMD_RULE_LIST,
	XRL_CMD_RULE_FLUSH,
	XRL_CMD_MODE_SET,
	XRL_CMD_STATS,
	XRL_CMD_SHOW,
	XRL_CMD_TOP,
};

struct xrl_cmd {
	enum xrl_cmd_kind kind;
	/* attach, detach */
	char ifname[IF_NAMESIZE];
	enum xrl_xdp_mode xdp_mode;
	__u32 keys;
	bool purge;
	/* rule add; rule del by prefix */
	struct xrl_rule_entry rule;
	/* rule del by id */
	__u32 del_id;
	/* mode set */
	enum xrl_mode mode;
	/* show */
	int family;
	__u8 addr[16];
	/* top */
	__u32 count;
};

struct xrl_parse_err {
	int argi;		/* index of the offending word */
	char msg[256];
};

/* 0, or -EINVAL with *e filled. */
int xrl_cmd_parse(int argc, char **argv, struct xrl_cmd *c, struct xrl_parse_err *e);

#define XRL_MAX_WORDS 32

/* Split a line into words in place; '#' starts a comment. cols (max + 1
 * entries, or NULL) gets each word's 1-based column and, after the last,
 * the column past the end. Returns the count, or -E2BIG. */
int xrl_split_words(char *line, char **argv, int *cols, int max);
/* xrl_cmd_parse() of one line of text. */
int xrl_cmd_parse_line(const char *line, struct xrl_cmd *c, struct xrl_parse_err *e);

/* "100/s", "5/min", "1/h" */
int xrl_rate_parse(const char *s, __u64 *count, __u64 *period_ns);
void xrl_rate_format(__u64 count, __u64 period_ns, char *buf, size_t len);

#define XRL_CMD_USAGE \
	"  attach dev IFACE [mode native|generic|auto] [keys N]\n" \
	"  detach dev IFACE [purge]\n" \
	"  status\n" \
	"  rule add PREFIX rate N/s|N/min|N/h burst N [per /LEN] [action limit|allow|deny] [id ID]\n" \
	"           [on-failure open|closed]\n" \
	"  rule del ID | rule del PREFIX\n" \
	"  rule list\n" \
	"  rule flush\n" \
	"  mode set enforce|dry-run|fail-open|fail-closed\n" \
	"  stats\n" \
	"  show ADDR\n" \
	"  top [count N]\n"

#endif

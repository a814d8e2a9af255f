/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The xdp-rl grammar: one table (commands.c) describes every command of
 * xdp-rlctl and of the configuration file, its arguments and keywords; the
 * enum words are the vocabulary's (model/words.h). Parsing (grammar.c),
 * error hints, the usage text and `help` (usage.c) all read it; a test
 * checks the man page and the README against it.
 *
 * Adding a keyword: a row in the table (and a field in its command's
 * member of struct xrl_cmd for its value), then the code that acts on it.
 * Adding a command: its kind below, its row, its arguments' struct, and its
 * handler in the program that runs it.
 */
#ifndef XRL_GRAMMAR_H
#define XRL_GRAMMAR_H

#include <limits.h>
#include <stdio.h>
#include <net/if.h>
#include "base/strict.h"
#include "model/addr.h"
#include "model/ban.h"
#include "model/decider_settings.h"
#include "model/fleet_settings.h"
#include "model/rule.h"
#include "model/setfile.h"
#include "model/units.h"
#include "model/words.h"
#include "text/rulefmt.h"

enum xrl_cmd_kind {
	XRL_CMD_ATTACH,
	XRL_CMD_DETACH,
	XRL_CMD_PURGE,
	XRL_CMD_STATUS,
	XRL_CMD_RULE_ADD,
	XRL_CMD_RULE_DEL,
	XRL_CMD_RULE_LIST,
	XRL_CMD_RULE_FLUSH,
	XRL_CMD_MODE_SET,
	XRL_CMD_MODE_SHOW,
	XRL_CMD_STATS,
	XRL_CMD_SHOW,
	XRL_CMD_TOP,
	XRL_CMD_KEY_LIST,
	XRL_CMD_KEY_RESET,
	XRL_CMD_KEY_DEL,
	XRL_CMD_EVENTS,
	XRL_CMD_HELP,
	XRL_CMD_REPLAY,
	XRL_CMD_UPGRADE,
	XRL_CMD_BAN_ADD,	/* also in the configuration file */
	XRL_CMD_BAN_DEL,
	XRL_CMD_BAN_LIST,
	XRL_CMD_BAN_FLUSH,
	XRL_CMD_CAPTURE,
	XRL_CMD_SET_CREATE,
	XRL_CMD_SET_ADD,
	XRL_CMD_SET_DEL,
	XRL_CMD_SET_LIST,
	XRL_CMD_SET_SHOW,
	XRL_CMD_SET_FLUSH,
	XRL_CMD_SET_LOAD,
	XRL_CMD_SUGGEST,
	/* configuration file only */
	XRL_CMD_INTERFACE,
	XRL_CMD_HEARTBEAT,
	XRL_CMD_WATCHDOG,
	XRL_CMD_METRICS,
	XRL_CMD_FLEET_REDIS,
	XRL_CMD_FLEET_HOST,
	XRL_CMD_FLEET_AUTH,
	/* the deciders the daemon follows (configuration file only) */
	XRL_CMD_CROWDSEC,
	XRL_CMD_SET_FILE,	/* set NAME file PATH [timeout DURATION] */
};

/* Where a command may be written. */
#define XRL_IN_CLI	1u
#define XRL_IN_CONFIG	2u


/* What each command's words parse into: one struct per command (or per
 * commands that take the same words), in a union by kind. */
struct xrl_args_attach {	/* attach; interface (no keys) */
	char ifname[IF_NAMESIZE];
	int xdp_mode;		/* enum xrl_xdp_mode */
	__u32 keys;
	int hook;		/* enum xrl_hook: xdp (the default) or tc */
	__u32 bans;		/* the ban tables' size; 0: default or kept */
	bool tc_first;		/* hook tc: first in the tcx chain again if it is not */
	__u32 syn_verified;	/* SYN cookies' verified table's size; 0: default or kept */
};

struct xrl_args_detach {
	char ifname[IF_NAMESIZE];
	bool purge;
};

struct xrl_args_status {
	__u32 sample_ms;	/* the run-time figure's sample; 0: none */
};

struct xrl_args_rule_add {
	/* what the words say that the values cannot (burst from the check) */
	struct xrl_rule_written written;
};

struct xrl_args_rule_del {
	__u32 id;		/* by id; 0: by the prefix in xrl_cmd.rule */
};

struct xrl_args_rule_list {
	bool config;		/* as xdp-rl.conf lines */
};

struct xrl_args_mode_set {
	int mode;		/* enum xrl_mode */
};

struct xrl_args_addr {		/* show, key reset, key del */
	int family;
	__u8 addr[16];
};

struct xrl_args_top {
	__u32 count;
	__u32 sample_ms;	/* the drop rates' sample */
	__u32 rule;		/* only this rule's keys; 0: every rule's */
	bool watch;		/* the live full-screen view */
};

struct xrl_args_suggest {
	__u32 rule;		/* this rule only; 0: every rule it can measure */
	__u32 seconds;		/* the sample */
	__u32 percentile;	/* of the keys' peak rates, 1 .. 100 */
	__u32 headroom;		/* percent over what was seen */
	char from[80];		/* ADDR:PORT: the daemon's record, read from its /metrics; "": watch */
};

struct xrl_args_key_list {
	__u32 rule;		/* only this rule's keys; 0: all */
	bool limited;		/* only keys without a token now */
};

struct xrl_args_events {
	__u32 count;
	__u32 timeout_s;
};

struct xrl_args_help {
	char topic[32];
};

struct xrl_args_replay {
	char capture[PATH_MAX];
	char config[PATH_MAX];	/* a configuration file; "": the pins' rules */
};

enum xrl_capture_format {
	XRL_CAPTURE_PCAPNG = 0,
	XRL_CAPTURE_PCAP = 1,
};

struct xrl_args_capture {
	char file[PATH_MAX];	/* "-": stdout */
	__u32 count;		/* 0: until stopped */
	__u32 seconds;
	int verdict;		/* XRL_CAPTURE_F_*; 0: drop (the default) */
	__u32 rule;		/* 0: any */
	char key[64];		/* ADDR or ADDR/LEN; "": any source */
	__u32 snaplen;		/* 0: the default */
	int format;		/* enum xrl_capture_format */
};

struct xrl_args_set {		/* set ... (docs/sets.md) */
	char name[XRL_SET_NAME_MAX + 1];
	char elem[128];		/* set add, set del: a prefix, address or range */
	char file[PATH_MAX];	/* set load */
	char timeout[24];	/* as written; in timeout_ns by the check */
	__u64 timeout_ns;
};

struct xrl_args_ms {		/* heartbeat, watchdog */
	__u32 ms;
};

struct xrl_args_metrics {
	char hostport[80];	/* ADDR:PORT or off */
};

struct xrl_cmd {
	enum xrl_cmd_kind kind;
	/* rule add: the rule; rule del: the prefix of the rule it removes */
	struct xrl_rule_entry rule;
	union {
		struct xrl_args_attach attach;		/* and interface */
		struct xrl_args_detach detach;
		struct xrl_args_status status;
		struct xrl_args_rule_add rule_add;
		struct xrl_args_rule_del rule_del;
		struct xrl_args_rule_list rule_list;
		struct xrl_args_mode_set mode_set;
		struct xrl_args_addr addr;		/* show, key reset, key del */
		struct xrl_args_top top;
		struct xrl_args_suggest suggest;
		struct xrl_args_key_list key_list;
		struct xrl_args_events events;
		struct xrl_args_help help;
		struct xrl_args_replay replay;
		struct xrl_args_capture capture;
		struct xrl_args_ms ms;			/* heartbeat, watchdog */
		struct xrl_args_set set;		/* set ... */
		struct xrl_args_metrics metrics;
		struct xrl_fleet_settings fleet;	/* fleet redis, host, auth */
		/* ban add, del, flush: the prefix is in .rule (family,
		 * prefix_len, addr) and copied here by the check; who: by NAME */
		struct xrl_ban_spec ban;
		struct xrl_crowdsec_settings crowdsec;	/* crowdsec */
	};
};

/* How the words after a keyword (or in a position) are read. */
enum xrl_arg {
	XRL_ARG_FLAG,		/* the keyword alone: a bool */
	XRL_ARG_WORD,		/* one of .words: an int */
	XRL_ARG_NUM,		/* decimal in [min, max]: a __u8 .. long, by its size */
	XRL_ARG_IFACE,		/* an interface name */
	XRL_ARG_PREFIX,		/* the rule's prefix */
	XRL_ARG_ADDR,		/* family and address: a struct xrl_args_addr */
	XRL_ARG_RATE,		/* N/unit: the rule's rate */
	XRL_ARG_KEYLEN,		/* /LEN: the rule's key length */
	XRL_ARG_RULE_REF,	/* a rule id (a __u32) or a prefix (the rule) */
	XRL_ARG_HOSTPORT,	/* ADDR:PORT or off */
	XRL_ARG_STRING,		/* any word that fits the field (size) */
	XRL_ARG_TOPIC,		/* a command word (a prefix on the CLI): help's */
	XRL_ARG_SIZE,		/* N, or bytes as tc(8): 64kb: the rule's burst */
	XRL_ARG_PROTO,		/* tcp|udp|icmp|icmpv6|N: an endpoint rule's */
	XRL_ARG_PORTS,		/* N|N-M: an endpoint rule's destination ports */
	XRL_ARG_RATE_AT,	/* N/unit into the __u64 count, period_ns at off */
	XRL_ARG_FILE,		/* a file name: a STRING that completion completes as one */
	XRL_ARG_DURATION,	/* N[s|m|h|d]: seconds in [min, max], a __u32 or __u64 by its size */
};

enum xrl_need {
	XRL_OPTIONAL,
	XRL_REQUIRED,		/* the parser insists */
	XRL_REQUIRED_IF,	/* shown as required; the command's check decides */
	XRL_ALTERNATIVE,	/* a keyword written instead of the positional
				 * before it: "ID|PREFIX|id ID"; the check decides */
};

/* One argument of a command: positional (name NULL) or a keyword. */
struct xrl_param {
	const char *name;
	enum xrl_arg type;
	const char *meta;	/* the value in the synopsis; NULL: the words */
	const struct xrl_word *words;
	__u64 min, max;		/* XRL_ARG_NUM */
	const char *range;	/* the range in messages; NULL: "min .. max" */
	size_t off;		/* offsetof(struct xrl_cmd, member.field): in its command's member */
	unsigned short size;	/* and its size, for WORD, NUM and STRING */
	enum xrl_need need;
	const char *what;	/* its name in messages; NULL: name or meta */
	/* a keyword that may follow this one's value and belongs to it:
	 * "aggregate RATE burst N" (the aggregate's burst, not the key's) */
	const struct xrl_param *then;
	/* came after the command's first keywords: a prefix it shares with
	 * one of them is theirs ("a" stays action's, not aggregate's) */
	bool late;
	/* what it is, with its unit: one line of `COMMAND help` */
	const char *help;
};

/* Positions of a command's parameters in argv (-1: not given), by index
 * in its params table; what a check needs to blame the right word. */
#define XRL_MAX_PARAMS	24

struct xrl_parse_err {
	int argi;		/* index of the offending word */
	char msg[512];
};

struct xrl_command {
	const char *name;	/* "rule add" */
	enum xrl_cmd_kind kind;
	unsigned where;		/* XRL_IN_CLI, XRL_IN_CONFIG */
	const struct xrl_param *params;	/* NULL-name positional ones first */
	/* what no single word says: 0, or -EINVAL with *e filled */
	int (*check)(struct xrl_cmd *c, const int *at, struct xrl_parse_err *e);
	const char *help;	/* one line */
	/* its first word wins a prefix it shares with others, as ip's and
	 * bpftool's first match does: `st` is status, not stats; `r` is rule
	 * (rule add's), not replay */
	bool preferred;
};

extern const struct xrl_command xrl_commands[];
extern const size_t xrl_ncommands;

/* The end of a params table (an all-zero row). */
bool xrl_param_end(const struct xrl_param *p);
/* A command check's error: e filled (the word argi to blame, the message),
 * -EINVAL returned. */
__attribute__((format(printf, 3, 4)))
int xrl_parse_fail(struct xrl_parse_err *e, int argi, const char *fmt, ...);

/*
 * Parse one command written where (XRL_IN_CLI or XRL_IN_CONFIG); argv[0] is
 * the command word. 0, or -EINVAL with *e filled: e->argi is the word to
 * blame (argc: past the end).
 *
 * On the CLI, as with ip and bpftool, a command word, a sub-command word, a
 * keyword or an enum word may be shortened to any prefix that only one word
 * of its place begins with ("r l", "mode set dry"); an exact word always
 * wins, and an ambiguous prefix is an error listing the candidates. A
 * configuration file is strict: full words only, so that a file never reads
 * differently once a new keyword shares a prefix with a shortened one. In
 * both, an unknown word gets "did you mean ...?" from the same table.
 * On the CLI, "help" after a command's words ("rule help", "rule add help")
 * parses as XRL_CMD_HELP with that command as the topic.
 */
int xrl_cmd_parse(int argc, char **argv, unsigned where, struct xrl_cmd *c,
		  struct xrl_parse_err *e);
/* "rule add PREFIX rate N/s|N/min|N/h burst N [per /LEN] ..." */
void xrl_cmd_synopsis(const struct xrl_command *cmd, char *buf, size_t len);
/* Is cmd under topic: "rule" (a first word) or "rule add" (a whole name)? */
bool xrl_cmd_in_topic(const struct xrl_command *cmd, const char *topic);
/* "  SYNOPSIS\n" of every command written where; with topic, only the
 * commands under it. 0, or -ENOENT. */
int xrl_usage(FILE *f, unsigned where, const char *topic);
/* One command's help: its required words, what it does, and a line for
 * each keyword with its value, unit and default ("rule add help"). */
int xrl_cmd_help(FILE *f, const struct xrl_command *cmd);

#define XRL_MAX_WORDS 32

/* Split a line into words in place; '#' starts a comment. cols (max + 1
 * entries, or NULL) gets each word's 1-based column and, after the last,
 * the column past the end. Returns the count, or -E2BIG. */
int xrl_split_words(char *line, char **argv, int *cols, int max);
/* xrl_cmd_parse() of one line of text. */
int xrl_cmd_parse_line(const char *line, unsigned where, struct xrl_cmd *c,
		       struct xrl_parse_err *e);

#endif

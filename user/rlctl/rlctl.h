/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* xdp-rlctl's parts: what common.c offers main.c and the command files,
 * and the command files' entry points main.c dispatches to. */
#ifndef XRL_RLCTL_H
#define XRL_RLCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "text/grammar.h"
#include "base/json.h"
#include "libxrl.h"

#define EXIT_USAGE 2

struct rlctl_opts {
	bool json;
	bool pretty;
	const char *pin_dir;
	__u32 bans;		/* attach bans N: the ban tables' size (first attach) */
	__u32 syn_verified;	/* attach syn-verified N: the verified table's size (first attach) */
};
extern struct rlctl_opts opt;
extern struct jw jw;		/* stdout, -j */

/* Messages on stderr: "Error: ..." or {"error": ...} under -j. */
__attribute__((format(printf, 1, 2)))
void p_err(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void p_note(const char *fmt, ...);
void print_warnings(void);
/* The library's log sink: warnings held until print_warnings(). */
void cli_log(enum xrl_log_level level, const char *msg);
void usage(FILE *f);

/* Readers take no lock; writers return with it held, do their map and pin
 * operations, keep a failure with set_err() and call unlock() before they
 * print anything. */
int open_reader(struct xrl **x);
int open_writer(struct xrl **x, bool create, __u32 keys);
__attribute__((format(printf, 1, 2)))
int set_err(const char *fmt, ...);
void unlock(struct xrl *x, int err);
/* A writer whose locked part is one library call: its failure kept,
 * the lock released, then said. Returns err. */
int end_write(struct xrl *x, int err);
extern char emsg[1024];

void rule_fields(const struct xrl_rule_entry *e, char *pfx, size_t plen, char *rate, size_t rlen);

int do_attach(struct xrl_cmd *c);
int do_detach(struct xrl_cmd *c);
int do_purge(struct xrl_cmd *c);
int do_status(struct xrl_cmd *c);
int do_upgrade(struct xrl_cmd *c);
int do_rule_add(struct xrl_cmd *c);
int do_rule_del(struct xrl_cmd *c);
int do_rule_flush(struct xrl_cmd *c);
int do_rule_list(struct xrl_cmd *c);
int do_mode_set(struct xrl_cmd *c);
int do_mode_show(struct xrl_cmd *c);
int do_stats(struct xrl_cmd *c);
int do_show(struct xrl_cmd *c);
int do_top(struct xrl_cmd *c);
int do_replay(struct xrl_cmd *c);
int do_key_list(struct xrl_cmd *c);
int do_key_reset(struct xrl_cmd *c);
int do_key_del(struct xrl_cmd *c);
int do_set_create(struct xrl_cmd *c);
int do_set_add(struct xrl_cmd *c);
int do_set_del(struct xrl_cmd *c);
int do_set_list(struct xrl_cmd *c);
int do_set_show(struct xrl_cmd *c);
int do_set_flush(struct xrl_cmd *c);
int do_set_load(struct xrl_cmd *c);

/* "198.18.0.0/24" */
void key_format(const struct xrl_key *k, __u8 key_len, char *buf, size_t len);
/* Sort rules by generation, then find the rule of a bucket's generation
 * (NULL: a version no longer in the rule set). */
void rules_by_gen(struct xrl_rule_entry *v, size_t n);
const struct xrl_rule_entry *rule_of_gen(const struct xrl_rule_entry *v, size_t n, __u32 gen);
int do_events(struct xrl_cmd *c);
int do_ban_add(struct xrl_cmd *c);
int do_ban_del(struct xrl_cmd *c);
int do_ban_list(struct xrl_cmd *c);
int do_ban_flush(struct xrl_cmd *c);
/* status: the ban tables' fill and size, refusals (bans.c) */
void status_bans_text(struct xrl *x);
/* stats: what bans did (bans.c) */
void stats_bans_text(struct xrl *x);
int do_capture(struct xrl_cmd *c);
int do_suggest(struct xrl_cmd *c);
/* suggest ... from ADDR:PORT: the daemon's record (suggest_from.c) */
int do_suggest_from(struct xrl_cmd *c);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, pure values (ban.c): a ban as the operator writes it (prefix,
 * duration, reason, who sets it), checked in one place for the CLI, the
 * configuration reader and the map layer; durations and origins in words.
 */
#ifndef XRL_MODEL_BAN_H
#define XRL_MODEL_BAN_H

#include <stdbool.h>
#include <stddef.h>
#include "xdp_rl_common.h"

/* The longest ban (and rule ban, ban-max): 366 days, in seconds. */
#define XRL_BAN_MAX_S	(366U * 86400U)
/* A rule's `after N`: at most this many offences. */
#define XRL_BAN_AFTER_MAX	1000U

/* A ban to set (xrl_ban_add()). */
struct xrl_ban_spec {
	__u8 family;		/* 4 or 6 */
	__u8 prefix_len;	/* any, 0 .. 32 or 128 */
	__u8 addr[16];		/* network order, host bits clear */
	__u64 duration_s;	/* 1 .. XRL_BAN_MAX_S; 0: until deleted */
	__u32 origin;		/* enum xrl_ban_origin: OPERATOR, CONFIG or DECIDER */
	char who[XRL_BAN_WHO_LEN];	/* DECIDER: its name (a word); else "" */
	char reason[XRL_BAN_REASON_LEN];	/* printable ASCII, may be "" */
};

/* A ban as the table holds it (xrl_bans_get()). */
struct xrl_ban_entry {
	__u8 family;
	__u8 prefix_len;
	__u8 addr[16];
	struct xrl_ban b;
	bool ended;		/* past its end: no longer matches, not yet reclaimed */
	__u64 left_ns;		/* time left; 0 with !b.expires_ns: until deleted */
};

/* "90" (seconds), "90s", "10m", "2h", "7d": 1 .. max seconds. 0 or
 * -EINVAL with xrl_errmsg() set. */
int xrl_duration_parse(const char *s, __u64 max_s, __u64 *secs);
/* The largest unit that divides it: "10m", "36h", "90s". */
void xrl_duration_format(__u64 secs, char *buf, size_t len);
/* A time left in ns, to the second, rounded up: "9m59s", "2d3h", "4s". */
void xrl_left_format(__u64 ns, char *buf, size_t len);
/* A reason: at most XRL_BAN_REASON_LEN - 1 bytes of printable ASCII
 * (space included). A decider's name: 1 .. XRL_BAN_WHO_LEN - 1 of
 * [a-z0-9_-.]. 0 or -EINVAL with xrl_errmsg() set. */
int xrl_ban_reason_check(const char *s);
int xrl_ban_who_check(const char *s);
/* Check a ban to set: the prefix, the duration, the origin and its words. */
int xrl_ban_spec_check(const struct xrl_ban_spec *s);
/* "rule", "operator", "config", "decider"; "?" for another value. */
const char *xrl_ban_origin_name(__u32 origin);
/* "rule 7", "operator", "config", "fail2ban" (a decider: its name). */
void xrl_ban_by_format(const struct xrl_ban *b, char *buf, size_t len);

#endif

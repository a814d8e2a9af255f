/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the deciders: the CrowdSec Local API follower (crowdsec.c, its
 * answers parsed in cs_parse.c). It pulls /v1/decisions/stream with a
 * bouncer's key: ?startup=true first (every live decision), then
 * ?startup=false (what was added and deleted since the last pull). Each
 * ban decision on an Ip or a Range becomes a ban of origin crowdsec for
 * the decision's remaining time; a deleted one lifts the ban it set.
 * Other types (captcha, ...) and scopes (Country, AS, ...) are ignored and
 * counted. A pull that fails in any way (unreachable, a status other than
 * 200, an answer over its cap, garbage) changes no ban, is counted, and
 * makes the next pull a startup one: the stream's position moved on the
 * LAPI's side, so only a full pull tells what was missed; a full pull
 * lifts the crowdsec bans the LAPI no longer has.
 */
#ifndef XRL_DECIDERS_CROWDSEC_H
#define XRL_DECIDERS_CROWDSEC_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "model/decider_settings.h"

struct xrl;

#define XRL_CS_MAX_BODY		(8u << 20)	/* an answer's body by default (some 40,000 decisions) */
#define XRL_CS_MAX_BODY_MAX	(64u << 20)	/* ... and at most (max-body MB) */
#define XRL_CS_BACKOFF_MAX	16	/* over the cap: the poll doubled, up to this many times it */
/* a Range wider than these is refused (invalid): it would ban nearly everyone */
#define XRL_CS_MIN_RANGE4	8
#define XRL_CS_MIN_RANGE6	32
#define XRL_CS_MAX_TOKENS	(1u << 20)	/* its JSON tokens, at most, per 8 MiB of body */
#define XRL_CS_MAX_DURATION_MS	(10LL * 365 * 86400 * 1000)	/* a longer decision is cut to this */

/* ---- one answer, parsed (cs_parse.c: no I/O) ---- */

struct xrl_cs_decision {
	long long id;
	__u8 family, prefix_len;	/* 4 or 6; a host's prefix for scope Ip */
	__u8 addr[16];
	long long ms;			/* time left (new); past ones are <= 0 */
	bool deleted;			/* in "deleted", not "new" */
	char value[64];			/* as the LAPI wrote it */
	char origin[32];		/* cscli, crowdsec, CAPI, lists ... */
	char scenario[128];		/* the reason it gives */
};

struct xrl_cs_answer {
	struct xrl_cs_decision *v;	/* the bans, new ones and deleted ones */
	size_t n;
	unsigned long long ignored_type;	/* not a ban (captcha, ...) */
	unsigned long long ignored_scope;	/* not Ip or Range */
	unsigned long long invalid;		/* a value or duration that is none; first one in why */
	char why[160];
};

/*
 * A stream answer: {"new": [...] | null, "deleted": [...] | null}, each
 * element an object whose known members (id, value, scope, type, duration,
 * origin, scenario) have their JSON type; members not known are ignored.
 * Anything else refuses the whole answer: -EPROTO with xrl_errmsg(). An
 * element of the right shape whose value is no address or prefix for its
 * scope, or whose duration is no Go duration, is skipped and counted.
 * 0 with *a filled (free with xrl_cs_answer_free()).
 */
int xrl_cs_parse(const char *body, size_t len, struct xrl_cs_answer *a);
void xrl_cs_answer_free(struct xrl_cs_answer *a);
/* Go's time.Duration text ("1h59m58.3s", "-9.6ms", "0s") in whole
 * milliseconds, rounded toward zero; false when it is not one or is past
 * +-292 years. */
bool xrl_go_duration_ms(const char *s, long long *ms);

/* ---- the follower ---- */

enum xrl_cs_state {
	XRL_CS_STARTING,	/* no pull answered yet */
	XRL_CS_OK,		/* the last pull was applied */
	XRL_CS_UNREACHABLE,	/* no connection, or no whole answer by the deadline */
	XRL_CS_REFUSED,		/* an HTTP status other than 200 (403: a bad key) */
	XRL_CS_BAD_ANSWER,	/* an answer over its cap, or not a stream answer */
};
#define XRL_CS_NSTATES	5
extern const char *const xrl_cs_state_names[XRL_CS_NSTATES];

struct xrl_cs_stats {
	enum xrl_cs_state state;
	double last_ok_ms;		/* CLOCK_MONOTONIC of the last applied pull; 0: none */
	unsigned long long pulls_ok, pulls_failed;
	unsigned long long errors[XRL_CS_NSTATES];	/* failed pulls by the state they led to */
	unsigned long long applied, removed, expired_skipped;
	unsigned long long ignored_type, ignored_scope, invalid;
	unsigned long long refused;	/* bans the table refused (full, or an allow rule's) */
	unsigned long long kept;	/* deletes not applied: the ban there is not crowdsec's */
	int last_status;		/* the last HTTP status; 0: none */
	char last_error[200];
};

struct xrl_cs;

/* A follower for the settings (the key file read now: -EINVAL, -EPERM,
 * ... with xrl_errmsg()); nothing connects yet. */
int xrl_cs_new(struct xrl *x, const struct xrl_crowdsec_settings *s, struct xrl_cs **out);
/* A lock the follower holds while it writes bans (never across the
 * network): the daemon's, which its other writers of maps take. */
#include <pthread.h>
void xrl_cs_set_lock(struct xrl_cs *c, pthread_mutex_t *m);
/* The key file as xrl_cs_new() would read it: for --check. */
int xrl_cs_key_check(const char *path);
/* Whether the key file (read as xrl_cs_new() would) still holds the
 * follower's key: 1 the same, 0 another (rotated in place), < 0 unreadable. */
int xrl_cs_key_same(const struct xrl_cs *c, const char *path);
/* One pull, applied: 0, or the error that made it fail (logged by the
 * caller, once per change of state; xrl_cs_stats_get() says more). */
int xrl_cs_pull(struct xrl_cs *c);
long xrl_cs_poll_ms(const struct xrl_cs *c);
/* The wait before the next pull: the poll, or longer after an answer over
 * the body cap (doubled each time, up to XRL_CS_BACKOFF_MAX polls). */
long xrl_cs_next_ms(const struct xrl_cs *c);
/* From another thread: cut the pull running short (true), or allow pulls again */
void xrl_cs_abort(struct xrl_cs *c, bool stop);
void xrl_cs_stats_get(struct xrl_cs *c, struct xrl_cs_stats *st);
void xrl_cs_free(struct xrl_cs *c);

#endif

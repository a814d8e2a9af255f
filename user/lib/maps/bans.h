/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: bans (bans.c; docs/bans.md). A ban is one entry of
 * its family's LPM trie, added or deleted on its own under the pin-directory
 * lock (the writers' discipline: xrl_open() returns with it held). A ban
 * past its end no longer matches in the data path; xrl_bans_sweep()
 * reclaims it, and every writer below sweeps first.
 *
 * Functions return 0 or a negative errno; on failure xrl_errmsg() says why.
 */
#ifndef XRL_MAPS_BANS_H
#define XRL_MAPS_BANS_H

#include <stdbool.h>
#include <stddef.h>
#include "xdp_rl_common.h"
#include "model/ban.h"

struct xrl;

/* Set a ban (checked by xrl_ban_spec_check()): it ends duration_s from now
 * on the data path's clock, or never (0). A ban of the same prefix is
 * replaced (*replaced true; its drops so far are kept). -ENOSPC when the
 * family's table is full (counted in refused_full; nothing is evicted).
 * A decider's ban (origin XRL_BAN_DECIDER) never replaces a live ban of
 * another origin or decider that ends later or never: 1, nothing changed
 * (kept). */
int xrl_ban_add(struct xrl *x, const struct xrl_ban_spec *s, bool *replaced);
/* Lift the ban of exactly this prefix: -ENOENT when there is none; who
 * non-NULL: only a decider's ban of that name (-EPERM naming who set it
 * otherwise). Counted in deleted[origin]. */
int xrl_ban_del(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len, const char *who);
/* The same two without the sweep each does first (a walk of both tables),
 * for a writer of many bans at once (a decider's pull: N bans in O(N), not
 * O(N * table)); it sweeps once itself (xrl_bans_sweep()) before its batch. */
int xrl_ban_add_nosweep(struct xrl *x, const struct xrl_ban_spec *s, bool *replaced);
int xrl_ban_del_nosweep(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len, const char *who);
/* Lift every ban (origin 0, who NULL), or only those of an origin, or only
 * a decider's of that name; *n: how many. */
int xrl_ban_flush(struct xrl *x, __u32 origin, const char *who, size_t *n);
/* Every entry of both tables, IPv4 first, by prefix; ended ones included
 * (ended true); each count with the drops the banned-source cache still
 * holds for it (exact). Free *out with free(). */
int xrl_bans_get(struct xrl *x, struct xrl_ban_entry **out, size_t *n);
/* The ban of exactly this prefix: -ENOENT when there is none. One look-up:
 * its count leaves out the drops the cache still holds (at most
 * XRL_HOT_FLUSH - 1 per source and CPU; xrl_bans_get() has them). */
int xrl_ban_get(struct xrl *x, int family, const __u8 *addr, __u8 prefix_len,
		struct xrl_ban_entry *out);
/* Reclaim the bans past their end (counted in expired[origin]); *n: how
 * many (may be NULL). cb (may be NULL) sees each before it goes. */
typedef void (*xrl_ban_cb)(const struct xrl_ban_entry *e, void *ctx);
int xrl_bans_sweep(struct xrl *x, size_t *n, xrl_ban_cb cb, void *ctx);
/* The configuration's bans, as a reload applies them: config bans not in
 * v are lifted; those in v that a live config ban already holds are kept
 * as they are (a reload never extends one); the others are set (over a
 * ban of another origin of the same prefix). *set, *lifted: how many. */
int xrl_bans_apply_config(struct xrl *x, const struct xrl_ban_spec *v, size_t n,
			  size_t *set, size_t *lifted);
/* Counters: the totals (by origin; shared) and the per-CPU ones summed. */
int xrl_ban_totals_get(struct xrl *x, struct xrl_ban_totals *t);
int xrl_ban_stats_get(struct xrl *x, struct xrl_ban_stats *sum);
/* Entries now and the size of one family's table (4 or 6). */
int xrl_bans_fill(struct xrl *x, int family, __u32 *n, __u32 *cap);
/* Keys with escalation state (rules that ban), of XRL_OFFENDERS. */
int xrl_offenders_count(struct xrl *x, __u32 *n);

#endif

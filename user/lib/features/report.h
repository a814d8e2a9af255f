/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, features: the objects of `xdp-rlctl -j status`, `stats` and
 * `top`, read from an instance and written as JSON (report.c). The CLI
 * prints them; the daemon serves the same under /api/v1/.
 */
#ifndef XRL_FEATURES_REPORT_H
#define XRL_FEATURES_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include "xdp_rl_common.h"
#include "base/json.h"
#include "maps/xrl.h"
#include "maps/stats.h"
#include "maps/attach.h"
#include "maps/syncookie.h"
#include "model/rule.h"

/* ---- status ---- */

struct xrl_status {
	__u32 prog_id;
	struct xrl_build_info build;
	struct xrl_global_stats global;
	struct xrl_attachment *att;	/* malloc'd */
	size_t natt;
	unsigned long long keys4, keys6;
	long long hb_age;		/* ns, -1: never */
	bool heartbeating;
	__u64 watchdog_ns;
	struct xrl_prog_runtime rt;
	bool sampled;			/* the run time was sampled */
	__u32 sample_ms;
	unsigned long long win_runs, win_ns, win_pkt, ns_pkt;
	char enabled_by[64];		/* "pid N (comm)" or the sysctl */
	size_t nsets;			/* the named sets (best effort: 0 when unread) */
	__u64 set_pfx, set_mem;		/* their prefixes, the kernel's count of their memory */
};

/* Read the status; sample_ms > 0: the program's run time over a sample of
 * that long (the call sleeps), when the kernel counts it. */
int xrl_status_read(struct xrl *x, __u32 sample_ms, struct xrl_status *st);
void xrl_status_json(struct jw *w, struct xrl *x, const struct xrl_status *st);
void xrl_status_free(struct xrl_status *st);

/* ---- stats ---- */

struct xrl_stats_view {
	struct xrl_rule_entry *v;	/* the rules, by id */
	size_t n;
	struct xrl_rule_stats *rs;	/* of each rule */
	struct xrl_global_stats g;
	struct xrl_attachment *att;
	size_t natt;
	struct xrl_if_stats *is;	/* of each attachment */
	struct xrl_sc_table sct;	/* the SYN cookies' verified sources */
};

int xrl_stats_read(struct xrl *x, struct xrl_stats_view *s);
void xrl_stats_json(struct jw *w, struct xrl *x, const struct xrl_stats_view *s);
void xrl_stats_free(struct xrl_stats_view *s);
/* The other attached interfaces whose ifindexes share i's counter slot
 * (ifindex % XRL_IF_SLOTS): "d1, d2"; false when none does. */
bool xrl_if_shared(const struct xrl_attachment *a, size_t n, size_t i, char *buf, size_t len);

/* ---- top: the keys dropping most ---- */

/* "198.18.0.0/24" */
void xrl_key_format(const struct xrl_key *k, __u8 key_len, char *buf, size_t len);
/* Sort rules by generation, then find the rule of a bucket's generation
 * (NULL: a version no longer in the rule set). */
void xrl_rules_by_gen(struct xrl_rule_entry *v, size_t n);
const struct xrl_rule_entry *xrl_rule_of_gen(const struct xrl_rule_entry *v, size_t n, __u32 gen);

struct xrl_top_item {
	struct xrl_key k;	/* no padding: compared with memcmp */
	__u64 dropped;
	__u64 rate;		/* dropped per second over the sample */
	__u32 rule;
	__u8 key_len;
	__u8 dry_run;		/* its rule's: its drops are would-drops */
};

/* One walk of the bucket tables: the keys with drops. */
struct xrl_top_snap {
	struct xrl_top_item *v;
	size_t n, cap;
	unsigned long long tracked;	/* every bucket of the current rules */
	const struct xrl_rule_entry *rules;	/* by gen */
	size_t nrules;
	__u32 only;			/* this rule's keys only; 0: every rule's */
};

/* Walk into s (its items sorted by key); rules sorted by gen. */
int xrl_top_collect(struct xrl *x, const struct xrl_rule_entry *rules, size_t nrules,
		    struct xrl_top_snap *s);
/* cur's rates against prev, elapsed_ns earlier (0: none known). */
void xrl_top_rates(struct xrl_top_snap *cur, const struct xrl_top_snap *prev, __u64 elapsed_ns);
/* hottest first: by rate, then by total */
int xrl_top_cmp_hot(const void *a, const void *b);
/* The array of `top -j`: the first count items (sorted hottest first). */
void xrl_top_json(struct jw *w, const struct xrl_top_item *v, size_t n, bool dry_mode);

#endif

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, features: replay's bookkeeping (replay_keys.c): the table of the
 * keys seen limited, and the fast path's look-ups (replay.c says how the
 * fast path finds the keys limited).
 */
#ifndef XRL_FEATURES_REPLAY_KEYS_H
#define XRL_FEATURES_REPLAY_KEYS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include "features/replay.h"
#include "maps/stats.h"

struct xrl;

/* What the fast path knows of a key's bucket between its frames. */
struct kt_seen {
	__u64 dropped;		/* the bucket's counter after its last frame */
	bool answered;		/* the cache has answered for it: a flush by
				 * another frame may move its counter */
};

/* The keys seen limited: an open-addressing table. */
struct key_table {
	struct xrl_replay_key *v;	/* in order of first drop */
	size_t n, cap;
	__u32 *slot;			/* index + 1 into v; 0: empty */
	__u32 *gen;			/* the rule version of each entry */
	struct kt_seen *seen;		/* the fast path's, of each entry */
	size_t nslots;
};

/* The entry of (gen, key) of rule r, made when new; NULL when out of memory. */
struct xrl_replay_key *xrl__kt_get(struct key_table *t, const struct xrl_key *k,
				   const struct xrl_rule *r);
/* The entry of (gen, key) if there is one, without making it. */
struct xrl_replay_key *xrl__kt_find(const struct key_table *t, const struct xrl_key *k);
/* The counts of the keys seen limited, read at the end. */
int xrl__kt_counts(struct xrl *x, struct key_table *t);

/* A source's rule in the prefix rule tries, remembered: a direct-mapped
 * table (an address that collides is looked up again). */
#define RULE_MEMO_SLOTS	65536

struct rule_memo {
	__u8 family;		/* 0: empty */
	__u8 found;		/* the trie holds a rule for the address */
	__u8 addr[16];
	struct xrl_rule rule;
};

/* The rule of a source address (zero-padded to 16 bytes) in the tries fd[0]
 * (IPv4) and fd[1]: 1 when there is one, in *rule. */
int xrl__source_rule(struct rule_memo *memo, const int *fd, int family, const __u8 *addr,
		     struct xrl_rule *rule);
/* Did the hot-key cache answer for the rule in slot since last asked? */
bool xrl__cache_answered(struct xrl *x, __u32 slot, __u64 *last, struct xrl_rule_stats *vals);
/* The calling thread on its CPU; *old: the set to restore. */
bool xrl__pin_cpu(cpu_set_t *old);

#endif

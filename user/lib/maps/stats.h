/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: the counters and the buckets (stats.c), the
 * program's own run-time statistics (runtime.c).
 */
#ifndef XRL_MAPS_STATS_H
#define XRL_MAPS_STATS_H

#include <stdbool.h>
#include "xdp_rl_common.h"

struct xrl;

/* Counters. */
int xrl_rule_stats_get(struct xrl *x, __u32 slot, struct xrl_rule_stats *sum);
int xrl_global_stats_get(struct xrl *x, struct xrl_global_stats *sum);
/* The program's own cost: the kernel's BPF run-time statistics, counted
 * only while enabled (a process holds a BPF_STATS_RUN_TIME fd, or the sysctl
 * kernel.bpf_stats_enabled is 1). Both counts persist with the program. */
struct xrl_prog_runtime {
	__u64 run_time_ns;	/* time in the program, over its counted runs */
	__u64 run_cnt;		/* runs counted */
	/* with `who` only: */
	bool enabled;		/* the kernel counts now */
	bool by_sysctl;		/* kernel.bpf_stats_enabled is 1 */
	int holder_pid;		/* another process holding a stats fd; 0: none */
	char holder_comm[16];	/* its command name (/proc/PID/comm), "" unknown */
};
int xrl_prog_runtime_get(struct xrl *x, bool who, struct xrl_prog_runtime *rt);
/* Enable them for as long as the returned fd is open (xdp-rld holds it for
 * its life): an fd, or a negative errno. */
int xrl_runtime_stats_enable(void);
/* Verdicts on packets received by the interface of this ifindex (its slot:
 * ifindex % XRL_IF_SLOTS, shared with any interface XRL_IF_SLOTS apart). */
int xrl_if_stats_get(struct xrl *x, __u32 ifindex, struct xrl_if_stats *sum);

/* Buckets. */
/* A bucket's key: a rule version's generation and the masked source. */
struct xrl_key {
	int family;
	__u32 gen;
	__u8 addr[16];
};

typedef int (*xrl_bucket_cb)(const struct xrl_key *k, const struct xrl_bucket *b,
			     void *ctx);
/* Every bucket of both families' tables. */
int xrl_buckets_walk(struct xrl *x, xrl_bucket_cb cb, void *ctx);
int xrl_bucket_get(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b);
/* The bucket as its table holds it, without the drops the hot-key cache
 * still holds for it (xrl_bucket_get() reads the whole cache for those):
 * one look-up, for a question asked of many keys (when was it last seen). */
int xrl_bucket_peek(struct xrl *x, const struct xrl_key *k, struct xrl_bucket *b);
/* Many keys' counts as xrl_bucket_get() says them, with one read of the
 * hot-key cache for all: dropped[i] is UINT64_MAX for a key without a
 * bucket. */
int xrl_buckets_dropped(struct xrl *x, const struct xrl_key *k, size_t n, __u64 *dropped);
void xrl_key_of(struct xrl_key *k, const struct xrl_rule *r, int family,
		const __u8 *addr);
/* Forgive a key: a fresh, full bucket for the algorithm of its rule r (the
 * counters dropped and last seen kept). -ENOENT when it has no bucket. */
/* What a key may still pass now under its rule: GCRA tokens, or cost
 * units left in the window(s); and the most it can have (burst, or the
 * limit per window). */
__u64 xrl_bucket_left(const struct xrl_rule *r, const struct xrl_bucket *b, __u64 now_ns);
__u64 xrl_rule_capacity(const struct xrl_rule *r);
/* A key's drops are would-drops (counted, passed): its rule's dry-run or
 * the data path's dry-run mode. Every per-key view says so. */
bool xrl_key_dry_run(const struct xrl_rule *r, enum xrl_mode mode);
int xrl_bucket_reset(struct xrl *x, const struct xrl_rule *r, const struct xrl_key *k);
/* Forget a key: delete its bucket. -ENOENT when it has none. */
int xrl_bucket_del(struct xrl *x, const struct xrl_key *k);
/* Keys with a bucket in one family's table (4 or 6). */
int xrl_keys_tracked_family(struct xrl *x, int family, unsigned long long *n);
/* Buckets evicted (or deleted) since the program was loaded, estimated:
 * the keys inserted less those tracked now. */
unsigned long long xrl_keys_evicted_estimate(const struct xrl_global_stats *g,
					     unsigned long long tracked);
/* The size of one family's bucket table (4 or 6). */
__u32 xrl_keys_capacity_family(struct xrl *x, int family);

#endif

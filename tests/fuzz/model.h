/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A reference model of xdp-rl's data path in plain C, written from the
 * README's rules (Rules, Failure policy, Modes, Packets it does not meter)
 * and not from bpf/: parse -> classify -> meter -> decide -> count.
 * The maths is include/xrl_meter.h, the specification the program shares.
 *
 * Each step is one function below, and each future rule feature has one
 * place (see model.c):
 *   model_parse()    what a frame is: source, protocol, destination port, SYN
 *   model_classify() which source rule matches; model_classify_endpoint()
 *                    which endpoint rule (README, Endpoint rules)
 *   model_cost()     what one packet costs (packets, or the frame's bytes)
 *   model_meter()    the algorithms: token bucket, fixed and sliding window;
 *                    the new-key budget before a key gets a bucket, the
 *                    aggregate after the key's bucket admitted (model_take:
 *                    a shared GCRA taken in per-CPU chunks, one CPU)
 *   model_agg_closed() the aggregate refused on this CPU: the rule's
 *                    packets dropped before the key look-up until then
 *   model_hot()      the hot-key drop cache as an ideal one (every entry
 *                    kept, every statement of every refusal, even those it
 *                    answered): it predicts the most drops the program's
 *                    cache may answer; its statements are true, so a drop it
 *                    answers is one the whole path would make
 *   model_decide()   modes, watchdog, actions, per-rule and global dry-run
 *   model_count()    every counter: per rule, global, per interface
 *   model_run()      the order (docs/rules.md, Order): the endpoint rule
 *                    first when its bucket refuses the packet now
 *                    (model_ep_first(): the source rule is not met), else
 *                    the source rule, then (if it passed) the endpoint rule
 */
#ifndef XRL_FUZZ_MODEL_H
#define XRL_FUZZ_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "xdp_rl_common.h"

#define M_MAX_RULES	64
#define M_BUCKETS	(1u << 17)	/* open addressing, power of two */

enum m_parse { M_NON_IP, M_MALFORMED, M_IP };

struct m_pkt {
	enum m_parse kind;
	int family;		/* 4 or 6 when M_IP */
	uint8_t src[16];
	uint32_t len;		/* the frame's length: what bytes counters add */
	uint8_t proto;		/* the L4 protocol, or the header a walk stopped at */
	bool ports;		/* TCP/UDP with its port read (not a later fragment) */
	uint16_t dport;
	bool syn;		/* TCP SYN without ACK */
};

/* A rule as the operator wrote it (README, Rules), plus the generation
 * libxrl gave it at commit (which rules "did not change" is libxrl's
 * decision, not the data path's: the model takes it as input). */
struct m_rule {
	int family;
	uint8_t addr[16];
	uint8_t prefix_len;
	uint8_t key_len;	/* 0: the default, /32 or /64 */
	uint8_t action;		/* enum xrl_action */
	uint8_t on_failure;	/* enum xrl_on_failure */
	uint8_t algo;		/* enum xrl_algo */
	uint8_t unit;		/* enum xrl_unit */
	uint64_t rate_count, rate_period_ns;
	uint32_t burst;
	uint32_t id;
	bool dry_run;
	bool fleet;		/* scope fleet: without a daemon, a host rule */
	/* aggregate R [burst B] (agg_burst 0: not written), new-keys R (0:
	 * the default from the table size): as written */
	uint64_t agg_count, agg_period_ns, nk_count, nk_period_ns;
	uint32_t agg_burst;
	/* an endpoint rule: proto, and a port range only when dport was named */
	bool ep, has_dport, syn;
	uint8_t proto;
	uint8_t slip;		/* DNS slip N (0: none) */
	uint16_t dport_lo, dport_hi;
	/* filled at commit */
	uint32_t gen, slot;
	/* token bucket: emission interval and tolerance (time units, per cost
	 * unit); windows: the window (ns) and the cost units per window */
	uint64_t interval, limit;
	/* the aggregate's and the new-key budget's shared GCRA (interval 0:
	 * none) and the chunk a CPU takes; their TATs (used: not full) */
	uint64_t agg_interval, agg_limit, nk_interval, nk_limit;
	uint32_t agg_chunk, nk_chunk;
	__u64 agg_tat, nk_tat;
	bool agg_used, nk_used;
	struct xrl_rule_stats st;
};

/* A statement of the ideal hot-key cache: frames of min_len bytes or more
 * (any frame: 0) are refused until `until` (time units). */
struct m_stmt {
	uint64_t until;
	uint32_t min_len;
};

/* An entry of the ideal hot-key cache: what is known of a source under one
 * rule (a source or an endpoint rule). It keeps every statement that no
 * other one covers and that has not run out: the program's cache keeps one
 * per source and class, made at some of the same refusals. */
struct m_hot {
	uint32_t used;
	int family, rule;
	uint8_t src[16];
	struct m_stmt *st;
	int n, cap;
};

#define M_HOT		(1u << 16)

struct m_bucket {
	uint32_t used, gen;
	int family;
	uint8_t key[16];
	uint64_t tat;		/* token bucket: TAT; windows: word[0] */
	uint64_t win1;		/* sliding window: word[1] */
	uint64_t dropped;	/* refusals of this bucket (a slipping rule's: every one) */
};

struct model {
	struct m_rule rules[M_MAX_RULES];
	int n_rules;
	uint32_t mode;			/* enum xrl_mode */
	uint64_t now_ns;
	uint64_t heartbeat_ns, watchdog_ns;
	struct xrl_global_stats g;
	struct xrl_if_stats ifs;	/* the one receiving interface */
	struct m_bucket *b;		/* M_BUCKETS */
	uint64_t n_buckets;
	struct m_hot *hot;		/* M_HOT */
	uint32_t ncpus;			/* possible CPUs: the chunks' divisor */
	uint64_t keys;			/* the table size: the default new-key budget */
	/* DNS slip: the host's cap (its GCRA), and the refused key's drops
	 * with the packet being decided (0: not its bucket's refusal) */
	__u64 slip_tat;
	bool slip_used;
	uint64_t kdrops;
};

struct m_result {
	int verdict;			/* XDP_PASS, XDP_DROP or XDP_TX */
	int rule;			/* index in rules[], -1: none */
	int ep_rule;			/* the endpoint rule checked, -1: none */
	struct m_pkt pkt;
};

int model_init(struct model *m);
void model_free(struct model *m);
/* A new rule set: rules whose gen the model knows keep bucket and counters. */
void model_set_rules(struct model *m, const struct m_rule *v, int n);
void model_parse(const uint8_t *f, size_t len, struct m_pkt *p);
int model_classify(const struct model *m, const struct m_pkt *p);
int model_classify_endpoint(const struct model *m, const struct m_pkt *p);
/* One frame through the whole path: the verdict, and every counter moved. */
void model_run(struct model *m, const uint8_t *f, size_t len, struct m_result *r);

#endif

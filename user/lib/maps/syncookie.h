/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, the map layer: SYN cookies (syncookie.c): their counters, the
 * verified sources' table, and what the host must have for them.
 */
#ifndef XRL_MAPS_SYNCOOKIE_H
#define XRL_MAPS_SYNCOOKIE_H

#include <stddef.h>
#include "xdp_rl_common.h"

struct xrl;

/* A rule slot's SYN-cookie counters, summed over the CPUs
 * (XRL_RULE_SLOTS: every rule's). */
int xrl_sc_stats_get(struct xrl *x, __u32 slot, struct xrl_sc_stats *sum);

/* Answers sent back (XDP_TX), every CPU. */
int xrl_answers_get(struct xrl *x, struct xrl_answer_stats *sum);

/* The verified sources' table: entries now (a walk; expired ones
 * included until they are evicted or verified again), its size, the keys
 * created, and an estimate of the entries evicted (created less those
 * still in). */
struct xrl_sc_table {
	__u64 entries;
	__u64 size;
	__u64 inserted;
	__u64 evicted;
};
int xrl_sc_table_get(struct xrl *x, struct xrl_sc_table *t);

/* Forget every verified source: each must answer a cookie again. */
int xrl_sc_verified_clear(struct xrl *x);

struct xrl_rule_entry;

/*
 * netfilter's SYNPROXY for the syn-cookies rules of v (n rules), in the
 * caller's network namespace: the instance's own nftables table (inet)
 * named table (xrl_sc_table_name()), replaced whole in one nft
 * transaction, with the rules' ports; deleted when v has no syn-cookies
 * rule. nft is killed after XRL_SC_NFT_TIMEOUT_MS. 0, or an error saying
 * why (nft missing, its message).
 */
#define XRL_SC_NFT_TABLE	"xdp_rl_synproxy"
#define XRL_SC_NFT_TIMEOUT_MS	10000
int xrl_sc_nft_sync(const char *table, const struct xrl_rule_entry *v, size_t n);

/* The table of the instance pinned at pin_dir: XRL_SC_NFT_TABLE for the
 * default pin directory, else XRL_SC_NFT_TABLE_<8 hex of its path>, so
 * that two instances in one namespace never replace each other's. */
void xrl_sc_table_name(const char *pin_dir, char *buf, size_t len);

/* The syn-cookies rules' ports as nft writes a set's elements; the
 * number of rules, or an error when they do not fit. */
int xrl_sc_ports(const struct xrl_rule_entry *v, size_t n, char *ports, size_t len);

/* A syn-cookies rule's ports must not overlap the host's ephemeral ports
 * (net.ipv4.ip_local_port_range): the answers to the host's own
 * connections would be taken for a client's handshake. 0, or -ENOTSUP
 * with why in buf. */
struct xrl_rule;
int xrl_sc_ephemeral_check(const struct xrl_rule *r, char *buf, size_t len);

/*
 * What the host needs for a syn-cookies rule, in the caller's network
 * namespace (docs/answers.md): the kernel's SYN cookies
 * (net.ipv4.tcp_syncookies, CONFIG_SYN_COOKIES), connection tracking
 * that never takes up a connection in its middle
 * (net.netfilter.nf_conntrack_tcp_loose = 0); netfilter's SYNPROXY is
 * proved by xrl_sc_nft_sync() installing its rule. 0, or -ENOTSUP with
 * what is missing and how to add it in buf.
 */
int xrl_sc_host_check(char *buf, size_t len);

#endif

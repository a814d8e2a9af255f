/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The program's maps: their names, types and sizes are the pinned layout
 * (xdp_rl_common.h), which the skeleton, the pins and upgrades depend on.
 */
#ifndef XRL_BPF_MAPS_H
#define XRL_BPF_MAPS_H

#include "parsing.h"
#include "xdp_rl_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_control);
} xrl_control SEC(".maps");

/*
 * The rule set of each family: an array of maps with one entry, holding the
 * LPM trie of the published set. A commit builds a fresh trie completely and
 * publishes it with one update of the outer map; a published trie is never
 * written again. A packet looks the inner map up once, so it sees the old
 * set or the new one, never a mix. The inner definitions are templates: the
 * maps themselves are created by userspace (libxrl), never by the loader.
 *
 * The template gives sizes, not __type(): clang emits only a forward
 * declaration for a struct reached through __array()'s pointers, and libbpf
 * cannot size a forward declaration.
 */
#define XRL_RULES_MAP(name, keytype) XRL_LPM_MAP(name, keytype, XRL_MAX_RULES)
#define XRL_LPM_MAP(name, keytype, max)					\
	struct name##_inner {						\
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);			\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
		__uint(max_entries, max);				\
		__uint(key_size, sizeof(keytype));			\
		__uint(value_size, sizeof(struct xrl_rule));		\
	};								\
	struct {							\
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);		\
		__uint(max_entries, 1);					\
		__type(key, __u32);					\
		__array(values, struct name##_inner);			\
	} name SEC(".maps")

XRL_RULES_MAP(xrl_rules4, struct xrl_lpm4_key);
XRL_RULES_MAP(xrl_rules6, struct xrl_lpm6_key);

/* Endpoint rules (xdp_rl_common.h): the class array and the tries, each
 * published like the source rules. */
XRL_LPM_MAP(xrl_ep4, struct xrl_ep4_key, XRL_EP_ENTRIES);
XRL_LPM_MAP(xrl_ep6, struct xrl_ep6_key, XRL_EP_ENTRIES);

struct xrl_ep_class_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XRL_EP_SLOTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct xrl_ep_class_inner);
} xrl_ep_class SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_DEFAULT_KEYS);
	__type(key, struct xrl_bucket_key4);
	__type(value, struct xrl_bucket);
} xrl_buckets4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_DEFAULT_KEYS);
	__type(key, struct xrl_bucket_key6);
	__type(value, struct xrl_bucket);
} xrl_buckets6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_RULE_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_rule_stats);
} xrl_rule_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_global_stats);
} xrl_global_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_IF_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_if_stats);
} xrl_if_stats SEC(".maps");

/* Live events: one ring per reader, and the cap's counters. */
#include "rings.h"

/* Fleet-wide rules (xdp_rl_common.h): the shares, the promoted keys, the
 * leases. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XRL_RULE_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_fleet_rule);
} xrl_fleet_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XRL_FLEET_KEYS);
	__type(key, struct xrl_bucket_key4);
	__type(value, __u32);
} xrl_fleet_keys4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XRL_FLEET_KEYS);
	__type(key, struct xrl_bucket_key6);
	__type(value, __u32);
} xrl_fleet_keys6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XRL_FLEET_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_lease);
} xrl_leases SEC(".maps");

/* Per CPU: a fleet rule at its local share, while one packet is metered. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_rule);
} xrl_fleet_scratch SEC(".maps");

/* Shared per-rule state: the aggregate's and the new-key budget's GCRA. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XRL_RULE_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_rule_shared);
} xrl_rule_shared SEC(".maps");

/* The hot-key drop cache (xdp_rl_common.h, struct xrl_hot). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_HOT_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_hot);
} xrl_hot SEC(".maps");

/* SYN cookies (xdp_rl_common.h): the verified sources, the counters. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_SC_VERIFIED);
	__type(key, struct xrl_sc_key);
	__type(value, struct xrl_sc_entry);
} xrl_sc_verified SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_RULE_SLOTS + 1);
	__type(key, __u32);
	__type(value, struct xrl_sc_stats);
} xrl_sc_stats SEC(".maps");

/* Bans (xdp_rl_common.h, struct xrl_ban): one LPM trie per family, written
 * in place, entry by entry; the size is kept from the pins (attach bans N). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XRL_DEFAULT_BANS);
	__type(key, struct xrl_lpm4_key);
	__type(value, struct xrl_ban);
} xrl_bans4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XRL_DEFAULT_BANS);
	__type(key, struct xrl_lpm6_key);
	__type(value, struct xrl_ban);
} xrl_bans6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_ban_stats);
} xrl_ban_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_ban_totals);
} xrl_ban_totals SEC(".maps");

/* Rules that ban: each key's offences and bans so far (escalation). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XRL_OFFENDERS);
	__type(key, struct xrl_offender_key);
	__type(value, struct xrl_offender);
} xrl_offenders SEC(".maps");

/* Per CPU: a rule's new ban while it is built (off the verifier's stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_ban_scratch);
} xrl_ban_scratch SEC(".maps");

/* Capture (xdp_rl_common.h, struct xrl_capture): the filter, its counters
 * and the perf ring of the records. Not pinned: the program's own. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_capture);
} xrl_capture SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_capture_stats);
} xrl_capture_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} xrl_capture_ring SEC(".maps");

/* Per CPU: a record's header while it is built (off the verifier's stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_capture_hdr);
} xrl_capture_scratch SEC(".maps");

/* Named sets (xdp_rl_common.h): the sets, each a trie behind its slot,
 * the rules that take one, and the names (userspace only). */
struct xrl_sets_inner {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, XRL_SET_MAX_ELEMS);
	__uint(key_size, sizeof(struct xrl_set_key));
	__uint(value_size, sizeof(struct xrl_set_elem));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XRL_MAX_SETS);
	__type(key, __u32);
	__array(values, struct xrl_sets_inner);
} xrl_sets SEC(".maps");

struct xrl_set_rules_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * XRL_MAX_SET_RULES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct xrl_rule));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct xrl_set_rules_inner);
} xrl_set_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XRL_MAX_SETS);
	__type(key, __u32);
	__type(value, struct xrl_set_info);
} xrl_set_meta SEC(".maps");

/* The host's cap of answers (xdp_rl_common.h, struct xrl_answer_cap). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_answer_cap);
} xrl_answer_cap SEC(".maps");

/* The banned-source cache (xdp_rl_common.h, struct xrl_ban_hot). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XRL_BAN_HOT_SLOTS);
	__type(key, __u32);
	__type(value, struct xrl_ban_hot);
} xrl_ban_hot SEC(".maps");

#endif

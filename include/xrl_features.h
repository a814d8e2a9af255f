// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What BPF and userspace share of the answers, SYN cookies, bans, capture,
 * the hooks and named sets: the end of xdp_rl_common.h, which includes it
 * (include that, not this).
 */
#ifndef XRL_FEATURES_H
#define XRL_FEATURES_H

/*
 * Answers: a frame the data path rewrote in place and sent back out of the
 * interface it came in on (XDP_TX), neither passed nor dropped; counted in
 * the global and the interface stats (answered_packets). What the library
 * reads of them (xrl_answers_get()).
 */
struct xrl_answer_stats {
	__u64 tx_packets;
};

/*
 * SYN cookies (rule option syn-cookies; docs/answers.md). A source proves
 * its address by answering a cookie SYN-ACK; it is then verified, in the
 * LRU table xrl_sc_verified (XRL_SC_VERIFIED entries, the least recently
 * seen evicted first), until it has sent nothing for XRL_SC_IDLE_NS. The
 * SYN-ACK's MSS and window scale are the host's, as its SYNPROXY rule
 * says them (docs/answers.md).
 */
#define XRL_SC_VERIFIED		65536
#define XRL_SC_IDLE_NS		(600ULL * 1000000000ULL)	/* 10 minutes */
#define XRL_SC_TOUCH_NS		(1ULL * 1000000000ULL)	/* seen_ns written at most this often */
#define XRL_SC_MSS4		1460
#define XRL_SC_MSS6		1440
#define XRL_SC_WSCALE		7

struct xrl_sc_key {
	__u32 family;		/* 4 or 6 */
	__u32 addr[4];		/* IPv4: the address; IPv6: its /64 (network order) */
};

struct xrl_sc_entry {
	__u64 verified_ns;	/* the data path's clock when its cookie came back */
	__u64 seen_ns;		/* last packet seen (to XRL_SC_TOUCH_NS) */
};

/* Per rule slot, per CPU (xrl_sc_stats); slot XRL_RULE_SLOTS: every rule. */
struct xrl_sc_stats {
	__u64 cookies_sent;	/* SYNs answered with a cookie SYN-ACK */
	__u64 acks_valid;	/* ACKs whose cookie was valid */
	__u64 acks_invalid;	/* ACKs whose cookie was not: dropped */
	__u64 verified;		/* sources entered in xrl_sc_verified */
	__u64 unverified_dropped;	/* other packets of unverified sources, and
					 * SYNs that could not be answered */
};

/*
 * Bans (docs/bans.md): prefixes dropped right after parsing, before the
 * rule and bucket look-ups, until their end on the data path's clock. One
 * LPM trie per family (xrl_bans4, xrl_bans6: struct xrl_lpm4_key and
 * xrl_lpm6_key, any prefix length), written in place: a ban is one entry,
 * added or deleted on its own (an LPM trie update is atomic per entry). A
 * full trie refuses a new entry (-ENOSPC); it never evicts one.
 *
 * An entry past its end no longer matches (the data path checks it) and
 * is reclaimed by whoever sweeps: the daemon every second, xdp-rlctl when
 * a ban command writes the table.
 */
#define XRL_DEFAULT_BANS	65536	/* entries per family */
#define XRL_BAN_REASON_LEN	64	/* with its NUL: printable ASCII */
#define XRL_BAN_WHO_LEN		16	/* a decider's name, with its NUL */
#define XRL_OFFENDERS		65536	/* escalation state, keys of every rule */
#define XRL_BAN_MAX_DEFAULT_S	86400	/* ban-max: 24 h (or ban, if longer) */
#define XRL_BAN_JITTER_DIV	8	/* a rule's ban lasts d + [0, d / 8] */

enum xrl_ban_origin {
	XRL_BAN_RULE = 1,	/* a rule's ban (rule_id) */
	XRL_BAN_OPERATOR = 2,	/* xdp-rlctl ban add */
	XRL_BAN_CONFIG = 3,	/* a ban line of the configuration (replaced on reload) */
	XRL_BAN_DECIDER = 4,	/* another tool through xdp-rlctl ban add ... by NAME */
	XRL_BAN_ORIGINS = 5,
};

/* struct xrl_ban.state: which of its events went out (set by cmpxchg) */
#define XRL_BAN_S_NEW		0	/* "banned" due at its first drop */
#define XRL_BAN_S_BANNED	1	/* "banned" went out (or is not due) */
#define XRL_BAN_S_ENDED		2	/* "unbanned" went out */

struct xrl_ban {
	__u64 expires_ns;	/* data-path clock; 0: until deleted */
	__u64 set_ns;		/* data-path clock when set */
	__u64 dropped;		/* packets it dropped (an atomic add) */
	__u32 origin;		/* enum xrl_ban_origin */
	__u32 rule_id;		/* XRL_BAN_RULE: the rule; else 0 */
	__u32 state;		/* XRL_BAN_S_* */
	__u16 level;		/* a rule's ban: bans of the key before it (doubling) */
	__u16 prefix_len;	/* its own key's: a look-up tells an exact entry */
	char who[XRL_BAN_WHO_LEN];	/* XRL_BAN_DECIDER: its name; else "" */
	char reason[XRL_BAN_REASON_LEN];	/* the operator's words; "" */
};

/* Per CPU: what bans did to packets, and the clock they read (once a tick:
 * jiffies, as the hot-key cache does). */
struct xrl_ban_stats {
	__u64 dropped_packets;	/* dropped by a ban (also in the global verdicts) */
	__u64 dropped_bytes;
	__u64 would_drop_packets;	/* matched a ban in dry-run or fail-open mode */
	__u64 allowed_packets;	/* a rule's ban over a source an allow rule covers */
	__u64 clock_j;		/* not a counter: jiffies at clock_ns */
	__u64 clock_ns;		/* not a counter: the coarse clock then */
};

/* One entry, shared by every CPU and by userspace (mmap-able, atomic adds):
 * the bans set and ended, by origin, and those refused. */
struct xrl_ban_totals {
	__u64 set[XRL_BAN_ORIGINS];	/* by origin (index 0 unused) */
	__u64 expired[XRL_BAN_ORIGINS];	/* reclaimed past their end */
	__u64 deleted[XRL_BAN_ORIGINS];	/* ban del, ban flush, a reload */
	__u64 refused_full;	/* not set: the table was full */
	__u64 would_ban;	/* a dry-run rule's (or mode's) bans, not set */
	__u64 offences;		/* a rule's keys becoming limited, counted for bans */
	/* not a counter: rules may hold at most this many bans (both
	 * families), set at load to three quarters of a table: a flood of
	 * offenders never fills the room the operator, the configuration
	 * and the deciders need (XRL_BAN_RESERVE_DIV). 0: no limit */
	__u64 rule_bans_max;
	__u64 refused_reserve;	/* a rule's ban not set: rules hold rule_bans_max */
};
#define XRL_BAN_RESERVE_DIV	4	/* a quarter of a table is not for rules' bans */

/*
 * The banned-source cache: per CPU, direct-mapped by a hash of the source
 * (XRL_BAN_HOT_SLOTS entries of 48 bytes). An entry says "the ban of
 * prefix/prefix_len (set at set_ns) dropped packets from src, and drops
 * them until expires_ns": a banned packet answered from it skips the ban
 * tries' look-up (and a rule's ban its allow check). Exact: it is filled
 * only by a drop of the whole ban step, valid only while the control
 * block's ban_gen and cache_epoch are those read before that step's
 * look-up (every ban writer bumps ban_gen after its change; every rule
 * commit and mode change the epoch), and its end is checked against the
 * same clock as the ban's own. Its drops reach the ban's count every
 * XRL_HOT_FLUSH drops, when the entry is replaced, and at the ban's end;
 * until then readers add the entries' pending drops of that ban.
 */
#define XRL_BAN_HOT_BITS	12
#define XRL_BAN_HOT_SLOTS	(1 << XRL_BAN_HOT_BITS)

struct xrl_ban_hot {
	__u32 src[4];		/* the packet's source, as parsed */
	__u64 expires_ns;	/* the ban's end (data-path clock); 0: none */
	__u64 set_ns;		/* the ban's set_ns: which ban of the prefix */
	__u32 gen;		/* xrl_control.ban_gen read before the fill's look-up */
	__u32 epoch;		/* xrl_control.cache_epoch then */
	__u32 pending;		/* drops not yet added to the ban's count */
	__u8 family;		/* 4 or 6; 0: empty */
	__u8 prefix_len;	/* the ban's prefix: src masked by it */
	__u16 pad;
};

/* Escalation: per (rule id, key), an LRU of XRL_OFFENDERS entries. */
struct xrl_offender_key {
	__u32 rule_id;
	__u32 family;
	__u32 addr[4];		/* the key: source masked by the rule's key_len */
};

struct xrl_offender {
	__u64 last_ns;		/* the last offence, or the end of the last ban */
	__u32 count;		/* offences towards the next ban (after N) */
	__u32 level;		/* bans so far: the next lasts ban << level */
};

/* Per CPU, the data path's only: a rule's new ban and its keys while it is
 * built, off the verifier's 512 bytes of stack for a call chain. */
struct xrl_ban_scratch {
	struct xrl_ban ban;
	struct xrl_offender_key ok;
	struct xrl_lpm6_key k;	/* either family's: a v4 trie reads 8 bytes */
};

/*
 * Capture: copies of the packets the data path handled, with their final
 * verdict, for `xdp-rlctl capture`. Only while xrl_control.capture_until
 * is in the future; the filter and the rate cap below decide which. The
 * maps are the program's own, not pinned (the reader finds them by the
 * program's map ids): one capture at a time per instance, by a claim on
 * the pin directory. Each record on the perf ring is a struct
 * xrl_capture_hdr followed by the first caplen bytes of the frame.
 */
#define XRL_CAPTURE_LEASE_SHIFT	30	/* lease units: 2^30 ns, about 1.07 s */
#define XRL_CAPTURE_LEASE	4	/* units a renewal grants */
#define XRL_CAPTURE_RATE	2000	/* records per second at most (default and cap) */
#define XRL_CAPTURE_BURST	200
#define XRL_CAPTURE_SNAPLEN	256	/* default bytes per packet */
#define XRL_CAPTURE_MAX_SNAPLEN	4096

#define XRL_CAPTURE_F_PASS	(1u << 0)	/* verdicts to capture */
#define XRL_CAPTURE_F_DROP	(1u << 1)

/* The capture's filter and rate cap: one entry, written by the reader
 * before it sets the lease. */
struct xrl_capture {
	__u64 tat;		/* the rate cap's GCRA (ns, the coarse clock); 0: fresh */
	__u64 interval_ns;	/* 1e9 / records per second */
	__u64 limit_ns;		/* (burst - 1) * interval */
	__u32 verdicts;		/* XRL_CAPTURE_F_* */
	__u32 rule_slot;	/* the deciding rule's slot + 1; 0: any packet */
	__u32 snaplen;		/* bytes of each frame, at most */
	__u8 family;		/* source filter: 0 none, 4 or 6 */
	__u8 pad[3];
	__u32 addr[4];		/* the source prefix, network order, masked */
	__u32 mask[4];
};

/* Per CPU: what the capture did. */
struct xrl_capture_stats {
	__u64 matched;		/* packets the filter matched */
	__u64 captured;		/* written to the ring */
	__u64 left_out;		/* matched but over the rate cap */
	__u64 lost;		/* the ring had no room (or no reader on that CPU) */
};

/* The record's header. */
struct xrl_capture_hdr {
	__u64 ts_ns;		/* CLOCK_MONOTONIC (the precise clock; the test clock) */
	__u32 ifindex;		/* the receiving interface */
	__u32 len;		/* the frame's length */
	__u32 caplen;		/* bytes that follow */
	__u32 rule_slot;	/* the deciding rule's slot + 1; 0: no rule */
	__u8 verdict;		/* XRL_CAPTURE_F_PASS or _DROP */
	__u8 mode;		/* enum xrl_mode */
	__u8 pad[6];
};

/* The hooks the program runs at: the XDP hook (xdp_rl) or tc ingress
 * (xrl_tc), one pipeline and the same maps. */
enum xrl_hook {
	XRL_HOOK_XDP = 0,
	XRL_HOOK_TC = 1,
};

/*
 * Named sets (rule add @NAME ...; docs/sets.md). A set is one LPM trie of
 * IPv4 and IPv6 prefixes together: the key's first byte is the family, so
 * that an IPv6 prefix never covers an IPv4 source (prefixlen = 8 + the
 * prefix's length). Each set is a slot of xrl_sets, an array of maps: a new
 * set is built completely and swapped in with one update of its slot (a
 * packet sees the old set or the new one). An element may expire: its
 * value holds the data-path clock's time it ends at (0: never); an expired
 * element no longer matches (the data path checks), and is deleted by the
 * next sweep (the daemon's, or a command that touches the set).
 *
 * The rules that take a set sit in xrl_set_rules (an array of maps of one
 * entry, published by the rule commit): an array of XRL_MAX_SET_RULES IPv4
 * copies then as many IPv6 copies (the key mask differs by family), in the
 * order a packet checks them (allow rules first, then by id), ended by an
 * entry of id 0. A packet checks them before the prefix rules: the first
 * set holding its source decides its rule.
 *
 * xrl_set_meta (userspace only) names each slot.
 */
#define XRL_MAX_SETS		64		/* sets, and slots of xrl_sets */
#define XRL_MAX_SET_RULES	64		/* rules that take a set */
#define XRL_SET_MAX_ELEMS	1048576		/* prefixes per set */
#define XRL_SET_NAME_MAX	31		/* a set's name: [A-Za-z0-9_.-], a letter first */
#define XRL_SET_EXPIRED_HOPS	4		/* expired elements stepped over per look-up */

struct xrl_set_key {
	__u32 prefixlen;	/* 8 (the family) + the prefix length */
	__u8 family;		/* 4 or 6 */
	__u8 addr[16];		/* network order; IPv4: the first 4 bytes */
	__u8 pad[3];
};

struct xrl_set_elem {
	__u64 expires_ns;	/* data-path clock; 0: never */
	__u32 prefixlen;	/* the key's (an expired element's look-up steps
				 * to the next shorter prefix) */
	__u32 pad;
};

#define XRL_SET_F_USED		1u

struct xrl_set_info {
	char name[XRL_SET_NAME_MAX + 1];
	__u64 timeout_ns;	/* the default timeout of an element added; 0: none */
	__u64 next_expiry_ns;	/* the earliest expiry of an element; 0: none */
	__u32 flags;		/* XRL_SET_F_* */
	__u32 count;		/* elements (expired ones until swept) */
	__u64 loaded_ns;	/* data-path clock of the last change */
};

#endif /* XRL_FEATURES_H */

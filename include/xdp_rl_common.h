/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp-rl: the map layouts shared by the XDP program and userspace.
 *
 * Plain __u32/__u64 types only: this header is compiled into the BPF object
 * (clang -target bpf) and into the userspace library and tests alike.
 */
#ifndef XDP_RL_COMMON_H
#define XDP_RL_COMMON_H

#include <linux/types.h>

/*
 * The layout version of the pinned maps, checked by every build that opens
 * them (xdp-rlctl upgrade, attach, the daemon) BEFORE it touches anything.
 * Bump it by one whenever a change makes maps that an older build pinned
 * wrong for this build's program, or the reverse:
 *  - a field added, removed, resized, moved or reinterpreted in any struct
 *    below that is a map key or value (the rule, bucket keys and buckets,
 *    control block, counters, events), or in a map's inner map;
 *  - an enum value renumbered, a constant that indexes a map changed
 *    (XRL_IF_SLOTS, XRL_MODE_MAX ...);
 *  - a map's type, key, value, flags, size or meaning changed.
 * Needs no bump: adding a NEW map (an upgrade creates it, empty, and pins
 * it), changing only the program's code, the bucket table size (kept from
 * the pins). A build refuses to upgrade pins of another layout version; it
 * also compares every map it knows with the pinned one (type, key and value
 * size, flags, size) and refuses on any difference, so a forgotten bump is
 * still caught for everything but a same-size reinterpretation.
 */
/* 2: bans (xrl_rule's ban fields, xrl_event's); 3: named sets (xrl_sets,
 * xrl_set_rules, xrl_set_meta, xrl_rule.set): a build without them would
 * run over their pins and silently stop checking the bans and the rules
 * that take a set (a deny list); 4: DNS slip (xrl_rule.slip, the answer
 * counters at the end of the rule, global and interface stats,
 * xrl_answer_cap; the control block's ban_families); 5: the banned-source
 * cache (xrl_ban_hot, the control block's ban_gen, which every ban writer
 * bumps: a build that does not would leave the cache answering for a ban
 * it deleted); 6: the control block's features word (an older writer
 * leaves it 0, and packets would skip the steps its rules need) */
#define XRL_LAYOUT_VERSION	6

/* What the program carries about itself, alone in its own section
 * (".rodata.info", a map of its own at offset 0): the layout version and
 * the build that loaded it (set by the loader). `xdp-rlctl status` and
 * upgrades read it from the running program. */
#define XRL_BUILD_LEN		48
struct xrl_build_info {
	__u32 magic;		/* XRL_INFO_MAGIC */
	__u32 layout;		/* XRL_LAYOUT_VERSION of the program's build */
	char build[XRL_BUILD_LEN];	/* the loader's version string */
};
#define XRL_INFO_MAGIC		0x78726c69	/* "xrli" */

/* Rules in a rule set, IPv4 and IPv6 together. Twice as many counter slots:
 * a new or changed rule always gets a slot that no published rule holds. */
#define XRL_MAX_RULES		16384
#define XRL_RULE_SLOTS		(2 * XRL_MAX_RULES)
#define XRL_DEFAULT_KEYS	1048576	/* bucket table size */
/* A token bucket (or aggregate) whose burst refills in fewer ticks of the
 * coarse clock than this meters on the precise clock (xrl_rule.precise). */
#define XRL_PRECISE_TICKS	2

/* Operating mode (control block). */
enum xrl_mode {
	XRL_MODE_ENFORCE = 0,
	XRL_MODE_DRY_RUN = 1,
	XRL_MODE_FAIL_OPEN = 2,
	XRL_MODE_FAIL_CLOSED = 3,
	XRL_MODE_MAX = 4,
};

enum xrl_action {
	XRL_ACT_LIMIT = 0,
	XRL_ACT_ALLOW = 1,
	XRL_ACT_DENY = 2,
};

/* Metering algorithm of a rule (xrl_meter.h). */
enum xrl_algo {
	XRL_ALGO_GCRA = 0,		/* token-bucket */
	XRL_ALGO_FIXED_WINDOW = 1,	/* fixed-window */
	XRL_ALGO_SLIDING_WINDOW = 2,	/* sliding-window (counter) */
	XRL_ALGO_MAX = 3,
};

/* What one unit of cost is: a packet, or a byte of the frame (a rate in
 * bytes per second, or in bits per second as written: rate 10mbit). */
enum xrl_unit {
	XRL_UNIT_PACKETS = 0,
	XRL_UNIT_BYTES = 1,
	XRL_UNIT_BITS = 2,
};

enum xrl_on_failure {
	XRL_FAIL_OPEN = 0,
	XRL_FAIL_CLOSED = 1,
};

/* LPM trie keys: the prefix length counts bits of addr, network order. */
struct xrl_lpm4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct xrl_lpm6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/*
 * A rule, as stored as the value of the LPM tries. The XDP program reads
 * everything it needs from this one value: no second look-up per packet.
 *
 * A rule is never modified in place while it is published: every commit
 * builds a fresh LPM trie and publishes it through the family's map-in-map
 * (xrl_rules4, xrl_rules6). A changed rule gets a new generation; buckets are
 * keyed by generation, so a changed or re-used rule never meters with a
 * stale bucket.
 */
struct xrl_rule {
	__u32 id;		/* operator-visible id */
	__u32 slot;		/* index into the per-rule counters */
	__u32 gen;		/* generation: unique per rule version, in every bucket key */
	__u8 action;		/* enum xrl_action */
	__u8 algo;		/* enum xrl_algo */
	__u8 key_len;		/* per-key aggregation, bits of the source */
	__u8 on_failure;	/* enum xrl_on_failure */
	__u64 interval;		/* GCRA emission interval, time units per cost unit;
				 * window algorithms: the window, ns */
	__u64 limit;		/* GCRA burst tolerance: burst * interval;
				 * window algorithms: cost units per window */
	__u32 key_mask[4];	/* key_len as a mask, network order */
	/* as the operator configured it, for listing */
	__u64 rate_count;	/* rate = rate_count per rate_period_ns */
	__u64 rate_period_ns;
	__u32 burst;		/* packets, or bytes for a byte rate */
	__u8 unit;		/* enum xrl_unit */
	/* an endpoint rule of proto tcp: SYN cookies for sources not yet
	 * verified (xrl_sc_verified); 0 in rules of earlier builds */
	__u8 syncookies;
	/* a set rule (rule add @NAME): the set's slot + 1 (XRL_MAX_SETS); 0:
	 * a prefix rule (0 in rules of earlier builds: the byte was padding) */
	__u8 set;
	/* DNS slip: of the queries the rule's key buckets refuse, every
	 * slip-th per key is answered with a truncated response (XRL_TX); 0:
	 * never (struct xrl_answer_cap) */
	__u8 slip;
	__u8 dry_run;		/* 1: meter, count would-drops, pass everything */
	/* an endpoint rule (ep 1): checked besides the source rule */
	__u8 ep;
	__u8 proto;		/* IPPROTO_* */
	__u8 syn;		/* TCP: SYNs (without ACK) only */
	__u16 dport_lo, dport_hi;	/* host order; 0-65535: any port */
	__u8 scope;		/* enum xrl_scope */
	/* 1: the rule (or its aggregate) refills its whole burst within
	 * XRL_PRECISE_TICKS ticks of the coarse clock, which would let it
	 * admit no more than its burst a tick: it meters on the precise
	 * clock (libxrl decides at commit; 0 in rules of earlier builds) */
	__u8 precise;
	/* an endpoint rule's entry of a class: 1 when the rule is in the
	 * tries under several classes (the hot-key cache then adds its
	 * cached drops to the bucket at once: struct xrl_hot) */
	__u8 ep_multi;
	__u8 pad2[5];
	/*
	 * Aggregate: one GCRA for all keys of the rule together, checked after
	 * the key's own bucket admitted the packet (both must admit). Shared
	 * state in xrl_rule_shared[slot]; each CPU takes agg_chunk tokens at a
	 * time (xrl_chunk()). agg_interval 0: no aggregate.
	 */
	__u64 agg_interval;
	__u64 agg_limit;
	__u64 agg_rate_count;	/* as configured; 0: none */
	__u64 agg_rate_period_ns;
	__u32 agg_burst;
	__u32 agg_chunk;
	/*
	 * New keys: at most this many new buckets per second for the rule, a
	 * GCRA of burst nk_burst shared like the aggregate. A key not in the
	 * table that finds no budget is metered against the aggregate alone
	 * (dropped without one) and does not enter the table.
	 * nk_rate_count 0: the default, computed at commit from the table size
	 * (XRL_NEWKEYS_DEFAULT_DIV).
	 */
	__u64 nk_interval;
	__u64 nk_limit;
	__u64 nk_rate_count;
	__u64 nk_rate_period_ns;
	__u32 nk_burst;
	__u32 nk_chunk;
	/*
	 * A rule that bans (rule add ... ban DURATION [after N] [ban-max D]):
	 * a key that becomes limited `ban_after` times, each within ban_max_s
	 * of the one before (or of its last ban's end), is banned for ban_s,
	 * doubled at each ban of a repeat offender up to ban_max_s, plus a
	 * random jitter (struct xrl_ban). ban_s 0: the rule never bans.
	 */
	__u32 ban_s;
	__u32 ban_max_s;
	__u32 ban_after;
	__u32 pad3;
};

/* Rules without new-keys: table size / XRL_NEWKEYS_DEFAULT_DIV new keys a
 * second after a burst of half the table (README, "New keys under
 * pressure"). */
#define XRL_NEWKEYS_DEFAULT_DIV	16

/* Shared per-rule state (xrl_rule_shared, indexed by slot), one cache line
 * per GCRA so that the aggregate and the new-key budget do not share one;
 * zeroed by libxrl for a fresh slot before it is published. */
struct xrl_rule_shared {
	__u64 agg_tat;
	__u64 pad1[7];
	__u64 nk_tat;
	__u64 pad2[7];
};

/*
 * The hot-key drop cache: per CPU, two-way set-associative by a hash of the
 * source address (XRL_HOT_SLOTS entries, 72 bytes each: 576 KiB a CPU; a
 * thousand sources keep ~99.8 % of their entries). An entry says "packets from src are
 * refused by rule slot/gen until `until` (time units)": with GCRA a key
 * refused at TAT cannot pass before TAT - limit + interval and TAT only
 * grows, so the answer is exact until then. It is valid only while `epoch`
 * equals the control block's cache_epoch, which libxrl bumps after every
 * rule-set commit, mode change and key reset; the watchdog is checked before
 * the cache on every packet. Drops answered here go to the rule's counters
 * at once and to the key's bucket (its `dropped`) every XRL_HOT_FLUSH drops
 * and when the entry is replaced.
 *
 * The data path's clock (CLOCK_MONOTONIC_COARSE) only moves at a tick, and
 * reading it cost more than the rest of a cached drop (20 of 55 ns): a hit
 * reads jiffies, and the clock only when jiffies moved since checked_j. The
 * watchdog's state, computed from the same clock, cannot change within a
 * tick either (a heartbeat only makes it quieter; a new watchdog setting
 * bumps the epoch). Jiffies move just before the coarse clock does, so an
 * answer may be one tick late: the clock's own granularity.
 *
 * Every algorithm, source and endpoint rules (hot_cacheable()): `until`
 * is the algorithm's own "refused until" (xrl_meter.h). A byte rule's
 * refusal holds for frames at least as long as the refused one (min_len);
 * an endpoint rule's entry is keyed by the source and the packet's
 * endpoint slot (klass, mixed into the hash too: bpf/epfirst.h), and is
 * looked at before the source rule where the endpoint rule decides first
 * (docs/rules.md, Order), else after the source rule passed the packet.
 *
 * Layout: an entry of an earlier build (klass and min_len were padding,
 * always 0) means the same here. An entry that an earlier build must not
 * take for a source rule's unconditional one (running side by side for a
 * moment during an upgrade) carries XRL_HOT_EP or XRL_HOT_SIZED in its
 * family byte, which that build compares whole: hence no layout bump.
 */
#define XRL_HOT_SET_BITS	12
#define XRL_HOT_SLOTS	(2 << XRL_HOT_SET_BITS)	/* 4096 sets of two ways */
#define XRL_HOT_FLUSH	16

struct xrl_hot {
	__u32 src[4];		/* the packet's source, as parsed */
	__u32 kaddr[4];		/* the bucket's key: source masked by key_len */
	__u64 until;		/* refused until (time units) */
	__u64 checked_j;	/* jiffies when the clock last said "still refused,
				 * watchdog quiet"; 0: never */
	__u32 epoch;		/* xrl_control.cache_epoch at the fill */
	__u32 gen;		/* the rule's generation: the bucket key */
	__u32 slot;		/* the rule's counters */
	__u32 pending;		/* drops not yet added to the bucket */
	__u8 family;		/* 4 or 6 (0: empty), | XRL_HOT_EP, | XRL_HOT_SIZED */
	__u8 flush_now;		/* an endpoint rule of several slots, whose other
				 * slots' entries hot_collect() cannot find:
				 * every drop to the bucket at once */
	__u16 min_len;		/* XRL_HOT_SIZED: frames of at least this length */
	__u32 klass;		/* XRL_HOT_EP: the endpoint slot, marked (bpf/epfirst.h); else 0 */
};
#define XRL_HOT_EP	0x80	/* an endpoint rule's entry */
#define XRL_HOT_SIZED	0x40	/* a byte rule's entry: min_len applies */
#define XRL_HOT_PRECISE	0x20	/* a precise-clock rule's entry (xrl_rule) */
#define XRL_HOT_COND	(XRL_HOT_SIZED | XRL_HOT_PRECISE)	/* not in the match */
#define XRL_HOT_FAMILY	0x0f

/*
 * The bucket of one key under one rule version. A generation is handed out
 * once per new or changed rule, so (gen, masked source) names a bucket
 * without the rule's slot. One table per family keeps an IPv4 key at 8
 * bytes: an LRU element of 56 + 8 + 24 bytes, 104 with its hash bucket.
 */
struct xrl_bucket_key4 {
	__u32 gen;
	__u32 addr;		/* source masked by the rule's key_len */
};

struct xrl_bucket_key6 {
	__u32 gen;
	__u32 addr[4];
};

struct xrl_bucket {
	__u64 tat;		/* GCRA theoretical arrival time, time units */
	__u64 dropped;		/* packets dropped (or would-drop in dry-run) */
	__u64 last_ns;		/* clock at the last packet seen */
	/* live events (README, "Live events"); read on every packet, acted
	 * on only when they change */
	__u64 event_ns;		/* clock at this key's last "limited" event; 0: none */
	__u32 limited;		/* 1 from a drop until a pass with a full bucket */
	__u32 reported;		/* 1: its "limited" went out, its "unlimited" is due */
	/* window algorithms: tat holds the window word (xrl_meter.h) of the
	 * fixed window, and of the even windows of the sliding one; this one
	 * the sliding window's odd windows */
	__u64 win1;
};

/*
 * Live events: "key K became limited by rule R" at the first drop of a key
 * that was not limited, and "key K is no longer limited" at the first pass
 * that finds its bucket full for at least one emission interval (the source
 * slowed down to its rate, or paused), after a "limited" that went out.
 * Written into two ring buffers, one per reader: xrl_events_rld (the daemon)
 * and xrl_events_ctl (xdp-rlctl events); a ring nobody reads fills up and
 * refuses more, counted, at the cost of one failed reservation.
 *
 * Sampled: at most one "limited" per key per XRL_EVENT_KEY_NS (a key that
 * flaps is reported once per interval), and at most XRL_EVENT_RATE events
 * per second per CPU (a GCRA of burst XRL_EVENT_BURST per CPU): a flood of
 * a million keys cannot flood the rings.
 */
#define XRL_EVENT_KEY_NS	(10ULL * 1000000000ULL)
#define XRL_EVENT_RATE		1000
#define XRL_EVENT_BURST		1000
#define XRL_EVENT_RING_BYTES	(256 * 1024)	/* each ring: ~5000 events */

enum xrl_event_kind {
	XRL_EV_LIMITED = 1,
	XRL_EV_UNLIMITED = 2,
	XRL_EV_BANNED = 3,	/* a ban set (a rule's), or its first drop (others') */
	XRL_EV_UNBANNED = 4,	/* the first packet after a ban's end */
};

/* One record of the rings. */
struct xrl_event {
	__u64 ts_ns;		/* the data path's clock (CLOCK_MONOTONIC_COARSE) */
	__u64 dropped;		/* the key's drops so far */
	__u32 rule_id;
	__u8 kind;		/* enum xrl_event_kind */
	__u8 family;		/* 4 or 6 */
	__u8 key_len;		/* the rule's per-key length: the key is addr/key_len */
	__u8 mode;		/* enum xrl_mode: in dry-run (the mode's or the
				 * rule's), "would be" and would-drops */
	__u8 addr[16];		/* the key: the source masked, network order */
	/* bans (XRL_EV_BANNED, XRL_EV_UNBANNED): the ban's end (0: none) and
	 * who set it (enum xrl_ban_origin); key_len is the ban's prefix length */
	__u64 expires_ns;
	__u32 origin;
	union {
		__u32 pad;
		/* XRL_EV_UNBANNED: why the ban ended (enum xrl_event_cause);
		 * the data path writes 0, its end */
		__u32 cause;
	};
};

/* Why a ban's "unbanned" went out: its end (on the clock: the data path at
 * the first packet after it, or the sweep that reclaims it when none came),
 * or lifted before it (ban del, ban flush, a reload, a decider's delete).
 * The events of bans set and lifted from userspace are written into the
 * same rings by a program of their own (bpf/xrl_emit.bpf.c). */
enum xrl_event_cause {
	XRL_EV_CAUSE_ENDED = 0,
	XRL_EV_CAUSE_LIFTED = 1,
};

/* Per CPU: the global cap's state and what became of the events. */
struct xrl_event_stats {
	__u64 tat;		/* the cap's GCRA state on this CPU (time units) */
	__u64 events[2];	/* events that passed the cap: limited, unlimited */
	__u64 sampled;		/* "limited" left out: the key had one < XRL_EVENT_KEY_NS ago */
	__u64 dropped_rate;	/* left out: over the global cap */
	__u64 ring_full[2];	/* not written, the ring was full: rld's, ctl's */
};

/* Control block: one entry of an mmap-able array, written field by field. */
struct xrl_control {
	__u32 mode;		/* enum xrl_mode */
	/* which optional steps some rule of the active set uses (XRL_FEAT_*);
	 * a clear bit lets every packet skip that step; userspace sets a bit
	 * before publishing a set that needs it and clears it only after
	 * publishing one that does not */
	__u32 features;
	__u64 gen;		/* last rule generation handed out (userspace) */
	__u64 test_now_ns;	/* the clock, when loaded with the test clock */
	__u64 heartbeat_ns;	/* the daemon's last heartbeat, data-path clock */
	__u64 watchdog_ns;	/* heartbeat older than this: failure; 0 = none */
	__u32 rules;		/* rules in the active set (for status) */
	__u32 heartbeat_interval_ms;	/* the daemon's heartbeat period; 0 = none coming */
	__u32 cache_epoch;	/* bumped after a commit, mode change, key reset:
				 * every xrl_hot entry of an older epoch is void */
	/* A capture runs (struct xrl_capture): until this time of the
	 * data path's (coarse) clock >> XRL_CAPTURE_LEASE_SHIFT; 0: none. The reader
	 * renews it; a reader killed lets it lapse (read with the epoch,
	 * in the same cache line: a capture costs nothing while off) */
	__u32 capture_until;
	/* XRL_BANS_V4 | XRL_BANS_V6: that family's ban table may hold an
	 * entry; clear: packets skip the ban look-up. Set after every insert
	 * (the data path's too); cleared only by userspace, which looks at
	 * the table again after clearing and sets it back if it is not empty,
	 * so an insert racing the clear is never left unchecked. */
	__u32 ban_families;
	/* The ban tables' generation: bumped by every writer after its change
	 * to a ban table (add, delete, flush, sweep, reload; the data path's
	 * rule bans), so that an entry of the banned-source cache
	 * (struct xrl_ban_hot) filled before the change is void after it */
	__u32 ban_gen;
};
#define XRL_BANS_V4	1u
#define XRL_BANS_V6	2u

/* struct xrl_control.features */
#define XRL_FEAT_SETS		1u	/* a rule takes a named set */
#define XRL_FEAT_ENDPOINTS	2u	/* an endpoint rule */
#define XRL_FEAT_SYNCOOKIES	4u	/* a syn-cookies rule */
#define XRL_FEAT_NEWKEYS	8u	/* a rule has a new-key budget (no step reads it yet) */
#define XRL_FEAT_SLIP		16u	/* a rule answers by DNS slip (no step reads it yet) */

/*
 * Endpoint rules (rule add PREFIX proto P [dport N|N-M] [syn] ...). A packet
 * finds its endpoint class in one array look-up, indexed by what it is:
 * TCP (non-SYN, SYN) and UDP by destination port, any other protocol (and a
 * TCP or UDP packet without ports: a non-first fragment) by protocol. Class
 * 0 is none: such a packet pays that look-up and nothing more. A class is a
 * set of ports and protocols that the same endpoint rules cover; its rules
 * sit in one LPM trie per family keyed by (class, source prefix), each
 * entry the most specific endpoint rule of that class and prefix (the
 * narrowest port range; a SYN rule before one for every TCP packet).
 *
 * Publication: the tries and the array are fresh per commit, each behind a
 * map-in-map like the source rules. Class ids alternate between two spaces
 * from one commit to the next; the new tries hold the old space's entries
 * too, and are published first, then the array: a packet meets the old
 * endpoint set or the new one, never a mix. The array's last slot says
 * which space it uses. The tries also keep the list of the endpoint rules
 * themselves (class XRL_EP_LIST | space), for reading them back.
 */
#define XRL_EP_TCP		0
#define XRL_EP_TCP_SYN		65536
#define XRL_EP_UDP		131072
#define XRL_EP_PROTO		196608		/* + IPPROTO_* */
#define XRL_EP_SPACE_SLOT	(XRL_EP_PROTO + 256)	/* the space in use */
#define XRL_EP_SLOTS		(XRL_EP_SPACE_SLOT + 1)
#define XRL_EP_SPACE_SHIFT	24		/* class = space << 24 | n */
#define XRL_EP_LIST		0x40000000U	/* | space << 24 | index: the rule list */
#define XRL_EP_ENTRIES		65536		/* per endpoint trie: both spaces */

struct xrl_ep4_key {
	__u32 prefixlen;	/* 32 (the class) + the source prefix length */
	__u32 class;
	__u8 addr[4];
};

struct xrl_ep6_key {
	__u32 prefixlen;
	__u32 class;
	__u8 addr[16];
};

struct xrl_rule_stats {
	__u64 passed_packets;
	__u64 passed_bytes;
	__u64 dropped_packets;
	__u64 dropped_bytes;
	__u64 new_keys;
	__u64 failure_passed;	/* passed by on-failure open (watchdog fired) */
	__u64 failure_dropped;	/* dropped by on-failure closed */
	/* passed although the meter said drop: the rule's dry-run, or the
	 * global dry-run mode (counted in passed_* too, never in dropped_*) */
	__u64 would_drop_packets;
	__u64 would_drop_bytes;
	__u64 hot_dropped;	/* drops answered by the hot-key cache (in dropped_packets) */
	__u64 agg_dropped;	/* refused by the aggregate (in dropped_packets) */
	__u64 nk_refused;	/* new keys refused a bucket by the new-key budget */
	__u64 agg_tokens;	/* this CPU's chunk of the aggregate, not a counter */
	__u64 nk_tokens;	/* this CPU's chunk of the new-key budget, not a counter */
	__u64 agg_until;	/* the aggregate refused on this CPU until (time
				 * units), not a counter: till then every packet of
				 * the rule is dropped before its key is looked up;
				 * 0: open */
	__u64 agg_checked_j;	/* jiffies when the clock said "still refused" */
	/* DNS slip (xrl_rule.slip): refused queries answered with a truncated
	 * response (in dropped_packets: the rule refused them), and refusals
	 * whose turn to slip came but that were dropped all the same: not an
	 * answerable DNS query, or over the host's cap of answers */
	__u64 slipped_packets;
	__u64 slip_invalid;
	__u64 slip_capped;
};

/* Verdicts per interface: a per-CPU array indexed by the receiving
 * interface's ifindex modulo XRL_IF_SLOTS (two attached interfaces whose
 * ifindexes are XRL_IF_SLOTS apart share a slot; xdp-rld says so). */
#define XRL_IF_SLOTS	256

struct xrl_if_stats {
	__u64 passed_packets;
	__u64 dropped_packets;
	__u64 answered_packets;	/* XRL_TX: answered back out of this interface */
};

struct xrl_global_stats {
	__u64 unmatched_packets;
	__u64 non_ip_packets;
	__u64 malformed_packets;
	__u64 passed_packets[XRL_MODE_MAX];	/* verdicts by mode */
	__u64 dropped_packets[XRL_MODE_MAX];
	__u64 keys_inserted;	/* buckets created, every rule: less the keys
				 * tracked, an estimate of the evicted ones */
	/* answers (XRL_TX), neither passed nor dropped; only ever in the
	 * enforce mode */
	__u64 answered_packets;
	__u64 slip_tokens;	/* this CPU's chunk of the slip cap, not a counter */
};

/*
 * Answers. A step may answer a packet instead of dropping it: it rewrites
 * the frame in place into a response never larger than the packet and
 * sends it back out of the receiving interface (the decision XRL_TX, the
 * hook's XDP_TX), counted as answered, neither passed nor dropped.
 *
 * DNS slip: the host's answers of every rule together are capped by one
 * GCRA of XRL_SLIP_CAP_RATE a second and a burst of XRL_SLIP_CAP_BURST,
 * taken by each CPU XRL_SLIP_CAP_CHUNK at a time (a CPU may hold a chunk
 * unspent: the cap may be passed by chunk - 1 a CPU), its state in
 * xrl_answer_cap. A DNS name is walked for at most XRL_DNS_MAX_NAME bytes
 * (RFC 1035's 255, its root label included), so at most 127 labels.
 */
#define XRL_SLIP_CAP_RATE	10000
#define XRL_SLIP_CAP_BURST	1000
#define XRL_SLIP_CAP_CHUNK	16
#define XRL_SLIP_MAX		100	/* slip 0..XRL_SLIP_MAX */
#define XRL_DNS_MAX_NAME	255
/* the cap's GCRA: an answer every interval time units (1/64 ns,
 * xrl_meter.h), a tolerance of the burst */
#define XRL_SLIP_CAP_INTERVAL	((1000000000ULL << 6) / XRL_SLIP_CAP_RATE)
#define XRL_SLIP_CAP_LIMIT	(XRL_SLIP_CAP_BURST * XRL_SLIP_CAP_INTERVAL)

struct xrl_answer_cap {
	__u64 slip_tat;		/* the cap's GCRA, time units */
	__u64 pad[7];
};

/*
 * Fleet-wide rules (README, "Fleet-wide limits"). A rule of scope fleet has
 * one rate and burst across the live hosts. Each host meters a key of it
 * locally at its share (rate / N, burst / N; xrl_fleet_rules, written by the
 * daemon when N changes). A key that the share drops is a candidate: the data
 * path inserts it in xrl_fleet_keys4/6 as XRL_FLEET_PENDING. The daemon then
 * promotes it: it leases tokens for it from the fleet bucket in Redis into
 * one slot of xrl_leases and points the key at that slot. A promoted key
 * spends its lease's credit (a compare-and-swap per packet, exact across
 * CPUs) until the lease expires; the daemon swaps credit and expiry at each
 * sync with atomics on the mmap. An expired lease (Redis unreachable, the
 * daemon gone) follows the rule's on-failure: open meters at the share,
 * closed drops.
 */
enum xrl_scope {
	XRL_SCOPE_HOST = 0,
	XRL_SCOPE_FLEET = 1,
};

#define XRL_FLEET_SLOTS		4096	/* promoted keys per host */
#define XRL_FLEET_KEYS		(2 * XRL_FLEET_SLOTS)	/* promoted + candidates, per family */
#define XRL_FLEET_PENDING	0xffffffffu	/* a candidate, no lease yet */

/* What the daemon says of a fleet rule (status, stats). */
enum xrl_fleet_state {
	XRL_FLEET_UNSYNCED = 0,		/* no daemon syncs it: the rule as it is */
	XRL_FLEET_SYNCED = 1,
	XRL_FLEET_FALLBACK_OPEN = 2,	/* Redis unreachable: leases run out to the share */
	XRL_FLEET_CLOSED = 3,		/* Redis unreachable: promoted keys dropped */
	XRL_FLEET_NEVER_SYNCED = 4,	/* a daemon syncs it, Redis never answered (N
					 * unknown): open at the share of N = 1;
					 * closed at rate / 'hosts', keys over it dropped */
};

/* Flags of xrl_fleet_rule.state, above the state itself (userspace only:
 * the data path never reads the state). */
#define XRL_FLEET_STATE_MASK	0xffffu
#define XRL_FLEET_F_MAY_EVICT	(1u << 16)	/* Redis' maxmemory-policy may evict
						 * fleet keys (or could not be read) */

/* Per rule slot, written by the daemon. */
struct xrl_fleet_rule {
	__u64 interval;		/* the local share's emission interval (rate / N) */
	__u64 limit;		/* and tolerance (burst / N) */
	__u32 state;		/* enum xrl_fleet_state | XRL_FLEET_F_* */
	__u32 hosts;		/* N, live hosts as last known */
	__u64 sync_ns;		/* data-path clock of the last good sync; 0: none */
	__u64 latency_ns;	/* of that sync */
	__u32 promoted;		/* keys holding a lease slot */
	__u32 rule_id;		/* the rule this slot held when written */
};

/* One lease: tokens the data path may spend until expires_ns (data-path
 * clock). An mmap-able array: the daemon swaps credit with an atomic
 * exchange, the data path takes tokens with compare-and-swap. */
struct xrl_lease {
	__u64 credit;
	__u64 expires_ns;
	__u64 denied;		/* packets refused for want of credit: the demand the
				 * next ask adds (a plain increment: an estimate) */
	__u64 pad;
};

/* The answers, SYN cookies, bans, capture, hooks and named sets. */
#include "xrl_features.h"

#endif /* XDP_RL_COMMON_H */

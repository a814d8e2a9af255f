// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-rl: per-source rate limiting at the XDP hook.
 *
 * One straight pipeline of small inlined steps:
 *   parse -> classify -> meter -> count -> verdict
 */
#include "parsing.h"
#include "xdp_rl_common.h"
#include "xrl_meter.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time switch: read the clock from the control block (tests, replay).
 * The verifier removes the branch from production loads. */
const volatile __u8 use_test_clock = 0;

/* Who this program is (xdp_rl_common.h): read by status and upgrades from
 * the running program, never by the data path. */
const volatile struct xrl_build_info xrl_info SEC(".rodata.info") = {
	.magic = XRL_INFO_MAGIC,
	.layout = XRL_LAYOUT_VERSION,
};

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

/* Live events: one ring per reader (xdp_rl_common.h). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XRL_EVENT_RING_BYTES);
} xrl_events_rld SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XRL_EVENT_RING_BYTES);
} xrl_events_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_event_stats);
} xrl_event_stats SEC(".maps");

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

#define READ_ONCE(x)	(*(volatile typeof(x) *)&(x))

/* A compare-and-swap that keeps losing means other CPUs keep admitting
 * packets of this key: dropping after a few tries never over-admits. */
#define XRL_CAS_TRIES	8

enum xrl_decision {
	XRL_PASS = 0,
	XRL_DROP = 1,
	XRL_NO_BUDGET = 2,	/* meter_bucket: a new key found no new-key budget */
};

/*
 * The coarse monotonic clock: 30 of the ~100 ns a metered packet cost with
 * bpf_ktime_get_ns() on this machine (tests/bench/microbench). It ticks
 * every jiffy (4 ms at HZ=250), so a bucket refills in steps of one tick:
 * any window W admits at most burst + rate * (W + tick); the benchmark
 * measures the accuracy this costs.
 */
static __always_inline __u64 clock_ns(const struct xrl_control *ctrl)
{
	if (use_test_clock)
		return ctrl->test_now_ns;
	return bpf_ktime_get_coarse_ns();
}

/*
 * A rule's clock: the coarse one, or the precise one for a rule that
 * refills its burst within XRL_PRECISE_TICKS ticks (xrl_rule.precise): on
 * the coarse clock it would admit at most its burst a tick, a fraction of
 * its rate. bpf_ktime_get_ns() is never behind the coarse clock.
 */
static __always_inline __u64 rule_clock_ns(const struct xrl_control *ctrl,
					   const struct xrl_rule *r)
{
	if (use_test_clock)
		return ctrl->test_now_ns;
	return r->precise ? bpf_ktime_get_ns() : bpf_ktime_get_coarse_ns();
}

/* The daemon stopped heartbeating: its watchdog time has passed. */
static __always_inline int watchdog_fired(const struct xrl_control *ctrl, __u64 now_ns)
{
	__u64 wd = ctrl->watchdog_ns;

	/* signed: a heartbeat stamped after this packet read the clock (the
	 * daemon's coarse clock ticked meanwhile) is fresh, not 2^64 ns old */
	return wd && (__s64)(now_ns - ctrl->heartbeat_ns) > 0 &&
	       now_ns - ctrl->heartbeat_ns > wd;
}

/*
 * What the packet costs a packet rule: its segments. Generic-mode XDP runs
 * after GRO and sees an aggregate of many TCP segments (or a GSO packet of
 * a local sender) as one linear frame, up to 64 KiB; counted as one, a
 * rule of 100/s let some 20 times its rate through. A TCP or UDP packet
 * longer than its interface's MTU is such an aggregate: it costs the
 * segments it carries (xrl_segments()). Native mode never sees a frame over
 * the MTU. Only packets over 576 bytes ask the MTU (a helper call).
 */
#define XRL_SEG_MIN_LEN	576

/*
 * A global function, verified once on its own, and called by the rule
 * step only for a packet rule and a packet over XRL_SEG_MIN_LEN: inlined
 * into the program, or called from it for every packet, its two outcomes
 * (one segment, known, or a count) multiplied the paths after it past the
 * verifier's limit of a million instructions (called for every packet, it
 * cost 7 ns of the 110 a passed packet took). l3len: the IP length.
 */
__noinline int xrl_segments_of(struct xdp_md *ctx, __u32 l3len, __u32 hdrs)
{
	__u32 mtu = 0;

	if (!ctx)
		return 1;
	if (bpf_check_mtu(ctx, 0, &mtu, 0, 0) < 0)
		return 1;
	return xrl_segments(l3len, hdrs, mtu);
}

/* Classify: the most specific source prefix of the published rule set. No
 * inner map (nothing published yet) is no rule: unmatched. */
static __always_inline struct xrl_rule *classify(const struct xrl_pkt *p)
{
	__u32 zero = 0;
	void *rules;

	if (p->family == 4) {
		struct xrl_lpm4_key k = { .prefixlen = 32 };

		rules = bpf_map_lookup_elem(&xrl_rules4, &zero);
		if (!rules)
			return NULL;
		__builtin_memcpy(k.addr, &p->saddr[0], 4);
		return bpf_map_lookup_elem(rules, &k);
	} else {
		struct xrl_lpm6_key k = { .prefixlen = 128 };

		rules = bpf_map_lookup_elem(&xrl_rules6, &zero);
		if (!rules)
			return NULL;
		__builtin_memcpy(k.addr, p->saddr, 16);
		return bpf_map_lookup_elem(rules, &k);
	}
}

/* The endpoint class slot of a packet (xdp_rl_common.h). */
static __always_inline __u32 ep_slot(const struct xrl_pkt *p)
{
	if (p->ports && p->l4proto == IPPROTO_TCP)
		return (p->syn ? XRL_EP_TCP_SYN : XRL_EP_TCP) + p->dport;
	if (p->ports)
		return XRL_EP_UDP + p->dport;
	return XRL_EP_PROTO + p->l4proto;
}

/* Classify by endpoint: the packet's class (one array look-up), and only
 * when it has one, the most specific endpoint rule of that class covering
 * the source. NULL: no endpoint rule applies. */
/* The endpoint class of the packet's protocol and port: one array look-up;
 * 0 when no endpoint rule covers them. */
static __always_inline __u32 endpoint_class(const struct xrl_pkt *p)
{
	__u32 zero = 0, slot = ep_slot(p), *class;
	void *arr;

	arr = bpf_map_lookup_elem(&xrl_ep_class, &zero);
	if (!arr)
		return 0;
	class = bpf_map_lookup_elem(arr, &slot);
	return class ? *class : 0;
}

/* The most specific endpoint rule of the class for the packet's source. */
static __always_inline struct xrl_rule *classify_endpoint(const struct xrl_pkt *p, __u32 class)
{
	__u32 zero = 0;
	void *rules;

	if (p->family == 4) {
		struct xrl_ep4_key k = { .prefixlen = 64, .class = class };

		rules = bpf_map_lookup_elem(&xrl_ep4, &zero);
		if (!rules)
			return NULL;
		__builtin_memcpy(k.addr, &p->saddr[0], 4);
		return bpf_map_lookup_elem(rules, &k);
	} else {
		struct xrl_ep6_key k = { .prefixlen = 160, .class = class };

		rules = bpf_map_lookup_elem(&xrl_ep6, &zero);
		if (!rules)
			return NULL;
		__builtin_memcpy(k.addr, p->saddr, 16);
		return bpf_map_lookup_elem(rules, &k);
	}
}

/* One event into each ring. */
static __always_inline void event_write(void *ring, const struct xrl_event *ev,
					struct xrl_event_stats *es, int which)
{
	struct xrl_event *e = bpf_ringbuf_reserve(ring, sizeof(*e), 0);

	if (!e) {
		es->ring_full[which]++;
		return;
	}
	__builtin_memcpy(e, ev, sizeof(*e));
	bpf_ringbuf_submit(e, 0);
}

/*
 * A key changed state: called only on a transition (a drop of a key not
 * limited, a pass of a limited key), never on the steady path, and out of
 * line so that the metering code stays as small as it was. Returns 1 when
 * the event was written (or is due no more), 0 when it was left out.
 */
static __noinline int key_event(struct xrl_bucket *b, const struct xrl_rule *r,
				const __u32 *addr, __u64 now_ns, __u32 family_kind)
{
	/* five arguments at most: the family and the kind share one */
	__u32 family = family_kind >> 8, kind = family_kind & 0xff;
	struct xrl_event_stats *es;
	struct xrl_control *ctrl;
	struct xrl_event ev = {};
	__u32 zero = 0;
	__u64 tat;

	es = bpf_map_lookup_elem(&xrl_event_stats, &zero);
	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!es || !ctrl)
		return 0;
	if (kind == XRL_EV_LIMITED && b->event_ns &&
	    now_ns - b->event_ns < XRL_EVENT_KEY_NS) {
		es->sampled++;
		return 0;
	}
	/* the global cap, per CPU: no atomics needed */
	if (!xrl_gcra(es->tat, xrl_ns_to_tu(now_ns),
		      xrl_ns_to_tu(XRL_NSEC_PER_SEC) / XRL_EVENT_RATE,
		      xrl_ns_to_tu(XRL_NSEC_PER_SEC) / XRL_EVENT_RATE * XRL_EVENT_BURST, 1, &tat)) {
		es->dropped_rate++;
		return 0;
	}
	es->tat = tat;
	es->events[kind == XRL_EV_LIMITED ? 0 : 1]++;
	ev.ts_ns = now_ns;
	ev.dropped = b->dropped;
	ev.rule_id = r->id;
	ev.kind = kind;
	ev.family = family;
	ev.key_len = r->key_len;
	ev.mode = ctrl->mode & (XRL_MODE_MAX - 1);
	/* a dry-run rule's drops are would-drops while the mode enforces:
	 * its events say "would be", as the mode's do */
	if (r->dry_run && ev.mode == XRL_MODE_ENFORCE)
		ev.mode = XRL_MODE_DRY_RUN;
	if (family == 4)
		__builtin_memcpy(ev.addr, addr, 4);
	else
		__builtin_memcpy(ev.addr, addr, 16);
	event_write(&xrl_events_rld, &ev, es, 0);
	event_write(&xrl_events_ctl, &ev, es, 1);
	return 1;
}

/* The first drop of a key that was not limited. */
static __always_inline void key_dropped(struct xrl_bucket *b, const struct xrl_rule *r,
					const __u32 *addr, __u32 family, __u64 now_ns)
{
	b->limited = 1;
	if (key_event(b, r, addr, now_ns, family << 8 | XRL_EV_LIMITED)) {
		b->event_ns = now_ns;
		b->reported = 1;
	}
}

static __noinline int hot_collect(struct xrl_bucket *b, const struct xrl_pkt *p, __u32 gen);

/* A limited key is no longer limited: its "unlimited" event (when its
 * "limited" was reported), after the drops the hot-key cache holds for
 * this source went into the bucket, so that the event says how many. An
 * "unlimited" that the cap left out is tried again at the key's next pass. */
static __always_inline void key_unlimited(struct xrl_bucket *b, const struct xrl_rule *r,
					  const __u32 *addr, __u32 family, __u64 now_ns,
					  const struct xrl_pkt *p)
{
	if (b->reported)
		hot_collect(b, p, r->gen);
	if (b->reported && !key_event(b, r, addr, now_ns, family << 8 | XRL_EV_UNLIMITED))
		return;
	b->reported = 0;
	b->limited = 0;
}

/* A pass of a limited key: it is no longer limited when its bucket was
 * full for at least one interval before this packet (old TAT + T <= now).
 * Within a flood, a pass finds the bucket all but empty. */
static __always_inline void key_passed(struct xrl_bucket *b, const struct xrl_rule *r,
				       const __u32 *addr, __u32 family, __u64 now_ns,
				       __u64 old, __u64 now, const struct xrl_pkt *p)
{
	if ((__s64)(old + r->interval - now) <= 0)
		key_unlimited(b, r, addr, family, now_ns, p);
}

/* A key dropped: counted in its bucket, and its event on a transition. */
static __always_inline int bucket_dropped(struct xrl_bucket *b, const struct xrl_rule *r,
					  const __u32 *addr, __u32 family, __u64 now_ns)
{
	__sync_fetch_and_add(&b->dropped, 1);
	if (!b->limited)
		key_dropped(b, r, addr, family, now_ns);
	return XRL_DROP;
}

/* The state of a new key with this first packet admitted; 0 when even the
 * first may not pass (a frame longer than a byte rule's burst or window). */
static __always_inline int new_bucket(struct xrl_bucket *nb, const struct xrl_rule *r,
				      __u64 now_ns, __u64 cost)
{
	__u64 empty;

	if (r->algo == XRL_ALGO_GCRA) {
		__u64 now = xrl_ns_to_tu(now_ns);

		return xrl_gcra(now, now, r->interval, r->limit, cost, &nb->tat);
	}
	empty = xrl_win_empty(now_ns, r->interval);
	nb->tat = nb->win1 = empty;
	if (r->algo == XRL_ALGO_FIXED_WINDOW)
		return xrl_fixed_window(empty, now_ns, r->interval, r->limit, cost, &nb->tat);
	if (xrl_sliding_window(empty, empty, now_ns, r->interval, r->limit, cost,
			       &empty) < 0)
		return 0;
	if ((__u32)(empty >> 32) & 1)
		nb->win1 = empty;
	else
		nb->tat = empty;
	return 1;
}

/* Take back a tentative sliding-window admission: subtract cost from the
 * word while it still holds that window. A word that moved on to a later
 * window took the count with it; a subtraction that keeps losing leaves
 * the count a little high: both only make later decisions stricter. */
static __always_inline void window_undo(__u64 *word, __u64 mine, __u64 cost)
{
	int i;

	for (i = 0; i < XRL_CAS_TRIES; i++) {
		__u64 v = READ_ONCE(*word);

		if ((v >> 32) != (mine >> 32) || (__u32)v < cost)
			return;
		if (__sync_val_compare_and_swap(word, v, v - cost) == v)
			return;
	}
}

/* A pass of a limited key under a window algorithm: no longer limited at
 * its first pass in a window that had admitted nothing before it. */
static __always_inline void window_passed(struct xrl_bucket *b, const struct xrl_rule *r,
					  const __u32 *addr, __u32 family, __u64 now_ns,
					  __u64 next, __u64 cost, const struct xrl_pkt *p)
{
	if ((__u32)next == cost)
		key_unlimited(b, r, addr, family, now_ns, p);
}

/*
 * Meter with a window algorithm (xrl_meter.h), exact across CPUs.
 *
 * Fixed window: one word, one compare-and-swap, as the GCRA.
 *
 * Sliding window: a decision reads both words (previous and current
 * window) but swaps only the current one; it then reads the other word
 * again and keeps its admission only when that word did not change in
 * between. Why this is exact: a kept admission saw one value of each word
 * that both held at the moment of its swap (the swapped word by the swap
 * itself, the other by the unchanged second read around it), so it is the
 * sequential decision at that moment. The only writes to the other word are
 * a lagging CPU counting in the previous window, or a CPU that opened the
 * next window; each of them re-checks our word after its own swap in turn,
 * so of two racing decisions at least the later one sees the other's word
 * change and takes its admission back (window_undo) and decides again. An
 * admission taken back never over-admits: it counted for a moment, which
 * can only have made a racing decision stricter. Losing every try drops.
 *
 * A refusal sets *until (time units) to the algorithm's "refused until",
 * or 0 when it has none (xrl_meter.h).
 */
static __always_inline int meter_window(struct xrl_bucket *b, const struct xrl_rule *r,
					const __u32 *addr, __u32 family, __u64 now_ns,
					__u64 cost, __u64 *until, const struct xrl_pkt *p)
{
	__u64 s0, s1, next, u;
	int i, k;

	for (i = 0; i < XRL_CAS_TRIES; i++) {
		s0 = READ_ONCE(b->tat);
		if (r->algo == XRL_ALGO_FIXED_WINDOW) {
			if (!xrl_fixed_window(s0, now_ns, r->interval, r->limit, cost, &next)) {
				u = xrl_fixed_refused_until(s0, now_ns, r->interval);
				*until = u ? xrl_ns_to_tu(u) : 0;
				break;
			}
			if (__sync_val_compare_and_swap(&b->tat, s0, next) != s0)
				continue;
			goto passed;
		}
		s1 = READ_ONCE(b->win1);
		k = xrl_sliding_window(s0, s1, now_ns, r->interval, r->limit, cost, &next);
		if (k < 0) {
			u = xrl_sliding_refused_until(s0, s1, now_ns, r->interval, r->limit, cost);
			*until = u ? xrl_ns_to_tu(u) : 0;
			break;
		}
		if (k) {
			if (__sync_val_compare_and_swap(&b->win1, s1, next) != s1)
				continue;
			if (READ_ONCE(b->tat) == s0)
				goto passed;
			window_undo(&b->win1, next, cost);
		} else {
			if (__sync_val_compare_and_swap(&b->tat, s0, next) != s0)
				continue;
			if (READ_ONCE(b->win1) == s1)
				goto passed;
			window_undo(&b->tat, next, cost);
		}
	}
	return bucket_dropped(b, r, addr, family, now_ns);
passed:
	if (b->limited)
		window_passed(b, r, addr, family, now_ns, next, cost, p);
	return XRL_PASS;
}

/*
 * One token of a shared GCRA (the aggregate, the new-key budget), taken in
 * chunks: a CPU takes `chunk` tokens with one compare-and-swap and spends
 * them from its own per-CPU counter, so that far from the limit the shared
 * cache line is written once per chunk, not once per packet. Near the
 * limit a whole chunk is not there: take one token.
 */
static __always_inline int take_shared(__u64 *tat, __u64 *tokens, __u64 now,
				       __u64 interval, __u64 limit, __u32 chunk, __u64 *until)
{
	__u64 old, cur, next, cost;
	int i;

	if (*tokens) {
		(*tokens)--;
		return 1;
	}
	for (i = 0; i < XRL_CAS_TRIES; i++) {
		old = READ_ONCE(*tat);
		/* 0: a fresh slot, a full bucket whatever the clock reads (time
		 * units wrap 2^64 after 9 years: 0 is not always the past) */
		cur = old ? old : now;
		cost = chunk;
		if (!xrl_gcra(cur, now, interval, limit, cost, &next)) {
			cost = 1;
			if (!xrl_gcra(cur, now, interval, limit, 1, &next)) {
				*until = xrl_gcra_refused_until(cur, interval, limit, 1);
				return 0;
			}
		}
		if (__sync_val_compare_and_swap(tat, old, next) == old) {
			*tokens = cost - 1;
			return 1;
		}
	}
	return 0;
}

/* The rule's aggregate: 1 when it admits the packet (or there is none). */
static __always_inline int aggregate_admits(const struct xrl_rule *r, __u64 now,
					    struct xrl_rule_stats *rs)
{
	struct xrl_rule_shared *sh;
	__u64 none = 0, until = 0;

	if (!r->agg_interval)
		return 1;
	sh = bpf_map_lookup_elem(&xrl_rule_shared, &r->slot);
	if (!sh)
		return 0;
	if (take_shared(&sh->agg_tat, rs ? &rs->agg_tokens : &none, now,
			r->agg_interval, r->agg_limit, rs ? r->agg_chunk : 1, &until))
		return 1;
	if (rs) {
		rs->agg_dropped++;
		rs->agg_until = until;
		rs->agg_checked_j = 0;
	}
	return 0;
}

/*
 * The aggregate is known exhausted on this CPU (its shared GCRA refused
 * one token, and TAT only grows): every packet of the rule is dropped until
 * then, before its key is looked up; no key's bucket or new-key budget is
 * charged. What a spoofed flood costs once the aggregate is spent. The
 * clock is read once a tick, as for the hot-key cache (struct xrl_hot).
 */
static __always_inline int aggregate_closed(const struct xrl_rule *r,
					    const struct xrl_control *ctrl,
					    struct xrl_rule_stats *rs)
{
	__u64 j = 0;

	if (!r->agg_interval || !rs || !rs->agg_until)
		return 0;
	if (!use_test_clock && !r->precise) {
		j = bpf_jiffies64();
		if (j == rs->agg_checked_j)
			goto closed;
	}
	if (!xrl_before(xrl_ns_to_tu(rule_clock_ns(ctrl, r)), rs->agg_until)) {
		rs->agg_until = 0;	/* open again: no more checks */
		return 0;
	}
	rs->agg_checked_j = j;
closed:
	rs->agg_dropped++;
	return 1;
}

/* May a new key of this rule get a bucket now? */
static __always_inline int newkey_admits(const struct xrl_rule *r, __u64 now,
					 struct xrl_rule_stats *rs)
{
	struct xrl_rule_shared *sh;
	__u64 none = 0, until;

	if (!r->nk_interval)
		return 1;
	sh = bpf_map_lookup_elem(&xrl_rule_shared, &r->slot);
	if (!sh)
		return 0;
	if (take_shared(&sh->nk_tat, rs ? &rs->nk_tokens : &none, now,
			r->nk_interval, r->nk_limit, rs ? r->nk_chunk : 1, &until))
		return 1;
	if (rs)
		rs->nk_refused++;
	return 0;
}

/* Hash of the source (and the endpoint class) into the hot-key cache. */
static __always_inline __u32 hot_index(const struct xrl_pkt *p)
{
	__u32 h = p->saddr[0] ^ p->klass * 0x165667b1U;

	if (p->family == 6)
		h ^= p->saddr[1] * 0x85ebca6bU ^ p->saddr[2] * 0xc2b2ae35U ^
		     p->saddr[3] * 0x27d4eb2fU;
	/* the product's top bits name the set (XRL_HOT_SLOTS / 2 of them);
	 * the first of its two ways */
	return (h * 0x9e3779b1U) >> (32 - XRL_HOT_SET_BITS) << 1;
}

/* The family byte of the packet's entries (struct xrl_hot), but for
 * XRL_HOT_SIZED. */
static __always_inline __u8 hot_tag(const struct xrl_pkt *p)
{
	return p->family | (p->klass ? XRL_HOT_EP : 0);
}

/* Is this entry the packet's source (and class) under the current epoch? */
static __always_inline int hot_match(const struct xrl_hot *e, const struct xrl_pkt *p,
				     __u32 epoch)
{
	if ((e->family & ~XRL_HOT_COND) != hot_tag(p) || e->epoch != epoch ||
	    e->src[0] != p->saddr[0] || e->klass != p->klass)
		return 0;
	return p->family == 4 || (e->src[1] == p->saddr[1] && e->src[2] == p->saddr[2] &&
				  e->src[3] == p->saddr[3]);
}

/* The bucket of an entry's key (a look-up keeps it warm in the LRU). */
static __always_inline struct xrl_bucket *hot_bucket(const struct xrl_hot *e)
{
	if ((e->family & XRL_HOT_FAMILY) == 4) {
		struct xrl_bucket_key4 k4 = { .gen = e->gen, .addr = e->kaddr[0] };

		return bpf_map_lookup_elem(&xrl_buckets4, &k4);
	} else {
		struct xrl_bucket_key6 k6 = { .gen = e->gen };

		__builtin_memcpy(k6.addr, e->kaddr, 16);
		return bpf_map_lookup_elem(&xrl_buckets6, &k6);
	}
}

/* Add an entry's pending drops to its key's bucket. Out of line: once per
 * XRL_HOT_FLUSH cached drops, and when an entry is replaced. */
static __noinline int hot_flush(struct xrl_hot *e)
{
	struct xrl_bucket *b;
	__u32 n = e->pending;

	if (!n || !e->family)
		return 0;
	e->pending = 0;
	b = hot_bucket(e);
	if (b)
		__sync_fetch_and_add(&b->dropped, n);
	return 0;
}

/* Is the entry's key still in the table? Out of line: once a tick. A key
 * the cache answers for leaves its bucket untouched, the coldest of the
 * LRU: the look-up keeps it warm, and a bucket evicted all the same voids
 * the entry (the whole path then meets a new key, as it would). */
static __noinline int hot_key_kept(struct xrl_hot *e)
{
	return hot_bucket(e) != NULL;
}

/* Is the entry's source still refused, the watchdog quiet? The clock only
 * for a known source, and once a tick (struct xrl_hot); a precise-clock
 * rule's entry reads the precise clock every time. */
static __always_inline int hot_still_refused(struct xrl_hot *e, const struct xrl_control *ctrl)
{
	__u64 now_ns, j = 0;

	if (!use_test_clock)
		j = bpf_jiffies64();
	if (use_test_clock || j != e->checked_j) {
		/* once a tick (every packet under the test clock): the key's
		 * bucket */
		if (!hot_key_kept(e))
			return 0;
	} else if (!(e->family & XRL_HOT_PRECISE)) {
		return 1;	/* checked within this tick */
	}
	now_ns = (e->family & XRL_HOT_PRECISE) && !use_test_clock ? bpf_ktime_get_ns() :
								     clock_ns(ctrl);
	if (watchdog_fired(ctrl, now_ns) || !xrl_before(xrl_ns_to_tu(now_ns), e->until))
		return 0;
	e->checked_j = j;
	return 1;
}

/*
 * The hot-key drop path, right after parsing (and for an endpoint class,
 * once the source rule passed the packet): 1 when the cache knows this
 * source over its rule's limit under the current rule set (and has counted
 * the drop), 0 to take the whole path.
 */
static __always_inline int hot_drop(const struct xrl_pkt *p, const struct xrl_control *ctrl,
				    __u32 epoch)
{
	__u32 idx = hot_index(p);
	struct xrl_rule_stats *rs;
	struct xrl_hot *e;

	e = bpf_map_lookup_elem(&xrl_hot, &idx);
	if (!e)
		return 0;
	if (!hot_match(e, p, epoch)) {
		idx++;
		e = bpf_map_lookup_elem(&xrl_hot, &idx);
		if (!e || !hot_match(e, p, epoch))
			return 0;
	}
	/* a byte rule refused a frame this long: a shorter one may fit */
	if (p->len < e->min_len)
		return 0;
	if (!hot_still_refused(e, ctrl))
		return 0;
	rs = bpf_map_lookup_elem(&xrl_rule_stats, &e->slot);
	if (rs) {
		rs->hot_dropped++;
		rs->dropped_packets++;
		rs->dropped_bytes += p->len;
	}
	/* an endpoint rule of several classes has its key cached under each,
	 * entries hot_collect() cannot find all: its drops go to the bucket
	 * at once, so that its "unlimited" event counts every one */
	if (++e->pending >= XRL_HOT_FLUSH || e->flush_now)
		hot_flush(e);
	return 1;
}

/*
 * Take the drops every CPU's cache holds for this source into its bucket:
 * only when a limited key passes again and its "unlimited" is due, so that
 * the event counts them. Another CPU may be adding to its entry meanwhile
 * (a flood on two CPUs) with a plain increment, which an atomic one would
 * make dearer on every cached drop: a drop counted at the very moment of
 * the swap to 0 may then be counted twice (in the key's count only; the
 * rule's counters are per CPU).
 */
#define XRL_MAX_CPUS	1024

struct hot_collect_ctx {
	__u32 src[4];
	__u32 idx, gen, klass;
	__u64 n;
	__u8 tag;
};

static long hot_collect_cpu(__u64 cpu, void *arg)
{
	struct hot_collect_ctx *c = arg;

	for (__u32 way = 0; way < 2; way++) {
		__u32 i = c->idx + way;
		struct xrl_hot *e = bpf_map_lookup_percpu_elem(&xrl_hot, &i, cpu);

		if (!e)
			return 1;	/* past the last CPU */
		if ((e->family & ~XRL_HOT_COND) == c->tag && e->gen == c->gen &&
		    e->klass == c->klass && e->src[0] == c->src[0] && e->src[1] == c->src[1] &&
		    e->src[2] == c->src[2] && e->src[3] == c->src[3] && e->pending)
			c->n += __sync_lock_test_and_set(&e->pending, 0);
	}
	return 0;
}

static __noinline int hot_collect(struct xrl_bucket *b, const struct xrl_pkt *p, __u32 gen)
{
	struct hot_collect_ctx c = {
		.idx = hot_index(p), .gen = gen, .klass = p->klass, .tag = hot_tag(p),
	};

	__builtin_memcpy(c.src, p->saddr, 16);
	bpf_loop(XRL_MAX_CPUS, hot_collect_cpu, &c, 0);
	if (c.n)
		__sync_fetch_and_add(&b->dropped, c.n);
	return 0;
}

/* Remember a refusal of the key's bucket until it may admit again (a
 * byte rule's: for frames of min_len bytes or more): in the way that holds
 * the source already, else in one whose answer is void (another epoch, or
 * past its time), else in the second way. */
static __always_inline void hot_fill(const struct xrl_pkt *p, const struct xrl_rule *r,
				     const __u32 *kaddr, __u64 until, __u32 epoch, __u64 now,
				     __u32 min_len)
{
	__u32 idx = hot_index(p), idx1 = idx + 1;
	struct xrl_hot *e, *e1;

	e = bpf_map_lookup_elem(&xrl_hot, &idx);
	e1 = bpf_map_lookup_elem(&xrl_hot, &idx1);
	if (!e || !e1)
		return;
	if (!hot_match(e, p, epoch) &&
	    (hot_match(e1, p, epoch) || (e->epoch == epoch && xrl_before(now, e->until))))
		e = e1;
	if (e->pending)
		hot_flush(e);
	__builtin_memcpy(e->src, p->saddr, 16);
	if (p->family == 4) {
		e->kaddr[0] = kaddr[0];
	} else {
		__builtin_memcpy(e->kaddr, kaddr, 16);
	}
	e->until = until;
	e->checked_j = 0;
	e->epoch = epoch;
	e->gen = r->gen;
	e->slot = r->slot;
	e->family = hot_tag(p) | (min_len ? XRL_HOT_SIZED : 0) | (r->precise ? XRL_HOT_PRECISE : 0);
	e->min_len = min_len;
	e->klass = p->klass;
	e->flush_now = r->ep_multi;
}

/*
 * Meter: the (rule, key) bucket, exact across CPUs. Inlined once per family
 * with a constant map: the verifier inlines a hash look-up only where the
 * map is known (a map chosen by a branch cost 8-14 ns a packet here).
 * A refusal that the hot-key cache may answer from now on sets *until
 * (hot_cacheable()).
 */
static __always_inline int meter_bucket(void *map, const void *key,
					const __u32 *addr, __u32 family,
					const struct xrl_rule *r, __u64 now_ns,
					struct xrl_rule_stats *rs, __u64 cost,
					__u64 *until, const struct xrl_pkt *p)
{
	struct xrl_bucket *b;
	__u64 now = xrl_ns_to_tu(now_ns);
	__u64 old, tat;
	int i;

	b = bpf_map_lookup_elem(map, key);
	if (!b) {
		/* A new key starts with a full bucket; burst >= 1, so this
		 * first packet passes. Insert only new keys: an update of an
		 * existing key in a full LRU may evict another entry. A new
		 * key needs the rule's new-key budget first. */
		struct xrl_bucket nb = { .last_ns = now_ns };

		if (!newkey_admits(r, now, rs))
			return XRL_NO_BUDGET;
		if (new_bucket(&nb, r, now_ns, cost) &&
		    bpf_map_update_elem(map, key, &nb, BPF_NOEXIST) == 0) {
			struct xrl_global_stats *gs;
			__u32 zero = 0;

			gs = bpf_map_lookup_elem(&xrl_global_stats, &zero);
			if (gs)
				gs->keys_inserted++;
			if (rs)
				rs->new_keys++;
			return XRL_PASS;
		}
		/* Another CPU inserted it first: meter against its bucket. */
		b = bpf_map_lookup_elem(map, key);
		if (!b)
			return XRL_DROP;
	}

	b->last_ns = now_ns;
	if (r->algo != XRL_ALGO_GCRA)
		return meter_window(b, r, addr, family, now_ns, cost, until, p);
	for (i = 0; i < XRL_CAS_TRIES; i++) {
		old = READ_ONCE(b->tat);
		if (!xrl_gcra(old, now, r->interval, r->limit, cost, &tat)) {
			/* refused at this cost: refused until then, whatever
			 * other CPUs do (TAT only grows) */
			*until = xrl_gcra_refused_until(old, r->interval, r->limit, cost);
			break;
		}
		if (__sync_val_compare_and_swap(&b->tat, old, tat) == old) {
			if (b->limited)		/* the steady path reads one word */
				key_passed(b, r, addr, family, now_ns, old, now, p);
			return XRL_PASS;
		}
	}
	return bucket_dropped(b, r, addr, family, now_ns);
}

/*
 * May the hot-key cache answer for this rule's refusals? Where the
 * refusal of one packet of the key means the refusal of every packet of
 * the source (of its endpoint class, for an endpoint rule; at least as
 * long, for a byte rule) until a time known at once: every algorithm
 * (xrl_meter.h), enforced (not dry-run: its drops pass), not a fleet rule
 * (a lease may admit what the local share refuses). A fleet or dry-run
 * rule takes the whole path.
 */
static __always_inline int hot_cacheable(const struct xrl_rule *r, __u32 mode)
{
	return mode == XRL_MODE_ENFORCE && !r->dry_run && r->scope == XRL_SCOPE_HOST;
}

/* The key's verdict, then the aggregate's: a packet passes only when both
 * admit. A refusal of the key's bucket goes into the hot-key cache (a byte
 * rule's for frames of at least this one's length: a length past the
 * entry's 16 bits is not cached). */
static __always_inline int meter_done(const struct xrl_pkt *p, const struct xrl_rule *r,
				      const __u32 *kaddr, int res, __u64 until,
				      __u64 now_ns, __u32 epoch, struct xrl_rule_stats *rs,
				      __u32 segs)
{
	__u64 now = xrl_ns_to_tu(now_ns);

	if (res == XRL_DROP) {
		__u32 min_len = r->unit == XRL_UNIT_PACKETS ? 0 : p->len;

		/* a packet rule's refusal of an aggregate of several segments
		 * says nothing about one segment: not cached */
		if (r->unit == XRL_UNIT_PACKETS && segs > 1)
			until = 0;
		if (until && xrl_before(now, until) && min_len <= 0xffff)
			hot_fill(p, r, kaddr, until, epoch, now, min_len);
		return XRL_DROP;
	}
	/* a new key without budget: the aggregate alone, or nothing */
	if (res == XRL_NO_BUDGET && !r->agg_interval)
		return XRL_DROP;
	return aggregate_admits(r, now, rs) ? XRL_PASS : XRL_DROP;
}

/*
 * Fleet: spend the key's lease when it has a live one; else meter at the
 * local share (an expired lease: only under on-failure open). A key the
 * share drops becomes a candidate for a lease. One inlined step per family,
 * for the same reason as meter_bucket's.
 */
static __always_inline int fleet_lease(const struct xrl_rule *r, __u32 slot, __u64 now_ns,
				       __u64 cost)
{
	struct xrl_lease *l = bpf_map_lookup_elem(&xrl_leases, &slot);
	__u64 c;
	int i;

	if (!l)
		return -1;
	if ((__s64)(READ_ONCE(l->expires_ns) - now_ns) <= 0)
		/* run out: Redis unreachable or the daemon gone */
		return r->on_failure == XRL_FAIL_CLOSED ? XRL_DROP : -1;
	for (i = 0; i < XRL_CAS_TRIES; i++) {
		c = READ_ONCE(l->credit);
		if (c < cost)
			break;
		if (__sync_val_compare_and_swap(&l->credit, c, c - cost) == c)
			return XRL_PASS;
	}
	l->denied += cost;
	return XRL_DROP;
}

static __always_inline int fleet_meter(void *keys, const void *key, void *buckets,
				       const __u32 *addr, __u32 family,
				       const struct xrl_rule *r, __u64 now_ns,
				       struct xrl_rule_stats *rs, __u64 cost,
				       const struct xrl_pkt *p)
{
	struct xrl_fleet_rule *fr = bpf_map_lookup_elem(&xrl_fleet_rules, &r->slot);
	__u32 pending = XRL_FLEET_PENDING, *slot;
	struct xrl_rule *share;
	__u64 until = 0;	/* never cached: see hot_cacheable() */
	__u32 zero = 0;
	int res;

	if (!fr || !fr->interval)	/* no share written: the rule as it is */
		return meter_bucket(buckets, key, addr, family, r, now_ns, rs, cost,
				    &until, p);
	slot = bpf_map_lookup_elem(keys, key);
	if (slot && *slot != XRL_FLEET_PENDING) {
		res = fleet_lease(r, *slot, now_ns, cost);
		if (res >= 0)
			return res;
	}
	/* the rule at the share, in a per-CPU scratch value: a copy on the
	 * stack would pass the program's 512 bytes */
	share = bpf_map_lookup_elem(&xrl_fleet_scratch, &zero);
	if (!share)
		return XRL_DROP;
	__builtin_memcpy(share, r, sizeof(*share));
	share->interval = fr->interval;
	share->limit = fr->limit;
	res = meter_bucket(buckets, key, addr, family, share, now_ns, rs, cost, &until, p);
	if (res == XRL_DROP && !slot)
		bpf_map_update_elem(keys, key, &pending, BPF_NOEXIST);
	return res;
}

static __always_inline int meter(const struct xrl_rule *r, __u32 mode,
				 const struct xrl_pkt *p, __u64 now_ns,
				 struct xrl_rule_stats *rs, __u32 epoch, __u32 segs)
{
	__u64 cost = r->unit == XRL_UNIT_PACKETS ? segs : p->len;
	__u64 until = 0, *u = &until, none = 0;
	int res;

	if (!hot_cacheable(r, mode))
		u = &none;	/* the refusal is computed, never cached */
	if (p->family == 4) {
		struct xrl_bucket_key4 k4 = {
			.gen = r->gen,
			.addr = p->saddr[0] & r->key_mask[0],
		};
		/* the key as 16 bytes: the compiler may merge the two
		 * families' tails, and the verifier then reads 16 */
		__u32 a4[4] = { k4.addr };

		if (r->scope == XRL_SCOPE_FLEET)
			res = fleet_meter(&xrl_fleet_keys4, &k4, &xrl_buckets4, a4, 4, r,
					  now_ns, rs, cost, p);
		else
			res = meter_bucket(&xrl_buckets4, &k4, a4, 4, r, now_ns, rs, cost,
					   u, p);
		return meter_done(p, r, a4, res, until, now_ns, epoch, rs, segs);
	} else {
		struct xrl_bucket_key6 k6 = {
			.gen = r->gen,
			.addr = {
				p->saddr[0] & r->key_mask[0], p->saddr[1] & r->key_mask[1],
				p->saddr[2] & r->key_mask[2], p->saddr[3] & r->key_mask[3],
			},
		};

		if (r->scope == XRL_SCOPE_FLEET)
			res = fleet_meter(&xrl_fleet_keys6, &k6, &xrl_buckets6, k6.addr, 6, r,
					  now_ns, rs, cost, p);
		else
			res = meter_bucket(&xrl_buckets6, &k6, k6.addr, 6, r, now_ns, rs, cost,
					   u, p);
		return meter_done(p, r, k6.addr, res, until, now_ns, epoch, rs, segs);
	}
}

/* Decide for a matched rule under the current mode. The clock is read at
 * most once: for the watchdog (armed while a daemon runs) and the meter. */
static __always_inline int decide(const struct xrl_rule *r, __u32 mode,
				  const struct xrl_pkt *p,
				  const struct xrl_control *ctrl,
				  struct xrl_rule_stats *rs, __u32 epoch, __u32 segs)
{
	__u64 wd = ctrl->watchdog_ns, now_ns = 0;

	if (r->action == XRL_ACT_ALLOW)
		return XRL_PASS;
	/* the operator's word first: fail-open passes everything, counted
	 * as passed, whatever the watchdog says (as fail-closed drops) */
	if (mode == XRL_MODE_FAIL_CLOSED)
		return XRL_DROP;
	if (mode == XRL_MODE_FAIL_OPEN)
		return XRL_PASS;
	if (wd)
		now_ns = rule_clock_ns(ctrl, r);
	if (wd && watchdog_fired(ctrl, now_ns)) {
		/* each rule's failure policy, counted as such */
		if (r->on_failure == XRL_FAIL_CLOSED) {
			if (rs)
				rs->failure_dropped++;
			return XRL_DROP;
		}
		if (rs)
			rs->failure_passed++;
		return XRL_PASS;
	}
	if (r->action == XRL_ACT_DENY)
		return XRL_DROP;
	if (aggregate_closed(r, ctrl, rs))
		return XRL_DROP;
	return meter(r, mode, p, wd ? now_ns : rule_clock_ns(ctrl, r), rs, epoch, segs);
}

/* Dry-run, the rule's (while enforcing) or the mode's: a drop the rule
 * decided passes, counted apart as a would-drop, never in dropped_*. */
static __always_inline int dry_run(const struct xrl_rule *r, __u32 mode,
				   struct xrl_rule_stats *rs,
				   const struct xrl_pkt *p, int decision)
{
	if (decision != XRL_DROP ||
	    !(mode == XRL_MODE_DRY_RUN || (r->dry_run && mode == XRL_MODE_ENFORCE)))
		return decision;
	if (rs) {
		rs->would_drop_packets++;
		rs->would_drop_bytes += p->len;
	}
	return XRL_PASS;
}

static __always_inline void count_rule(struct xrl_rule_stats *rs,
				       const struct xrl_pkt *p, int decision)
{
	if (!rs)
		return;
	if (decision == XRL_PASS) {
		rs->passed_packets++;
		rs->passed_bytes += p->len;
	} else {
		rs->dropped_packets++;
		rs->dropped_bytes += p->len;
	}
}

/*
 * One rule's step for a packet: decide under the mode, dry-run, count. The
 * source rule and then, for a packet its source rule (or no rule) passed,
 * the endpoint rule: it passes only when both admit (a packet the source
 * rule dropped costs the endpoint rule nothing).
 *
 * A global function: the verifier checks it once, on its own, rather than
 * inside every path of the program that calls it (inlined twice, the
 * metering of every algorithm, the fleet and the aggregate passed its limit
 * of a million instructions). Its pointer arguments are checked as memory
 * of their size that may be NULL; they never are.
 */
__noinline int xrl_rule_step(struct xdp_md *ctx, const struct xrl_pkt *p,
			     const struct xrl_rule *r, __u32 mode, __u32 epoch)
{
	struct xrl_rule_stats *rs;
	struct xrl_control *ctrl;
	__u32 zero = 0, segs = 1;
	int decision;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!p || !r || !ctrl)
		return XRL_PASS;
	rs = bpf_map_lookup_elem(&xrl_rule_stats, &r->slot);
	/* what the packet costs a packet rule (xrl_segments_of()) */
	if (r->unit == XRL_UNIT_PACKETS && p->ports && p->l3len > XRL_SEG_MIN_LEN)
		segs = xrl_segments_of(ctx, p->l3len, p->hdrs);
	decision = decide(r, mode, p, ctrl, rs, epoch, segs);
	decision = dry_run(r, mode, rs, p, decision);
	count_rule(rs, p, decision);
	return decision;
}

/* Verdict: the mode has the last word; count it. */
static __always_inline int verdict(struct xrl_global_stats *gs,
				   struct xrl_if_stats *is, __u32 mode,
				   int decision)
{
	if (mode == XRL_MODE_DRY_RUN || mode == XRL_MODE_FAIL_OPEN)
		decision = XRL_PASS;
	if (decision == XRL_PASS) {
		gs->passed_packets[mode]++;
		is->passed_packets++;
		return XDP_PASS;
	}
	gs->dropped_packets[mode]++;
	is->dropped_packets++;
	return XDP_DROP;
}

SEC("xdp")
int xdp_rl(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};
	struct xrl_control *ctrl;
	struct xrl_global_stats *gs;
	struct xrl_if_stats *is;
	struct xrl_rule *rule;
	__u32 zero = 0, mode, epoch, slot = ctx->ingress_ifindex % XRL_IF_SLOTS;
	int res, decision;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	gs = bpf_map_lookup_elem(&xrl_global_stats, &zero);
	is = bpf_map_lookup_elem(&xrl_if_stats, &slot);
	if (!ctrl || !gs || !is)
		return XDP_PASS;
	mode = ctrl->mode & (XRL_MODE_MAX - 1);

	res = parse_packet(ctx, &pkt);
	if (res == XRL_PARSE_NON_IP) {
		/* ARP, LLDP, ...: untouched in every mode, so that a host
		 * stays reachable on its link even when failing closed. */
		gs->non_ip_packets++;
		return verdict(gs, is, mode, XRL_PASS);
	}
	if (res == XRL_PARSE_MALFORMED) {
		/* The stack would discard it anyway; passing it would open
		 * an unmetered way past the limiter. */
		gs->malformed_packets++;
		return verdict(gs, is, mode, XRL_DROP);
	}

	/* The epoch before the rule set: a rule published after this read
	 * is followed by a bump that voids what this packet caches. Only
	 * an enforcing rule's refusals are cached (hot_cacheable()): a
	 * cached drop here is the source rule's drop, which the endpoint
	 * rule would not have seen either. */
	epoch = READ_ONCE(ctrl->cache_epoch);
	if (mode == XRL_MODE_ENFORCE && hot_drop(&pkt, ctrl, epoch))
		return verdict(gs, is, mode, XRL_DROP);

	rule = classify(&pkt);
	if (!rule) {
		gs->unmatched_packets++;
		decision = mode == XRL_MODE_FAIL_CLOSED ? XRL_DROP : XRL_PASS;
	} else {
		decision = xrl_rule_step(ctx, &pkt, rule, mode, epoch);
	}
	/* failing closed, the source rules alone decide (allow passes) */
	if (decision == XRL_PASS && mode != XRL_MODE_FAIL_CLOSED) {
		__u32 class = endpoint_class(&pkt);

		if (class) {
			/* the endpoint rule's entries: (source, class) */
			pkt.klass = class;
			if (mode == XRL_MODE_ENFORCE && hot_drop(&pkt, ctrl, epoch))
				return verdict(gs, is, mode, XRL_DROP);
			rule = classify_endpoint(&pkt, class);
			if (rule)
				decision = xrl_rule_step(ctx, &pkt, rule, mode, epoch);
		}
	}
	return verdict(gs, is, mode, decision);
}

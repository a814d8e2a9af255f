// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Reference programs for the tests and the micro-benchmark. */
#include "parsing.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The floor: the cheapest program there is. */
SEC("xdp")
int xdp_drop_all(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* The goodput floor: a program that lets everything through untouched. */
SEC("xdp")
int xdp_pass_all(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* The parser alone, with the same verdicts for non-IP and malformed. */
SEC("xdp")
int xdp_parse_only(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};

	return parse_packet(ctx, &pkt) == XRL_PARSE_MALFORMED ? XDP_DROP : XDP_PASS;
}

/*
 * The ideal limiter, for the benchmark: admits `admit_rate` frames a second
 * with a burst of `admit_burst` in all, on each CPU, and drops the rest,
 * without parsing or looking anything up. It lets exactly as many frames
 * up the stack as a per-key limiter does for K keys (rate K x R, burst
 * K x B) at no per-key cost: what no limiter that admits them can beat.
 */
const volatile __u64 admit_rate = 0;	/* 0: admit everything */
const volatile __u64 admit_burst = 1;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} admit_tat SEC(".maps");

SEC("xdp")
int xdp_admit_rate(struct xdp_md *ctx)
{
	__u64 now = bpf_ktime_get_coarse_ns(), interval, *tat, base;
	__u32 zero = 0;

	if (!admit_rate)
		return XDP_PASS;
	tat = bpf_map_lookup_elem(&admit_tat, &zero);
	if (!tat)
		return XDP_DROP;
	interval = 1000000000ULL / admit_rate;
	base = *tat > now ? *tat : now;
	if (base + interval - now > admit_burst * interval)
		return XDP_DROP;
	*tat = base + interval;
	return XDP_PASS;
}

/* The answer's floor: every frame sent back as it came (the micro-benchmark's
 * bare XDP_TX beside a slipped DNS answer). */
SEC("xdp")
int xdp_tx_all(struct xdp_md *ctx)
{
	return XDP_TX;
}

/*
 * The floor of an exact metered pass, for the micro-benchmark: the work
 * that no limiter with one bucket per key shared by every CPU can skip for
 * a packet it admits, and nothing else. Parse; classify (one LPM trie
 * look-up: xdp-rl's rule set is one); the coarse clock (xdp-rl's, but for a
 * "precise" rule); the key's bucket (one LRU hash look-up); a GCRA update
 * with one compare-and-swap; one per-CPU counter.
 * No mode, watchdog, cache, event, aggregate or endpoint step. The second
 * program skips the classification (as a per-CPU cache of it would): the
 * floor of the design that keeps the bucket shared but not the trie walk.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 32);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct { __u32 prefixlen; __u8 addr[4]; });
	__type(value, __u64);	/* the rule's interval, ns */
} floor_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);	/* the key's TAT, ns */
} floor_buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_passed SEC(".maps");

/* GCRA, the burst one interval's worth per packet up to 2^32 of them */
static __always_inline int floor_meter(__u32 key, __u64 interval)
{
	__u64 now = bpf_ktime_get_coarse_ns(), *tat, old, base, *n;
	__u32 zero = 0;

	tat = bpf_map_lookup_elem(&floor_buckets, &key);
	if (!tat) {
		bpf_map_update_elem(&floor_buckets, &key, &now, BPF_NOEXIST);
		return XDP_PASS;
	}
	old = *(volatile __u64 *)tat;
	base = old > now ? old : now;
	if (base + interval - now > (interval << 32))
		return XDP_DROP;
	if (__sync_val_compare_and_swap(tat, old, base + interval) != old)
		return XDP_DROP;
	n = bpf_map_lookup_elem(&floor_passed, &zero);
	if (n)
		(*n)++;
	return XDP_PASS;
}

SEC("xdp")
int xdp_exact_floor(struct xdp_md *ctx)
{
	struct { __u32 prefixlen; __u8 addr[4]; } k = { .prefixlen = 32 };
	struct xrl_pkt pkt = {};
	__u64 *interval;

	if (parse_packet(ctx, &pkt) != XRL_PARSE_IP || pkt.family != 4)
		return XDP_PASS;
	__builtin_memcpy(k.addr, &pkt.saddr[0], 4);
	interval = bpf_map_lookup_elem(&floor_rules, &k);
	if (!interval)
		return XDP_PASS;
	return floor_meter(pkt.saddr[0], *interval);
}

SEC("xdp")
int xdp_exact_floor_nolpm(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};

	if (parse_packet(ctx, &pkt) != XRL_PARSE_IP || pkt.family != 4)
		return XDP_PASS;
	return floor_meter(pkt.saddr[0], 10);
}

/*
 * The design that would reach a metered pass of a few times bare XDP_DROP,
 * for the same micro-benchmark: per-CPU buckets in a direct-mapped per-CPU
 * array (no trie walk, no hash table, no atomic), as Katran keeps per-CPU
 * state. Not exact: a key's packets on N CPUs meet N buckets (each must
 * hold rate/N and burst/N, and a key on one CPU then gets 1/N of its limit),
 * and keys that share a slot share a bucket.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} floor_percpu SEC(".maps");

SEC("xdp")
int xdp_percpu_floor(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};
	__u64 now, *tat, base, interval = 10;
	__u32 idx;

	if (parse_packet(ctx, &pkt) != XRL_PARSE_IP || pkt.family != 4)
		return XDP_PASS;
	idx = (pkt.saddr[0] * 2654435761u) >> 20;
	tat = bpf_map_lookup_elem(&floor_percpu, &idx);
	if (!tat)
		return XDP_PASS;
	now = bpf_ktime_get_coarse_ns();
	base = *tat > now ? *tat : now;
	if (base + interval - now > (interval << 32))
		return XDP_DROP;
	*tat = base + interval;
	return XDP_PASS;
}

/* The parser and one read of the clock every meter needs (the coarse one,
 * as xdp-rl's rules but a "precise" one read it): what a metered pass
 * costs at the least, whatever its buckets. */
SEC("xdp")
int xdp_parse_clock(struct xdp_md *ctx)
{
	struct xrl_pkt pkt = {};

	if (parse_packet(ctx, &pkt) == XRL_PARSE_MALFORMED)
		return XDP_DROP;
	return bpf_ktime_get_coarse_ns() ? XDP_PASS : XDP_DROP;
}

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

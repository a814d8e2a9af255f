// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_tx: a program that sends every frame back as it came (XDP_TX, not a
 * byte changed): the benchmark's bare answer, the floor of what answering
 * from XDP costs.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_tx(struct xdp_md *ctx)
{
	return XDP_TX;
}

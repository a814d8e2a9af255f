// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_pass: a program that passes every frame. On a veth, frames another
 * program sends back with XDP_TX reach the peer only while the peer runs
 * an XDP program (GRO alone is not enough here): the tests attach this one
 * to the sending end to receive the answers (SYN cookies).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

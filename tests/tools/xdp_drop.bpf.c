// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_drop: a program that drops every frame. A flood's sender runs it on
 * its device to discard the answers it gets (an attacker does not read
 * them) and to keep xrl-flood from attaching its own program there, so
 * that xrl-flood writes every frame whole (a receiver answering with
 * XDP_TX hands the pages back rewritten).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tc_pass: a tc program that passes every packet with TC_ACT_OK, which ends
 * a tcx chain: attached before xdp-rl (tcx-attach ... before), the packets
 * never reach it. The tests of the chain's order attach it so.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}

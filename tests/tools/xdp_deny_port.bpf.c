// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A foreign XDP program for the coexistence tests (tests/e2e/test_coexist.sh),
 * attached with `ip link set DEV xdp obj xdp_deny_port.bpf.o sec xdp`: it
 * drops IPv4 UDP to port XRL_DENY_PORT and passes everything else, as an
 * operator's own firewall would. No maps, nothing pinned: iproute2 loads it
 * as it is.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define XRL_DENY_PORT	7777

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xdp_deny_port(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(iph + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    iph->protocol != IPPROTO_UDP || iph->ihl != 5)
		return XDP_PASS;
	udp = (void *)(iph + 1);
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	return udp->dest == bpf_htons(XRL_DENY_PORT) ? XDP_DROP : XDP_PASS;
}

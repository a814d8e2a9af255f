/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Classify: the source rule of a packet (the most specific prefix) and its
 * endpoint rule: the packet's class (one array look-up), and only when it
 * has one, the most specific endpoint rule of that class covering the
 * source.
 */
#ifndef XRL_BPF_CLASSIFY_H
#define XRL_BPF_CLASSIFY_H

#include "maps.h"

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

#endif

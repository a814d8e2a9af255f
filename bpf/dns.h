/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * DNS slip: a refused DNS query over UDP answered, in place, with a
 * truncated response (TC=1, no records) that tells a real resolver to ask
 * again over TCP, where its address is proved; a spoofed victim gets a
 * response no larger than the query it never sent, and the host's answers
 * together are capped (struct xrl_answer_cap), so the host is no amplifier
 * and no reflector.
 *
 * The response: the query's Ethernet header (its VLAN tags kept), IP and
 * UDP headers with the addresses, ports and MACs swapped, the DNS header
 * with the query's ID, QR=1, TC=1, the query's RD, RCODE 0 and ANCOUNT =
 * NSCOUNT = ARCOUNT = 0, then the question as it came; the frame is cut
 * right after the question (an EDNS OPT record, and anything else after
 * it, dropped). Checksums computed over the response.
 *
 * What is not answered (dropped, counted slip_invalid): anything that is
 * not one DNS query over UDP parsed to the end of its question within the
 * UDP length and the frame: a fragment, IPv4 options, IPv6 extension
 * headers, a UDP length that is not the packet's, a payload shorter than
 * a DNS header, a response (QR=1), an opcode other than QUERY, QDCOUNT
 * other than 1, a name with a compression pointer or a reserved label type,
 * a label over 63 bytes, a name over XRL_DNS_MAX_NAME bytes; and a query
 * from an address or port nothing can be sent back to (a multicast or
 * broadcast MAC or address, an unspecified or loopback address, port 0).
 */
#ifndef XRL_BPF_DNS_H
#define XRL_BPF_DNS_H

#include "maps.h"
#include "context.h"
#include "clock.h"
#include "shared.h"

#define XRL_DNS_HDR		12
/* a label is at least 2 bytes: 127 of them and the root fill 255 */
#define XRL_DNS_MAX_LABELS	((XRL_DNS_MAX_NAME - 1) / 2)
/* the DNS bytes of a response at most: header, name, type and class */
#define XRL_DNS_MAX_ANSWER	(XRL_DNS_HDR + XRL_DNS_MAX_NAME + 4)


struct xrl_udphdr {
	__be16 source;
	__be16 dest;
	__be16 len;
	__be16 check;
};

/* One's-complement sum folded to 16 bits, complemented. */
static __always_inline __u16 dns_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Offsets in the frame these functions take: the DNS message starts at
 * most this far in (Ethernet, two tags, IPv6, UDP: 70 bytes). */
#define XRL_DNS_MAX_OFF		128

/*
 * The sum of `len` bytes of the frame from `off` (an odd last byte padded
 * with zero), in network order words; -1 when they are not all there. A
 * global function, verified once on its own: a loop inlined after the
 * name's walk would be walked again for every length the walk may find.
 */
__noinline int xrl_dns_csum(struct xdp_md *ctx, __u32 off, __u32 len)
{
	const __u8 *p;
	const void *end;
	__u32 sum = 0, i;

	if (!ctx || off > XRL_DNS_MAX_OFF || len > XRL_DNS_MAX_ANSWER + 8)
		return -1;
	p = (void *)(long)ctx->data + off;
	end = (void *)(long)ctx->data_end;
	for (i = 0; i < (XRL_DNS_MAX_ANSWER + 8 + 1) / 2; i++) {
		const __u8 *w = p + 2 * i;

		if (2 * i >= len)
			break;
		if ((const void *)(w + 1) > end)
			return -1;
		if (2 * i + 1 >= len) {
			sum += (__u32)w[0] << 8;
			break;
		}
		if ((const void *)(w + 2) > end)
			return -1;
		sum += (__u32)w[0] << 8 | w[1];
	}
	return sum;
}

/* The IPv4 header's sum (20 bytes, no options). */
static __always_inline __u32 dns_sum_ip4(const __u8 *h)
{
	__u32 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < 20; i += 2)
		sum += (__u32)h[i] << 8 | h[i + 1];
	return sum;
}

/* The sum of n bytes of an address (4 or 16), network order words. */
static __always_inline __u32 dns_sum_addr(const __u8 *a, int n)
{
	__u32 sum = 0;
	int i;

#pragma unroll
	for (i = 0; i < 16; i += 2)
		if (i < n)
			sum += (__u32)a[i] << 8 | a[i + 1];
	return sum;
}

/* May anything be sent to this source? Not a multicast or broadcast MAC,
 * not an unspecified, loopback, multicast or broadcast address. */
static __always_inline int dns_src_ok4(__u32 saddr)
{
	__u8 first = bpf_ntohl(saddr) >> 24;

	return first != 0 && first != 127 && first < 224;
}

static __always_inline int dns_src_ok6(const struct in6_addr *a)
{
	if (a->s6_addr[0] == 0xff)
		return 0;	/* multicast */
	if (a->s6_addr32[0] || a->s6_addr32[1] || a->s6_addr32[2])
		return 1;
	/* :: and ::1 */
	return bpf_ntohl(a->s6_addr32[3]) > 1;
}

/*
 * The name of the question at `off` in the frame, within `left` bytes of
 * the DNS message: its length on the wire (the root label included), or 0
 * when it is not a name this step answers. Its labels are walked by a
 * bounded loop: at most XRL_DNS_MAX_LABELS labels and the root, at most
 * XRL_DNS_MAX_NAME bytes. A global function, verified once on its own.
 */
__noinline int xrl_dns_name(struct xdp_md *ctx, __u32 off, __u32 left)
{
	const __u8 *q;
	const void *end;
	__u32 at = 0, i;

	if (!ctx || off > XRL_DNS_MAX_OFF + XRL_DNS_HDR)
		return 0;
	q = (void *)(long)ctx->data + off;
	end = (void *)(long)ctx->data_end;
	for (i = 0; i <= XRL_DNS_MAX_LABELS; i++) {
		const __u8 *lp = q + at;
		__u8 len;

		if ((const void *)(lp + 1) > end || at >= left)
			return 0;
		len = *lp;
		if (!len)
			return at + 1;
		/* 0xc0: a compression pointer, which a query's only name has
		 * nothing to point back to; 0x40, 0x80: reserved types */
		if (len > 63)
			return 0;
		at += len + 1;
		/* the next length byte would make the name longer */
		if (at >= XRL_DNS_MAX_NAME)
			return 0;
	}
	return 0;
}

/* The DNS header of a query this step answers: QR=0, opcode QUERY,
 * QDCOUNT 1. */
static __always_inline int dns_header_ok(const __u8 *dns)
{
	return !(dns[2] & 0xf8) && dns[4] == 0 && dns[5] == 1;
}

/* The rewrite of the DNS header into the response's. */
static __always_inline void dns_respond(__u8 *dns)
{
	/* QR=1, opcode 0, AA=0, TC=1, RD as asked; RA, Z, AD, CD, RCODE 0 */
	dns[2] = 0x80 | 0x02 | (dns[2] & 0x01);
	dns[3] = 0;
	/* QDCOUNT stays 1; ANCOUNT, NSCOUNT, ARCOUNT 0 */
	__builtin_memset(dns + 6, 0, 6);
}

static __always_inline void dns_swap_macs(struct ethhdr *eth)
{
	__u8 tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, tmp, ETH_ALEN);
}

/* Does the host's cap allow one more answer now? */
static __always_inline int slip_cap_admits(struct xrl_rule_stats *rs)
{
	struct xrl_global_stats *gs;
	struct xrl_control *ctrl;
	struct xrl_answer_cap *cap;
	__u64 until = 0;
	__u32 zero = 0;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	gs = bpf_map_lookup_elem(&xrl_global_stats, &zero);
	cap = bpf_map_lookup_elem(&xrl_answer_cap, &zero);
	if (!ctrl || !gs || !cap)
		return 0;
	if (take_shared(&cap->slip_tat, &gs->slip_tokens, xrl_ns_to_tu(clock_ns(ctrl)),
			XRL_SLIP_CAP_INTERVAL, XRL_SLIP_CAP_LIMIT, XRL_SLIP_CAP_CHUNK, &until))
		return 1;
	if (rs)
		rs->slip_capped++;
	return 0;
}

/*
 * Answer the frame's DNS query with a truncated response, built in place:
 * XRL_TX, or XRL_DROP when the frame is not a query this step answers or
 * the host's cap is spent (counted in the rule's slot). A global function,
 * verified once on its own: its loops (the name's labels, the checksum)
 * would otherwise be walked in every path of the rule step.
 */
__noinline int xrl_dns_slip(struct xdp_md *ctx, __u32 slot)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data, .end = end };
	struct xrl_rule_stats *rs;
	struct xrl_udphdr *udp;
	struct iphdr *iph = NULL;
	struct ipv6hdr *ip6h = NULL;
	__u32 dlen, alen, ulen, sum, l3_left, flen, doff;
	__u8 *dns;
	int proto, delta, v4, namelen, part;

	if (!ctx)
		return XRL_DROP;
	rs = bpf_map_lookup_elem(&xrl_rule_stats, &slot);
	proto = parse_eth(&c);
	if (proto < 0 || (((struct ethhdr *)data)->h_source[0] & 1))
		goto invalid;
	/* a flag, not a NULL pointer, says which: the verifier does not know
	 * a packet pointer is never NULL */
	v4 = proto == bpf_htons(ETH_P_IP);
	if (v4) {
		iph = c.pos;
		if ((void *)(iph + 1) > end || iph->version != 4 || iph->ihl != 5 ||
		    iph->protocol != IPPROTO_UDP || (iph->frag_off & bpf_htons(0x3fff)) ||
		    !dns_src_ok4(iph->saddr))
			goto invalid;
		l3_left = bpf_ntohs(iph->tot_len);
		if (l3_left < sizeof(*iph))
			goto invalid;
		l3_left -= sizeof(*iph);
		udp = (void *)(iph + 1);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		ip6h = c.pos;
		if ((void *)(ip6h + 1) > end || ip6h->version != 6 ||
		    ip6h->nexthdr != IPPROTO_UDP || !dns_src_ok6(&ip6h->saddr))
			goto invalid;
		l3_left = bpf_ntohs(ip6h->payload_len);
		udp = (void *)(ip6h + 1);
	} else {
		goto invalid;
	}
	if ((void *)(udp + 1) > end || !udp->source)
		goto invalid;
	/* the UDP length is the IP packet's: no trailing bytes inside the
	 * packet that a response would have to account for */
	ulen = bpf_ntohs(udp->len);
	if (ulen != l3_left || ulen < sizeof(*udp) + XRL_DNS_HDR)
		goto invalid;
	dns = (void *)(udp + 1);
	dlen = ulen - sizeof(*udp);
	if ((void *)(dns + XRL_DNS_HDR) > end || !dns_header_ok(dns))
		goto invalid;
	doff = (void *)dns - data;
	namelen = xrl_dns_name(ctx, doff + XRL_DNS_HDR, dlen - XRL_DNS_HDR);
	if (namelen <= 0 || namelen > XRL_DNS_MAX_NAME)
		goto invalid;
	/* the question: the name, QTYPE and QCLASS */
	alen = XRL_DNS_HDR + namelen + 4;
	if (alen > dlen || (void *)(dns + alen) > end)
		goto invalid;
	if (!slip_cap_admits(rs))
		return XRL_DROP;

	/* the response, in place */
	dns_swap_macs(data);
	dns_respond(dns);
	ulen = sizeof(*udp) + alen;
	{
		__be16 port = udp->source;

		udp->source = udp->dest;
		udp->dest = port;
	}
	udp->len = bpf_htons(ulen);
	udp->check = 0;
	if (v4 && iph) {
		__be32 a = iph->saddr;

		iph->saddr = iph->daddr;
		iph->daddr = a;
		iph->tot_len = bpf_htons(sizeof(*iph) + ulen);
		iph->ttl = 64;
		iph->check = 0;
		iph->check = bpf_htons(dns_csum_fold(dns_sum_ip4((void *)iph)));
		sum = dns_sum_addr((void *)&iph->saddr, 4) + dns_sum_addr((void *)&iph->daddr, 4);
	} else if (ip6h) {
		struct in6_addr a = ip6h->saddr;

		ip6h->saddr = ip6h->daddr;
		ip6h->daddr = a;
		ip6h->payload_len = bpf_htons(ulen);
		ip6h->hop_limit = 64;
		sum = dns_sum_addr((void *)&ip6h->saddr, 16) +
		      dns_sum_addr((void *)&ip6h->daddr, 16);
	} else {
		return XRL_DROP;
	}
	/* the pseudo-header's protocol and length, the UDP header and the
	 * message; a sum of 0 goes out as 0xffff (0 is "no checksum") */
	part = xrl_dns_csum(ctx, (void *)udp - data, ulen);
	if (part < 0)
		return XRL_DROP;
	sum += IPPROTO_UDP + ulen + part;
	udp->check = bpf_htons(dns_csum_fold(sum));
	if (!udp->check)
		udp->check = 0xffff;
	/* cut the frame after the question: never larger than the query */
	flen = end - data;
	delta = (int)(doff + alen) - (int)flen;
	if (delta < 0 && bpf_xdp_adjust_tail(ctx, delta))
		return XRL_DROP;
	if (rs)
		rs->slipped_packets++;
	return XRL_TX;
invalid:
	if (rs)
		rs->slip_invalid++;
	return XRL_DROP;
}

/* The rule step's refusal of a key's bucket: every slip-th of the key's
 * refusals is the answer step's (XRL_SLIP), the rest are dropped. */
static __always_inline int dns_slip_due(const struct xrl_step *m, int decision)
{
	const struct xrl_rule *r = m->r;

	if (decision != XRL_DROP || !r->slip || !m->kdrops || m->mode != XRL_MODE_ENFORCE)
		return decision;
	return m->kdrops % r->slip ? XRL_DROP : XRL_SLIP;
}

#endif

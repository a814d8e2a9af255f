/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Packet parsing for xdp-rl: a header cursor with a bounds check before
 * every header read, so that no frame, however truncated, is read out of
 * bounds. Kernel uapi headers only.
 */
#ifndef XRL_PARSING_H
#define XRL_PARSING_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define XRL_MAX_VLANS		2
#define XRL_MAX_EXT_HDRS	8

enum xrl_parse_res {
	XRL_PARSE_IP = 0,
	XRL_PARSE_NON_IP = 1,
	XRL_PARSE_MALFORMED = 2,
};

struct xrl_pkt {
	__u32 saddr[4];		/* IPv4 in saddr[0], network order */
	__u32 len;		/* frame length, bytes */
	__u8 family;		/* 4 or 6 */
	__u8 l4proto;		/* IPPROTO_*, or the header a walk stopped at */
	__u8 fragment;		/* 1 for a non-first fragment (no L4 header) */
	__u8 first_frag;	/* 1 for a first fragment (offset 0, more to come) */
	/* endpoint rules: TCP and UDP only, when their header is there */
	__u16 dport;		/* host order */
	__u8 ports;		/* 1: dport (and syn) read */
	__u8 syn;		/* TCP SYN without ACK */
	/* not parsed: the endpoint class being decided, 0 for the source
	 * rule (part of the hot-key cache's key) */
	__u32 klass;
	/* TCP and UDP with ports read: the IP length (0: not known, a
	 * jumbogram) and the headers through TCP's options or UDP's */
	__u16 l3len;
	__u16 hdrs;
	/* not parsed: the slot + 1 of the rule that decided, 0: none (for
	 * a capture) */
	__u32 rule_slot;
};

struct hdr_cursor {
	void *pos;
	void *end;
	/* the bytes of the IP packet from pos on, by its length field (the
	 * frame may be longer: trailing padding is not the packet's), and
	 * its whole length (0: a jumbogram) */
	int l3_left;
	int l3_len;
	/* the frame's bytes past end, which the cursor cannot read: tc's
	 * non-linear data (0 at XDP, a constant there, so the checks below
	 * compile to the plain pointer comparisons) */
	__u32 tail;
};

/* Is the frame shorter than len bytes from pos on? Its bytes to end and,
 * on tc, the tail it cannot read (a length check, never a read). */
static __always_inline int frame_short(const struct hdr_cursor *c, void *pos, __u32 len)
{
	__u64 room;

	if (!c->tail)
		return pos + len > c->end;
	/* the bytes to end, a 64-bit difference the compiler must not fold
	 * into 32-bit arithmetic on the pointers (which the verifier refuses) */
	room = c->end - pos;
	asm volatile("" : "+r"(room));
	return len > room + c->tail;
}

/* A transport header the IP packet holds (need bytes of it) but the cursor
 * cannot read: on tc, past the bytes pulled into the linear part. Refused,
 * as malformed: read as "no ports", it would pass around an endpoint rule.
 * At XDP (no tail) every such header is cut short: no ports. */
static __always_inline int unread_hdr(const struct hdr_cursor *c, int need)
{
	return c->tail && c->l3_left >= need ? XRL_PARSE_MALFORMED : XRL_PARSE_IP;
}

/* Not in the uapi headers. */
struct xrl_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

struct xrl_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;	/* offset << 3 | flags */
	__be32 identification;
};

static __always_inline int proto_is_vlan(__u16 h_proto)
{
	return h_proto == bpf_htons(ETH_P_8021Q) ||
	       h_proto == bpf_htons(ETH_P_8021AD);
}

/* Ethernet and up to XRL_MAX_VLANS tags; returns the inner ethertype, or -1
 * for a frame too short or with more tags than that: a frame whose IP header
 * the walk cannot reach must not pass unmetered as "non-IP". */
static __always_inline int parse_eth(struct hdr_cursor *c)
{
	struct ethhdr *eth = c->pos;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return -1;
	c->pos = eth + 1;
	proto = eth->h_proto;

#pragma unroll
	for (i = 0; i < XRL_MAX_VLANS; i++) {
		struct xrl_vlan_hdr *vh = c->pos;

		if (!proto_is_vlan(proto))
			break;
		if ((void *)(vh + 1) > c->end)
			return -1;
		c->pos = vh + 1;
		proto = vh->encap_proto;
	}
	if (proto_is_vlan(proto))
		return -1;
	return proto;
}

static __always_inline int parse_ipv4(struct hdr_cursor *c, struct xrl_pkt *p)
{
	struct iphdr *iph = c->pos;
	__u32 hlen;

	if ((void *)(iph + 1) > c->end)
		return XRL_PARSE_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return XRL_PARSE_MALFORMED;
	hlen = iph->ihl * 4;
	if (c->pos + hlen > c->end)
		return XRL_PARSE_MALFORMED;
	/* A total length shorter than the header, or longer than the frame
	 * (trailing padding is fine), is a packet the stack would discard. */
	if (bpf_ntohs(iph->tot_len) < hlen ||
	    frame_short(c, c->pos, bpf_ntohs(iph->tot_len)))
		return XRL_PARSE_MALFORMED;

	p->family = 4;
	p->saddr[0] = iph->saddr;
	p->l4proto = iph->protocol;
	p->fragment = (iph->frag_off & bpf_htons(0x1fff)) != 0;
	p->first_frag = (iph->frag_off & bpf_htons(0x3fff)) == bpf_htons(0x2000);
	c->l3_left = bpf_ntohs(iph->tot_len) - hlen;
	c->l3_len = bpf_ntohs(iph->tot_len);
	c->pos += hlen;
	/* RFC 3128: a TCP fragment at offset 1 (8 bytes) overwrites the
	 * flags of the first one on reassembly; no real stack sends one */
	if (p->l4proto == IPPROTO_TCP && (iph->frag_off & bpf_htons(0x1fff)) == bpf_htons(1))
		return XRL_PARSE_MALFORMED;
	return XRL_PARSE_IP;
}

static __always_inline int ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING ||
	       nh == IPPROTO_FRAGMENT || nh == IPPROTO_AH ||
	       nh == IPPROTO_DSTOPTS || nh == IPPROTO_MH;
}

/* A bounded walk over the extension headers to the L4 protocol. */
static __always_inline int parse_ipv6_ext(struct hdr_cursor *c,
					  struct xrl_pkt *p, __u8 nh)
{
	int i;

#pragma unroll
	for (i = 0; i < XRL_MAX_EXT_HDRS; i++) {
		struct ipv6_opt_hdr *oh = c->pos;

		if (!ipv6_is_ext(nh))
			break;
		if ((void *)(oh + 1) > c->end)
			return XRL_PARSE_MALFORMED;
		if (nh == IPPROTO_FRAGMENT) {
			struct xrl_frag_hdr *fh = c->pos;

			if ((void *)(fh + 1) > c->end)
				return XRL_PARSE_MALFORMED;
			c->pos = fh + 1;
			c->l3_left -= sizeof(*fh);
			nh = fh->nexthdr;
			if (fh->frag_off & bpf_htons(0xfff8)) {
				p->fragment = 1;	/* no L4 header here */
				/* RFC 3128, as for IPv4 */
				if (nh == IPPROTO_TCP &&
				    (fh->frag_off & bpf_htons(0xfff8)) == bpf_htons(1 << 3))
					return XRL_PARSE_MALFORMED;
				break;
			}
			p->first_frag = (fh->frag_off & bpf_htons(1)) != 0;
			continue;
		}
		if (nh == IPPROTO_AH) {
			c->pos += (oh->hdrlen + 2) * 4;
			c->l3_left -= (oh->hdrlen + 2) * 4;
		} else {
			c->pos += (oh->hdrlen + 1) * 8;
			c->l3_left -= (oh->hdrlen + 1) * 8;
		}
		if (c->pos > c->end)
			return XRL_PARSE_MALFORMED;
		nh = oh->nexthdr;
	}
	/* still an extension header after the eighth: the L4 protocol is
	 * not known, so no endpoint rule could meter the packet (a SYN behind
	 * nine destination options would pass around 'proto tcp dport 22
	 * syn'); no real stack sends so long a chain */
	if (!p->fragment && ipv6_is_ext(nh))
		return XRL_PARSE_MALFORMED;
	p->l4proto = nh;
	return XRL_PARSE_IP;
}

static __always_inline int parse_ipv6(struct hdr_cursor *c, struct xrl_pkt *p)
{
	struct ipv6hdr *ip6h = c->pos;
	__u16 plen;

	if ((void *)(ip6h + 1) > c->end)
		return XRL_PARSE_MALFORMED;
	if (ip6h->version != 6)
		return XRL_PARSE_MALFORMED;
	plen = bpf_ntohs(ip6h->payload_len);
	/* payload_len 0 is a jumbogram (hop-by-hop option): not checked */
	if (plen && frame_short(c, ip6h + 1, plen))
		return XRL_PARSE_MALFORMED;

	p->family = 6;
	__builtin_memcpy(p->saddr, &ip6h->saddr, sizeof(p->saddr));
	c->pos = ip6h + 1;
	/* a jumbogram: the frame's end */
	c->l3_left = plen ? plen : 0xffff;
	c->l3_len = plen ? sizeof(*ip6h) + plen : 0;
	return parse_ipv6_ext(c, p, ip6h->nexthdr);
}

/*
 * The destination port (and TCP's SYN) for endpoint rules, read only from
 * bytes of the IP packet (not from trailing padding). A non-first
 * fragment, or a header cut short, has none: p->ports stays 0 (never
 * malformed for that: the source rules meter it as before).
 *
 * RFC 1858, RFC 7112: a first fragment of TCP or UDP that does not hold
 * the whole fixed transport header (TCP 20 bytes, UDP 8) is malformed. Its
 * ports or flags would come from a later fragment on reassembly, which no
 * endpoint rule sees: an 8-byte first fragment of a SYN would pass around
 * 'proto tcp dport 22 syn'. No real stack sends one.
 */
static __always_inline int parse_ports(struct hdr_cursor *c, struct xrl_pkt *p)
{
	__u8 *l4 = c->pos;

	if (p->fragment || (p->l4proto != IPPROTO_TCP && p->l4proto != IPPROTO_UDP))
		return XRL_PARSE_IP;
	if (p->first_frag &&
	    (c->l3_left < (p->l4proto == IPPROTO_TCP ? 20 : 8) ||
	     (void *)(l4 + (p->l4proto == IPPROTO_TCP ? 20 : 8)) > c->end))
		return XRL_PARSE_MALFORMED;
	if (p->l4proto == IPPROTO_TCP) {
		if (c->l3_left < 14)
			return XRL_PARSE_IP;
		if ((void *)(l4 + 14) > c->end)
			return unread_hdr(c, 14);
		p->syn = (l4[13] & 0x12) == 0x02;	/* SYN, no ACK */
		p->hdrs = c->l3_len - c->l3_left + (l4[12] >> 4) * 4;
	} else if (c->l3_left < 4) {
		return XRL_PARSE_IP;
	} else if ((void *)(l4 + 4) > c->end) {
		return unread_hdr(c, 4);
	} else {
		p->hdrs = c->l3_len - c->l3_left + 8;
	}
	p->l3len = c->l3_len;
	p->dport = (__u16)l4[2] << 8 | l4[3];
	p->ports = 1;
	return XRL_PARSE_IP;
}

/* Parse a frame into *p: XRL_PARSE_IP, _NON_IP or _MALFORMED. The frame is
 * [data, end) and tail bytes past end that cannot be read (tc: non-linear
 * data; 0 at XDP). */
static __always_inline int parse_frame(void *data, void *end, __u32 tail, struct xrl_pkt *p)
{
	struct hdr_cursor c = { .pos = data, .end = end, .tail = tail };
	int proto;

	p->len = c.end - c.pos + tail;
	proto = parse_eth(&c);
	if (proto < 0)
		return XRL_PARSE_MALFORMED;
	if (proto == bpf_htons(ETH_P_IP))
		proto = parse_ipv4(&c, p);
	else if (proto == bpf_htons(ETH_P_IPV6))
		proto = parse_ipv6(&c, p);
	else
		return XRL_PARSE_NON_IP;
	if (proto == XRL_PARSE_IP)
		proto = parse_ports(&c, p);
	return proto;
}

/* An XDP frame: always linear. */
static __always_inline int parse_packet(struct xdp_md *ctx, struct xrl_pkt *p)
{
	return parse_frame((void *)(long)ctx->data, (void *)(long)ctx->data_end, 0, p);
}

#endif /* XRL_PARSING_H */

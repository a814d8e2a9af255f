/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SYN cookies (rule option syn-cookies, docs/answers.md): a TCP packet to
 * the ports of a syn-cookies endpoint rule, from a source that has not
 * proved its address, never reaches a bucket or a table:
 *  - a SYN is answered here, from the frame itself (XRL_TX), with a SYN-ACK
 *    whose sequence number is the kernel's SYN cookie
 *    (bpf_tcp_raw_gen_syncookie_*); it carries only options the SYN
 *    carried, so it is never longer than the SYN;
 *  - an ACK is checked (bpf_tcp_raw_check_syncookie_*): a valid cookie
 *    marks the source verified (xrl_sc_verified) and the ACK goes on
 *    through the pipeline, to the stack; an invalid one is dropped;
 *  - anything else is dropped.
 * A verified source's packets meet the rules as before. The stack itself
 * accepts a cookie ACK only after its own listener overflowed, so the
 * host pairs this with netfilter's SYNPROXY (same secret, same cookie
 * format, timestamps carrying the options): it takes the ACK, opens the
 * connection to the real listener and splices the two.
 */
#ifndef XRL_BPF_SYNCOOKIE_H
#define XRL_BPF_SYNCOOKIE_H

#include <linux/tcp.h>
#include "maps.h"
#include "context.h"
#include "clock.h"
#include "classify.h"

#define XRL_TCP_MAXLEN	60	/* the longest TCP header */

/* TCP options (not in the uapi headers) */
#define TCPOPT_EOL		0
#define TCPOPT_NOP		1
#define TCPOPT_MSS		2
#define TCPOPT_WINDOW		3
#define TCPOPT_SACK_PERM	4
#define TCPOPT_TIMESTAMP	8
#define TCPOLEN_MSS		4
#define TCPOLEN_WINDOW		3
#define TCPOLEN_SACK_PERM	2
#define TCPOLEN_TIMESTAMP	10

static __always_inline __u16 sc_fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* The SYN's options, copied off the packet (bpf_loop's callback). */
struct sc_opts {
	__u8 o[40];
	__u32 len;	/* bytes of options */
	__u32 off;
	__u32 tsval;	/* network order */
	__u8 mss, ws, sack, ts;
	__u8 wscale;
	__u8 bad;	/* an option runs past the header */
};

static long sc_opt_step(__u32 i, void *data)
{
	struct sc_opts *s = data;
	__u32 off = s->off;
	__u8 kind, len;

	if (off >= s->len || off >= sizeof(s->o))
		return 1;
	kind = s->o[off];
	if (kind == TCPOPT_EOL)
		return 1;
	if (kind == TCPOPT_NOP) {
		s->off = off + 1;
		return 0;
	}
	if (off + 1 >= s->len || off + 1 >= sizeof(s->o)) {
		s->bad = 1;
		return 1;
	}
	len = s->o[off + 1];
	if (len < 2 || off + len > s->len) {
		s->bad = 1;
		return 1;
	}
	if (kind == TCPOPT_MSS && len == TCPOLEN_MSS) {
		s->mss = 1;
	} else if (kind == TCPOPT_WINDOW && len == TCPOLEN_WINDOW && off + 2 < sizeof(s->o)) {
		s->ws = 1;
		s->wscale = s->o[off + 2];
	} else if (kind == TCPOPT_SACK_PERM && len == TCPOLEN_SACK_PERM) {
		s->sack = 1;
	} else if (kind == TCPOPT_TIMESTAMP && len == TCPOLEN_TIMESTAMP && off + 5 < sizeof(s->o)) {
		s->ts = 1;
		__builtin_memcpy(&s->tsval, &s->o[off + 2], 4);
	}
	s->off = off + len;
	return 0;
}

/* The timestamp (SACK-permitted, or two NOPs, before it) and the window
 * scale after it: 12 or 16 bytes at o. */
static __always_inline __u32 sc_put_ts(__u8 *o, const struct sc_opts *s, __u32 tsval)
{
	o[0] = s->sack ? TCPOPT_SACK_PERM : TCPOPT_NOP;
	o[1] = s->sack ? TCPOLEN_SACK_PERM : TCPOPT_NOP;
	o[2] = TCPOPT_TIMESTAMP;
	o[3] = TCPOLEN_TIMESTAMP;
	__builtin_memcpy(&o[4], &tsval, 4);
	__builtin_memcpy(&o[8], &s->tsval, 4);
	if (!s->ws)
		return 12;
	o[12] = TCPOPT_NOP;
	o[13] = TCPOPT_WINDOW;
	o[14] = TCPOLEN_WINDOW;
	o[15] = XRL_SC_WSCALE;
	return 16;
}

/* Per rule slot and on the global slot XRL_RULE_SLOTS, this CPU's. */
static __always_inline struct xrl_sc_stats *sc_stats(__u32 slot)
{
	return bpf_map_lookup_elem(&xrl_sc_stats, &slot);
}

/* The frame's IP and TCP headers again: at most XRL_MAX_VLANS tags, IPv4
 * without options, IPv6 with TCP right after its header. What else the
 * parser admitted (IP options, extension headers) is not answered. */
struct sc_hdrs {
	__u64 l2;	/* bytes before the IP header */
	__u64 l3;	/* bytes of the IP header: 20 or 40 */
};

/* An IPv4 address no SYN is answered from or to: 0.0.0.0/8, 127/8,
 * multicast and the reserved 240/4 (broadcast included). */
static __always_inline int sc_bad_ip4(__u32 a)
{
	__u8 top = bpf_ntohl(a) >> 24;

	return top == 0 || top == 127 || top >= 224;
}

static __always_inline int sc_bad_ip6(const struct in6_addr *a)
{
	__u32 w[4];

	__builtin_memcpy(w, a, sizeof(w));
	if ((bpf_ntohl(w[0]) >> 24) == 0xff)
		return 1;
	return !w[0] && !w[1] && !w[2] && (!w[3] || w[3] == bpf_htonl(1));
}

static __always_inline int sc_locate(struct xdp_md *ctx, const struct xrl_pkt *p, struct sc_hdrs *h)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data, .end = end };
	struct iphdr *iph;
	struct ipv6hdr *ip6h;

	/* a frame to a group address (broadcast, multicast) is no local
	 * listener's */
	if ((void *)(data + ETH_HLEN) > end || (((__u8 *)data)[0] & 1))
		return -1;
	if (parse_eth(&c) < 0)
		return -1;
	h->l2 = c.pos - data;
	if (h->l2 > ETH_HLEN + XRL_MAX_VLANS * sizeof(struct xrl_vlan_hdr))
		return -1;
	if (p->family == 4) {
		iph = c.pos;
		if ((void *)(iph + 1) > end || iph->ihl != 5 || iph->protocol != IPPROTO_TCP ||
		    (iph->frag_off & bpf_htons(0x3fff)))
			return -1;
		/* never to or from 0/8, loopback, multicast or broadcast:
		 * an answer would go to (or claim to be) no one host */
		if (sc_bad_ip4(iph->saddr) || sc_bad_ip4(iph->daddr))
			return -1;
		h->l3 = sizeof(*iph);
	} else {
		ip6h = c.pos;
		if ((void *)(ip6h + 1) > end || ip6h->nexthdr != IPPROTO_TCP)
			return -1;
		/* nor from or to multicast (ff00::/8), :: or ::1 */
		if (sc_bad_ip6(&ip6h->saddr) || sc_bad_ip6(&ip6h->daddr))
			return -1;
		h->l3 = sizeof(*ip6h);
	}
	return 0;
}

/* Check an ACK's cookie: 0 valid. */
static __always_inline int sc_check_ack(struct xdp_md *ctx, const struct xrl_pkt *p,
					const struct sc_hdrs *h)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	void *l3 = data + (h->l2 & 0x1f);
	struct tcphdr *th;

	if (p->family == 4) {
		th = l3 + sizeof(struct iphdr);
		if ((void *)(th + 1) > end || l3 + sizeof(struct iphdr) > end)
			return -1;
		return bpf_tcp_raw_check_syncookie_ipv4(l3, th) ? -1 : 0;
	}
	th = l3 + sizeof(struct ipv6hdr);
	if ((void *)(th + 1) > end || l3 + sizeof(struct ipv6hdr) > end)
		return -1;
	return bpf_tcp_raw_check_syncookie_ipv6(l3, th) ? -1 : 0;
}

/*
 * Answer a SYN with a cookie SYN-ACK, in place: MACs, addresses and ports
 * swapped, ACK = seq + 1, window 0 (SYNPROXY opens it once the real
 * listener answered), TTL 64. Options: MSS if the SYN had one (the
 * host's, XRL_SC_MSS4/6), a timestamp if the SYN had one, carrying the
 * client's window scale and SACK in its low bits as SYNPROXY reads them
 * back; window scale and SACK only with a timestamp (without one the ACK
 * could not bring them back). Every option is one the SYN carried, of
 * the same size: the answer is never longer than the SYN. 0: XRL_TX.
 */
static __always_inline int sc_answer(struct xdp_md *ctx, const struct xrl_pkt *p,
				     const struct sc_hdrs *h)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 l2 = h->l2 & 0x1f, l3 = h->l3 == 40 ? 40 : 20;
	__u32 want = l2 + l3 + XRL_TCP_MAXLEN, tcp_len, olen = 0, seq, tsval, cookie, flen;
	struct sc_opts s = {};
	__u8 o[20] = {};
	struct tcphdr *th;
	struct ethhdr *eth;
	__u8 mac[ETH_ALEN];
	__u64 sum;
	__s64 v;
	int grow;

	/* The TCP header the SYN claims (p->hdrs: IP and TCP headers, by
	 * doff) must lie inside the IP packet and the frame: options read
	 * past them (from trailing padding, or from the bytes grown below)
	 * could make the answer longer than the SYN. */
	if (!p->l3len || p->hdrs < l3 + sizeof(*th) || p->hdrs > p->l3len ||
	    l2 + p->hdrs > p->len)
		return -1;
	/* The cookie helpers take the TCP header with its options: grown to
	 * the longest header, the frame proves to the verifier that any
	 * length up to 60 bytes lies inside it. */
	/* the frame's length: the parser's, scalar (pointer differences
	 * in 32 bits do not pass the verifier) */
	flen = p->len;
	grow = (int)want - (int)flen;
	if (grow > 0) {
		if (bpf_xdp_adjust_tail(ctx, grow))
			return -1;
		flen = want;
	}
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + l2 + l3 + XRL_TCP_MAXLEN > end)
		return -1;
	th = data + l2 + l3;
	tcp_len = th->doff * 4;
	if (tcp_len < sizeof(*th) || tcp_len > XRL_TCP_MAXLEN || tcp_len != p->hdrs - l3)
		return -1;
	if (p->family == 4)
		v = bpf_tcp_raw_gen_syncookie_ipv4(data + l2, th, tcp_len);
	else
		v = bpf_tcp_raw_gen_syncookie_ipv6(data + l2, th, tcp_len);
	if (v < 0)
		return -1;
	cookie = (__u32)v;

	/* the SYN's options */
	__builtin_memcpy(s.o, (void *)(th + 1), sizeof(s.o));
	s.len = tcp_len - sizeof(*th);
	bpf_loop(sizeof(s.o), sc_opt_step, &s, 0);
	if (s.bad)
		return -1;
	if (s.mss) {
		__u16 mss = bpf_htons(p->family == 4 ? XRL_SC_MSS4 : XRL_SC_MSS6);

		o[0] = TCPOPT_MSS;
		o[1] = TCPOLEN_MSS;
		__builtin_memcpy(&o[2], &mss, 2);
		olen = 4;
	}
	if (s.ts) {
		/* SYNPROXY's encoding: the low 6 bits of the timestamp say the
		 * client's window scale (0xf: none) and SACK */
		tsval = (bpf_ktime_get_ns() / 1000000) & ~0x3fULL;
		tsval |= s.ws ? (s.wscale > 14 ? 14 : s.wscale) : 0xf;
		if (s.sack)
			tsval |= 1 << 4;
		tsval = bpf_htonl(tsval);
		/* at a constant offset each: the verifier takes no
		 * pointer the compiler computed from a variable one */
		if (olen)
			olen += sc_put_ts(o + 4, &s, tsval);
		else
			olen += sc_put_ts(o, &s, tsval);
	}
	olen &= 0x1c;
	if (olen > 20)
		return -1;

	/* Ethernet: back where it came from */
	eth = data;
	if ((void *)(eth + 1) > end)
		return -1;
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);

	/* TCP */
	seq = th->seq;
	{
		__u16 port = th->source;

		th->source = th->dest;
		th->dest = port;
	}
	th->seq = bpf_htonl(cookie);
	th->ack_seq = bpf_htonl(bpf_ntohl(seq) + 1);
	/* doff 5 + olen / 4, flags SYN | ACK only */
	((__u8 *)th)[12] = (5 + olen / 4) << 4;
	((__u8 *)th)[13] = 0x12;
	th->window = 0;
	th->check = 0;
	th->urg_ptr = 0;
	__builtin_memcpy((void *)(th + 1), o, sizeof(o));

	if (p->family == 4) {
		struct iphdr *iph = data + l2;
		__u32 a, ph[3];

		if ((void *)(iph + 1) > end)
			return -1;
		a = iph->saddr;
		iph->saddr = iph->daddr;
		iph->daddr = a;
		iph->tot_len = bpf_htons(sizeof(*iph) + sizeof(*th) + olen);
		iph->id = 0;
		iph->frag_off = bpf_htons(0x4000);	/* DF */
		iph->ttl = 64;
		iph->tos = 0;
		iph->check = 0;
		iph->check = sc_fold(bpf_csum_diff(NULL, 0, (void *)iph, sizeof(*iph), 0));
		ph[0] = iph->saddr;
		ph[1] = iph->daddr;
		ph[2] = bpf_htonl(IPPROTO_TCP << 16 | (sizeof(*th) + olen));
		sum = bpf_csum_diff(NULL, 0, ph, sizeof(ph), 0);
	} else {
		struct ipv6hdr *ip6h = data + l2;
		__u32 ph[10];

		if ((void *)(ip6h + 1) > end)
			return -1;
		__builtin_memcpy(&ph[0], &ip6h->daddr, 16);
		__builtin_memcpy(&ph[4], &ip6h->saddr, 16);
		__builtin_memcpy(&ip6h->saddr, &ph[0], 16);
		__builtin_memcpy(&ip6h->daddr, &ph[4], 16);
		ip6h->payload_len = bpf_htons(sizeof(*th) + olen);
		ip6h->hop_limit = 64;
		ph[8] = bpf_htonl(sizeof(*th) + olen);
		ph[9] = bpf_htonl(IPPROTO_TCP);
		sum = bpf_csum_diff(NULL, 0, ph, sizeof(ph), 0);
	}
	sum = bpf_csum_diff(NULL, 0, (void *)th, sizeof(*th), sum);
	sum = bpf_csum_diff(NULL, 0, (void *)o, olen, sum);
	th->check = sc_fold(sum);

	/* the frame: through the options, no more */
	grow = (int)(l2 + l3 + sizeof(*th) + olen) - (int)flen;
	if (grow < 0 && bpf_xdp_adjust_tail(ctx, grow))
		return -1;
	return 0;
}

/*
 * The step, for a TCP packet with its ports read, in enforce mode, before
 * the source rules: XRL_PASS (no syn-cookies rule, a verified source, or a
 * valid cookie ACK just verified), XRL_TX (a SYN answered) or XRL_DROP.
 *
 * A global function, verified once on its own: inlined, its stack (the
 * SYN's options, the answer's) added to the pipeline's and the rule
 * step's passed the verifier's 512 bytes. p is checked as memory of its
 * size that may be NULL; it never is.
 */
__noinline int xrl_syncookie_step(struct xdp_md *ctx, const struct xrl_pkt *p)
{
	const struct xrl_control *ctrl;
	__u32 zero = 0;
	struct xrl_sc_key k = {};
	struct xrl_sc_stats *st, *gst;
	struct xrl_sc_entry *e, ne;
	struct xrl_rule *r;
	struct sc_hdrs h;
	__u32 class;
	__u64 now;
	__u8 flags;

	ctrl = bpf_map_lookup_elem(&xrl_control, &zero);
	if (!p || !ctx || !ctrl)
		return XRL_PASS;
	class = endpoint_class(p);
	if (!class)
		return XRL_PASS;
	r = classify_endpoint(p, class);
	if (!r || !r->syncookies || r->action != XRL_ACT_LIMIT || r->dry_run)
		return XRL_PASS;
	now = clock_ns(ctrl);
	k.family = p->family;
	__builtin_memcpy(k.addr, p->saddr, sizeof(k.addr));
	/* an IPv6 source is verified per /64: whoever owns a /64 owns its
	 * every address, and one attacker's prefix is one entry, not enough
	 * handshakes to flush the table */
	if (p->family == 6)
		k.addr[2] = k.addr[3] = 0;
	e = bpf_map_lookup_elem(&xrl_sc_verified, &k);
	/* signed: another CPU may have stamped the entry with a clock read
	 * after this packet's, which is fresh, not 2^64 ns old */
	if (e && (__s64)(now - e->seen_ns) < (__s64)XRL_SC_IDLE_NS) {
		/* verified: seen again (written at most once a second) */
		if ((__s64)(now - e->seen_ns) > (__s64)XRL_SC_TOUCH_NS)
			e->seen_ns = now;
		return XRL_PASS;
	}
	st = sc_stats(r->slot);
	gst = sc_stats(XRL_RULE_SLOTS);
	if (!st || !gst)
		return XRL_DROP;
	if (sc_locate(ctx, p, &h)) {
		st->unverified_dropped++;
		return XRL_DROP;
	}
	{
		void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
		__u8 *th = data + (h.l2 & 0x1f) + (h.l3 == 40 ? 40 : 20);

		if ((void *)(th + sizeof(struct tcphdr)) > end) {
			st->unverified_dropped++;
			return XRL_DROP;
		}
		flags = th[13];
	}
	/* SYN alone (ECN's bits aside) */
	if ((flags & ~(0x40 | 0x80)) == 0x02) {
		if (sc_answer(ctx, p, &h)) {
			st->unverified_dropped++;
			return XRL_DROP;
		}
		st->cookies_sent++;
		return XRL_TX;
	}
	/* SYN-ACK: only a server answering the host's own connection sends
	 * one; it goes on to the rules and to conntrack (an unsolicited one
	 * is invalid there, and the SYNPROXY table drops it) */
	if ((flags & 0x17) == 0x12)
		return XRL_PASS;
	/* the handshake's ACK: no SYN, RST or FIN */
	if ((flags & 0x17) != 0x10) {
		st->unverified_dropped++;
		return XRL_DROP;
	}
	if (sc_check_ack(ctx, p, &h)) {
		st->acks_invalid++;
		return XRL_DROP;
	}
	st->acks_valid++;
	ne.verified_ns = now;
	ne.seen_ns = now;
	if (bpf_map_update_elem(&xrl_sc_verified, &k, &ne, BPF_ANY)) {
		st->unverified_dropped++;
		return XRL_DROP;
	}
	st->verified++;
	/* the global slot counts the keys created: a source verified again
	 * after its entry expired updates its key, evicts none */
	if (!e)
		gst->verified++;
	return XRL_PASS;
}

#endif

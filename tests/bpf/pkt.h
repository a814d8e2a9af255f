/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Crafting test frames: Ethernet, VLAN tags, IPv4 (options, fragments),
 * IPv6 (extension headers), UDP, ARP.
 *
 * struct frame describes a frame declaratively, field by field, so that a
 * test can break one header on purpose and say which; struct pkt_spec is the
 * short form the metering tests and the benchmark use. */
#ifndef XRL_TEST_PKT_H
#define XRL_TEST_PKT_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#define PKT_MAX_TAGS	4
#define PKT_MAX_EXT	12

/* One IPv6 extension header. */
struct pkt_ext {
	uint8_t type;		/* IPPROTO_HOPOPTS, _ROUTING, _FRAGMENT, _AH, _DSTOPTS, _MH */
	uint8_t hdrlen;		/* its length field: (hdrlen + 1) * 8 bytes, for AH
				 * (hdrlen + 2) * 4; a fragment header is 8 bytes */
	uint16_t len;		/* bytes written, when not what hdrlen says (0: that) */
	uint16_t frag_off;	/* fragment header: offset, 8-byte units */
	uint8_t more;		/* fragment header: the M flag */
};

/*
 * A frame. All fields zero but src give a well-formed frame: Ethernet, the
 * IP header of src's family, UDP; every length field is computed from what
 * follows it. The other fields change one thing each.
 */
struct frame {
	const uint8_t *bytes;		/* the frame as given, instead of the fields below */
	size_t nbytes;
	const char *src;		/* an IPv4 or IPv6 source address; NULL: no IP header */
	uint16_t tags[PKT_MAX_TAGS];	/* VLAN tag TPIDs, outermost first, up to a 0 */
	uint16_t ethertype;		/* 0: src's family; without src, ETH_P_ARP is
					 * an ARP request, others `payload` zero bytes */
	uint8_t version;		/* the IP version field; 0: src's family */
	/* IPv4 */
	uint8_t ihl;			/* the IHL field; 0: 5 + opt_words */
	uint8_t opt_words;		/* options written (NOPs), 32-bit words */
	uint16_t frag_off;		/* fragment offset, 8-byte units */
	uint8_t more_frags;		/* the MF flag (0x2000) */
	uint8_t df;			/* the DF flag (0x4000) */
	/* IPv6 */
	struct pkt_ext ext[PKT_MAX_EXT];	/* extension headers, in order (EXT()) */
	int n_ext;
	/* the IPv4 total length or IPv6 payload length field */
	uint8_t ip_len_set;		/* write ip_len (IP_LEN()), not the computed value */
	uint16_t ip_len;
	int ip_len_adj;			/* added to the computed value */
	/* after the IP headers */
	uint8_t l4;			/* the protocol; 0: UDP (a header, then `payload`) */
	uint16_t payload;		/* bytes after the UDP header, or after the IP headers */
	uint16_t pad;			/* trailing bytes after the IP packet */
	uint16_t cut;			/* keep only the first `cut` bytes; 0: all */
};

/* .ext and .n_ext: EXT({ IPPROTO_HOPOPTS }, { IPPROTO_AH, .hdrlen = 4 }) */
#define EXT(...)	.ext = { __VA_ARGS__ },						\
			.n_ext = sizeof((struct pkt_ext[]){ __VA_ARGS__ }) / sizeof(struct pkt_ext)
/* .bytes and .nbytes: BYTES(0x02, 0x00, ...) */
#define BYTES(...)	.bytes = (const uint8_t[]){ __VA_ARGS__ },			\
			.nbytes = sizeof((const uint8_t[]){ __VA_ARGS__ })
#define IP_LEN(n)	.ip_len_set = 1, .ip_len = (n)

static inline uint16_t csum16(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (b[i] << 8) | b[i + 1];
	if (len & 1)
		s += b[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons(~s);
}

static inline void put16(uint8_t *p, uint16_t host)
{
	uint16_t n = htons(host);

	memcpy(p, &n, 2);
}

/* Build the frame into buf (size bytes); returns its length, or 0 when it
 * does not fit. */
/* Headers at any offset of a frame (after a 14-byte Ethernet header an IP
 * header is 2 bytes off its alignment): written through these types, which
 * promise no alignment, they are not undefined behaviour (UBSan). */
typedef struct iphdr pkt_iphdr __attribute__((aligned(1)));
typedef struct ipv6hdr pkt_ipv6hdr __attribute__((aligned(1)));
typedef struct udphdr pkt_udphdr __attribute__((aligned(1)));

static inline size_t frame_build(uint8_t *buf, size_t size, const struct frame *f)
{
	static const uint8_t arp[28] = { 0, 1, 8, 0, 6, 4, 0, 1 };
	int v6 = f->src && strchr(f->src, ':');
	uint8_t *p = buf, *end = buf + size, *ip;
	size_t len;
	int ip_len;

#define ROOM(n)	do { if ((size_t)(end - p) < (size_t)(n)) return 0; } while (0)
	if (f->bytes) {
		if (f->nbytes > size)
			return 0;
		memcpy(buf, f->bytes, f->nbytes);
		return f->nbytes;
	}
	memset(buf, 0, size);
	ROOM(12);
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	p += 12;
	for (int i = 0; i < PKT_MAX_TAGS && f->tags[i]; i++) {
		ROOM(4);
		put16(p, f->tags[i]);
		put16(p + 2, 100 * (i + 1));	/* VLAN 100, 200, ... */
		p += 4;
	}
	ROOM(2);
	put16(p, f->ethertype ? f->ethertype : !f->src ? ETH_P_ARP : v6 ? ETH_P_IPV6 : ETH_P_IP);
	p += 2;

	if (!f->src) {
		if (f->ethertype == ETH_P_ARP || !f->ethertype) {	/* an ARP request */
			ROOM(sizeof(arp));
			memcpy(p, arp, sizeof(arp));
			p += sizeof(arp);
		} else {
			ROOM(f->payload);
			p += f->payload;
		}
		goto out;
	}

	ip = p;
	if (!v6) {
		pkt_iphdr *iph = (void *)p;
		int hl = 20 + 4 * f->opt_words;

		ROOM(hl);
		iph->version = f->version ? f->version : 4;
		iph->ihl = f->ihl ? f->ihl : hl / 4;
		iph->ttl = 64;
		iph->protocol = f->l4 ? f->l4 : IPPROTO_UDP;
		iph->frag_off = htons((f->frag_off & 0x1fff) | (f->more_frags ? 0x2000 : 0) |
				      (f->df ? 0x4000 : 0));
		inet_pton(AF_INET, f->src, &iph->saddr);
		inet_pton(AF_INET, "198.19.0.1", &iph->daddr);
		memset(p + 20, 1, hl - 20);	/* NOP options */
		p += hl;
	} else {
		pkt_ipv6hdr *ip6 = (void *)p;
		uint8_t a[16];

		ROOM(sizeof(*ip6));
		ip6->version = f->version ? f->version : 6;
		ip6->hop_limit = 64;
		inet_pton(AF_INET6, f->src, a);
		memcpy(&ip6->saddr, a, 16);
		inet_pton(AF_INET6, "2001:db8:ffff::1", a);
		memcpy(&ip6->daddr, a, 16);
		ip6->nexthdr = f->n_ext ? f->ext[0].type : f->l4 ? f->l4 : IPPROTO_UDP;
		p += sizeof(*ip6);
		for (int i = 0; i < f->n_ext && i < PKT_MAX_EXT; i++) {
			const struct pkt_ext *e = &f->ext[i];
			int n = e->type == IPPROTO_FRAGMENT ? 8 :
				e->type == IPPROTO_AH ? (e->hdrlen + 2) * 4 : (e->hdrlen + 1) * 8;

			if (e->len)
				n = e->len;
			ROOM(n < 8 ? 8 : n);
			p[0] = i + 1 < f->n_ext ? f->ext[i + 1].type : f->l4 ? f->l4 : IPPROTO_UDP;
			if (e->type == IPPROTO_FRAGMENT)
				put16(p + 2, e->frag_off << 3 | !!e->more);
			else
				p[1] = e->hdrlen;
			p += n;
		}
	}

	if (!f->l4 || f->l4 == IPPROTO_UDP) {
		pkt_udphdr *u = (void *)p;

		ROOM(8 + f->payload);
		u->source = htons(40000);
		u->dest = htons(53);
		u->len = htons(8 + f->payload);
		p += 8 + f->payload;
	} else {
		ROOM(f->payload);
		p += f->payload;
	}

	ip_len = p - ip - (v6 ? sizeof(struct ipv6hdr) : 0);
	ip_len = f->ip_len_set ? f->ip_len : ip_len + f->ip_len_adj;
	if (!v6) {
		pkt_iphdr *iph = (void *)ip;

		iph->tot_len = htons(ip_len);
		iph->check = csum16(iph, 20 + 4 * f->opt_words);
	} else {
		((pkt_ipv6hdr *)ip)->payload_len = htons(ip_len);
	}
	ROOM(f->pad);
	p += f->pad;
out:
	len = p - buf;
	return f->cut && f->cut < len ? f->cut : len;
#undef ROOM
}

struct pkt_spec {
	const char *src;		/* IPv4 or IPv6 source; NULL: ARP */
	int vlans;			/* 0, 1 (802.1Q) or 2 (802.1ad + 802.1Q) */
	int ip_opt_words;		/* IPv4 options, 32-bit words */
	uint16_t frag_off;		/* IPv4/IPv6 fragment offset (8-byte units) */
	const uint8_t *ext;		/* IPv6 extension headers, in order */
	int next_ext;			/* count of ext[] */
	int payload;			/* UDP payload bytes */
};

/* Build the frame into buf (at least 512 bytes); returns its length. AH
 * headers are 24 bytes, other extension headers (but fragments) 16. */
static inline size_t pkt_build(uint8_t *buf, const struct pkt_spec *s)
{
	struct frame f = {
		.src = s->src,
		.opt_words = s->ip_opt_words,
		.payload = s->payload,
	};

	if (s->vlans == 2)
		f.tags[0] = ETH_P_8021AD, f.tags[1] = ETH_P_8021Q;
	else if (s->vlans == 1)
		f.tags[0] = ETH_P_8021Q;
	if (s->src && strchr(s->src, ':')) {
		for (int i = 0; i < s->next_ext && i < PKT_MAX_EXT; i++) {
			f.ext[i].type = s->ext[i];
			f.ext[i].hdrlen = s->ext[i] == IPPROTO_AH ? 4 : s->ext[i] == IPPROTO_FRAGMENT ? 0 : 1;
			f.ext[i].frag_off = s->frag_off;
		}
		f.n_ext = s->next_ext;
	} else {
		f.frag_off = s->frag_off;
	}
	return frame_build(buf, 512, &f);
}

#endif

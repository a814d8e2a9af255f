/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Crafting test frames: Ethernet, VLAN tags, IPv4 (options, fragments),
 * IPv6 (extension headers), UDP, ARP. */
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

struct pkt_spec {
	const char *src;		/* IPv4 or IPv6 source; NULL: ARP */
	int vlans;			/* 0, 1 (802.1Q) or 2 (802.1ad + 802.1Q) */
	int ip_opt_words;		/* IPv4 options, 32-bit words */
	uint16_t frag_off;		/* IPv4/IPv6 fragment offset (8-byte units) */
	const uint8_t *ext;		/* IPv6 extension headers, in order */
	int next_ext;			/* count of ext[] */
	int payload;			/* UDP payload bytes */
};

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

/* Build the frame into buf (at least 512 bytes); returns its length. */
static inline size_t pkt_build(uint8_t *buf, const struct pkt_spec *s)
{
	uint8_t *p = buf;
	uint16_t proto;
	uint8_t a[16];
	int v6 = s->src && strchr(s->src, ':');

	memset(buf, 0, 512);
	memcpy(p, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	p += 12;
	if (s->vlans == 2) {
		*(uint16_t *)p = htons(ETH_P_8021AD);
		*(uint16_t *)(p + 2) = htons(100);
		p += 4;
	}
	if (s->vlans >= 1) {
		*(uint16_t *)p = htons(ETH_P_8021Q);
		*(uint16_t *)(p + 2) = htons(200);
		p += 4;
	}
	proto = !s->src ? ETH_P_ARP : v6 ? ETH_P_IPV6 : ETH_P_IP;
	*(uint16_t *)p = htons(proto);
	p += 2;

	if (!s->src) {	/* an ARP request */
		static const uint8_t arp[28] = { 0, 1, 8, 0, 6, 4, 0, 1 };

		memcpy(p, arp, sizeof(arp));
		return p + sizeof(arp) - buf;
	}

	if (!v6) {
		struct iphdr *ip = (void *)p;
		int hl = 20 + 4 * s->ip_opt_words;
		int tot = hl + 8 + s->payload;

		ip->version = 4;
		ip->ihl = hl / 4;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons(tot);
		ip->frag_off = htons(s->frag_off & 0x1fff);
		inet_pton(AF_INET, s->src, &ip->saddr);
		inet_pton(AF_INET, "198.19.0.1", &ip->daddr);
		memset(p + 20, 1, hl - 20);	/* NOP options */
		ip->check = csum16(ip, hl);
		p += hl;
	} else {
		struct ipv6hdr *ip6 = (void *)p;
		uint8_t *start;

		ip6->version = 6;
		ip6->hop_limit = 64;
		inet_pton(AF_INET6, s->src, a);
		memcpy(&ip6->saddr, a, 16);
		inet_pton(AF_INET6, "2001:db8:ffff::1", &ip6->daddr);
		p += sizeof(*ip6);
		start = p;
		ip6->nexthdr = s->next_ext ? s->ext[0] : IPPROTO_UDP;
		for (int i = 0; i < s->next_ext; i++) {
			uint8_t nh = i + 1 < s->next_ext ? s->ext[i + 1] : IPPROTO_UDP;

			p[0] = nh;
			if (s->ext[i] == IPPROTO_FRAGMENT) {
				*(uint16_t *)(p + 2) = htons(s->frag_off << 3);
				p += 8;
			} else if (s->ext[i] == IPPROTO_AH) {
				p[1] = 4;		/* (4 + 2) * 4 = 24 bytes */
				p += 24;
			} else {
				p[1] = 1;		/* (1 + 1) * 8 = 16 bytes */
				p += 16;
			}
		}
		ip6->payload_len = htons(p - start + 8 + s->payload);
	}
	{
		struct udphdr *u = (void *)p;

		u->source = htons(40000);
		u->dest = htons(53);
		u->len = htons(8 + s->payload);
		p += 8 + s->payload;
	}
	return p - buf;
}

#endif

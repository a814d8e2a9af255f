// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The parser: a table of crafted frames (VLAN, IPv6 extension headers,
 * fragments, malformed headers), each with the rule it must meet.
 */
#include "harness.h"

/*
 * Every parser case is a row, in the style of the kernel's flow_dissector
 * selftest: a frame (a struct frame of pkt.h, or bytes), the verdict it must
 * get and what it must count. One instance runs them all under one rule set
 * in which each source address has a rule of its own, so that a row's
 * counters tell how its frame was parsed: malformed, non-IP, or an IP packet
 * whose source was read right (the rule of that exact address counts it).
 * The expectations follow README, "Packets it does not meter".
 *
 * The kernel refuses test frames shorter than 14 bytes (an Ethernet
 * header): the shortest frames here are 14 bytes long.
 *
 * Not here, README and the parser disagreeing: an extension header after
 * the eighth running past the end, and one running past the IPv6 payload
 * length into trailing padding (README: malformed; the parser: metered).
 */

#define SRC4		"198.18.0.1"	/* limited by rule R4 */
#define SRC4_DENY	"198.18.0.2"	/* denied by rule D4 */
#define SRC4_OTHER	"198.20.0.1"	/* denied by rule ANY4, 0.0.0.0/0 */
#define SRC6		"2001:db8::1"	/* limited by rule R6 */
#define SRC6_DENY	"2001:db8::2"	/* denied by rule D6 */
#define SRC6_NONE	"2001:db9::1"	/* no rule: unmatched */

enum { R4 = 4, D4 = 5, R6 = 6, D6 = 7, ANY4 = 9 };

static const __u32 table_ids[] = { R4, D4, R6, D6, ANY4 };
#define NIDS	(sizeof(table_ids) / sizeof(table_ids[0]))

static const char *const table_rules[] = {
	"rule add 198.18.0.1/32 rate 1000/s burst 10000 id 4",
	"rule add 198.18.0.2/32 action deny id 5",
	"rule add 2001:db8::1/128 rate 1000/s burst 10000 id 6",
	"rule add 2001:db8::2/128 action deny id 7",
	"rule add 0.0.0.0/0 action deny id 9",	/* non-IP passes even so */
	NULL,
};

/* What one frame counts: the global counters, and the passed and dropped
 * packets of the rule that counts it (0: none; every other rule counts 0). */
struct counts {
	__u32 rule;
	long passed, dropped;
	long malformed, non_ip, unmatched;
};

struct row {
	const char *name;
	struct frame f;
	int verdict;
	struct counts want;
	bool cuts;	/* and every shorter length from 14 bytes on: malformed */
};

#define Q	ETH_P_8021Q
#define AD	ETH_P_8021AD
#define MALFORMED	{ .malformed = 1 }
#define NON_IP		{ .non_ip = 1 }

/* a chain of n extension headers: hop-by-hop, then destination options,
 * 16 bytes each */
#define DST		{ IPPROTO_DSTOPTS, .hdrlen = 1 }
#define HBH		{ IPPROTO_HOPOPTS, .hdrlen = 1 }
#define CHAIN8		HBH, DST, DST, DST, DST, DST, DST, DST

static const struct row rows[] = {
	/* IPv4 */
	{ "IPv4, UDP", { .src = SRC4, .payload = 4 },
	  PASS, { R4, .passed = 1 }, .cuts = true },
	{ "IPv4 from a denied source", { .src = SRC4_DENY, .payload = 18 },
	  DROP, { D4, .dropped = 1 } },
	{ "IPv4 that only 0.0.0.0/0 matches", { .src = SRC4_OTHER, .payload = 18 },
	  DROP, { ANY4, .dropped = 1 } },
	{ "IPv4, 3 words of options", { .src = SRC4, .opt_words = 3, .payload = 4 },
	  PASS, { R4, .passed = 1 }, .cuts = true },
	{ "IPv4, IHL 15: 40 bytes of options", { .src = SRC4, .opt_words = 10, .payload = 4 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4, IHL 4 < 5", { .src = SRC4, .ihl = 4, .payload = 8 },
	  DROP, MALFORMED },
	/* a header longer than the frame has a total length either shorter
	 * than the header or longer than the frame too: here shorter (36) */
	{ "IPv4, IHL 15: a header longer than the frame", { .src = SRC4, .ihl = 15, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4 ethertype, version 6", { .src = SRC4, .version = 6, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4, total length 12 < 20", { .src = SRC4, IP_LEN(12), .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4, total length 20 < IHL 6 (24)", { .src = SRC4, .opt_words = 1, IP_LEN(20), .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4, total length = the header: the rest is padding", { .src = SRC4, IP_LEN(20), .payload = 8 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4, total length 1 byte longer than the frame", { .src = SRC4, .ip_len_adj = 1, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4, total length 1 byte short: 1 byte of padding", { .src = SRC4, .ip_len_adj = -1, .payload = 8 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4, 20 bytes of trailing padding", { .src = SRC4, .payload = 8, .pad = 20 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 ethertype, nothing after",
	  { BYTES(0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00) },
	  DROP, MALFORMED },
	{ "IPv4 first fragment (MF, offset 0)", { .src = SRC4, .more_frags = 1, .payload = 40 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 non-first fragment", { .src = SRC4, .frag_off = 185, .payload = 40 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 non-first fragment from a denied source", { .src = SRC4_DENY, .frag_off = 185, .payload = 40 },
	  DROP, { D4, .dropped = 1 } },

	/* RFC 1858, RFC 3128: a first fragment too short for the whole fixed
	 * TCP or UDP header, and a TCP fragment at offset 1, are malformed;
	 * what a length field leaves out is padding, not header */
	{ "IPv4 TCP first fragment, 8 bytes of TCP", { .src = SRC4, .l4 = IPPROTO_TCP, .more_frags = 1, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4 TCP first fragment from a denied source, 8 bytes of TCP",
	  { .src = SRC4_DENY, .l4 = IPPROTO_TCP, .more_frags = 1, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv4 TCP first fragment, 19 bytes of TCP", { .src = SRC4, .l4 = IPPROTO_TCP, .more_frags = 1, .payload = 19 },
	  DROP, MALFORMED },
	{ "IPv4 TCP first fragment, 20 bytes of TCP", { .src = SRC4, .l4 = IPPROTO_TCP, .more_frags = 1, .payload = 20 },
	  PASS, { R4, .passed = 1 }, .cuts = true },
	{ "IPv4 TCP first fragment, 8 bytes of TCP and 20 of padding",
	  { .src = SRC4, .l4 = IPPROTO_TCP, .more_frags = 1, .payload = 8, .pad = 20 },
	  DROP, MALFORMED },
	{ "IPv4 TCP first fragment with DF, 8 bytes of TCP",
	  { .src = SRC4, .l4 = IPPROTO_TCP, .more_frags = 1, .payload = 8, .df = 1 },
	  DROP, MALFORMED },
	{ "IPv4 TCP, not a fragment, 8 bytes of TCP: no ports", { .src = SRC4, .l4 = IPPROTO_TCP, .payload = 8 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 UDP first fragment, 7 bytes of UDP (and 1 of padding)",
	  { .src = SRC4, .more_frags = 1, IP_LEN(20 + 7) },
	  DROP, MALFORMED },
	{ "IPv4 UDP first fragment, 8 bytes of UDP", { .src = SRC4, .more_frags = 1, IP_LEN(20 + 8) },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 ICMP first fragment, 4 bytes of ICMP", { .src = SRC4, .l4 = IPPROTO_ICMP, .more_frags = 1, .payload = 4 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 TCP fragment at offset 1", { .src = SRC4, .l4 = IPPROTO_TCP, .frag_off = 1, .more_frags = 1, .payload = 40 },
	  DROP, MALFORMED },
	{ "IPv4 TCP last fragment at offset 1", { .src = SRC4, .l4 = IPPROTO_TCP, .frag_off = 1, .payload = 12 },
	  DROP, MALFORMED },
	{ "IPv4 TCP fragment at offset 2", { .src = SRC4, .l4 = IPPROTO_TCP, .frag_off = 2, .payload = 12 },
	  PASS, { R4, .passed = 1 } },
	{ "IPv4 UDP fragment at offset 1", { .src = SRC4, .frag_off = 1, .payload = 12 },
	  PASS, { R4, .passed = 1 } },

	/* VLAN tags: two are skipped, more are malformed */
	{ "802.1Q, IPv4", { .src = SRC4, .tags = { Q }, .payload = 4 },
	  PASS, { R4, .passed = 1 }, .cuts = true },
	{ "802.1ad, IPv4", { .src = SRC4, .tags = { AD }, .payload = 4 },
	  PASS, { R4, .passed = 1 } },
	{ "802.1ad outer, 802.1Q inner, IPv4", { .src = SRC4, .tags = { AD, Q }, .payload = 4 },
	  PASS, { R4, .passed = 1 }, .cuts = true },
	{ "802.1Q, 802.1Q, IPv4", { .src = SRC4, .tags = { Q, Q }, .payload = 4 },
	  PASS, { R4, .passed = 1 } },
	{ "802.1Q outer, 802.1ad inner, IPv4", { .src = SRC4, .tags = { Q, AD }, .payload = 4 },
	  PASS, { R4, .passed = 1 } },
	{ "802.1Q, IPv4 from a denied source", { .src = SRC4_DENY, .tags = { Q }, .payload = 4 },
	  DROP, { D4, .dropped = 1 } },
	{ "802.1ad, 802.1Q, IPv6", { .src = SRC6, .tags = { AD, Q }, .payload = 4 },
	  PASS, { R6, .passed = 1 } },
	{ "3 tags: 802.1Q x 3, IPv4", { .src = SRC4, .tags = { Q, Q, Q }, .payload = 10 },
	  DROP, MALFORMED },
	{ "3 tags: 802.1ad, 802.1Q, 802.1Q, IPv4", { .src = SRC4, .tags = { AD, Q, Q }, .payload = 10 },
	  DROP, MALFORMED },
	{ "3 tags: 802.1ad, 802.1ad, 802.1Q, IPv4", { .src = SRC4, .tags = { AD, AD, Q }, .payload = 10 },
	  DROP, MALFORMED },
	{ "4 tags: 802.1ad x 3, 802.1Q, IPv4", { .src = SRC4, .tags = { AD, AD, AD, Q }, .payload = 10 },
	  DROP, MALFORMED },
	{ "3 tags: 802.1Q, 802.1ad, 802.1Q, ARP: not even ARP", { .tags = { Q, AD, Q } },
	  DROP, MALFORMED },
	{ "802.1Q TPID, the tag missing",
	  { BYTES(0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x81, 0x00) },
	  DROP, MALFORMED },
	{ "a 0x9100 tag (not a VLAN TPID here), IPv4", { .src = SRC4, .tags = { 0x9100 }, .payload = 4 },
	  PASS, NON_IP },

	/* non-IP: passes even with 0.0.0.0/0 denied */
	{ "ARP", { .ethertype = ETH_P_ARP },
	  PASS, NON_IP },
	{ "LLDP",
	  { BYTES(0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e,	/* nearest bridge */
		  0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0xcc,
		  0x02, 0x07, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,	/* chassis: MAC */
		  0x04, 0x03, 0x07, 'p', '1',			/* port: local "p1" */
		  0x06, 0x02, 0x00, 0x78,			/* TTL 120 */
		  0x00, 0x00) },				/* end */
	  PASS, NON_IP },
	{ "802.1Q, ARP", { .tags = { Q }, .ethertype = ETH_P_ARP },
	  PASS, NON_IP },
	{ "802.1ad, 802.1Q, ARP", { .tags = { AD, Q }, .ethertype = ETH_P_ARP },
	  PASS, NON_IP },
	{ "802.1ad, 802.1Q, ARP, cut inside the inner tag", { .tags = { AD, Q }, .ethertype = ETH_P_ARP, .cut = 20 },
	  DROP, MALFORMED },
	{ "802.1ad, 802.1Q, ARP, cut after the tags", { .tags = { AD, Q }, .ethertype = ETH_P_ARP, .cut = 22 },
	  PASS, NON_IP },

	/* IPv6 */
	{ "IPv6, UDP", { .src = SRC6, .payload = 4 },
	  PASS, { R6, .passed = 1 }, .cuts = true },
	{ "IPv6 from a denied source", { .src = SRC6_DENY, .payload = 18 },
	  DROP, { D6, .dropped = 1 } },
	{ "IPv6 that no rule matches", { .src = SRC6_NONE, .payload = 18 },
	  PASS, { .unmatched = 1 } },
	{ "IPv6 ethertype, version 4", { .src = SRC6, .version = 4, EXT(DST), .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv6, payload length 1 byte longer than the frame", { .src = SRC6, .ip_len_adj = 1, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv6, 20 bytes of trailing padding", { .src = SRC6, .payload = 8, .pad = 20 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6, payload length 0 (a jumbogram's)", { .src = SRC6, IP_LEN(0), .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6, hop-by-hop, destination options", { .src = SRC6, EXT(HBH, DST), .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6, routing, AH", { .src = SRC6, EXT({ IPPROTO_ROUTING, .hdrlen = 1 }, { IPPROTO_AH, .hdrlen = 4 }),
				 .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6, hop-by-hop, non-first fragment",
	  { .src = SRC6, EXT(HBH, { IPPROTO_FRAGMENT, .frag_off = 100 }), .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6 first fragment (M, offset 0)", { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }), .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6 first fragment, then destination options past the end",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }, { IPPROTO_DSTOPTS, .hdrlen = 200, .len = 16 }),
	    .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv6 non-first fragment: its data is not walked as headers",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .frag_off = 100 }, { IPPROTO_DSTOPTS, .hdrlen = 200, .len = 16 }),
	    .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6 non-first fragment from a denied source",
	  { .src = SRC6_DENY, EXT({ IPPROTO_FRAGMENT, .frag_off = 100 }), .payload = 8 },
	  DROP, { D6, .dropped = 1 } },
	{ "IPv6 TCP first fragment, 8 bytes of TCP",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }), .l4 = IPPROTO_TCP, .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv6 TCP first fragment, 8 bytes of TCP and 20 of padding",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }), .l4 = IPPROTO_TCP, .payload = 8, .pad = 20 },
	  DROP, MALFORMED },
	{ "IPv6 TCP first fragment, hop-by-hop, fragment, destination options, 19 bytes of TCP",
	  { .src = SRC6, EXT(HBH, { IPPROTO_FRAGMENT, .more = 1 }, DST), .l4 = IPPROTO_TCP, .payload = 19 },
	  DROP, MALFORMED },
	{ "IPv6 TCP first fragment, 20 bytes of TCP",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }), .l4 = IPPROTO_TCP, .payload = 20 },
	  PASS, { R6, .passed = 1 }, .cuts = true },
	{ "IPv6 TCP atomic fragment (offset 0, no M), 8 bytes of TCP: no ports",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT }), .l4 = IPPROTO_TCP, .payload = 8 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6 UDP first fragment, 4 bytes of UDP (and 4 of padding)",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }), IP_LEN(8 + 4) },
	  DROP, MALFORMED },
	{ "IPv6 UDP first fragment, 8 bytes of UDP",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .more = 1 }) },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6 TCP fragment at offset 1",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .frag_off = 1 }), .l4 = IPPROTO_TCP, .payload = 12 },
	  DROP, MALFORMED },
	{ "IPv6 TCP fragment at offset 2",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .frag_off = 2 }), .l4 = IPPROTO_TCP, .payload = 12 },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6 UDP fragment at offset 1",
	  { .src = SRC6, EXT({ IPPROTO_FRAGMENT, .frag_off = 1 }), .l4 = IPPROTO_UDP, .payload = 12 },
	  PASS, { R6, .passed = 1 } },
	{ "802.1ad, 802.1Q, IPv6, hop-by-hop, routing, fragment, AH",
	  { .src = SRC6, .tags = { AD, Q },
	    EXT(HBH, { IPPROTO_ROUTING, .hdrlen = 1 }, { IPPROTO_FRAGMENT }, { IPPROTO_AH, .hdrlen = 4 }),
	    .payload = 4 },
	  PASS, { R6, .passed = 1 }, .cuts = true },
	{ "IPv6, 8 extension headers: the walk's limit", { .src = SRC6, EXT(CHAIN8) },
	  PASS, { R6, .passed = 1 }, .cuts = true },
	{ "IPv6, 8 extension headers, the 8th past the end",
	  { .src = SRC6, EXT(HBH, DST, DST, DST, DST, DST, DST, { IPPROTO_DSTOPTS, .hdrlen = 2, .len = 16 }),
	    .l4 = IPPROTO_NONE },
	  DROP, MALFORMED },
	/* the protocol unknown: no endpoint rule could meter it */
	{ "IPv6, 9 extension headers: malformed", { .src = SRC6, EXT(CHAIN8, DST), .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv6, 10 extension headers", { .src = SRC6, EXT(CHAIN8, DST, DST), .payload = 8 },
	  DROP, MALFORMED },
	{ "IPv6, AH of (4 + 2) * 4 = 24 bytes, to the end",
	  { .src = SRC6, EXT({ IPPROTO_AH, .hdrlen = 4 }), .l4 = IPPROTO_NONE },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6, AH of (5 + 2) * 4 = 28 bytes, 24 there",
	  { .src = SRC6, EXT({ IPPROTO_AH, .hdrlen = 5, .len = 24 }), .l4 = IPPROTO_NONE },
	  DROP, MALFORMED },
	{ "IPv6, destination options of (1 + 1) * 8 = 16 bytes, to the end",
	  { .src = SRC6, EXT(DST), .l4 = IPPROTO_NONE },
	  PASS, { R6, .passed = 1 } },
	{ "IPv6, destination options of (2 + 1) * 8 = 24 bytes, 16 there",
	  { .src = SRC6, EXT({ IPPROTO_DSTOPTS, .hdrlen = 2, .len = 16 }), .l4 = IPPROTO_NONE },
	  DROP, MALFORMED },
	{ "IPv6, destination options of (200 + 1) * 8 bytes, 16 there",
	  { .src = SRC6, EXT({ IPPROTO_DSTOPTS, .hdrlen = 200, .len = 16 }), .payload = 8 },
	  DROP, MALFORMED },
};

/* The counters a row may move: global, and each rule's of table_ids. */
struct tally {
	__u64 malformed, non_ip, unmatched, passed, dropped;
	__u64 rpassed[NIDS], rdropped[NIDS];
};

static void tally(struct tally *t, const __u32 *slots)
{
	struct xrl_global_stats g = gstats();

	t->malformed = g.malformed_packets;
	t->non_ip = g.non_ip_packets;
	t->unmatched = g.unmatched_packets;
	t->passed = g.passed_packets[XRL_MODE_ENFORCE];
	t->dropped = g.dropped_packets[XRL_MODE_ENFORCE];
	for (size_t i = 0; i < NIDS; i++) {
		struct xrl_rule_stats s = {};

		xrl_rule_stats_get(X, slots[i], &s);
		t->rpassed[i] = s.passed_packets;
		t->rdropped[i] = s.dropped_packets;
	}
}

/* frames the skb test run refused (run_at_tc) */
static size_t refused;

/* Run one frame; false, with what it got, if that is not the row's. */
static bool table_run(const char *name, const uint8_t *buf, size_t len, const __u32 *slots,
		      int verdict, const struct counts *w)
{
	struct tally a, b;
	char got[256];
	bool ok;
	int v, n;

	tally(&a, slots);
	v = run_raw(buf, len);
	tally(&b, slots);
	/* at tc, a frame the kernel builds no skb of is not run: only a
	 * malformed one may be refused so (counted apart, never passed) */
	if (v == RUN_REFUSED && verdict == DROP && w->malformed) {
		refused++;
		return true;
	}
	ok = v == verdict &&
	     b.malformed - a.malformed == (__u64)w->malformed &&
	     b.non_ip - a.non_ip == (__u64)w->non_ip &&
	     b.unmatched - a.unmatched == (__u64)w->unmatched &&
	     b.passed - a.passed == (__u64)(verdict == PASS) &&
	     b.dropped - a.dropped == (__u64)(verdict == DROP);
	n = snprintf(got, sizeof(got), "%s, malformed %llu non_ip %llu unmatched %llu",
		     v == PASS ? "PASS" : v == DROP ? "DROP" : "?",
		     (unsigned long long)(b.malformed - a.malformed),
		     (unsigned long long)(b.non_ip - a.non_ip),
		     (unsigned long long)(b.unmatched - a.unmatched));
	for (size_t i = 0; i < NIDS; i++) {
		__u64 p = b.rpassed[i] - a.rpassed[i], d = b.rdropped[i] - a.rdropped[i];
		bool mine = table_ids[i] == w->rule;

		ok &= p == (__u64)(mine ? w->passed : 0) && d == (__u64)(mine ? w->dropped : 0);
		if ((p || d) && n < (int)sizeof(got))
			n += snprintf(got + n, sizeof(got) - n, ", rule %u passed %llu dropped %llu",
				      table_ids[i], (unsigned long long)p, (unsigned long long)d);
	}
	if (!ok) {
		tl_cur_failed++;
		fprintf(stderr, "    %s (%zu bytes): got %s; want %s, malformed %ld non_ip %ld unmatched %ld"
			", rule %u passed %ld dropped %ld\n", name, len, got,
			verdict == PASS ? "PASS" : "DROP", w->malformed, w->non_ip, w->unmatched,
			w->rule, w->passed, w->dropped);
	}
	return ok;
}

/* Every row and every cut, at the hook of the test's choice (run_at_tc). */
static void parser_table(void)
{
	static const struct counts cut = MALFORMED;
	struct xrl_rule_entry *v;
	__u32 slots[NIDS] = {};
	size_t n = 0, nrows = sizeof(rows) / sizeof(rows[0]), runs = 0, failed = 0;

	setup();
	CHECK(!set_rules(table_rules), "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &v, &n), "xrl_rules_get: %s", xrl_errmsg());
	for (size_t i = 0; i < NIDS; i++) {
		slots[i] = ~0u;
		for (size_t j = 0; j < n; j++)
			if (v[j].r.id == table_ids[i])
				slots[i] = v[j].r.slot;
		CHECK(slots[i] != ~0u, "rule %u loaded", table_ids[i]);
	}
	free(v);

	for (size_t r = 0; r < nrows; r++) {
		const struct row *row = &rows[r];
		uint8_t buf[1024];
		size_t len = frame_build(buf, sizeof(buf), &row->f);

		CHECK(len >= ETH_HLEN, "%s: frame of %zu bytes", row->name, len);
		if (len < ETH_HLEN)
			continue;
		runs++;
		failed += !table_run(row->name, buf, len, slots, row->verdict, &row->want);
		/* every truncation of every header: malformed, never read out of bounds */
		for (size_t l = ETH_HLEN; row->cuts && l < len; l++) {
			char name[160];

			snprintf(name, sizeof(name), "%s, cut at %zu", row->name, l);
			runs++;
			failed += !table_run(name, buf, l, slots, DROP, &cut);
		}
	}
	fprintf(stderr, "    %zu rows, %zu frames, %zu failed", nrows, runs, failed);
	if (run_at_tc)
		fprintf(stderr, ", %zu refused by the kernel's skb test run (too short for their IP header)",
			refused);
	fprintf(stderr, "\n");
	teardown();
}

TEST(parser_table)
{
	parser_table();
}

/* The same rows through the tc program (an skb test run): the same verdicts
 * and counters, the pipeline being one body for both hooks. */
TEST(parser_table_tc)
{
	run_at_tc = true;
	refused = 0;
	parser_table();
	run_at_tc = false;
	/* most frames run: the refusal is the kernel's for short ones only */
	CHECK(refused < 250, "%zu frames refused", refused);
}

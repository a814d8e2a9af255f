// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program, run through BPF_PROG_TEST_RUN on crafted frames with the
 * test clock, its rules applied through libxrl and the CLI grammar.
 * Each test loads a fresh, unpinned instance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "testlib.h"
#include "pkt.h"
#include "grammar.h"
#include "libxrl.h"
#include "fleet.h"
#include "xrl_meter.h"

#define SEC	1000000000ULL
#define T0	(1000 * SEC)
#define PASS	XDP_PASS
#define DROP	XDP_DROP

static struct xrl *X;

static struct xrl *instance(bool test_clock)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = test_clock, .keys = 4096 };
	struct xrl *x;

	if (xrl_open(&o, &x)) {
		fprintf(stderr, "    cannot load: %s\n", xrl_errmsg());
		exit(2);
	}
	return x;
}

static void setup(void)
{
	X = instance(true);
	xrl_test_clock_set(X, T0);
}

static void teardown(void)
{
	xrl_close(X);
	X = NULL;
}

static int run_raw(const void *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1);
	int err = bpf_prog_test_run_opts(xrl_prog_fd(X), &o);

	if (err) {
		fprintf(stderr, "    test run (len %zu): %s\n", len, strerror(errno));
		return -1;
	}
	return o.retval;
}

static int run(const struct pkt_spec *s)
{
	uint8_t buf[512];

	return run_raw(buf, pkt_build(buf, s));
}

static int run_from(const char *src)
{
	struct pkt_spec s = { .src = src, .payload = 18 };

	return run(&s);
}

/* One packet from each of the n sources NET.first .. NET.first+n-1 (NET
 * ends with a dot); how many passed. */
static int passes_from(const char *net, int first, int n)
{
	char src[32];
	int passed = 0;

	for (int i = first; i < first + n; i++) {
		snprintf(src, sizeof(src), "%s%d", net, i);
		passed += run_from(src) == PASS;
	}
	return passed;
}

/* The rule set, as "rule add" lines of the CLI grammar, committed at once. */
static int set_rules(const char *const *lines)
{
	struct xrl_rule_entry v[32];
	size_t n = 0;

	for (; *lines; lines++) {
		struct xrl_parse_err e;
		struct xrl_cmd c;

		if (xrl_cmd_parse_line(*lines, XRL_IN_CLI, &c, &e) || c.kind != XRL_CMD_RULE_ADD) {
			fprintf(stderr, "    bad rule '%s': %s\n", *lines, e.msg);
			return -1;
		}
		v[n++] = c.rule;
	}
	return xrl_rules_commit(X, v, n) ? -1 : 0;	/* the caller reports xrl_errmsg() */
}

#define RULES(...) set_rules((const char *const[]){ __VA_ARGS__, NULL })

static struct xrl_rule_stats rstats(__u32 id)
{
	struct xrl_rule_stats s = {};
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(X, &v, &n))
		return s;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id == id)
			xrl_rule_stats_get(X, v[i].r.slot, &s);
	free(v);
	return s;
}

static struct xrl_global_stats gstats(void)
{
	struct xrl_global_stats g = {};

	xrl_global_stats_get(X, &g);
	return g;
}

/* ---------------------------------------------------------------- */

static void test_ipv4_limit(void)
{
	struct pkt_spec s = { .src = "198.18.0.1", .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	struct xrl_rule_stats st;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 3 id 7"), "%s", xrl_errmsg());
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), DROP);
	CHECK_EQ(run_raw(buf, len), DROP);
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_raw(buf, len), PASS);
	CHECK_EQ(run_raw(buf, len), DROP);
	st = rstats(7);
	CHECK_EQ(st.passed_packets, 4);
	CHECK_EQ(st.dropped_packets, 3);
	CHECK_EQ(st.passed_bytes, 4 * len);
	CHECK_EQ(st.dropped_bytes, 3 * len);
	CHECK_EQ(st.new_keys, 1);
	CHECK_EQ(gstats().passed_packets[XRL_MODE_ENFORCE], 4);
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 3);
	teardown();
}

static void test_ipv6_slash64(void)
{
	setup();
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/h burst 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:0:1::1"), PASS);
	CHECK_EQ(run_from("2001:db8:0:1::2"), PASS);	/* same /64: same bucket */
	CHECK_EQ(run_from("2001:db8:0:1:ffff::3"), DROP);
	CHECK_EQ(run_from("2001:db8:0:2::1"), PASS);	/* another /64 */
	CHECK_EQ(rstats(1).new_keys, 2);
	teardown();
}

static void test_key_lengths(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 2 per /24",
		     "rule add 2001:db8::/32 rate 1/h burst 1 per /128"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS);
	CHECK_EQ(run_from("198.18.5.200"), PASS);	/* same /24 */
	CHECK_EQ(run_from("198.18.5.7"), DROP);
	CHECK_EQ(run_from("198.18.6.1"), PASS);		/* another /24 */
	CHECK_EQ(run_from("2001:db8::1"), PASS);
	CHECK_EQ(run_from("2001:db8::2"), PASS);	/* /128: its own bucket */
	CHECK_EQ(run_from("2001:db8::1"), DROP);
	teardown();
}

/* ---- the parser: one table of crafted frames ---- */

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

static void test_parser_table(void)
{
	static const struct counts cut = MALFORMED;
	struct xrl_rule_entry *v;
	__u32 slots[NIDS] = {};
	size_t n = 0, nrows = sizeof(rows) / sizeof(rows[0]), runs = 0, failed = 0;

	setup();
	CHECK(!set_rules(table_rules), "%s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &v, &n), "%s", xrl_errmsg());
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
	fprintf(stderr, "    %zu rows, %zu frames, %zu failed\n", nrows, runs, failed);
	teardown();
}

static void test_allow_deny(void)
{
	int pass = 0, drop = 0;

	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 action allow", "rule add 198.18.2.0/24 action deny"),
	      "%s", xrl_errmsg());
	for (int i = 0; i < 50; i++) {
		pass += run_from("198.18.1.1") == PASS;
		drop += run_from("198.18.2.1") == DROP;
	}
	CHECK_EQ(pass, 50);
	CHECK_EQ(drop, 50);
	CHECK_EQ(rstats(1).passed_packets, 50);
	CHECK_EQ(rstats(2).dropped_packets, 50);
	CHECK_EQ(rstats(1).new_keys + rstats(2).new_keys, 0);	/* never metered */
	teardown();
}

static void test_modes(void)
{
	struct pkt_spec arp = {};
	struct xrl_global_stats g;
	int v[4];

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 2", "rule add 198.18.1.0/24 action allow"),
	      "%s", xrl_errmsg());
	/* enforce */
	for (int i = 0; i < 4; i++)
		v[i] = run_from("198.18.0.1");
	CHECK(v[0] == PASS && v[1] == PASS && v[2] == DROP && v[3] == DROP, "enforce");
	/* dry-run: metered and counted, everything passes */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.2"), PASS);
	/* two would-drops, counted apart from the two real drops (issue 9) */
	CHECK_EQ(rstats(1).dropped_packets, 2);
	CHECK_EQ(rstats(1).would_drop_packets, 2);
	CHECK_EQ(rstats(1).new_keys, 2);
	/* fail-open: everything passes, nothing metered */
	xrl_mode_set(X, XRL_MODE_FAIL_OPEN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.3"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* even an exhausted key */
	CHECK_EQ(rstats(1).new_keys, 2);
	/* fail-closed: only allow rules (and non-IP) pass */
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.0.4"), DROP);
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(run_from("198.18.9.1"), DROP);		/* unmatched */
	CHECK_EQ(run(&arp), PASS);
	g = gstats();
	CHECK_EQ(g.passed_packets[XRL_MODE_ENFORCE], 2);
	CHECK_EQ(g.dropped_packets[XRL_MODE_ENFORCE], 2);
	CHECK_EQ(g.passed_packets[XRL_MODE_DRY_RUN], 4);
	CHECK_EQ(g.dropped_packets[XRL_MODE_DRY_RUN], 0);
	CHECK_EQ(g.passed_packets[XRL_MODE_FAIL_OPEN], 5);
	CHECK_EQ(g.passed_packets[XRL_MODE_FAIL_CLOSED], 2);
	CHECK_EQ(g.dropped_packets[XRL_MODE_FAIL_CLOSED], 2);
	/* back to enforce: the bucket state was kept */
	xrl_mode_set(X, XRL_MODE_ENFORCE);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	teardown();
}

static void test_most_specific_prefix(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1",
		     "rule add 198.18.1.0/24 action allow",
		     "rule add 198.18.1.128/25 action deny",
		     "rule add 198.18.1.77/32 rate 1/h burst 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.1.5"), PASS);
	CHECK_EQ(run_from("198.18.1.5"), PASS);		/* allow */
	CHECK_EQ(run_from("198.18.1.200"), DROP);		/* deny /25 */
	CHECK_EQ(run_from("198.18.2.1"), PASS);		/* /15 limit */
	CHECK_EQ(run_from("198.18.2.1"), DROP);
	CHECK_EQ(run_from("198.18.1.77"), PASS);		/* /32 limit, burst 2 */
	CHECK_EQ(run_from("198.18.1.77"), PASS);
	CHECK_EQ(run_from("198.18.1.77"), DROP);
	CHECK_EQ(run_from("198.20.0.1"), PASS);		/* unmatched */
	CHECK_EQ(gstats().unmatched_packets, 1);
	teardown();
}

static void test_rule_change_next_packet(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	/* a changed rule meters with a fresh bucket from the next packet on */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 3"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	/* changed to deny, then removed */
	CHECK(!RULES("rule add 198.18.0.0/15 action deny"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.9"), DROP);
	CHECK(!set_rules((const char *const[]){ NULL }), "empty set");
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(gstats().unmatched_packets, 1);
	teardown();
}

static void test_unchanged_rule_keeps_bucket(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 id 1"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 id 1",
		     "rule add 198.19.0.0/16 rate 1/h burst 1 id 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP);		/* still limited */
	CHECK_EQ(rstats(1).dropped_packets, 2);		/* counters kept too */
	CHECK_EQ(run_from("198.19.0.1"), PASS);
	teardown();
}

/* The daemon's watchdog: a stale heartbeat makes each rule follow its
 * on-failure policy; a new heartbeat restores enforcement. */
static void test_watchdog_policies(void)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl_control *c;
	size_t n = 0;

	setup();
	c = xrl_control(X);
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 1 on-failure open",
		     "rule add 198.18.1.0/24 rate 1/h burst 1 on-failure closed",
		     "rule add 198.18.2.0/24 action allow",
		     "rule add 198.18.3.0/24 action deny"), "%s", xrl_errmsg());
	/* the grammar refuses on-failure with allow (it means nothing there);
	 * the data path must pass an allow rule whatever the field holds */
	CHECK(!xrl_rules_get(X, &v, &n) && n == 4, "rules");
	for (size_t i = 0; i < n; i++)
		if (v[i].r.action == XRL_ACT_ALLOW)
			v[i].r.on_failure = XRL_FAIL_CLOSED;
	CHECK(!xrl_rules_commit(X, v, n), "%s", xrl_errmsg());
	free(v);
	xrl_heartbeat(X, 1000, 5 * SEC);	/* heartbeat at T0, watchdog 5 s */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);	/* enforced */
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(run_from("198.18.1.2"), PASS);
	/* not yet: exactly the watchdog time */
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(run_from("198.18.1.3"), PASS);	/* a new key, metered */
	/* past it: each rule's policy */
	xrl_test_clock_set(X, T0 + 5 * SEC + 1);
	CHECK_EQ(run_from("198.18.0.1"), PASS);	/* open */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.1.4"), DROP);	/* closed, even a new key */
	CHECK_EQ(run_from("198.18.2.1"), PASS);	/* allow always passes */
	CHECK_EQ(run_from("198.18.3.1"), PASS);	/* deny, open by default */
	CHECK_EQ(rstats(1).failure_passed, 2);
	CHECK_EQ(rstats(2).failure_dropped, 1);
	CHECK_EQ(rstats(4).failure_passed, 1);
	/* a new heartbeat: enforcement again, with the buckets it had */
	xrl_heartbeat(X, 1000, 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(run_from("198.18.1.1"), DROP);
	CHECK_EQ(run_from("198.18.3.1"), DROP);
	/* watchdog 0: a heartbeat however old never fires */
	xrl_heartbeat(X, 1000, 0);
	xrl_test_clock_set(X, T0 + 3600 * SEC);
	CHECK_EQ(run_from("198.18.1.4"), PASS);
	CHECK_EQ(run_from("198.18.1.4"), DROP);
	CHECK(c->watchdog_ns == 0, "disarmed");
	/* the operator's fail-closed comes before the watchdog */
	xrl_heartbeat(X, 1000, 1);
	xrl_test_clock_set(X, T0 + 7200 * SEC);
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.0.9"), DROP);
	teardown();
}

/* A failed commit changes nothing. */
static void test_commit_all_or_nothing(void)
{
	struct xrl_rule_entry *v;
	size_t n = 0;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1"), "%s", xrl_errmsg());
	CHECK(RULES("rule add 198.19.0.0/16 rate 1/h burst 1",
		    "rule add 198.19.0.0/16 rate 2/h burst 1") != 0, "duplicate refused");
	CHECK(RULES("rule add 198.19.0.0/16 rate 1/h burst 1 id 5",
		    "rule add 198.20.0.0/16 rate 1/h burst 1 id 5") != 0, "duplicate id refused");
	CHECK(!xrl_rules_get(X, &v, &n), "get");
	CHECK_EQ(n, 1);
	free(v);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.19.0.1"), PASS);
	CHECK_EQ(gstats().unmatched_packets, 1);
	teardown();
}

/* A map of the loaded program, by name: a new fd, or -1. */
static int prog_map_fd(const char *name)
{
	__u32 ids[32], nids = 32;
	struct bpf_prog_info pi = { .nr_map_ids = nids, .map_ids = (__u64)(unsigned long)ids };
	__u32 len = sizeof(pi);

	if (bpf_obj_get_info_by_fd(xrl_prog_fd(X), &pi, &len))
		return -1;
	for (__u32 i = 0; i < pi.nr_map_ids && i < nids; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &mi, &mlen) && !strcmp(mi.name, name))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* No inner rule map at all (a crash between load and the first set, a
 * hand-edited map): the program passes the packet as unmatched, readers see
 * no rules, and the next commit publishes a set again. */
static void test_no_rule_set(void)
{
	struct xrl_rule_entry *v = NULL, m;
	int fd4, fd6;
	__u32 zero = 0;
	__u8 a[16] = { 198, 18, 0, 1 };
	size_t n = 1;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 action deny", "rule add 2001:db8::/32 action deny"),
	      "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	fd4 = prog_map_fd("xrl_rules4");
	fd6 = prog_map_fd("xrl_rules6");
	CHECK(fd4 >= 0 && fd6 >= 0, "outer maps found");
	CHECK(!bpf_map_delete_elem(fd4, &zero), "delete: %s", strerror(errno));
	CHECK(!bpf_map_delete_elem(fd6, &zero), "delete: %s", strerror(errno));
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("2001:db8::1"), PASS);
	CHECK_EQ(gstats().unmatched_packets, 2);
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);		/* unmatched, failing closed */
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	xrl_mode_set(X, XRL_MODE_ENFORCE);
	CHECK(!xrl_rules_get(X, &v, &n), "%s", xrl_errmsg());
	CHECK_EQ(n, 0);
	free(v);
	CHECK_EQ(xrl_rule_match(X, 4, a, &m), -ENOENT);
	CHECK(!RULES("rule add 198.18.0.0/16 action deny"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(run_from("2001:db8::1"), PASS);	/* an empty IPv6 set */
	CHECK_EQ(gstats().unmatched_packets, 4);
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	teardown();
}

/* ---- a rule-set swap under traffic ---- */

/*
 * Set A and set B give 198.18.1.1 and 2001:db8:1::1 a DROP by different
 * rules, and 198.18.2.1 a PASS (A) or a DROP (B). Both sets insert their
 * /16 (/32) allow first: a packet that saw a half-built or empty set would
 * PASS 198.18.1.1 (or 2001:db8:1::1), or count as unmatched.
 */
static const char *const swap_a[] = {
	"rule add 198.18.0.0/16 action allow id 1",
	"rule add 198.18.1.0/24 action deny id 2",
	"rule add 2001:db8::/32 action allow id 3",
	"rule add 2001:db8:1::/48 action deny id 4",
	NULL,
};
static const char *const swap_b[] = {
	"rule add 198.18.0.0/16 action allow id 1",
	"rule add 2001:db8::/32 action allow id 3",
	"rule add 198.18.1.0/25 action deny id 5",
	"rule add 198.18.1.128/25 action deny id 6",
	"rule add 198.18.2.0/24 action deny id 7",
	"rule add 2001:db8:1::/49 action deny id 8",
	"rule add 2001:db8:1:8000::/49 action deny id 9",
	NULL,
};

struct swap_probe {
	int cpu, prog_fd;
	volatile int *stop;
	unsigned long runs, bad, err, a_seen, b_seen;
};

static int run_fd(int fd, const uint8_t *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1);

	return bpf_prog_test_run_opts(fd, &o) ? -1 : (int)o.retval;
}

static void *swap_probe(void *arg)
{
	struct swap_probe *p = arg;
	struct pkt_spec s1 = { .src = "198.18.1.1", .payload = 18 };
	struct pkt_spec s2 = { .src = "198.18.2.1", .payload = 18 };
	struct pkt_spec s6 = { .src = "2001:db8:1::1", .payload = 18 };
	uint8_t b1[512], b2[512], b6[512];
	size_t l1 = pkt_build(b1, &s1), l2 = pkt_build(b2, &s2), l6 = pkt_build(b6, &s6);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!*p->stop) {
		int v1 = run_fd(p->prog_fd, b1, l1);
		int v2 = run_fd(p->prog_fd, b2, l2);
		int v6 = run_fd(p->prog_fd, b6, l6);

		p->runs += 3;
		if (v1 < 0 || v2 < 0 || v6 < 0) {
			p->err++;
			continue;
		}
		p->bad += (v1 != DROP) + (v6 != DROP);
		p->a_seen += v2 == PASS;
		p->b_seen += v2 == DROP;
	}
	return NULL;
}

/* Packets see the old rule set or the new one, never a mix or an empty
 * one, while one thread commits A and B in turn as fast as it can. */
static void test_rule_swap_atomic(void)
{
	volatile int stop = 0;
	struct swap_probe p[3];
	pthread_t t[3];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), np = 3, commits = 0, cerr = 0;
	unsigned long bad = 0, runs = 0, a_seen = 0, b_seen = 0, err = 0;
	struct timespec t0, now;

	setup();
	CHECK(!set_rules(swap_a), "%s", xrl_errmsg());
	for (int i = 0; i < np; i++) {
		p[i] = (struct swap_probe){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X), .stop = &stop };
		pthread_create(&t[i], NULL, swap_probe, &p[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (set_rules(commits & 1 ? swap_a : swap_b))
			cerr++;
		commits++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000000000LL + now.tv_nsec - t0.tv_nsec < 3 * 1000000000LL);
	stop = 1;
	for (int i = 0; i < np; i++) {
		pthread_join(t[i], NULL);
		bad += p[i].bad, runs += p[i].runs, err += p[i].err;
		a_seen += p[i].a_seen, b_seen += p[i].b_seen;
	}
	fprintf(stderr, "    %d commits, %lu packets, %lu saw A, %lu saw B, %lu mixed\n",
		commits, runs, a_seen, b_seen, bad);
	CHECK(cerr == 0, "%d commits failed: %s", cerr, xrl_errmsg());
	CHECK(err == 0, "%lu test runs failed", err);
	CHECK(bad == 0, "%lu packets saw a half-built or empty rule set", bad);
	CHECK_EQ(gstats().unmatched_packets, 0);
	CHECK(a_seen && b_seen, "both sets were seen (A %lu, B %lu)", a_seen, b_seen);
	teardown();
}

/* One rule in the CLI grammar, parsed into an entry. */
static struct xrl_rule_entry entry(const char *line)
{
	struct xrl_rule_entry r = {};
	struct xrl_parse_err e;
	struct xrl_cmd c;

	if (xrl_cmd_parse_line(line, XRL_IN_CLI, &c, &e) || c.kind != XRL_CMD_RULE_ADD) {
		fprintf(stderr, "    bad rule '%s': %s\n", line, e.msg);
		return r;
	}
	return c.rule;
}

/* The bucket of rule `id` for a source. */
static struct xrl_bucket bucket_of(__u32 id, const char *src)
{
	struct xrl_bucket b = {};
	struct xrl_rule_entry *v;
	struct xrl_key k;
	__u8 a[16];
	int family;
	size_t n;

	if (xrl_addr_parse(src, &family, a) || xrl_rules_get(X, &v, &n))
		return b;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id == id) {
			xrl_key_of(&k, &v[i].r, family, a);
			xrl_bucket_get(X, &k, &b);
		}
	}
	free(v);
	return b;
}

/* The active rule 1 and its bucket, as test_failed_commit_keeps_state
 * left them: passed 2, dropped 1, burst 2, the bucket exhausted. */
static void check_rule1_unchanged(const char *what, const struct xrl_bucket *b0)
{
	struct xrl_rule_stats st = rstats(1);
	struct xrl_bucket b = bucket_of(1, "198.18.0.1");
	struct xrl_rule_entry *v;
	size_t n = 0;

	CHECK(st.passed_packets == 2 && st.dropped_packets == 1 && st.new_keys == 1,
	      "%s: counters of rule 1 are passed %llu dropped %llu new keys %llu", what,
	      (unsigned long long)st.passed_packets, (unsigned long long)st.dropped_packets,
	      (unsigned long long)st.new_keys);
	CHECK(b.tat == b0->tat && b.dropped == b0->dropped, "%s: bucket changed", what);
	CHECK(!xrl_rules_get(X, &v, &n), "%s", xrl_errmsg());
	CHECK(n == 1 && v[0].r.id == 1 && v[0].r.burst == 2, "%s: rule set changed (%zu rules)", what, n);
	free(v);
}

/* XRL_MAX_RULES + 1 distinct rules: new ones from index 0, half IPv4 /32s in
 * 198.19.0.0/16, half IPv6 /128s; `action` for all. */
static struct xrl_rule_entry *many_rules(size_t n, int action)
{
	struct xrl_rule_entry *v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		v[i].r.action = action;
		if (i % 2 == 0) {
			v[i].family = 4, v[i].prefix_len = 32;
			v[i].addr[0] = 198, v[i].addr[1] = 19;
			v[i].addr[2] = i >> 9, v[i].addr[3] = i >> 1;
		} else {
			v[i].family = 6, v[i].prefix_len = 128;
			v[i].addr[0] = 0x20, v[i].addr[1] = 0x01, v[i].addr[2] = 0x0d, v[i].addr[3] = 0xb8;
			v[i].addr[14] = i >> 8, v[i].addr[15] = i;
		}
	}
	return v;
}

/* A refused commit, early or late, leaves the active rules, their counters
 * and their buckets as they were. */
static void test_failed_commit_keeps_state(void)
{
	struct xrl_rule_entry v[3], *big;
	struct xrl_bucket b0;
	struct rlimit rl, low;
	int fd, err;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 2 id 1"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	b0 = bucket_of(1, "198.18.0.1");
	CHECK(b0.tat != 0, "rule 1 has a bucket");
	check_rule1_unchanged("before", &b0);

	/* an invalid rule: refused by validation */
	v[0] = entry("rule add 198.18.0.0/16 rate 1/h burst 3 id 1");
	v[1] = entry("rule add 198.20.0.0/16 rate 1/h burst 1");
	v[1].r.burst = 0;
	CHECK(xrl_rules_commit(X, v, 2) == -EINVAL, "invalid rule refused");
	check_rule1_unchanged("invalid rule", &b0);

	/* one rule too many, none of them rule 1's: every slot but rule 1's
	 * is taken before the limit shows, unless the limit is checked first */
	big = many_rules(XRL_MAX_RULES + 1, XRL_ACT_DENY);
	CHECK(big && xrl_rules_commit(X, big, XRL_MAX_RULES + 1) == -ENOSPC,
	      "too many rules refused: %s", xrl_errmsg());
	free(big);
	check_rule1_unchanged("too many rules", &b0);

	/* a late failure: slots chosen, then no file descriptor for the fresh
	 * rule sets (the lowest free fd is the only one left) */
	v[0] = entry("rule add 198.18.0.0/16 rate 1/h burst 3 id 1");
	v[1] = entry("rule add 198.20.0.0/16 rate 1/h burst 1 id 2");
	v[2] = entry("rule add 2001:db8::/32 rate 1/h burst 1 id 3");
	fd = dup(0);
	close(fd);
	getrlimit(RLIMIT_NOFILE, &rl);
	low = rl;
	low.rlim_cur = fd + 1;
	CHECK(!setrlimit(RLIMIT_NOFILE, &low), "setrlimit: %s", strerror(errno));
	err = xrl_rules_commit(X, v, 3);
	setrlimit(RLIMIT_NOFILE, &rl);
	CHECK(err == -EMFILE, "late failure: %d (%s)", err, err ? xrl_errmsg() : "committed");
	check_rule1_unchanged("late failure", &b0);

	/* and the rule still meters with the bucket it had */
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(rstats(1).dropped_packets, 2);
	CHECK_EQ(gstats().unmatched_packets, 0);
	teardown();
}

/* XRL_MAX_RULES rules in all, both families together: one more is refused
 * by validation with a message; the limit itself commits, and so does a
 * whole new set of that size (fresh slots for every rule). */
static void test_rule_limit(void)
{
	struct xrl_rule_entry *v = many_rules(XRL_MAX_RULES + 1, XRL_ACT_DENY), *got;
	struct xrl_rule_entry *w = many_rules(XRL_MAX_RULES, XRL_ACT_ALLOW);
	unsigned char *slots = calloc(2 * XRL_MAX_RULES, 1);
	size_t bad = 0, n = 0, clash = 0, out = 0;

	setup();
	CHECK(v && w && slots, "memory");
	CHECK(xrl_rules_validate(v, XRL_MAX_RULES + 1, &bad) == -ENOSPC, "one too many refused");
	CHECK(strstr(xrl_errmsg(), "too many rules") && strstr(xrl_errmsg(), "16384"),
	      "message: %s", xrl_errmsg());
	CHECK_EQ(bad, XRL_MAX_RULES);
	CHECK(!xrl_rules_validate(v, XRL_MAX_RULES, &bad), "%s", xrl_errmsg());
	CHECK(!xrl_rules_commit(X, v, XRL_MAX_RULES), "%s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &got, &n), "%s", xrl_errmsg());
	CHECK_EQ(n, XRL_MAX_RULES);
	for (size_t i = 0; i < n; i++) {
		if (got[i].r.slot < 2 * XRL_MAX_RULES)
			slots[got[i].r.slot] = 1;
		else
			out++;
	}
	free(got);
	CHECK_EQ(run_from("198.19.0.0"), DROP);		/* v[0] */
	CHECK_EQ(run_from("2001:db8::1"), DROP);	/* v[1] */

	/* every rule changed: none may take a slot the published set holds */
	CHECK(!xrl_rules_commit(X, w, XRL_MAX_RULES), "%s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &got, &n), "%s", xrl_errmsg());
	CHECK_EQ(n, XRL_MAX_RULES);
	for (size_t i = 0; i < n; i++) {
		if (got[i].r.slot >= 2 * XRL_MAX_RULES)
			out++;
		else if (slots[got[i].r.slot])
			clash++;
	}
	free(got);
	CHECK_EQ(out, 0);
	CHECK_EQ(clash, 0);
	CHECK_EQ(run_from("198.19.0.0"), PASS);
	CHECK_EQ(gstats().unmatched_packets, 0);
	free(v);
	free(w);
	free(slots);
	teardown();
}

/* ---- concurrency: two CPUs, one key, the real clock ---- */

struct hammer {
	int cpu, prog_fd, err;
	pthread_barrier_t *start;
};

static void *hammer(void *arg)
{
	struct hammer *h = arg;
	struct pkt_spec s = { .src = "198.18.0.1", .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 20000);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(h->start);		/* both CPUs on the key at once */
	h->err = bpf_prog_test_run_opts(h->prog_fd, &o) ? errno : 0;
	return NULL;
}

/* Five rounds, each on a fresh rule (a new generation: a fresh bucket), so
 * that a racy update has five chances to over-admit. */
static void test_concurrency_exact(void)
{
	struct hammer h[2];
	pthread_barrier_t start;
	pthread_t t[2];
	struct xrl_rule_stats st;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	X = instance(false);		/* the real clock */
	for (int round = 1; round <= 5; round++) {
		char rule[128];

		snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1/h burst 1000 id %d", round);
		CHECK(!RULES(rule), "%s", xrl_errmsg());
		pthread_barrier_init(&start, NULL, 2);
		for (int i = 0; i < 2; i++) {
			h[i] = (struct hammer){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X),
						.start = &start };
			pthread_create(&t[i], NULL, hammer, &h[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			CHECK(!h[i].err, "test run: %s", strerror(h[i].err));
		}
		pthread_barrier_destroy(&start);
		st = rstats(round);
		CHECK(st.passed_packets == 1000, "round %d: %llu passed", round,
		      (unsigned long long)st.passed_packets);
		CHECK_EQ(st.passed_packets + st.dropped_packets, 40000);
		CHECK_EQ(st.new_keys, 1);
	}
	if (ncpu < 2)
		fprintf(stderr, "    note: one CPU online; the threads did not run in parallel\n");
	teardown();
}

/* ---- issue 9: algorithms, byte rates, per-rule dry-run ---- */

/* n packets from src at the test clock t; how many passed */
static int burst_at(const char *src, __u64 t, int n)
{
	int ok = 0;

	xrl_test_clock_set(X, t);
	for (int i = 0; i < n; i++)
		ok += run_from(src) == PASS;
	return ok;
}

/* The brief's example through the program: limit 10 per second; 10 of 15
 * pass; halfway into the next window 5 more for the sliding window, 10 for
 * the fixed one; the token bucket (burst 10, 10/s) refills 5 by then. */
static void test_algorithms(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 10/s algo sliding-window id 1",
		     "rule add 198.18.2.0/24 rate 10/s algo fixed-window id 2",
		     "rule add 198.18.3.0/24 rate 10/s burst 10 id 3"), "%s", xrl_errmsg());
	CHECK_EQ(burst_at("198.18.1.1", T0, 15), 10);
	CHECK_EQ(burst_at("198.18.2.1", T0, 15), 10);
	CHECK_EQ(burst_at("198.18.3.1", T0, 15), 10);
	CHECK_EQ(burst_at("198.18.1.1", T0 + SEC + SEC / 2, 15), 5);
	CHECK_EQ(burst_at("198.18.2.1", T0 + SEC + SEC / 2, 15), 10);
	CHECK_EQ(burst_at("198.18.3.1", T0 + SEC + SEC / 2, 15), 10);	/* 1.5 s of refill */
	/* each key its own windows; a lagging clock counts in the newest */
	CHECK_EQ(burst_at("198.18.2.2", T0 + 2 * SEC, 3), 3);
	CHECK_EQ(burst_at("198.18.2.2", T0 + 2 * SEC - 1, 10), 7);
	CHECK_EQ(burst_at("198.18.1.1", T0 + 10 * SEC, 15), 10);	/* idle: empty again */
	CHECK_EQ(rstats(1).passed_packets, 25);
	CHECK_EQ(rstats(1).dropped_packets, 20);
	CHECK_EQ(rstats(2).new_keys, 2);
	teardown();
}

/* The fixed window's 2x at an edge, the sliding window's 1.1x. */
static void test_window_edge(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 100/min algo sliding-window",
		     "rule add 198.18.2.0/24 rate 100/min algo fixed-window"), "%s", xrl_errmsg());
	/* T0 = 1000 s is 16 min 40 s: the minute ends at 1020 s */
	CHECK_EQ(burst_at("198.18.1.1", 1020 * SEC - SEC, 150) +
		 burst_at("198.18.1.1", 1020 * SEC + SEC, 150), 100 + 2);	/* floor(100/60) */
	CHECK_EQ(burst_at("198.18.2.1", 1020 * SEC - SEC, 150) +
		 burst_at("198.18.2.1", 1020 * SEC + SEC, 150), 200);
	teardown();
}

/* Byte rates: the frame length is the cost, for each algorithm. */
static void test_byte_rates(void)
{
	struct pkt_spec big = { .src = "198.18.1.1", .payload = 458 };	/* 500-byte frame */
	uint8_t buf[512];
	size_t len = pkt_build(buf, &big);
	int ok = 0;

	CHECK_EQ(len, 500);
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 80kbit burst 5000 id 1",
		     "rule add 198.18.2.0/24 rate 10kbps algo fixed-window id 2",
		     "rule add 198.18.3.0/24 rate 10kbps algo sliding-window id 3"), "%s", xrl_errmsg());
	/* token bucket: 5000 bytes of burst, 10000 bytes/s */
	for (int i = 0; i < 20; i++)
		ok += run_raw(buf, len) == PASS;
	CHECK_EQ(ok, 10);
	xrl_test_clock_set(X, T0 + SEC / 5);	/* 2000 bytes refilled */
	ok = 0;
	for (int i = 0; i < 10; i++)
		ok += run_raw(buf, len) == PASS;
	CHECK_EQ(ok, 4);
	for (int k = 2; k <= 3; k++) {
		char src[32];

		snprintf(src, sizeof(src), "198.18.%d.1", k);
		big.src = src;
		len = pkt_build(buf, &big);
		xrl_test_clock_set(X, T0);
		ok = 0;
		for (int i = 0; i < 40; i++)
			ok += run_raw(buf, len) == PASS;
		CHECK(ok == 20, "rule %d: %d of 500-byte frames passed", k, ok);
		CHECK_EQ(rstats(k).passed_bytes, 10000);
		CHECK_EQ(rstats(k).dropped_bytes, 10000);
	}
	teardown();
}

/* A dry-run rule meters and counts would-drops apart, passing everything,
 * while its neighbour enforces; the dry-run mode counts the same way. */
static void test_rule_dry_run(void)
{
	struct xrl_rule_stats a, b;

	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 1/h burst 2 id 1 dry-run",
		     "rule add 198.18.2.0/24 rate 1/h burst 2 id 2"), "%s", xrl_errmsg());
	CHECK_EQ(burst_at("198.18.1.1", T0, 5), 5);
	CHECK_EQ(burst_at("198.18.2.1", T0, 5), 2);
	a = rstats(1);
	b = rstats(2);
	CHECK_EQ(a.passed_packets, 5);
	CHECK_EQ(a.dropped_packets, 0);
	CHECK_EQ(a.would_drop_packets, 3);
	CHECK(a.would_drop_bytes > 0 && a.would_drop_bytes == 3 * (a.passed_bytes / 5), "bytes");
	CHECK_EQ(b.dropped_packets, 3);
	CHECK_EQ(b.would_drop_packets, 0);
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 3);
	/* the mode: the enforcing rule's drops become would-drops too */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	CHECK_EQ(burst_at("198.18.2.1", T0, 4), 4);
	CHECK_EQ(rstats(2).dropped_packets, 3);
	CHECK_EQ(rstats(2).would_drop_packets, 4);
	/* fail-closed is the operator's word: a dry-run rule drops too */
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(burst_at("198.18.1.1", T0, 1), 0);
	teardown();
}

/* Two CPUs on one key, with each window algorithm: no over-admission.
 * The sliding window starts half-way into a window after 600 admitted in
 * the previous one: exactly 1000 - 300 more may pass. The clock is the
 * test clock so that the ideal is known; both CPUs race on the words. */
static void race_round(const char *rule, __u32 id, __u64 t, __u64 want)
{
	struct hammer h[2];
	pthread_barrier_t start;
	pthread_t th[2];
	struct xrl_rule_stats st;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	CHECK(!RULES(rule), "%s", xrl_errmsg());
	if (id % 2 == 0) {	/* sliding: fill the previous window first */
		CHECK_EQ(burst_at("198.18.0.1", t - 60 * SEC, 600), 600);
	}
	xrl_test_clock_set(X, t);
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		h[i] = (struct hammer){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X), .start = &start };
		pthread_create(&th[i], NULL, hammer, &h[i]);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		CHECK(!h[i].err, "test run: %s", strerror(h[i].err));
	}
	pthread_barrier_destroy(&start);
	st = rstats(id);
	CHECK(st.passed_packets == want, "%s: %llu passed, want %llu", rule,
	      (unsigned long long)st.passed_packets, (unsigned long long)want);
}

static void test_concurrency_exact_windows(void)
{
	setup();
	for (int round = 1; round <= 6; round++) {
		char rule[128];

		if (round % 2) {
			snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1000/h algo fixed-window id %d", round);
			race_round(rule, round, T0 + round * 3600 * SEC, 1000);
		} else {
			snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1000/min algo sliding-window id %d", round);
			/* 600 in the previous minute + 700 in this one */
			race_round(rule, round, 60 * SEC * (100 + round * 10) + 30 * SEC, 600 + 700);
		}
	}
	teardown();
}

/* ---- issue 9: endpoint rules ---- */

/* n packets from src to (proto, dport), TCP flags; a non-first fragment
 * with frag; how many passed */
static int ep_send(const char *src, uint8_t proto, uint16_t dport, uint8_t flags,
		   bool frag, int n)
{
	bool v6 = strchr(src, ':') != NULL;
	struct frame f = { .src = src, .l4 = proto, .payload = 20 };
	uint8_t buf[512], *l4;
	size_t len;
	int ok = 0;

	if (frag && !v6)
		f.frag_off = 100;
	else if (frag)
		f.ext[0] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .frag_off = 100 }, f.n_ext = 1;
	if (proto == IPPROTO_UDP)
		f.payload = 12;
	len = frame_build(buf, sizeof(buf), &f);
	l4 = buf + 14 + (v6 ? 40 + 8 * f.n_ext : 20);
	l4[2] = dport >> 8;
	l4[3] = dport & 0xff;
	if (proto == IPPROTO_TCP)
		l4[13] = flags;
	for (int i = 0; i < n; i++)
		ok += run_raw(buf, len) == PASS;
	return ok;
}

#define SYN	0x02
#define ACK	0x10

/* The example of the issue: every source 1000 pps overall, 10 SYN/min to
 * TCP/22, 100/s to UDP/53 per /24. A packet passes only when its source
 * rule and its endpoint rule both admit. */
static void test_endpoint_rules(void)
{
	struct xrl_rule_stats ssh, dns;

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 rate 1000/s burst 1000 id 1",
		     "rule add 198.18.5.0/24 rate 1/h burst 5 id 2",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 10/min burst 10 id 10",
		     "rule add 0.0.0.0/0 proto udp dport 53 rate 100/s burst 100 per /24 id 11",
		     "rule add ::/0 proto tcp dport 22 syn rate 10/min burst 3 id 12"), "%s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 15), 10);
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, ACK, false, 15), 15);	/* not a SYN */
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN | ACK, false, 5), 5);
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 80, SYN, false, 15), 15);	/* no endpoint rule */
	CHECK_EQ(ep_send("198.18.0.2", IPPROTO_TCP, 22, SYN, false, 15), 10);	/* its own key */
	/* per /24: two sources share 100 */
	CHECK_EQ(ep_send("198.18.1.1", IPPROTO_UDP, 53, 0, false, 80) +
		 ep_send("198.18.1.2", IPPROTO_UDP, 53, 0, false, 80), 100);
	CHECK_EQ(ep_send("198.18.1.3", IPPROTO_UDP, 54, 0, false, 80), 80);
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_UDP, 53, 0, false, 150), 100);	/* another /24 */
	/* both must admit: the source rule's 5 first; what it drops costs
	 * the endpoint rule nothing */
	ssh = rstats(10);
	CHECK_EQ(ep_send("198.18.5.1", IPPROTO_TCP, 22, SYN, false, 15), 5);
	CHECK_EQ(rstats(10).passed_packets - ssh.passed_packets, 5);
	CHECK_EQ(rstats(10).dropped_packets - ssh.dropped_packets, 0);
	CHECK_EQ(rstats(2).dropped_packets, 10);
	/* IPv6 */
	CHECK_EQ(ep_send("2001:db8::1", IPPROTO_TCP, 22, SYN, false, 5), 3);
	ssh = rstats(10);
	dns = rstats(11);
	CHECK_EQ(ssh.passed_packets, 25);
	CHECK_EQ(ssh.dropped_packets, 10);
	CHECK_EQ(dns.passed_packets, 200);
	CHECK_EQ(dns.dropped_packets, 110);
	CHECK_EQ(dns.new_keys, 2);
	/* the source rule counted every packet it passed */
	CHECK_EQ(rstats(1).passed_packets, 15 + 15 + 5 + 15 + 15 + 160 + 80 + 150);
	teardown();
}

/* The most specific endpoint rule: the source prefix first, then the
 * narrowest ports, then a SYN rule; protocols by number. */
static void test_endpoint_specificity(void)
{
	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 1-1024 rate 1/h burst 2 id 1",
		     "rule add 0.0.0.0/0 proto tcp dport 22 rate 1/h burst 5 id 2",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn rate 1/h burst 7 id 3",
		     "rule add 198.18.7.0/24 proto tcp rate 1/h burst 1 id 4",
		     "rule add 0.0.0.0/0 proto 132 rate 1/h burst 4 id 5",
		     "rule add 0.0.0.0/0 proto icmp action deny id 6"), "%s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 80, ACK, false, 10), 2);
	CHECK_EQ(ep_send("198.18.0.2", IPPROTO_TCP, 22, ACK, false, 10), 5);
	CHECK_EQ(ep_send("198.18.0.3", IPPROTO_TCP, 22, SYN, false, 10), 7);
	CHECK_EQ(ep_send("198.18.0.4", IPPROTO_TCP, 2000, SYN, false, 10), 10);	/* none */
	CHECK_EQ(ep_send("198.18.7.1", IPPROTO_TCP, 22, SYN, false, 10), 1);	/* /24 first */
	CHECK_EQ(ep_send("198.18.0.5", 132, 0, 0, false, 10), 4);
	CHECK_EQ(ep_send("198.18.0.5", IPPROTO_ICMP, 0, 0, false, 3), 0);
	CHECK_EQ(ep_send("198.18.0.5", IPPROTO_UDP, 22, 0, false, 3), 3);
	teardown();
}

/* A non-first fragment has no ports: it meets only the endpoint rules of
 * its protocol that name no port and no SYN. */
static void test_endpoint_fragments(void)
{
	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 action deny id 1",
		     "rule add 0.0.0.0/0 proto tcp dport 22 syn action deny id 2",
		     "rule add 198.18.3.0/24 proto udp rate 1/h burst 3 id 3",
		     "rule add 2001:db8::/32 proto udp rate 1/h burst 2 id 4"), "%s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_UDP, 53, 0, false, 3), 0);
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_UDP, 53, 0, true, 3), 3);	/* no port */
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, true, 3), 3);
	CHECK_EQ(ep_send("198.18.3.1", IPPROTO_UDP, 53, 0, true, 5), 3);	/* a rule for all ports */
	CHECK_EQ(ep_send("2001:db8::1", IPPROTO_UDP, 53, 0, true, 5), 2);
	teardown();
}

/* A TCP SYN to port dport from src, its 20-byte header split as a tiny
 * first fragment (MF, offset 0) of its first `first` bytes and the rest
 * at offset first / 8; pad bytes of padding after the first, where a
 * parser reading past the IP packet would find the flags `padflags`.
 * *a and *b get the verdicts of the two fragments, the first sent first. */
static void syn_fragments(const char *src, uint16_t dport, int first, int pad, uint8_t padflags,
			  int *a, int *b)
{
	bool v6 = strchr(src, ':') != NULL;
	uint8_t tcp[20] = { 0x9c, 0x40, dport >> 8, dport & 0xff, 0, 0, 0, 1,
			    0, 0, 0, 0, 5 << 4, SYN, 0xff, 0xff };
	struct frame f1 = { .src = src, .l4 = IPPROTO_TCP, .payload = first, .pad = pad };
	struct frame f2 = { .src = src, .l4 = IPPROTO_TCP, .payload = 20 - first };
	uint8_t b1[256], b2[256];
	size_t l1, l2, at = 14 + (v6 ? 48 : 20);

	if (v6) {
		f1.ext[0] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .more = 1 }, f1.n_ext = 1;
		f2.ext[0] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .frag_off = first / 8 }, f2.n_ext = 1;
	} else {
		f1.more_frags = 1;
		f2.frag_off = first / 8;
	}
	l1 = frame_build(b1, sizeof(b1), &f1);
	l2 = frame_build(b2, sizeof(b2), &f2);
	memcpy(b1 + at, tcp, first);
	if (pad >= 14 - first)
		b1[at + 13] = padflags;
	memcpy(b2 + at, tcp + first, 20 - first);
	*a = run_raw(b1, l1);
	*b = run_raw(b2, l2);
}

/* RFC 1858 and RFC 3128: a SYN whose first fragment holds 8 bytes of its
 * TCP header has no flags there and its second fragment no ports, but the
 * stack reassembles a SYN to port 22: both fragments are malformed, in
 * either order, and a rule of the port denies the SYN whole. */
static void test_endpoint_tiny_fragments(void)
{
	struct xrl_global_stats g0;
	int a, b;

	setup();
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 22 action deny id 1",
		     "rule add ::/0 proto tcp dport 22 action deny id 2",
		     "rule add 0.0.0.0/0 proto tcp dport 23 syn action deny id 3"), "%s", xrl_errmsg());
	g0 = gstats();
	syn_fragments("198.18.0.1", 22, 8, 0, 0, &a, &b);
	CHECK_EQ(a, DROP);
	CHECK_EQ(b, DROP);
	syn_fragments("2001:db8::1", 22, 8, 0, 0, &a, &b);
	CHECK_EQ(a, DROP);
	CHECK_EQ(b, DROP);
	CHECK_EQ(gstats().malformed_packets - g0.malformed_packets, 4);
	CHECK_EQ(rstats(1).dropped_packets + rstats(2).dropped_packets, 0);
	/* the flags of the tiny first fragment in its padding: ACK there,
	 * SYN in the second fragment; not read as "not a SYN" */
	syn_fragments("198.18.0.1", 23, 8, 20, ACK, &a, &b);
	CHECK_EQ(a, DROP);
	CHECK_EQ(b, DROP);
	/* 16 bytes: the flags are there, but not the whole header; the rest
	 * at offset 2 has no ports and passes a port rule (the datagram
	 * cannot be reassembled without its first fragment) */
	syn_fragments("198.18.0.1", 22, 16, 0, 0, &a, &b);
	CHECK_EQ(a, DROP);
	CHECK_EQ(b, PASS);
	/* a whole SYN meets the port's rule; a fragment of a datagram
	 * further on meets only the rules of its protocol */
	g0 = gstats();
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 3), 0);
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, true, 3), 3);
	CHECK_EQ(gstats().malformed_packets - g0.malformed_packets, 0);
	CHECK_EQ(rstats(1).dropped_packets, 3);
	teardown();
}

/* A TCP packet (no options, ACK) from src of l3len bytes by its IP
 * length: an aggregate when that is over the MTU; its verdict. */
static int tcp_of_len(const char *src, int l3len)
{
	bool v6 = strchr(src, ':') != NULL;
	int hdrs = v6 ? 40 : 20;
	struct frame f = { .src = src, .l4 = IPPROTO_TCP, .payload = l3len - hdrs };
	static uint8_t buf[4096];
	size_t len = frame_build(buf, sizeof(buf), &f);

	buf[14 + hdrs + 12] = 5 << 4;
	buf[14 + hdrs + 13] = ACK;
	return run_raw(buf, len);
}

/* In generic mode an XDP program sees GRO aggregates: a packet rule counts
 * the segments one carries. BPF_PROG_TEST_RUN runs on the loopback device
 * of the caller's namespace: in a namespace of its own with an MTU of 1000,
 * TCP segments hold 960 bytes (IPv4) or 940 (IPv6). */
static void gro_segments_body(void)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 10 id 1",
		     "rule add 2001:db8::/32 rate 1/h burst 10 id 2"), "%s", xrl_errmsg());
	for (int i = 0; i < 3; i++)	/* 3 segments each: 9 tokens */
		CHECK_EQ(tcp_of_len("198.18.0.1", 40 + 3 * 960), PASS);
	CHECK_EQ(tcp_of_len("198.18.0.1", 40 + 2 * 960 + 1), DROP);	/* 3 > 1 */
	/* the refusal of an aggregate is not cached: one segment fits */
	CHECK_EQ(tcp_of_len("198.18.0.1", 1000), PASS);
	CHECK_EQ(tcp_of_len("198.18.0.1", 100), DROP);
	/* IPv6 likewise */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(tcp_of_len("2001:db8::1", 60 + 2 * 940 + 1), PASS);
	CHECK_EQ(tcp_of_len("2001:db8::1", 60 + 940 + 1), DROP);	/* 2 > 1 */
	CHECK_EQ(tcp_of_len("2001:db8::1", 200), PASS);
	CHECK_EQ(tcp_of_len("2001:db8::1", 200), DROP);
	/* what the program saw: frames, counted once each */
	CHECK_EQ(rstats(1).passed_packets, 4);
	CHECK_EQ(rstats(1).dropped_packets, 2);
	teardown();
}

static void test_gro_aggregate_segments(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct ifreq ifr = { .ifr_mtu = 1000 };
		int fd;

		strcpy(ifr.ifr_name, "lo");
		if (unshare(CLONE_NEWNET) || (fd = socket(AF_INET, SOCK_DGRAM, 0)) < 0 ||
		    ioctl(fd, SIOCSIFMTU, &ifr)) {
			fprintf(stderr, "    a namespace with lo at MTU 1000: %s\n", strerror(errno));
			_exit(2);
		}
		close(fd);
		tl_cur_failed = 0;
		gro_segments_body();
		fflush(stderr);
		_exit(tl_cur_failed ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the test in its namespace: status %d", status);
}

/* Endpoint rules read back as written, survive further commits (the id
 * spaces alternate), and keep their buckets when unchanged. */
static void test_endpoint_commits(void)
{
	struct xrl_rule_entry *v;
	size_t n;

	setup();
	for (int round = 0; round < 3; round++) {
		CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 100 id 1",
			     "rule add 198.18.0.0/16 proto tcp dport 22 rate 1/h burst 2 id 2",
			     "rule add 198.18.0.0/16 proto udp dport 100-200 rate 1/h burst 3 id 3"),
		      "%s", xrl_errmsg());
		CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 5), round ? 0 : 2);
		CHECK_EQ(ep_send("198.18.0.1", IPPROTO_UDP, 150, 0, false, 5), round ? 0 : 3);
	}
	CHECK(!xrl_rules_get(X, &v, &n), "%s", xrl_errmsg());
	CHECK_EQ(n, 3);
	if (n == 3) {
		CHECK(!v[0].r.ep && v[1].r.ep && v[1].r.proto == IPPROTO_TCP && v[1].r.dport_lo == 22 &&
		      v[1].r.dport_hi == 22 && v[2].r.dport_lo == 100 && v[2].r.dport_hi == 200,
		      "read back");
	}
	free(v);
	/* removed: the endpoint rules stop at once */
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 100 id 1"), "%s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.1", IPPROTO_TCP, 22, SYN, false, 5), 5);
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "one rule left");
	free(v);
	teardown();
}

/* ---- live events ---- */

static struct xrl_event evs[8192];
static size_t nevs;

static int collect(const struct xrl_event *e, void *ctx)
{
	(void)ctx;
	if (nevs < sizeof(evs) / sizeof(evs[0]))
		evs[nevs] = *e;
	nevs++;
	return 0;
}

/* The events the program wrote since the last call (the daemon's ring). */
static size_t events_read(struct xrl_events *ev)
{
	nevs = 0;
	CHECK(xrl_events_consume(ev) >= 0, "consume");
	return nevs;
}

static struct xrl_event_stats estats(void)
{
	struct xrl_event_stats s = {};

	CHECK(!xrl_event_stats_get(X, &s), "%s", xrl_errmsg());
	return s;
}

static void check_event(const struct xrl_event *e, int kind, __u32 rule, const char *key,
			__u64 ts, __u64 dropped)
{
	char k[64];

	xrl_event_key_format(e, k, sizeof(k));
	CHECK(e->kind == kind, "kind %s, expected %s", xrl_event_kind_name(e->kind),
	      xrl_event_kind_name(kind));
	CHECK_EQ(e->rule_id, rule);
	CHECK(!strcmp(k, key), "key %s, expected %s", k, key);
	CHECK_EQ(e->ts_ns, ts);
	CHECK_EQ(e->dropped, dropped);
}

/* One CPU: the global cap is per CPU. */
static void one_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* "limited" at the first drop, nothing more while the key stays limited
 * (a pass within the flood finds its bucket all but empty), "unlimited" at
 * the first pass after a pause; each into both rings. */
static void test_events_transitions(void)
{
	struct xrl_events *ev, *ctl;
	struct xrl_event_stats es;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 3 id 7",
		     "rule add 2001:db8::/32 rate 1/s burst 1 id 8"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_CTL, collect, NULL, &ctl), "%s", xrl_errmsg());
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 0);			/* passes within the burst */
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_LIMITED, 7, "198.18.0.1", T0, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_ENFORCE);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 0);			/* still limited */
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* one token back: still limited */
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 0);
	xrl_test_clock_set(X, T0 + 6 * SEC);		/* a pause: the bucket refilled */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_UNLIMITED, 7, "198.18.0.1", T0 + 6 * SEC, 3);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 0);			/* once */

	/* IPv6: the key is the /64; a new key's first drop */
	CHECK_EQ(run_from("2001:db8:0:1::1"), PASS);
	CHECK_EQ(run_from("2001:db8:0:1::2"), DROP);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_LIMITED, 8, "2001:db8:0:1::/64", T0 + 6 * SEC, 1);

	/* the other ring had each of them too */
	CHECK_EQ(events_read(ctl), 3);
	CHECK(nevs == 3 && evs[0].kind == XRL_EV_LIMITED && evs[1].kind == XRL_EV_UNLIMITED &&
	      evs[2].family == 6, "the ctl ring's events");
	es = estats();
	CHECK_EQ(es.events[0], 2);
	CHECK_EQ(es.events[1], 1);
	CHECK_EQ(es.ring_full[0] + es.ring_full[1] + es.dropped_rate + es.sampled, 0);

	/* in dry-run, the events say so */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	CHECK_EQ(run_from("198.18.0.9"), PASS);
	CHECK_EQ(run_from("198.18.0.9"), PASS);
	CHECK_EQ(run_from("198.18.0.9"), PASS);
	CHECK_EQ(run_from("198.18.0.9"), PASS);		/* would be dropped */
	CHECK_EQ(events_read(ev), 1);
	CHECK(nevs == 1 && evs[0].mode == XRL_MODE_DRY_RUN, "dry-run event");
	xrl_events_close(ev);
	xrl_events_close(ctl);
	teardown();
}

/* A dry-run rule's key: its events say dry-run (would be limited, its
 * drops would-drops) while the mode enforces and another rule's do not. */
static void test_events_dry_run_rule(void)
{
	struct xrl_events *ev;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/s burst 1 dry-run id 4",
		     "rule add 198.18.1.0/24 rate 1/s burst 1 id 5"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* would be dropped */
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(run_from("198.18.1.1"), DROP);
	CHECK_EQ(events_read(ev), 2);
	check_event(&evs[0], XRL_EV_LIMITED, 4, "198.18.0.1", T0, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_DRY_RUN);
	check_event(&evs[1], XRL_EV_LIMITED, 5, "198.18.1.1", T0, 1);
	CHECK_EQ(evs[1].mode, XRL_MODE_ENFORCE);
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_UNLIMITED, 4, "198.18.0.1", T0 + 5 * SEC, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_DRY_RUN);
	xrl_events_close(ev);
	teardown();
}

/* At most one "limited" per key per XRL_EVENT_KEY_NS; an "unlimited" only
 * after a "limited" that went out. */
static void test_events_sampled_per_key(void)
{
	struct xrl_events *ev;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 3"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 1);			/* limited at T0 */
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 1);			/* unlimited */
	CHECK_EQ(evs[0].kind, XRL_EV_UNLIMITED);
	CHECK_EQ(run_from("198.18.0.1"), DROP);		/* limited again, 5 s later */
	CHECK_EQ(events_read(ev), 0);
	CHECK_EQ(estats().sampled, 1);
	xrl_test_clock_set(X, T0 + 7 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* no unlimited: no limited went out */
	CHECK_EQ(events_read(ev), 0);
	xrl_test_clock_set(X, T0 + 10 * SEC - 1);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 0);
	CHECK_EQ(estats().sampled, 2);
	xrl_test_clock_set(X, T0 + 12 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);		/* 12 s after the last one */
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_LIMITED, 3, "198.18.0.1", T0 + 12 * SEC, 4);
	/* other keys are sampled on their own */
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(run_from("198.18.0.2"), DROP);
	CHECK_EQ(events_read(ev), 1);
	xrl_events_close(ev);
	teardown();
}

/* A flood of new keys: XRL_EVENT_BURST events at once per CPU, then
 * XRL_EVENT_RATE a second; the rest counted as dropped, and their keys owe
 * no "unlimited". */
static void test_events_global_cap(void)
{
	struct xrl_events *ev;
	struct xrl_event_stats es;
	char src[32];
	int n = XRL_EVENT_BURST + 100;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 5"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS);
		CHECK_EQ(run_from(src), DROP);
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_BURST);
	es = estats();
	CHECK_EQ(es.events[0], XRL_EVENT_BURST);
	CHECK_EQ(es.dropped_rate, 100);
	/* 50 ms later: 50 more */
	xrl_test_clock_set(X, T0 + SEC / 20);
	for (int i = n; i < n + 100; i++) {
		snprintf(src, sizeof(src), "198.19.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS);
		CHECK_EQ(run_from(src), DROP);
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_RATE / 20);
	CHECK_EQ(estats().dropped_rate, 150);
	/* later, the keys come back politely: only those reported say so */
	xrl_test_clock_set(X, T0 + 10 * SEC);
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS);
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_BURST);
	CHECK_EQ(estats().events[1], XRL_EVENT_BURST);
	xrl_events_close(ev);
	teardown();
}

/* A ring nobody reads fills up: what does not fit is counted, per ring,
 * and the reader gets the rest. */
static void test_events_ring_full(void)
{
	struct xrl_events *ev;
	struct xrl_event_stats es;
	int cycles = 3000;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 5"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	for (int i = 0; i < cycles; i++) {	/* limited, unlimited: 2 events a cycle */
		xrl_test_clock_set(X, T0 + i * 11 * SEC);
		CHECK_EQ(run_from("198.18.0.1"), PASS);
		CHECK_EQ(run_from("198.18.0.1"), DROP);
	}
	xrl_test_clock_set(X, T0 + cycles * 11 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	es = estats();
	CHECK_EQ(es.events[0] + es.events[1], 2 * cycles);
	CHECK(es.ring_full[0] > 0, "the ring never filled");
	CHECK_EQ(es.ring_full[0], es.ring_full[1]);	/* the same for both */
	CHECK_EQ(events_read(ev) + es.ring_full[0], 2 * cycles);
	xrl_events_close(ev);
	teardown();
}

/* ---- fleet-wide rules: the share, candidates, leases ---- */

static struct xrl_rule_entry rule_of(__u32 id)
{
	struct xrl_rule_entry *v, e = {};
	size_t n;

	if (xrl_rules_get(X, &v, &n))
		return e;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id == id)
			e = v[i];
	free(v);
	return e;
}

static struct xrl_key key4(const struct xrl_rule_entry *e, const char *addr)
{
	struct xrl_key k = {};
	int family;
	__u8 a[16];

	xrl_addr_parse(addr, &family, a);
	xrl_key_of(&k, &e->r, family, a);
	return k;
}

/* The share of N hosts, as the daemon writes it. */
static void share(const struct xrl_rule_entry *e, unsigned n)
{
	struct xrl_fleet_rule fr = { .interval = e->r.interval * n, .hosts = n,
				     .state = XRL_FLEET_SYNCED, .rule_id = e->r.id };

	fr.limit = xrl_burst_limit(fr.interval, e->r.burst / n);
	CHECK(!xrl_fleet_rule_put(X, e->r.slot, &fr), "share");
}

static void test_fleet_lease_path(void)
{
	struct xrl_rule_entry open_r, closed_r;
	struct xrl_lease *l;
	struct xrl_key k;
	__u32 v;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 4 scope fleet on-failure open id 1",
		     "rule add 198.18.1.0/24 rate 1/h burst 4 scope fleet on-failure closed id 2"),
	      "%s", xrl_errmsg());
	open_r = rule_of(1);
	closed_r = rule_of(2);
	CHECK_EQ(open_r.r.scope, XRL_SCOPE_FLEET);
	l = xrl_fleet_leases(X);
	CHECK(l != NULL, "leases mmap");
	/* no share written (no daemon): the rule as it is, no candidate */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	k = key4(&open_r, "198.18.0.1");
	CHECK(xrl_fleet_key_get(X, &k, &v) == -ENOENT, "no candidate without a share");
	/* the share of two hosts: burst 2; its first drop makes a candidate */
	share(&open_r, 2);
	share(&closed_r, 2);
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	k = key4(&open_r, "198.18.0.2");
	CHECK(xrl_fleet_key_get(X, &k, &v) == -ENOENT, "quiet: no candidate");
	CHECK_EQ(run_from("198.18.0.2"), DROP);
	CHECK(!xrl_fleet_key_get(X, &k, &v) && v == XRL_FLEET_PENDING, "candidate");
	CHECK_EQ(run_from("198.18.0.2"), DROP);	/* pending: still the share */
	/* promoted: a lease of 3 tokens until T0 + 1 s */
	l[5].expires_ns = T0 + SEC;
	l[5].credit = 3;
	CHECK(!xrl_fleet_key_put(X, &k, 5), "promote");
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(run_from("198.18.0.2"), DROP);	/* spent */
	CHECK_EQ(l[5].credit, 0);
	/* the swap: new credit replaces, never adds */
	CHECK_EQ(__atomic_exchange_n(&l[5].credit, 2, __ATOMIC_ACQ_REL), 0);
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(l[5].credit, 1);
	/* expired, on-failure open: back to the share (its bucket is empty:
	 * rate 1/h), credit left untouched */
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.2"), DROP);
	CHECK_EQ(l[5].credit, 1);
	CHECK_EQ(run_from("198.18.0.3"), PASS);	/* another key: its share */
	/* expired, on-failure closed: dropped, even with credit */
	k = key4(&closed_r, "198.18.1.1");
	l[6].expires_ns = T0 + SEC;
	l[6].credit = 100;
	CHECK(!xrl_fleet_key_put(X, &k, 6), "promote");
	CHECK_EQ(run_from("198.18.1.1"), DROP);
	CHECK_EQ(l[6].credit, 100);
	l[6].expires_ns = T0 + 2 * SEC;		/* renewed */
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(l[6].credit, 99);
	teardown();
}

/* ---- floods: the hot-key cache, aggregates, new keys ---- */

/* The rule and key of a source, for key reset. */
static int key_reset(__u32 id, const char *src)
{
	struct xrl_rule_entry *v;
	struct xrl_key k;
	__u8 a[16];
	int family, err = -ENOENT;
	size_t n;

	if (xrl_addr_parse(src, &family, a) || xrl_rules_get(X, &v, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id == id) {
			xrl_key_of(&k, &v[i].r, family, a);
			err = xrl_bucket_reset(X, &v[i].r, &k);
		}
	}
	free(v);
	return err;
}

/*
 * A key over its limit is dropped by the cache until exactly the time its
 * bucket may admit again (to the test clock's nanosecond), IPv4 and IPv6;
 * the rule's drops count every packet and the key's bucket gets its drops
 * every XRL_HOT_FLUSH.
 */
static void test_hot_cache_exact(void)
{
	static const char *const src[] = { "198.18.0.1", "2001:db8:1:2::5" };

	one_cpu();	/* the cache is per CPU */
	for (int f = 0; f < 2; f++) {
		struct xrl_rule_stats st;

		setup();
		CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 2 id 1",
			     "rule add 2001:db8::/32 rate 1/s burst 2 id 2"), "%s", xrl_errmsg());
		CHECK_EQ(run_from(src[f]), PASS);
		CHECK_EQ(run_from(src[f]), PASS);
		CHECK_EQ(run_from(src[f]), DROP);	/* the bucket's: fills the cache */
		for (int i = 0; i < 15; i++)
			CHECK_EQ(run_from(src[f]), DROP);
		st = rstats(f + 1);
		CHECK_EQ(st.hot_dropped, 15);
		CHECK_EQ(st.dropped_packets, 16);
		CHECK_EQ(st.passed_packets, 2);
		/* the bucket has 1, the cache 15 pending: libxrl adds them */
		CHECK_EQ(bucket_of(f + 1, src[f]).dropped, 16);
		CHECK_EQ(run_from(src[f]), DROP);
		CHECK_EQ(bucket_of(f + 1, src[f]).dropped, 17);	/* flushed */
		/* TAT = T0 + 2 s, tolerance 2 s: refused until T0 + 1 s */
		xrl_test_clock_set(X, T0 + SEC - 1);
		CHECK_EQ(run_from(src[f]), DROP);
		CHECK_EQ(rstats(f + 1).hot_dropped, 17);
		xrl_test_clock_set(X, T0 + SEC);
		CHECK_EQ(run_from(src[f]), PASS);
		CHECK_EQ(run_from(src[f]), DROP);
		CHECK_EQ(rstats(f + 1).dropped_packets, 19);
		teardown();
	}
}

/* Two sources in one /64 share a bucket: each has its own cache entry,
 * both answered exactly; a source of another key is not dropped. */
static void test_hot_cache_ipv6_prefix(void)
{
	one_cpu();
	setup();
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/s burst 1 id 2"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:1:2::5"), PASS);
	CHECK_EQ(run_from("2001:db8:1:2::5"), DROP);
	CHECK_EQ(run_from("2001:db8:1:2::6"), DROP);	/* same /64 */
	CHECK_EQ(run_from("2001:db8:1:2::6"), DROP);
	CHECK_EQ(run_from("2001:db8:1:2::5"), DROP);
	CHECK_EQ(rstats(2).hot_dropped, 2);
	CHECK_EQ(run_from("2001:db8:1:3::5"), PASS);	/* another /64 */
	teardown();
}

/* A thousand random sources over their limit keep their entries (two ways
 * a set): 987 of them here; a direct-mapped cache of as many entries, 904. */
static void test_hot_cache_thousand_sources(void)
{
	static unsigned char seen[131072 / 8];
	static unsigned addr[1000];
	unsigned x = 2463534242u;
	char src[32];
	__u64 hits;

	/* a thousand distinct random sources of 198.18.0.0/15 (xorshift): an
	 * arithmetic sequence would spread over the sets too evenly to tell */
	memset(seen, 0, sizeof(seen));
	for (int n = 0; n < 1000; ) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (seen[(x & 131071) / 8] & 1 << (x & 7))
			continue;
		seen[(x & 131071) / 8] |= 1 << (x & 7);
		addr[n++] = x & 131071;
	}
	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1 id 1"), "%s", xrl_errmsg());
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1000; i++) {
			snprintf(src, sizeof(src), "198.%u.%u.%u", 18 + (addr[i] >> 16),
				 addr[i] >> 8 & 255, addr[i] & 255);
			CHECK_EQ(run_from(src), round ? DROP : PASS);
		}
	}
	/* round 1 fills, round 2 hits */
	hits = rstats(1).hot_dropped;
	CHECK(hits >= 980, "%llu of 1000 from the cache", (unsigned long long)hits);
	if (getenv("XRL_DEBUG"))
		fprintf(stderr, "    %llu of 1000 from the cache\n", (unsigned long long)hits);
	teardown();
}

/* A rule-set commit, a key reset, a mode change and the watchdog each end
 * what the cache knows: the next packet takes the whole path. */
static void test_hot_cache_invalidated(void)
{
	const char *s = "198.18.0.1";

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1 id 1 on-failure open"), "%s", xrl_errmsg());
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 1);
	/* a commit that changes the rule: a fresh bucket */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 2 id 1 on-failure open"), "%s", xrl_errmsg());
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 1);
	/* key reset: a full bucket again */
	CHECK_EQ(key_reset(1, s), 0);
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 2);
	/* a mode change voids the cache; dry-run never uses it (its drops
	 * pass, counted as would-drops); back to enforce, the next drop is
	 * the bucket's, and fills again */
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "%s", xrl_errmsg());
	CHECK_EQ(run_from(s), PASS);	/* dry-run: would drop */
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(rstats(1).hot_dropped, 2);
	CHECK_EQ(rstats(1).would_drop_packets, 2);
	CHECK(!xrl_mode_set(X, XRL_MODE_ENFORCE), "%s", xrl_errmsg());
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 3);
	/* the watchdog fires: on-failure open passes a cached key */
	xrl_heartbeat(X, 1000, 5 * SEC);	/* at T0 */
	CHECK_EQ(run_from(s), DROP);
	xrl_test_clock_set(X, T0 + 5 * SEC + 1);
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(rstats(1).failure_passed, 1);
	xrl_heartbeat(X, 1000, 5 * SEC);	/* back: limited again */
	CHECK_EQ(run_from(s), DROP);
	teardown();
}

/*
 * The cache never answers for a rule whose refusal is not a drop of every
 * such packet until a known time (hot_cacheable()): a dry-run rule (its
 * drops pass), any rule in dry-run mode. And an entry answers only for what
 * it knows: a byte rule's refusal of a large frame not for a small one, an
 * endpoint rule's not for the source's packets of another class. Each case
 * would drop a packet its rule admits if the cache answered for it.
 */
static void test_hot_cache_only_where_exact(void)
{
	struct pkt_spec big = { .src = "198.18.3.1", .payload = 458 };	/* 500-byte frame */
	struct pkt_spec small = { .src = "198.18.3.1", .payload = 18 };
	uint8_t b1[512], b2[512];	/* pkt_build clears 512 bytes */
	size_t l1, l2;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 1 dry-run id 1",
		     "rule add 198.18.2.0/24 rate 1000/s burst 1000 id 3",
		     "rule add 198.18.2.0/24 proto udp dport 53 rate 1/h burst 1 id 4",
		     "rule add 198.18.3.0/24 rate 12kbit burst 1600 id 5"), "%s", xrl_errmsg());
	/* a dry-run rule: every packet passes, would-drops counted */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(rstats(1).would_drop_packets, 3);
	CHECK_EQ(rstats(1).hot_dropped, 0);
	/* an endpoint rule's drop is not the source's: port 80 still passes */
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_UDP, 53, 0, false, 3), 1);
	CHECK_EQ(rstats(4).hot_dropped, 1);
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_UDP, 80, 0, false, 3), 3);
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_TCP, 53, 0x10, false, 3), 3);
	CHECK_EQ(rstats(3).passed_packets, 9);
	CHECK_EQ(rstats(4).hot_dropped, 1);
	/* a byte rule: a large frame refused, a small one still fits (1600
	 * bytes of burst: three 500-byte frames, then 100 bytes left) */
	l1 = pkt_build(b1, &big);
	l2 = pkt_build(b2, &small);
	CHECK_EQ(l1, 500);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_raw(b1, l1), PASS);
	CHECK_EQ(run_raw(b1, l1), DROP);
	CHECK_EQ(run_raw(b2, l2), PASS);
	CHECK_EQ(rstats(5).hot_dropped, 0);
	/* dry-run mode: a packet rule that would be cached passes */
	CHECK(!RULES("rule add 198.18.4.0/24 rate 1/h burst 1 id 6"), "%s", xrl_errmsg());
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "%s", xrl_errmsg());
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from("198.18.4.1"), PASS);
	CHECK_EQ(rstats(6).hot_dropped, 0);
	CHECK_EQ(rstats(6).would_drop_packets, 2);
	teardown();
}

/*
 * The window algorithms: a fixed window refuses until its next window
 * starts, a sliding window until its estimate falls back under the limit
 * (to the microsecond it weighs the previous window with), and the cache
 * answers exactly until then: the last nanosecond before is a cached drop,
 * the first after passes.
 */
static void test_hot_cache_windows(void)
{
	const char *s = "198.18.1.1", *s2 = "198.18.2.1";

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 3/s algo fixed-window id 1",
		     "rule add 198.18.2.0/24 rate 10/s algo sliding-window id 2"), "%s", xrl_errmsg());
	/* fixed: T0 starts a window; 3 pass, the 4th is the bucket's drop */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from(s), PASS);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 9);
	xrl_test_clock_set(X, T0 + SEC - 1);
	CHECK_EQ(run_from(s), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 10);
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from(s), PASS);
	CHECK_EQ(rstats(1).dropped_packets, 11);
	CHECK_EQ(bucket_of(1, s).dropped, 11);
	/* sliding: 10 in the window from T0 + 1 s; half-way through the next
	 * they weigh 5, so 5 more pass; the 6th is refused until the weight
	 * falls to 4: T0 + 2.5 s + 1 us */
	for (int i = 0; i < 10; i++)
		CHECK_EQ(run_from(s2), PASS);
	xrl_test_clock_set(X, T0 + 2 * SEC + SEC / 2);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(run_from(s2), PASS);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from(s2), DROP);
	CHECK_EQ(rstats(2).hot_dropped, 3);
	xrl_test_clock_set(X, T0 + 2 * SEC + SEC / 2 + 999);
	CHECK_EQ(run_from(s2), DROP);
	CHECK_EQ(rstats(2).hot_dropped, 4);
	xrl_test_clock_set(X, T0 + 2 * SEC + SEC / 2 + 1000);
	CHECK_EQ(run_from(s2), PASS);
	CHECK_EQ(run_from(s2), DROP);
	CHECK_EQ(rstats(2).passed_packets, 16);
	CHECK_EQ(rstats(2).dropped_packets, 6);
	teardown();
}

/*
 * A byte rule's refusal is cached for frames at least as long as the
 * refused one, until exactly the time that length fits again; a shorter
 * frame takes the whole path (and may pass).
 */
static void test_hot_cache_bytes(void)
{
	struct pkt_spec big = { .src = "198.18.3.1", .payload = 458 };	/* 500 bytes */
	struct pkt_spec huge = { .src = "198.18.3.1", .payload = 470 };	/* 512 bytes */
	struct pkt_spec small = { .src = "198.18.3.1", .payload = 18 };	/* 60 bytes */
	uint8_t b1[512], b2[512], b3[512];
	size_t l1, l2, l3;

	one_cpu();
	setup();
	/* 1,500 bytes a second, 1,600 of burst */
	CHECK(!RULES("rule add 198.18.3.0/24 rate 12kbit burst 1600 id 5"), "%s", xrl_errmsg());
	l1 = pkt_build(b1, &big);
	l2 = pkt_build(b2, &small);
	l3 = pkt_build(b3, &huge);
	CHECK_EQ(l1, 500);
	CHECK_EQ(l2, 60);
	CHECK_EQ(l3, 512);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_raw(b1, l1), PASS);
	CHECK_EQ(run_raw(b1, l1), DROP);	/* the bucket's: cached for >= 500 */
	CHECK_EQ(run_raw(b1, l1), DROP);
	CHECK_EQ(run_raw(b3, l3), DROP);
	CHECK_EQ(rstats(5).hot_dropped, 2);
	CHECK_EQ(run_raw(b2, l2), PASS);	/* 60 of the 100 left */
	CHECK_EQ(run_raw(b2, l2), DROP);	/* 40 left: refused, cached for >= 60 */
	CHECK_EQ(run_raw(b1, l1), DROP);
	CHECK_EQ(rstats(5).hot_dropped, 3);
	/* 1,560 bytes taken: 500 fit again when 460 have come back, after
	 * 460 / 1500 s = 306.67 ms; the 60-byte frame's entry replaced the
	 * 500-byte one, and holds until 20 bytes came back (13.3 ms) */
	xrl_test_clock_set(X, T0 + 13 * 1000000);
	CHECK_EQ(run_raw(b1, l1), DROP);	/* cached, >= 60 */
	CHECK_EQ(rstats(5).hot_dropped, 4);
	xrl_test_clock_set(X, T0 + 14 * 1000000);
	CHECK_EQ(run_raw(b1, l1), DROP);	/* the bucket's again: >= 500 */
	CHECK_EQ(rstats(5).hot_dropped, 4);
	xrl_test_clock_set(X, T0 + 306 * 1000000);
	CHECK_EQ(run_raw(b1, l1), DROP);
	CHECK_EQ(rstats(5).hot_dropped, 5);
	xrl_test_clock_set(X, T0 + 307 * 1000000);
	CHECK_EQ(run_raw(b1, l1), PASS);
	CHECK_EQ(rstats(5).dropped_packets, 8);
	teardown();
}

/*
 * An endpoint rule's refusal is cached for the source and the packet's
 * endpoint class, checked after the source rule passed it (which counts
 * the pass, as the whole path does), for IPv4 and IPv6; another class of
 * the same source, or another source, is not touched.
 */
static void test_hot_cache_endpoint(void)
{
	static const char *const src[] = { "198.18.2.1", "2001:db8:2::1" };

	one_cpu();
	for (int f = 0; f < 2; f++) {
		const char *other = f ? "2001:db8:3::1" : "198.18.2.2";

		setup();
		CHECK(!RULES("rule add 198.18.0.0/15 rate 1000/s burst 1000 id 1",
			     "rule add 2001:db8::/32 rate 1000/s burst 1000 id 2",
			     "rule add 198.18.2.0/24 proto udp dport 53 rate 1/s burst 2 id 3",
			     "rule add 2001:db8::/32 proto udp dport 53 rate 1/s burst 2 id 4",
			     "rule add 0.0.0.0/0 proto tcp syn rate 1/h burst 1 id 5",
			     "rule add ::/0 proto tcp syn rate 1/h burst 1 id 6"), "%s", xrl_errmsg());
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 10), 2);
		CHECK_EQ(rstats(3 + f).hot_dropped, 7);
		CHECK_EQ(rstats(3 + f).dropped_packets, 8);
		CHECK_EQ(rstats(1 + f).passed_packets, 10);	/* the source rule's */
		/* another class (a SYN, its own rule), another port, another source */
		CHECK_EQ(ep_send(src[f], IPPROTO_TCP, 80, 0x02, false, 3), 1);
		CHECK_EQ(rstats(5 + f).hot_dropped, 1);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 54, 0, false, 3), 3);
		CHECK_EQ(ep_send(other, IPPROTO_UDP, 53, 0, false, 3), 2);
		CHECK_EQ(rstats(3 + f).hot_dropped, 7);
		/* refused until TAT + T - L = T0 + 2 s + 1 s - 2 s */
		xrl_test_clock_set(X, T0 + SEC - 1);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 1), 0);
		CHECK_EQ(rstats(3 + f).hot_dropped, 8);
		xrl_test_clock_set(X, T0 + SEC);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 2), 1);
		CHECK_EQ(bucket_of(3 + f, src[f]).dropped, 10);
		teardown();
	}
}

/*
 * Review: an endpoint rule that covers two endpoint classes (53 alone, and
 * 54 shared with another rule) has one bucket per source, but its cache
 * entries are per class. The drops cached under the other class are in
 * the key's count (show) and must be in its "unlimited" event too.
 */
static void test_hot_cache_endpoint_two_classes(void)
{
	const char *src = "198.18.2.1";
	struct xrl_events *ev;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.2.0/24 proto udp dport 53-54 rate 1/s burst 2 id 3",
		     "rule add 198.18.9.0/24 proto udp dport 54 rate 1/s burst 2 id 4"),
	      "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 53, 0, false, 2), 2);
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 53, 0, false, 5), 0);	/* 1 + 4 cached */
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 54, 0, false, 5), 0);	/* 1 + 4 cached */
	CHECK_EQ(rstats(3).hot_dropped, 8);
	CHECK_EQ(rstats(3).dropped_packets, 10);
	CHECK_EQ(bucket_of(3, src).dropped, 10);
	CHECK_EQ(events_read(ev), 1);
	xrl_test_clock_set(X, T0 + 10 * SEC);
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 54, 0, false, 1), 1);
	CHECK_EQ(events_read(ev), 1);
	CHECK_EQ(evs[0].kind, XRL_EV_UNLIMITED);
	CHECK_EQ(evs[0].dropped, 10);	/* every drop of the key so far */
	CHECK_EQ(bucket_of(3, src).dropped, 10);
	xrl_events_close(ev);
	teardown();
}

/*
 * Review: a source the cache holds refused stops touching its bucket, so
 * the LRU table evicts that bucket first under key pressure; the whole
 * path would then start it afresh. An operator's "key reset" of it finds
 * no bucket (-ENOENT, "nothing to forgive") and leaves the cache as it
 * is: the source stays dropped until the refusal's time (here an hour).
 */
static void test_hot_cache_reset_evicted_key(void)
{
	const char *src = "198.18.0.1";
	struct xrl_rule_entry *v;
	struct xrl_bucket b;
	struct xrl_key k;
	char a[32];
	__u8 addr[16];
	int family, err;
	size_t n;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1 new-keys 100000000/s id 1"),
	      "%s", xrl_errmsg());
	CHECK_EQ(run_from(src), PASS);
	CHECK_EQ(run_from(src), DROP);		/* the bucket's: cached for an hour */
	CHECK_EQ(run_from(src), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 1);
	for (int i = 0; i < 8 * 4096; i++) {	/* other sources fill the table */
		snprintf(a, sizeof(a), "198.19.%d.%d", i / 250, i % 250 + 1);
		run_from(a);
		run_from(a);		/* referenced: the LRU's active list */
	}
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "%s", xrl_errmsg());
	xrl_addr_parse(src, &family, addr);
	xrl_key_of(&k, &v[0].r, family, addr);
	if (xrl_bucket_get(X, &k, &b) == 0) {
		fprintf(stderr, "    note: the key was not evicted: nothing shown\n");
	} else {
		err = xrl_bucket_reset(X, &v[0].r, &k);
		CHECK_EQ(err, -ENOENT);
		/* the whole path: a new bucket, full; reset or not */
		CHECK_EQ(run_from(src), PASS);
	}
	free(v);
	teardown();
}

/*
 * Review: the same eviction without an operator. A fixed window's refusal
 * holds until the window ends (an hour here); once the LRU table evicted
 * the key's bucket (a cached drop never looks it up: it went cold), the
 * whole path would admit the source's next packet in a fresh bucket, the
 * cache drops it until the hour is over.
 */
static void test_hot_cache_evicted_window_key(void)
{
	const char *src = "198.18.0.1";
	struct xrl_rule_entry *v;
	struct xrl_bucket b;
	struct xrl_key k;
	char a[32];
	__u8 addr[16];
	int family;
	size_t n;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h algo fixed-window new-keys 100000000/s id 1"),
	      "%s", xrl_errmsg());
	CHECK_EQ(run_from(src), PASS);
	CHECK_EQ(run_from(src), DROP);		/* cached until the hour ends */
	CHECK_EQ(run_from(src), DROP);
	CHECK_EQ(rstats(1).hot_dropped, 1);
	for (int i = 0; i < 8 * 4096; i++) {
		snprintf(a, sizeof(a), "198.19.%d.%d", i / 250, i % 250 + 1);
		run_from(a);
		run_from(a);
	}
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "%s", xrl_errmsg());
	xrl_addr_parse(src, &family, addr);
	xrl_key_of(&k, &v[0].r, family, addr);
	if (xrl_bucket_get(X, &k, &b) == 0)
		fprintf(stderr, "    note: the key was not evicted: nothing shown\n");
	else
		CHECK_EQ(run_from(src), PASS);	/* the whole path's verdict */
	free(v);
	teardown();
}

static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Drops answered by the cache on one CPU are in the key's "unlimited"
 * event when it passes again on another. */
static void test_hot_cache_event_counts(void)
{
	struct xrl_events *ev;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "    note: one CPU: skipped\n");
		return;
	}
	on_cpu(0);
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 10/s burst 5 id 1"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	for (int i = 0; i < 5; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS);
	for (int i = 0; i < 20; i++)
		CHECK_EQ(run_from("198.18.0.1"), DROP);	/* 1 by the bucket, 19 cached */
	CHECK_EQ(rstats(1).hot_dropped, 19);
	on_cpu(1);
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 2);
	CHECK_EQ(evs[1].kind, XRL_EV_UNLIMITED);
	CHECK_EQ(evs[1].dropped, 20);
	xrl_events_close(ev);
	teardown();
	on_cpu(0);
}

/*
 * A rule whose burst is less than its rate refills in one tick of the
 * coarse clock (4 ms at HZ=250) would admit at most its burst a tick, a
 * fraction of its rate (2,500/s here): such a rule meters on the precise
 * clock. On the real clock, 20,000 packets a second, 50 us apart, against
 * 100,000/s burst 10 pass every one, as against an aggregate of 100,000/s
 * burst 10; 1,000/s burst 10 (10 ms of tolerance: the coarse clock) still
 * limits to its burst + rate x t.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_small_burst_high_rate(void)
{
	static const char *const rule[] = {
		"rule add 198.18.0.0/24 rate 100000/s burst 10 id 1",
		"rule add 198.18.1.0/24 rate 1000/s burst 10 id 2",
		"rule add 198.18.2.0/24 rate 100000000/s burst 4000000000 aggregate 100000/s burst 10 id 3",
	};
	static const char *const src[] = { "198.18.0.1", "198.18.1.1", "198.18.2.1" };
	double t0, t;
	int passed[3] = { 0 }, sent = 0;

	one_cpu();
	X = instance(false);		/* the real clock */
	CHECK(!set_rules((const char *const[]){ rule[0], rule[1], rule[2], NULL }), "%s", xrl_errmsg());
	/* 200 ms, a packet of each every 50 us */
	t0 = now_s();
	for (t = t0; t - t0 < 0.2; t = now_s()) {
		for (int i = 0; i < 3; i++)
			passed[i] += run_from(src[i]) == PASS;
		sent++;
		while (now_s() - t < 50e-6)
			;
	}
	if (getenv("XRL_DEBUG"))
		fprintf(stderr, "    sent %d: passed %d %d %d\n", sent, passed[0], passed[1], passed[2]);
	CHECK(passed[0] == sent, "100000/s burst 10: %d of %d passed", passed[0], sent);
	CHECK(passed[2] == sent, "aggregate 100000/s burst 10: %d of %d passed", passed[2], sent);
	/* 1,000/s over at most 0.2 s and a bit, plus the burst */
	CHECK(passed[1] <= 10 + 1000 * (now_s() - t0) + 2 && passed[1] >= 150,
	      "1000/s burst 10: %d of %d passed", passed[1], sent);
	teardown();
}

/*
 * Review: a precise-clock rule stamps its buckets (last_ns, TAT) with
 * bpf_ktime_get_ns(), while xrl_now_ns() is the coarse clock, up to a tick
 * behind. The rule's own "now" (xrl_rule_now_ns(): show, keys) must not
 * see a key that sent one packet a moment ago in the future, nor show an
 * empty bucket when it has 9 of its 10 tokens.
 */
static void test_precise_rule_userspace_now(void)
{
	const char *src = "198.18.0.1";
	struct xrl_rule_entry *v;
	int ahead = 0, empty = 0;
	size_t n;

	one_cpu();
	X = instance(false);		/* the real clock */
	CHECK(!RULES("rule add 198.18.0.0/24 rate 100000/s burst 10 id 1"), "%s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "%s", xrl_errmsg());
	CHECK(v[0].r.precise, "precise");
	for (int i = 0; i < 50; i++) {
		struct xrl_bucket b;
		__u64 now;

		usleep(1000);		/* the bucket full again */
		CHECK_EQ(run_from(src), PASS);
		b = bucket_of(1, src);
		now = xrl_rule_now_ns(X, &v[0].r);
		ahead += b.last_ns > now;
		empty += xrl_bucket_left(&v[0].r, &b, now) < 9;
	}
	CHECK(!ahead, "last_ns ahead of xrl_now_ns() %d times of 50", ahead);
	CHECK(!empty, "under 9 tokens shown %d times of 50", empty);
	free(v);
	teardown();
}

/* aggregate: one bucket for all keys of the rule, after each key's own. */
static void test_aggregate(void)
{
	unsigned long long keys;
	int passed = 0;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 10/s burst 2 aggregate 10/s burst 5 id 1"),
	      "%s", xrl_errmsg());
	passed += passes_from("198.18.0.", 1, 20);
	CHECK_EQ(passed, 5);
	CHECK_EQ(rstats(1).agg_dropped, 15);
	/* once refused, the rule drops before the keys: 5 passed and the
	 * first refused have a bucket, the 14 after it none */
	CHECK(!xrl_keys_tracked_family(X, 4, &keys), "%s", xrl_errmsg());
	CHECK_EQ(keys, 6);
	/* 10/s, burst 5: the aggregate refuses until exactly T0 + 100 ms */
	xrl_test_clock_set(X, T0 + SEC / 10 - 1);
	CHECK_EQ(run_from("198.18.0.30"), DROP);
	xrl_test_clock_set(X, T0 + SEC / 10);
	CHECK_EQ(run_from("198.18.0.31"), PASS);
	CHECK_EQ(run_from("198.18.0.32"), DROP);
	/* a key refused by its own bucket costs the aggregate nothing */
	xrl_test_clock_set(X, T0 + SEC);	/* full again: 5 */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	passed = 0;
	passed += passes_from("198.18.0.", 2, 19);
	CHECK_EQ(passed, 3);
	/* the default burst: one second of the rate */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 10/s burst 2 aggregate 7/s id 1"), "%s", xrl_errmsg());
	passed = 0;
	passed += passes_from("198.19.0.", 1, 20);
	CHECK_EQ(passed, 7);
	teardown();
}

/* A fresh aggregate and new-key budget are full whatever the clock reads:
 * past 2^57 ns (4.6 years of uptime, or a capture's timestamps in replay)
 * time units are past 2^63, where 0 is no longer the past. */
static void test_aggregate_fresh_late_clock(void)
{
	int passed = 0;

	setup();
	xrl_test_clock_set(X, 3ULL << 56);	/* time units: 3 << 62 */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 aggregate 10/s burst 5 new-keys 3/s id 1"),
	      "%s", xrl_errmsg());
	passed += passes_from("198.18.0.", 1, 10);
	CHECK_EQ(passed, 5);	/* 3 new keys, then 2 on the aggregate alone */
	CHECK_EQ(rstats(1).new_keys, 3);
	teardown();
}

struct flood_thread {
	int cpu, prog_fd, err, repeat;
	const char *src;
	pthread_barrier_t *start;
};

static void *flood_thread(void *arg)
{
	struct flood_thread *h = arg;
	struct pkt_spec s = { .src = h->src, .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = h->repeat);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(h->start);
	h->err = bpf_prog_test_run_opts(h->prog_fd, &o) ? errno : 0;
	return NULL;
}

/* Two CPUs at once on one aggregate (keys that never limit): it admits its
 * burst less at most what the CPUs hold in chunks (1 % of it), never more. */
static void test_aggregate_two_cpus(void)
{
	static const char *const srcs[] = { "198.18.0.1", "198.18.0.2" };
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	X = instance(false);		/* the real clock */
	for (int round = 1; round <= 3; round++) {
		struct flood_thread h[2];
		pthread_barrier_t start;
		struct xrl_rule_stats st;
		pthread_t t[2];
		char rule[160];

		snprintf(rule, sizeof(rule), "rule add 198.18.0.0/15 rate 1000/s burst 100000 aggregate 1/h burst 5000 id %d", round);
		CHECK(!RULES(rule), "%s", xrl_errmsg());
		pthread_barrier_init(&start, NULL, 2);
		for (int i = 0; i < 2; i++) {
			h[i] = (struct flood_thread){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X),
						      .start = &start, .src = srcs[i], .repeat = 20000 };
			pthread_create(&t[i], NULL, flood_thread, &h[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			CHECK(!h[i].err, "test run: %s", strerror(h[i].err));
		}
		pthread_barrier_destroy(&start);
		st = rstats(round);
		CHECK(st.passed_packets <= 5000 && st.passed_packets >= 4950,
		      "round %d: %llu passed", round, (unsigned long long)st.passed_packets);
		CHECK_EQ(st.passed_packets + st.dropped_packets, 40000);
		CHECK_EQ(st.agg_dropped, st.dropped_packets);
	}
	teardown();
}

/* new-keys: at most its budget of new buckets; a key that finds none does
 * not enter the table and is metered by the aggregate alone (dropped
 * without one). */
static void test_new_keys(void)
{
	unsigned long long keys;
	struct xrl_rule_stats st;
	int passed = 0;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 3 new-keys 10/s id 1",
		     "rule add 198.19.0.0/16 rate 1/s burst 3 new-keys 10/s aggregate 30/s burst 25 id 2"),
	      "%s", xrl_errmsg());
	passed += passes_from("198.18.0.", 1, 100);
	st = rstats(1);
	CHECK_EQ(passed, 10);
	CHECK_EQ(st.new_keys, 10);
	CHECK_EQ(st.nk_refused, 90);
	CHECK(!xrl_keys_tracked_family(X, 4, &keys), "%s", xrl_errmsg());
	CHECK_EQ(keys, 10);
	/* a key in the table is metered as ever */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	/* with an aggregate: 10 new keys, then 15 more through the aggregate;
	 * once it refused, the rest never reach the table or the budget */
	passed = 0;
	passed += passes_from("198.19.0.", 1, 100);
	st = rstats(2);
	CHECK_EQ(passed, 25);
	CHECK_EQ(st.new_keys, 10);
	CHECK_EQ(st.nk_refused, 16);
	CHECK_EQ(st.agg_dropped, 75);
	CHECK(!xrl_keys_tracked_family(X, 4, &keys), "%s", xrl_errmsg());
	CHECK_EQ(keys, 20);
	CHECK_EQ(gstats().keys_inserted, 20);
	CHECK_EQ(xrl_keys_evicted_estimate(&(struct xrl_global_stats){ .keys_inserted = 20 }, keys), 0);
	/* a second later: 10 more new keys */
	xrl_test_clock_set(X, T0 + SEC);
	passed = 0;
	passed += passes_from("198.18.1.", 1, 50);
	CHECK_EQ(passed, 10);
	teardown();
}

/* Without new-keys, the default budget (half the table at once, then a
 * sixteenth a second) keeps a flood of new sources from evicting a real
 * source's drained bucket: it stays limited. */
static void test_new_keys_default_keeps_real_source(void)
{
	char src[32];
	int passed = 0;

	one_cpu();
	setup();	/* a table of 4096 keys */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 2 id 1"), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.19.255.1"), PASS);
	CHECK_EQ(run_from("198.19.255.1"), PASS);
	CHECK_EQ(run_from("198.19.255.1"), DROP);
	for (int i = 0; i < 6000; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		passed += run_from(src) == PASS;
	}
	CHECK_EQ(passed, 2048 - 1);	/* the real source took one */
	CHECK_EQ(rstats(1).nk_refused, 6000 - 2047);
	xrl_test_clock_set(X, T0 + 1);	/* past the cache's nanosecond: the bucket */
	CHECK_EQ(run_from("198.19.255.1"), DROP);
	CHECK_EQ(bucket_of(1, "198.19.255.1").tat != 0, 1);
	teardown();
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	if (!getenv("XRL_DEBUG"))
		libbpf_set_print(NULL);
	RUN(test_ipv4_limit);
	RUN(test_ipv6_slash64);
	RUN(test_key_lengths);
	RUN(test_parser_table);
	RUN(test_allow_deny);
	RUN(test_modes);
	RUN(test_most_specific_prefix);
	RUN(test_rule_change_next_packet);
	RUN(test_unchanged_rule_keeps_bucket);
	RUN(test_commit_all_or_nothing);
	RUN(test_failed_commit_keeps_state);
	RUN(test_rule_limit);
	RUN(test_watchdog_policies);
	RUN(test_concurrency_exact);
	RUN(test_rule_swap_atomic);
	RUN(test_no_rule_set);
	RUN(test_events_transitions);
	RUN(test_events_dry_run_rule);
	RUN(test_events_sampled_per_key);
	RUN(test_events_global_cap);
	RUN(test_fleet_lease_path);
	RUN(test_events_ring_full);
	RUN(test_algorithms);
	RUN(test_window_edge);
	RUN(test_byte_rates);
	RUN(test_rule_dry_run);
	RUN(test_concurrency_exact_windows);
	RUN(test_endpoint_rules);
	RUN(test_endpoint_specificity);
	RUN(test_endpoint_fragments);
	RUN(test_endpoint_tiny_fragments);
	RUN(test_gro_aggregate_segments);
	RUN(test_endpoint_commits);
	RUN(test_hot_cache_exact);
	RUN(test_hot_cache_ipv6_prefix);
	RUN(test_hot_cache_invalidated);
	RUN(test_hot_cache_thousand_sources);
	RUN(test_hot_cache_event_counts);
	RUN(test_hot_cache_only_where_exact);
	RUN(test_hot_cache_windows);
	RUN(test_hot_cache_bytes);
	RUN(test_hot_cache_endpoint);
	RUN(test_hot_cache_endpoint_two_classes);
	RUN(test_hot_cache_reset_evicted_key);
	RUN(test_hot_cache_evicted_window_key);
	RUN(test_small_burst_high_rate);
	RUN(test_precise_rule_userspace_now);
	RUN(test_aggregate);
	RUN(test_aggregate_two_cpus);
	RUN(test_aggregate_fresh_late_clock);
	RUN(test_new_keys);
	RUN(test_new_keys_default_keeps_real_source);
	return tl_summary();
}

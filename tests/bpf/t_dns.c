// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * DNS slip: every slip-th refused query of a key answered with a truncated
 * response built in place (XDP_TX); its bytes and checksums; every frame
 * that is not an answerable query dropped; the host's cap of answers.
 */
#include "harness.h"

#define TX	XDP_TX

/* CHECK_EQ with a formatted label */
#define CHECK_EQF(a, b, fmt, ...)						\
	do {									\
		unsigned long long _x = (a), _y = (b);				\
		CHECK(_x == _y, fmt ": %llu != %llu", ##__VA_ARGS__, _x, _y);	\
	} while (0)

/* A DNS message: header, then the question's name (wire form), QTYPE and
 * QCLASS, then `extra` bytes (an EDNS OPT record when edns). */
struct dnsq {
	const char *src;	/* NULL: 198.18.0.1 */
	int vlans;		/* 0, 1, 2 */
	uint8_t flags0, flags1;	/* 0x01, 0x00: a plain query with RD */
	int qd_adj;		/* added to QDCOUNT 1 */
	const uint8_t *name;	/* wire form; NULL: example.com */
	size_t namelen;
	int no_tail;		/* bytes of QTYPE/QCLASS left out (1..4) */
	int edns;		/* an OPT record (ARCOUNT 1) */
	int pad;		/* Ethernet padding after the IP packet */
	int ulen_adj;		/* added to the UDP length field */
	uint16_t sport;		/* 0: 40000 */
	int v4_opts;		/* IPv4 option words */
	int frag;		/* IPv4: a first fragment (MF); IPv6: a fragment header */
	int dstopts;		/* IPv6: a destination options header */
};

static const uint8_t example_com[] = { 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0 };

/* Offsets of a built frame: L3, L4 (UDP) and the DNS message. */
struct off {
	size_t l3, udp, dns, qlen;	/* qlen: header + question */
};

static size_t build_q(uint8_t *buf, size_t size, const struct dnsq *q, struct off *o)
{
	const char *src = q->src ? q->src : "198.18.0.1";
	bool v6 = strchr(src, ':') != NULL;
	const uint8_t *name = q->name ? q->name : example_com;
	size_t nlen = q->name ? q->namelen : sizeof(example_com);
	uint8_t msg[1024];
	size_t m = 0, len, ext = 0;
	struct frame f = { .src = src, .pad = q->pad, .opt_words = q->v4_opts };

	memset(msg, 0, sizeof(msg));
	msg[0] = 0xab, msg[1] = 0xcd;			/* ID */
	msg[2] = q->flags0, msg[3] = q->flags1;
	put16(msg + 4, 1 + q->qd_adj);
	put16(msg + 10, q->edns ? 1 : 0);
	m = 12;
	memcpy(msg + m, name, nlen);
	m += nlen;
	put16(msg + m, 1);				/* QTYPE A */
	put16(msg + m + 2, 1);				/* QCLASS IN */
	m += 4 - q->no_tail;
	o->qlen = m;
	if (q->edns) {
		/* root name, TYPE OPT, UDP size 1232, no rcode/flags, no data */
		const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };

		memcpy(msg + m, opt, sizeof(opt));
		m += sizeof(opt);
	}
	if (q->vlans == 2)
		f.tags[0] = ETH_P_8021AD, f.tags[1] = ETH_P_8021Q;
	else if (q->vlans == 1)
		f.tags[0] = ETH_P_8021Q;
	if (v6 && q->frag)
		f.ext[ext++] = (struct pkt_ext){ .type = IPPROTO_FRAGMENT, .more = 1 };
	if (v6 && q->dstopts)
		f.ext[ext++] = (struct pkt_ext){ .type = IPPROTO_DSTOPTS, .hdrlen = 0 };
	f.n_ext = ext;
	if (!v6 && q->frag)
		f.more_frags = 1;
	f.payload = m;
	len = frame_build(buf, size, &f);
	o->l3 = 14 + 4 * (size_t)q->vlans;
	o->udp = o->l3 + (v6 ? 40 + 8 * ext : 20 + 4 * (size_t)q->v4_opts);
	o->dns = o->udp + 8;
	memcpy(buf + o->dns, msg, m);
	put16(buf + o->udp + 2, 53);
	put16(buf + o->udp, q->sport ? q->sport : 40000);
	if (q->ulen_adj)
		put16(buf + o->udp + 4, 8 + m + q->ulen_adj);
	return len;
}

/* Run a frame; the frame out (size in *outlen). */
static int run_out(const uint8_t *in, size_t len, uint8_t *out, size_t *outlen)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = 1024, .repeat = 1);

	if (bpf_prog_test_run_opts(xrl_prog_fd(X), &o))
		return -1;
	*outlen = o.data_size_out;
	return o.retval;
}

static int run_q(const struct dnsq *q)
{
	uint8_t buf[1024], out[1024];
	size_t outlen;
	struct off o;

	return run_out(buf, build_q(buf, sizeof(buf), q, &o), out, &outlen);
}

/* The one's-complement sum of n bytes, folded, not complemented. */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (p[i] << 8) | p[i + 1];
	if (n & 1)
		s += p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* The response to a query: every byte it must have, checksums recomputed.
 * Returns the number of failed checks. */
static int check_answer(const struct dnsq *q, const char *what)
{
	uint8_t in[1024], out[1024];
	size_t len, outlen;
	struct off o;
	int v6 = q->src && strchr(q->src, ':'), failed = tl_cur_failed;
	int ret;
	uint32_t s;

	len = build_q(in, sizeof(in), q, &o);
	ret = run_out(in, len, out, &outlen);
	CHECK_EQF(ret, TX, "%s: answered", what);
	if (ret != TX)
		return 1;
	CHECK_EQF(outlen, o.dns + o.qlen, "%s: cut right after the question", what);
	CHECK(outlen <= len, "%s: never larger than the query (%zu > %zu)", what, outlen, len);
	CHECK(!memcmp(out, in + 6, 6) && !memcmp(out + 6, in, 6), "%s: MACs swapped", what);
	CHECK(!memcmp(out + 12, in + 12, o.l3 - 12), "%s: the VLAN tags and ethertype kept", what);
	if (!v6) {
		CHECK(!memcmp(out + o.l3 + 12, in + o.l3 + 16, 4) &&
		      !memcmp(out + o.l3 + 16, in + o.l3 + 12, 4), "%s: IPv4 addresses swapped", what);
		CHECK_EQF(out[o.l3 + 2] << 8 | out[o.l3 + 3], 20 + 8 + o.qlen, "%s: IPv4 total length", what);
		CHECK_EQF(sum16(out + o.l3, 20, 0), 0xffff, "%s: IPv4 header checksum", what);
		s = sum16(out + o.l3 + 12, 8, IPPROTO_UDP + 8 + o.qlen);
	} else {
		CHECK(!memcmp(out + o.l3 + 8, in + o.l3 + 24, 16) &&
		      !memcmp(out + o.l3 + 24, in + o.l3 + 8, 16), "%s: IPv6 addresses swapped", what);
		CHECK_EQF(out[o.l3 + 4] << 8 | out[o.l3 + 5], 8 + o.qlen, "%s: IPv6 payload length", what);
		s = sum16(out + o.l3 + 8, 32, IPPROTO_UDP + 8 + o.qlen);
	}
	CHECK(!memcmp(out + o.udp, in + o.udp + 2, 2) && !memcmp(out + o.udp + 2, in + o.udp, 2),
	      "%s: ports swapped", what);
	CHECK_EQF(out[o.udp + 4] << 8 | out[o.udp + 5], 8 + o.qlen, "%s: UDP length", what);
	CHECK(out[o.udp + 6] || out[o.udp + 7], "%s: a UDP checksum (mandatory for IPv6)", what);
	CHECK_EQF(sum16(out + o.udp, 8 + o.qlen, s), 0xffff, "%s: UDP checksum", what);
	CHECK(out[o.dns] == 0xab && out[o.dns + 1] == 0xcd, "%s: the query's ID", what);
	CHECK_EQF(out[o.dns + 2], 0x82 | (q->flags0 & 1), "%s: QR=1, opcode 0, TC=1, RD as asked", what);
	CHECK_EQF(out[o.dns + 3], 0, "%s: RA, Z, AD, CD 0, RCODE 0", what);
	CHECK(out[o.dns + 4] == 0 && out[o.dns + 5] == 1, "%s: QDCOUNT 1", what);
	CHECK(!memcmp(out + o.dns + 6, "\0\0\0\0\0\0", 6), "%s: ANCOUNT, NSCOUNT, ARCOUNT 0", what);
	CHECK(!memcmp(out + o.dns + 12, in + o.dns + 12, o.qlen - 12), "%s: the question as asked", what);
	return tl_cur_failed - failed;
}

#define SLIP1	"rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 1 id 1 slip 1", \
		"rule add ::/0 proto udp dport 53 rate 1/h burst 1 id 2 slip 1"

/* slip 2: of a key's refused queries, exactly every second answered; the
 * hot-key cache never answers for them (it would skip the count). */
TEST(dns_slip_every_second)
{
	struct dnsq q = { .flags0 = 1 };
	int tx = 0, drop = 0, r;

	setup();
	one_cpu();
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 2 id 1 slip 2"),
	      "rules: %s", xrl_errmsg());
	CHECK_EQ(run_q(&q), PASS, "first query within the burst");
	CHECK_EQ(run_q(&q), PASS, "second query within the burst");
	for (int i = 1; i <= 64; i++) {
		r = run_q(&q);
		tx += r == TX;
		drop += r == DROP;
		if (r != (i % 2 ? DROP : TX)) {
			CHECK(0, "refusal %d: verdict %d", i, r);
			break;
		}
	}
	CHECK_EQ(tx, 32, "every second refusal answered");
	CHECK_EQ(drop, 32, "the others dropped");
	CHECK_EQ(rstats(1).slipped_packets, 32, "slipped_packets");
	CHECK_EQ(rstats(1).dropped_packets, 64, "dropped_packets: every refusal, answered or not");
	CHECK_EQ(rstats(1).hot_dropped, 0, "no refusal of a slipping rule served by the cache");
	CHECK_EQ(rstats(1).slip_invalid, 0, "slip_invalid");
	CHECK_EQ(gstats().answered_packets, 32, "global: answered");
	CHECK_EQ(gstats().passed_packets[XRL_MODE_ENFORCE], 2, "global: answers are not passes");
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 32, "global: answers are not drops");
	/* per key: another source counts its own refusals */
	q.src = "198.18.0.2";
	CHECK_EQ(run_q(&q), PASS, "another key: its burst");
	CHECK_EQ(run_q(&q), PASS, "another key: its burst");
	CHECK_EQ(run_q(&q), DROP, "another key: its first refusal");
	q.src = "198.18.0.1";
	CHECK_EQ(run_q(&q), DROP, "the first key: its 65th refusal");
	q.src = "198.18.0.2";
	CHECK_EQ(run_q(&q), TX, "another key: its second refusal");
	/* the same without slip: the cache answers, nothing is sent back */
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 1 id 1"),
	      "rules: %s", xrl_errmsg());
	r = 0;
	for (int i = 0; i < 20; i++)
		r += run_q(&q) == TX;
	CHECK_EQ(r, 0, "no slip: never answered");
	CHECK(rstats(1).hot_dropped > 0, "no slip: the cache answers");
	teardown();
}

/* The response's bytes, IPv4 and IPv6, VLAN tags, EDNS, padding. */
TEST(dns_slip_answer_bytes)
{
	setup();
	one_cpu();
	CHECK(!RULES(SLIP1), "rules: %s", xrl_errmsg());
	CHECK_EQ(run_q(&(struct dnsq){ .flags0 = 1 }), PASS, "IPv4: the burst");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "2001:db8::1" }), PASS, "IPv6: the burst");
	check_answer(&(struct dnsq){ .flags0 = 1 }, "IPv4");
	check_answer(&(struct dnsq){ .flags0 = 0 }, "IPv4 without RD");
	check_answer(&(struct dnsq){ .flags0 = 1, .flags1 = 0x30 }, "AD and CD asked");
	check_answer(&(struct dnsq){ .flags0 = 1, .edns = 1 }, "IPv4 with EDNS: the OPT record dropped");
	check_answer(&(struct dnsq){ .flags0 = 1, .pad = 20 }, "IPv4 with Ethernet padding");
	check_answer(&(struct dnsq){ .flags0 = 1, .vlans = 1 }, "IPv4 with a VLAN tag");
	check_answer(&(struct dnsq){ .flags0 = 1, .vlans = 2, .edns = 1 }, "IPv4 with two tags");
	check_answer(&(struct dnsq){ .src = "2001:db8::1", .flags0 = 1 }, "IPv6");
	check_answer(&(struct dnsq){ .src = "2001:db8::1", .edns = 1, .vlans = 2 },
		     "IPv6 with two tags and EDNS");
	check_answer(&(struct dnsq){ .src = "2001:db8::1", .vlans = 1, .pad = 3 },
		     "IPv6 with a tag and padding");
	/* the root name alone */
	check_answer(&(struct dnsq){ .name = (const uint8_t[]){ 0 }, .namelen = 1 }, "the root");
	CHECK_EQ(rstats(1).slipped_packets, 8, "IPv4: slipped");
	CHECK_EQ(rstats(2).slipped_packets, 3, "IPv6: slipped");
	teardown();
}

/* A name of these label lengths, wire form, into buf; its length. */
static size_t name_of(uint8_t *buf, const int *labels, int n)
{
	size_t l = 0;

	for (int i = 0; i < n; i++) {
		buf[l++] = labels[i];
		memset(buf + l, 'a', labels[i]);
		l += labels[i];
	}
	buf[l++] = 0;
	return l;
}

/* The name's bounds: 255 bytes and 127 labels answered, one more dropped;
 * labels of 63 bytes, not 64. */
TEST(dns_slip_name_bounds)
{
	uint8_t n255[300], n256[300], n127[300], n63[80], n64[80], nlong[300];
	int l255[] = { 63, 63, 63, 61 }, l256[] = { 63, 63, 63, 62 }, ones[128], l63[] = { 63 },
	    l64[] = { 64 };
	size_t s255, s256, s127, s128, s63, s64;
	struct xrl_rule_stats st;

	for (int i = 0; i < 128; i++)
		ones[i] = 1;
	s255 = name_of(n255, l255, 4);
	s256 = name_of(n256, l256, 4);
	s127 = name_of(n127, ones, 127);
	s128 = name_of(nlong, ones, 128);
	s63 = name_of(n63, l63, 1);
	s64 = name_of(n64, l64, 1);
	CHECK(s255 == 255 && s256 == 256 && s127 == 255 && s128 == 257, "the names' lengths");
	setup();
	one_cpu();
	CHECK(!RULES(SLIP1), "rules: %s", xrl_errmsg());
	CHECK_EQ(run_q(&(struct dnsq){ 0 }), PASS, "the burst");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "2001:db8::2" }), PASS, "IPv6: the burst");
	check_answer(&(struct dnsq){ .name = n255, .namelen = s255 }, "a name of 255 bytes");
	check_answer(&(struct dnsq){ .name = n127, .namelen = s127 }, "127 labels");
	check_answer(&(struct dnsq){ .name = n63, .namelen = s63 }, "a label of 63 bytes");
	check_answer(&(struct dnsq){ .name = n255, .namelen = s255, .vlans = 2, .edns = 1,
				     .src = "2001:db8::2" }, "255 bytes, IPv6, two tags");
	st = rstats(1);
	CHECK_EQ(run_q(&(struct dnsq){ .name = n256, .namelen = s256 }), DROP, "a name of 256 bytes");
	CHECK_EQ(run_q(&(struct dnsq){ .name = nlong, .namelen = s128 }), DROP, "128 labels");
	CHECK_EQ(run_q(&(struct dnsq){ .name = n64, .namelen = s64 }), DROP, "a label of 64 bytes");
	CHECK_EQ(rstats(1).slip_invalid - st.slip_invalid, 3, "counted as not answerable");
	teardown();
}

/* Every frame that is not one answerable query: dropped, not answered. */
TEST(dns_slip_refuse_cases)
{
	static const uint8_t ptr[] = { 3, 'w', 'w', 'w', 0xc0, 12 };
	static const uint8_t reserved[] = { 0x80, 1, 0 };
	static const uint8_t unterminated[] = { 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e' };
	static const struct { struct dnsq q; const char *what; } cases[] = {
		{ { .flags0 = 0x80 }, "a response (QR=1)" },
		{ { .flags0 = 0x80 | 0x02 }, "a truncated response" },
		{ { .flags0 = 1 << 3 }, "opcode IQUERY" },
		{ { .flags0 = 5 << 3 }, "opcode UPDATE" },
		{ { .qd_adj = -1 }, "QDCOUNT 0" },
		{ { .qd_adj = 1 }, "QDCOUNT 2" },
		{ { .name = ptr, .namelen = sizeof(ptr) }, "a compression pointer" },
		{ { .name = reserved, .namelen = sizeof(reserved) }, "a reserved label type" },
		{ { .name = unterminated, .namelen = sizeof(unterminated), .no_tail = 4 },
		  "a name cut by the packet's end" },
		{ { .no_tail = 1 }, "QCLASS cut short" },
		{ { .no_tail = 4 }, "no QTYPE and QCLASS" },
		{ { .ulen_adj = -2 }, "a UDP length shorter than the packet" },
		{ { .ulen_adj = 2 }, "a UDP length longer than the packet" },
		{ { .v4_opts = 1 }, "IPv4 options" },
		{ { .frag = 1 }, "an IPv4 first fragment" },
		{ { .src = "2001:db8::1", .frag = 1 }, "an IPv6 first fragment" },
		{ { .src = "2001:db8::1", .dstopts = 1 }, "an IPv6 extension header" },
		{ { .edns = 1, .flags0 = 0x80 }, "a response with EDNS" },
	};
	uint8_t buf[1024];
	struct off o;
	size_t len;

	setup();
	one_cpu();
	CHECK(!RULES(SLIP1), "rules: %s", xrl_errmsg());
	CHECK_EQ(run_q(&(struct dnsq){ 0 }), PASS, "IPv4: the burst");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "2001:db8::1" }), PASS, "IPv6: the burst");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQF(run_q(&cases[i].q), DROP, "%s: dropped", cases[i].what);
	/* a payload of zeros (18 bytes): not DNS (QDCOUNT 0) */
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a non-DNS payload");
	/* shorter than a DNS header */
	len = build_q(buf, sizeof(buf), &(struct dnsq){ 0 }, &o);
	{
		struct frame f = { .src = "198.18.0.1", .payload = 11 };
		uint8_t b[128];
		size_t l = frame_build(b, sizeof(b), &f);

		memcpy(b + 42, buf + o.dns, 11);
		CHECK_EQ(run_raw(b, l), DROP, "11 bytes of DNS header");
	}
	/* source port 0, a multicast source, a multicast source MAC */
	CHECK_EQ(run_q(&(struct dnsq){ 0 }), TX, "a good query: answered");
	len = build_q(buf, sizeof(buf), &(struct dnsq){ 0 }, &o);
	put16(buf + o.udp, 0);
	CHECK_EQ(run_raw(buf, len), DROP, "source port 0");
	len = build_q(buf, sizeof(buf), &(struct dnsq){ 0 }, &o);
	buf[6] |= 1;
	CHECK_EQ(run_raw(buf, len), DROP, "a multicast source MAC");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "224.0.0.1" }), PASS, "a multicast source: its burst");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "224.0.0.1" }), DROP, "a multicast source");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "ff02::1" }), PASS, "IPv6 multicast: its burst");
	CHECK_EQ(run_q(&(struct dnsq){ .src = "ff02::1" }), DROP, "an IPv6 multicast source");
	CHECK_EQ(rstats(1).slipped_packets, 1, "IPv4: only the good query answered");
	CHECK_EQ(rstats(2).slipped_packets, 0, "IPv6: none answered");
	CHECK_EQ(rstats(1).slip_invalid + rstats(2).slip_invalid,
		 sizeof(cases) / sizeof(cases[0]) + 2 + 2 + 2,
		 "every refused case counted as not answerable");
	CHECK_EQ(gstats().answered_packets, 1, "global: answered");
	teardown();
}

/* Off, dry-run (the rule's and the mode's): never answered. */
TEST(dns_slip_off_and_dry_run)
{
	int tx = 0;

	setup();
	one_cpu();
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 1 id 1 slip 0"),
	      "rules: %s", xrl_errmsg());
	for (int i = 0; i < 10; i++)
		tx += run_q(&(struct dnsq){ 0 }) == TX;
	CHECK_EQ(tx, 0, "slip 0: never");
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 1 id 1 slip 1 dry-run"),
	      "rules: %s", xrl_errmsg());
	for (int i = 0; i < 10; i++)
		tx += run_q(&(struct dnsq){ 0 }) == TX;
	CHECK_EQ(tx, 0, "the rule's dry-run: never");
	CHECK(!RULES("rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 1 id 1 slip 1"),
	      "rules: %s", xrl_errmsg());
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "mode: %s", xrl_errmsg());
	for (int i = 0; i < 10; i++)
		tx += run_q(&(struct dnsq){ 0 }) == TX;
	CHECK_EQ(tx, 0, "the dry-run mode: never");
	CHECK(!xrl_mode_set(X, XRL_MODE_ENFORCE), "mode: %s", xrl_errmsg());
	for (int i = 0; i < 10; i++)
		tx += run_q(&(struct dnsq){ 0 }) == TX;
	CHECK_EQ(tx, 10, "enforcing: every refusal");
	teardown();
}

/* The host's cap: its burst, then its rate, whatever the keys. */
TEST(dns_slip_cap)
{
	int tx = 0, drop = 0;

	setup();
	one_cpu();
	CHECK(!RULES(SLIP1), "rules: %s", xrl_errmsg());
	CHECK_EQ(run_q(&(struct dnsq){ 0 }), PASS, "the burst");
	for (int i = 0; i < XRL_SLIP_CAP_BURST + 100; i++) {
		int r = run_q(&(struct dnsq){ 0 });

		tx += r == TX;
		drop += r == DROP;
	}
	CHECK_EQ(tx, XRL_SLIP_CAP_BURST, "the cap's burst answered");
	CHECK_EQ(drop, 100, "the rest dropped");
	CHECK_EQ(rstats(1).slip_capped, 100, "counted as capped");
	/* 10 ms later: 10 ms of the cap's rate */
	xrl_test_clock_set(X, T0 + SEC / 100);
	tx = 0;
	for (int i = 0; i < 200; i++)
		tx += run_q(&(struct dnsq){ .src = i % 2 ? "198.18.0.1" : "2001:db8::9" }) == TX;
	CHECK_EQ(tx, XRL_SLIP_CAP_RATE / 100, "then its rate, both families together");
	teardown();
}

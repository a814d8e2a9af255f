// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * SYN cookies (rule option syn-cookies): the SYN-ACK's bytes, the ACK's
 * check, the verified table, what is dropped, through BPF_PROG_TEST_RUN
 * with the kernel's own cookie helpers.
 */
#include "harness.h"

#define RST	0x04
#define FIN	0x01

/* Linux's SYN options: MSS 1460, SACK permitted, timestamp, NOP, wscale 7 */
static const uint8_t linux_opts[] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 1, 3, 3, 7,
};

struct seg {
	int family;
	const char *src, *dst;
	uint16_t sport, dport;
	uint8_t flags;
	uint32_t seq, ack;
	const uint8_t *opts;	/* a multiple of 4 bytes */
	size_t olen;
	bool vlan;		/* one 802.1Q tag */
	uint8_t doff;		/* the data offset written; 0: 5 + olen / 4 */
	uint8_t ip_opts;	/* IPv4 option words (NOPs) */
};

static uint32_t sum16(const uint8_t *b, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (b[i] << 8) | b[i + 1];
	if (len & 1)
		s += b[len - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/* The TCP checksum of a segment at l4 (len bytes) under its IP header:
 * 0 when the segment's own checksum is right. */
static uint16_t tcp_csum(const uint8_t *ip, int family, const uint8_t *l4, size_t len)
{
	uint32_t s = 0;

	if (family == 4)
		s = sum16(ip + 12, 8, 0);
	else
		s = sum16(ip + 8, 32, 0);
	s += IPPROTO_TCP + len;
	return fold(sum16(l4, len, s));
}

static size_t seg_build(uint8_t *b, const struct seg *g)
{
	size_t l2 = 14 + (g->vlan ? 4 : 0), l3, tl = 20 + g->olen;
	uint8_t *ip = b + l2, *th;

	memset(b, 0, 256);
	memcpy(b, "\x02\x00\x00\x00\x00\x01", 6);	/* destination: us */
	memcpy(b + 6, "\x02\x00\x00\x00\x00\x02", 6);
	if (g->vlan) {
		put16(b + 12, ETH_P_8021Q);
		put16(b + 14, 42);
	}
	put16(b + l2 - 2, g->family == 4 ? ETH_P_IP : ETH_P_IPV6);
	if (g->family == 4) {
		l3 = 20 + 4 * g->ip_opts;
		ip[0] = 0x40 | (l3 / 4);
		put16(ip + 2, l3 + tl);
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		inet_pton(AF_INET, g->src, ip + 12);
		inet_pton(AF_INET, g->dst ? g->dst : "198.51.100.1", ip + 16);
		memset(ip + 20, 1, l3 - 20);
		memcpy(ip + 10, (uint16_t[]){ csum16(ip, l3) }, 2);
	} else {
		l3 = 40;
		ip[0] = 0x60;
		put16(ip + 4, tl);
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		inet_pton(AF_INET6, g->src, ip + 8);
		inet_pton(AF_INET6, g->dst ? g->dst : "2001:db8::80", ip + 24);
	}
	th = ip + l3;
	put16(th, g->sport);
	put16(th + 2, g->dport);
	memcpy(th + 4, (uint32_t[]){ htonl(g->seq) }, 4);
	memcpy(th + 8, (uint32_t[]){ htonl(g->ack) }, 4);
	th[12] = (g->doff ? g->doff : 5 + g->olen / 4) << 4;
	th[13] = g->flags;
	put16(th + 14, 64240);
	if (g->olen)
		memcpy(th + 20, g->opts, g->olen);
	memcpy(th + 16, (uint16_t[]){ htons(tcp_csum(ip, g->family, th, tl)) }, 2);
	return l2 + l3 + tl;
}

/* Run one frame; the answer's bytes in out (its length in *outlen). */
static int run_out(const uint8_t *in, size_t len, uint8_t *out, size_t *outlen)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = 512, .repeat = 1);

	if (bpf_prog_test_run_opts(xrl_prog_fd(X), &o))
		return -1;
	*outlen = o.data_size_out;
	return o.retval;
}

static int send_seg(const struct seg *g)
{
	uint8_t in[256], out[512];
	size_t n;

	return run_out(in, seg_build(in, g), out, &n);
}

static struct xrl_sc_stats sc_of(__u32 id)
{
	struct xrl_sc_stats s = {};
	struct xrl_rule_entry *v;
	size_t n;

	if (xrl_rules_get(X, &v, &n))
		return s;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id == id)
			xrl_sc_stats_get(X, v[i].r.slot, &s);
	free(v);
	return s;
}

static __u64 verified_entries(void)
{
	struct xrl_sc_table t = {};

	xrl_sc_table_get(X, &t);
	return t.entries;
}

static __u64 answers(void)
{
	struct xrl_answer_stats a = {};

	xrl_answers_get(X, &a);
	return a.tx_packets;
}

static unsigned long long buckets(void)
{
	unsigned long long n4 = 0, n6 = 0;

	xrl_keys_tracked_family(X, 4, &n4);
	xrl_keys_tracked_family(X, 6, &n6);
	return n4 + n6;
}

#define SC_RULES()							\
	RULES("rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies rate 100/s burst 100 id 5", \
	      "rule add ::/0 proto tcp dport 80 syn-cookies rate 100/s burst 100 id 6", \
	      "rule add 0.0.0.0/0 proto tcp dport 22 rate 100/s burst 100 id 7")

/* A SYN answered: the SYN-ACK's bytes; then its ACK verifies the source. */
static void synack_case(int family, bool vlan)
{
	const char *src = family == 4 ? "198.18.0.7" : "2001:db8:1::7";
	struct seg syn = { .family = family, .src = src, .sport = 40000, .dport = 80,
			   .flags = SYN, .seq = 1000, .opts = linux_opts,
			   .olen = sizeof(linux_opts), .vlan = vlan };
	uint8_t in[256], out[512], *ip, *th;
	size_t len = seg_build(in, &syn), n = 0, l2 = vlan ? 18 : 14, l3 = family == 4 ? 20 : 40;
	uint32_t cookie, ack, tsval, tsecr;
	__u32 id = family == 4 ? 5 : 6;
	size_t tl;

	CHECK_EQ(run_out(in, len, out, &n), XDP_TX, "a SYN from an unverified source is answered");
	CHECK(n <= len, "the SYN-ACK (%zu bytes) is no longer than the SYN (%zu)", n, len);
	CHECK(!memcmp(out, in + 6, 6) && !memcmp(out + 6, in, 6), "MACs swapped");
	if (vlan)
		CHECK(!memcmp(out + 12, in + 12, 6), "the VLAN tag kept");
	ip = out + l2;
	if (family == 4) {
		CHECK(!memcmp(ip + 12, in + l2 + 16, 4) && !memcmp(ip + 16, in + l2 + 12, 4),
		      "addresses swapped");
		CHECK_EQ(csum16(ip, 20), 0, "IPv4 header checksum");
		CHECK_EQ((size_t)((ip[2] << 8) | ip[3]), n - l2, "IPv4 total length");
	} else {
		CHECK(!memcmp(ip + 8, in + l2 + 24, 16) && !memcmp(ip + 24, in + l2 + 8, 16),
		      "addresses swapped");
		CHECK_EQ((size_t)((ip[4] << 8) | ip[5]), n - l2 - 40, "IPv6 payload length");
	}
	th = ip + l3;
	tl = n - l2 - l3;
	CHECK_EQ((th[0] << 8 | th[1]), 80, "source port: the server's");
	CHECK_EQ((th[2] << 8 | th[3]), 40000, "destination port: the client's");
	memcpy(&ack, th + 8, 4);
	memcpy(&cookie, th + 4, 4);
	cookie = ntohl(cookie);
	CHECK_EQ(ntohl(ack), 1001, "ACK = the SYN's seq + 1");
	CHECK_EQ(th[13], SYN | ACK, "flags: SYN, ACK");
	CHECK_EQ((size_t)(th[12] >> 4) * 4, tl, "data offset: the header, no payload");
	CHECK_EQ(tcp_csum(ip, family, th, tl), 0, "TCP checksum");
	/* MSS, SACK permitted + timestamp, NOP + window scale */
	CHECK_EQ(tl, 40, "every option of the SYN echoed");
	CHECK(th[20] == 2 && th[21] == 4 && (th[22] << 8 | th[23]) == (family == 4 ? 1460 : 1440),
	      "MSS: the host's");
	CHECK(th[24] == 4 && th[25] == 2 && th[26] == 8 && th[27] == 10, "SACK permitted, timestamp");
	memcpy(&tsval, th + 28, 4);
	memcpy(&tsecr, th + 32, 4);
	CHECK_EQ(ntohl(tsecr), 0x11223344, "timestamp echo: the SYN's");
	CHECK_EQ(ntohl(tsval) & 0xf, 7, "the client's window scale in the timestamp");
	CHECK(ntohl(tsval) & 0x10, "SACK in the timestamp");
	CHECK(th[36] == 1 && th[37] == 3 && th[38] == 3 && th[39] == XRL_SC_WSCALE, "window scale");
	CHECK_EQ(sc_of(id).cookies_sent, 1, "cookies sent");
	CHECK_EQ(rstats(id).passed_packets + rstats(id).dropped_packets, 0,
		 "the rule's meter never saw it");
	CHECK_EQ(buckets(), 0, "no bucket");
	CHECK_EQ(verified_entries(), 0, "not verified by a SYN");

	/* the handshake's ACK, with the cookie */
	struct seg a = { .family = family, .src = src, .sport = 40000, .dport = 80,
			 .flags = ACK, .seq = 1001, .ack = cookie + 1, .vlan = vlan };

	CHECK_EQ(send_seg(&a), XDP_PASS, "the cookie's ACK passes to the stack");
	CHECK_EQ(sc_of(id).acks_valid, 1, "a valid ACK");
	CHECK_EQ(sc_of(id).verified, 1, "a source verified");
	CHECK_EQ(verified_entries(), 1, "in the verified table");
	CHECK_EQ(rstats(id).passed_packets, 1, "the ACK met the rule's meter");
	/* from now on: the rule's limits as before */
	a.ack = 12345;
	CHECK_EQ(send_seg(&a), XDP_PASS, "a verified source's packet passes without a cookie");
	CHECK_EQ(send_seg(&syn), XDP_PASS, "a verified source's SYN goes to the stack");
	CHECK_EQ(rstats(id).passed_packets, 3, "metered by the rule");
	CHECK_EQ(sc_of(id).cookies_sent, 1, "no second cookie");
}

TEST(syncookie_synack_v4)
{
	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	synack_case(4, false);
	CHECK_EQ(answers(), 1, "one answer");
	teardown();
}

TEST(syncookie_synack_v6)
{
	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	synack_case(6, false);
	teardown();
}

/* An IPv6 source is verified per /64: another address of the verified
 * one's /64 is verified, an address of the next /64 is not. */
TEST(syncookie_v6_per_64)
{
	struct seg a = { .family = 6, .src = "2001:db8:1::7:8", .sport = 41000, .dport = 80,
			 .flags = ACK, .seq = 5, .ack = 9 };

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	synack_case(6, false);
	CHECK_EQ(send_seg(&a), XDP_PASS, "the same /64: verified");
	CHECK_EQ(verified_entries(), 1, "one entry for the /64");
	a.src = "2001:db8:1:1::7";
	CHECK_EQ(send_seg(&a), XDP_DROP, "the next /64: not verified");
	teardown();
}

TEST(syncookie_synack_vlan)
{
	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	synack_case(4, true);
	teardown();
}

/* A SYN without options gets none; one with MSS only, MSS only; without
 * a timestamp no window scale or SACK (the ACK could not bring them back). */
TEST(syncookie_synack_options)
{
	static const uint8_t mss_ws_sack[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1 };
	struct seg syn = { .family = 4, .src = "198.18.0.8", .sport = 1234, .dport = 80,
			   .flags = SYN, .seq = 7 };
	uint8_t in[256], out[512];
	size_t len, n;

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	len = seg_build(in, &syn);
	CHECK_EQ(run_out(in, len, out, &n), XDP_TX, "a SYN without options is answered");
	CHECK_EQ(n, 54, "a SYN-ACK without options");
	CHECK_EQ(out[14 + 20 + 12] >> 4, 5, "data offset 5");
	CHECK_EQ(tcp_csum(out + 14, 4, out + 34, 20), 0, "TCP checksum");
	syn.opts = mss_ws_sack;
	syn.olen = sizeof(mss_ws_sack);
	len = seg_build(in, &syn);
	CHECK_EQ(run_out(in, len, out, &n), XDP_TX, "MSS, window scale, SACK: answered");
	CHECK_EQ(n, 58, "MSS alone: no timestamp to carry the others");
	CHECK(out[54] == 2 && out[55] == 4, "the MSS option");
	CHECK_EQ(tcp_csum(out + 14, 4, out + 34, 24), 0, "TCP checksum");
	teardown();
}

/* An ACK with a cookie the kernel never made: checked, dropped, counted;
 * no table entry, no bucket. */
TEST(syncookie_forged_ack)
{
	struct seg a = { .family = 4, .src = "198.18.0.9", .sport = 5555, .dport = 80,
			 .flags = ACK, .seq = 77 };

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	for (int i = 0; i < 100; i++) {
		a.ack = 0x9e3779b9u * (i + 1);
		a.sport = 5555 + i;
		CHECK_EQ(send_seg(&a), XDP_DROP, "a forged cookie is dropped");
	}
	CHECK_EQ(sc_of(5).acks_invalid, 100, "invalid ACKs counted");
	CHECK_EQ(sc_of(5).acks_valid, 0, "none valid");
	CHECK_EQ(verified_entries(), 0, "no table entry");
	CHECK_EQ(buckets(), 0, "no bucket");
	a.family = 6;
	a.src = "2001:db8:1::9";
	CHECK_EQ(send_seg(&a), XDP_DROP, "IPv6: a forged cookie is dropped");
	CHECK_EQ(sc_of(6).acks_invalid, 1, "IPv6: counted");
	teardown();
}

/* An unverified source's other packets, and SYNs that cannot be answered
 * exactly, are dropped, never answered. */
TEST(syncookie_malformed)
{
	static const uint8_t past_end[] = { 1, 1, 2, 10 };	/* an MSS option of 10 bytes */
	static const uint8_t zero_len[] = { 2, 0, 1, 1 };
	struct seg g = { .family = 4, .src = "198.18.0.10", .sport = 999, .dport = 80,
			 .flags = SYN, .seq = 1 };
	__u64 dropped;

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	g.opts = past_end;
	g.olen = sizeof(past_end);
	CHECK_EQ(send_seg(&g), XDP_DROP, "an option past the header");
	g.opts = zero_len;
	g.olen = sizeof(zero_len);
	CHECK_EQ(send_seg(&g), XDP_DROP, "an option of length 0");
	g.opts = NULL;
	g.olen = 0;
	g.ip_opts = 1;
	CHECK_EQ(send_seg(&g), XDP_DROP, "IPv4 options: not answered");
	g.ip_opts = 0;
	g.flags = RST;
	CHECK_EQ(send_seg(&g), XDP_DROP, "an unverified RST");
	g.flags = SYN | FIN;
	CHECK_EQ(send_seg(&g), XDP_DROP, "SYN with FIN");
	g.flags = ACK | RST;
	CHECK_EQ(send_seg(&g), XDP_DROP, "ACK with RST");
	g.flags = 0;
	CHECK_EQ(send_seg(&g), XDP_DROP, "no flags");
	dropped = sc_of(5).unverified_dropped;
	CHECK_EQ(dropped, 7, "each counted");
	CHECK_EQ(sc_of(5).cookies_sent, 0, "none answered");
	CHECK_EQ(answers(), 0, "no answer at all");
	CHECK_EQ(buckets(), 0, "no bucket");
	teardown();
}

/* A rule without syn-cookies, another port, dry-run: as before. */
TEST(syncookie_only_its_rule)
{
	struct seg g = { .family = 4, .src = "198.18.0.11", .sport = 999, .dport = 22,
			 .flags = SYN, .seq = 1 };

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	CHECK_EQ(send_seg(&g), XDP_PASS, "a rule without syn-cookies");
	g.dport = 443;
	CHECK_EQ(send_seg(&g), XDP_PASS, "no endpoint rule");
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "dry-run");
	g.dport = 80;
	CHECK_EQ(send_seg(&g), XDP_PASS, "dry-run: no answer");
	CHECK(!xrl_mode_set(X, XRL_MODE_ENFORCE), "enforce");
	CHECK_EQ(send_seg(&g), XDP_TX, "enforcing: answered");
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies dry-run rate 1/s burst 1 id 5"),
	      "a dry-run rule: %s", xrl_errmsg());
	CHECK_EQ(send_seg(&g), XDP_PASS, "a dry-run rule: no answer");
	teardown();
}

/* A SYN flood from many spoofed sources: one answer each, no bucket, no
 * verified entry. */
TEST(syncookie_spoofed_flood)
{
	struct seg g = { .family = 4, .sport = 999, .dport = 80, .flags = SYN, .seq = 1,
			 .opts = linux_opts, .olen = sizeof(linux_opts) };
	char src[32];
	int tx = 0;

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	for (int i = 0; i < 2000; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, 1 + i % 250);
		g.src = src;
		tx += send_seg(&g) == XDP_TX;
	}
	CHECK_EQ(tx, 2000, "one answer per SYN");
	CHECK_EQ(sc_of(5).cookies_sent, 2000, "counted");
	CHECK_EQ(answers(), 2000, "answers");
	CHECK_EQ(buckets(), 0, "no bucket for a spoofed source");
	CHECK_EQ(verified_entries(), 0, "none verified");
	teardown();
}

/* Expiry: a verified source idle for XRL_SC_IDLE_NS must answer a cookie
 * again; one that keeps sending stays verified. */
TEST(syncookie_expiry)
{
	struct seg syn = { .family = 4, .src = "198.18.0.12", .sport = 4000, .dport = 80,
			   .flags = SYN, .seq = 50 };
	uint8_t in[256], out[512];
	size_t n;
	uint32_t cookie;

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	xrl_test_clock_set(X, T0);
	CHECK_EQ(run_out(in, seg_build(in, &syn), out, &n), XDP_TX, "answered");
	memcpy(&cookie, out + 38, 4);
	struct seg a = { .family = 4, .src = syn.src, .sport = 4000, .dport = 80,
			 .flags = ACK, .seq = 51, .ack = ntohl(cookie) + 1 };
	CHECK_EQ(send_seg(&a), XDP_PASS, "verified");
	for (int m = 1; m <= 20; m++) {
		xrl_test_clock_set(X, T0 + m * 60 * SEC);
		CHECK_EQ(send_seg(&a), XDP_PASS, "a source that keeps sending stays verified");
	}
	xrl_test_clock_set(X, T0 + 20 * 60 * SEC + XRL_SC_IDLE_NS + SEC);
	CHECK_EQ(send_seg(&syn), XDP_TX, "idle past the time: a cookie again");
	a.ack = 1;
	CHECK_EQ(send_seg(&a), XDP_DROP, "and no packet without it");
	teardown();
}

/* Verify a source: its SYN answered, the cookie's ACK sent back. */
static int verify(int family, const char *src, uint16_t sport)
{
	struct seg syn = { .family = family, .src = src, .sport = sport, .dport = 80,
			   .flags = SYN, .seq = 100 };
	uint8_t in[256], out[512];
	size_t n, l3 = family == 4 ? 20 : 40;
	uint32_t cookie;

	if (run_out(in, seg_build(in, &syn), out, &n) != XDP_TX)
		return -1;
	memcpy(&cookie, out + 14 + l3 + 4, 4);
	struct seg a = { .family = family, .src = src, .sport = sport, .dport = 80,
			 .flags = ACK, .seq = 101, .ack = ntohl(cookie) + 1 };
	return send_seg(&a) == XDP_PASS ? 0 : -1;
}

/* A source verified again after its entry expired updates its key: the
 * table's keys created and evicted estimate do not count it. */
TEST(syncookie_reverify_not_evicted)
{
	struct xrl_sc_table t = {};

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	xrl_test_clock_set(X, T0);
	CHECK(!verify(4, "198.18.0.13", 4100), "verified");
	xrl_test_clock_set(X, T0 + XRL_SC_IDLE_NS + SEC);
	CHECK(!verify(4, "198.18.0.13", 4101), "verified again after expiry");
	CHECK_EQ(sc_of(5).verified, 2, "the rule counts both verifications");
	CHECK(!xrl_sc_table_get(X, &t), "table: %s", xrl_errmsg());
	CHECK_EQ(t.entries, 1, "one entry");
	CHECK_EQ(t.inserted, 1, "one key created");
	CHECK_EQ(t.evicted, 0, "none evicted");
	teardown();
}

/* The table full: the least recently seen sources go, an evicted one
 * answers a cookie again, and no unverified source passes without one. */
TEST(syncookie_table_full)
{
	struct seg data = { .family = 6, .sport = 7, .dport = 80, .flags = ACK, .seq = 5, .ack = 9 };
	char src[64];
	int failed = 0, gone = 0;
	const int over = 2000, n = XRL_SC_VERIFIED + over;
	struct xrl_sc_table t;

	setup();
	/* a new-key budget for every source: only the verified table is tested */
	CHECK(!RULES("rule add ::/0 proto tcp dport 80 syn-cookies rate 1000/s burst 1000 new-keys 1000000/s id 6"),
	      "rules: %s", xrl_errmsg());
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "2001:db8:%x:%x::1", 0x100 + (i >> 16), i & 0xffff);
		failed += verify(6, src, 1000 + (i & 0x7fff)) != 0;
	}
	CHECK_EQ(failed, 0, "every source verified");
	CHECK(!xrl_sc_table_get(X, &t), "the table: %s", xrl_errmsg());
	CHECK(t.entries <= XRL_SC_VERIFIED, "at most its size: %llu", (unsigned long long)t.entries);
	CHECK_EQ(t.size, XRL_SC_VERIFIED, "its size");
	CHECK_EQ(t.inserted, (__u64)n, "inserted");
	CHECK(t.evicted >= (__u64)over, "evicted: %llu", (unsigned long long)t.evicted);
	/* the first ones, seen least recently, were evicted */
	for (int i = 0; i < over; i++) {
		snprintf(src, sizeof(src), "2001:db8:%x:%x::1", 0x100 + (i >> 16), i & 0xffff);
		data.src = src;
		gone += send_seg(&data) == XDP_DROP;
	}
	CHECK(gone >= over / 2, "the least recent sources evicted: %d of %d", gone, over);
	snprintf(src, sizeof(src), "2001:db8:%x:%x::1", 0x100 + ((n - 1) >> 16), (n - 1) & 0xffff);
	data.src = src;
	CHECK_EQ(send_seg(&data), XDP_PASS, "the most recent one stays");
	data.src = "2001:db8:6::1";
	CHECK_EQ(send_seg(&data), XDP_DROP, "a source never verified: no way around the check");
	CHECK(buckets() <= (unsigned long long)n, "a bucket per verified source at most");
	teardown();
}

/* A SYN whose data offset claims more options than the frame or the IP
 * packet holds is not answered: the answer would be longer than it. */
TEST(syncookie_truncated_header)
{
	static const uint8_t ts_only[] = { 8, 10, 1, 2, 3, 4, 0, 0, 0, 0 };
	static const uint8_t mss_ts_ws[] = { 2, 4, 0x05, 0xb4, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 3, 3, 7 };
	struct seg g = { .family = 4, .src = "198.18.0.30", .sport = 999, .dport = 80,
			 .flags = SYN, .seq = 1, .opts = ts_only, .olen = sizeof(ts_only), .doff = 15 };
	uint8_t in[256], out[512];
	size_t len, n = 0;
	int rc;

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	len = seg_build(in, &g);
	rc = run_out(in, len, out, &n);
	CHECK(rc != XDP_TX || n <= len, "TS only: SYN-ACK %zu bytes, SYN %zu", n, len);
	CHECK_EQ(rc, XDP_DROP, "doff past the packet: dropped");
	g.opts = mss_ts_ws;
	g.olen = sizeof(mss_ts_ws);
	len = seg_build(in, &g);
	rc = run_out(in, len, out, &n);
	CHECK(rc != XDP_TX || n <= len, "MSS TS WS: SYN-ACK %zu bytes, SYN %zu", n, len);
	CHECK_EQ(rc, XDP_DROP, "doff past the packet: dropped");
	/* the options in trailing padding, past the IP length */
	g.opts = linux_opts;
	g.olen = sizeof(linux_opts);
	g.doff = 0;
	len = seg_build(in, &g);
	put16(in + 14 + 2, 20 + 20);	/* IP total length: no options */
	memcpy(in + 14 + 10, (uint16_t[]){ 0 }, 2);
	memcpy(in + 14 + 10, (uint16_t[]){ csum16(in + 14, 20) }, 2);
	rc = run_out(in, len, out, &n);
	CHECK_EQ(rc, XDP_DROP, "options past the IP length: dropped");
	CHECK_EQ(answers(), 0, "nothing answered");
	teardown();
}

/* A deny source rule decides first: a denied source is never answered. */
TEST(syncookie_deny_first)
{
	struct seg g = { .family = 4, .src = "192.0.2.5", .sport = 999, .dport = 80,
			 .flags = SYN, .seq = 1 };

	setup();
	CHECK(!RULES("rule add 192.0.2.0/24 action deny id 9",
		     "rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies rate 100/s burst 100 id 5"),
	      "rules: %s", xrl_errmsg());
	CHECK_EQ(send_seg(&g), XDP_DROP, "a denied source's SYN is dropped, not answered");
	CHECK_EQ(answers(), 0, "nothing answered");
	teardown();
}

/* An allow source rule too: a trusted source is never challenged. */
TEST(syncookie_allow_first)
{
	struct seg g = { .family = 4, .src = "192.0.2.5", .sport = 999, .dport = 80,
			 .flags = ACK, .seq = 1, .ack = 77 };

	setup();
	CHECK(!RULES("rule add 192.0.2.0/24 action allow id 9",
		     "rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies rate 100/s burst 100 id 5"),
	      "rules: %s", xrl_errmsg());
	CHECK_EQ(send_seg(&g), XDP_PASS, "an allowed source's established-connection ACK passes");
	g.flags = SYN;
	CHECK_EQ(send_seg(&g), XDP_PASS, "an allowed source's SYN goes to the stack");
	CHECK_EQ(answers(), 0, "nothing answered");
	teardown();
}

/* No answer to or from a group, broadcast, zero or loopback address. */
TEST(syncookie_no_group_answer)
{
	static const char *const bad4[][2] = {
		{ "198.18.0.40", "255.255.255.255" }, { "198.18.0.40", "224.0.0.1" },
		{ "198.18.0.40", "127.0.0.1" }, { "198.18.0.40", "0.0.0.0" },
		{ "224.0.0.1", "198.51.100.1" }, { "255.255.255.255", "198.51.100.1" },
		{ "127.0.0.1", "198.51.100.1" }, { "0.0.0.0", "198.51.100.1" },
	};
	static const char *const bad6[][2] = {
		{ "2001:db8:1::9", "ff02::1" }, { "ff02::1", "2001:db8::80" },
		{ "::", "2001:db8::80" }, { "::1", "2001:db8::80" }, { "2001:db8:1::9", "::1" },
	};
	struct seg g = { .sport = 999, .dport = 80, .flags = SYN, .seq = 1 };
	uint8_t in[256], out[512];
	size_t len, n = 0;

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	g.family = 4;
	for (size_t i = 0; i < sizeof(bad4) / sizeof(bad4[0]); i++) {
		g.src = bad4[i][0];
		g.dst = bad4[i][1];
		CHECK(send_seg(&g) == XDP_DROP, "%s -> %s answered or passed", g.src, g.dst);
	}
	g.family = 6;
	for (size_t i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++) {
		g.src = bad6[i][0];
		g.dst = bad6[i][1];
		CHECK(send_seg(&g) == XDP_DROP, "%s -> %s answered or passed", g.src, g.dst);
	}
	/* a unicast SYN to a broadcast MAC */
	g.family = 4;
	g.src = "198.18.0.40";
	g.dst = NULL;
	len = seg_build(in, &g);
	memset(in, 0xff, 6);
	CHECK_EQ(run_out(in, len, out, &n), XDP_DROP, "to ff:ff:ff:ff:ff:ff");
	in[0] = 0x01;	/* 01:00:00:...: multicast */
	CHECK_EQ(run_out(in, len, out, &n), XDP_DROP, "to a multicast MAC");
	CHECK_EQ(answers(), 0, "nothing answered");
	/* the control: the same SYN to the host's MAC is answered */
	len = seg_build(in, &g);
	CHECK_EQ(run_out(in, len, out, &n), XDP_TX, "to the host: answered");
	teardown();
}

/* A SYN-ACK from an unverified source answers the host's own connection:
 * it goes on to the rules (and conntrack), it is not dropped. */
TEST(syncookie_synack_passes)
{
	struct seg g = { .family = 4, .src = "198.18.0.41", .sport = 80, .dport = 80,
			 .flags = SYN | ACK, .seq = 1, .ack = 2 };

	setup();
	CHECK(!SC_RULES(), "rules: %s", xrl_errmsg());
	CHECK_EQ(send_seg(&g), XDP_PASS, "a SYN-ACK passes");
	CHECK_EQ(sc_of(5).unverified_dropped, 0, "not counted as dropped");
	CHECK_EQ(answers(), 0, "not answered");
	CHECK_EQ(verified_entries(), 0, "not verified by it");
	teardown();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The tc program's own inputs: what an skb says of itself (its GSO
 * segments), which no XDP frame carries.
 */
#include "harness.h"

/* A TCP packet (no options, ACK) from src with payload bytes, run through
 * the tc program as an skb of gso_size and gso_segs (0, 0: a plain skb);
 * its verdict. */
static int tc_gso(const char *src, int payload, __u32 gso_size, __u32 gso_segs)
{
	struct frame f = { .src = src, .l4 = IPPROTO_TCP, .payload = payload };
	struct __sk_buff skb = { .gso_size = gso_size, .gso_segs = gso_segs };
	static uint8_t buf[4096];
	size_t len = frame_build(buf, sizeof(buf), &f);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len,
		    .ctx_in = &skb, .ctx_size_in = sizeof(skb), .repeat = 1);

	buf[14 + 20 + 12] = 5 << 4;
	buf[14 + 20 + 13] = ACK;
	if (bpf_prog_test_run_opts(xrl_tc_prog_fd(X), &o)) {
		fprintf(stderr, "    test run: %s\n", strerror(errno));
		return -1;
	}
	return (int)o.retval == TC_ACT_UNSPEC ? PASS : (int)o.retval == TC_ACT_SHOT ? DROP : -2;
}

/* A GRO aggregate (or a local sender's GSO packet) of small segments is
 * much shorter than segments of the MTU would make it: a packet rule
 * charges what the skb says it carries (gso_segs), not the MTU's
 * estimate. Without that, 10 segments of 100 bytes (1040 bytes of IP)
 * cost one token, and a sender choosing a small MSS passes ten times its
 * rate. An skb with a segment size but no count yet (a tap's untrusted
 * GSO packet) is charged its payload over that size. */
TEST(tc_gso_segments)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 25 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(tc_gso("198.18.0.1", 1000, 100, 10), PASS, "10 segments of 25 tokens");
	CHECK_EQ(tc_gso("198.18.0.1", 1000, 100, 10), PASS, "10 more: 20 of 25");
	CHECK_EQ(tc_gso("198.18.0.1", 1000, 100, 10), DROP, "10 > the 5 left");
	CHECK_EQ(tc_gso("198.18.0.1", 500, 100, 0), PASS,
		 "no count: 500 bytes of 100 are 5 segments, the 5 left");
	CHECK_EQ(tc_gso("198.18.0.1", 100, 0, 0), DROP, "the burst spent");
	/* a short aggregate too: 8 segments of 20 bytes, 200 bytes of IP */
	CHECK_EQ(tc_gso("198.18.0.2", 160, 20, 8), PASS, "8 of 25");
	CHECK_EQ(tc_gso("198.18.0.2", 160, 20, 8), PASS, "16 of 25");
	CHECK_EQ(tc_gso("198.18.0.2", 160, 20, 8), PASS, "24 of 25");
	CHECK_EQ(tc_gso("198.18.0.2", 160, 20, 8), DROP, "8 > the 1 left");
	CHECK_EQ(tc_gso("198.18.0.2", 10, 0, 0), PASS, "a plain skb: one token, the last");
	CHECK_EQ(rstats(1).dropped_packets, 3, "rule 1: dropped packets");
	teardown();
}

/* The tc program is loaded at its first use (an XDP-only instance never
 * verifies it), on the instance's maps and clock: one bucket per source for
 * both hooks, metered on the test clock the first load set. */
TEST(tc_loaded_on_use_shares_maps)
{
	int fd;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 4 id 1"), "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "XDP: 1 of 4");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "XDP: 2 of 4");
	fd = xrl_tc_prog_fd(X);
	CHECK(fd >= 0, "the tc program loads: %s", xrl_errmsg());
	CHECK_EQ(xrl_tc_prog_fd(X), fd, "loaded once");
	run_at_tc = true;
	CHECK_EQ(run_from("198.18.0.1"), PASS, "tc: 3 of 4, the same bucket");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "tc: 4 of 4");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "tc: the burst spent (on the test clock)");
	xrl_test_clock_set(X, T0 + 3600 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "tc: an hour later on the test clock, one token");
	run_at_tc = false;
	CHECK_EQ(run_from("198.18.0.1"), DROP, "XDP: that token spent at tc");
	CHECK_EQ(rstats(1).passed_packets, 5, "rule 1: passed, both hooks");
	CHECK_EQ(rstats(1).dropped_packets, 2, "rule 1: dropped, both hooks");
	teardown();
}

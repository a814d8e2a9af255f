// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The keys of a rule: an IPv4 source, an IPv6 /64, other key lengths.
 */
#include "harness.h"

TEST(ipv4_limit)
{
	struct pkt_spec s = { .src = "198.18.0.1", .payload = 18 };
	uint8_t buf[512];
	size_t len = pkt_build(buf, &s);
	struct xrl_rule_stats st;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 3 id 7"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_raw(buf, len), PASS, "1st of the burst of 3 passes");
	CHECK_EQ(run_raw(buf, len), PASS, "2nd of the burst passes");
	CHECK_EQ(run_raw(buf, len), PASS, "3rd of the burst passes");
	CHECK_EQ(run_raw(buf, len), DROP, "past the burst: dropped");
	CHECK_EQ(run_raw(buf, len), DROP, "still past the burst: dropped");
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_raw(buf, len), PASS, "a second later, one token back: passes");
	CHECK_EQ(run_raw(buf, len), DROP, "that token spent: dropped");
	st = rstats(7);
	CHECK_EQ(st.passed_packets, 4, "4 packets passed");
	CHECK_EQ(st.dropped_packets, 3, "3 packets dropped");
	CHECK_EQ(st.passed_bytes, 4 * len, "the passed bytes");
	CHECK_EQ(st.dropped_bytes, 3 * len, "the dropped bytes");
	CHECK_EQ(st.new_keys, 1, "one key, one bucket");
	CHECK_EQ(gstats().passed_packets[XRL_MODE_ENFORCE], 4, "global: passed packets");
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 3, "global: dropped packets");
	teardown();
}

TEST(ipv6_slash64)
{
	setup();
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/h burst 2"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:0:1::1"), PASS, "a packet from 2001:db8:0:1::1 passes");
	CHECK_EQ(run_from("2001:db8:0:1::2"), PASS, "same /64: same bucket");
	CHECK_EQ(run_from("2001:db8:0:1:ffff::3"), DROP, "the /64's burst of 2 spent");
	CHECK_EQ(run_from("2001:db8:0:2::1"), PASS, "another /64");
	CHECK_EQ(rstats(1).new_keys, 2, "rule 1: new keys");
	teardown();
}

TEST(key_lengths)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 2 per /24",
		     "rule add 2001:db8::/32 rate 1/h burst 1 per /128"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS, "a packet from 198.18.5.1 passes");
	CHECK_EQ(run_from("198.18.5.200"), PASS, "same /24");
	CHECK_EQ(run_from("198.18.5.7"), DROP, "the /24's burst of 2 spent");
	CHECK_EQ(run_from("198.18.6.1"), PASS, "another /24");
	CHECK_EQ(run_from("2001:db8::1"), PASS, "a packet from 2001:db8::1 passes");
	CHECK_EQ(run_from("2001:db8::2"), PASS, "/128: its own bucket");
	CHECK_EQ(run_from("2001:db8::1"), DROP, "the /128's burst of 1 spent");
	teardown();
}

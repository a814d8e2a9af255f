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

TEST(ipv6_slash64)
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

TEST(key_lengths)
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

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bans: a banned source dropped before any rule, on time by the test
 * clock, IPv4 and IPv6, prefixes of any length; allow rules against bans;
 * a full table refuses; rules that ban after N offences, doubling to
 * ban-max with jitter; dry-run would-bans; the bans' events and counters.
 */
#include "harness.h"

/* A ban of the CLI grammar ("ban add 198.18.0.0/24 for 10s"), set. */
static int ban(const char *line)
{
	struct xrl_parse_err e;
	struct xrl_cmd c;

	if (xrl_cmd_parse_line(line, XRL_IN_CLI, &c, &e) || c.kind != XRL_CMD_BAN_ADD) {
		fprintf(stderr, "    bad ban '%s': %s\n", line, e.msg);
		return -EINVAL;
	}
	return xrl_ban_add(X, &c.ban, NULL);
}

/* The ban of exactly PREFIX; expires_ns 0 and origin 0 when none. */
static struct xrl_ban_entry ban_of(const char *prefix)
{
	struct xrl_ban_entry e = {};
	struct xrl_rule_entry p;

	if (xrl_prefix_parse(prefix, &p) ||
	    xrl_ban_get(X, p.family, p.addr, p.prefix_len, &e))
		memset(&e, 0, sizeof(e));
	return e;
}

static struct xrl_ban_stats bstats(void)
{
	struct xrl_ban_stats s = {};

	CHECK(!xrl_ban_stats_get(X, &s), "xrl_ban_stats_get: %s", xrl_errmsg());
	return s;
}

static struct xrl_ban_totals btotals(void)
{
	struct xrl_ban_totals t = {};

	CHECK(!xrl_ban_totals_get(X, &t), "xrl_ban_totals_get: %s", xrl_errmsg());
	return t;
}

/* A ban drops its sources before any rule (an allow rule too: the
 * operator's ban wins), and no other; it ends on time. */
TEST(ban_drops_and_ends_on_time)
{
	struct xrl_ban_entry e;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1000/s burst 1000 id 1",
		     "rule add 198.18.0.7/32 action allow id 2"),
	      "rules: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), PASS, "not banned yet");
	CHECK(!ban("ban add 198.18.0.0/24 for 10s reason test"), "ban add: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), DROP, "a source of the /24 is dropped");
	CHECK_EQ(run_from("198.18.0.7"), DROP, "an allowed source too: the operator's ban wins");
	CHECK_EQ(run_from("198.18.1.5"), PASS, "the next /24 is not banned");
	CHECK_EQ(rstats(1).passed_packets + rstats(1).dropped_packets, 2,
		 "the rule saw only the packets the ban let by");
	CHECK_EQ(bstats().dropped_packets, 2, "two drops by bans");
	e = ban_of("198.18.0.0/24");
	CHECK_EQ(e.b.dropped, 2, "the ban counts its drops");
	CHECK_EQ(e.b.origin, XRL_BAN_OPERATOR, "the operator's");
	CHECK(!strcmp(e.b.reason, "test"), "its reason: '%s'", e.b.reason);
	CHECK_EQ(e.b.expires_ns, T0 + 10 * SEC, "it ends 10 s from now");
	xrl_test_clock_set(X, T0 + 10 * SEC - 1);
	CHECK_EQ(run_from("198.18.0.5"), DROP, "a nanosecond before its end");
	xrl_test_clock_set(X, T0 + 10 * SEC);
	CHECK_EQ(run_from("198.18.0.5"), PASS, "at its end: no longer banned");
	CHECK(ban_of("198.18.0.0/24").ended, "ended, not yet reclaimed");
	CHECK_EQ(gstats().dropped_packets[XRL_MODE_ENFORCE], 3, "the global verdicts count them");
	teardown();
}

/* IPv6, and without a duration: until ban del. */
TEST(ban_ipv6_until_deleted)
{
	struct xrl_rule_entry p;

	setup();
	CHECK(!ban("ban add 2001:db8:1::/48"), "ban add: %s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:1:2::3"), DROP, "a source of the /48 is dropped");
	CHECK_EQ(run_from("2001:db8:2::3"), PASS, "another /48 passes");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "IPv4 passes");
	xrl_test_clock_set(X, T0 + 400ULL * 86400 * SEC);
	CHECK_EQ(run_from("2001:db8:1:2::3"), DROP, "still, 400 days later");
	CHECK(!xrl_prefix_parse("2001:db8:1::/48", &p), "prefix");
	CHECK(!xrl_ban_del(X, p.family, p.addr, p.prefix_len, NULL), "ban del: %s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:1:2::3"), PASS, "lifted");
	CHECK_EQ(xrl_ban_del(X, p.family, p.addr, p.prefix_len, NULL), -ENOENT,
		 "lifting it again: not banned");
	CHECK_EQ(btotals().deleted[XRL_BAN_OPERATOR], 1, "counted as deleted");
	teardown();
}

/* Every prefix length, both families: the first and last address inside
 * are dropped, the addresses just outside pass. */
TEST(ban_any_prefix_length)
{
	static const int lens4[] = { 0, 1, 7, 15, 16, 23, 24, 31, 32 };
	static const int lens6[] = { 1, 32, 47, 48, 63, 64, 65, 127, 128 };
	char line[128], a[64];

	setup();
	for (size_t i = 0; i < sizeof(lens4) / sizeof(lens4[0]); i++) {
		int len = lens4[i];
		__u32 net = 0xc6120000U & (len ? ~0U << (32 - len) : 0), last, in;

		last = net | (len == 32 ? 0 : ~0U >> len);
		snprintf(line, sizeof(line), "ban add %u.%u.%u.%u/%d for 60s", net >> 24,
			 (net >> 16) & 255, (net >> 8) & 255, net & 255, len);
		CHECK(!ban(line), "%s: %s", line, xrl_errmsg());
		for (int k = 0; k < 2; k++) {
			in = k ? last : net;
			snprintf(a, sizeof(a), "%u.%u.%u.%u", in >> 24, (in >> 16) & 255,
				 (in >> 8) & 255, in & 255);
			CHECK(run_from(a) == DROP, "/%d: %s inside is dropped", len, a);
		}
		if (len) {
			__u32 out[2] = { net - 1, last + 1 };

			for (int k = 0; k < 2; k++) {
				if ((k == 0 && net == 0) || (k == 1 && last == ~0U))
					continue;
				snprintf(a, sizeof(a), "%u.%u.%u.%u", out[k] >> 24, (out[k] >> 16) & 255,
					 (out[k] >> 8) & 255, out[k] & 255);
				CHECK(run_from(a) == PASS, "/%d: %s outside passes", len, a);
			}
		}
		CHECK(!xrl_ban_flush(X, 0, NULL, &(size_t){0}), "flush");
	}
	for (size_t i = 0; i < sizeof(lens6) / sizeof(lens6[0]); i++) {
		int len = lens6[i];
		struct xrl_rule_entry p = { .family = 6, .prefix_len = len };
		__u8 in[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6 };
		__u8 out[16];

		xrl__mask_bits(p.addr, len, 16);
		for (int b = 0; b < 16; b++)
			p.addr[b] &= in[b];
		xrl_prefix_format(&p, a, sizeof(a));
		snprintf(line, sizeof(line), "ban add %s for 60s", a);
		CHECK(!ban(line), "%s: %s", line, xrl_errmsg());
		xrl_addr_format(6, in, a, sizeof(a));
		CHECK(run_from(a) == DROP, "/%d: %s inside is dropped", len, a);
		/* the last bit of the prefix flipped: outside */
		memcpy(out, in, 16);
		out[(len - 1) / 8] ^= 0x80 >> ((len - 1) % 8);
		xrl_addr_format(6, out, a, sizeof(a));
		CHECK(run_from(a) == PASS, "/%d: %s outside passes", len, a);
		CHECK(!xrl_ban_flush(X, 0, NULL, &(size_t){0}), "flush");
	}
	teardown();
}

/* A full table refuses a ban, counted, and keeps every live one. */
TEST(ban_table_full_refuses)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = true, .keys = 4096, .bans = 4 };
	char line[64];
	__u32 n, cap;

	CHECK(!xrl_open(&o, &X), "open: %s", xrl_errmsg());
	xrl_test_clock_set(X, T0);
	for (int i = 0; i < 4; i++) {
		snprintf(line, sizeof(line), "ban add 198.18.%d.0/24 for 1h", i);
		CHECK(!ban(line), "%s: %s", line, xrl_errmsg());
	}
	CHECK_EQ(ban("ban add 198.18.9.0/24 for 1h"), -ENOSPC, "the fifth is refused");
	CHECK(strstr(xrl_errmsg(), "full"), "and said so: %s", xrl_errmsg());
	CHECK_EQ(btotals().refused_full, 1, "counted");
	CHECK(!xrl_bans_fill(X, 4, &n, &cap), "fill");
	CHECK(n == 4 && cap == 4, "4 of 4 entries (%u of %u)", n, cap);
	for (int i = 0; i < 4; i++) {
		snprintf(line, sizeof(line), "198.18.%d.1", i);
		CHECK(run_from(line) == DROP, "%s: every live ban kept", line);
	}
	CHECK_EQ(run_from("198.18.9.1"), PASS, "the refused one is not banned");
	CHECK(!ban("ban add 198.18.0.0/24 for 2h"), "a banned prefix banned again: %s", xrl_errmsg());
	teardown();
}

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
	CHECK_EQ(xrl_control(X)->ban_families, XRL_BANS_V6, "IPv6 packets look bans up");
	CHECK_EQ(run_from("2001:db8:1:2::3"), DROP, "a source of the /48 is dropped");
	CHECK_EQ(run_from("2001:db8:2::3"), PASS, "another /48 passes");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "IPv4 passes");
	xrl_test_clock_set(X, T0 + 400ULL * 86400 * SEC);
	CHECK_EQ(run_from("2001:db8:1:2::3"), DROP, "still, 400 days later");
	CHECK(!xrl_prefix_parse("2001:db8:1::/48", &p), "prefix");
	CHECK(!xrl_ban_del(X, p.family, p.addr, p.prefix_len, NULL), "ban del: %s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:1:2::3"), PASS, "lifted");
	CHECK_EQ(xrl_control(X)->ban_families, 0, "no ban left: packets skip the look-up");
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

/* Make the key of SRC (rule of burst 1, rate 1/s) limited once more: a
 * pass after a pause long enough to end the last "limited", then a drop.
 * The clock moves on by `pause`. */
static __u64 now_ns = T0;

static void tick(__u64 ns)
{
	now_ns += ns;
	xrl_test_clock_set(X, now_ns);
}

static int offend(const char *src, __u64 pause)
{
	tick(pause);
	if (run_from(src) != PASS)
		return -1;
	return run_from(src) == DROP ? 0 : -1;
}

/* A rule that bans at the 3rd time its key becomes limited, not before,
 * and not at every refused packet; the ban is the rule's key (/24). */
TEST(ban_rule_after_n)
{
	struct xrl_ban_entry e;

	setup();
	now_ns = T0;
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 1 per /24 ban 10s after 3 id 4"),
	      "rules: %s", xrl_errmsg());
	CHECK_EQ(xrl_control(X)->ban_families, 0, "no bans");
	CHECK(!offend("198.18.5.1", 0), "offence 1");
	for (int i = 0; i < 20; i++)
		CHECK_EQ(run_from("198.18.5.2"), DROP, "refused within the same limited spell");
	CHECK_EQ(btotals().offences, 1, "20 refused packets are one offence");
	CHECK(!offend("198.18.5.3", 5 * SEC), "offence 2");
	CHECK_EQ(ban_of("198.18.5.0/24").b.origin, 0, "not banned after 2");
	CHECK(!offend("198.18.5.1", 5 * SEC), "offence 3");
	e = ban_of("198.18.5.0/24");
	CHECK_EQ(e.b.origin, XRL_BAN_RULE, "banned at the 3rd: the rule's");
	CHECK_EQ(e.b.rule_id, 4, "by rule 4");
	CHECK_EQ(e.b.set_ns, now_ns, "now");
	CHECK(e.b.expires_ns >= now_ns + 10 * SEC && e.b.expires_ns <= now_ns + 10 * SEC + 10 * SEC / 8,
	      "for 10 s and at most 1/8 more: %llu", (unsigned long long)(e.b.expires_ns - now_ns));
	CHECK_EQ(btotals().set[XRL_BAN_RULE], 1, "one rule ban set");
	CHECK_EQ(xrl_control(X)->ban_families, XRL_BANS_V4, "the data path's insert set its family");
	tick(3 * SEC);		/* the bucket refilled: only the ban drops now */
	CHECK_EQ(run_from("198.18.5.77"), DROP, "the whole /24 is banned");
	CHECK_EQ(run_from("198.18.6.1"), PASS, "the next /24 is not");
	CHECK_EQ(bstats().dropped_packets, 1, "the ban dropped it, not the rule");
	now_ns = e.b.expires_ns;
	xrl_test_clock_set(X, now_ns);
	CHECK_EQ(run_from("198.18.5.77"), PASS, "the ban ended on time");
	teardown();
}

/* A repeat offender's ban doubles up to ban-max; each one's jitter lies in
 * [d, d + d/8]; quiet for ban-max, the key is forgotten. IPv6: the /64. */
TEST(ban_rule_doubles_to_max_with_jitter)
{
	static const __u64 want[] = { 10, 20, 40, 40, 40 };
	__u64 lens[8][5], distinct = 0;
	char src[64];

	setup();
	now_ns = T0;
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/s burst 1 ban 10s ban-max 40s id 6"),
	      "rules: %s", xrl_errmsg());
	for (int k = 0; k < 8; k++) {
		snprintf(src, sizeof(src), "2001:db8:%x::1", k + 1);
		for (int i = 0; i < 5; i++) {
			char pfx[64];
			struct xrl_ban_entry e;
			__u64 d = want[i] * SEC;

			CHECK(!offend(src, 3 * SEC), "key %d, offence %d", k, i);
			snprintf(pfx, sizeof(pfx), "2001:db8:%x::/64", k + 1);
			e = ban_of(pfx);
			lens[k][i] = e.b.expires_ns - e.b.set_ns;
			CHECK(e.b.origin == XRL_BAN_RULE && e.b.level == (i < 4 ? i : 4),
			      "key %d ban %d: level %u", k, i, e.b.level);
			CHECK(lens[k][i] >= d && lens[k][i] <= d + d / 8,
			      "key %d ban %d lasts %llu ns, not in [%llu, %llu]", k, i,
			      (unsigned long long)lens[k][i], (unsigned long long)d,
			      (unsigned long long)(d + d / 8));
			/* to its end: banned until then */
			now_ns = e.b.expires_ns - 1;
			xrl_test_clock_set(X, now_ns);
			CHECK(run_from(src) == DROP, "key %d ban %d holds to its end", k, i);
			tick(1);
		}
	}
	for (int k = 1; k < 8; k++)
		distinct += lens[k][0] != lens[0][0];
	CHECK(distinct > 0, "the jitter differs from key to key");
	/* quiet for longer than ban-max after the end of its last ban: its
	 * next offence is a first one again */
	CHECK(!offend("2001:db8:1::1", 41 * SEC), "a first offence again");
	CHECK(ban_of("2001:db8:1::/64").b.level == 0, "forgotten: level %u",
	      ban_of("2001:db8:1::/64").b.level);
	teardown();
}

/* A rule's ban never holds for a source an allow rule covers; the
 * operator's does. */
TEST(ban_allow_rule_vs_rule_ban)
{
	setup();
	now_ns = T0;
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 1 per /24 ban 1h id 1",
		     "rule add 198.18.7.9/32 action allow id 2"),
	      "rules: %s", xrl_errmsg());
	CHECK(!offend("198.18.7.1", 0), "an offence");
	CHECK_EQ(ban_of("198.18.7.0/24").b.origin, XRL_BAN_RULE, "the /24 is banned");
	CHECK_EQ(run_from("198.18.7.1"), DROP, "the offender is dropped");
	CHECK_EQ(run_from("198.18.7.9"), PASS, "the allowed host in it passes");
	CHECK_EQ(bstats().allowed_packets, 1, "counted as allowed");
	CHECK_EQ(rstats(2).passed_packets, 1, "by its allow rule");
	CHECK(!ban("ban add 198.18.7.9 for 1m"), "operator ban: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.7.9"), DROP, "the operator's ban wins over allow");
	teardown();
}

/* A dry-run rule (and the dry-run mode) counts would-bans, says them in
 * its events, and bans nothing. */
TEST(ban_dry_run_would_ban)
{
	struct xrl_events *ev;

	setup();
	now_ns = T0;
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 1 ban 1h dry-run id 3"),
	      "rules: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "events: %s", xrl_errmsg());
	tick(0);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "within the burst");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a would-drop passes");
	CHECK_EQ(btotals().would_ban, 1, "one would-ban");
	CHECK_EQ(btotals().set[XRL_BAN_RULE], 0, "no ban set");
	CHECK_EQ(ban_of("198.18.0.1/32").b.origin, 0, "nothing in the table");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "still passes");
	events_read(ev);
	{
		bool seen = false;

		for (size_t i = 0; i < nevs; i++)
			seen |= evs[i].kind == XRL_EV_BANNED && evs[i].mode == XRL_MODE_DRY_RUN &&
				evs[i].origin == XRL_BAN_RULE && evs[i].rule_id == 3 && evs[i].key_len == 32;
		CHECK(seen, "a 'would be banned' event (%zu events)", nevs);
	}
	xrl_events_close(ev);
	/* the mode's dry-run: a banned source passes, counted as a would-drop */
	CHECK(!ban("ban add 198.18.9.0/24"), "ban: %s", xrl_errmsg());
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "dry-run mode");
	CHECK_EQ(run_from("198.18.9.1"), PASS, "dry-run: a banned source passes");
	CHECK_EQ(bstats().would_drop_packets, 1, "as a would-drop");
	CHECK_EQ(bstats().dropped_packets, 0, "not a drop");
	CHECK(!xrl_mode_set(X, XRL_MODE_FAIL_CLOSED), "fail-closed mode");
	CHECK_EQ(run_from("198.18.9.1"), DROP, "fail-closed: dropped");
	teardown();
}

/* A full table refuses a rule's ban, counted; the live ones stay. */
TEST(ban_rule_ban_into_full_table)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = true, .keys = 4096, .bans = 2 };

	CHECK(!xrl_open(&o, &X), "open: %s", xrl_errmsg());
	now_ns = T0;
	xrl_test_clock_set(X, T0);
	CHECK(!ban("ban add 198.51.100.1"), "ban 1");
	CHECK(!ban("ban add 198.51.100.2"), "ban 2");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 1 ban 1h id 1"), "rules: %s", xrl_errmsg());
	CHECK(!offend("198.18.0.1", 0), "an offence");
	CHECK_EQ(btotals().refused_full, 1, "the rule's ban is refused, counted");
	CHECK_EQ(ban_of("198.18.0.1/32").b.origin, 0, "not set");
	CHECK_EQ(run_from("198.51.100.1"), DROP, "the live bans stay");
	CHECK_EQ(run_from("198.51.100.2"), DROP, "both");
	teardown();
}

/* Events: every ban's "banned" at once, when it is set (a decider's from
 * userspace, none again at its first drop); "unbanned" at the first packet
 * after the end, and the sweep does not say it twice. The sweep reclaims,
 * by origin. */
TEST(ban_events_and_sweep)
{
	struct xrl_events *ev;
	size_t n = 0;

	setup();
	now_ns = T0;
	CHECK(!xrl_events_open(X, XRL_EVENTS_CTL, collect, NULL, &ev), "events: %s", xrl_errmsg());
	CHECK(!ban("ban add 198.18.3.0/24 for 5s by fail2ban"), "ban: %s", xrl_errmsg());
	CHECK_EQ(events_read(ev), 1, "one 'banned' when it is set, before any packet");
	CHECK(evs[0].kind == XRL_EV_BANNED && evs[0].origin == XRL_BAN_DECIDER &&
	      evs[0].expires_ns == T0 + 5 * SEC && evs[0].family == 4,
	      "banned, by a decider, until T0 + 5 s");
	CHECK_EQ(run_from("198.18.3.4"), DROP, "dropped");
	CHECK_EQ(run_from("198.18.3.4"), DROP, "dropped");
	CHECK_EQ(events_read(ev), 0, "no second 'banned' at the first drop");
	tick(5 * SEC);
	CHECK_EQ(run_from("198.18.3.4"), PASS, "ended");
	CHECK_EQ(run_from("198.18.3.4"), PASS, "ended");
	CHECK_EQ(events_read(ev), 1, "one 'unbanned'");
	CHECK(evs[0].kind == XRL_EV_UNBANNED && evs[0].dropped == 2, "unbanned, after 2 drops");
	CHECK(!xrl_bans_sweep(X, &n, NULL, NULL), "sweep: %s", xrl_errmsg());
	CHECK_EQ(n, 1, "one reclaimed");
	CHECK_EQ(btotals().expired[XRL_BAN_DECIDER], 1, "counted as a decider's expired");
	CHECK_EQ(btotals().set[XRL_BAN_DECIDER], 1, "and as set");
	CHECK_EQ(events_read(ev), 0, "the sweep does not say 'unbanned' again");
	CHECK(!xrl_bans_sweep(X, &n, NULL, NULL) && n == 0, "nothing more to reclaim");
	xrl_events_close(ev);
	teardown();
}

/* The rules' bans hold at most three quarters of a table: past that a
 * rule's ban is refused, counted, and the operator still has room; a ban
 * reclaimed gives its room back. */
TEST(ban_rules_leave_room_for_the_operator)
{
	struct xrl_open_opts o = { .no_pin = true, .test_clock = true, .keys = 4096, .bans = 8 };
	char src[32];
	size_t n;

	CHECK(!xrl_open(&o, &X), "open: %s", xrl_errmsg());
	now_ns = T0;
	xrl_test_clock_set(X, T0);
	CHECK_EQ(btotals().rule_bans_max, 6, "8 - 8/4");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/s burst 1 ban 10s id 1"), "rules: %s", xrl_errmsg());
	for (int i = 1; i <= 7; i++) {
		snprintf(src, sizeof(src), "198.18.0.%d", i);
		CHECK(!offend(src, 0), "offence of %s", src);
	}
	CHECK_EQ(btotals().set[XRL_BAN_RULE], 6, "six rule bans");
	CHECK_EQ(btotals().refused_reserve, 1, "the seventh refused");
	CHECK_EQ(ban_of("198.18.0.7/32").b.origin, 0, "not banned");
	CHECK(!ban("ban add 198.51.100.1"), "the operator's: %s", xrl_errmsg());
	CHECK(!ban("ban add 198.51.100.2"), "and another: %s", xrl_errmsg());
	/* the rule bans end and are reclaimed: room again */
	tick(12 * SEC);
	CHECK(!xrl_bans_sweep(X, &n, NULL, NULL) && n == 6, "six reclaimed (%zu)", n);
	CHECK(!offend("198.18.0.7", 0), "offence again");
	CHECK_EQ(ban_of("198.18.0.7/32").b.origin, XRL_BAN_RULE, "banned now");
	/* an ended rule ban replaced by the data path counts as expired */
	tick(12 * SEC);
	CHECK(!offend("198.18.0.7", 0), "offence after its end, not reclaimed");
	CHECK_EQ(btotals().expired[XRL_BAN_RULE], 7, "the replaced one counted as expired");
	CHECK_EQ(btotals().set[XRL_BAN_RULE] - btotals().expired[XRL_BAN_RULE] -
		 btotals().deleted[XRL_BAN_RULE], 1, "one rule ban in the table");
	teardown();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The banned-source cache (struct xrl_ban_hot): a banned source's packets
 * after its first are answered from a per-CPU entry, and a change to the
 * ban tables (ban del, ban flush, a shorter ban over it, a commit that
 * allows the source of a rule's ban) or the ban's end is honoured on the
 * very next packet; the ban's count holds every drop.
 */
#include "harness.h"

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

static int unban(const char *prefix)
{
	struct xrl_rule_entry p;

	if (xrl_prefix_parse(prefix, &p))
		return -EINVAL;
	return xrl_ban_del(X, p.family, p.addr, p.prefix_len, NULL);
}

/* The count of the ban of exactly PREFIX as ban list reports it (with the
 * drops the cache holds); ~0 when there is none. */
static __u64 dropped_of(const char *prefix)
{
	struct xrl_ban_entry *v;
	struct xrl_rule_entry p;
	__u64 d = ~0ULL;
	size_t n;

	if (xrl_prefix_parse(prefix, &p) || xrl_bans_get(X, &v, &n))
		return d;
	for (size_t i = 0; i < n; i++)
		if (v[i].family == p.family && v[i].prefix_len == p.prefix_len &&
		    !memcmp(v[i].addr, p.addr, p.family == 6 ? 16 : 4))
			d = v[i].b.dropped;
	free(v);
	return d;
}

/* The loaded program's map of that name: a new fd, or -1. */
static int map_by_name(const char *name)
{
	__u32 ids[64], nids = 64;
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

/* Drops of the ban step so far (every CPU). */
static __u64 ban_drops(void)
{
	struct xrl_ban_stats s = {};

	CHECK(!xrl_ban_stats_get(X, &s), "xrl_ban_stats_get: %s", xrl_errmsg());
	return s.dropped_packets;
}

/* The cache answers; a writer that did not bump the generation would leave
 * it answering (shown with a bare delete from the trie); every libxrl
 * writer bumps it, so ban del, ban flush and a shorter ban over the prefix
 * are honoured on the next packet. */
TEST(ban_cache_deletion_honoured_at_once)
{
	struct { __u32 prefixlen; __u8 addr[4]; } k = { 24, { 198, 18, 0, 0 } };
	int fd;

	setup();
	one_cpu();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1000/s burst 1000 id 1"), "rules: %s", xrl_errmsg());
	CHECK(!ban("ban add 198.18.0.0/24"), "ban add: %s", xrl_errmsg());
	for (int i = 0; i < 3; i++)
		CHECK(run_from("198.18.0.5") == DROP, "banned: drop %d", i + 1);
	fd = map_by_name("xrl_bans4");
	CHECK(fd >= 0, "the program's IPv4 ban table");
	CHECK(!bpf_map_delete_elem(fd, &k), "the ban deleted from the table alone: %s",
	      strerror(errno));
	close(fd);
	CHECK_EQ(run_from("198.18.0.5"), DROP,
		 "the cache answered: a change nobody announced is not seen");
	__atomic_fetch_add(&xrl_control(X)->ban_gen, 1, __ATOMIC_SEQ_CST);
	CHECK_EQ(run_from("198.18.0.5"), PASS, "the generation bumped: the entry is void");

	/* another ban stays in the table: packets still look bans up */
	CHECK(!ban("ban add 198.51.100.0/24"), "ban add: %s", xrl_errmsg());
	CHECK(!ban("ban add 198.18.0.0/24"), "ban add: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), DROP, "banned again");
	CHECK_EQ(run_from("198.18.0.5"), DROP, "from the cache");
	CHECK(!unban("198.18.0.0/24"), "ban del: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), PASS, "ban del: the next packet passes");
	CHECK_EQ(rstats(1).passed_packets, 2, "and meets its rule");

	CHECK(!ban("ban add 198.18.0.0/24 by fail2ban"), "ban add: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), DROP, "banned again");
	CHECK_EQ(run_from("198.18.0.5"), DROP, "from the cache");
	CHECK(!xrl_ban_flush(X, 0, "fail2ban", &(size_t){0}), "ban flush by fail2ban: %s",
	      xrl_errmsg());
	CHECK_EQ(xrl_control(X)->ban_families, XRL_BANS_V4, "the operator's ban is left");
	CHECK_EQ(run_from("198.18.0.5"), PASS, "ban flush: the next packet passes");

	/* a shorter ban over the prefix: its end, not the cached one */
	CHECK(!ban("ban add 198.18.0.0/24 for 1h"), "ban add: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), DROP, "banned for an hour");
	CHECK_EQ(run_from("198.18.0.5"), DROP, "from the cache");
	CHECK(!ban("ban add 198.18.0.0/24 for 10s"), "the shorter ban: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.5"), DROP, "banned for 10 s");
	CHECK_EQ(run_from("198.18.0.5"), DROP, "from the cache");
	xrl_test_clock_set(X, T0 + 10 * SEC);
	CHECK_EQ(run_from("198.18.0.5"), PASS, "at the shorter ban's end: passed");
	/* a more specific ban in a wider one: counted as its own */
	CHECK(!ban("ban add 198.18.0.0/16"), "ban add: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.1.5"), DROP, "the /16");
	CHECK_EQ(run_from("198.18.1.5"), DROP, "from the cache");
	CHECK(!ban("ban add 198.18.1.5"), "the /32: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.1.5"), DROP, "the /32");
	CHECK_EQ(dropped_of("198.18.1.5/32"), 1, "the /32 counts its drop, not the /16");
	CHECK_EQ(dropped_of("198.18.0.0/16"), 2, "the /16 its two");
	teardown();
}

/* Every drop is in the ban's count (those still in the cache added by the
 * reader), in the stats, and in the "unbanned" event's count at its end;
 * an expired ban is not answered from the cache. */
TEST(ban_cache_counts_exact_and_ends)
{
	__u64 d0;

	setup();
	one_cpu();
	CHECK(!ban("ban add 2001:db8:5::/48 for 5s"), "ban add: %s", xrl_errmsg());
	d0 = ban_drops();
	for (int i = 0; i < 37; i++)
		CHECK(run_from("2001:db8:5::9") == DROP, "banned: drop %d", i + 1);
	CHECK_EQ(ban_drops() - d0, 37, "37 drops by bans");
	CHECK_EQ(dropped_of("2001:db8:5::/48"), 37, "the ban's count: all 37 (some still cached)");
	xrl_test_clock_set(X, T0 + 5 * SEC - 1);
	CHECK_EQ(run_from("2001:db8:5::9"), DROP, "a nanosecond before its end");
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("2001:db8:5::9"), PASS, "at its end: passed, the cache or not");
	CHECK_EQ(dropped_of("2001:db8:5::/48"), 38, "38 in the ended ban's count");
	teardown();
}

/* A rule's ban is answered from the cache; a commit that allows the source
 * (the rule's ban never holds for an allowed source) voids it: the epoch. */
TEST(ban_cache_rule_ban_then_allow)
{
	setup();
	one_cpu();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 ban 1h id 1"), "rules: %s",
	      xrl_errmsg());
	CHECK_EQ(run_from("198.18.9.1"), PASS, "the burst");
	CHECK_EQ(run_from("198.18.9.1"), DROP, "limited: banned");
	CHECK_EQ(run_from("198.18.9.1"), DROP, "the rule's ban");
	CHECK_EQ(run_from("198.18.9.1"), DROP, "from the cache");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 ban 1h id 1",
		     "rule add 198.18.9.1/32 action allow id 2"),
	      "rules: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.9.1"), PASS, "allowed now: the rule's ban does not hold");
	teardown();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Named sets: IPv4 and IPv6 in one set, set rules before prefix rules,
 * allow sets first, a set rule's key and counters, timeouts on the test
 * clock (stepped over, swept), the hot-key cache voided by a swap, and a
 * swap under packets on two CPUs that never shows a mix.
 */
#include "harness.h"
#include "model/setfile.h"

/* Add "PREFIX[,PREFIX...]" to set `name` with a timeout (0: the set's). */
static int add(const char *name, const char *elems, __u64 timeout_ns)
{
	struct xrl_set_list l = {};
	char buf[512], *save = NULL;
	int err = 0;

	snprintf(buf, sizeof(buf), "%s", elems);
	for (char *t = strtok_r(buf, ",", &save); t && !err; t = strtok_r(NULL, ",", &save))
		err = xrl_set_elem_parse(t, &l);
	if (!err)
		err = xrl_set_add(X, name, &l, timeout_ns);
	xrl_set_list_free(&l);
	return err;
}

/* Load set `name` with "PREFIX[,PREFIX...]" in one swap. */
static int load(const char *name, const char *elems)
{
	struct xrl_set_list l = {};
	char buf[512], *save = NULL;
	int err = 0;

	snprintf(buf, sizeof(buf), "%s", elems);
	for (char *t = strtok_r(buf, ",", &save); t && !err; t = strtok_r(NULL, ",", &save))
		err = xrl_set_elem_parse(t, &l);
	if (!err)
		err = xrl_set_load(X, name, &l, NULL);
	xrl_set_list_free(&l);
	return err;
}

TEST(sets_match_v4_v6)
{
	setup();
	CHECK(!xrl_set_create(X, "bl", 0), "set create: %s", xrl_errmsg());
	CHECK(!add("bl", "198.18.5.0/24,2001:db8:5::/48,198.18.9.9", 0), "set add: %s", xrl_errmsg());
	CHECK(!RULES("rule add @bl action deny"), "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.77"), DROP, "an IPv4 source in the set is dropped");
	CHECK_EQ(run_from("198.18.9.9"), DROP, "a bare address of the set is dropped");
	CHECK_EQ(run_from("198.18.9.8"), PASS, "its neighbour is not in the set");
	CHECK_EQ(run_from("198.18.6.1"), PASS, "an IPv4 source outside it passes");
	CHECK_EQ(run_from("2001:db8:5:1::1"), DROP, "an IPv6 source in the set is dropped");
	CHECK_EQ(run_from("2001:db8:6::1"), PASS, "an IPv6 source outside it passes");
	CHECK_EQ(rstats(1).dropped_packets, 3, "the set rule's own counters");
	CHECK_EQ(gstats().unmatched_packets, 3, "the others matched no rule");
	teardown();
}

TEST(sets_family_byte)
{
	/* ::/0 holds every IPv6 source and no IPv4 one; 0.0.0.0/0 the reverse */
	setup();
	CHECK(!xrl_set_create(X, "v6all", 0), "set create: %s", xrl_errmsg());
	CHECK(!add("v6all", "::/0", 0), "set add: %s", xrl_errmsg());
	CHECK(!RULES("rule add @v6all action deny"), "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8::1"), DROP, "::/0 holds an IPv6 source");
	CHECK_EQ(run_from("0.0.0.1"), PASS, "::/0 holds no IPv4 source (not even 0.0.0.1)");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "nor any other");
	teardown();
}

TEST(sets_before_prefix_rules)
{
	setup();
	CHECK(!xrl_set_create(X, "bl", 0) && !add("bl", "198.18.5.0/24", 0), "set: %s", xrl_errmsg());
	/* the prefix rule is more specific, and has the lower id: the set rule still decides */
	CHECK(!RULES("rule add 198.18.5.7 action allow id 1", "rule add @bl action deny id 2",
		     "rule add 198.18.0.0/16 action allow id 3"), "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.7"), DROP, "a set rule is checked before every prefix rule");
	CHECK_EQ(run_from("198.18.6.7"), PASS, "outside the set: the prefix rules");
	CHECK_EQ(rstats(3).passed_packets, 1, "the prefix rule counted it");
	CHECK_EQ(rstats(1).passed_packets, 0, "the more specific prefix rule never saw one");
	teardown();
}

TEST(sets_allow_first)
{
	setup();
	CHECK(!xrl_set_create(X, "bl", 0) && !add("bl", "198.18.0.0/16", 0), "set bl: %s", xrl_errmsg());
	CHECK(!xrl_set_create(X, "partners", 0) && !add("partners", "198.18.7.0/24,2001:db8:7::/48", 0),
	      "set partners: %s", xrl_errmsg());
	/* the deny set has the lower id: the allow set is still first */
	CHECK(!RULES("rule add @bl action deny id 1", "rule add @partners action allow id 9"),
	      "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.7.3"), PASS, "an allow set wins over a deny set of a lower id");
	CHECK_EQ(run_from("198.18.8.3"), DROP, "the deny set holds the rest");
	CHECK_EQ(rstats(9).passed_packets, 1, "counted by the allow rule");
	/* and in fail-closed mode an allow set still passes */
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.7.4"), PASS, "fail-closed: the allow set passes");
	CHECK_EQ(run_from("2001:db8:7::4"), PASS, "fail-closed: the allow set passes IPv6 too");
	teardown();
}

TEST(sets_rate_per_key)
{
	setup();
	CHECK(!xrl_set_create(X, "nets", 0) && !add("nets", "198.18.5.0/24,2001:db8:5::/48", 0),
	      "set: %s", xrl_errmsg());
	CHECK(!RULES("rule add @nets rate 1/h burst 2 per /24"), "commit: %s", xrl_errmsg());
	CHECK_EQ(passes_from("198.18.5.", 1, 5), 2, "per /24: one bucket for the whole /24");
	CHECK_EQ(run_from("2001:db8:5::1"), PASS, "IPv6: keyed by /64 (first)");
	CHECK_EQ(run_from("2001:db8:5::2"), PASS, "IPv6: keyed by /64 (second, same /64)");
	CHECK_EQ(run_from("2001:db8:5::3"), DROP, "IPv6: the /64 is out of burst");
	CHECK_EQ(run_from("2001:db8:5:1::3"), PASS, "IPv6: another /64 has its own bucket");
	CHECK_EQ(rstats(1).dropped_packets, 4, "the set rule's counters");
	teardown();
}

TEST(sets_timeout)
{
	struct xrl_set_view v;

	setup();
	CHECK(!xrl_set_create(X, "tmp", 10 * SEC), "set create timeout: %s", xrl_errmsg());
	CHECK(!add("tmp", "198.19.5.0/24,198.18.5.0/24", 0), "with the set's timeout: %s", xrl_errmsg());
	CHECK(!add("tmp", "198.51.100.0/24", 100 * SEC), "with its own: %s", xrl_errmsg());
	CHECK(!add("tmp", "198.18.0.0/16", 1000 * SEC), "a /16 around one: %s", xrl_errmsg());
	CHECK(!RULES("rule add @tmp action deny"), "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.19.5.1"), DROP, "before its timeout");
	xrl_test_clock_set(X, T0 + 10 * SEC + 1);
	CHECK_EQ(run_from("198.19.5.1"), PASS, "expired: no longer matches, no daemon, no sweep");
	CHECK_EQ(run_from("198.51.100.1"), DROP, "its own timeout: not yet");
	CHECK_EQ(run_from("198.18.5.1"), DROP, "the expired /24 is stepped over to the /16 around it");
	CHECK(!xrl_set_get(X, "tmp", &v) && v.count == 4, "not swept yet: 4 (%u)", v.count);
	CHECK_EQ(xrl_sets_sweep(X), 2, "the sweep reclaims the two expired");
	CHECK_EQ(xrl_sets_sweep(X), 0, "and nothing more until the next expiry");
	xrl_test_clock_set(X, T0 + 2000 * SEC);
	CHECK_EQ(run_from("198.51.100.1"), PASS, "all expired");
	CHECK_EQ(run_from("198.18.5.1"), PASS, "all expired, the /16 too");
	CHECK_EQ(xrl_sets_sweep(X), 2, "the sweep reclaims the last two");
	CHECK(!xrl_set_get(X, "tmp", &v), "set get: %s", xrl_errmsg());
	CHECK_EQ(v.count, 0, "nothing left");
	teardown();
}

TEST(sets_swap_voids_hot_cache)
{
	setup();
	CHECK(!xrl_set_create(X, "s", 0) && !add("s", "198.18.5.0/24", 0), "set: %s", xrl_errmsg());
	CHECK(!RULES("rule add @s rate 1/h burst 1"), "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS, "the burst");
	CHECK_EQ(run_from("198.18.5.1"), DROP, "refused (and cached)");
	CHECK_EQ(run_from("198.18.5.1"), DROP, "refused again");
	CHECK(!load("s", "198.18.6.0/24"), "set load: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS, "the source left the set: no cached drop survives the swap");
	CHECK(!xrl_set_flush(X, "s"), "set flush: %s", xrl_errmsg());
	CHECK(xrl_set_destroy(X, "s") == -EBUSY, "a set a rule takes is not removed");
	CHECK(!RULES("rule add 198.18.0.0/16 action allow"), "commit without it: %s", xrl_errmsg());
	CHECK(!xrl_set_destroy(X, "s"), "then it is: %s", xrl_errmsg());
	CHECK(RULES("rule add @s action deny") != 0, "a rule of a missing set is refused");
	teardown();
}

/*
 * The swap under packets: version A holds 198.18.5.0/24, version B its two
 * halves (and each a different filler), so a source of 198.18.5.0/24 is in
 * the set in both; an update in place (delete the /24, add the halves)
 * would let packets through between the two. Another CPU loads A and B in
 * turn while this one sends: every packet is dropped.
 */
struct swapper {
	volatile int stop;
	int loads, err;
};

static void *swap_loop(void *arg)
{
	struct swapper *s = arg;

	while (!s->stop && !s->err) {
		struct xrl_set_list l = {};

		for (int i = 0; i < 2000; i++) {
			struct xrl_set_item it = { .family = 4, .prefix_len = 32,
						   .addr = { 198, 19, (__u8)(i >> 8), (__u8)i } };

			if (s->loads & 1)
				it.addr[1] = 51;
			xrl_set_list_push(&l, &it);
		}
		if (s->loads & 1) {
			xrl_set_elem_parse("198.18.5.0/25", &l);
			xrl_set_elem_parse("198.18.5.128/25", &l);
		} else {
			xrl_set_elem_parse("198.18.5.0/24", &l);
		}
		s->err = xrl_set_load(X, "flip", &l, NULL);
		xrl_set_list_free(&l);
		s->loads++;
	}
	return NULL;
}

TEST(sets_swap_atomic)
{
	struct swapper s = {};
	pthread_t t;
	int passed = 0, sent = 0;

	setup();
	CHECK(!xrl_set_create(X, "flip", 0) && !add("flip", "198.18.5.0/24", 0), "set: %s", xrl_errmsg());
	CHECK(!RULES("rule add @flip action deny", "rule add 0.0.0.0/0 action allow"), "commit: %s",
	      xrl_errmsg());
	CHECK(!pthread_create(&t, NULL, swap_loop, &s), "the swapping thread");
	while (s.loads < 20 && !s.err) {
		char src[32];

		snprintf(src, sizeof(src), "198.18.5.%d", sent % 256);
		passed += run_from(src) == PASS;
		sent++;
	}
	s.stop = 1;
	pthread_join(t, NULL);
	CHECK_EQ(s.err, 0, "every load succeeds");
	printf("    %d packets over %d swaps\n", sent, s.loads);
	CHECK(sent > 100, "packets ran during the swaps (%d)", sent);
	CHECK_EQ(passed, 0, "no packet saw a set without its source (a mix)");
	teardown();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control block's features word (struct xrl_control.features): which
 * optional steps some rule of the active set uses. Every commit writes it
 * from the set it publishes, the empty set and a reset leave it 0, and a
 * packet skips the steps whose bit is clear: a rule that needs a step is
 * honoured from the first packet after its commit, and a step no longer
 * needed is skipped with no verdict or counter changed.
 */
#include "harness.h"

/* The word after committing these rules (one line, or two). */
static __u32 after(const char *a, const char *b)
{
	int err = b ? RULES(a, b) : a ? RULES(a) : set_rules((const char *const[]){ NULL });

	CHECK(!err, "commit %s%s%s: %s", a ? a : "(none)", b ? " + " : "", b ? b : "", xrl_errmsg());
	return xrl_features_get(X);
}

TEST(features_word_after_commits)
{
	setup();
	CHECK_EQ(xrl_features_get(X), 0, "a fresh instance: no step");
	CHECK_EQ(after("rule add 198.18.0.0/16 action deny", NULL), 0, "a deny prefix rule: no step");
	CHECK_EQ(after("rule add 198.18.0.0/16 rate 10/s burst 10", NULL), XRL_FEAT_NEWKEYS,
		 "a limit rule: its (default) new-key budget");
	CHECK(!xrl_set_create(X, "bl", 0), "set create: %s", xrl_errmsg());
	CHECK_EQ(after("rule add @bl action deny", NULL), XRL_FEAT_SETS, "a set rule");
	CHECK_EQ(after("rule add 0.0.0.0/0 proto udp dport 53 action deny", NULL), XRL_FEAT_ENDPOINTS,
		 "an endpoint rule (the set rule gone: its bit cleared)");
	CHECK_EQ(after("rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies rate 100/s burst 100", NULL),
		 XRL_FEAT_ENDPOINTS | XRL_FEAT_SYNCOOKIES | XRL_FEAT_NEWKEYS, "a syn-cookies rule");
	CHECK_EQ(after("rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 2 slip 2",
		       "rule add @bl action allow"),
		 XRL_FEAT_ENDPOINTS | XRL_FEAT_SLIP | XRL_FEAT_NEWKEYS | XRL_FEAT_SETS,
		 "a slipping endpoint rule and a set rule");
	CHECK_EQ(after(NULL, NULL), 0, "the empty rule set: no step");
	/* a failed commit (an invalid set) changes nothing, the word neither */
	CHECK(after("rule add @bl action deny", NULL) == XRL_FEAT_SETS, "a set rule again");
	CHECK(RULES("rule add 198.18.0.0/16 rate 10/s burst 10", "rule add 198.18.0.0/16 rate 20/s burst 20"),
	      "a rule set with a duplicate prefix is refused");
	CHECK_EQ(xrl_features_get(X), XRL_FEAT_SETS, "the refused commit left the word as it was");
	CHECK(!xrl_test_reset(X), "reset: %s", xrl_errmsg());
	CHECK_EQ(xrl_features_get(X), 0, "a reset instance: no step");
	teardown();
}

TEST(features_steps_follow_commits)
{
	struct xrl_rule_stats src;

	setup();
	/* a set rule added after packets were classified without one: the
	 * next packet meets it */
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1000/s burst 1000 id 1"), "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS, "no set rule: the prefix rule passes it");
	CHECK(!xrl_set_create(X, "bl", 0), "set create: %s", xrl_errmsg());
	{
		struct xrl_set_list l = {};

		CHECK(!xrl_set_elem_parse("198.18.5.0/24", &l) && !xrl_set_add(X, "bl", &l, 0),
		      "set add: %s", xrl_errmsg());
		xrl_set_list_free(&l);
	}
	CHECK_EQ(run_from("198.18.5.1"), PASS, "a set with no rule taking it: still the prefix rule");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1000/s burst 1000 id 1", "rule add @bl action deny id 2"),
	      "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), DROP, "the set rule decides the very next packet");
	CHECK_EQ(rstats(2).dropped_packets, 1, "counted by the set rule");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1000/s burst 1000 id 1"), "commit: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.5.1"), PASS, "the set rule removed: the prefix rule again");

	/* an endpoint rule added after packets skipped the step: the next
	 * packet meets it; the last one removed: the step is skipped and
	 * the verdicts and counters are the source rule's, as with none */
	CHECK(!xrl_test_reset(X), "reset: %s", xrl_errmsg());
	xrl_test_clock_set(X, T0);
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1000/s burst 1000 id 1"), "commit: %s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.1.1", IPPROTO_UDP, 53, 0, false, 5), 5, "no endpoint rule: all pass");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1000/s burst 1000 id 1",
		     "rule add 0.0.0.0/0 proto udp dport 53 rate 1/h burst 2 id 11"), "commit: %s", xrl_errmsg());
	CHECK(xrl_features_get(X) & XRL_FEAT_ENDPOINTS, "the endpoint step is on");
	CHECK_EQ(ep_send("198.18.1.1", IPPROTO_UDP, 53, 0, false, 5), 2,
		 "the endpoint rule meters the very next packets");
	CHECK_EQ(rstats(11).dropped_packets, 3, "counted by the endpoint rule");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1000/s burst 1000 id 1"), "commit: %s", xrl_errmsg());
	CHECK(!(xrl_features_get(X) & XRL_FEAT_ENDPOINTS), "the last endpoint rule gone: the step is off");
	src = rstats(1);
	CHECK_EQ(ep_send("198.18.1.1", IPPROTO_UDP, 53, 0, false, 5), 5, "the source rule alone decides");
	CHECK_EQ(rstats(1).passed_packets - src.passed_packets, 5, "and counts them");
	CHECK_EQ(ep_send("203.0.113.9", IPPROTO_UDP, 53, 0, false, 3), 3, "an unmatched source passes");
	CHECK_EQ(gstats().unmatched_packets, 3, "counted as unmatched");

	/* a syn-cookies rule added after SYNs passed: the next SYN is
	 * answered; removed: SYNs pass again */
	CHECK(!xrl_test_reset(X), "reset: %s", xrl_errmsg());
	xrl_test_clock_set(X, T0);
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 22 rate 100/s burst 100 id 7"), "commit: %s", xrl_errmsg());
	CHECK(!(xrl_features_get(X) & XRL_FEAT_SYNCOOKIES), "no syn-cookies rule: the step is off");
	CHECK_EQ(ep_send("198.18.0.7", IPPROTO_TCP, 80, SYN, false, 2), 2, "a SYN to TCP/80 passes");
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 22 rate 100/s burst 100 id 7",
		     "rule add 0.0.0.0/0 proto tcp dport 80 syn-cookies rate 100/s burst 100 id 5"),
	      "commit: %s", xrl_errmsg());
	CHECK_EQ(ep_send("198.18.0.7", IPPROTO_TCP, 80, SYN, false, 1), 0,
		 "the very next SYN from the unverified source is not passed");
	CHECK_EQ(rstats(5).passed_packets + rstats(5).dropped_packets, 0,
		 "the SYN-cookie step decided it: the rule's meter never saw it");
	CHECK(!RULES("rule add 0.0.0.0/0 proto tcp dport 22 rate 100/s burst 100 id 7"), "commit: %s", xrl_errmsg());
	CHECK(!(xrl_features_get(X) & XRL_FEAT_SYNCOOKIES), "the rule gone: the step is off");
	CHECK_EQ(ep_send("198.18.0.7", IPPROTO_TCP, 80, SYN, false, 2), 2, "the rule gone: SYNs pass again");
	teardown();
}

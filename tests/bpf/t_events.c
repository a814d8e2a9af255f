// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Live events: transitions, sampling per key, the global cap, a full ring.
 */
#include "harness.h"

static struct xrl_event_stats estats(void)
{
	struct xrl_event_stats s = {};

	CHECK(!xrl_event_stats_get(X, &s), "%s", xrl_errmsg());
	return s;
}

static void check_event(const struct xrl_event *e, int kind, __u32 rule, const char *key,
			__u64 ts, __u64 dropped)
{
	char k[64];

	xrl_event_key_format(e, k, sizeof(k));
	CHECK(e->kind == kind, "kind %s, expected %s", xrl_event_kind_name(e->kind),
	      xrl_event_kind_name(kind));
	CHECK_EQ(e->rule_id, rule);
	CHECK(!strcmp(k, key), "key %s, expected %s", k, key);
	CHECK_EQ(e->ts_ns, ts);
	CHECK_EQ(e->dropped, dropped);
}

/* "limited" at the first drop, nothing more while the key stays limited
 * (a pass within the flood finds its bucket all but empty), "unlimited" at
 * the first pass after a pause; each into both rings. */
TEST(events_transitions)
{
	struct xrl_events *ev, *ctl;
	struct xrl_event_stats es;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 3 id 7",
		     "rule add 2001:db8::/32 rate 1/s burst 1 id 8"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_CTL, collect, NULL, &ctl), "%s", xrl_errmsg());
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 0);			/* passes within the burst */
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_LIMITED, 7, "198.18.0.1", T0, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_ENFORCE);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 0);			/* still limited */
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* one token back: still limited */
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 0);
	xrl_test_clock_set(X, T0 + 6 * SEC);		/* a pause: the bucket refilled */
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_UNLIMITED, 7, "198.18.0.1", T0 + 6 * SEC, 3);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 0);			/* once */

	/* IPv6: the key is the /64; a new key's first drop */
	CHECK_EQ(run_from("2001:db8:0:1::1"), PASS);
	CHECK_EQ(run_from("2001:db8:0:1::2"), DROP);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_LIMITED, 8, "2001:db8:0:1::/64", T0 + 6 * SEC, 1);

	/* the other ring had each of them too */
	CHECK_EQ(events_read(ctl), 3);
	CHECK(nevs == 3 && evs[0].kind == XRL_EV_LIMITED && evs[1].kind == XRL_EV_UNLIMITED &&
	      evs[2].family == 6, "the ctl ring's events");
	es = estats();
	CHECK_EQ(es.events[0], 2);
	CHECK_EQ(es.events[1], 1);
	CHECK_EQ(es.ring_full[0] + es.ring_full[1] + es.dropped_rate + es.sampled, 0);

	/* in dry-run, the events say so */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	CHECK_EQ(run_from("198.18.0.9"), PASS);
	CHECK_EQ(run_from("198.18.0.9"), PASS);
	CHECK_EQ(run_from("198.18.0.9"), PASS);
	CHECK_EQ(run_from("198.18.0.9"), PASS);		/* would be dropped */
	CHECK_EQ(events_read(ev), 1);
	CHECK(nevs == 1 && evs[0].mode == XRL_MODE_DRY_RUN, "dry-run event");
	xrl_events_close(ev);
	xrl_events_close(ctl);
	teardown();
}

/* A dry-run rule's key: its events say dry-run (would be limited, its
 * drops would-drops) while the mode enforces and another rule's do not. */
TEST(events_dry_run_rule)
{
	struct xrl_events *ev;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/s burst 1 dry-run id 4",
		     "rule add 198.18.1.0/24 rate 1/s burst 1 id 5"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* would be dropped */
	CHECK_EQ(run_from("198.18.1.1"), PASS);
	CHECK_EQ(run_from("198.18.1.1"), DROP);
	CHECK_EQ(events_read(ev), 2);
	check_event(&evs[0], XRL_EV_LIMITED, 4, "198.18.0.1", T0, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_DRY_RUN);
	check_event(&evs[1], XRL_EV_LIMITED, 5, "198.18.1.1", T0, 1);
	CHECK_EQ(evs[1].mode, XRL_MODE_ENFORCE);
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_UNLIMITED, 4, "198.18.0.1", T0 + 5 * SEC, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_DRY_RUN);
	xrl_events_close(ev);
	teardown();
}

/* At most one "limited" per key per XRL_EVENT_KEY_NS; an "unlimited" only
 * after a "limited" that went out. */
TEST(events_sampled_per_key)
{
	struct xrl_events *ev;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 3"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 1);			/* limited at T0 */
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(events_read(ev), 1);			/* unlimited */
	CHECK_EQ(evs[0].kind, XRL_EV_UNLIMITED);
	CHECK_EQ(run_from("198.18.0.1"), DROP);		/* limited again, 5 s later */
	CHECK_EQ(events_read(ev), 0);
	CHECK_EQ(estats().sampled, 1);
	xrl_test_clock_set(X, T0 + 7 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);		/* no unlimited: no limited went out */
	CHECK_EQ(events_read(ev), 0);
	xrl_test_clock_set(X, T0 + 10 * SEC - 1);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);
	CHECK_EQ(events_read(ev), 0);
	CHECK_EQ(estats().sampled, 2);
	xrl_test_clock_set(X, T0 + 12 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	CHECK_EQ(run_from("198.18.0.1"), DROP);		/* 12 s after the last one */
	CHECK_EQ(events_read(ev), 1);
	check_event(&evs[0], XRL_EV_LIMITED, 3, "198.18.0.1", T0 + 12 * SEC, 4);
	/* other keys are sampled on their own */
	CHECK_EQ(run_from("198.18.0.2"), PASS);
	CHECK_EQ(run_from("198.18.0.2"), DROP);
	CHECK_EQ(events_read(ev), 1);
	xrl_events_close(ev);
	teardown();
}

/* A flood of new keys: XRL_EVENT_BURST events at once per CPU, then
 * XRL_EVENT_RATE a second; the rest counted as dropped, and their keys owe
 * no "unlimited". */
TEST(events_global_cap)
{
	struct xrl_events *ev;
	struct xrl_event_stats es;
	char src[32];
	int n = XRL_EVENT_BURST + 100;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 5"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS);
		CHECK_EQ(run_from(src), DROP);
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_BURST);
	es = estats();
	CHECK_EQ(es.events[0], XRL_EVENT_BURST);
	CHECK_EQ(es.dropped_rate, 100);
	/* 50 ms later: 50 more */
	xrl_test_clock_set(X, T0 + SEC / 20);
	for (int i = n; i < n + 100; i++) {
		snprintf(src, sizeof(src), "198.19.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS);
		CHECK_EQ(run_from(src), DROP);
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_RATE / 20);
	CHECK_EQ(estats().dropped_rate, 150);
	/* later, the keys come back politely: only those reported say so */
	xrl_test_clock_set(X, T0 + 10 * SEC);
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS);
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_BURST);
	CHECK_EQ(estats().events[1], XRL_EVENT_BURST);
	xrl_events_close(ev);
	teardown();
}

/* A ring nobody reads fills up: what does not fit is counted, per ring,
 * and the reader gets the rest. */
TEST(events_ring_full)
{
	struct xrl_events *ev;
	struct xrl_event_stats es;
	int cycles = 3000;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 5"), "%s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev), "%s", xrl_errmsg());
	for (int i = 0; i < cycles; i++) {	/* limited, unlimited: 2 events a cycle */
		xrl_test_clock_set(X, T0 + i * 11 * SEC);
		CHECK_EQ(run_from("198.18.0.1"), PASS);
		CHECK_EQ(run_from("198.18.0.1"), DROP);
	}
	xrl_test_clock_set(X, T0 + cycles * 11 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS);
	es = estats();
	CHECK_EQ(es.events[0] + es.events[1], 2 * cycles);
	CHECK(es.ring_full[0] > 0, "the ring never filled");
	CHECK_EQ(es.ring_full[0], es.ring_full[1]);	/* the same for both */
	CHECK_EQ(events_read(ev) + es.ring_full[0], 2 * cycles);
	xrl_events_close(ev);
	teardown();
}

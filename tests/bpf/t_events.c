// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Live events: transitions, sampling per key, the global cap, a full ring.
 */
#include "harness.h"

static struct xrl_event_stats estats(void)
{
	struct xrl_event_stats s = {};

	CHECK(!xrl_event_stats_get(X, &s), "xrl_event_stats_get: %s", xrl_errmsg());
	return s;
}

static void check_event(const struct xrl_event *e, int kind, __u32 rule, const char *key,
			__u64 ts, __u64 dropped)
{
	char k[64];

	xrl_event_key_format(e, k, sizeof(k));
	CHECK(e->kind == kind, "kind %s, expected %s", xrl_event_kind_name(e->kind),
	      xrl_event_kind_name(kind));
	CHECK_EQ(e->rule_id, rule, "the event's rule");
	CHECK(!strcmp(k, key), "key %s, expected %s", k, key);
	CHECK_EQ(e->ts_ns, ts, "the event's time");
	CHECK_EQ(e->dropped, dropped, "the drops the event counts");
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
		     "rule add 2001:db8::/32 rate 1/s burst 1 id 8"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_CTL, collect, NULL, &ctl),
	      "xrl_events_open: %s", xrl_errmsg());
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(events_read(ev), 0, "passes within the burst");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK_EQ(events_read(ev), 1, "one event at the first drop");
	check_event(&evs[0], XRL_EV_LIMITED, 7, "198.18.0.1", T0, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_ENFORCE, "the event of an enforcing rule says enforce");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK_EQ(events_read(ev), 0, "still limited");
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "one token back: still limited");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK_EQ(events_read(ev), 0, "no event while still limited");
	xrl_test_clock_set(X, T0 + 6 * SEC);		/* a pause: the bucket refilled */
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(events_read(ev), 1, "one event at the pass after the pause");
	check_event(&evs[0], XRL_EV_UNLIMITED, 7, "198.18.0.1", T0 + 6 * SEC, 3);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(events_read(ev), 0, "once");

	/* IPv6: the key is the /64; a new key's first drop */
	CHECK_EQ(run_from("2001:db8:0:1::1"), PASS,
		 "IPv6: the key is the /64; a new key's first drop");
	CHECK_EQ(run_from("2001:db8:0:1::2"), DROP, "a packet from 2001:db8:0:1::2 is dropped");
	CHECK_EQ(events_read(ev), 1, "one event for the /64");
	check_event(&evs[0], XRL_EV_LIMITED, 8, "2001:db8:0:1::/64", T0 + 6 * SEC, 1);

	/* the other ring had each of them too */
	CHECK_EQ(events_read(ctl), 3, "the other ring had each of them too");
	CHECK(nevs == 3 && evs[0].kind == XRL_EV_LIMITED && evs[1].kind == XRL_EV_UNLIMITED &&
	      evs[2].family == 6, "the ctl ring's events");
	es = estats();
	CHECK_EQ(es.events[0], 2, "two limited events");
	CHECK_EQ(es.events[1], 1, "one unlimited event");
	CHECK_EQ(es.ring_full[0] + es.ring_full[1] + es.dropped_rate + es.sampled, 0,
		 "nothing lost, capped or sampled");

	/* in dry-run, the events say so */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	CHECK_EQ(run_from("198.18.0.9"), PASS, "in dry-run, the events say so");
	CHECK_EQ(run_from("198.18.0.9"), PASS, "a packet from 198.18.0.9 passes");
	CHECK_EQ(run_from("198.18.0.9"), PASS, "a packet from 198.18.0.9 passes");
	CHECK_EQ(run_from("198.18.0.9"), PASS, "would be dropped");
	CHECK_EQ(events_read(ev), 1, "one dry-run event");
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
		     "rule add 198.18.1.0/24 rate 1/s burst 1 id 5"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "would be dropped");
	CHECK_EQ(run_from("198.18.1.1"), PASS, "a packet from 198.18.1.1 passes");
	CHECK_EQ(run_from("198.18.1.1"), DROP, "a packet from 198.18.1.1 is dropped");
	CHECK_EQ(events_read(ev), 2, "a limited event for each rule");
	check_event(&evs[0], XRL_EV_LIMITED, 4, "198.18.0.1", T0, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_DRY_RUN, "the dry-run rule's event says dry-run");
	check_event(&evs[1], XRL_EV_LIMITED, 5, "198.18.1.1", T0, 1);
	CHECK_EQ(evs[1].mode, XRL_MODE_ENFORCE, "the enforcing rule's event says enforce");
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(events_read(ev), 1, "one unlimited event for the dry-run rule");
	check_event(&evs[0], XRL_EV_UNLIMITED, 4, "198.18.0.1", T0 + 5 * SEC, 1);
	CHECK_EQ(evs[0].mode, XRL_MODE_DRY_RUN, "its unlimited event says dry-run too");
	xrl_events_close(ev);
	teardown();
}

/* At most one "limited" per key per XRL_EVENT_KEY_NS; an "unlimited" only
 * after a "limited" that went out. */
TEST(events_sampled_per_key)
{
	struct xrl_events *ev;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 3"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK_EQ(events_read(ev), 1, "limited at T0");
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(events_read(ev), 1, "unlimited");
	CHECK_EQ(evs[0].kind, XRL_EV_UNLIMITED, "the event is unlimited");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "limited again, 5 s later");
	CHECK_EQ(events_read(ev), 0, "no limited event within 10 s of the last");
	CHECK_EQ(estats().sampled, 1, "one event sampled out");
	xrl_test_clock_set(X, T0 + 7 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "no unlimited: no limited went out");
	CHECK_EQ(events_read(ev), 0, "no unlimited event");
	xrl_test_clock_set(X, T0 + 10 * SEC - 1);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK_EQ(events_read(ev), 0, "still within 10 s of the last event");
	CHECK_EQ(estats().sampled, 2, "two events sampled out");
	xrl_test_clock_set(X, T0 + 12 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "12 s after the last one");
	CHECK_EQ(events_read(ev), 1, "a limited event 12 s after the last");
	check_event(&evs[0], XRL_EV_LIMITED, 3, "198.18.0.1", T0 + 12 * SEC, 4);
	/* other keys are sampled on their own */
	CHECK_EQ(run_from("198.18.0.2"), PASS, "other keys are sampled on their own");
	CHECK_EQ(run_from("198.18.0.2"), DROP, "a packet from 198.18.0.2 is dropped");
	CHECK_EQ(events_read(ev), 1, "one event for another key");
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
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 5"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS, "a packet from src passes");
		CHECK_EQ(run_from(src), DROP, "a packet from src is dropped");
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_BURST, "the burst of the global cap");
	es = estats();
	CHECK_EQ(es.events[0], XRL_EVENT_BURST, "the limited events counted");
	CHECK_EQ(es.dropped_rate, 100, "the events over the cap counted as dropped");
	/* 50 ms later: 50 more */
	xrl_test_clock_set(X, T0 + SEC / 20);
	for (int i = n; i < n + 100; i++) {
		snprintf(src, sizeof(src), "198.19.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS, "50 ms later: 50 more");
		CHECK_EQ(run_from(src), DROP, "a packet from src is dropped");
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_RATE / 20, "50 ms refill the cap by 50 events");
	CHECK_EQ(estats().dropped_rate, 150, "events: dropped rate");
	/* later, the keys come back politely: only those reported say so */
	xrl_test_clock_set(X, T0 + 10 * SEC);
	for (int i = 0; i < n; i++) {
		snprintf(src, sizeof(src), "198.18.%d.%d", i / 250, i % 250 + 1);
		CHECK_EQ(run_from(src), PASS,
			 "later, the keys come back politely: only those reported say so");
	}
	CHECK_EQ(events_read(ev), XRL_EVENT_BURST, "an unlimited event for each key reported");
	CHECK_EQ(estats().events[1], XRL_EVENT_BURST, "events: events");
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
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 1 id 5"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	for (int i = 0; i < cycles; i++) {	/* limited, unlimited: 2 events a cycle */
		xrl_test_clock_set(X, T0 + i * 11 * SEC);
		CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
		CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	}
	xrl_test_clock_set(X, T0 + cycles * 11 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	es = estats();
	CHECK_EQ(es.events[0] + es.events[1], 2 * cycles, "every transition counted");
	CHECK(es.ring_full[0] > 0, "the ring never filled");
	CHECK_EQ(es.ring_full[0], es.ring_full[1], "the same for both");
	CHECK_EQ(events_read(ev) + es.ring_full[0], 2 * cycles,
		 "each event read or counted as ring-full");
	xrl_events_close(ev);
	teardown();
}

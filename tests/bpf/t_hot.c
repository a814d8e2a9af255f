// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The hot-key drop cache: exact answers, invalidation, every algorithm,
 * byte rules, endpoint classes, evicted keys, event counts.
 */
#include "harness.h"

/* The rule and key of a source, for key reset. */
static int key_reset(__u32 id, const char *src)
{
	struct xrl_rule_entry *v;
	struct xrl_key k;
	__u8 a[16];
	int family, err = -ENOENT;
	size_t n;

	if (xrl_addr_parse(src, &family, a) || xrl_rules_get(X, &v, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id == id) {
			xrl_key_of(&k, &v[i].r, family, a);
			err = xrl_bucket_reset(X, &v[i].r, &k);
		}
	}
	free(v);
	return err;
}

/*
 * A key over its limit is dropped by the cache until exactly the time its
 * bucket may admit again (to the test clock's nanosecond), IPv4 and IPv6;
 * the rule's drops count every packet and the key's bucket gets its drops
 * every XRL_HOT_FLUSH.
 */
TEST(hot_cache_exact)
{
	static const char *const src[] = { "198.18.0.1", "2001:db8:1:2::5" };

	one_cpu();	/* the cache is per CPU */
	for (int f = 0; f < 2; f++) {
		struct xrl_rule_stats st;

		setup();
		CHECK(!RULES("rule add 198.18.0.0/15 rate 1/s burst 2 id 1",
			     "rule add 2001:db8::/32 rate 1/s burst 2 id 2"),
		      "the rule set commits: %s", xrl_errmsg());
		CHECK_EQ(run_from(src[f]), PASS, "a packet from src[f] passes");
		CHECK_EQ(run_from(src[f]), PASS, "a packet from src[f] passes");
		CHECK_EQ(run_from(src[f]), DROP, "the bucket's: fills the cache");
		for (int i = 0; i < 15; i++)
			CHECK_EQ(run_from(src[f]), DROP, "a packet from src[f] is dropped");
		st = rstats(f + 1);
		CHECK_EQ(st.hot_dropped, 15, "15 drops answered by the cache");
		CHECK_EQ(st.dropped_packets, 16, "every drop counted for the rule");
		CHECK_EQ(st.passed_packets, 2, "the burst of 2 passed");
		/* the bucket has 1, the cache 15 pending: libxrl adds them */
		CHECK_EQ(bucket_of(f + 1, src[f]).dropped, 16,
			 "the bucket has 1, the cache 15 pending: libxrl adds them");
		CHECK_EQ(run_from(src[f]), DROP, "a packet from src[f] is dropped");
		CHECK_EQ(bucket_of(f + 1, src[f]).dropped, 17, "flushed");
		/* TAT = T0 + 2 s, tolerance 2 s: refused until T0 + 1 s */
		xrl_test_clock_set(X, T0 + SEC - 1);
		CHECK_EQ(run_from(src[f]), DROP,
			 "TAT = T0 + 2 s, tolerance 2 s: refused until T0 + 1 s");
		CHECK_EQ(rstats(f + 1).hot_dropped, 17,
			 "refused until T0 + 1 s: the cache answers");
		xrl_test_clock_set(X, T0 + SEC);
		CHECK_EQ(run_from(src[f]), PASS, "a packet from src[f] passes");
		CHECK_EQ(run_from(src[f]), DROP, "a packet from src[f] is dropped");
		CHECK_EQ(rstats(f + 1).dropped_packets, 19, "every drop counted for the rule");
		teardown();
	}
}

/* Two sources in one /64 share a bucket: each has its own cache entry,
 * both answered exactly; a source of another key is not dropped. */
TEST(hot_cache_ipv6_prefix)
{
	one_cpu();
	setup();
	CHECK(!RULES("rule add 2001:db8::/32 rate 1/s burst 1 id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("2001:db8:1:2::5"), PASS, "a packet from 2001:db8:1:2::5 passes");
	CHECK_EQ(run_from("2001:db8:1:2::5"), DROP, "a packet from 2001:db8:1:2::5 is dropped");
	CHECK_EQ(run_from("2001:db8:1:2::6"), DROP, "same /64");
	CHECK_EQ(run_from("2001:db8:1:2::6"), DROP, "a packet from 2001:db8:1:2::6 is dropped");
	CHECK_EQ(run_from("2001:db8:1:2::5"), DROP, "a packet from 2001:db8:1:2::5 is dropped");
	CHECK_EQ(rstats(2).hot_dropped, 2, "rule 2: hot dropped");
	CHECK_EQ(run_from("2001:db8:1:3::5"), PASS, "another /64");
	teardown();
}

/* A thousand random sources over their limit keep their entries (two ways
 * a set): 987 of them here; a direct-mapped cache of as many entries, 904. */
TEST(hot_cache_thousand_sources)
{
	static unsigned char seen[131072 / 8];
	static unsigned addr[1000];
	unsigned x = 2463534242u;
	char src[32];
	__u64 hits;

	/* a thousand distinct random sources of 198.18.0.0/15 (xorshift): an
	 * arithmetic sequence would spread over the sets too evenly to tell */
	memset(seen, 0, sizeof(seen));
	for (int n = 0; n < 1000; ) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (seen[(x & 131071) / 8] & 1 << (x & 7))
			continue;
		seen[(x & 131071) / 8] |= 1 << (x & 7);
		addr[n++] = x & 131071;
	}
	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1000; i++) {
			snprintf(src, sizeof(src), "198.%u.%u.%u", 18 + (addr[i] >> 16),
				 addr[i] >> 8 & 255, addr[i] & 255);
			CHECK_EQ(run_from(src), round ? DROP : PASS, "a packet from src");
		}
	}
	/* round 1 fills, round 2 hits */
	hits = rstats(1).hot_dropped;
	CHECK(hits >= 980, "%llu of 1000 from the cache", (unsigned long long)hits);
	if (getenv("XRL_DEBUG"))
		fprintf(stderr, "    %llu of 1000 from the cache\n", (unsigned long long)hits);
	teardown();
}

/* A rule-set commit, a key reset, a mode change and the watchdog each end
 * what the cache knows: the next packet takes the whole path. */
TEST(hot_cache_invalidated)
{
	const char *s = "198.18.0.1";

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1 id 1 on-failure open"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 1, "rule 1: hot dropped");
	/* a commit that changes the rule: a fresh bucket */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 2 id 1 on-failure open"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 1, "rule 1: hot dropped");
	/* key reset: a full bucket again */
	CHECK_EQ(key_reset(1, s), 0, "key reset: a full bucket again");
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 2, "rule 1: hot dropped");
	/* a mode change voids the cache; dry-run never uses it (its drops
	 * pass, counted as would-drops); back to enforce, the next drop is
	 * the bucket's, and fills again */
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "xrl_mode_set: %s", xrl_errmsg());
	CHECK_EQ(run_from(s), PASS, "dry-run: would drop");
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(rstats(1).hot_dropped, 2, "rule 1: hot dropped");
	CHECK_EQ(rstats(1).would_drop_packets, 2, "rule 1: would drop packets");
	CHECK(!xrl_mode_set(X, XRL_MODE_ENFORCE), "xrl_mode_set: %s", xrl_errmsg());
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 3, "rule 1: hot dropped");
	/* the watchdog fires: on-failure open passes a cached key */
	xrl_heartbeat(X, 1000, 5 * SEC);	/* at T0 */
	CHECK_EQ(run_from(s), DROP, "the watchdog fires: on-failure open passes a cached key");
	xrl_test_clock_set(X, T0 + 5 * SEC + 1);
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(rstats(1).failure_passed, 1, "rule 1: failure passed");
	xrl_heartbeat(X, 1000, 5 * SEC);	/* back: limited again */
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	teardown();
}

/*
 * The cache never answers for a rule whose refusal is not a drop of every
 * such packet until a known time (hot_cacheable()): a dry-run rule (its
 * drops pass), any rule in dry-run mode. And an entry answers only for what
 * it knows: a byte rule's refusal of a large frame not for a small one, an
 * endpoint rule's not for the source's packets of another class. Each case
 * would drop a packet its rule admits if the cache answered for it.
 */
TEST(hot_cache_only_where_exact)
{
	struct pkt_spec big = { .src = "198.18.3.1", .payload = 458 };	/* 500-byte frame */
	struct pkt_spec small = { .src = "198.18.3.1", .payload = 18 };
	uint8_t b1[512], b2[512];	/* pkt_build clears 512 bytes */
	size_t l1, l2;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 1 dry-run id 1",
		     "rule add 198.18.2.0/24 rate 1000/s burst 1000 id 3",
		     "rule add 198.18.2.0/24 proto udp dport 53 rate 1/h burst 1 id 4",
		     "rule add 198.18.3.0/24 rate 12kbit burst 1600 id 5"),
	      "the rule set commits: %s", xrl_errmsg());
	/* a dry-run rule: every packet passes, would-drops counted */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS,
			 "a dry-run rule: every packet passes, would-drops counted");
	CHECK_EQ(rstats(1).would_drop_packets, 3, "rule 1: would drop packets");
	CHECK_EQ(rstats(1).hot_dropped, 0, "rule 1: hot dropped");
	/* an endpoint rule's drop is not the source's: port 80 still passes */
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_UDP, 53, 0, false, 3), 1,
		 "an endpoint rule's drop is not the source's: port 80 still passes");
	CHECK_EQ(rstats(4).hot_dropped, 1, "rule 4: hot dropped");
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_UDP, 80, 0, false, 3), 3,
		 "of 3 to UDP/80 from 198.18.2.1, those passed");
	CHECK_EQ(ep_send("198.18.2.1", IPPROTO_TCP, 53, 0x10, false, 3), 3,
		 "of 3 ACK to TCP/53 from 198.18.2.1, those passed");
	/* the source rule met what the endpoint rule did not refuse first:
	 * 1 to UDP/53, 3 to UDP/80, 3 to TCP/53 */
	CHECK_EQ(rstats(3).passed_packets, 7, "rule 3: passed packets");
	CHECK_EQ(rstats(4).hot_dropped, 1, "rule 4: hot dropped");
	/* a byte rule: a large frame refused, a small one still fits (1600
	 * bytes of burst: three 500-byte frames, then 100 bytes left) */
	l1 = pkt_build(b1, &big);
	l2 = pkt_build(b2, &small);
	CHECK_EQ(l1, 500, "a byte rule: a large frame refused");
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_raw(b1, l1), PASS, "the frame passes");
	CHECK_EQ(run_raw(b1, l1), DROP, "the frame is dropped");
	CHECK_EQ(run_raw(b2, l2), PASS, "the frame passes");
	CHECK_EQ(rstats(5).hot_dropped, 0, "rule 5: hot dropped");
	/* dry-run mode: a packet rule that would be cached passes */
	CHECK(!RULES("rule add 198.18.4.0/24 rate 1/h burst 1 id 6"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_mode_set(X, XRL_MODE_DRY_RUN), "xrl_mode_set: %s", xrl_errmsg());
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from("198.18.4.1"), PASS, "a packet from 198.18.4.1 passes");
	CHECK_EQ(rstats(6).hot_dropped, 0, "rule 6: hot dropped");
	CHECK_EQ(rstats(6).would_drop_packets, 2, "rule 6: would drop packets");
	teardown();
}

/*
 * The window algorithms: a fixed window refuses until its next window
 * starts, a sliding window until its estimate falls back under the limit
 * (to the microsecond it weighs the previous window with), and the cache
 * answers exactly until then: the last nanosecond before is a cached drop,
 * the first after passes.
 */
TEST(hot_cache_windows)
{
	const char *s = "198.18.1.1", *s2 = "198.18.2.1";

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 rate 3/s algo fixed-window id 1",
		     "rule add 198.18.2.0/24 rate 10/s algo sliding-window id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	/* fixed: T0 starts a window; 3 pass, the 4th is the bucket's drop */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_from(s), PASS,
			 "fixed: T0 starts a window; 3 pass, the 4th is the bucket's drop");
	for (int i = 0; i < 10; i++)
		CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 9, "rule 1: hot dropped");
	xrl_test_clock_set(X, T0 + SEC - 1);
	CHECK_EQ(run_from(s), DROP, "a packet from s is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 10, "rule 1: hot dropped");
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from(s), PASS, "a packet from s passes");
	CHECK_EQ(rstats(1).dropped_packets, 11, "rule 1: dropped packets");
	CHECK_EQ(bucket_of(1, s).dropped, 11, "the bucket of rule 1, s: dropped");
	/* sliding: 10 in the window from T0 + 1 s; half-way through the next
	 * they weigh 5, so 5 more pass; the 6th is refused until the weight
	 * falls to 4: T0 + 2.5 s + 1 us */
	for (int i = 0; i < 10; i++)
		CHECK_EQ(run_from(s2), PASS, "sliding: 10 in the window from T0 + 1 s");
	xrl_test_clock_set(X, T0 + 2 * SEC + SEC / 2);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(run_from(s2), PASS, "a packet from s2 passes");
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from(s2), DROP, "a packet from s2 is dropped");
	CHECK_EQ(rstats(2).hot_dropped, 3, "rule 2: hot dropped");
	xrl_test_clock_set(X, T0 + 2 * SEC + SEC / 2 + 999);
	CHECK_EQ(run_from(s2), DROP, "a packet from s2 is dropped");
	CHECK_EQ(rstats(2).hot_dropped, 4, "rule 2: hot dropped");
	xrl_test_clock_set(X, T0 + 2 * SEC + SEC / 2 + 1000);
	CHECK_EQ(run_from(s2), PASS, "a packet from s2 passes");
	CHECK_EQ(run_from(s2), DROP, "a packet from s2 is dropped");
	CHECK_EQ(rstats(2).passed_packets, 16, "rule 2: passed packets");
	CHECK_EQ(rstats(2).dropped_packets, 6, "rule 2: dropped packets");
	teardown();
}

/*
 * A byte rule's refusal is cached for frames at least as long as the
 * refused one, until exactly the time that length fits again; a shorter
 * frame takes the whole path (and may pass).
 */
TEST(hot_cache_bytes)
{
	struct pkt_spec big = { .src = "198.18.3.1", .payload = 458 };	/* 500 bytes */
	struct pkt_spec huge = { .src = "198.18.3.1", .payload = 470 };	/* 512 bytes */
	struct pkt_spec small = { .src = "198.18.3.1", .payload = 18 };	/* 60 bytes */
	uint8_t b1[512], b2[512], b3[512];
	size_t l1, l2, l3;

	one_cpu();
	setup();
	/* 1,500 bytes a second, 1,600 of burst */
	CHECK(!RULES("rule add 198.18.3.0/24 rate 12kbit burst 1600 id 5"),
	      "the rule set commits: %s", xrl_errmsg());
	l1 = pkt_build(b1, &big);
	l2 = pkt_build(b2, &small);
	l3 = pkt_build(b3, &huge);
	CHECK_EQ(l1, 500, "a 500-byte frame");
	CHECK_EQ(l2, 60, "a 60-byte frame");
	CHECK_EQ(l3, 512, "a 512-byte frame");
	for (int i = 0; i < 3; i++)
		CHECK_EQ(run_raw(b1, l1), PASS, "the frame passes");
	CHECK_EQ(run_raw(b1, l1), DROP, "the bucket's: cached for >= 500");
	CHECK_EQ(run_raw(b1, l1), DROP, "the frame is dropped");
	CHECK_EQ(run_raw(b3, l3), DROP, "the frame is dropped");
	CHECK_EQ(rstats(5).hot_dropped, 2, "rule 5: hot dropped");
	CHECK_EQ(run_raw(b2, l2), PASS, "60 of the 100 left");
	CHECK_EQ(run_raw(b2, l2), DROP, "40 left: refused, cached for >= 60");
	CHECK_EQ(run_raw(b1, l1), DROP, "the frame is dropped");
	CHECK_EQ(rstats(5).hot_dropped, 3, "rule 5: hot dropped");
	/* 1,560 bytes taken: 500 fit again when 460 have come back, after
	 * 460 / 1500 s = 306.67 ms; the 60-byte frame's entry replaced the
	 * 500-byte one, and holds until 20 bytes came back (13.3 ms) */
	xrl_test_clock_set(X, T0 + 13 * 1000000);
	CHECK_EQ(run_raw(b1, l1), DROP, "cached, >= 60");
	CHECK_EQ(rstats(5).hot_dropped, 4, "rule 5: hot dropped");
	xrl_test_clock_set(X, T0 + 14 * 1000000);
	CHECK_EQ(run_raw(b1, l1), DROP, "the bucket's again: >= 500");
	CHECK_EQ(rstats(5).hot_dropped, 4, "rule 5: hot dropped");
	xrl_test_clock_set(X, T0 + 306 * 1000000);
	CHECK_EQ(run_raw(b1, l1), DROP, "the frame is dropped");
	CHECK_EQ(rstats(5).hot_dropped, 5, "rule 5: hot dropped");
	xrl_test_clock_set(X, T0 + 307 * 1000000);
	CHECK_EQ(run_raw(b1, l1), PASS, "the frame passes");
	CHECK_EQ(rstats(5).dropped_packets, 8, "rule 5: dropped packets");
	teardown();
}

/*
 * An endpoint rule's refusal is cached for the source and the packet's
 * endpoint slot, answered before the source rule (which the endpoint
 * rule's refusals cost nothing, as the whole path does), for IPv4 and
 * IPv6; another class of the same source, or another source, is not
 * touched.
 */
TEST(hot_cache_endpoint)
{
	static const char *const src[] = { "198.18.2.1", "2001:db8:2::1" };

	one_cpu();
	for (int f = 0; f < 2; f++) {
		const char *other = f ? "2001:db8:3::1" : "198.18.2.2";

		setup();
		CHECK(!RULES("rule add 198.18.0.0/15 rate 1000/s burst 1000 id 1",
			     "rule add 2001:db8::/32 rate 1000/s burst 1000 id 2",
			     "rule add 198.18.2.0/24 proto udp dport 53 rate 1/s burst 2 id 3",
			     "rule add 2001:db8::/32 proto udp dport 53 rate 1/s burst 2 id 4",
			     "rule add 0.0.0.0/0 proto tcp syn rate 1/h burst 1 id 5",
			     "rule add ::/0 proto tcp syn rate 1/h burst 1 id 6"),
		      "the rule set commits: %s", xrl_errmsg());
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 10), 2,
			 "the endpoint rule's burst of 2");
		CHECK_EQ(rstats(3 + f).hot_dropped, 7, "7 drops answered by the cache");
		CHECK_EQ(rstats(3 + f).dropped_packets, 8,
			 "every drop counted for the endpoint rule");
		CHECK_EQ(rstats(1 + f).passed_packets, 2,
			 "the source rule's: the 2 the endpoint rule admitted");
		/* another class (a SYN, its own rule), another port, another source */
		CHECK_EQ(ep_send(src[f], IPPROTO_TCP, 80, 0x02, false, 3), 1,
			 "another class (a SYN, its own rule), another port, another source");
		CHECK_EQ(rstats(5 + f).hot_dropped, 1, "the SYN rule's drop cached");
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 54, 0, false, 3), 3,
			 "of 3 to UDP/54 from src[f], those passed");
		CHECK_EQ(ep_send(other, IPPROTO_UDP, 53, 0, false, 3), 2,
			 "of 3 to UDP/53 from other, those passed");
		CHECK_EQ(rstats(3 + f).hot_dropped, 7, "another port or source: no cached drop");
		/* refused until TAT + T - L = T0 + 2 s + 1 s - 2 s */
		xrl_test_clock_set(X, T0 + SEC - 1);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 1), 0,
			 "refused until TAT + T - L = T0 + 2 s + 1 s - 2 s");
		CHECK_EQ(rstats(3 + f).hot_dropped, 8, "one more drop answered by the cache");
		xrl_test_clock_set(X, T0 + SEC);
		CHECK_EQ(ep_send(src[f], IPPROTO_UDP, 53, 0, false, 2), 1,
			 "of 2 to UDP/53 from src[f], those passed");
		CHECK_EQ(bucket_of(3 + f, src[f]).dropped, 10, "every drop in the key's bucket");
		teardown();
	}
}

/*
 * Review: an endpoint rule that covers two endpoint classes (53 alone, and
 * 54 shared with another rule) has one bucket per source, but its cache
 * entries are per class. The drops cached under the other class are in
 * the key's count (show) and must be in its "unlimited" event too.
 */
TEST(hot_cache_endpoint_two_classes)
{
	const char *src = "198.18.2.1";
	struct xrl_events *ev;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.2.0/24 proto udp dport 53-54 rate 1/s burst 2 id 3",
		     "rule add 198.18.9.0/24 proto udp dport 54 rate 1/s burst 2 id 4"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 53, 0, false, 2), 2, "the burst of 2 passes");
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 53, 0, false, 5), 0, "1 + 4 cached");
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 54, 0, false, 5), 0, "1 + 4 cached");
	CHECK_EQ(rstats(3).hot_dropped, 8, "rule 3: hot dropped");
	CHECK_EQ(rstats(3).dropped_packets, 10, "rule 3: dropped packets");
	CHECK_EQ(bucket_of(3, src).dropped, 10, "every drop in the key's bucket");
	CHECK_EQ(events_read(ev), 1, "one limited event");
	xrl_test_clock_set(X, T0 + 10 * SEC);
	CHECK_EQ(ep_send(src, IPPROTO_UDP, 54, 0, false, 1), 1,
		 "the key passes again on its other class");
	CHECK_EQ(events_read(ev), 1, "one unlimited event");
	CHECK_EQ(evs[0].kind, XRL_EV_UNLIMITED, "the event is unlimited");
	CHECK_EQ(evs[0].dropped, 10, "every drop of the key so far");
	CHECK_EQ(bucket_of(3, src).dropped, 10, "the bucket holds every drop");
	xrl_events_close(ev);
	teardown();
}

/*
 * Review: a source the cache holds refused stops touching its bucket, so
 * the LRU table evicts that bucket first under key pressure; the whole
 * path would then start it afresh. An operator's "key reset" of it finds
 * no bucket (-ENOENT, "nothing to forgive") and leaves the cache as it
 * is: the source stays dropped until the refusal's time (here an hour).
 */
TEST(hot_cache_reset_evicted_key)
{
	const char *src = "198.18.0.1";
	struct xrl_rule_entry *v;
	struct xrl_bucket b;
	struct xrl_key k;
	char a[32];
	__u8 addr[16];
	int family, err;
	size_t n;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1 new-keys 100000000/s id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from(src), PASS, "a packet from src passes");
	CHECK_EQ(run_from(src), DROP, "the bucket's: cached for an hour");
	CHECK_EQ(run_from(src), DROP, "a packet from src is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 1, "rule 1: hot dropped");
	for (int i = 0; i < 8 * 4096; i++) {	/* other sources fill the table */
		snprintf(a, sizeof(a), "198.19.%d.%d", i / 250, i % 250 + 1);
		run_from(a);
		run_from(a);		/* referenced: the LRU's active list */
	}
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "xrl_rules_get: %s", xrl_errmsg());
	xrl_addr_parse(src, &family, addr);
	xrl_key_of(&k, &v[0].r, family, addr);
	if (xrl_bucket_get(X, &k, &b) == 0) {
		fprintf(stderr, "    note: the key was not evicted: nothing shown\n");
	} else {
		err = xrl_bucket_reset(X, &v[0].r, &k);
		CHECK_EQ(err, -ENOENT, "an evicted key has nothing to reset");
		/* the whole path: a new bucket, full; reset or not */
		CHECK_EQ(run_from(src), PASS, "the whole path: a new bucket, full; reset or not");
	}
	free(v);
	teardown();
}

/*
 * Review: the same eviction without an operator. A fixed window's refusal
 * holds until the window ends (an hour here); once the LRU table evicted
 * the key's bucket (a cached drop never looks it up: it went cold), the
 * whole path would admit the source's next packet in a fresh bucket, the
 * cache drops it until the hour is over.
 */
TEST(hot_cache_evicted_window_key)
{
	const char *src = "198.18.0.1";
	struct xrl_rule_entry *v;
	struct xrl_bucket b;
	struct xrl_key k;
	char a[32];
	__u8 addr[16];
	int family;
	size_t n;

	one_cpu();
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h algo fixed-window new-keys 100000000/s id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from(src), PASS, "a packet from src passes");
	CHECK_EQ(run_from(src), DROP, "cached until the hour ends");
	CHECK_EQ(run_from(src), DROP, "a packet from src is dropped");
	CHECK_EQ(rstats(1).hot_dropped, 1, "rule 1: hot dropped");
	for (int i = 0; i < 8 * 4096; i++) {
		snprintf(a, sizeof(a), "198.19.%d.%d", i / 250, i % 250 + 1);
		run_from(a);
		run_from(a);
	}
	CHECK(!xrl_rules_get(X, &v, &n) && n == 1, "xrl_rules_get: %s", xrl_errmsg());
	xrl_addr_parse(src, &family, addr);
	xrl_key_of(&k, &v[0].r, family, addr);
	if (xrl_bucket_get(X, &k, &b) == 0)
		fprintf(stderr, "    note: the key was not evicted: nothing shown\n");
	else
		CHECK_EQ(run_from(src), PASS, "the whole path's verdict");
	free(v);
	teardown();
}

static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Drops answered by the cache on one CPU are in the key's "unlimited"
 * event when it passes again on another. */
TEST(hot_cache_event_counts)
{
	struct xrl_events *ev;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("one CPU online: needs two");
	on_cpu(0);
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 10/s burst 5 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(!xrl_events_open(X, XRL_EVENTS_RLD, collect, NULL, &ev),
	      "xrl_events_open: %s", xrl_errmsg());
	for (int i = 0; i < 5; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	for (int i = 0; i < 20; i++)
		CHECK_EQ(run_from("198.18.0.1"), DROP, "1 by the bucket, 19 cached");
	CHECK_EQ(rstats(1).hot_dropped, 19, "rule 1: hot dropped");
	on_cpu(1);
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(events_read(ev), 2, "limited, then unlimited");
	CHECK_EQ(evs[1].kind, XRL_EV_UNLIMITED, "the second event is unlimited");
	CHECK_EQ(evs[1].dropped, 20, "the drops cached on the other CPU counted");
	xrl_events_close(ev);
	teardown();
	on_cpu(0);
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rules: allow and deny, the modes, the most specific prefix, commits
 * (all or nothing, atomic swaps, the rule limit), the watchdog.
 */
#include "harness.h"

TEST(allow_deny)
{
	int pass = 0, drop = 0;

	setup();
	CHECK(!RULES("rule add 198.18.1.0/24 action allow", "rule add 198.18.2.0/24 action deny"),
	      "the rule set commits: %s", xrl_errmsg());
	for (int i = 0; i < 50; i++) {
		pass += run_from("198.18.1.1") == PASS;
		drop += run_from("198.18.2.1") == DROP;
	}
	CHECK_EQ(pass, 50, "every packet of the allowed source passes");
	CHECK_EQ(drop, 50, "every packet of the denied source is dropped");
	CHECK_EQ(rstats(1).passed_packets, 50, "rule 1: passed packets");
	CHECK_EQ(rstats(2).dropped_packets, 50, "rule 2: dropped packets");
	CHECK_EQ(rstats(1).new_keys + rstats(2).new_keys, 0, "never metered");
	teardown();
}

TEST(modes)
{
	struct pkt_spec arp = {};
	struct xrl_global_stats g;
	int v[4];

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 2",
	      "rule add 198.18.1.0/24 action allow"),
	      "the rule set commits: %s", xrl_errmsg());
	/* enforce */
	for (int i = 0; i < 4; i++)
		v[i] = run_from("198.18.0.1");
	CHECK(v[0] == PASS && v[1] == PASS && v[2] == DROP && v[3] == DROP, "enforce");
	/* dry-run: metered and counted, everything passes */
	xrl_mode_set(X, XRL_MODE_DRY_RUN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.2"), PASS,
			 "dry-run: metered and counted, everything passes");
	/* two would-drops, counted apart from the two real drops */
	CHECK_EQ(rstats(1).dropped_packets, 2,
		 "two would-drops, counted apart from the two real drops");
	CHECK_EQ(rstats(1).would_drop_packets, 2, "rule 1: would drop packets");
	CHECK_EQ(rstats(1).new_keys, 2, "rule 1: new keys");
	/* fail-open: everything passes, nothing metered */
	xrl_mode_set(X, XRL_MODE_FAIL_OPEN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.3"), PASS,
			 "fail-open: everything passes, nothing metered");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "even an exhausted key");
	CHECK_EQ(rstats(1).new_keys, 2, "rule 1: new keys");
	/* fail-closed: only allow rules (and non-IP) pass */
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.0.4"), DROP, "fail-closed: only allow rules (and non-IP) pass");
	CHECK_EQ(run_from("198.18.1.1"), PASS, "a packet from 198.18.1.1 passes");
	CHECK_EQ(run_from("198.18.9.1"), DROP, "unmatched");
	CHECK_EQ(run(&arp), PASS, "the frame passes");
	g = gstats();
	CHECK_EQ(g.passed_packets[XRL_MODE_ENFORCE], 2, "enforce: 2 passed");
	CHECK_EQ(g.dropped_packets[XRL_MODE_ENFORCE], 2, "enforce: 2 dropped");
	CHECK_EQ(g.passed_packets[XRL_MODE_DRY_RUN], 4, "dry-run: every packet passed");
	CHECK_EQ(g.dropped_packets[XRL_MODE_DRY_RUN], 0, "dry-run: nothing dropped");
	CHECK_EQ(g.passed_packets[XRL_MODE_FAIL_OPEN], 5, "fail-open: every packet passed");
	CHECK_EQ(g.passed_packets[XRL_MODE_FAIL_CLOSED], 2,
		 "fail-closed: the allow rule and ARP passed");
	CHECK_EQ(g.dropped_packets[XRL_MODE_FAIL_CLOSED], 2, "fail-closed: the others dropped");
	/* back to enforce: the bucket state was kept */
	xrl_mode_set(X, XRL_MODE_ENFORCE);
	CHECK_EQ(run_from("198.18.0.1"), DROP, "back to enforce: the bucket state was kept");
	teardown();
}

TEST(most_specific_prefix)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1",
		     "rule add 198.18.1.0/24 action allow",
		     "rule add 198.18.1.128/25 action deny",
		     "rule add 198.18.1.77/32 rate 1/h burst 2"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.1.5"), PASS, "a packet from 198.18.1.5 passes");
	CHECK_EQ(run_from("198.18.1.5"), PASS, "allow");
	CHECK_EQ(run_from("198.18.1.200"), DROP, "deny /25");
	CHECK_EQ(run_from("198.18.2.1"), PASS, "/15 limit");
	CHECK_EQ(run_from("198.18.2.1"), DROP, "a packet from 198.18.2.1 is dropped");
	CHECK_EQ(run_from("198.18.1.77"), PASS, "/32 limit, burst 2");
	CHECK_EQ(run_from("198.18.1.77"), PASS, "a packet from 198.18.1.77 passes");
	CHECK_EQ(run_from("198.18.1.77"), DROP, "a packet from 198.18.1.77 is dropped");
	CHECK_EQ(run_from("198.20.0.1"), PASS, "unmatched");
	CHECK_EQ(gstats().unmatched_packets, 1, "global: unmatched packets");
	teardown();
}

TEST(rule_change_next_packet)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	/* a changed rule meters with a fresh bucket from the next packet on */
	CHECK(!RULES("rule add 198.18.0.0/15 rate 1/h burst 3"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	/* changed to deny, then removed */
	CHECK(!RULES("rule add 198.18.0.0/15 action deny"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.9"), DROP, "a packet from 198.18.0.9 is dropped");
	CHECK(!set_rules((const char *const[]){ NULL }), "empty set");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(gstats().unmatched_packets, 1, "global: unmatched packets");
	teardown();
}

TEST(unchanged_rule_keeps_bucket)
{
	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1 id 1",
		     "rule add 198.19.0.0/16 rate 1/h burst 1 id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP, "still limited");
	CHECK_EQ(rstats(1).dropped_packets, 2, "counters kept too");
	CHECK_EQ(run_from("198.19.0.1"), PASS, "a packet from 198.19.0.1 passes");
	teardown();
}

/* The daemon's watchdog: a stale heartbeat makes each rule follow its
 * on-failure policy; a new heartbeat restores enforcement. */
TEST(watchdog_policies)
{
	struct xrl_rule_entry *v = NULL;
	struct xrl_control *c;
	size_t n = 0;

	setup();
	c = xrl_control(X);
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 1 on-failure open",
		     "rule add 198.18.1.0/24 rate 1/h burst 1 on-failure closed",
		     "rule add 198.18.2.0/24 action allow",
		     "rule add 198.18.3.0/24 action deny"),
	      "the rule set commits: %s", xrl_errmsg());
	/* the grammar refuses on-failure with allow (it means nothing there);
	 * the data path must pass an allow rule whatever the field holds */
	CHECK(!xrl_rules_get(X, &v, &n) && n == 4, "rules");
	for (size_t i = 0; i < n; i++)
		if (v[i].r.action == XRL_ACT_ALLOW)
			v[i].r.on_failure = XRL_FAIL_CLOSED;
	CHECK(!xrl_rules_commit(X, v, n), "xrl_rules_commit: %s", xrl_errmsg());
	free(v);
	xrl_heartbeat(X, 1000, 5 * SEC);	/* heartbeat at T0, watchdog 5 s */
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "enforced");
	CHECK_EQ(run_from("198.18.1.1"), PASS, "a packet from 198.18.1.1 passes");
	CHECK_EQ(run_from("198.18.1.2"), PASS, "a packet from 198.18.1.2 passes");
	/* not yet: exactly the watchdog time */
	xrl_test_clock_set(X, T0 + 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), DROP, "not yet: exactly the watchdog time");
	CHECK_EQ(run_from("198.18.1.3"), PASS, "a new key, metered");
	/* past it: each rule's policy */
	xrl_test_clock_set(X, T0 + 5 * SEC + 1);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "open");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.1.4"), DROP, "closed, even a new key");
	CHECK_EQ(run_from("198.18.2.1"), PASS, "allow always passes");
	CHECK_EQ(run_from("198.18.3.1"), PASS, "deny, open by default");
	CHECK_EQ(rstats(1).failure_passed, 2, "rule 1: failure passed");
	CHECK_EQ(rstats(2).failure_dropped, 1, "rule 2: failure dropped");
	CHECK_EQ(rstats(4).failure_passed, 1, "rule 4: failure passed");
	/* a new heartbeat: enforcement again, with the buckets it had */
	xrl_heartbeat(X, 1000, 5 * SEC);
	CHECK_EQ(run_from("198.18.0.1"), DROP,
		 "a new heartbeat: enforcement again, with the buckets it had");
	CHECK_EQ(run_from("198.18.1.1"), DROP, "a packet from 198.18.1.1 is dropped");
	CHECK_EQ(run_from("198.18.3.1"), DROP, "a packet from 198.18.3.1 is dropped");
	/* watchdog 0: a heartbeat however old never fires */
	xrl_heartbeat(X, 1000, 0);
	xrl_test_clock_set(X, T0 + 3600 * SEC);
	CHECK_EQ(run_from("198.18.1.4"), PASS, "watchdog 0: a heartbeat however old never fires");
	CHECK_EQ(run_from("198.18.1.4"), DROP, "a packet from 198.18.1.4 is dropped");
	CHECK(c->watchdog_ns == 0, "disarmed");
	/* the operator's fail-closed comes before the watchdog */
	xrl_heartbeat(X, 1000, 1);
	xrl_test_clock_set(X, T0 + 7200 * SEC);
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);
	CHECK_EQ(run_from("198.18.0.9"), DROP,
		 "the operator's fail-closed comes before the watchdog");
	teardown();
}

/* A failed commit changes nothing. */
TEST(commit_all_or_nothing)
{
	struct xrl_rule_entry *v;
	size_t n = 0;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK(RULES("rule add 198.19.0.0/16 rate 1/h burst 1",
		    "rule add 198.19.0.0/16 rate 2/h burst 1") != 0, "duplicate refused");
	CHECK(RULES("rule add 198.19.0.0/16 rate 1/h burst 1 id 5",
		    "rule add 198.20.0.0/16 rate 1/h burst 1 id 5") != 0, "duplicate id refused");
	CHECK(!xrl_rules_get(X, &v, &n), "get");
	CHECK_EQ(n, 1, "only the first rule set published");
	free(v);
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.19.0.1"), PASS, "a packet from 198.19.0.1 passes");
	CHECK_EQ(gstats().unmatched_packets, 1, "global: unmatched packets");
	teardown();
}

/* A map of the loaded program, by name: a new fd, or -1. */
static int prog_map_fd(const char *name)
{
	__u32 ids[32], nids = 32;
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

/* No inner rule map at all (a crash between load and the first set, a
 * hand-edited map): the program passes the packet as unmatched, readers see
 * no rules, and the next commit publishes a set again. */
TEST(no_rule_set)
{
	struct xrl_rule_entry *v = NULL, m;
	int fd4, fd6;
	__u32 zero = 0;
	__u8 a[16] = { 198, 18, 0, 1 };
	size_t n = 1;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 action deny", "rule add 2001:db8::/32 action deny"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	fd4 = prog_map_fd("xrl_rules4");
	fd6 = prog_map_fd("xrl_rules6");
	CHECK(fd4 >= 0 && fd6 >= 0, "outer maps found");
	CHECK(!bpf_map_delete_elem(fd4, &zero), "delete: %s", strerror(errno));
	CHECK(!bpf_map_delete_elem(fd6, &zero), "delete: %s", strerror(errno));
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("2001:db8::1"), PASS, "a packet from 2001:db8::1 passes");
	CHECK_EQ(gstats().unmatched_packets, 2, "global: unmatched packets");
	xrl_mode_set(X, XRL_MODE_FAIL_CLOSED);		/* unmatched, failing closed */
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	xrl_mode_set(X, XRL_MODE_ENFORCE);
	CHECK(!xrl_rules_get(X, &v, &n), "xrl_rules_get: %s", xrl_errmsg());
	CHECK_EQ(n, 0, "no rule left");
	free(v);
	CHECK_EQ(xrl_rule_match(X, 4, a, &m), -ENOENT, "no rule matches after the delete");
	CHECK(!RULES("rule add 198.18.0.0/16 action deny"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	CHECK_EQ(run_from("2001:db8::1"), PASS, "an empty IPv6 set");
	CHECK_EQ(gstats().unmatched_packets, 4, "global: unmatched packets");
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	teardown();
}

/* ---- a rule-set swap under traffic ---- */

/*
 * Set A and set B give 198.18.1.1 and 2001:db8:1::1 a DROP by different
 * rules, and 198.18.2.1 a PASS (A) or a DROP (B). Both sets insert their
 * /16 (/32) allow first: a packet that saw a half-built or empty set would
 * PASS 198.18.1.1 (or 2001:db8:1::1), or count as unmatched.
 */
static const char *const swap_a[] = {
	"rule add 198.18.0.0/16 action allow id 1",
	"rule add 198.18.1.0/24 action deny id 2",
	"rule add 2001:db8::/32 action allow id 3",
	"rule add 2001:db8:1::/48 action deny id 4",
	NULL,
};
static const char *const swap_b[] = {
	"rule add 198.18.0.0/16 action allow id 1",
	"rule add 2001:db8::/32 action allow id 3",
	"rule add 198.18.1.0/25 action deny id 5",
	"rule add 198.18.1.128/25 action deny id 6",
	"rule add 198.18.2.0/24 action deny id 7",
	"rule add 2001:db8:1::/49 action deny id 8",
	"rule add 2001:db8:1:8000::/49 action deny id 9",
	NULL,
};

struct swap_probe {
	int cpu, prog_fd;
	volatile int *stop;
	unsigned long runs, bad, err, a_seen, b_seen;
};

static int run_fd(int fd, const uint8_t *buf, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1);

	return bpf_prog_test_run_opts(fd, &o) ? -1 : (int)o.retval;
}

static void *swap_probe(void *arg)
{
	struct swap_probe *p = arg;
	struct pkt_spec s1 = { .src = "198.18.1.1", .payload = 18 };
	struct pkt_spec s2 = { .src = "198.18.2.1", .payload = 18 };
	struct pkt_spec s6 = { .src = "2001:db8:1::1", .payload = 18 };
	uint8_t b1[512], b2[512], b6[512];
	size_t l1 = pkt_build(b1, &s1), l2 = pkt_build(b2, &s2), l6 = pkt_build(b6, &s6);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!*p->stop) {
		int v1 = run_fd(p->prog_fd, b1, l1);
		int v2 = run_fd(p->prog_fd, b2, l2);
		int v6 = run_fd(p->prog_fd, b6, l6);

		p->runs += 3;
		if (v1 < 0 || v2 < 0 || v6 < 0) {
			p->err++;
			continue;
		}
		p->bad += (v1 != DROP) + (v6 != DROP);
		p->a_seen += v2 == PASS;
		p->b_seen += v2 == DROP;
	}
	return NULL;
}

/* Packets see the old rule set or the new one, never a mix or an empty
 * one, while one thread commits A and B in turn as fast as it can. */
TEST(rule_swap_atomic)
{
	volatile int stop = 0;
	struct swap_probe p[3];
	pthread_t t[3];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), np = 3, commits = 0, cerr = 0;
	unsigned long bad = 0, runs = 0, a_seen = 0, b_seen = 0, err = 0;
	struct timespec t0, now;

	setup();
	CHECK(!set_rules(swap_a), "the rule set commits: %s", xrl_errmsg());
	for (int i = 0; i < np; i++) {
		p[i] = (struct swap_probe){ .cpu = i % ncpu, .prog_fd = xrl_prog_fd(X), .stop = &stop };
		pthread_create(&t[i], NULL, swap_probe, &p[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (set_rules(commits & 1 ? swap_a : swap_b))
			cerr++;
		commits++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - t0.tv_sec) * 1000000000LL + now.tv_nsec - t0.tv_nsec < 3 * 1000000000LL);
	stop = 1;
	for (int i = 0; i < np; i++) {
		pthread_join(t[i], NULL);
		bad += p[i].bad, runs += p[i].runs, err += p[i].err;
		a_seen += p[i].a_seen, b_seen += p[i].b_seen;
	}
	fprintf(stderr, "    %d commits, %lu packets, %lu saw A, %lu saw B, %lu mixed\n",
		commits, runs, a_seen, b_seen, bad);
	CHECK(cerr == 0, "%d commits failed: %s", cerr, xrl_errmsg());
	CHECK(err == 0, "%lu test runs failed", err);
	CHECK(bad == 0, "%lu packets saw a half-built or empty rule set", bad);
	CHECK_EQ(gstats().unmatched_packets, 0, "global: unmatched packets");
	CHECK(a_seen && b_seen, "both sets were seen (A %lu, B %lu)", a_seen, b_seen);
	teardown();
}

/* The active rule 1 and its bucket, as test_failed_commit_keeps_state
 * left them: passed 2, dropped 1, burst 2, the bucket exhausted. */
static void check_rule1_unchanged(const char *what, const struct xrl_bucket *b0)
{
	struct xrl_rule_stats st = rstats(1);
	struct xrl_bucket b = bucket_of(1, "198.18.0.1");
	struct xrl_rule_entry *v;
	size_t n = 0;

	CHECK(st.passed_packets == 2 && st.dropped_packets == 1 && st.new_keys == 1,
	      "%s: counters of rule 1 are passed %llu dropped %llu new keys %llu", what,
	      (unsigned long long)st.passed_packets, (unsigned long long)st.dropped_packets,
	      (unsigned long long)st.new_keys);
	CHECK(b.tat == b0->tat && b.dropped == b0->dropped, "%s: bucket changed", what);
	CHECK(!xrl_rules_get(X, &v, &n), "xrl_rules_get: %s", xrl_errmsg());
	CHECK(n == 1 && v[0].r.id == 1 && v[0].r.burst == 2,
	      "%s: rule set changed (%zu rules)", what, n);
	free(v);
}

/* XRL_MAX_RULES + 1 distinct rules: new ones from index 0, half IPv4 /32s in
 * 198.19.0.0/16, half IPv6 /128s; `action` for all. */
static struct xrl_rule_entry *many_rules(size_t n, int action)
{
	struct xrl_rule_entry *v = calloc(n, sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		v[i].r.action = action;
		if (i % 2 == 0) {
			v[i].family = 4, v[i].prefix_len = 32;
			v[i].addr[0] = 198, v[i].addr[1] = 19;
			v[i].addr[2] = i >> 9, v[i].addr[3] = i >> 1;
		} else {
			v[i].family = 6, v[i].prefix_len = 128;
			v[i].addr[0] = 0x20, v[i].addr[1] = 0x01, v[i].addr[2] = 0x0d, v[i].addr[3] = 0xb8;
			v[i].addr[14] = i >> 8, v[i].addr[15] = i;
		}
	}
	return v;
}

/* A refused commit, early or late, leaves the active rules, their counters
 * and their buckets as they were. */
TEST(failed_commit_keeps_state)
{
	struct xrl_rule_entry v[3], *big;
	struct xrl_bucket b0;
	struct rlimit rl, low;
	int fd, err;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/16 rate 1/h burst 2 id 1"),
	      "the rule set commits: %s", xrl_errmsg());
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), PASS, "a packet from 198.18.0.1 passes");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	b0 = bucket_of(1, "198.18.0.1");
	CHECK(b0.tat != 0, "rule 1 has a bucket");
	check_rule1_unchanged("before", &b0);

	/* an invalid rule: refused by validation */
	v[0] = entry("rule add 198.18.0.0/16 rate 1/h burst 3 id 1");
	v[1] = entry("rule add 198.20.0.0/16 rate 1/h burst 1");
	v[1].r.burst = 0;
	CHECK(xrl_rules_commit(X, v, 2) == -EINVAL, "invalid rule refused");
	check_rule1_unchanged("invalid rule", &b0);

	/* one rule too many, none of them rule 1's: every slot but rule 1's
	 * is taken before the limit shows, unless the limit is checked first */
	big = many_rules(XRL_MAX_RULES + 1, XRL_ACT_DENY);
	CHECK(big && xrl_rules_commit(X, big, XRL_MAX_RULES + 1) == -ENOSPC,
	      "too many rules refused: %s", xrl_errmsg());
	free(big);
	check_rule1_unchanged("too many rules", &b0);

	/* a late failure: slots chosen, then no file descriptor for the fresh
	 * rule sets (the lowest free fd is the only one left) */
	v[0] = entry("rule add 198.18.0.0/16 rate 1/h burst 3 id 1");
	v[1] = entry("rule add 198.20.0.0/16 rate 1/h burst 1 id 2");
	v[2] = entry("rule add 2001:db8::/32 rate 1/h burst 1 id 3");
	fd = dup(0);
	close(fd);
	getrlimit(RLIMIT_NOFILE, &rl);
	low = rl;
	low.rlim_cur = fd + 1;
	CHECK(!setrlimit(RLIMIT_NOFILE, &low), "setrlimit: %s", strerror(errno));
	err = xrl_rules_commit(X, v, 3);
	setrlimit(RLIMIT_NOFILE, &rl);
	CHECK(err == -EMFILE, "late failure: %d (%s)", err, err ? xrl_errmsg() : "committed");
	check_rule1_unchanged("late failure", &b0);

	/* and the rule still meters with the bucket it had */
	CHECK_EQ(run_from("198.18.0.1"), DROP, "and the rule still meters with the bucket it had");
	CHECK_EQ(rstats(1).dropped_packets, 2, "rule 1: dropped packets");
	CHECK_EQ(gstats().unmatched_packets, 0, "global: unmatched packets");
	teardown();
}

/* XRL_MAX_RULES rules in all, both families together: one more is refused
 * by validation with a message; the limit itself commits, and so does a
 * whole new set of that size (fresh slots for every rule). */
TEST(rule_limit)
{
	struct xrl_rule_entry *v = many_rules(XRL_MAX_RULES + 1, XRL_ACT_DENY), *got;
	struct xrl_rule_entry *w = many_rules(XRL_MAX_RULES, XRL_ACT_ALLOW);
	unsigned char *slots = calloc(2 * XRL_MAX_RULES, 1);
	size_t bad = 0, n = 0, clash = 0, out = 0;

	setup();
	CHECK(v && w && slots, "memory");
	CHECK(xrl_rules_validate(v, XRL_MAX_RULES + 1, &bad) == -ENOSPC, "one too many refused");
	CHECK(strstr(xrl_errmsg(), "too many rules") && strstr(xrl_errmsg(), "16384"),
	      "message: %s", xrl_errmsg());
	CHECK_EQ(bad, XRL_MAX_RULES, "the first entry past the limit named");
	CHECK(!xrl_rules_validate(v, XRL_MAX_RULES, &bad), "xrl_rules_validate: %s", xrl_errmsg());
	CHECK(!xrl_rules_commit(X, v, XRL_MAX_RULES), "xrl_rules_commit: %s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &got, &n), "xrl_rules_get: %s", xrl_errmsg());
	CHECK_EQ(n, XRL_MAX_RULES, "every rule of a full set published");
	for (size_t i = 0; i < n; i++) {
		if (got[i].r.slot < 2 * XRL_MAX_RULES)
			slots[got[i].r.slot] = 1;
		else
			out++;
	}
	free(got);
	CHECK_EQ(run_from("198.19.0.0"), DROP, "v[0]");
	CHECK_EQ(run_from("2001:db8::1"), DROP, "v[1]");

	/* every rule changed: none may take a slot the published set holds */
	CHECK(!xrl_rules_commit(X, w, XRL_MAX_RULES), "xrl_rules_commit: %s", xrl_errmsg());
	CHECK(!xrl_rules_get(X, &got, &n), "xrl_rules_get: %s", xrl_errmsg());
	CHECK_EQ(n, XRL_MAX_RULES, "every rule of the changed set published");
	for (size_t i = 0; i < n; i++) {
		if (got[i].r.slot >= 2 * XRL_MAX_RULES)
			out++;
		else if (slots[got[i].r.slot])
			clash++;
	}
	free(got);
	CHECK_EQ(out, 0, "every slot within the table");
	CHECK_EQ(clash, 0, "no slot shared with the published set");
	CHECK_EQ(run_from("198.19.0.0"), PASS, "a packet from 198.19.0.0 passes");
	CHECK_EQ(gstats().unmatched_packets, 0, "global: unmatched packets");
	free(v);
	free(w);
	free(slots);
	teardown();
}

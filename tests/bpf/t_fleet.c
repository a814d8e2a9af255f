// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fleet-wide rules: the share, candidates for a lease, leases.
 */
#include "harness.h"

static struct xrl_rule_entry rule_of(__u32 id)
{
	struct xrl_rule_entry *v, e = {};
	size_t n;

	if (xrl_rules_get(X, &v, &n))
		return e;
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id == id)
			e = v[i];
	free(v);
	return e;
}

static struct xrl_key key4(const struct xrl_rule_entry *e, const char *addr)
{
	struct xrl_key k = {};
	int family;
	__u8 a[16];

	xrl_addr_parse(addr, &family, a);
	xrl_key_of(&k, &e->r, family, a);
	return k;
}

TEST(fleet_lease_path)
{
	struct xrl_rule_entry open_r, closed_r;
	struct xrl_lease *l;
	struct xrl_key k;
	__u32 v;

	setup();
	CHECK(!RULES("rule add 198.18.0.0/24 rate 1/h burst 4 scope fleet on-failure open id 1",
		     "rule add 198.18.1.0/24 rate 1/h burst 4 scope fleet on-failure closed id 2"),
	      "the rule set commits: %s", xrl_errmsg());
	open_r = rule_of(1);
	closed_r = rule_of(2);
	CHECK_EQ(open_r.r.scope, XRL_SCOPE_FLEET, "a fleet rule");
	l = xrl_fleet_leases(X);
	CHECK(l != NULL, "leases mmap");
	/* no share written (no daemon): the rule as it is, no candidate */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(run_from("198.18.0.1"), PASS,
			 "no share written (no daemon): the rule as it is, no candidate");
	CHECK_EQ(run_from("198.18.0.1"), DROP, "a packet from 198.18.0.1 is dropped");
	k = key4(&open_r, "198.18.0.1");
	CHECK(xrl_fleet_key_get(X, &k, &v) == -ENOENT, "no candidate without a share");
	/* the share of two hosts: burst 2; its first drop makes a candidate */
	share(&open_r, 2);
	share(&closed_r, 2);
	CHECK_EQ(run_from("198.18.0.2"), PASS,
		 "the share of two hosts: burst 2; its first drop makes a candidate");
	CHECK_EQ(run_from("198.18.0.2"), PASS, "a packet from 198.18.0.2 passes");
	k = key4(&open_r, "198.18.0.2");
	CHECK(xrl_fleet_key_get(X, &k, &v) == -ENOENT, "quiet: no candidate");
	CHECK_EQ(run_from("198.18.0.2"), DROP, "a packet from 198.18.0.2 is dropped");
	CHECK(!xrl_fleet_key_get(X, &k, &v) && v == XRL_FLEET_PENDING, "candidate");
	CHECK_EQ(run_from("198.18.0.2"), DROP, "pending: still the share");
	/* promoted: a lease of 3 tokens until T0 + 1 s */
	l[5].expires_ns = T0 + SEC;
	l[5].credit = 3;
	CHECK(!xrl_fleet_key_put(X, &k, 5), "promote");
	CHECK_EQ(run_from("198.18.0.2"), PASS, "a packet from 198.18.0.2 passes");
	CHECK_EQ(run_from("198.18.0.2"), PASS, "a packet from 198.18.0.2 passes");
	CHECK_EQ(run_from("198.18.0.2"), PASS, "a packet from 198.18.0.2 passes");
	CHECK_EQ(run_from("198.18.0.2"), DROP, "spent");
	CHECK_EQ(l[5].credit, 0, "the lease spent");
	/* the swap: new credit replaces, never adds */
	CHECK_EQ(__atomic_exchange_n(&l[5].credit, 2, __ATOMIC_ACQ_REL), 0,
		 "the swap: new credit replaces, never adds");
	CHECK_EQ(run_from("198.18.0.2"), PASS, "a packet from 198.18.0.2 passes");
	CHECK_EQ(l[5].credit, 1, "one token of the swapped credit spent");
	/* expired, on-failure open: back to the share (its bucket is empty:
	 * rate 1/h), credit left untouched */
	xrl_test_clock_set(X, T0 + SEC);
	CHECK_EQ(run_from("198.18.0.2"), DROP, "expired, on-failure open");
	CHECK_EQ(l[5].credit, 1, "the credit of an expired lease untouched");
	CHECK_EQ(run_from("198.18.0.3"), PASS, "another key: its share");
	/* expired, on-failure closed: dropped, even with credit */
	k = key4(&closed_r, "198.18.1.1");
	l[6].expires_ns = T0 + SEC;
	l[6].credit = 100;
	CHECK(!xrl_fleet_key_put(X, &k, 6), "promote");
	CHECK_EQ(run_from("198.18.1.1"), DROP, "a packet from 198.18.1.1 is dropped");
	CHECK_EQ(l[6].credit, 100, "the credit of an expired lease not spent");
	l[6].expires_ns = T0 + 2 * SEC;		/* renewed */
	CHECK_EQ(run_from("198.18.1.1"), PASS, "a packet from 198.18.1.1 passes");
	CHECK_EQ(l[6].credit, 99, "a renewed lease spends its credit");
	teardown();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The endpoint classes (libxrl's xrl__ep_classes(), a sweep in O(n log n))
 * against the algorithm it replaced, kept here as the reference: the cuts of
 * every rule's ranges sorted, for each slot between two cuts the full list of
 * its covering rules, a class per distinct list in the order of the slots,
 * and per class and prefix the most specific rule by port. On random rule
 * sets, both must give every slot the same class number and every class the
 * same entries. Without root and without maps (make check).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "testlib.h"
#include "maps/internal.h"

/* ---- the reference: the former build_classes(), without the maps ---- */

/* The rules' slot ranges and the order among rules of one prefix are the
 * library's own (xrl__ep_rule_ranges(), xrl__ep_narrower()): what is held to
 * the reference here is the sweep that turns them into classes. */
static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

struct ref_class {
	size_t n;
	size_t *idx;
};

/* cls[] and the entries (unsorted) as the former algorithm made them */
static int ref_classes(const struct xrl_rule_entry *const *ep, size_t nep, __u32 *cls,
		       struct xrl_ep_entry **out, size_t *nout)
{
	__u32 *cut = malloc((nep * 6 + 2) * sizeof(*cut));
	size_t *cur = malloc((nep + 1) * sizeof(*cur)), ncut = 0, ncls = 0, nent = 0;
	struct ref_class *c = calloc(nep * 6 + 2, sizeof(*c));
	struct xrl_ep_entry *ent = malloc((nep * nep * 3 + 1) * sizeof(*ent));

	memset(cls, 0, XRL_EP_SPACE_SLOT * sizeof(*cls));
	for (size_t i = 0; i < nep; i++) {
		__u32 lo[3], hi[3];
		int k = xrl__ep_rule_ranges(&ep[i]->r, lo, hi);

		for (int j = 0; j < k; j++) {
			cut[ncut++] = lo[j];
			cut[ncut++] = hi[j] + 1;
		}
	}
	qsort(cut, ncut, sizeof(*cut), cmp_u32);
	for (size_t s = 0; s + 1 < ncut; s++) {
		__u32 a = cut[s], b = cut[s + 1];
		size_t m = 0, k;

		if (a == b)
			continue;
		for (size_t i = 0; i < nep; i++) {
			__u32 lo[3], hi[3];
			int nr = xrl__ep_rule_ranges(&ep[i]->r, lo, hi);

			for (int j = 0; j < nr; j++)
				if (lo[j] <= a && a <= hi[j]) {
					cur[m++] = i;
					break;
				}
		}
		if (!m)
			continue;
		for (k = 0; k < ncls; k++)
			if (c[k].n == m && !memcmp(c[k].idx, cur, m * sizeof(*cur)))
				break;
		if (k == ncls) {
			c[k].n = m;
			c[k].idx = malloc(m * sizeof(*cur));
			memcpy(c[k].idx, cur, m * sizeof(*cur));
			ncls++;
			for (size_t i = 0; i < m; i++) {
				const struct xrl_rule_entry *e = ep[cur[i]];
				bool best = true;

				for (size_t j = 0; j < m && best; j++) {
					const struct xrl_rule_entry *o = ep[cur[j]];

					if (j != i && o->family == e->family && o->prefix_len == e->prefix_len &&
					    !memcmp(o->addr, e->addr, 16) && xrl__ep_narrower(&o->r, &e->r))
						best = false;
				}
				if (best)
					ent[nent++] = (struct xrl_ep_entry){ .cls = ncls, .rule = cur[i] };
			}
		}
		for (__u32 slot = a; slot < b && slot < XRL_EP_SPACE_SLOT; slot++)
			cls[slot] = k + 1;
	}
	for (size_t k = 0; k < ncls; k++)
		free(c[k].idx);
	free(c);
	free(cut);
	free(cur);
	*out = ent;
	*nout = nent;
	return 0;
}

/* ---- random rule sets ---- */

static __u64 rng_state = 0x2545f4914f6cdd1dULL;

static __u32 rnd(__u32 n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (__u32)(rng_state % n);
}

/* a port from a small set now and then, so that ranges share their ends */
static __u16 rnd_port(void)
{
	static const __u16 common[] = { 0, 1, 22, 53, 80, 443, 1024, 8080, 65534, 65535 };

	return rnd(3) ? common[rnd(sizeof(common) / sizeof(common[0]))] : rnd(65536);
}

static void rnd_rule(struct xrl_rule_entry *e, __u32 id, unsigned nprefixes)
{
	static const __u8 protos[] = { IPPROTO_TCP, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDP,
				       IPPROTO_ICMP, IPPROTO_SCTP, IPPROTO_ICMPV6 };
	unsigned p = rnd(nprefixes);

	memset(e, 0, sizeof(*e));
	e->family = p & 1 ? 6 : 4;
	e->prefix_len = (p % 3) * 8;
	e->addr[0] = e->prefix_len ? 198 : 0;
	e->addr[1] = e->prefix_len > 8 ? 18 + (p / 6) % 2 : 0;
	e->r.id = id;
	e->r.ep = 1;
	e->r.proto = protos[rnd(sizeof(protos))];
	if (e->r.proto == IPPROTO_TCP || e->r.proto == IPPROTO_UDP) {
		switch (rnd(4)) {
		case 0:	/* any port */
			e->r.dport_lo = 0, e->r.dport_hi = 65535;
			break;
		case 1:	/* one */
			e->r.dport_lo = e->r.dport_hi = rnd_port();
			break;
		default: {
			__u16 a = rnd_port(), b = rnd_port();

			e->r.dport_lo = a < b ? a : b;
			e->r.dport_hi = a < b ? b : a;
		}
		}
		e->r.syn = e->r.proto == IPPROTO_TCP && !rnd(3);
	} else {
		e->r.dport_hi = 65535;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct xrl_ep_entry *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

static __u32 cls_new[XRL_EP_SPACE_SLOT], cls_ref[XRL_EP_SPACE_SLOT];

/* one random set of n rules over nprefixes prefixes: 1 when both agree */
static int compare_one(size_t n, unsigned nprefixes)
{
	struct xrl_rule_entry *v = calloc(n, sizeof(*v));
	const struct xrl_rule_entry **ep = calloc(n + 1, sizeof(*ep));
	struct xrl_ep_entry *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int over = 0, ok = 1, err;

	for (size_t i = 0; i < n; i++) {
		rnd_rule(&v[i], i + 1, nprefixes);
		ep[i] = &v[i];
	}
	err = xrl__ep_classes(ep, n, cls_new, &a, &na, SIZE_MAX, &over);
	CHECK(err == 0, "xrl__ep_classes: %d", err);
	ref_classes(ep, n, cls_ref, &b, &nb);
	if (err)
		ok = 0;
	for (__u32 s = 0; ok && s < XRL_EP_SPACE_SLOT; s++)
		if (cls_new[s] != cls_ref[s]) {
			CHECK(cls_new[s] == cls_ref[s], "n %zu: slot %u: class %u, the reference %u", n, s,
			      cls_new[s], cls_ref[s]);
			ok = 0;
		}
	if (ok) {
		qsort(a, na, sizeof(*a), cmp_entry);
		qsort(b, nb, sizeof(*b), cmp_entry);
		CHECK(na == nb, "n %zu: %zu entries, the reference %zu", n, na, nb);
		ok = na == nb && !memcmp(a, b, na * sizeof(*a));
		CHECK(ok, "n %zu: the entries differ from the reference's", n);
	}
	free(a);
	free(b);
	free(ep);
	free(v);
	return ok;
}

static void test_classes_as_reference_small(void)
{
	for (int i = 0; i < 400; i++)
		if (!compare_one(1 + rnd(24), 1 + rnd(6)))
			break;
}

static void test_classes_as_reference_larger(void)
{
	for (int i = 0; i < 12; i++)
		if (!compare_one(100 + rnd(300), 1 + rnd(12)))
			break;
}

/* nested ranges of one prefix: every slot between two ends its own class */
static void test_classes_nested(void)
{
	size_t n = 500;
	struct xrl_rule_entry *v = calloc(n, sizeof(*v));
	const struct xrl_rule_entry **ep = calloc(n, sizeof(*ep));
	struct xrl_ep_entry *a = NULL, *b = NULL;
	size_t na, nb;
	int over;

	for (size_t i = 0; i < n; i++) {
		v[i].family = 4;
		v[i].r.id = i + 1;
		v[i].r.ep = 1;
		v[i].r.proto = IPPROTO_UDP;
		v[i].r.dport_lo = 1 + i;
		v[i].r.dport_hi = 65535 - i;
		ep[i] = &v[i];
	}
	CHECK_EQ(xrl__ep_classes(ep, n, cls_new, &a, &na, SIZE_MAX, &over), 0);
	ref_classes(ep, n, cls_ref, &b, &nb);
	CHECK(!memcmp(cls_new, cls_ref, sizeof(cls_new)), "classes differ");
	/* one prefix: an entry per class; a set on the way up is met again on the
	 * way down: n classes */
	CHECK_EQ(na, n);
	CHECK_EQ(nb, na);
	CHECK_EQ(cls_new[XRL_EP_UDP + 65535 / 2], n);	/* the innermost */
	free(a);
	free(b);
	free(ep);
	free(v);
}

/* over the limit of a family: -E2BIG naming the family, nothing returned */
static void test_classes_limit(void)
{
	size_t n = 64;
	struct xrl_rule_entry *v = calloc(n, sizeof(*v));
	const struct xrl_rule_entry **ep = calloc(n, sizeof(*ep));
	struct xrl_ep_entry *a = NULL;
	size_t na = 7, bad = 0;
	int over = 0;

	for (size_t i = 0; i < n; i++) {
		v[i].family = 6;
		v[i].prefix_len = 64;
		v[i].addr[0] = 0x20, v[i].addr[1] = 0x01, v[i].addr[2] = 0x0d, v[i].addr[3] = 0xb8;
		v[i].addr[7] = i;	/* a prefix each */
		v[i].r.id = i + 1;
		v[i].r.ep = 1;
		v[i].r.proto = IPPROTO_UDP;
		v[i].r.dport_lo = i;
		v[i].r.dport_hi = 65535;
		ep[i] = &v[i];
	}
	/* 64 listed; the classes: 1 + 2 + ... + 64 entries */
	CHECK_EQ(xrl__ep_classes(ep, n, cls_new, &a, &na, n + n * (n + 1) / 2, &over), 0);
	CHECK_EQ(na, n * (n + 1) / 2);
	free(a);
	a = NULL;
	CHECK_EQ(xrl__ep_classes(ep, n, cls_new, &a, &na, n + n * (n + 1) / 2 - 1, &over), (unsigned long long)-E2BIG);
	CHECK_EQ(over, 6);
	CHECK(a == NULL, "entries returned on failure");
	/* within the real limit, the check of a set passes */
	CHECK_EQ(xrl__endpoints_check(v, n, &bad), 0);
	free(ep);
	free(v);
}

/* the set checker's limit: 16,383 rules of distinct prefixes that all
 * cover one range of ports write one class with all of them, and more
 * than the limit together with their list */
static void test_endpoints_check_limit(void)
{
	size_t n = 16383, bad = 0;
	struct xrl_rule_entry *v = calloc(n + 2, sizeof(*v));
	int err;

	for (size_t i = 0; i < n + 2; i++) {
		v[i].family = 4;
		v[i].prefix_len = 32;
		v[i].addr[0] = 198, v[i].addr[1] = 18 + (i >> 16), v[i].addr[2] = i >> 8, v[i].addr[3] = i;
		v[i].r.id = i + 1;
		v[i].r.ep = 1;
		v[i].r.proto = IPPROTO_UDP;
		v[i].r.dport_lo = v[i].r.dport_hi = 53;
	}
	/* 16,383 listed + 16,383 in the one class: within 32,768 */
	CHECK_EQ(xrl__endpoints_check(v, n, &bad), 0);
	/* two more rules: 32,770 */
	err = xrl__endpoints_check(v, n + 2, &bad);
	CHECK_EQ(err, (unsigned long long)-E2BIG);
	CHECK_EQ(bad, n + 1);
	CHECK(strstr(xrl_errmsg(), "too many endpoint rules and port classes: the IPv4 endpoint rules (16385)") &&
	      strstr(xrl_errmsg(), "more than 32768 entries, the limit per address family"),
	      "message: %s", xrl_errmsg());
	free(v);
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_classes_as_reference_small);
	RUN(test_classes_as_reference_larger);
	RUN(test_classes_nested);
	RUN(test_classes_limit);
	RUN(test_endpoints_check_limit);
	return tl_summary();
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the commit. A rule set validated as a whole, a fresh trie built
 * for each family and published in one step; rules that did not change keep
 * their buckets and counters.
 */
#include "maps/internal.h"
#include "maps/syncookie.h"
#include "model/rule.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Same configuration: the bucket and counters carry over. */
static bool same_config(const struct xrl_rule *a, const struct xrl_rule *b)
{
	return a->id == b->id && a->action == b->action &&
	       a->key_len == b->key_len && a->on_failure == b->on_failure &&
	       a->rate_count == b->rate_count &&
	       a->rate_period_ns == b->rate_period_ns && a->burst == b->burst &&
	       a->unit == b->unit && a->algo == b->algo && a->dry_run == b->dry_run &&
	       a->set == b->set &&
	       a->ep == b->ep && a->proto == b->proto && a->syn == b->syn &&
	       a->syncookies == b->syncookies &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi && a->scope == b->scope &&
	       a->slip == b->slip &&
	       a->agg_rate_count == b->agg_rate_count &&
	       a->agg_rate_period_ns == b->agg_rate_period_ns && a->agg_burst == b->agg_burst &&
	       a->nk_rate_count == b->nk_rate_count && a->nk_rate_period_ns == b->nk_rate_period_ns &&
	       a->ban_s == b->ban_s && a->ban_after == b->ban_after && a->ban_max_s == b->ban_max_s;
}

/* A fresh trie holding the rules of one family: an fd, or an error. */
static int build_trie(int family, const struct xrl_rule_entry *v, size_t n)
{
	int fd = xrl__rules_create(family);

	if (fd < 0)
		return xrl_fail(fd, "cannot create a rule set: %s", strerror(-fd));
	for (size_t i = 0; i < n; i++) {
		struct xrl_lpm6_key k = { .prefixlen = v[i].prefix_len };

		if (v[i].family != family || v[i].r.ep)	/* endpoint rules: endpoints.c */
			continue;
		memcpy(k.addr, v[i].addr, family == 6 ? 16 : 4);
		if (bpf_map_update_elem(fd, &k, &v[i].r, BPF_NOEXIST)) {
			int err = xrl_fail(errno, "cannot write rule %u: %s", v[i].r.id,
				       strerror(errno));

			close(fd);
			return err;
		}
	}
	return fd;
}

static int zero_rule_stats(struct xrl *x, __u32 slot)
{
	size_t sz = (size_t)x->ncpus * sizeof(struct xrl_rule_stats);
	void *zero = calloc(1, sz + sizeof(struct xrl_rule_shared));
	int err = 0;

	if (!zero)
		return -ENOMEM;
	/* and the aggregate's and new-key budget's state: full buckets */
	if (bpf_map_update_elem(x->map_fd[M_RULE_STATS], &slot, zero, BPF_ANY) ||
	    bpf_map_update_elem(x->map_fd[M_RULE_SHARED], &slot, zero, BPF_ANY) ||
	    bpf_map_update_elem(x->map_fd[M_SC_STATS], &slot, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* Order by family, prefix length, address: equal prefixes are neighbours. */
static int assign_ids(struct xrl_rule_entry *v, size_t n)
{
	__u32 *ids = malloc((n + 1) * sizeof(*ids)), id = 1;
	size_t k = 0, j = 0;

	if (!ids)
		return xrl_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (v[i].r.id)
			ids[k++] = v[i].r.id;
	xrl_sort(ids, k, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.id)
			continue;
		while (j < k && ids[j] < id)
			j++;
		while (j < k && ids[j] == id)
			id++, j++;
		v[i].r.id = id++;
	}
	free(ids);
	return 0;
}

/* The optional steps of the data path that some rule of v uses
 * (struct xrl_control.features); none for no rule. */
static __u32 rules_features(const struct xrl_rule_entry *v, size_t n)
{
	__u32 f = 0;

	for (size_t i = 0; i < n; i++) {
		const struct xrl_rule *r = &v[i].r;

		if (r->set)
			f |= XRL_FEAT_SETS;
		if (r->ep)
			f |= XRL_FEAT_ENDPOINTS;
		if (r->syncookies)
			f |= XRL_FEAT_SYNCOOKIES;
		if (r->nk_interval)
			f |= XRL_FEAT_NEWKEYS;
		if (r->slip)
			f |= XRL_FEAT_SLIP;
	}
	return f;
}

/*
 * Before publishing a set: the bits it needs that are clear, set, then a
 * grace period, so that every packet that may have read the word without
 * them has finished before any packet can meet a rule of the set (a packet
 * reads the word first, the published sets after it). The bits it does not
 * need stay until it is published (features_after()).
 */
static int features_before(struct xrl *x, __u32 need)
{
	__u32 was = __atomic_load_n(&x->ctrl->features, __ATOMIC_ACQUIRE);

	if (!(need & ~was))
		return 0;
	__atomic_store_n(&x->ctrl->features, was | need, __ATOMIC_SEQ_CST);
	return xrl__programs_wait(x);
}

/* After the set is published: each publication waited for the packets that
 * could still see the old set, so the bits only it needed are cleared. */
static void features_after(struct xrl *x, __u32 need)
{
	__atomic_store_n(&x->ctrl->features, need, __ATOMIC_SEQ_CST);
}

int xrl_rules_commit(struct xrl *x, struct xrl_rule_entry *v, size_t n)
{
	struct xrl_rule_entry *old = NULL, **oldp = NULL;
	size_t nold = 0, bad;
	unsigned char *used = NULL;
	__u32 *fresh = NULL;
	size_t nfresh = 0;
	bool sc_rules = false, sc_synced = false;
	char sc_table[64], sc_new[1024], sc_old[1024];
	int err, next, fd4 = -1, fd6 = -1, old4 = -1, oldsets = -1;
	bool sets_published = false;
	__u64 gen;

	/* 1. validate the whole set before touching anything */
	err = xrl_rules_validate(v, n, &bad);
	if (!err)
		err = assign_ids(v, n);
	if (!err)	/* before rules are compared: a set rule's set is in r.set */
		err = xrl__set_rules_resolve(x, v, n);
	if (err)
		return err;
	/* what SYN cookies need of the host (an unpinned instance, the BPF
	 * tests', answers BPF_PROG_TEST_RUN only: not checked) */
	for (size_t i = 0; x->pinned && i < n; i++) {
		char why[320];

		if (!v[i].r.syncookies)
			continue;
		if (xrl_sc_host_check(why, sizeof(why)) ||
		    xrl_sc_ephemeral_check(&v[i].r, why, sizeof(why)))
			return xrl_fail(ENOTSUP, "rule %u: syn-cookies: %s", v[i].r.id, why);
		sc_rules = true;
	}

	/*
	 * 2. rules that did not change keep their slot and generation; a new
	 * or changed rule gets a slot that no published rule holds. The
	 * published set holds at most XRL_MAX_RULES of the XRL_RULE_SLOTS, so
	 * there is always one; a slot that only an older set held is out of
	 * use (see xrl__rules_publish). Nothing is written in this step.
	 */
	err = xrl_rules_get(x, &old, &nold);
	if (err)
		return err;
	/* netfilter's SYNPROXY set up before the data path answers a SYN on
	 * a new port; nft runs only when the ports changed (a reload that
	 * touches other rules needs no netfilter privilege) */
	xrl_sc_table_name(x->pin_dir, sc_table, sizeof(sc_table));
	sc_new[0] = sc_old[0] = '\0';
	if (x->pinned && ((err = xrl_sc_ports(v, n, sc_new, sizeof(sc_new))) < 0 ||
			  (err = xrl_sc_ports(old, nold, sc_old, sizeof(sc_old))) < 0))
		goto out;
	err = 0;
	if (x->pinned && sc_rules && strcmp(sc_new, sc_old)) {
		err = xrl_sc_nft_sync(sc_table, v, n);
		if (err)
			goto out;
		sc_synced = true;
	}
	used = calloc(XRL_RULE_SLOTS, 1);
	oldp = malloc((nold + 1) * sizeof(*oldp));
	fresh = malloc((n + 1) * sizeof(*fresh));
	if (!used || !oldp || !fresh) {
		err = xrl_fail(ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nold; i++) {
		if (old[i].r.slot < XRL_RULE_SLOTS)
			used[old[i].r.slot] = 1;
		oldp[i] = &old[i];
	}
	xrl_sort(oldp, nold, sizeof(*oldp), xrl_rule_cmp_prefix);
	gen = x->ctrl->gen;
	next = 0;
	for (size_t i = 0; i < n; i++) {
		struct xrl_rule_entry *key = &v[i], **hit;

		hit = nold ? bsearch(&key, oldp, nold, sizeof(*oldp), xrl_rule_cmp_prefix) : NULL;
		if (hit && same_config(&v[i].r, &(*hit)->r) &&
		    (*hit)->r.slot < XRL_RULE_SLOTS) {
			v[i].r.slot = (*hit)->r.slot;
			v[i].r.gen = (*hit)->r.gen;
			continue;
		}
		while (next < XRL_RULE_SLOTS && used[next])
			next++;
		if (next == XRL_RULE_SLOTS) {	/* validation makes this impossible */
			err = xrl_fail(ENOSPC, "no free rule slot");
			goto out;
		}
		used[next] = 2;
		v[i].r.slot = next;
		if ((__u32)next >= x->slot_hw)
			x->slot_hw = next + 1;
		v[i].r.gen = (__u32)++gen;
		fresh[nfresh++] = next;
	}

	/* the default new-key budget follows the table size */
	xrl_rules_newkeys_default(v, n, xrl__map_max_entries(x->map_fd[M_BUCKETS4]));

	/* 3. build a fresh trie per family, completely */
	fd4 = build_trie(4, v, n);
	if (fd4 < 0) {
		err = fd4;
		goto out;
	}
	fd6 = build_trie(6, v, n);
	if (fd6 < 0) {
		err = fd6;
		goto out;
	}
	old4 = xrl__rules_fd(x, 4);	/* for a roll-back */
	if (old4 < 0 && old4 != -ENOENT) {
		err = old4;	/* xrl__published_fd() said why */
		goto out;
	}
	oldsets = xrl__published_fd(x, M_SET_RULES);	/* the same */
	if (oldsets < 0 && oldsets != -ENOENT) {
		err = oldsets;
		goto out;
	}

	/* 4. fresh counters, now that nothing but publishing can fail: these
	 * slots are held by no published rule, so a failure from here on
	 * loses no rule's counters either */
	for (size_t i = 0; i < nfresh; i++) {
		err = zero_rule_stats(x, fresh[i]);
		if (err) {
			err = xrl_fail(err, "cannot reset counters: %s", strerror(-err));
			goto out;
		}
	}
	/* generations are spent even if publishing fails below: a packet may
	 * have metered with one before a roll-back */
	x->ctrl->gen = gen;

	/* 5. the set rules, then the endpoint rules: until their class
	 * array is swapped in, packets stay on the old endpoint set
	 * (endpoints.c). The set rules are one array of their own, published
	 * with one update before the prefix tries (docs/sets.md) */
	err = features_before(x, rules_features(v, n));
	if (err) {
		err = xrl_fail(err, "cannot publish the rules' steps: %s", strerror(-err));
		goto out;
	}
	err = xrl__set_rules_commit(x, v, n);
	if (err)
		goto out;
	sets_published = true;
	/* the endpoint rules first: until their class array is swapped
	 * in, packets stay on the old endpoint set (endpoints.c) */
	err = xrl__endpoints_commit(x, v, n);
	if (err)
		goto out;

	/* 6. publish each family with one update; roll IPv4 back if IPv6
	 * cannot follow, so that a failed commit changes nothing */
	err = xrl__rules_publish(x, 4, fd4);
	if (err) {
		err = xrl_fail(err, "cannot publish the IPv4 rules: %s", strerror(-err));
		goto out;
	}
	err = xrl__rules_publish(x, 6, fd6);
	if (err) {
		__u32 zero = 0;

		err = xrl_fail(err, "cannot publish the IPv6 rules: %s", strerror(-err));
		if (old4 >= 0)
			xrl__rules_publish(x, 4, old4);
		else
			bpf_map_delete_elem(x->map_fd[M_RULES4], &zero);
		goto out;
	}
	x->ctrl->rules = n;
	features_after(x, rules_features(v, n));
	err = 0;
	/* the last syn-cookies rule gone: SYNPROXY's table too, once the
	 * data path answers no SYN (a failure is said, the commit stands) */
	if (x->pinned && !sc_rules && sc_old[0] && xrl_sc_nft_sync(sc_table, NULL, 0))
		xrl_warn("%s", xrl_errmsg());
out:
	/* a failure after the set rules were published puts the old ones
	 * back, so that a failed commit changes nothing */
	if (err && sets_published) {
		__u32 zero = 0;

		if (oldsets >= 0)
			xrl__publish_set(x, M_SET_RULES, oldsets);
		else
			bpf_map_delete_elem(x->map_fd[M_SET_RULES], &zero);
	}
	if (oldsets >= 0)
		close(oldsets);
	/* a failed commit leaves SYNPROXY's ports as the data path's (its
	 * message stays the commit's) */
	if (err && sc_synced) {
		char keep[sizeof(xrl__errbuf)];

		snprintf(keep, sizeof(keep), "%s", xrl_errmsg());
		if (xrl_sc_nft_sync(sc_table, old, nold))
			xrl_warn("%s", xrl_errmsg());
		xrl_fail(err, "%s", keep);
	}
	/* after publishing (or rolling back): what a packet cached under the
	 * old set is void from here on */
	if (fd4 >= 0)
		xrl__cache_bump(x);
	/* a published trie lives on in the outer map */
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	if (old4 >= 0)
		close(old4);
	free(fresh);
	free(oldp);
	free(used);
	free(old);
	return err;
}

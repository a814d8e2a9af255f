// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: rule sets, validated as a whole and published in one step.
 */
#include "maps/internal.h"
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

/*
 * Each family's rule set is an LPM trie published through a map-in-map
 * (xrl_rules4, xrl_rules6: one entry). A commit never writes a published
 * trie: it creates a fresh one, fills it and swaps it in.
 */
static int outer_fd(struct xrl *x, int family)
{
	return x->map_fd[family == 6 ? M_RULES6 : M_RULES4];
}

/* A fresh, empty trie shaped like the BPF object's inner-map template
 * (struct xrl_rules4_inner / xrl_rules6_inner): the kernel refuses an inner
 * map whose type, key, value or flags differ. */
static int rules_create(int family)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	__u32 ksz = family == 6 ? sizeof(struct xrl_lpm6_key) : sizeof(struct xrl_lpm4_key);
	int fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, family == 6 ? "xrl_rules6_set" : "xrl_rules4_set",
				ksz, sizeof(struct xrl_rule), XRL_MAX_RULES, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * Publish a filled trie. One update of the outer map: a packet looks the
 * inner map up once, so it sees the old trie or this one, never a mix.
 * The proof that the old one is out of use when this returns: the syscall
 * path of an update of a *_OF_MAPS map ends in maybe_wait_bpf_programs(),
 * which calls synchronize_rcu(); XDP programs (and BPF_PROG_TEST_RUN) run
 * inside an RCU read-side section, so every packet that may have looked up
 * the old trie has finished. Slots that only the old set held are free from
 * here on (xrl_rules_commit relies on it).
 */
static int rules_publish(struct xrl *x, int family, int inner_fd)
{
	return publish_set(x, family == 6 ? M_RULES6 : M_RULES4, inner_fd);
}

int rules_install_empty(struct xrl *x, int family)
{
	__u32 zero = 0, id;
	int fd, err;

	if (bpf_map_lookup_elem(outer_fd(x, family), &zero, &id) == 0)
		return 0;	/* a set is published already */
	fd = rules_create(family);
	if (fd < 0)
		return fd;
	err = rules_publish(x, family, fd);
	close(fd);
	return err;
}

/*
 * The published inner maps, opened without CAP_SYS_ADMIN. The outer map
 * gives only the inner map's id, and BPF_MAP_GET_FD_BY_ID needs
 * CAP_SYS_ADMIN; so each commit also pins what it publishes (DIR/NAME_set,
 * replaced by a rename: a reader finds the old set or the new one), and the
 * handle keeps a descriptor of the last set it published or opened. A
 * reader takes, in this order, the handle's descriptor, the pin, the id,
 * each only when its id is the one the outer map holds now: a commit
 * interrupted between publishing and pinning leaves a stale pin, which is
 * never believed (the next commit, or an open with CAP_SYS_ADMIN under the
 * lock, pins the set again). The daemon publishes every set it reads after
 * its start, or finds it pinned by xdp-rlctl, so it needs no CAP_SYS_ADMIN
 * (README, "Privileges").
 */
static const char *set_pin_name(int which, bool next)
{
	switch (which) {
	case M_RULES4: return next ? "xrl_rules4_set_new" : "xrl_rules4_set";
	case M_RULES6: return next ? "xrl_rules6_set_new" : "xrl_rules6_set";
	case M_EP4: return next ? "xrl_ep4_set_new" : "xrl_ep4_set";
	case M_EP6: return next ? "xrl_ep6_set_new" : "xrl_ep6_set";
	case M_EP_CLASS: return next ? "xrl_ep_class_set_new" : "xrl_ep_class_set";
	}
	return NULL;
}

bool xrl__set_pin_name(const char *name)
{
	static const int which[] = { M_RULES4, M_RULES6, M_EP4, M_EP6, M_EP_CLASS };

	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++)
		if (!strcmp(name, set_pin_name(which[i], false)) || !strcmp(name, set_pin_name(which[i], true)))
			return true;
	return false;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* Keep a descriptor of the set `which` now publishes (set_lock held). */
static void set_cache(struct xrl *x, int which, int fd, __u32 id)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	if (dup < 0)
		return;
	if (x->set_fd[which] >= 0)
		close(x->set_fd[which]);
	x->set_fd[which] = dup;
	x->set_id[which] = id;
}

/* Pin fd as the published set `which`: pinned beside, then renamed over
 * the old pin. A failure leaves no stale pin behind. */
static int set_pin(struct xrl *x, int which, int fd)
{
	char p[PATH_MAX], q[PATH_MAX];

	if (!x->pinned)
		return 0;
	pin_path(x, set_pin_name(which, false), p, sizeof(p));
	pin_path(x, set_pin_name(which, true), q, sizeof(q));
	unlink(q);
	if (bpf_obj_pin(fd, q) || rename(q, p)) {
		int err = -errno;

		unlink(q);
		unlink(p);
		return err;
	}
	return 0;
}

/*
 * A set opened by id (its pin missing or stale): pin it for the readers
 * without CAP_SYS_ADMIN, under the directory's lock only, so that no commit
 * can come in between (a commit publishes and pins under it). A handle
 * that does not hold the lock takes it for this if it is free.
 */
static void set_repin(struct xrl *x, int which, int fd, __u32 id)
{
	__u32 zero = 0, now;
	int lfd = -1;

	if (!x->pinned)
		return;
	if (!x->locked) {
		lfd = open(x->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB)) {
			if (lfd >= 0)
				close(lfd);
			return;
		}
	}
	if (bpf_map_lookup_elem(x->map_fd[which], &zero, &now) == 0 && now == id && set_pin(x, which, fd))
		xrl_warn("cannot pin the published %s", set_pin_name(which, false));
	if (lfd >= 0)
		close(lfd);	/* drops the flock */
}

int xrl__publish_set(struct xrl *x, int which, int inner_fd)
{
	__u32 zero = 0;
	int err;

	if (bpf_map_update_elem(x->map_fd[which], &zero, &inner_fd, BPF_ANY))
		return -errno;
	pthread_mutex_lock(&x->set_lock);
	set_cache(x, which, inner_fd, map_id(inner_fd));
	pthread_mutex_unlock(&x->set_lock);
	/* published: a pin that cannot follow costs readers without
	 * CAP_SYS_ADMIN, not the commit */
	if ((err = set_pin(x, which, inner_fd)))
		xrl_warn("cannot pin the published %s: %s", set_pin_name(which, false), strerror(-err));
	return 0;
}

int published_fd(struct xrl *x, int which)
{
	bool denied = false;
	char p[PATH_MAX];
	__u32 zero = 0, id;

	pin_path(x, set_pin_name(which, false), p, sizeof(p));
	for (int tries = 0; tries < 8; tries++) {
		int fd;

		/* a commit publishes, then renames its pin: between the two, a
		 * reader that may not open maps by id waits for the rename (0.5
		 * ms, doubling: 63.5 ms at most over the eight tries) */
		if (tries) {
			struct timespec ts = { 0, 500000L << (tries - 1) };

			nanosleep(&ts, NULL);
		}
		if (bpf_map_lookup_elem(x->map_fd[which], &zero, &id))
			return errno == ENOENT ? -ENOENT :
			       xrl_fail(errno, "cannot read %s: %s", map_names[which], strerror(errno));
		pthread_mutex_lock(&x->set_lock);
		fd = x->set_fd[which] >= 0 && x->set_id[which] == id ?
		     fcntl(x->set_fd[which], F_DUPFD_CLOEXEC, 0) : -1;
		pthread_mutex_unlock(&x->set_lock);
		if (fd >= 0)
			return fd;
		fd = x->pinned ? bpf_obj_get(p) : -1;
		if (fd >= 0 && map_id(fd) != id) {
			close(fd);	/* stale, or a commit in between: look again */
			fd = -1;
		}
		if (fd < 0) {
			fd = bpf_map_get_fd_by_id(id);
			if (fd < 0 && errno != ENOENT && errno != EPERM)
				return xrl_fail(errno, "cannot open the published %s: %s", set_pin_name(which, false),
					    strerror(errno));
			denied |= fd < 0 && errno == EPERM;
			if (fd >= 0)
				set_repin(x, which, fd, id);
		}
		if (fd < 0)
			continue;	/* replaced meanwhile (or denied): look again */
		pthread_mutex_lock(&x->set_lock);
		set_cache(x, which, fd, id);
		pthread_mutex_unlock(&x->set_lock);
		return fd;
	}
	if (denied)
		return xrl_fail(EPERM, "the published %s is not pinned at %s (a commit was interrupted?), and opening "
			    "it by id needs CAP_SYS_ADMIN: run any command once with it (as root), or commit the rules again",
			    set_pin_name(which, false), p);
	return xrl_fail(EAGAIN, "cannot open the published %s: it kept changing", set_pin_name(which, false));
}

void xrl__sets_pin(struct xrl *x)
{
	static const int which[] = { M_RULES4, M_RULES6, M_EP4, M_EP6, M_EP_CLASS };
	char saved[sizeof(xrl__errbuf)];

	memcpy(saved, xrl__errbuf, sizeof(saved));
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		char p[PATH_MAX];
		__u32 zero = 0, id;
		int fd, pfd;

		if (bpf_map_lookup_elem(x->map_fd[which[i]], &zero, &id))
			continue;	/* nothing published */
		pin_path(x, set_pin_name(which[i], false), p, sizeof(p));
		pfd = bpf_obj_get(p);
		if (pfd >= 0 && map_id(pfd) == id) {
			close(pfd);
			continue;
		}
		if (pfd >= 0)
			close(pfd);
		fd = published_fd(x, which[i]);
		if (fd < 0)
			continue;
		if (set_pin(x, which[i], fd))
			xrl_warn("cannot pin the published %s", set_pin_name(which[i], false));
		close(fd);
	}
	memcpy(xrl__errbuf, saved, sizeof(saved));	/* best effort: no error to tell */
}

void xrl__set_unpin(struct xrl *x, int which)
{
	char p[PATH_MAX];

	if (!set_pin_name(which, false))
		return;
	pin_path(x, set_pin_name(which, false), p, sizeof(p));
	unlink(p);
}

void xrl__sets_close(struct xrl *x)
{
	for (int i = 0; i < M__COUNT; i++)
		if (x->set_fd[i] >= 0)
			close(x->set_fd[i]);
}

/* A new fd on the published trie of a family, or -ENOENT. */
int rules_fd(struct xrl *x, int family)
{
	return published_fd(x, family == 6 ? M_RULES6 : M_RULES4);
}

/* Read every rule of one trie, appending to *v. */
static int read_trie(int fd, int family, struct xrl_rule_entry **v, size_t *n,
		     size_t *cap)
{
	struct xrl_lpm6_key key, next;	/* large enough for both */
	void *prev = NULL;
	int alen = family == 6 ? 16 : 4;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct xrl_rule_entry *e;

		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 64;
			void *nv = realloc(*v, nc * sizeof(**v));

			if (!nv)
				return xrl_fail(ENOMEM, "out of memory");
			*v = nv;
			*cap = nc;
		}
		e = &(*v)[*n];
		memset(e, 0, sizeof(*e));
		e->family = family;
		e->prefix_len = next.prefixlen;
		memcpy(e->addr, next.addr, alen);
		if (bpf_map_lookup_elem(fd, &next, &e->r) == 0)
			(*n)++;
		key = next;
		prev = &key;
	}
	if (errno != ENOENT)
		return xrl_fail(errno, "cannot read the rules: %s", strerror(errno));
	return 0;
}

/* Read the published rules of one family, appending to *v. */
static int read_family(struct xrl *x, int family, struct xrl_rule_entry **v,
		       size_t *n, size_t *cap)
{
	int fd = rules_fd(x, family), err;

	if (fd == -ENOENT)
		return 0;	/* nothing published: no rules */
	if (fd < 0)
		return fd;	/* published_fd() said why */
	err = read_trie(fd, family, v, n, cap);
	close(fd);
	return err;
}

static int cmp_id(const void *a, const void *b)
{
	const struct xrl_rule_entry *x = a, *y = b;

	return x->r.id < y->r.id ? -1 : x->r.id > y->r.id;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

int xrl_rules_get(struct xrl *x, struct xrl_rule_entry **out, size_t *n)
{
	struct xrl_rule_entry *v = NULL;
	size_t cap = 0;
	int err;

	*n = 0;
	err = read_family(x, 4, &v, n, &cap);
	if (!err)
		err = read_family(x, 6, &v, n, &cap);
	if (!err)
		err = xrl__endpoints_read(x, &v, n, &cap);
	if (err) {
		free(v);
		return err;
	}
	xrl_sort(v, *n, sizeof(*v), cmp_id);
	*out = v;
	return 0;
}

/* Same configuration: the bucket and counters carry over. */
static bool same_config(const struct xrl_rule *a, const struct xrl_rule *b)
{
	return a->id == b->id && a->action == b->action &&
	       a->key_len == b->key_len && a->on_failure == b->on_failure &&
	       a->rate_count == b->rate_count &&
	       a->rate_period_ns == b->rate_period_ns && a->burst == b->burst &&
	       a->unit == b->unit && a->algo == b->algo && a->dry_run == b->dry_run &&
	       a->ep == b->ep && a->proto == b->proto && a->syn == b->syn &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi && a->scope == b->scope &&
	       a->agg_rate_count == b->agg_rate_count &&
	       a->agg_rate_period_ns == b->agg_rate_period_ns && a->agg_burst == b->agg_burst &&
	       a->nk_rate_count == b->nk_rate_count && a->nk_rate_period_ns == b->nk_rate_period_ns;
}

/* A fresh trie holding the rules of one family: an fd, or an error. */
static int build_trie(int family, const struct xrl_rule_entry *v, size_t n)
{
	int fd = rules_create(family);

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
	    bpf_map_update_elem(x->map_fd[M_RULE_SHARED], &slot, zero, BPF_ANY))
		err = -errno;
	free(zero);
	return err;
}

/* Ids of 0 get the lowest ids not taken. */
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

int xrl_rules_commit(struct xrl *x, struct xrl_rule_entry *v, size_t n)
{
	struct xrl_rule_entry *old = NULL, **oldp = NULL;
	size_t nold = 0, bad;
	unsigned char *used = NULL;
	__u32 *fresh = NULL;
	size_t nfresh = 0;
	int err, next, fd4 = -1, fd6 = -1, old4 = -1;
	__u64 gen;

	/* 1. validate the whole set before touching anything */
	err = xrl_rules_validate(v, n, &bad);
	if (!err)
		err = assign_ids(v, n);
	if (err)
		return err;

	/*
	 * 2. rules that did not change keep their slot and generation; a new
	 * or changed rule gets a slot that no published rule holds. The
	 * published set holds at most XRL_MAX_RULES of the XRL_RULE_SLOTS, so
	 * there is always one; a slot that only an older set held is out of
	 * use (see rules_publish). Nothing is written in this step.
	 */
	err = xrl_rules_get(x, &old, &nold);
	if (err)
		return err;
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
		v[i].r.gen = (__u32)++gen;
		fresh[nfresh++] = next;
	}

	/* the default new-key budget follows the table size */
	xrl_rules_newkeys_default(v, n, map_max_entries(x->map_fd[M_BUCKETS4]));

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
	old4 = rules_fd(x, 4);	/* for a roll-back */
	if (old4 < 0 && old4 != -ENOENT) {
		err = old4;	/* published_fd() said why */
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

	/* 5. the endpoint rules first: until their class array is swapped
	 * in, packets stay on the old endpoint set (endpoints.c) */
	err = xrl__endpoints_commit(x, v, n);
	if (err)
		goto out;

	/* 6. publish each family with one update; roll IPv4 back if IPv6
	 * cannot follow, so that a failed commit changes nothing */
	err = rules_publish(x, 4, fd4);
	if (err) {
		err = xrl_fail(err, "cannot publish the IPv4 rules: %s", strerror(-err));
		goto out;
	}
	err = rules_publish(x, 6, fd6);
	if (err) {
		__u32 zero = 0;

		err = xrl_fail(err, "cannot publish the IPv6 rules: %s", strerror(-err));
		if (old4 >= 0)
			rules_publish(x, 4, old4);
		else
			bpf_map_delete_elem(outer_fd(x, 4), &zero);
		goto out;
	}
	x->ctrl->rules = n;
	err = 0;
out:
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

int xrl_rule_match(struct xrl *x, int family, const __u8 *addr,
		   struct xrl_rule_entry *out)
{
	struct xrl_lpm6_key k = { .prefixlen = family == 6 ? 128 : 32 };
	struct xrl_rule_entry *v = NULL;
	size_t n = 0, cap = 0;
	int fd, err;

	memcpy(k.addr, addr, family == 6 ? 16 : 4);
	memset(out, 0, sizeof(*out));
	fd = rules_fd(x, family);
	if (fd < 0)
		return fd;	/* -ENOENT: none; else published_fd() said why */
	if (bpf_map_lookup_elem(fd, &k, &out->r)) {
		close(fd);
		return -ENOENT;
	}
	/* the trie gives the value, not the prefix that matched: find it in
	 * the same trie */
	err = read_trie(fd, family, &v, &n, &cap);
	close(fd);
	if (err) {
		free(v);
		return err;
	}
	err = -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (v[i].r.slot == out->r.slot && v[i].r.gen == out->r.gen) {
			*out = v[i];
			err = 0;
			break;
		}
	}
	free(v);
	return err;
}

int xrl_endpoint_rules_covering(struct xrl *x, int family, const __u8 *addr,
				struct xrl_rule_entry **out, size_t *n)
{
	int bytes = family == 6 ? 16 : 4;
	struct xrl_rule_entry *v;
	size_t m, k = 0;
	int err = xrl_rules_get(x, &v, &m);

	if (err)
		return err;
	for (size_t i = 0; i < m; i++) {
		bool in = v[i].r.ep && v[i].r.action == XRL_ACT_LIMIT && v[i].family == family;
		__u8 mask[16] = {};

		mask_bits(mask, v[i].prefix_len, bytes);
		for (int b = 0; in && b < bytes; b++)
			in = (addr[b] & mask[b]) == v[i].addr[b];
		if (in)
			v[k++] = v[i];
	}
	*out = v;
	*n = k;
	return 0;
}

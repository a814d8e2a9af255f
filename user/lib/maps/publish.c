// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the published sets. Each rule, endpoint and class set is a map
 * behind a one-entry map-in-map: a new one is published with one update of
 * the outer map (a packet sees the old set or the new one), pinned beside
 * it for the readers without CAP_SYS_ADMIN, and opened again from the
 * handle, the pin or the id.
 */
#include "maps/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
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
int xrl__rules_create(int family)
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
int xrl__rules_publish(struct xrl *x, int family, int inner_fd)
{
	return xrl__publish_set(x, family == 6 ? M_RULES6 : M_RULES4, inner_fd);
}

int xrl__rules_install_empty(struct xrl *x, int family)
{
	__u32 zero = 0, id;
	int fd, err;

	if (bpf_map_lookup_elem(outer_fd(x, family), &zero, &id) == 0)
		return 0;	/* a set is published already */
	fd = xrl__rules_create(family);
	if (fd < 0)
		return fd;
	err = xrl__rules_publish(x, family, fd);
	close(fd);
	return err;
}

/*
 * An RCU grace period: the published IPv4 trie put back in its place (an
 * update of a map-in-map ends in synchronize_rcu(), as for a publication;
 * the same trie, so packets see no change). None published yet: an empty
 * one, which is what a packet finds without one (unmatched).
 */
int xrl__programs_wait(struct xrl *x)
{
	__u32 zero = 0;
	int fd = xrl__rules_fd(x, 4), err = 0;

	if (fd == -ENOENT)
		return xrl__rules_install_empty(x, 4);
	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(outer_fd(x, 4), &zero, &fd, BPF_ANY))
		err = -errno;
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
	case M_SET_RULES: return next ? "xrl_set_rules_set_new" : "xrl_set_rules_set";
	}
	return NULL;
}

bool xrl__set_pin_name(const char *name)
{
	static const int which[] = { M_RULES4, M_RULES6, M_EP4, M_EP6, M_EP_CLASS, M_SET_RULES };
	unsigned slot;
	int end = 0;

	/* a named set's trie (sets.c): xrl_set_N, xrl_set_N_new */
	if ((sscanf(name, "xrl_set_%u%n", &slot, &end) == 1 && !name[end]) ||
	    (sscanf(name, "xrl_set_%u_new%n", &slot, &end) == 1 && !name[end]))
		return slot < XRL_MAX_SETS;

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
	xrl__pin_path(x, set_pin_name(which, false), p, sizeof(p));
	xrl__pin_path(x, set_pin_name(which, true), q, sizeof(q));
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

int xrl__published_fd(struct xrl *x, int which)
{
	bool denied = false;
	char p[PATH_MAX];
	__u32 zero = 0, id;

	xrl__pin_path(x, set_pin_name(which, false), p, sizeof(p));
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
			       xrl_fail(errno, "cannot read %s: %s", xrl__map_names[which], strerror(errno));
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
	static const int which[] = { M_RULES4, M_RULES6, M_EP4, M_EP6, M_EP_CLASS, M_SET_RULES };
	char saved[sizeof(xrl__errbuf)];

	memcpy(saved, xrl__errbuf, sizeof(saved));
	for (size_t i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		char p[PATH_MAX];
		__u32 zero = 0, id;
		int fd, pfd;

		if (bpf_map_lookup_elem(x->map_fd[which[i]], &zero, &id))
			continue;	/* nothing published */
		xrl__pin_path(x, set_pin_name(which[i], false), p, sizeof(p));
		pfd = bpf_obj_get(p);
		if (pfd >= 0 && map_id(pfd) == id) {
			close(pfd);
			continue;
		}
		if (pfd >= 0)
			close(pfd);
		fd = xrl__published_fd(x, which[i]);
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
	xrl__pin_path(x, set_pin_name(which, false), p, sizeof(p));
	unlink(p);
}

void xrl__sets_close(struct xrl *x)
{
	for (int i = 0; i < M__COUNT; i++)
		if (x->set_fd[i] >= 0)
			close(x->set_fd[i]);
}

/* A new fd on the published trie of a family, or -ENOENT. */
int xrl__rules_fd(struct xrl *x, int family)
{
	return xrl__published_fd(x, family == 6 ? M_RULES6 : M_RULES4);
}

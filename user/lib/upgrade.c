// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: what build and layout a program is, the layout check, and the
 * hitless upgrade: this build's program takes over the pinned maps and the
 * pinned links of a running one (README, "Upgrading").
 */
#include "internal.h"

#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INFO_MAP	".rodata.info"	/* the section of struct xrl_build_info */

/* The ids of the maps a program uses; *n of them, at most max. */
static int prog_map_ids(int prog_fd, __u32 *ids, __u32 max, __u32 *n)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	info.nr_map_ids = max;
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*n = info.nr_map_ids < max ? info.nr_map_ids : max;
	return 0;
}

static int map_id(int fd)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);

	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : (int)mi.id;
}

/* The build info pinned beside the program, if it is this program's. */
static int pinned_info(struct xrl *x, const __u32 *ids, __u32 n, struct xrl_build_info *bi)
{
	char p[PATH_MAX];
	__u32 zero = 0;
	int fd, id, err = -ENOENT;

	pin_path(x, INFO_PIN, p, sizeof(p));
	if ((fd = bpf_obj_get(p)) < 0)
		return -ENOENT;
	id = map_id(fd);
	err = -ESRCH;	/* another program's */
	for (__u32 i = 0; i < n && err; i++)
		if (id && ids[i] == (__u32)id)
			err = bpf_map_lookup_elem(fd, &zero, bi) ? -errno : 0;
	close(fd);
	return err;
}

int xrl__build_info_of(struct xrl *x, int prog_fd, struct xrl_build_info *bi)
{
	__u32 ids[64], n = 0, zero = 0;
	int err = prog_map_ids(prog_fd, ids, 64, &n);

	memset(bi, 0, sizeof(*bi));
	if (err)
		return err;
	/* pinned beside it: needs CAP_BPF only. An upgrade renames the
	 * program's pin and then the info's: retry across that instant. */
	for (int tries = 0; tries < 3; tries++) {
		err = pinned_info(x, ids, n, bi);
		if (err == 0 && bi->magic == XRL_INFO_MAGIC) {
			bi->build[sizeof(bi->build) - 1] = '\0';
			return 0;
		}
		if (err != -ESRCH)
			break;
		usleep(2000);
	}
	/* not pinned (unpinned instances; pins removed): by the program's map
	 * ids, which needs CAP_SYS_ADMIN */
	for (__u32 i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		bool found;

		if (fd < 0)
			continue;
		found = bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 && !strcmp(mi.name, INFO_MAP) &&
			mi.value_size >= sizeof(*bi) && bpf_map_lookup_elem(fd, &zero, bi) == 0;
		close(fd);
		if (found && bi->magic == XRL_INFO_MAGIC) {
			bi->build[sizeof(bi->build) - 1] = '\0';
			return 0;
		}
		memset(bi, 0, sizeof(*bi));
	}
	return -ENOENT;	/* a build from before the layout version */
}

int xrl_build_info(struct xrl *x, struct xrl_build_info *bi)
{
	int err = xrl__build_info_of(x, x->prog_fd, bi);

	if (err == -ENOENT) {
		snprintf(bi->build, sizeof(bi->build), "unknown");
		return 0;
	}
	return err ? fail(err, "cannot read the program's build: %s", strerror(-err)) : 0;
}

int xrl__layout_check(struct xrl *x, int prog_fd, const char *what)
{
	struct xrl_build_info bi;
	int err = xrl__build_info_of(x, prog_fd, &bi);

	if (err == -ENOENT)
		return fail(EPROTO, "the %s under %s carries no layout version (a build from before "
			    "layout versions): this build (%s, layout %u) will not use its maps; detach it "
			    "everywhere and purge with its own build, then attach with this one",
			    what, x->pin_dir, xrl_version(), XRL_LAYOUT_VERSION);
	if (err)
		return fail(err, "cannot read the build of the %s under %s: %s", what, x->pin_dir,
			    strerror(-err));
	if (bi.layout != XRL_LAYOUT_VERSION)
		return fail(EPROTO, "the %s under %s is build %s with map layout %u; this build (%s) has "
			    "layout %u: its maps cannot be reused (nothing was changed). Use the running "
			    "build, or detach everywhere and purge with it, then attach with this one "
			    "(rules, buckets and counters are lost)",
			    what, x->pin_dir, bi.build, bi.layout, xrl_version(), XRL_LAYOUT_VERSION);
	return 0;
}

/* Every map of this build's object that is pinned already must be the same
 * map as this build would make: else refuse, naming it, before anything is
 * created. Maps the object has and the pins do not are new: the load creates
 * and pins them. Iterates the object itself, so a map added later is checked
 * with no change here. */
static int maps_compatible(struct xrl *x, struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		char p[PATH_MAX], diff[128] = "";
		int fd;

		if (bpf_map__is_internal(m))
			continue;
		pin_path(x, bpf_map__name(m), p, sizeof(p));
		fd = bpf_obj_get(p);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* new in this build: created empty */
			return fail(errno, "cannot open pinned %s: %s", p, strerror(errno));
		}
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			int err = fail(errno, "cannot read pinned %s: %s", p, strerror(errno));

			close(fd);
			return err;
		}
		close(fd);
		if (mi.type != bpf_map__type(m))
			snprintf(diff, sizeof(diff), "type %u, this build %u", mi.type, bpf_map__type(m));
		else if (mi.key_size != bpf_map__key_size(m))
			snprintf(diff, sizeof(diff), "key size %u, this build %u", mi.key_size,
				 bpf_map__key_size(m));
		else if (mi.value_size != bpf_map__value_size(m))
			snprintf(diff, sizeof(diff), "value size %u, this build %u", mi.value_size,
				 bpf_map__value_size(m));
		else if (mi.map_flags != bpf_map__map_flags(m))
			snprintf(diff, sizeof(diff), "flags %#x, this build %#x", mi.map_flags,
				 bpf_map__map_flags(m));
		else if (mi.max_entries != bpf_map__max_entries(m))
			snprintf(diff, sizeof(diff), "%u entries, this build %u", mi.max_entries,
				 bpf_map__max_entries(m));
		if (diff[0])
			return fail(EPROTO, "pinned map %s differs from this build's (%s) although the layout "
				    "versions agree (%u): refused, nothing was changed (the build forgot to "
				    "bump XRL_LAYOUT_VERSION?)", p, diff, XRL_LAYOUT_VERSION);
	}
	return 0;
}

int xrl__upgrade_precheck(struct xrl *x)
{
	return maps_compatible(x, x->skel->obj);
}

struct link_ref {
	char name[NAME_MAX + 1];
	int fd;
	bool moved;
};

static void links_free(struct link_ref *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(l[i].fd);
	free(l);
}

/* The links pinned in the directory, each checked to run the old program. */
static int links_of(struct xrl *x, __u32 old_id, struct link_ref **out, size_t *n)
{
	struct link_ref *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int err = 0;
	DIR *d;

	*n = 0;
	if (!(d = opendir(x->pin_dir)))
		return fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while (!err && (de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		char p[PATH_MAX];
		int fd;

		if (strncmp(de->d_name, LINK_PREFIX, strlen(LINK_PREFIX)))
			continue;
		pin_path(x, de->d_name, p, sizeof(p));
		if ((fd = bpf_obj_get(p)) < 0) {
			err = fail(errno, "cannot open %s: %s", p, strerror(errno));
			break;
		}
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.prog_id != old_id) {
			err = fail(EEXIST, "%s runs program %u, not the pinned program %u: refused, nothing was changed",
				   p, info.prog_id, old_id);
			close(fd);
			break;
		}
		if (*n == cap) {
			struct link_ref *t = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!t) {
				close(fd);
				err = fail(ENOMEM, "out of memory");
				break;
			}
			v = t;
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", de->d_name + strlen(LINK_PREFIX));
		v[*n].fd = fd;
		v[(*n)++].moved = false;
	}
	closedir(d);
	if (err) {
		links_free(v, *n);
		*n = 0;
		return err;
	}
	*out = v;
	return 0;
}

static int swap_prog(int link_fd, int new_fd, int old_fd)
{
	LIBBPF_OPTS(bpf_link_update_opts, o, .flags = BPF_F_REPLACE, .old_prog_fd = old_fd);

	return bpf_link_update(link_fd, new_fd, &o) ? -errno : 0;
}

int xrl_upgrade(const char *pin_dir, struct xrl_upgrade_report *r, struct xrl **out)
{
	struct xrl_open_opts o = { .pin_dir = pin_dir, .pins_only = true };
	struct link_ref *links = NULL;
	char p[PATH_MAX], pnew[PATH_MAX], ip[PATH_MAX], ipnew[PATH_MAX];
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi);
	size_t n = 0;
	struct xrl *x;
	int err, old_fd;

	memset(r, 0, sizeof(*r));
	if ((err = xrl_open(&o, &x)))
		return err;
	pin_path(x, PROG_PIN, p, sizeof(p));
	pin_path(x, PROG_PIN_NEW, pnew, sizeof(pnew));
	pin_path(x, INFO_PIN, ip, sizeof(ip));
	pin_path(x, INFO_PIN_NEW, ipnew, sizeof(ipnew));
	old_fd = bpf_obj_get(p);
	if (old_fd < 0) {
		err = fail(ENOENT, "nothing to upgrade: no program pinned at %s", p);
		goto out;
	}
	/* 1. checks: nothing is created or changed until they pass */
	if ((err = xrl__build_info_of(x, old_fd, &r->from)) && err != -ENOENT) {
		err = fail(err, "cannot read the running build: %s", strerror(-err));
		goto out;
	}
	if ((err = xrl__layout_check(x, old_fd, "running program")))
		goto out;
	if (bpf_obj_get_info_by_fd(old_fd, &pi, &len)) {
		err = fail(errno, "cannot read %s: %s", p, strerror(errno));
		goto out;
	}
	r->old_prog_id = pi.id;
	if ((err = links_of(x, pi.id, &links, &n)))
		goto out;
	unlink(pnew);	/* leftovers of an upgrade that was killed */
	unlink(ipnew);
	/* 2. load this build on the pinned maps (creating the new ones) */
	if ((err = xrl__load_upgrade(x, PROG_PIN_NEW, &r->maps_added)))
		goto out;
	len = sizeof(pi);
	memset(&pi, 0, sizeof(pi));
	bpf_obj_get_info_by_fd(x->prog_fd, &pi, &len);
	r->new_prog_id = pi.id;
	/* 3. each link to the new program, atomically; back on any failure */
	for (size_t i = 0; i < n && !err; i++) {
		err = swap_prog(links[i].fd, x->prog_fd, old_fd);
		if (err)
			err = fail(err, "cannot replace the program on %s: %s (the links done so far are put back)",
				   links[i].name, strerror(-err));
		else
			links[i].moved = true;
	}
	/* 4. the program pin last: a rename replaces it in one step */
	if (!err && rename(pnew, p))
		err = fail(errno, "cannot pin the program at %s: %s (the links are put back)", p, strerror(errno));
	if (!err && rename(ipnew, ip))	/* the program is in place: only say so */
		warn("cannot pin the new build's info at %s: %s", ip, strerror(errno));
	if (err) {
		for (size_t i = 0; i < n; i++)
			if (links[i].moved && swap_prog(links[i].fd, old_fd, x->prog_fd))
				warn("could not put the old program back on %s: %s", links[i].name,
				     strerror(errno));
		unlink(pnew);
		unlink(ipnew);
		xrl_discard(x);	/* the maps this build added */
		goto out;
	}
	r->links = n;
	x->created = false;
	x->prog_pin_new = false;
out:
	if (old_fd >= 0)
		close(old_fd);
	links_free(links, n);
	if (err || !out) {
		xrl_close(x);
		return err;
	}
	*out = x;
	return 0;
}

/* An upgrade replaced the pinned program under this handle (a daemon of
 * the older build): if the pinned one runs on this handle's very maps and
 * has this layout, serve it from now on (re-attaching uses it). 1 adopted,
 * 0 not. */
int xrl__adopt_upgraded(struct xrl *x)
{
	struct bpf_map_info mi = {};
	__u32 ids[64], n = 0, len = sizeof(mi);
	char p[PATH_MAX];
	bool ours = false;
	int fd;

	pin_path(x, PROG_PIN, p, sizeof(p));
	if ((fd = bpf_obj_get(p)) < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(x->map_fd[M_CONTROL], &mi, &len) == 0 &&
	    prog_map_ids(fd, ids, 64, &n) == 0)
		for (__u32 i = 0; i < n; i++)
			ours |= ids[i] == mi.id;
	if (!ours || xrl__layout_check(x, fd, "pinned program")) {
		close(fd);
		return 0;
	}
	if (x->own_prog_fd || !x->skel)
		close(x->prog_fd);	/* a skeleton's own fd goes with it */
	x->prog_fd = fd;
	x->own_prog_fd = true;
	return 1;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the tc ingress program (hook tc), loaded when a tc hook first
 * needs it. The object's two programs cost a verification each (over a
 * second of CPU apiece); most instances only ever run the XDP one, so
 * xrl_open() loads that alone, and the tc program is loaded here, on the
 * same maps, by the first attach at hook tc (or the first
 * xrl_tc_prog_fd() of a private instance). A second open of the object
 * whose every map is the instance's own: the pinned ones by the handle's
 * descriptors, the program's unpinned ones (the capture's) by the loaded
 * object or by the XDP program's map ids; .rodata as the first load set
 * it. Pinned at TC_PROG_PIN, where every later command and an upgrade find
 * it.
 */
#include "maps/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A new descriptor on the map the XDP program uses under this name (names
 * are cut at 15 bytes in the kernel); -ENOENT when it has none, -EPERM
 * when its maps cannot be opened by id (CAP_SYS_ADMIN). */
static int prog_map_by_name(int prog_fd, const char *name)
{
	struct bpf_prog_info pi = {};
	__u32 ids[64], len = sizeof(pi);
	int err = -ENOENT;

	pi.nr_map_ids = 64;
	pi.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &len))
		return -errno;
	for (__u32 i = 0; i < pi.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0) {
			if (xrl__is_perm(errno))
				err = -EPERM;
			continue;
		}
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 &&
		    !strncmp(mi.name, name, BPF_OBJ_NAME_LEN - 1))
			return fd;
		close(fd);
	}
	return err;
}

/* Does prog_fd use this handle's control block (is it a program of this
 * instance)? */
static bool on_our_maps(struct xrl *x, int prog_fd)
{
	struct bpf_prog_info pi = {};
	struct bpf_map_info mi = {};
	__u32 ids[64], len = sizeof(pi), mlen = sizeof(mi);
	bool ours = false;

	pi.nr_map_ids = 64;
	pi.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &len) ||
	    bpf_obj_get_info_by_fd(x->map_fd[M_CONTROL], &mi, &mlen))
		return false;
	for (__u32 i = 0; i < pi.nr_map_ids && i < 64; i++)
		ours |= ids[i] == mi.id;
	return ours;
}

/* Every map of the tc object made the instance's own (bpf_map__reuse_fd
 * takes a copy of the descriptor). */
static int reuse_maps(struct xrl *x, struct xdp_rl *tc)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, tc->obj) {
		const char *name = bpf_map__name(m);
		int fd = -1, err;
		bool own = false;

		if (bpf_map__is_internal(m))
			continue;	/* .rodata: set below, as the first load did */
		for (int i = 0; i < M__COUNT && fd < 0; i++)
			if (!strcmp(xrl__map_names[i], name))
				fd = x->map_fd[i];
		if (fd < 0 && x->skel)
			fd = bpf_map__fd(bpf_object__find_map_by_name(x->skel->obj, name));
		if (fd < 0) {	/* an unpinned map of the running program */
			fd = prog_map_by_name(x->prog_fd, name);
			own = true;
		}
		if (fd < 0)
			return xrl_fail(-fd, "cannot load the tc program: the running program's map %s cannot be "
					"opened (%s)", name, fd == -EPERM ? "opening it by id takes CAP_SYS_ADMIN" :
					"the program has none: 'xdp-rlctl upgrade' first");
		err = bpf_map__reuse_fd(m, fd);
		if (own)
			close(fd);
		if (err)
			return xrl_fail(-err, "cannot load the tc program: cannot reuse map %s: %s", name,
					strerror(-err));
	}
	return 0;
}

/* The pinned build: the tc program loaded beside the XDP one must be the
 * same build's, else the instance would run two builds' code. */
static int same_build(struct xrl *x)
{
	struct xrl_build_info bi = {};
	char p[PATH_MAX];
	__u32 zero = 0;
	int fd, err = 0;

	xrl__pin_path(x, INFO_PIN, p, sizeof(p));
	if ((fd = bpf_obj_get(p)) < 0)
		return xrl_fail(errno, "cannot load the tc program: cannot open the running build's info %s: %s",
				p, strerror(errno));
	if (bpf_map_lookup_elem(fd, &zero, &bi))
		err = xrl_fail(errno, "cannot load the tc program: cannot read %s: %s", p, strerror(errno));
	close(fd);
	if (err)
		return err;
	bi.build[sizeof(bi.build) - 1] = '\0';
	if (strcmp(bi.build, xrl_version()))
		return xrl_fail(EPROTO, "the program under %s is build %s, this is build %s: hook tc needs "
				"the running build's tc program, and this build would load its own beside it "
				"(nothing was changed): 'xdp-rlctl upgrade' with this build first, or attach "
				"with build %s", x->pin_dir, bi.build, xrl_version(), bi.build);
	return 0;
}

int xrl__tc_load(struct xrl *x)
{
	struct xdp_rl *tc = NULL;
	char p[PATH_MAX], lacks[384];
	int fd, err;

	if (x->tc_prog_fd >= 0)
		return 0;
	if (x->pinned) {
		/* another command loaded it since this handle was opened */
		xrl__pin_path(x, TC_PROG_PIN, p, sizeof(p));
		if ((fd = bpf_obj_get(p)) >= 0) {
			if (on_our_maps(x, fd)) {
				x->tc_prog_fd = fd;
				x->own_tc_fd = true;
				return 0;
			}
			close(fd);
			/* a leftover of another instance: nothing can use it */
			if (unlink(p))
				return xrl_fail(errno, "cannot remove the stale tc program %s: %s", p,
						strerror(errno));
		}
		if ((err = same_build(x)))
			return err;
	}
	tc = xdp_rl__open();
	if (!tc)
		return xrl_fail(errno, "cannot open the BPF object: %s", strerror(errno));
	bpf_program__set_autoload(tc->progs.xdp_rl, false);
	/* .rodata as the first load set it: the instance's clock (a pinned
	 * instance never has the test clock) and this build's name */
	tc->rodata->use_test_clock = x->skel ? x->skel->rodata->use_test_clock : 0;
	snprintf((char *)tc->rodata_info->xrl_info.build, sizeof(tc->rodata_info->xrl_info.build), "%s",
		 xrl_version());
	if ((err = reuse_maps(x, tc)))
		goto out;
	err = xrl__skel_load(tc, lacks, sizeof(lacks));
	if (err && lacks[0])
		err = xrl_fail(err, "cannot load the tc program: %s", lacks);
	else if (err && xrl__is_perm(-err))
		err = xrl_fail(err, "cannot load the tc program: permission denied (uid %u): loading it takes root "
			       "(CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON): run it as root, e.g. with sudo",
			       (unsigned)geteuid());
	else if (err)
		err = xrl_fail(err, "cannot load the tc program: %s (XRL_DEBUG=1 shows the verifier's log)",
			       strerror(-err));
	if (err)
		goto out;
	/* the program outlives the object: the handle keeps a descriptor */
	fd = fcntl(bpf_program__fd(tc->progs.xrl_tc), F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		err = xrl_fail(errno, "cannot keep the tc program: %s", strerror(errno));
		goto out;
	}
	if (x->pinned && bpf_obj_pin(fd, p)) {
		err = xrl_fail(errno, "cannot pin the tc program at %s: %s", p, strerror(errno));
		close(fd);
		goto out;
	}
	x->tc_prog_fd = fd;
	x->own_tc_fd = true;
	err = 1;
out:
	xdp_rl__destroy(tc);
	return err;
}

void xrl__tc_unload(struct xrl *x)
{
	char p[PATH_MAX];

	if (x->tc_prog_fd < 0 || !x->own_tc_fd)
		return;
	if (x->pinned) {
		xrl__pin_path(x, TC_PROG_PIN, p, sizeof(p));
		if (unlink(p) && errno != ENOENT)
			xrl_warn("cannot remove %s: %s", p, strerror(errno));
	}
	close(x->tc_prog_fd);
	x->tc_prog_fd = -1;
	x->own_tc_fd = false;
}

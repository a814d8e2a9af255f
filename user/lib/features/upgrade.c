// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the hitless upgrade: this build's program takes over the pinned maps and the
 * pinned links of a running one (README, "Upgrading"). The links are XDP
 * links, which get the new XDP program, and tcx links (hook tc), which get
 * the new tc program of the same object: each an atomic update of its link.
 * The new build loads its tc program only when the running instance has one
 * (a tc pin: some tc hook loaded it); an XDP-only instance stays XDP-only,
 * and its first tc hook loads the tc program then (maps/tcprog.c).
 */
#include "maps/internal.h"
#include "features/upgrade.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct link_ref {
	char name[NAME_MAX + 1];
	int fd;
	__u32 prog_id;
	bool tc;		/* a tcx link: runs the tc program */
	bool moved;
};

#define LINK_TYPE_TCX	11	/* enum bpf_link_type, newer than the uapi headers */

static void links_free(struct link_ref *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(l[i].fd);
	free(l);
}

/* The links pinned in the directory, each checked to run the old program
 * of its hook (old_id 0: any program; old_tc_id for a tcx link). */
static int links_of(struct xrl *x, __u32 old_id, __u32 old_tc_id, struct link_ref **out, size_t *n)
{
	struct link_ref *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	int err = 0;
	DIR *d;

	*n = 0;
	if (!(d = opendir(x->pin_dir)))
		return xrl_fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while (!err && (de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		char p[PATH_MAX];
		int fd;

		if (strncmp(de->d_name, LINK_PREFIX, strlen(LINK_PREFIX)))
			continue;
		xrl__pin_path(x, de->d_name, p, sizeof(p));
		if ((fd = bpf_obj_get(p)) < 0) {
			err = xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
			break;
		}
		if (bpf_obj_get_info_by_fd(fd, &info, &len) ||
		    (old_id && info.prog_id != (info.type == LINK_TYPE_TCX ? old_tc_id : old_id))) {
			err = xrl_fail(EEXIST, "%s runs program %u, not the pinned program %u: refused, nothing was changed",
				   p, info.prog_id, info.type == LINK_TYPE_TCX ? old_tc_id : old_id);
			close(fd);
			break;
		}
		if (*n == cap) {
			struct link_ref *t = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!t) {
				close(fd);
				err = xrl_fail(ENOMEM, "out of memory");
				break;
			}
			v = t;
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", de->d_name + strlen(LINK_PREFIX));
		v[*n].fd = fd;
		v[*n].prog_id = info.prog_id;
		v[*n].tc = info.type == LINK_TYPE_TCX;
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

/* The hook's FIFO opened for flags (O_RDONLY or O_WRONLY): never created
 * nor truncated, and refused unless it is a FIFO, before the open (lstat:
 * nothing else is opened, which could block or be written) and after it. */
static int test_fifo(const char *path, int flags)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) || !S_ISFIFO(st.st_mode)) {
		xrl_warn("XRL_TEST_UPGRADE_STOP: %s is not a FIFO: the hook is ignored", path);
		return -1;
	}
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		xrl_warn("XRL_TEST_UPGRADE_STOP: %s is not a FIFO: the hook is ignored", path);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A test hook, compiled into the real binary so that the tests kill the real
 * upgrade at each of its steps: with XRL_TEST_UPGRADE_STOP=STEP:FIFO in the
 * environment, the upgrade stops at STEP (loaded, link, links, renamed),
 * writes the step's name into FIFO and waits for a line back from it (or
 * for its SIGKILL). Anyone who can set the environment of an upgrade can
 * stop it anyway; nothing else reads the variable.
 */
static void test_stop(const char *step)
{
	const char *v = getenv("XRL_TEST_UPGRADE_STOP"), *colon;
	char buf[16];
	int fd;

	if (!v || !(colon = strchr(v, ':')) || (size_t)(colon - v) != strlen(step) ||
	    strncmp(v, step, colon - v))
		return;
	if ((fd = test_fifo(colon + 1, O_WRONLY)) < 0)
		return;
	snprintf(buf, sizeof(buf), "%s\n", step);
	if (write(fd, buf, strlen(buf)) < 0)
		buf[0] = '\0';
	close(fd);
	/* wait for a line back (or the SIGKILL) */
	if ((fd = test_fifo(colon + 1, O_RDONLY)) < 0)
		return;
	if (read(fd, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	close(fd);
}

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi);

	return bpf_obj_get_info_by_fd(fd, &pi, &len) ? 0 : pi.id;
}

/* The info pinned at path: is it a map of the program prog_fd? */
static bool info_of_prog(const char *path, int prog_fd)
{
	__u32 ids[64], n = 0;
	bool ours = false;
	int fd = bpf_obj_get(path), id;

	if (fd < 0)
		return false;
	id = xrl__map_id(fd);
	close(fd);
	if (id && xrl__prog_map_ids(prog_fd, ids, 64, &n) == 0)
		for (__u32 i = 0; i < n; i++)
			ours |= ids[i] == (__u32)id;
	return ours;
}

/* Where an upgrade's pins are: the program and its build info, each with
 * the new one pinned beside it until the rename (each PATH_MAX long). */
static void upgrade_pin_paths(const struct xrl *x, char *p, char *pnew, char *ip, char *ipnew)
{
	xrl__pin_path(x, PROG_PIN, p, PATH_MAX);
	xrl__pin_path(x, PROG_PIN_NEW, pnew, PATH_MAX);
	xrl__pin_path(x, INFO_PIN, ip, PATH_MAX);
	xrl__pin_path(x, INFO_PIN_NEW, ipnew, PATH_MAX);
}

/* The tc program's pins, the pinned one and the upgrade's (PATH_MAX long). */
static void tc_pin_paths(const struct xrl *x, char *tp, char *tpnew)
{
	xrl__pin_path(x, TC_PROG_PIN, tp, PATH_MAX);
	xrl__pin_path(x, TC_PROG_PIN_NEW, tpnew, PATH_MAX);
}

/* The new tc program in place, after the XDP program's rename: a new tc pin
 * without a new XDP pin always means that rename happened (it is pinned
 * after the XDP one and removed before it), so this may run again. */
static void tc_rename(const char *tp, const char *tpnew)
{
	if (!access(tpnew, F_OK) && rename(tpnew, tp))
		xrl_warn("cannot pin the new tc program at %s: %s", tp, strerror(errno));
}

/*
 * An upgrade killed part way leaves one of these states (the steps of
 * xrl_upgrade()); with the lock held, no upgrade is running, so this is all
 * there is to find:
 *  - killed while loading, or before a link was moved: a program pinned as
 *    PROG_PIN_NEW (and its info) that no link runs: removed. Maps the load
 *    created stay pinned; the next upgrade checks and reuses them.
 *  - killed while moving the links (or while putting them back): some or
 *    all links run the PROG_PIN_NEW program, the others the pinned one:
 *    the rest are moved to it too and the pin renamed, as the upgrade would
 *    have done. Forward, not back: the new program already serves traffic,
 *    on the same maps, so this finishes what was meant.
 *  - killed between the two renames: the program pin is the new one, its
 *    info still pinned as INFO_PIN_NEW: renamed.
 * Every step is a rename or an atomic link update, so this may itself be
 * killed anywhere and run again. Returns 1 when it finished an upgrade, 0
 * when there was nothing (or only leftovers) to do, <0 on error.
 */
int xrl_upgrade_recover(struct xrl *x)
{
	char p[PATH_MAX], pnew[PATH_MAX], ip[PATH_MAX], ipnew[PATH_MAX], tp[PATH_MAX], tpnew[PATH_MAX];
	struct link_ref *links = NULL;
	__u32 new_id, old_id = 0, new_tc_id = 0, old_tc_id = 0;
	size_t n = 0, on_new = 0, moved = 0;
	int new_fd, old_fd, new_tc_fd = -1, old_tc_fd = -1, err = 0;

	if (!x->pinned)
		return 0;
	upgrade_pin_paths(x, p, pnew, ip, ipnew);
	tc_pin_paths(x, tp, tpnew);
	new_fd = bpf_obj_get(pnew);
	if (new_fd < 0) {
		int fd;

		if (errno != ENOENT)
			return xrl_fail(errno, "cannot open %s: %s", pnew, strerror(errno));
		/* killed after the XDP program's rename: the tc one follows */
		if (!access(tpnew, F_OK)) {
			tc_rename(tp, tpnew);
			xrl_warn("finished an interrupted upgrade under %s: the tc program pinned", x->pin_dir);
			if (access(ipnew, F_OK))
				return 1;
		}
		if (access(ipnew, F_OK))
			return 0;
		/* killed between the renames, or a leftover of a load */
		fd = bpf_obj_get(p);
		if (fd >= 0 && info_of_prog(ipnew, fd)) {
			close(fd);
			if (rename(ipnew, ip))
				return xrl_fail(errno, "cannot pin the build's info at %s: %s", ip, strerror(errno));
			xrl_warn("finished an interrupted upgrade under %s: the build's info pinned", x->pin_dir);
			return 1;
		}
		if (fd >= 0)
			close(fd);
		unlink(ipnew);
		return 0;
	}
	new_id = prog_id_of(new_fd);
	old_fd = bpf_obj_get(p);
	if (old_fd >= 0)
		old_id = prog_id_of(old_fd);
	if ((new_tc_fd = bpf_obj_get(tpnew)) >= 0)
		new_tc_id = prog_id_of(new_tc_fd);
	if ((old_tc_fd = bpf_obj_get(tp)) >= 0)
		old_tc_id = prog_id_of(old_tc_fd);
	if ((err = links_of(x, 0, 0, &links, &n)))
		goto out;
	for (size_t i = 0; i < n; i++)
		on_new += links[i].prog_id == (links[i].tc ? new_tc_id : new_id) && links[i].prog_id;
	if (!on_new) {
		/* killed before any link was moved: it never served (the
		 * tc pin first: see tc_rename()) */
		if (unlink(tpnew) && errno != ENOENT) {
			err = xrl_fail(errno, "cannot remove %s: %s", tpnew, strerror(errno));
			goto out;
		}
		if (unlink(pnew) && errno != ENOENT) {
			err = xrl_fail(errno, "cannot remove %s: %s", pnew, strerror(errno));
			goto out;
		}
		unlink(ipnew);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bool tc = links[i].tc;
		__u32 nid = tc ? new_tc_id : new_id, oid = tc ? old_tc_id : old_id;

		if (links[i].prog_id == nid)
			continue;
		if ((tc ? old_tc_fd : old_fd) < 0 || (tc && new_tc_fd < 0) || links[i].prog_id != oid) {
			xrl_warn("link %s runs program %u, neither the upgrade's %u nor the pinned %u: left as it is",
			     links[i].name, links[i].prog_id, nid, oid);
			continue;
		}
		if ((err = swap_prog(links[i].fd, tc ? new_tc_fd : new_fd, tc ? old_tc_fd : old_fd))) {
			err = xrl_fail(err, "cannot finish the interrupted upgrade on %s: %s", links[i].name,
				   strerror(-err));
			goto out;
		}
		moved++;
	}
	if (rename(pnew, p)) {
		err = xrl_fail(errno, "cannot pin the upgraded program at %s: %s", p, strerror(errno));
		goto out;
	}
	tc_rename(tp, tpnew);
	if (!access(ipnew, F_OK) && info_of_prog(ipnew, new_fd) && rename(ipnew, ip))
		xrl_warn("cannot pin the new build's info at %s: %s", ip, strerror(errno));
	xrl_warn("finished an interrupted upgrade under %s: program %u pinned, %zu link(s) moved to it, "
	     "%zu already there", x->pin_dir, new_id, moved, on_new);
	err = 1;
out:
	close(new_fd);
	if (old_fd >= 0)
		close(old_fd);
	if (new_tc_fd >= 0)
		close(new_tc_fd);
	if (old_tc_fd >= 0)
		close(old_tc_fd);
	links_free(links, n);
	if (err == 1 && x->prog_fd >= 0)
		xrl__adopt_upgraded(x);	/* a handle opened on the old program */
	return err;
}

int xrl_upgrade(const char *pin_dir, struct xrl_upgrade_report *r, struct xrl **out)
{
	struct xrl_open_opts o = { .pin_dir = pin_dir, .pins_only = true };
	struct link_ref *links = NULL;
	char p[PATH_MAX], pnew[PATH_MAX], ip[PATH_MAX], ipnew[PATH_MAX], tp[PATH_MAX], tpnew[PATH_MAX];
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(pi), old_tc_id = 0;
	size_t n = 0;
	struct xrl *x;
	int err, old_fd = -1, old_tc_fd = -1;

	memset(r, 0, sizeof(*r));
	if ((err = xrl_open(&o, &x)))
		return err;
	/* an upgrade killed part way is finished first (or its leftovers
	 * removed): this one then starts from a consistent state */
	if ((err = xrl_upgrade_recover(x)) < 0)
		goto out;
	err = 0;
	upgrade_pin_paths(x, p, pnew, ip, ipnew);
	tc_pin_paths(x, tp, tpnew);
	/* an older build pinned none (and has no tcx link) */
	if ((old_tc_fd = bpf_obj_get(tp)) >= 0)
		old_tc_id = prog_id_of(old_tc_fd);
	old_fd = bpf_obj_get(p);
	if (old_fd < 0) {
		err = xrl_fail(ENOENT, "nothing to upgrade: no program pinned at %s", p);
		goto out;
	}
	/* 1. checks: nothing is created or changed until they pass */
	{
		/* a clsact filter (hook tc without tcx) has no link to swap
		 * the program in atomically: not upgraded in this version */
		struct xrl_attachment *a = NULL;
		size_t na = 0;
		const char *clsact = NULL;

		if (xrl_attachments(x, &a, &na) == 0)
			for (size_t i = 0; i < na && !clsact; i++)
				if (a[i].tc_clsact)
					clsact = a[i].ifname;
		if (clsact) {
			err = xrl_fail(EOPNOTSUPP, "%s is attached at tc through a clsact filter (no tcx links), which "
				       "upgrade cannot swap atomically: refused, nothing was changed ('detach dev %s', "
				       "upgrade, then attach it again)", clsact, clsact);
			free(a);
			goto out;
		}
		free(a);
	}
	if ((err = xrl__build_info_of(x, old_fd, &r->from)) && err != -ENOENT) {
		err = xrl_fail(err, "cannot read the running build: %s", strerror(-err));
		goto out;
	}
	if ((err = xrl__layout_check(x, old_fd, "running program")))
		goto out;
	if (bpf_obj_get_info_by_fd(old_fd, &pi, &len)) {
		err = xrl_fail(errno, "cannot read %s: %s", p, strerror(errno));
		goto out;
	}
	r->old_prog_id = pi.id;
	if ((err = links_of(x, pi.id, old_tc_id, &links, &n)))
		goto out;
	/* 2. load this build on the pinned maps (creating the new ones) */
	if ((err = xrl__load_upgrade(x, PROG_PIN_NEW, &r->maps_added)))
		goto out;
	len = sizeof(pi);
	memset(&pi, 0, sizeof(pi));
	bpf_obj_get_info_by_fd(x->prog_fd, &pi, &len);
	r->new_prog_id = pi.id;
	test_stop("loaded");
	/* 3. each link to the new program, atomically; back on any failure */
	for (size_t i = 0; i < n && !err; i++) {
		err = links[i].tc ? swap_prog(links[i].fd, x->tc_prog_fd, old_tc_fd)
				  : swap_prog(links[i].fd, x->prog_fd, old_fd);
		if (err)
			err = xrl_fail(err, "cannot replace the program on %s: %s (the links done so far are put back)",
				   links[i].name, strerror(-err));
		else
			links[i].moved = true;
		if (!err && i == 0 && n > 1)
			test_stop("link");
	}
	if (!err)
		test_stop("links");
	/* 4. the program pin last: a rename replaces it in one step */
	if (!err && rename(pnew, p))
		err = xrl_fail(errno, "cannot pin the program at %s: %s (the links are put back)", p, strerror(errno));
	if (!err)
		test_stop("renamed");
	if (!err)
		tc_rename(tp, tpnew);
	if (!err && rename(ipnew, ip))	/* the program is in place: only say so */
		xrl_warn("cannot pin the new build's info at %s: %s", ip, strerror(errno));
	if (err) {
		for (size_t i = 0; i < n; i++)
			if (links[i].moved && (links[i].tc ? swap_prog(links[i].fd, old_tc_fd, x->tc_prog_fd)
							   : swap_prog(links[i].fd, old_fd, x->prog_fd)))
				xrl_warn("could not put the old program back on %s: %s", links[i].name,
				     strerror(errno));
		unlink(tpnew);	/* before the XDP one: see tc_rename() */
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
	if (old_tc_fd >= 0)
		close(old_tc_fd);
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

	xrl__pin_path(x, PROG_PIN, p, sizeof(p));
	if ((fd = bpf_obj_get(p)) < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(x->map_fd[M_CONTROL], &mi, &len) == 0 &&
	    xrl__prog_map_ids(fd, ids, 64, &n) == 0)
		for (__u32 i = 0; i < n; i++)
			ours |= ids[i] == mi.id;
	if (!ours || xrl__layout_check(x, fd, "pinned program")) {
		close(fd);
		return 0;
	}
	if (x->own_prog_fd || !x->skel)
		close(x->prog_fd);	/* a skeleton's own fd goes with it */
	if (x->tc_prog_fd >= 0 && (x->own_prog_fd || !x->skel || x->own_tc_fd))
		close(x->tc_prog_fd);	/* one loaded on demand is the handle's too */
	x->prog_fd = fd;
	/* the tc program of the same build, pinned beside it (none: the
	 * instance has no tc hook, the next one loads it) */
	xrl__pin_path(x, TC_PROG_PIN, p, sizeof(p));
	x->tc_prog_fd = bpf_obj_get(p);
	x->own_prog_fd = true;
	x->own_tc_fd = false;
	return 1;
}

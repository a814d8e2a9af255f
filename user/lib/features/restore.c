// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the daemon's pins kept whole. Are the pins under the directory
 * still this handle's objects, and pin them again where they were removed
 * (an `rm -rf` of the pin directory).
 */
#include "maps/internal.h"
#include "features/restore.h"
#include "features/upgrade.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel's id of the program or map fd; 0 when it cannot be read. */
static __u32 fd_id(int fd, bool prog)
{
	if (prog) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	} else {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
	}
}

/* The object pinned at DIR/name: 1 ours, 0 missing, -EEXIST another one. */
static int pinned_is(struct xrl *x, const char *name, int fd, bool prog)
{
	char p[PATH_MAX];
	int pfd, same;

	xrl__pin_path(x, name, p, sizeof(p));
	pfd = bpf_obj_get(p);
	if (pfd < 0)
		return 0;
	same = fd_id(pfd, prog) == fd_id(fd, prog);
	close(pfd);
	return same ? 1 : -EEXIST;
}

int xrl_pins_ok(struct xrl *x)
{
	if (!x->pinned)
		return 1;
	/* an upgrade replaced the program on these maps: serve the new one */
	if (pinned_is(x, PROG_PIN, x->prog_fd, true) == -EEXIST && xrl__adopt_upgraded(x))
		xrl_warn("the program under %s was upgraded: re-attaching uses the new one", x->pin_dir);
	if (pinned_is(x, PROG_PIN, x->prog_fd, true) != 1)
		return 0;
	/* the tc program too: without its pin, hook tc could not attach */
	if (x->tc_prog_fd >= 0 && pinned_is(x, TC_PROG_PIN, x->tc_prog_fd, true) != 1)
		return 0;
	for (int i = 0; i < M__COUNT; i++)
		if (pinned_is(x, xrl__map_names[i], x->map_fd[i], false) != 1)
			return 0;
	return xrl__claim_intact(x);
}

/* Is any link pinned in the directory a link of another program? */
static bool foreign_links(struct xrl *x)
{
	__u32 ours = fd_id(x->prog_fd, true);
	__u32 ours_tc = x->tc_prog_fd >= 0 ? fd_id(x->tc_prog_fd, true) : 0;
	struct xrl_attachment *a = NULL;
	bool found = false;
	size_t n = 0;

	if (xrl_attachments(x, &a, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++)
		found = a[i].prog_id && a[i].prog_id != (a[i].hook == XRL_HOOK_TC ? ours_tc : ours);
	free(a);
	return found;
}

int xrl_pins_restore(struct xrl *x)
{
	bool replaced = false;
	char p[PATH_MAX];
	pid_t holder;
	int err;

	if (!x->pinned)
		return 0;
	err = xrl__ensure_bpffs(x->pin_dir, true);
	if (err)
		return err;
	if (mkdir(x->pin_dir, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", x->pin_dir, strerror(errno));
	if ((err = xrl__pin_dir_safe(x->pin_dir)))
		return err;
	/* the old directory may be gone: lock the one that is there now */
	if (x->lock_fd >= 0) {
		close(x->lock_fd);
		x->lock_fd = -1;
	}
	for (int i = -1; i < M__COUNT; i++) {
		const char *name = i < 0 ? PROG_PIN : xrl__map_names[i];
		int fd = i < 0 ? x->prog_fd : x->map_fd[i];

		err = pinned_is(x, name, fd, i < 0);
		if (err == 1)
			continue;
		xrl__pin_path(x, name, p, sizeof(p));
		if (err < 0) {
			/* Another instance was made here after the removal (a
			 * CLI command that found nothing). Unattached, it serves
			 * nothing: this handle's maps, with their buckets and
			 * the daemon's rules, take the place back. Attached
			 * somewhere, it is left alone. */
			if (foreign_links(x))
				return xrl_fail(EEXIST, "%s holds another attached instance: not replaced", x->pin_dir);
			if (unlink(p))
				return xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
			replaced = true;
		}
		if (bpf_obj_pin(fd, p))
			return xrl_fail(errno, "cannot pin %s: %s", p, strerror(errno));
	}
	/* the tc program (hook tc attaches it) */
	if (x->tc_prog_fd >= 0 && pinned_is(x, TC_PROG_PIN, x->tc_prog_fd, true) != 1) {
		xrl__pin_path(x, TC_PROG_PIN, p, sizeof(p));
		unlink(p);
		if (bpf_obj_pin(x->tc_prog_fd, p))
			xrl_warn("cannot pin the tc program at %s: %s", p, strerror(errno));
	}
	/* the program's build, when this handle has it (it loaded the object);
	 * else status finds it by the program's map ids */
	if (x->skel && !x->own_prog_fd && !xrl__pin_exists(x, INFO_PIN)) {
		xrl__pin_path(x, INFO_PIN, p, sizeof(p));
		if (bpf_obj_pin(bpf_map__fd(x->skel->maps.rodata_info), p))
			xrl_warn("cannot pin the program's build at %s: %s", p, strerror(errno));
	}
	if (replaced)
		xrl_warn("replaced an unattached instance pinned at %s after the pins were removed (its rules are gone)",
		     x->pin_dir);
	/* the published sets, from this handle's descriptors of them */
	xrl__sets_pin(x);
	/* renew the claim when its directory was removed or replaced */
	if (!xrl__claim_intact(x))
		return xrl__claim_daemon(x, &holder);
	return 0;
}

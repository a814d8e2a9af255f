// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: an instance of xdp-rl and the handle on it. Open (the pin
 * directory made safe and locked, the object loaded or the pins reused),
 * close, discard what a failed command created, purge every pin.
 */
#include "maps/internal.h"
#include "maps/syncookie.h"
#include "maps/rules.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int xrl_open(const struct xrl_open_opts *o, struct xrl **out)
{
	struct xrl *x;
	int err;

	xrl__errbuf[0] = '\0';
	x = calloc(1, sizeof(*x));
	if (!x)
		return xrl_fail(ENOMEM, "out of memory");
	x->lock_fd = -1;
	x->daemon_fd = -1;
	x->prog_fd = -1;
	x->tc_prog_fd = -1;
	for (int i = 0; i < M__COUNT; i++)
		x->map_fd[i] = x->set_fd[i] = -1;
	pthread_mutex_init(&x->set_lock, NULL);
	x->ncpus = libbpf_num_possible_cpus();
	x->pinned = !o->no_pin;
	if (o->pin_dir && strlen(o->pin_dir) > PATH_MAX - 64) {
		err = xrl_fail(ENAMETOOLONG, "pin directory name is too long");
		goto err;
	}
	snprintf(x->pin_dir, sizeof(x->pin_dir), "%s",
		 o->pin_dir ? o->pin_dir : XRL_DEFAULT_PIN_DIR);
	/* no trailing slash: the parent is derived from the last component */
	for (size_t l = strlen(x->pin_dir); l > 1 && x->pin_dir[l - 1] == '/'; l--)
		x->pin_dir[l - 1] = '\0';

	if (o->keys && o->keys < 16) {
		err = xrl_fail(EINVAL, "keys %u: the bucket table needs at least 16 entries", o->keys);
		goto err;
	}

	if (x->pinned) {
		err = xrl__ensure_bpffs(x->pin_dir, o->create);
		if (err)
			goto err;
		for (int tries = 0;; tries++) {
			struct stat a, b;

			if (access(x->pin_dir, F_OK)) {
				if (errno == EACCES) {	/* a parent the caller cannot search */
					err = xrl__perm_denied(EACCES, "cannot look into the parent of", x->pin_dir);
					goto err;
				}
				if (!o->create) {
					err = xrl_fail(ENOENT, "xdp-rl is not loaded (nothing pinned at %s); run 'xdp-rlctl attach dev IFACE' first",
						   x->pin_dir);
					goto err;
				}
				if (mkdir(x->pin_dir, 0700) == 0)
					x->created_dir = true;
				else if (xrl__is_perm(errno)) {
					err = xrl__perm_denied(errno, "cannot create", x->pin_dir);
					goto err;
				} else if (errno != EEXIST) {
					err = xrl_fail(errno, "cannot create %s: %s", x->pin_dir, strerror(errno));
					goto err;
				}
			}
			if ((err = xrl__pin_dir_safe(x->pin_dir))) {
				if (x->created_dir)	/* made here, under an unsafe parent */
					rmdir(x->pin_dir);
				x->created_dir = false;
				goto err;
			}
			/* the pins of a directory the caller cannot search would
			 * all look absent: "not loaded" would be a lie */
			if (faccessat(AT_FDCWD, x->pin_dir, X_OK, AT_EACCESS) && errno == EACCES) {
				err = xrl__perm_denied(EACCES, "cannot read the pin directory", x->pin_dir);
				goto err;
			}
			if (o->no_lock)
				break;
			err = xrl__lock_dir(x);
			if (err)
				goto err;
			/* A creator that failed removes the directory it made:
			 * locked, it must still be the one at the path. */
			if (tries >= 3 || (fstat(x->lock_fd, &a) == 0 && stat(x->pin_dir, &b) == 0 &&
					   a.st_dev == b.st_dev && a.st_ino == b.st_ino))
				break;
			close(x->lock_fd);
			x->lock_fd = -1;
			x->locked = false;
			x->created_dir = false;
		}
		if (o->pins_only) {
			x->created_dir = false;
			*out = x;
			return 0;
		} else if (xrl__pin_exists(x, PROG_PIN)) {
			x->created_dir = false;	/* another creator got the lock first */
			err = xrl__reuse_pins(x, o);
		} else if (o->create) {
			err = xrl__load_object(x, o, PROG_PIN, false);
		} else {
			err = xrl_fail(ENOENT, "xdp-rl is not loaded (nothing pinned at %s); run 'xdp-rlctl attach dev IFACE' first",
				   x->pin_dir);
		}
	} else {
		err = xrl__load_object(x, o, PROG_PIN, false);
	}
	if (err)
		goto err;

	x->ctrl = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		       MAP_SHARED, x->map_fd[M_CONTROL], 0);
	if (x->ctrl == MAP_FAILED) {
		x->ctrl = NULL;
		err = xrl_fail(errno, "cannot map the control block: %s", strerror(errno));
		goto err;
	}
	/* a set published before the set pins existed, or whose pin a commit
	 * left stale: pinned now, by one that may open it by id */
	if (x->pinned && x->locked)
		xrl__sets_pin(x);
	*out = x;
	return 0;
err:
	xrl_discard(x);	/* keeps xrl__errbuf: the first failure is the one to tell */
	xrl_close(x);
	return err;
}

bool xrl_created(const struct xrl *x)
{
	return x->created || x->created_dir;
}

int xrl_discard(struct xrl *x)
{
	char p[PATH_MAX], saved[sizeof(xrl__errbuf)];
	int err = 0;

	if (!xrl_created(x) || (x->pinned && !x->locked))
		return 0;	/* unlocked, another process may be using them */
	memcpy(saved, xrl__errbuf, sizeof(saved));
	for (int i = 0; i <= M__COUNT + 2; i++) {
		if (!x->new_pin[i])
			continue;
		/* the empty set a new map-in-map was given (publish.c) */
		if (i < M__COUNT && x->set_fd[i] >= 0)
			xrl__set_unpin(x, i);
		xrl__pin_path(x, i < M__COUNT ? xrl__map_names[i] : i == M__COUNT ? PROG_PIN :
			      i == M__COUNT + 1 ? INFO_PIN : TC_PROG_PIN, p, sizeof(p));
		if (unlink(p) && errno != ENOENT && !err)
			err = xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
		x->new_pin[i] = false;
	}
	if (x->created_dir && rmdir(x->pin_dir) && errno != ENOENT && !err)
		err = xrl_fail(errno, "cannot remove %s: %s", x->pin_dir, strerror(errno));
	x->created = x->created_dir = false;
	if (!err)
		memcpy(xrl__errbuf, saved, sizeof(xrl__errbuf));
	return err;
}

void xrl_close(struct xrl *x)
{
	if (!x)
		return;
	if (x->ctrl)
		munmap(x->ctrl, sysconf(_SC_PAGESIZE));
	if (x->own_prog_fd && x->prog_fd >= 0)
		close(x->prog_fd);	/* adopted after an upgrade */
	if ((x->own_prog_fd || x->own_tc_fd) && x->tc_prog_fd >= 0)
		close(x->tc_prog_fd);	/* adopted, or loaded on demand */
	if (x->leases)
		munmap(x->leases, XRL_FLEET_SLOTS * sizeof(struct xrl_lease));
	if (x->ban_totals)
		munmap(x->ban_totals, sizeof(struct xrl_ban_totals));
	if (x->skel) {
		xdp_rl__destroy(x->skel);	/* owns the fds */
	} else {
		for (int i = 0; i < M__COUNT; i++)
			if (x->map_fd[i] >= 0)
				close(x->map_fd[i]);
		if (x->prog_fd >= 0 && !x->own_prog_fd)
			close(x->prog_fd);
		if (x->tc_prog_fd >= 0 && !x->own_prog_fd && !x->own_tc_fd)
			close(x->tc_prog_fd);
	}
	if (x->lock_fd >= 0)
		close(x->lock_fd);	/* drops the flock */
	if (x->daemon_fd >= 0)
		close(x->daemon_fd);
	xrl__ban_events_close(x);
	xrl__sets_close(x);
	pthread_mutex_destroy(&x->set_lock);
	free(x);
}

const char *xrl_pin_dir(const struct xrl *x)
{
	return x->pin_dir;
}

int xrl_prog_fd(const struct xrl *x)
{
	return x->prog_fd;
}

int xrl_tc_prepare(struct xrl *x)
{
	int err = xrl__tc_load(x);

	return err < 0 ? err : 0;
}

int xrl_tc_prog_fd(struct xrl *x)
{
	if (x->tc_prog_fd < 0 && !x->pinned && xrl__tc_load(x) < 0)
		return -1;
	return x->tc_prog_fd;
}

struct xrl_control *xrl_control(struct xrl *x)
{
	return x->ctrl;
}

/* Is this a name xdp-rl pins under its directory? */
static bool our_pin(const char *name)
{
	if (!strcmp(name, PROG_PIN) || !strcmp(name, PROG_PIN_NEW) || !strcmp(name, INFO_PIN) ||
	    !strcmp(name, TC_PROG_PIN) || !strcmp(name, TC_PROG_PIN_NEW) ||
	    !strcmp(name, INFO_PIN_NEW) || !strcmp(name, DAEMON_DIR) || !strcmp(name, EVENTS_DIR) ||
	    !strcmp(name, CAPTURE_DIR) ||
	    !strncmp(name, LINK_PREFIX, strlen(LINK_PREFIX)) || xrl__set_pin_name(name) ||
	    !strncmp(name, TCF_PREFIX, strlen(TCF_PREFIX)) || !strncmp(name, TCQ_PREFIX, strlen(TCQ_PREFIX)))
		return true;
	for (int i = 0; i < M__COUNT; i++)
		if (!strcmp(name, xrl__map_names[i]))
			return true;
	return false;
}

/* A claim directory holds nothing (anything in it is another tool's); a
 * pin is no directory. */
static bool claim_empty(struct xrl *x, const char *name)
{
	bool daemon = !strcmp(name, DAEMON_DIR);
	struct dirent *de;
	char p[PATH_MAX];
	bool empty = true;
	DIR *d;

	if (strcmp(name, DAEMON_DIR) && strcmp(name, EVENTS_DIR) && strcmp(name, CAPTURE_DIR))
		return true;
	xrl__pin_path(x, name, p, sizeof(p));
	if (!(d = opendir(p)))
		return errno == ENOTDIR;
	/* the daemon's claim holds its served interfaces' names (a daemon
	 * killed with -9 leaves them) */
	while (empty && (de = readdir(d)))
		empty = (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) ||
			(daemon && de->d_type == DT_DIR && !strncmp(de->d_name, SERVES_PREFIX, strlen(SERVES_PREFIX)));
	closedir(d);
	return empty;
}

int xrl_purge(struct xrl *x)
{
	struct xrl_attachment *a;
	struct dirent *de;
	size_t n;
	DIR *d;
	int err;

	err = xrl_attachments(x, &a, &n);
	if (err)
		return err;
	if (n) {
		char names[256], cmd[PATH_MAX + 32];

		xrl_attachments_names(a, n, names, sizeof(names));
		free(a);
		xrl__ctl_cmd(x, cmd, sizeof(cmd));
		return xrl_fail(EBUSY, "still attached to %s: pins kept ('%s detach dev IFACE' for each first)",
			    names, cmd);
	}
	free(a);
	/* A daemon serving the directory would pin it all again at once; an
	 * events reader would go on following maps that are gone. */
	if (x->daemon_fd < 0) {
		pid_t holder = xrl__claim_holder(x, DAEMON_DIR);

		if (holder > 0)
			return xrl_fail(EBUSY, "xdp-rld (pid %d) serves %s and would pin it all again: pins kept (stop it first)",
				    (int)holder, x->pin_dir);
		if (holder < 0)
			return xrl_fail(EBUSY, "an xdp-rld serves %s and would pin it all again: pins kept (stop it first)",
				    x->pin_dir);
	}
	{
		pid_t holder = xrl__claim_holder(x, EVENTS_DIR);

		if (holder)
			return xrl_fail(EBUSY, "'xdp-rlctl events' (pid %d) follows %s: pins kept (stop it first)",
				    (int)holder, x->pin_dir);
		holder = xrl__claim_holder(x, CAPTURE_DIR);
		if (holder)
			return xrl_fail(EBUSY, "'xdp-rlctl capture' (pid %d) reads %s: pins kept (stop it first)",
				    (int)holder, x->pin_dir);
	}
	/* Only a directory of xdp-rl's own names: a --pin-dir mistyped onto
	 * another tool's pins must not lose them. */
	d = opendir(x->pin_dir);
	if (!d)
		return xrl_fail(errno, "cannot read %s: %s", x->pin_dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.' && (!our_pin(de->d_name) || !claim_empty(x, de->d_name))) {
			err = xrl_fail(EEXIST, "%s holds '%s', which is not xdp-rl's: nothing removed",
				   x->pin_dir, de->d_name);
			closedir(d);
			return err;
		}
	}
	/* the syn-cookies rules' SYNPROXY table goes with the rules */
	{
		struct xrl_rule_entry *v = NULL;
		size_t nr = 0;

		if (!xrl_rules_get(x, &v, &nr)) {
			for (size_t i = 0; i < nr; i++) {
				if (v[i].r.syncookies) {
					char table[64];

					xrl_sc_table_name(x->pin_dir, table, sizeof(table));
					if (xrl_sc_nft_sync(table, NULL, 0))
						xrl_warn("%s", xrl_errmsg());
					break;
				}
			}
		}
		free(v);
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		xrl__pin_path(x, de->d_name, p, sizeof(p));
		/* the claims are directories (DAEMON_DIR, EVENTS_DIR, CAPTURE_DIR) */
		if (!strcmp(de->d_name, DAEMON_DIR))
			xrl__serves_clear(x, NULL, 0);
		if (unlink(p) && !(errno == EISDIR && rmdir(p) == 0))
			err = xrl_fail(errno, "cannot remove %s: %s", p, strerror(errno));
	}
	closedir(d);
	if (!err && rmdir(x->pin_dir))
		err = xrl_fail(errno, "cannot remove %s: %s", x->pin_dir, strerror(errno));
	return err;
}

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libxrl: the claims on a pin directory. The daemon's (DIR/daemon, flocked
 * for its whole life, with the names of the interfaces it serves) and the
 * events reader's (DIR/events).
 */
#include "maps/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pid of the process holding a claim (DAEMON_DIR, EVENTS_DIR) on the
 * directory; 0: none, -1: held, by whom unknown. */
pid_t xrl__claim_holder(struct xrl *x, const char *name)
{
	char p[PATH_MAX];
	pid_t pid = 0;
	int fd;

	xrl__pin_path(x, name, p, sizeof(p));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
	} else if (errno == EWOULDBLOCK) {
		pid = xrl__flock_holder(fd);
		if (!pid)
			pid = -1;	/* held, by whom unknown */
	}
	close(fd);
	return pid;
}

/* Remove the served interfaces' names from the daemon's claim, but those
 * in keep[nkeep]. */
void xrl__serves_clear(struct xrl *x, const char *const *keep, size_t nkeep)
{
	struct dirent *de;
	char p[PATH_MAX];
	DIR *d;

	xrl__pin_path(x, DAEMON_DIR, p, sizeof(p));
	if (!(d = opendir(p)))
		return;
	while ((de = readdir(d))) {
		char q[PATH_MAX * 2];

		bool kept = false;

		if (de->d_type != DT_DIR || strncmp(de->d_name, SERVES_PREFIX, strlen(SERVES_PREFIX)))
			continue;
		for (size_t i = 0; i < nkeep && !kept; i++)
			kept = !strcmp(de->d_name + strlen(SERVES_PREFIX), keep[i]);
		if (kept)
			continue;
		snprintf(q, sizeof(q), "%s/%s", p, de->d_name);
		rmdir(q);
	}
	closedir(d);
}

/* Claim DIR/daemon: mkdir (bpffs has directories but no regular files) and
 * hold an exclusive flock on it until xrl_close(). */
int xrl__claim_daemon(struct xrl *x, pid_t *holder)
{
	char p[PATH_MAX];
	int fd;

	*holder = 0;
	xrl__pin_path(x, DAEMON_DIR, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		*holder = xrl__flock_holder(fd);
		close(fd);
		if (err == EWOULDBLOCK)
			return xrl_fail(EBUSY, "%s is served by another xdp-rld (pid %d): one daemon per pin directory",
				    x->pin_dir, (int)*holder);
		return xrl_fail(err, "cannot lock %s: %s", p, strerror(err));
	}
	if (x->daemon_fd >= 0)
		close(x->daemon_fd);
	x->daemon_fd = fd;
	return 0;
}

/* The claim of the reader of xrl_events_ctl: DIR/events, flocked for as
 * long as the returned fd is open. One reader at a time: a ring gives each
 * record to one consumer only, so two readers would each see half. */
int xrl__events_claim(struct xrl *x)
{
	char p[PATH_MAX];
	int fd, pid;

	xrl__pin_path(x, EVENTS_DIR, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return xrl_fail(errno, "cannot create %s: %s", p, strerror(errno));
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return xrl_fail(errno, "cannot open %s: %s", p, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	pid = xrl__flock_holder(fd);
	close(fd);
	if (pid > 0)
		return xrl_fail(EBUSY, "another 'xdp-rlctl events' (pid %d) follows the events of %s: one reader at a time",
			    pid, x->pin_dir);
	return xrl_fail(EBUSY, "another 'xdp-rlctl events' follows the events of %s: one reader at a time",
		    x->pin_dir);
}

/*
 * The interfaces the daemon serves, for xdp-rlctl to see: a directory
 * DAEMON_DIR/if_NAME each (bpffs has no regular files), made and removed by
 * the daemon that holds the claim. The names count only while a daemon
 * holds it: one killed with -9 leaves them, and nobody serves them.
 */
int xrl_daemon_serves_set(struct xrl *x, const char *const *names, size_t n)
{
	char p[PATH_MAX], q[PATH_MAX * 2];
	int err = 0;

	if (x->daemon_fd < 0)
		return xrl_fail(EINVAL, "only the daemon's handle names what it serves");
	/* the new names first, then the stale ones out: an interface served
	 * before and after is never unnamed (a detach in between would not
	 * see the daemon) */
	xrl__pin_path(x, DAEMON_DIR, p, sizeof(p));
	for (size_t i = 0; i < n; i++) {
		snprintf(q, sizeof(q), "%s/" SERVES_PREFIX "%s", p, names[i]);
		if (mkdir(q, 0700) && errno != EEXIST && !err)
			err = xrl_fail(errno, "cannot create %s: %s", q, strerror(errno));
	}
	xrl__serves_clear(x, names, n);
	return err;
}

int xrl_daemon_serves(struct xrl *x, const char *ifname, pid_t *pid)
{
	char p[PATH_MAX], q[PATH_MAX * 2];
	struct stat st;

	*pid = 0;
	if (!x->pinned || strlen(ifname) >= IF_NAMESIZE)
		return 0;
	xrl__pin_path(x, DAEMON_DIR, p, sizeof(p));
	snprintf(q, sizeof(q), "%s/" SERVES_PREFIX "%s", p, ifname);
	if (stat(q, &st) || !S_ISDIR(st.st_mode))
		return 0;
	if (x->daemon_fd >= 0) {
		*pid = getpid();
		return 1;
	}
	*pid = xrl__claim_holder(x, DAEMON_DIR);
	return *pid != 0;
}

int xrl_daemon_claim(struct xrl *x, pid_t *holder)
{
	pid_t h;

	if (!x->pinned)
		return xrl_fail(EINVAL, "an unpinned instance has no daemon");
	return xrl__claim_daemon(x, holder ? holder : &h);
}

/* Is DIR/daemon the directory this handle holds its claim on? (An rmdir and
 * mkdir in its place would let a second daemon claim the new one.) */
bool xrl__claim_intact(struct xrl *x)
{
	struct stat a, b;
	char p[PATH_MAX];

	if (x->daemon_fd < 0)
		return true;
	xrl__pin_path(x, DAEMON_DIR, p, sizeof(p));
	return stat(p, &a) == 0 && fstat(x->daemon_fd, &b) == 0 &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}
